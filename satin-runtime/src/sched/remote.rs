//! Jobs that cross machines: remote steals out of the local deques, and
//! result-table lookups after a failure.
//!
//! A remote thief takes the oldest job of a deque, as a local thief would.
//! Instead of running it, the slot encodes its call and stays pinned in its
//! owner's frame, in the `pending` map under the steal's stamp, until one of
//! three things happens: the result arrives (`deliver`), the thief died and
//! the job runs here after all (`requeue`), or the owner dropped the slot
//! unread (`cancel`, from `Slot::drop`). All three take the map's lock, so
//! exactly one of them completes the slot.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Mutex;

use crossbeam_deque::Steal;

use super::ctx::Ctx;
use super::job_ref::JobRef;
use super::registry::Registry;
use crate::proto::SharedValues;
use crate::{Job, JobKey};

/// What a slot hands out when a remote thief takes it.
pub(crate) struct RemoteTake {
    pub(crate) key: JobKey,
    /// Part of a job re-executed after a failure.
    pub(crate) redone: bool,
    pub(crate) payload: Vec<u8>,
    pub(crate) complete: unsafe fn(*const (), Completion<'_>, &Registry),
    /// Runs the job here after all (the thief died).
    pub(crate) job: JobRef,
}

/// How a remotely stolen slot ends.
pub(crate) enum Completion<'a> {
    /// The encoded result.
    Value(&'a [u8]),
    /// Nobody reads the result any more.
    Aborted,
    /// The job failed on the thief's node; the message says how.
    Failed(&'a str),
}

/// The panic payload of a job that failed on another node: its message,
/// already saying that a job panicked and why.
pub(crate) struct RemotePanic(pub(crate) String);

struct Pending {
    complete: unsafe fn(*const (), Completion<'_>, &Registry),
    job: JobRef,
}

/// The remote side of a registry: set once a distributed executor attaches.
pub(crate) struct Remote {
    pending: Mutex<HashMap<u64, Pending>>,
    pub(crate) values: SharedValues,
}

impl Remote {
    pub(crate) fn new(values: SharedValues) -> Remote {
        Remote { pending: Mutex::default(), values }
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Pending>> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Registry {
    /// Attaches the remote side (a distributed executor); `false` if one is
    /// attached already.
    pub(crate) fn attach_remote(&self, values: SharedValues) -> bool {
        self.remote.set(Remote::new(values)).is_ok()
    }

    /// Takes the oldest job of some worker's deque for a remote thief, under
    /// steal `stamp`. Returns its key and encoded call.
    pub(crate) fn take_for_remote(&self, stamp: u64) -> Option<RemoteTake> {
        let remote = self.remote.get()?;
        for stealer in self.stealers() {
            loop {
                match stealer.steal() {
                    Steal::Success(job) => {
                        let mut out = None;
                        // SAFETY: just stolen out of a deque: this is its one
                        // execution; worker deques hold only spawned slots.
                        unsafe { job.take_remote(&mut out) };
                        let take = out.expect("a slot fills in its remote take");
                        remote.pending().insert(stamp, Pending { complete: take.complete, job: take.job });
                        return Some(take);
                    }
                    Steal::Retry => continue,
                    Steal::Empty => break,
                }
            }
        }
        None
    }

    /// The result of steal `stamp` arrived. `false` if nothing waits for it.
    pub(crate) fn deliver_remote(&self, stamp: u64, value: &[u8]) -> bool {
        let Some(remote) = self.remote.get() else { return false };
        let mut pending = remote.pending();
        let Some(p) = pending.remove(&stamp) else { return false };
        // SAFETY: the slot is pinned until it is completed, which happens
        // once: here, under the lock that removed its entry.
        unsafe { (p.complete)(p.job.data(), Completion::Value(value), self) };
        true
    }

    /// The job of steal `stamp` failed on its thief: it fails here too.
    /// `false` if nothing waits for it.
    pub(crate) fn fail_remote(&self, stamp: u64, reason: &str) -> bool {
        let Some(remote) = self.remote.get() else { return false };
        let mut pending = remote.pending();
        let Some(p) = pending.remove(&stamp) else { return false };
        // SAFETY: as in `deliver_remote`.
        unsafe { (p.complete)(p.job.data(), Completion::Failed(reason), self) };
        true
    }

    /// The thief of steal `stamp` died: run the job here after all.
    pub(crate) fn requeue_remote(&self, stamp: u64) -> bool {
        let Some(remote) = self.remote.get() else { return false };
        let Some(p) = remote.pending().remove(&stamp) else { return false };
        self.injector.push(p.job);
        self.sleep.wake_all();
        true
    }

    /// Nothing will come back from other nodes any more (this node leaves
    /// or the run is over): every remotely stolen slot completes as
    /// aborted, so that no worker waits for it forever.
    pub(crate) fn abort_all_remote(&self) {
        let Some(remote) = self.remote.get() else { return };
        let mut pending = remote.pending();
        for (_, p) in pending.drain() {
            // SAFETY: as in `deliver_remote`.
            unsafe { (p.complete)(p.job.data(), Completion::Aborted, self) };
        }
    }

    /// The owner drops the remotely stolen slot at `data` unread. `true` if
    /// it was completed (as aborted) here; `false` if it is not pending (not
    /// registered yet, or being completed by someone else).
    pub(crate) fn cancel_remote(&self, data: *const ()) -> bool {
        let Some(remote) = self.remote.get() else { return false };
        let mut pending = remote.pending();
        let Some(stamp) = pending.iter().find(|(_, p)| p.job.data() == data).map(|(s, _)| *s) else {
            return false;
        };
        let p = pending.remove(&stamp).expect("found above");
        // SAFETY: as in `deliver_remote`.
        unsafe { (p.complete)(data, Completion::Aborted, self) };
        true
    }
}

/// How many nested calls below a redone job look up the result table.
///
/// The table holds results of jobs that were stolen across nodes, which
/// thieves take from the old end of deques: near the top of the tree.
/// Looking up every call of a fine-grained recursion would cost more than
/// recomputing (a key is a hash of the parameters); below this depth the
/// recursion runs at full speed. Override with `SATIN_LOOKUP_DEPTH`.
pub(crate) fn lookup_depth_limit() -> u32 {
    static LIMIT: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *LIMIT.get_or_init(|| {
        std::env::var("SATIN_LOOKUP_DEPTH").ok().and_then(|s| s.parse().ok()).unwrap_or(DEFAULT_LOOKUP_DEPTH)
    })
}

pub(crate) const DEFAULT_LOOKUP_DEPTH: u32 = 6;

/// `Job::run` inside a redone job: use the result table's value if there is one.
#[cold]
#[inline(never)]
pub(crate) fn run_with_lookup<J: Job>(job: J, ctx: &Ctx<'_>) -> J::Output {
    let depth = ctx.lookup_depth.get();
    if depth >= lookup_depth_limit() {
        // Deep enough: this subtree runs without lookups.
        ctx.redone.set(false);
        let out = job.run_parallel(ctx);
        ctx.redone.set(true);
        return out;
    }
    let registry = ctx.worker.registry();
    if let Some(remote) = registry.remote.get() {
        registry.table_lookups.fetch_add(1, Ordering::Relaxed);
        if let Some(bytes) = remote.values.get(&job.key()) {
            if let Ok(value) = postcard::from_bytes::<J::Output>(&bytes) {
                registry.table_hits.fetch_add(1, Ordering::Relaxed);
                return value;
            }
        }
    }
    ctx.lookup_depth.set(depth + 1);
    let out = job.run_parallel(ctx);
    ctx.lookup_depth.set(depth);
    out
}
