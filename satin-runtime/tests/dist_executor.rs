//! The local scheduler as a distributed node's executor.

use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use satin::dist::{ExecEvent, LocalExecutor};
use satin::proto::{Executor, JobSpec, SharedValues};
use satin::{divide_and_conquer, encode_job, Job, Runtime};

#[divide_and_conquer]
fn fib(n: u32) -> u64 {
    if n < 2 {
        return n as u64;
    }
    fib(n - 1) + fib(n - 2)
}

/// An executor on a fresh pool of `workers`, and the events it reports.
fn executor(workers: usize) -> (LocalExecutor, mpsc::Receiver<ExecEvent>) {
    let runtime = Arc::new(Runtime::builder().workers(workers).build().expect("a pool"));
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    let exec = LocalExecutor::new(runtime, SharedValues::default(), move |e| {
        let _ = tx.lock().expect("sender").send(e);
    })
    .expect("a fresh runtime");
    (exec, rx)
}

/// A draining node leaves once nothing runs: a job whose result the driver
/// has not sent yet must still count, or the result is lost with the node.
#[test]
fn a_finished_job_runs_on_until_the_driver_has_handled_its_result() {
    let (mut exec, rx) = executor(2);
    assert!(!exec.runs_anything());

    let job = __SatinJob_fib(20);
    exec.run_stolen(JobSpec { key: job.key(), stamp: 7, payload: encode_job(&job), redone: false }, 3);
    match rx.recv().expect("an event") {
        ExecEvent::StolenDone { victim, stamp, value, .. } => {
            assert_eq!((victim, stamp), (3, 7));
            assert_eq!(postcard::from_bytes::<u64>(&value).expect("a u64"), 6765);
        }
        other => panic!("expected StolenDone, got {other:?}"),
    }
    assert!(exec.runs_anything(), "the job's result is not handled yet");
    assert!(exec.entry_ended(), "it was the only job");
    assert!(!exec.runs_anything());
}

/// When a node leaves or the run ends, nothing comes back from other nodes:
/// a job waiting at a sync for a remotely stolen child must end (aborted)
/// instead of holding its worker, and the process, forever.
#[test]
fn abandoning_everything_ends_jobs_that_wait_for_other_nodes() {
    let (mut exec, rx) = executor(1);
    let job = __SatinJob_fib(40);
    exec.run_stolen(JobSpec { key: job.key(), stamp: 1, payload: encode_job(&job), redone: false }, 9);
    // A remote thief takes a child: the job will wait for it at its sync.
    let taken = (0..).find_map(|stamp| exec.take_for_thief(100 + stamp));
    assert!(taken.is_some());
    // Everything else done, the worker parks at that sync.
    while exec.has_work() {
        std::thread::yield_now();
    }
    exec.abandon_all();
    let Ok(event) = rx.recv_timeout(std::time::Duration::from_secs(60)) else {
        // Dropping the pool would wait for the stuck worker: fail instead.
        std::mem::forget(exec);
        panic!("the job still waits for the other node");
    };
    assert!(matches!(event, ExecEvent::Aborted { .. }), "expected Aborted, got {event:?}");
    assert!(exec.entry_ended());
}
