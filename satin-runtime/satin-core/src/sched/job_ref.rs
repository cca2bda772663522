//! Type-erased references to jobs, as they sit in the deques.

use super::registry::WorkerThread;
use super::remote::RemoteTake;

/// A pointer to a job plus the function that executes it.
///
/// Contract: a `JobRef` is executed exactly once, by whoever takes it out of a
/// deque (the owner's pop, a thief's steal, or a remote steal that sends the
/// job to another machine), and the job it points to stays alive until that
/// execution has signalled completion.
#[derive(Clone, Copy)]
pub(crate) struct JobRef {
    data: *const (),
    execute_fn: unsafe fn(*const (), Exec<'_>) -> bool,
}

/// How a job left its deque: popped by its owner, or stolen from worker `victim`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Taken {
    Popped,
    Stolen { victim: usize },
    Injected,
}

/// What to do with a job taken out of a deque.
pub(crate) enum Exec<'a> {
    /// Run it on this worker — unless the job is of a newer epoch than the
    /// worker may nest now, in which case it goes back to the injector
    /// unexecuted and the call returns `false`.
    Run(&'a WorkerThread, Taken),
    /// Another machine stole it: encode it into `out` and wait for its
    /// result (only spawned slots sit in worker deques, and only those can be
    /// taken this way).
    Remote(&'a mut Option<RemoteTake>),
}

// SAFETY: a JobRef is only a pointer to a job whose data is `Send` (jobs
// are `Send` by the `Job` bound, root closures are `Send`), and the
// exactly-once contract above means only one thread ever executes it. What
// a job borrows outlives it: its slot's `Drop` (or its root's wait) does not
// return before the job is done, as with `rayon::join`'s stack jobs.
unsafe impl Send for JobRef {}

impl JobRef {
    /// # Safety
    /// `data` must satisfy `execute_fn`'s expectations and the contract above.
    pub(crate) unsafe fn new(data: *const (), execute_fn: unsafe fn(*const (), Exec<'_>) -> bool) -> JobRef {
        JobRef { data, execute_fn }
    }

    pub(crate) fn data(&self) -> *const () {
        self.data
    }

    /// Returns `false` if the job was handed back instead (see [`Exec::Run`]).
    ///
    /// # Safety
    /// Must be called at most once per job, per the type's contract.
    pub(crate) unsafe fn execute(self, worker: &WorkerThread, taken: Taken) -> bool {
        // SAFETY: forwarded from the caller.
        unsafe { (self.execute_fn)(self.data, Exec::Run(worker, taken)) }
    }

    /// Hands the job to a remote thief instead of running it; a local
    /// call (`Job::LOCAL`) leaves `out` empty and stays unexecuted, for
    /// the caller to queue again.
    ///
    /// # Safety
    /// As for [`execute`](Self::execute); the job must be a spawned slot.
    pub(crate) unsafe fn take_remote(self, out: &mut Option<RemoteTake>) {
        // SAFETY: forwarded from the caller.
        unsafe { (self.execute_fn)(self.data, Exec::Remote(out)) };
    }
}
