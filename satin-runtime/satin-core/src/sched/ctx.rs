//! The context a job runs in: which worker, and which abort flags apply.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};

use super::registry::WorkerThread;
use crate::checkpoint::DEPTH_UNKNOWN;

/// Unwinding payload that stops an aborted job. Caught where the job started;
/// never reaches user code that does not catch panics itself.
pub(crate) struct Aborted;

/// The runtime context of a running job. Generated code passes it down the
/// recursion so the fast path needs no thread-local lookup.
///
/// Contexts form a chain: a job that was stolen (or popped and executed on
/// its own) gets a fresh context whose parent is the context that spawned it.
/// Aborting a job sets its flag; every job below it sees the flag when it
/// walks the chain.
pub struct Ctx<'w> {
    pub(crate) worker: &'w WorkerThread,
    abort_flag: Option<&'w AtomicBool>,
    parent: *const Ctx<'w>,
    seen_abort_epoch: Cell<u64>,
    /// Calls take the slow path of `Job::run` (see `sched::track`): they
    /// are tracked, or look their result up first. Distributed runs only,
    /// and only near the top of the tree.
    pub(crate) slow: Cell<bool>,
    /// Inside a job re-executed after a failure: calls look up the result
    /// table before they run. Cleared below the levels worth looking up.
    pub(crate) redone: Cell<bool>,
    /// Nesting of looked-up calls below the redone job, in this context.
    pub(crate) lookup_depth: Cell<u32>,
    /// Depth (calls from the root) of the next call made in this context,
    /// or `DEPTH_UNKNOWN` below the tracked levels.
    pub(crate) depth: Cell<u32>,
    /// Id of the innermost tracked call running in this context (0: none).
    pub(crate) frame: Cell<u64>,
    /// Root epoch of the job this context runs (see `proto::JobSpec::epoch`).
    pub(crate) epoch: u32,
    /// The entry job's key as it came (a stolen job's, the root's), for
    /// the slow path to use instead of hashing the call again: (depth of
    /// the entry call, key). Taken by the first tracked call at that depth.
    pub(crate) entry_key: Cell<Option<(u32, crate::JobKey)>>,
    /// This worker's poll flag (aborts, requests for work), one pointer
    /// hop away for lazy code.
    poll_flag: &'w AtomicBool,
}

/// Where a job sits in the tree, and whether it looks results up, as a
/// spawn records it (the spawner's context moves on while the job waits in
/// a deque) or a steal hands it on.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Place {
    pub(crate) depth: u32,
    pub(crate) frame: u64,
    pub(crate) redone: bool,
    pub(crate) lookup_depth: u32,
}

impl Place {
    pub(crate) const UNKNOWN: Place = Place { depth: DEPTH_UNKNOWN, frame: 0, redone: false, lookup_depth: 0 };
}

impl<'w> Ctx<'w> {
    pub(crate) fn root(worker: &'w WorkerThread) -> Ctx<'w> {
        // A runtime that tracks progress tracks the top of the tree from
        // here (the root call is at depth 0).
        let progress = worker.registry().progress.is_some();
        Ctx {
            worker,
            abort_flag: None,
            parent: std::ptr::null(),
            seen_abort_epoch: Cell::new(0),
            slow: Cell::new(progress),
            redone: Cell::new(false),
            lookup_depth: Cell::new(0),
            depth: Cell::new(if progress { 0 } else { DEPTH_UNKNOWN }),
            frame: Cell::new(0),
            epoch: 0,
            entry_key: Cell::new(None),
            poll_flag: worker.registry().poll_flag(worker.index()),
        }
    }

    /// A context for a job whose own abort flag is `flag`, spawned from `parent`
    /// at `place`. The job is redone if `redone` says so (its remote thief
    /// died) or its spawner was at the spawn.
    ///
    /// `parent` must outlive the new context: the spawning frame waits for
    /// its children before it returns, so this holds for every spawned job.
    pub(crate) fn child(
        worker: &'w WorkerThread,
        flag: &'w AtomicBool,
        parent: &Ctx<'w>,
        redone: bool,
        place: Place,
    ) -> Ctx<'w> {
        let lookup_depth = if redone { 0 } else { place.lookup_depth };
        let mut ctx = Ctx::entry(worker, flag, redone || place.redone, parent.epoch, place);
        ctx.parent = parent;
        ctx.lookup_depth.set(lookup_depth);
        ctx
    }

