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
    let mut exec = LocalExecutor::new(runtime, SharedTable::default(), None, move |e: ExecEvent| {
        // (Idle workers are the driver's news, not these tests'.)
        if !matches!(e, ExecEvent::Hungry) {
            let _ = tx.lock().expect("sender").send(e);
        }
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
        // (Idle workers are the driver's news, not these tests'.)
        if !matches!(e, ExecEvent::Hungry) {
            let _ = tx.lock().expect("sender").send(e);
        }
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

/// How often a `Doubled` was decoded.
static RESULTS_DECODED: AtomicUsize = AtomicUsize::new(0);

/// Numbers that count their decodings, as a result.
#[derive(Serialize, Debug, PartialEq)]
struct Doubled(Vec<u64>);

impl<'de> Deserialize<'de> for Doubled {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        RESULTS_DECODED.fetch_add(1, Ordering::SeqCst);
        Vec::<u64>::deserialize(d).map(Doubled)
    }
}

#[divide_and_conquer]
fn doubled(numbers: Vec<u64>) -> Doubled {
    Doubled(numbers.iter().map(|x| x * 2).collect())
}

/// Each root's end as a `holding_runner` saw it: whether the answer was
/// held, what `encode_held` made of it while the program waited, and the
/// bytes the run got.
type Seen = Arc<Mutex<Vec<(bool, Option<Vec<u8>>, satin::proto::Bytes)>>>;

/// A root runner that reports how each root ended (see [`Seen`]).
fn holding_runner(seen: Seen) -> RootRunner {
    let runtime = Arc::new(Runtime::builder().workers(2).build().expect("a pool"));
    let (tx, events) = mpsc::channel();
    let tx = Mutex::new(tx);
    let mut exec = LocalExecutor::new(runtime, SharedTable::default(), None, move |e: ExecEvent| {
        // (Idle workers are the driver's news, not these tests'.)
        if !matches!(e, ExecEvent::Hungry) {
            let _ = tx.lock().expect("sender").send(e);
        }
    })
    .expect("a fresh runtime");
    Box::new(move |key, payload| {
        exec.run_root(JobSpec::root(key, payload));
        loop {
            match events.recv().expect("the root ends") {
                ExecEvent::RootDone { value, held, .. } => {
                    let encoded = satin::dist::encode_held(&value).map(|b| b.to_vec());
                    seen.lock().expect("seen").push((held, encoded, value.clone()));
                    return value;
                }
                ExecEvent::RootFailed { reason, .. } => panic!("the root failed: {reason}"),
                _ => {}
            }
        }
    })
}

#[test]
fn a_large_answer_the_program_holds_is_encoded_only_on_demand_and_only_while_it_waits() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    // 20 000 numbers of 2 to 8 bytes each: far above the 64 KiB held.
    let numbers: Vec<u64> = (0..20_000u64).map(|i| i << 40).collect();
    let expected = Doubled(numbers.iter().map(|x| x * 2).collect());
    let answer = with_root_runner(holding_runner(seen.clone()), || doubled(numbers));
    assert_eq!(answer, expected);
    assert_eq!(RESULTS_DECODED.load(Ordering::SeqCst), 0, "the program decoded its own answer");
    let (held, encoded, stand_in) = seen.lock().expect("seen").pop().expect("the root ended");
    assert!(held, "a large answer was encoded for the run");
    assert_eq!(encoded, Some(postcard::to_allocvec(&expected).expect("encodes")), "encoded on demand");
    assert_ne!(stand_in.to_vec(), postcard::to_allocvec(&expected).expect("encodes"));
    assert_eq!(satin::dist::encode_held(&stand_in), None, "encoded after the program took its value");

    // A small answer is encoded at once: it may ride in the log.
    let small = with_root_runner(holding_runner(seen.clone()), || doubled(vec![1, 2, 3]));
    assert_eq!(small, Doubled(vec![2, 4, 6]));
    let (held, encoded, value) = seen.lock().expect("seen").pop().expect("the root ended");
    assert!(!held);
    assert_eq!(encoded, None, "nothing is held");
    assert_eq!(value.to_vec(), postcard::to_allocvec(&Doubled(vec![2, 4, 6])).expect("encodes"));
}
