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
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crossbeam_deque::Steal;

use super::ctx::Place;
use super::job_ref::JobRef;
use super::registry::Registry;
use crate::checkpoint::ResultMeta;
use crate::proto::SharedTable;
use crate::JobKey;

/// What a slot hands out when a remote thief takes it.
pub(crate) struct RemoteTake {
    pub(crate) key: JobKey,
    /// Part of a job re-executed after a failure.
    pub(crate) redone: bool,
    pub(crate) epoch: u32,
    pub(crate) place: Place,
    pub(crate) payload: satin_proto::Bytes,
    pub(crate) complete: unsafe fn(*const (), Completion<'_>, &Registry),
    /// Runs the job here after all (the thief died).
    pub(crate) job: JobRef,
}

/// How a remotely stolen slot ends.
pub(crate) enum Completion<'a> {
    /// The encoded result.
    Value(satin_proto::Bytes),
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

/// What worker threads tell the distributed executor's driver.
#[derive(Debug)]
pub enum RemoteEvent {
    /// A redone call needs a result the table holds only as a pointer, or
    /// one that a job of an older epoch is still computing; answer with
    /// `LocalExecutor::lookup_done`.
    Lookup { key: JobKey, epoch: u32 },
    /// A tracked call ran long enough to be worth publishing.
    Published { key: JobKey, value: Vec<u8>, meta: ResultMeta, ran: Duration },
    /// A worker found no work anywhere in the pool and parks: the node
    /// could take work from others. Told once until the driver says it
    /// heard (`Remote::hunger_heard`).
    Hungry,
}

/// A lookup waiting for the driver's answer.
#[derive(Default)]
pub(crate) struct LookupWait {
    done: AtomicBool,
    value: Mutex<Option<satin_proto::Bytes>>,
}

impl LookupWait {
    pub(crate) fn is_done(&self) -> bool {
        self.done.load(Ordering::Acquire)
    }

    /// The answer; every call waiting for the same key gets it.
    pub(crate) fn value(&self) -> Option<satin_proto::Bytes> {
        self.value.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// Per-depth durations of tracked calls: which depths are worth tracking;
/// and what publishing a call's result costs against its run (keying and
/// encoding, in 1/1024ths of its duration; `u64::MAX`: not known yet).
struct DepthStats {
    sum_ns: [AtomicU64; 64],
    count: [AtomicU64; 64],
    publish_cost: [AtomicU64; 64],
}

/// Publishing a result may cost at most this share of the call's run
/// (in 1/1024ths): a call that carries megabytes and computes little per
/// byte (a merge, a copy) is not published — its result goes to its
/// caller, and to the table only if a thief returns it. Otherwise every
/// tracked level of a merge sort would encode the whole array once more.
const MAX_PUBLISH_COST: u64 = 1024 / 32;

/// What encoding costs per byte until a publication has measured it
/// (picoseconds): postcard's varints of random numbers take about a
/// nanosecond a byte here, cold memory included.
const DEFAULT_ENCODE_PS_PER_BYTE: u64 = 1_000;

/// Leave to publish a call (see [`Remote::publishes`]); a probe's ends
/// the probe when dropped, whether the call was published or not.
pub(crate) struct PublishTicket<'a> {
    remote: &'a Remote,
    probe: bool,
}

impl Drop for PublishTicket<'_> {
    fn drop(&mut self) {
        if self.probe {
            self.remote.probing.store(false, Ordering::Release);
        }
    }
}

/// The remote side of a registry: set once a distributed executor attaches.
pub(crate) struct Remote {
    pending: Mutex<HashMap<u64, Pending>>,
    pub(crate) table: SharedTable,
    events: Box<dyn Fn(RemoteEvent) + Send + Sync>,
    lookups: Mutex<HashMap<JobKey, Arc<LookupWait>>>,
    /// Calls that ran at least this long are published (ns; `u64::MAX`: off).
    publish_after: AtomicU64,
    /// Frame ids: a per-process salt in the high bits, a counter below.
    next_frame: AtomicU64,
    depths: DepthStats,
    /// A call is learning what publishing costs (see [`Remote::publishes`]).
    probing: AtomicBool,
    /// What encoding a result costs, in picoseconds per byte, as the
    /// last publication measured it (see [`Remote::publish_budget`]).
    encode_ps_per_byte: AtomicU64,
    /// `RemoteEvent::Hungry` was told and not yet heard.
    hunger_told: AtomicBool,
}

impl Remote {
    fn new(
        table: SharedTable,
        publish_after: Option<Duration>,
        events: Box<dyn Fn(RemoteEvent) + Send + Sync>,
    ) -> Remote {
        Remote {
            pending: Mutex::default(),
            table,
            events,
            lookups: Mutex::default(),
            publish_after: AtomicU64::new(publish_after.map_or(u64::MAX, |d| d.as_nanos() as u64)),
            next_frame: AtomicU64::new(frame_salt()),
            depths: DepthStats {
                sum_ns: std::array::from_fn(|_| AtomicU64::new(0)),
                count: std::array::from_fn(|_| AtomicU64::new(0)),
                publish_cost: std::array::from_fn(|_| AtomicU64::new(u64::MAX)),
            },
            probing: AtomicBool::new(false),
            encode_ps_per_byte: AtomicU64::new(DEFAULT_ENCODE_PS_PER_BYTE),
            hunger_told: AtomicBool::new(false),
        }
    }

