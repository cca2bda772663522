//! The context a job runs in: which worker, and which abort flags apply.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};

use super::registry::WorkerThread;

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
    /// Inside a job re-executed after a failure: calls look up the result
    /// table before they run (distributed runs only). Cleared for the
    /// subtrees below the lookup depth (see `sched::remote`).
    pub(crate) redone: Cell<bool>,
    /// Nesting of looked-up calls below the redone job, in this context.
    pub(crate) lookup_depth: Cell<u32>,
}

impl<'w> Ctx<'w> {
    pub(crate) fn root(worker: &'w WorkerThread) -> Ctx<'w> {
        Ctx {
            worker,
            abort_flag: None,
            parent: std::ptr::null(),
            seen_abort_epoch: Cell::new(0),
            redone: Cell::new(false),
            lookup_depth: Cell::new(0),
        }
    }

    /// A context for a job whose own abort flag is `flag`, spawned from `parent`
    /// (null for a job that arrived from another node). The job is redone if
    /// `redone` says so or its parent is.
    ///
    /// `parent` must outlive the new context: the spawning frame waits for
    /// its children before it returns, so this holds for every spawned job.
    pub(crate) fn child(
        worker: &'w WorkerThread,
        flag: &'w AtomicBool,
        parent: *const Ctx<'w>,
        redone: bool,
    ) -> Ctx<'w> {
        // SAFETY: a non-null parent outlives this context (see above).
        let (inherited, depth) = match unsafe { parent.as_ref() } {
            Some(p) => (p.redone.get(), p.lookup_depth.get()),
            None => (false, 0),
        };
        Ctx {
            worker,
            abort_flag: Some(flag),
            parent,
            seen_abort_epoch: Cell::new(u64::MAX),
            redone: Cell::new(redone || inherited),
            lookup_depth: Cell::new(if redone { 0 } else { depth }),
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
