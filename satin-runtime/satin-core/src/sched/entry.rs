//! Entry jobs: calls that arrive from outside the pool as bytes (a job
//! stolen by this node, or the distributed root), each on the heap with its
//! own abort flag, reporting its outcome through a callback.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::ctx::{Aborted, Ctx, Place};
use super::job_ref::{Exec, JobRef};
use super::registry::Registry;
use super::remote::RemotePanic;
use super::tls::CurrentGuard;
use crate::job::registry::run_call;
use satin_proto::JobKind;

/// How an entry job ended.
#[derive(Debug)]
pub enum EntryOutcome {
    /// The encoded result.
    Value(satin_proto::Bytes),
    /// The root's large result, held unencoded by the program that made
    /// the call: a stand-in (see `job/typed_root.rs`).
    Held(satin_proto::Bytes),
    /// Its abort flag was set.
    Aborted,
    /// It could not run (bad bytes) or it panicked: the message says which.
    Failed(String),
}

/// Where and when an entry job ran (for traces).
#[derive(Debug, Clone, Copy)]
pub struct Ran {
    /// Index of the worker thread.
    pub worker: usize,
    /// When it started.
    pub start: Instant,
    /// How long it ran.
    pub took: Duration,
}

/// What an entry job calls when it ends.
pub(crate) type Done = Box<dyn FnOnce(EntryOutcome, Ran) + Send>;

/// What an entry job is, besides its call.
pub(crate) struct EntrySpec {
    /// The call's key, as the payload's sender computed it.
    pub(crate) key: crate::JobKey,
    pub(crate) payload: satin_proto::Bytes,
    pub(crate) redone: bool,
    /// A copy of a late job (stragglers), for the task stream.
    pub(crate) duplicate: bool,
    pub(crate) epoch: u32,
    pub(crate) place: Place,
}

pub(crate) struct EntryJob {
    spec: EntrySpec,
    abort: Arc<AtomicBool>,
    done: Done,
}

impl Registry {
    /// Queues an encoded call; `done` gets its outcome, on a worker thread.
    pub(crate) fn inject_entry(&self, spec: EntrySpec, abort: Arc<AtomicBool>, done: Done) {
        let job = Box::new(EntryJob { spec, abort, done });
        // SAFETY: the box is leaked into the reference and reclaimed by its
        // one execution, `execute`, which matches the data.
        let job_ref = unsafe { JobRef::new(Box::into_raw(job) as *const (), execute) };
        self.injector.push(job_ref);
        self.sleep.wake_all();
    }
}

/// # Safety
/// `data` is a leaked `Box<EntryJob>`, executed once.
unsafe fn execute(data: *const (), exec: Exec<'_>) -> bool {
    let Exec::Run(worker, _) = exec else {
        unreachable!("entry jobs sit in the injector, out of remote thieves' reach")
    };
    // SAFETY: per the function contract, the box is alive until reclaimed.
    if unsafe { &*(data as *const EntryJob) }.spec.epoch > worker.epoch_limit() {
        // Not nested above an older frame (see `Exec::Run`): back it goes.
        // SAFETY: the same job, still unexecuted, under the same contract.
        worker.registry().injector.push(unsafe { JobRef::new(data, execute) });
        return false;
    }
    // SAFETY: per the function contract; the box is reclaimed exactly once.
    let job = unsafe { Box::from_raw(data as *mut EntryJob) };
    let EntryJob { spec, abort, done } = *job;
    let EntrySpec { key, payload, redone, duplicate, epoch, place } = spec;
    let spans = &worker.registry().spans;
    let recorded = spans.on().then(|| {
        let kind = match place.depth == 0 {
            _ if duplicate => JobKind::Duplicate,
            _ if redone || epoch > 0 => JobKind::Redone,
            true => JobKind::Root,
            false => JobKind::Stolen,
        };
        (spans.started(worker.index(), kind), kind)
    });
    let start = Instant::now();
    let outcome = {
        let ctx = Ctx::entry(worker, &abort, redone, epoch, place);
        if place.depth != crate::checkpoint::DEPTH_UNKNOWN {
            ctx.entry_key.set(Some((place.depth, key)));
        }
        let _current = CurrentGuard::set(&ctx);
        // The first run of the root, on the node whose program made the
        // call, takes the call's value itself (see `job/typed_root.rs`).
        let first_root = place.depth == 0 && !redone && epoch == 0;
        let run = || {
            use crate::job::typed_root::{run_lent, LentOutcome};
            let lent = if first_root { run_lent(&key, payload.as_ptr(), &abort, &ctx) } else { None };
            lent.unwrap_or_else(|| run_call(&payload, &ctx).map(|v| LentOutcome::Encoded(v.into())))
        };
        match panic::catch_unwind(AssertUnwindSafe(run)) {
            Ok(Ok(crate::job::typed_root::LentOutcome::Encoded(value))) => EntryOutcome::Value(value),
            Ok(Ok(crate::job::typed_root::LentOutcome::Held(stand_in))) => EntryOutcome::Held(stand_in),
            Ok(Err(e)) => EntryOutcome::Failed(e.to_string()),
            Err(p) if p.is::<Aborted>() => EntryOutcome::Aborted,
            Err(p) => EntryOutcome::Failed(panic_message(&*p)),
        }
    };
    if let Some((recorded, kind)) = recorded {
        let kind = match outcome {
            EntryOutcome::Aborted => JobKind::Aborted,
            EntryOutcome::Failed(_) => JobKind::Failed,
            _ => kind,
        };
        worker.registry().spans.ended(worker.index(), recorded, kind);
    }
    done(outcome, Ran { worker: worker.index(), start, took: start.elapsed() });
    true
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(RemotePanic(s)) = p.downcast_ref::<RemotePanic>() {
        s.clone()
    } else if let Some(s) = p.downcast_ref::<&str>() {
        format!("a job panicked: {s}")
    } else if let Some(s) = p.downcast_ref::<String>() {
        format!("a job panicked: {s}")
    } else {
        "a job panicked".to_string()
    }
}