    /// A worker is about to park with nothing to do: tells the driver,
    /// once until it heard.
    pub(crate) fn hungry(&self) {
        if !self.hunger_told.load(Ordering::Relaxed) && !self.hunger_told.swap(true, Ordering::AcqRel) {
            (self.events)(RemoteEvent::Hungry);
        }
    }

    /// The driver heard the last `Hungry`: the next park tells again.
    pub(crate) fn hunger_heard(&self) {
        self.hunger_told.store(false, Ordering::Release);
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Pending>> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn lookups(&self) -> std::sync::MutexGuard<'_, HashMap<JobKey, Arc<LookupWait>>> {
        self.lookups.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether tracked calls are published at all.
    pub(crate) fn tracking(&self) -> bool {
        self.publish_after.load(Ordering::Relaxed) != u64::MAX
    }

    pub(crate) fn publish_after(&self) -> u64 {
        self.publish_after.load(Ordering::Relaxed)
    }

    /// Whether calls at `depth` are worth tracking: yes until their mean
    /// duration is known to be small against the publication threshold
    /// (then the subtree runs at full speed).
    pub(crate) fn tracks(&self, depth: u32) -> bool {
        let Some(d) = usize::try_from(depth).ok().filter(|&d| d < 64) else { return false };
        let count = self.depths.count[d].load(Ordering::Relaxed);
        if count < 16 {
            return true;
        }
        let floor = (self.publish_after() / 32).max(20_000);
        self.depths.sum_ns[d].load(Ordering::Relaxed) / count >= floor
    }

    /// Whether a call at `depth` may be published: what publishing cost
    /// at this depth (or, not known yet, at the nearest depth that knows)
    /// is small against the calls' runs. While no depth knows, one call at
    /// a time pays to learn it (a probe, which keeps the ticket): the top
    /// calls of a tree all start before any ends, and a merge sort's would
    /// otherwise each key and encode megabytes before the first cost is in.
    pub(crate) fn publishes(&self, depth: u32) -> Option<PublishTicket<'_>> {
        let d = usize::try_from(depth).ok().filter(|&d| d < 64)?;
        let known = |i: usize| Some(self.depths.publish_cost[i].load(Ordering::Relaxed)).filter(|&c| c != u64::MAX);
        let cost = (0..64)
            .map(|k| [d.checked_sub(k), d.checked_add(k).filter(|&i| i < 64)])
            .find_map(|pair| pair.into_iter().flatten().find_map(known));
        match cost {
            Some(c) => (c <= MAX_PUBLISH_COST).then_some(PublishTicket { remote: self, probe: false }),
            None => self
                .probing
                .compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
                .then_some(PublishTicket { remote: self, probe: true }),
        }
    }

    /// Whether `cost_ns` of publishing is within what a call that ran
    /// `ran_ns` may spend on it.
    pub(crate) fn within_publish_cost(&self, cost_ns: u64, ran_ns: u64) -> bool {
        cost_ns.saturating_mul(1024) / ran_ns.max(1) <= MAX_PUBLISH_COST
    }

    /// How many bytes a result of a call that ran `ran_ns` may encode to,
    /// its key having cost `key_ns`, for its publication to stay within
    /// [`MAX_PUBLISH_COST`]: a result found larger (`values::exceeds`,
    /// which stops there) is not encoded to learn what it costs — the
    /// probe of a depth whose results are as large as the data (prefix
    /// sums: each level returns all its numbers) would otherwise encode
    /// megabytes once per depth to find that out.
    pub(crate) fn publish_budget(&self, key_ns: u64, ran_ns: u64) -> usize {
        let ns = (ran_ns.saturating_mul(MAX_PUBLISH_COST) / 1024).saturating_sub(key_ns);
        let ps_per_byte = self.encode_ps_per_byte.load(Ordering::Relaxed).max(1);
        usize::try_from(ns.saturating_mul(1_000) / ps_per_byte).unwrap_or(usize::MAX)
    }

