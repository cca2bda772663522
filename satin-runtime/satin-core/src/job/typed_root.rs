//! The program's own call, run from its value on the node it was made on.
//!
//! A distributed run's root travels as bytes: every node needs them (to
//! key the run, to pack stolen pieces against them, to run the root if it
//! becomes master). But on the node whose program made the call, the
//! value itself is at hand, on the program's stack, while the program
//! waits for the run's end. Its first execution there takes the value
//! instead of decoding megabytes of parameters again, and keeps its
//! result's value for the program beside the bytes the run needs
//! (`mergesort` of 5 M numbers: 47 MB decoded twice less, some 120 ms of
//! every run). Later executions (a restart, a recomputation) decode the
//! bytes as any node does.
//!
//! A large result (over [`HOLD_ABOVE`] bytes encoded, found without
//! encoding it: `values::exceeds`) is not encoded at
//! all: the run gets a stand-in ([`LentOutcome::Held`]), which the
//! protocol core passes around as the answer without ever sending it, and
//! [`encode_held`] encodes the value for a message that must carry it,
//! while the program still waits (`satin_proto`'s `answer.rs`). The master
//! whose program shows the answer — every fault-free run — encodes
//! nothing (`mergesort` of 5 M numbers: 47 MB, some 50 ms at the end of
//! every run, with no other core's work to hide it).
//!
//! The value is lent for the run only: [`lend`] registers it, runs the
//! program's wait, then withdraws it — aborting a run of it still going
//! (the run ended elsewhere) — and waits until no worker is using it, so
//! no worker ever sees it after the program's frame moves on. Several
//! program threads may lend roots at once (each loan has its own number).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use super::registry::CallError;
use super::Job;
use super::ResultCodec;
use crate::sched::{Ctx, Registry};
use crate::JobKey;
use satin_proto::Bytes;

/// Results that encode to more bytes than this are held, not encoded
/// (smaller ones may ride in the log, which needs their bytes).
pub const HOLD_ABOVE: usize = 64 * 1024;

/// What the run of a lent root gives the protocol.
pub(crate) enum LentOutcome {
    /// The result's encoding.
    Encoded(Bytes),
    /// A stand-in for a large result the program holds (see [`encode_held`]).
    Held(Bytes),
}

/// A lent root: run at most once, from any worker.
trait LentRoot: Sync {
    /// Runs the call if it is still there; encodes its result if small.
    fn run_once(&self, ctx: &Ctx<'_>) -> Option<Result<LentOutcome, CallError>>;
    /// The encoding of the result that `stand_in` stands for, if it is
    /// this root's.
    fn encode_held(&self, stand_in: &Bytes) -> Option<Bytes>;
}

struct Lent<J: Job> {
    job: Mutex<Option<J>>,
    /// The result of the run from the value, kept for the program, and
    /// the bytes the run got for it: its encoding or a stand-in, then any
    /// encoding made of it later (the program takes the value for any).
    output: Mutex<Option<(J::Output, Vec<Bytes>)>>,
    /// The first of those bytes is a stand-in (the result was held).
    held: AtomicBool,
}

fn same_bytes(a: &Bytes, b: &Bytes) -> bool {
    a.as_ptr() == b.as_ptr() && a.len() == b.len()
}

impl<J: Job> LentRoot for Lent<J> {
    fn run_once(&self, ctx: &Ctx<'_>) -> Option<Result<LentOutcome, CallError>> {
        let job = self.job.lock().unwrap_or_else(|p| p.into_inner()).take()?;
        let output = job.run(ctx);
        let malformed =
            |e: satin_proto::values::Error| CallError::Malformed(format!("the result does not encode: {e}"));
        let outcome = match J::Codec::exceeds(&output, HOLD_ABOVE) {
            Ok(true) => LentOutcome::Held(Bytes::from(b"satin: an answer held unencoded".to_vec())),
            Ok(false) => match J::Codec::encode(&output) {
                Ok(v) => LentOutcome::Encoded(Bytes::from(v)),
                Err(e) => return Some(Err(malformed(e))),
            },
            Err(e) => return Some(Err(malformed(e))),
        };
        let (ours, held) = match &outcome {
            LentOutcome::Encoded(b) => (b.clone(), false),
            LentOutcome::Held(b) => (b.clone(), true),
        };
        self.held.store(held, Ordering::Release);
        *self.output.lock().unwrap_or_else(|p| p.into_inner()) = Some((output, vec![ours]));
        Some(Ok(outcome))
    }

