//! The root job: a closure handed to the pool by a thread outside it.

use std::cell::UnsafeCell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Condvar, Mutex};

use super::ctx::Ctx;
use super::job_ref::{Exec, JobRef};
use super::tls::CurrentGuard;

/// A closure waiting for a worker, plus the latch its caller blocks on.
pub(crate) struct RootJob<F, R> {
    f: UnsafeCell<Option<F>>,
    result: UnsafeCell<Option<std::thread::Result<R>>>,
    done: Mutex<bool>,
    signal: Condvar,
}

impl<F: FnOnce() -> R + Send, R: Send> RootJob<F, R> {
    pub(crate) fn new(f: F) -> Self {
        RootJob {
            f: UnsafeCell::new(Some(f)),
            result: UnsafeCell::new(None),
            done: Mutex::new(false),
            signal: Condvar::new(),
        }
    }

    /// # Safety
    /// `self` must stay alive until [`wait`](Self::wait) returns, and the
    /// returned `JobRef` must be executed exactly once.
    pub(crate) unsafe fn as_job_ref(&self) -> JobRef {
        // SAFETY: forwarded from the caller; `execute::<F, R>` matches the data.
        unsafe { JobRef::new(self as *const Self as *const (), execute::<F, R>) }
    }

    /// Blocks the calling (non-worker) thread until the job ran; returns its
    /// result or its panic.
    pub(crate) fn wait(&self) -> std::thread::Result<R> {
        let mut done = self.done.lock().unwrap_or_else(|e| e.into_inner());
        while !*done {
            done = self.signal.wait(done).unwrap_or_else(|e| e.into_inner());
        }
        // SAFETY: `done` was set after the executor wrote the result, under the
        // same mutex; the executor no longer touches it.
        unsafe { (*self.result.get()).take() }.expect("a finished root job holds its result")
    }
}

/// # Safety
/// `data` points to a live `RootJob<F, R>`, executed once.
unsafe fn execute<F: FnOnce() -> R + Send, R: Send>(data: *const (), exec: Exec<'_>) -> bool {
    let Exec::Run(worker, _) = exec else {
        unreachable!("root jobs sit in the injector, out of remote thieves' reach")
    };
    // SAFETY: per the function contract.
    let job = unsafe { &*(data as *const RootJob<F, R>) };
    // SAFETY: only the one executor takes the closure.
    let f = unsafe { (*job.f.get()).take() }.expect("a root job runs once");
    let result = {
        let ctx = Ctx::root(worker);
        let _current = CurrentGuard::set(&ctx);
        panic::catch_unwind(AssertUnwindSafe(f))
    };
    // SAFETY: the waiting thread reads the result only after `done` is set below.
    unsafe { *job.result.get() = Some(result) };
    let mut done = job.done.lock().unwrap_or_else(|e| e.into_inner());
    *done = true;
    job.signal.notify_all();
    true
}