    /// A result of `bytes` took `ns` to encode: the rate the next budget
    /// goes by.
    pub(crate) fn record_encoding(&self, bytes: usize, ns: u64) {
        if bytes >= 4096 {
            let ps = ns.saturating_mul(1_000) / bytes as u64;
            self.encode_ps_per_byte.store(ps.max(1), Ordering::Relaxed);
        }
    }

    /// A result at `depth` was too large to publish within its budget:
    /// calls at that depth are not published (nor probed) any more.
    pub(crate) fn refuse_publishing(&self, depth: u32) {
        if let Some(d) = usize::try_from(depth).ok().filter(|&d| d < 64) {
            self.depths.publish_cost[d].store(MAX_PUBLISH_COST + 1, Ordering::Relaxed);
        }
    }

    /// A call at `depth` that ran `ran_ns` was published at a cost of
    /// `cost_ns` (its key and its value's encoding).
    pub(crate) fn record_publish_cost(&self, depth: u32, cost_ns: u64, ran_ns: u64) {
        if let Some(d) = usize::try_from(depth).ok().filter(|&d| d < 64) {
            let share = cost_ns.saturating_mul(1024) / ran_ns.max(1);
            self.depths.publish_cost[d].store(share, Ordering::Relaxed);
        }
    }

    pub(crate) fn record_duration(&self, depth: u32, ns: u64) {
        if let Some(d) = usize::try_from(depth).ok().filter(|&d| d < 64) {
            self.depths.sum_ns[d].fetch_add(ns, Ordering::Relaxed);
            self.depths.count[d].fetch_add(1, Ordering::Relaxed);
        }
    }

    pub(crate) fn next_frame(&self) -> u64 {
        self.next_frame.fetch_add(1, Ordering::Relaxed)
    }

    pub(crate) fn send(&self, event: RemoteEvent) {
        (self.events)(event)
    }

    /// The wait for `key`'s answer, asking the driver if nobody has yet.
    pub(crate) fn ask(&self, key: JobKey, epoch: u32) -> Arc<LookupWait> {
        let mut lookups = self.lookups();
        if let Some(w) = lookups.get(&key) {
            return Arc::clone(w);
        }
        let w = Arc::new(LookupWait::default());
        lookups.insert(key, Arc::clone(&w));
        drop(lookups);
        self.send(RemoteEvent::Lookup { key, epoch });
        w
    }
}

fn frame_salt() -> u64 {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let mut h = blake3::Hasher::new();
    h.update(&std::process::id().to_le_bytes());
    h.update(&now.as_nanos().to_le_bytes());
    let salt = u64::from_le_bytes(h.finalize().as_bytes()[..8].try_into().expect("8 bytes"));
    (salt << 32) | 1
}

impl Registry {
    /// Attaches the remote side (a distributed executor); `false` if one is
    /// attached already. `publish_after`: publish calls that ran at least
    /// this long (`None`: track nothing).
    pub(crate) fn attach_remote(
        &self,
        table: SharedTable,
        publish_after: Option<Duration>,
        events: Box<dyn Fn(RemoteEvent) + Send + Sync>,
    ) -> bool {
        let remote = Remote::new(table, publish_after, events);
        self.remote.set(remote).is_ok()
    }

    /// Raises the publication threshold (it grows with the run, so the
    /// number of published results stays bounded).
    pub(crate) fn set_publish_after(&self, after: Duration) {
        if let Some(r) = self.remote.get() {
            if r.tracking() {
                r.publish_after.store(after.as_nanos() as u64, Ordering::Relaxed);
            }
        }
    }

    /// The driver's answer to a [`RemoteEvent::Lookup`]: wakes the calls
    /// waiting for it.
    pub(crate) fn resolve_lookup(&self, key: &JobKey, value: Option<satin_proto::Bytes>) {
        let Some(remote) = self.remote.get() else { return };
        let Some(w) = remote.lookups().remove(key) else { return };
        *w.value.lock().unwrap_or_else(|e| e.into_inner()) = value;
        w.done.store(true, Ordering::Release);
        self.sleep.wake_all();
    }

