//! The program's own call, on the node whose program made it, runs from
//! its value: its parameters are not decoded again there (a distributed
//! root's bytes are for the other nodes and for later runs of it).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};

use satin::dist::{with_root_runner, ExecEvent, LocalExecutor, RootRunner};
use satin::proto::{Executor, JobSpec, SharedTable};
use satin::{divide_and_conquer, Runtime};
use serde::{Deserialize, Deserializer, Serialize};

/// How often a `Counted` was decoded.
static DECODED: AtomicUsize = AtomicUsize::new(0);

/// Numbers that count their decodings.
#[derive(Serialize)]
struct Counted(Vec<u64>);

impl<'de> Deserialize<'de> for Counted {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        DECODED.fetch_add(1, Ordering::SeqCst);
        Vec::<u64>::deserialize(d).map(Counted)
    }
}

#[divide_and_conquer]
fn total(numbers: Counted) -> u64 {
    halves(&numbers.0)
}

#[divide_and_conquer]
fn halves(part: &[u64]) -> u64 {
    if part.len() <= 2 {
        return part.iter().sum();
    }
    let (l, r) = part.split_at(part.len() / 2);
    halves(l) + halves(r)
}

/// A node's executor as the root runner of this thread: every annotated
/// call outside a runtime runs as the root of a run here (`redone`: as a
/// root that runs again, from its bytes).
fn runner(redone: bool) -> RootRunner {
    let runtime = Arc::new(Runtime::builder().workers(2).build().expect("a pool"));
    let (tx, events) = mpsc::channel();
    let tx = Mutex::new(tx);
    let mut exec = LocalExecutor::new(runtime, SharedTable::default(), None, move |e| {
        let _ = tx.lock().expect("sender").send(e);
    })
    .expect("a fresh runtime");
    Box::new(move |key, payload| {
        exec.run_root(JobSpec { redone, ..JobSpec::root(key, payload) });
        loop {
            match events.recv().expect("the root ends") {
                ExecEvent::RootDone { value, .. } => return value,
                ExecEvent::RootFailed { reason, .. } => panic!("the root failed: {reason}"),
                _ => {}
            }
        }
    })
}

#[test]
fn the_root_runs_from_its_value_on_the_node_that_called_and_from_its_bytes_again() {
    let numbers: Vec<u64> = (1..=1000).collect();
    let sum = with_root_runner(runner(false), || total(Counted(numbers.clone())));
    assert_eq!(sum, 500_500);
    assert_eq!(DECODED.swap(0, Ordering::SeqCst), 0, "the root's parameters were decoded on the node that called");
    // A root that runs again (a restart, a recomputation) has only bytes.
    let sum = with_root_runner(runner(true), || total(Counted(numbers)));
    assert_eq!(sum, 500_500);
    assert_eq!(DECODED.load(Ordering::SeqCst), 1, "a root run again decodes its parameters once");
}

/// Set once a `slow_sum` leaf has run.
static STARTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

#[divide_and_conquer]
fn slow_sum(lo: u64, hi: u64) -> u64 {
    if hi - lo <= 1 {
        STARTED.store(true, Ordering::SeqCst);
        return lo;
    }
    let mid = lo + (hi - lo) / 2;
    slow_sum(lo, mid) + slow_sum(mid, hi)
}

#[test]
fn a_run_that_ends_elsewhere_while_the_lent_root_runs_stops_it_before_the_call_returns() {
    let runtime = Arc::new(Runtime::builder().workers(2).build().expect("a pool"));
    let (tx, _events) = mpsc::channel();
    let tx = Mutex::new(tx);
    let mut exec = LocalExecutor::new(runtime, SharedTable::default(), None, move |e: ExecEvent| {
        let _ = tx.lock().expect("sender").send(e);
    })
    .expect("a fresh runtime");
    // The root starts here, then the run ends with another node's answer
    // (7) while it still runs: the call returns that answer, once the
    // workers are done with the value it lent them.
    let runner: RootRunner = Box::new(move |key, payload| {
        exec.run_root(JobSpec::root(key, payload));
        while !STARTED.load(Ordering::SeqCst) {
            std::thread::yield_now();
        }
        postcard::to_allocvec(&7u64).expect("encodes").into()
    });
    // Far too long a run to end by itself while the test waits.
    let answer = with_root_runner(runner, || slow_sum(0, u64::MAX / 4));
    assert_eq!(answer, 7);
}