    fn encode_held(&self, stand_in: &Bytes) -> Option<Bytes> {
        let mut output = self.output.lock().unwrap_or_else(|p| p.into_inner());
        let (value, ours) = output.as_mut()?;
        if !self.held.load(Ordering::Acquire) || !same_bytes(&ours[0], stand_in) {
            return None;
        }
        if let Some(encoded) = ours.get(1) {
            return Some(encoded.clone());
        }
        let encoded = Bytes::from(J::Codec::encode(&*value).ok()?);
        ours.push(encoded.clone());
        Some(encoded)
    }
}

/// A root on loan: its number, key, where its encoding lies (the bytes
/// the run's root job carries: the run that is this call, not another
/// program thread's call of the same), and where it lies, its lifetime
/// erased.
struct Loan {
    number: u64,
    key: JobKey,
    payload: usize,
    root: *const (dyn LentRoot + 'static),
}

// SAFETY: the pointee is `Sync` (`LentRoot: Sync`), and [`lend`] keeps it
// alive for as long as a `Loan` to it is reachable (see there).
unsafe impl Send for Loan {}

/// A worker running a lent root: which loan, its job's abort flag, and
/// its pool (whose abort epoch makes the root's subtree look at the flag).
struct User {
    loan: u64,
    abort: Arc<AtomicBool>,
    registry: Arc<Registry>,
}

/// The loans, and the workers using them now.
struct Desk {
    loans: Vec<Loan>,
    users: Vec<User>,
}

static DESK: Mutex<Desk> = Mutex::new(Desk { loans: Vec::new(), users: Vec::new() });
static RETURNED: Condvar = Condvar::new();
static NEXT_LOAN: AtomicU64 = AtomicU64::new(1);

fn desk() -> std::sync::MutexGuard<'static, Desk> {
    DESK.lock().unwrap_or_else(|p| p.into_inner())
}

/// What a loan gave back.
pub(crate) struct Returned<J: Job> {
    /// The call, if no worker took it.
    pub(crate) job: Option<J>,
    /// The result of its run from the value, if it ran to the end, and
    /// the bytes that stand for it in the run (see [`Lent`]).
    pub(crate) output: Option<(J::Output, Vec<Bytes>)>,
}

impl<J: Job> Returned<J> {
    /// The value the run's answer `bytes` stand for, if they are this
    /// loan's own (else the run ended with another: decode it).
    pub(crate) fn own_output(&mut self, bytes: &Bytes) -> Option<J::Output> {
        match &self.output {
            Some((_, ours)) if ours.iter().any(|o| same_bytes(o, bytes)) => self.output.take().map(|(v, _)| v),
            _ => None,
        }
    }
}

/// Lends `job` (the root call keyed `key`, encoded at `payload`) to the
/// workers of this process while `wait` runs.
pub(crate) fn lend<J: Job, R>(key: JobKey, payload: *const u8, job: J, wait: impl FnOnce() -> R) -> (R, Returned<J>) {
    let lent = Lent { job: Mutex::new(Some(job)), output: Mutex::new(None), held: AtomicBool::new(false) };
    let root: &dyn LentRoot = &lent;
    // SAFETY: only the lifetime is erased. The loan is withdrawn below,
    // before `lent` goes out of scope, and the withdrawal waits until every
    // worker that copied the pointer (listed in `users` under the same
    // lock) is done with it; the guard runs on unwinding too.
    let root: *const (dyn LentRoot + 'static) = unsafe { std::mem::transmute(root as *const dyn LentRoot) };
    let number = NEXT_LOAN.fetch_add(1, Ordering::Relaxed);
    struct Withdraw(u64);
    impl Drop for Withdraw {
        fn drop(&mut self) {
            let mut d = desk();
            d.loans.retain(|l| l.number != self.0);
            // The run is over for the program: a run of the value still
            // going (the run ended elsewhere, or failed) stops at its
            // next spawn or sync, its subtree too.
            for user in d.users.iter().filter(|u| u.loan == self.0) {
                user.abort.store(true, Ordering::Release);
                user.registry.bump_abort_epoch();
            }
            while d.users.iter().any(|u| u.loan == self.0) {
                d = RETURNED.wait(d).unwrap_or_else(|p| p.into_inner());
            }
        }
    }
    desk().loans.push(Loan { number, key, payload: payload as usize, root });
    let withdraw = Withdraw(number);
    let result = wait();
    drop(withdraw);
    let job = lent.job.into_inner().unwrap_or_else(|p| p.into_inner());
    let output = lent.output.into_inner().unwrap_or_else(|p| p.into_inner());
    (result, Returned { job, output })
}

/// Runs the lent root keyed `key` and encoded at `payload` on this
/// worker, if it is lent and not yet taken: `None` leaves the call to its
/// bytes. `abort` is the job's abort flag.
pub(crate) fn run_lent(
    key: &JobKey,
    payload: *const u8,
    abort: &Arc<AtomicBool>,
    ctx: &Ctx<'_>,
) -> Option<Result<LentOutcome, CallError>> {
    let (number, root) = {
        let mut d = desk();
        let loan = d.loans.iter().find(|l| l.key == *key && l.payload == payload as usize)?;
        let (number, root) = (loan.number, loan.root);
        let registry = ctx.worker.registry_arc().clone();
        d.users.push(User { loan: number, abort: Arc::clone(abort), registry });
        (number, root)
    };
    struct Done<'a>(u64, &'a Arc<AtomicBool>);
    impl Drop for Done<'_> {
        fn drop(&mut self) {
            let mut d = desk();
            if let Some(i) = d.users.iter().position(|u| u.loan == self.0 && Arc::ptr_eq(&u.abort, self.1)) {
                d.users.swap_remove(i);
            }
            RETURNED.notify_all();
        }
    }
    let _done = Done(number, abort);
    // SAFETY: listed in `users` above while the loan was there: `lend`
    // keeps the pointee alive until `_done` has run.
    unsafe { &*root }.run_once(ctx)
}

/// The encoding of the held result that `stand_in` stands for (the
/// bytes of an `ExecEvent::RootDone { held: true }`), while its program
/// still waits in the run;
/// `None` once the loan is withdrawn, or for bytes no loan gave out.
/// Holds the loans' lock while it encodes: a loan is not withdrawn under
/// it.
pub fn encode_held(stand_in: &Bytes) -> Option<Bytes> {
    let d = desk();
    d.loans.iter().find_map(|loan| {
        // SAFETY: a listed loan's pointee lives until `lend` has removed
        // the loan from the list, which takes this lock first.
        unsafe { &*loan.root }.encode_held(stand_in)
    })
}