    /// Nothing will answer lookups any more: every waiting call computes.
    pub(crate) fn resolve_all_lookups(&self) {
        let Some(remote) = self.remote.get() else { return };
        let keys: Vec<JobKey> = remote.lookups().keys().copied().collect();
        for k in keys {
            self.resolve_lookup(&k, None);
        }
    }

    /// Takes the oldest job of some worker's deque for a remote thief, under
    /// steal `stamp`. Returns its key and encoded call.
    pub(crate) fn take_for_remote(&self, stamp: u64) -> Option<RemoteTake> {
        let remote = self.remote.get()?;
        for (i, stealer) in self.stealers().iter().enumerate() {
            if self.local_queued[i].load(Ordering::Relaxed) {
                continue;
            }
            loop {
                match stealer.steal() {
                    Steal::Success(job) => {
                        let mut out = None;
                        // SAFETY: just stolen out of a deque: this is its one
                        // execution; worker deques hold only spawned slots.
                        unsafe { job.take_remote(&mut out) };
                        let Some(take) = out else {
                            // A local call (`Job::LOCAL`) pushed before its
                            // worker's flag said so: still unexecuted, it
                            // goes where this process's workers take it,
                            // as a local thief would have. One per request:
                            // the rest is likely local too, and a storm of
                            // requests must not empty every deque into
                            // the injector.
                            self.injector.push(job);
                            self.sleep.wake_all();
                            return None;
                        };
                        remote.pending().insert(stamp, Pending { complete: take.complete, job: take.job });
                        return Some(take);
                    }
                    Steal::Retry => continue,
                    Steal::Empty => break,
                }
            }
        }
        // Everything here may run lazily: the next call is run in parallel.
        self.want_work();
        None
    }

    /// The result of steal `stamp` arrived. `false` if nothing waits for it.
    pub(crate) fn deliver_remote(&self, stamp: u64, value: satin_proto::Bytes) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn remote() -> Remote {
        Remote::new(SharedTable::default(), Some(Duration::from_millis(1)), Box::new(|_| {}))
    }

    #[test]
    fn while_no_cost_is_known_one_call_at_a_time_probes() {
        let r = remote();
        let probe = r.publishes(3).expect("the first call probes");
        assert!(r.publishes(1).is_none(), "a second call published while the first probes");
        drop(probe);
        // Ended without learning (say the call was too short to publish):
        // the next call probes.
        let probe = r.publishes(1).expect("the next call probes");
        r.record_publish_cost(1, 1_000, 1_000_000);
        drop(probe);
        // Known now, and cheap: every call may publish, none probes.
        let (a, b) = (r.publishes(1), r.publishes(5));
        assert!(a.is_some() && b.is_some());
        assert!(!r.probing.load(Ordering::Relaxed));
    }

    #[test]
    fn a_known_costly_depth_publishes_nothing_and_keying_alone_can_tell() {
        let r = remote();
        // Keying took a tenth of the run: more than publishing may cost.
        assert!(!r.within_publish_cost(100_000, 1_000_000));
        assert!(r.within_publish_cost(10_000, 1_000_000));
        drop(r.publishes(2));
        r.record_publish_cost(2, 100_000, 1_000_000);
        assert!(r.publishes(2).is_none() && r.publishes(7).is_none());
    }

    #[test]
    fn a_result_too_large_for_its_budget_is_known_without_encoding_it() {
        let r = remote();
        // A call of 32 ms may spend 1 ms on publishing: at the default
        // nanosecond a byte, a million bytes, less what its key cost.
        assert_eq!(r.publish_budget(0, 32_000_000), 1_000_000);
        assert_eq!(r.publish_budget(250_000, 32_000_000), 750_000);
        assert_eq!(r.publish_budget(2_000_000, 32_000_000), 0, "keying cost it all");
        // Encoding measured at 4 ns a byte: a quarter as many.
        r.record_encoding(1 << 20, 4 << 20);
        assert_eq!(r.publish_budget(0, 32_000_000), 250_000);
        let numbers: Vec<u64> = vec![u64::MAX; 100_000];
        assert!(crate::proto::values::exceeds(&numbers, r.publish_budget(0, 32_000_000)).unwrap());
        // A depth whose result was too large publishes no more, nor probes.
        r.refuse_publishing(3);
        assert!(r.publishes(3).is_none() && r.publishes(4).is_none());
        assert!(!r.probing.load(Ordering::Relaxed));
    }
}
