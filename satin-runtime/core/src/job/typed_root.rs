//! The program's own call, run from its value on the node it was made on.
//!
//! A distributed run's root travels as bytes: every node needs them (to
//! key the run, to pack stolen pieces against them, to run the root if it
//! becomes master). But on the node whose program made the call, the
//! value itself is at hand, on the program's stack, while the program
//! waits for the run's end. Its first execution there takes the value
//! instead of decoding megabytes of parameters again (`mergesort` of 5 M
//! numbers: 47 MB, some 70 ms at the start of every run). Later
//! executions (a restart, a recomputation) decode the bytes as any node.
//!
//! The value is lent for the run only: [`lend`] registers it, runs the
//! program's wait, then withdraws it and waits until no worker is using
//! it, so no worker ever sees it after the program's frame moves on.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use super::registry::CallError;
use super::Job;
use crate::sched::Ctx;
use crate::JobKey;

/// A lent root: run at most once, from any worker.
trait LentRoot: Sync {
    /// Runs the call if it is still there, and encodes its result.
    fn run_once(&self, ctx: &Ctx<'_>) -> Option<Result<Vec<u8>, CallError>>;
}

struct Lent<J: Job> {
    job: Mutex<Option<J>>,
}

impl<J: Job> LentRoot for Lent<J> {
    fn run_once(&self, ctx: &Ctx<'_>) -> Option<Result<Vec<u8>, CallError>> {
        let job = self.job.lock().unwrap_or_else(|p| p.into_inner()).take()?;
        let output = job.run(ctx);
        Some(
            postcard::to_allocvec(&output)
                .map_err(|e| CallError::Malformed(format!("the result does not encode: {e}"))),
        )
    }
}

/// The root on loan: its key and where it lies, its lifetime erased.
struct Loan {
    key: JobKey,
    root: *const (dyn LentRoot + 'static),
}

// SAFETY: the pointee is `Sync` (`LentRoot: Sync`), and [`lend`] keeps it
// alive for as long as a `Loan` to it is reachable (see there).
unsafe impl Send for Loan {}

/// The loan, and the workers using it now (each by its job's abort flag).
struct Desk {
    loan: Option<Loan>,
    users: Vec<Arc<AtomicBool>>,
}

static DESK: Mutex<Desk> = Mutex::new(Desk { loan: None, users: Vec::new() });
static RETURNED: Condvar = Condvar::new();

fn desk() -> std::sync::MutexGuard<'static, Desk> {
    DESK.lock().unwrap_or_else(|p| p.into_inner())
}

/// Lends `job` (the root call keyed `key`) to the workers of this process
/// while `wait` runs; then `Some(job)` if no worker took it, else `None`.
pub(crate) fn lend<J: Job, R>(key: JobKey, job: J, wait: impl FnOnce() -> R) -> (R, Option<J>) {
    let lent = Lent { job: Mutex::new(Some(job)) };
    let root: &dyn LentRoot = &lent;
    // SAFETY: only the lifetime is erased. The pointer is withdrawn below,
    // before `lent` goes out of scope, and the withdrawal waits until every
    // worker that copied it (listed in `users` under the same lock) is
    // done with it; the guard runs on unwinding too.
    let root: *const (dyn LentRoot + 'static) = unsafe { std::mem::transmute(root as *const dyn LentRoot) };
    struct Withdraw;
    impl Drop for Withdraw {
        fn drop(&mut self) {
            let mut d = desk();
            d.loan = None;
            // The run is over for the program: a copy still running (the
            // run ended elsewhere, or failed) stops at its next spawn.
            for user in &d.users {
                user.store(true, Ordering::Release);
            }
            while !d.users.is_empty() {
                d = RETURNED.wait(d).unwrap_or_else(|p| p.into_inner());
            }
        }
    }
    desk().loan = Some(Loan { key, root });
    let withdraw = Withdraw;
    let result = wait();
    drop(withdraw);
    let job = lent.job.into_inner().unwrap_or_else(|p| p.into_inner());
    (result, job)
}

/// Runs the lent root keyed `key` on this worker, if it is lent and not
/// yet taken: `None` leaves the call to its bytes. `abort` is the job's
/// abort flag.
pub(crate) fn run_lent(key: &JobKey, abort: &Arc<AtomicBool>, ctx: &Ctx<'_>) -> Option<Result<Vec<u8>, CallError>> {
    let root = {
        let mut d = desk();
        let root = d.loan.as_ref().filter(|l| l.key == *key)?.root;
        d.users.push(Arc::clone(abort));
        root
    };
    struct Done<'a>(&'a Arc<AtomicBool>);
    impl Drop for Done<'_> {
        fn drop(&mut self) {
            let mut d = desk();
            if let Some(i) = d.users.iter().position(|u| Arc::ptr_eq(u, self.0)) {
                d.users.swap_remove(i);
            }
            RETURNED.notify_all();
        }
    }
    let _done = Done(abort);
    // SAFETY: listed in `users` above while the loan was there: `lend`
    // keeps the pointee alive until `_done` has run.
    unsafe { &*root }.run_once(ctx)
}