    /// A context for a job that arrived from outside the pool (from another
    /// node, or the distributed root), with its own abort flag.
    pub(crate) fn entry(
        worker: &'w WorkerThread,
        flag: &'w AtomicBool,
        redone: bool,
        epoch: u32,
        place: Place,
    ) -> Ctx<'w> {
        let tracked = place.depth != DEPTH_UNKNOWN && worker.registry().tracking();
        Ctx {
            worker,
            abort_flag: Some(flag),
            parent: std::ptr::null(),
            seen_abort_epoch: Cell::new(u64::MAX),
            slow: Cell::new(redone || tracked),
            redone: Cell::new(redone),
            lookup_depth: Cell::new(0),
            depth: Cell::new(place.depth),
            frame: Cell::new(place.frame),
            epoch,
            entry_key: Cell::new(None),
            poll_flag: worker.registry().poll_flag(worker.index()),
        }
    }

    /// Where a call spawned now sits.
    #[inline]
    pub(crate) fn place(&self) -> Place {
        Place {
            depth: self.depth.get(),
            frame: self.frame.get(),
            redone: self.redone.get(),
            lookup_depth: self.lookup_depth.get(),
        }
    }

    /// True if this job or any job it descends from was aborted.
    pub(crate) fn is_aborted(&self) -> bool {
        let mut ctx: *const Ctx<'w> = self;
        while !ctx.is_null() {
            // SAFETY: every context in the chain outlives its children (see `child`).
            let c = unsafe { &*ctx };
            if c.abort_flag.is_some_and(|f| f.load(Ordering::Acquire)) {
                return true;
            }
            ctx = c.parent;
        }
        false
    }

    /// Polled on entry to every lazily run call (see `Job::run_lazy`):
    /// whether to run this call in parallel after all, because some worker
    /// or node wants work. Stops an aborted job, as a spawn would. One load
    /// and a compare unless something happened since the last poll.
    #[inline]
    pub fn promote(&self) -> bool {
        if !self.poll_flag.load(Ordering::Relaxed) {
            return false;
        }
        self.noticed()
    }

    #[cold]
    #[inline(never)]
    fn noticed(&self) -> bool {
        // Cleared for this worker: a frame further out on its stack sees
        // an abort at its next spawn (`check_abort`) rather than its next
        // poll.
        self.poll_flag.store(false, Ordering::SeqCst);
        self.check_abort();
        // Cleared first: a request made after this load raises the flag
        // again. An open request keeps it raised, so that calls keep being
        // promoted until one of them spawns something.
        let promote = self.worker.registry().work_wanted();
        // Answered with the oldest loops' later iterations if there are
        // any (see `sched::latent`); this call then goes on lazily.
        if promote && self.worker.release_latent() > 0 {
            return false;
        }
        if promote {
            self.poll_flag.store(true, Ordering::Relaxed);
            super::registry::WorkerCounters::bump(&self.worker.counters().promotions);
        }
        promote
    }

    /// Stops the current job by unwinding if it was aborted. Cheap unless an
    /// abort happened somewhere in the pool since the last check.
    #[inline]
    pub(crate) fn check_abort(&self) {
        let epoch = self.worker.registry().abort_epoch();
        if epoch != self.seen_abort_epoch.get() {
            self.seen_abort_epoch.set(epoch);
            if self.is_aborted() {
                std::panic::resume_unwind(Box::new(Aborted));
            }
        }
    }
}
