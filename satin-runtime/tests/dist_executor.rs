//! The local scheduler as a distributed node's executor.

use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use satin::dist::{ExecEvent, LocalExecutor};
use satin::proto::{Executor, JobSpec, SharedTable};
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
    let exec = LocalExecutor::new(runtime, SharedTable::default(), None, move |e: ExecEvent| {
        // (Idle workers are the driver's news, not these tests'.)
        if !matches!(e, ExecEvent::Hungry) {
            let _ = tx.lock().expect("sender").send(e);
        }
    })
    .expect("a fresh runtime");
    (exec, rx)
}

/// The encoded outcome of the root, passing over results it published.
fn root_outcome(rx: &mpsc::Receiver<ExecEvent>) -> satin::proto::Bytes {
    loop {
        match rx.recv().expect("the root ends") {
            ExecEvent::RootDone { value, .. } => return value,
            ExecEvent::Published { .. } => {}
            other => panic!("unexpected {other:?}"),
        }
    }
}

/// The encoded outcome of the one stolen job run on a thief's executor.
fn stolen_outcome(rx: &mpsc::Receiver<ExecEvent>) -> satin::proto::Bytes {
    match rx.recv().expect("the stolen part ends") {
        ExecEvent::StolenDone { value, .. } => value,
        other => panic!("expected StolenDone, got {other:?}"),
    }
}

/// A draining node leaves once nothing runs: a job whose result the driver
/// has not sent yet must still count, or the result is lost with the node.
#[test]
fn a_finished_job_runs_on_until_the_driver_has_handled_its_result() {
    let (mut exec, rx) = executor(2);
    assert!(!exec.runs_anything());

    let job = __SatinJob_fib(20);
    exec.run_stolen(JobSpec::new(job.key(), 7, encode_job(&job)), 3);
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
    exec.run_stolen(JobSpec::new(job.key(), 1, encode_job(&job)), 9);
    // A remote thief takes a child: the job will wait for it at its sync.
    let taken = (0..).find_map(|stamp| exec.take_for_thief(100 + stamp, &[]));
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

/// A redone call of a newer epoch whose result a job of an older epoch is
/// still computing elsewhere waits for that result (adopts it) instead of
/// computing it again.
#[test]
fn a_newer_epoch_waits_for_a_result_an_older_job_still_computes() {
    use satin::checkpoint::ResultMeta;
    use satin::proto::{Config, Entry, Lookup, Msg, Node};

    let runtime = Arc::new(Runtime::builder().workers(2).build().expect("a pool"));
    let mut node =
        Node::member(1, 0, &[(2, 0)], 1, JobSpec::new(satin::JobKey([0; 32]), 0, vec![]), Config::default(), 1);
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    let mut exec = LocalExecutor::new(runtime, node.shared_table(), None, move |e: ExecEvent| {
        // (Idle workers are the driver's news, not these tests'.)
        if !matches!(e, ExecEvent::Hungry) {
            let _ = tx.lock().expect("sender").send(e);
        }
    })
    .expect("a fresh runtime");
    // Node 2 runs fib(20), one call below the root, for an older
    // incarnation of the root.
    let adopted = __SatinJob_fib(20).key();
    let meta = ResultMeta { depth: 1, id: 7, parent: 0 };
    let mark = Msg::TablePut { key: adopted, entry: Entry::Running { holder: 2, epoch: 0 }, meta };
    node.handle_message(0, 2, mark, &mut exec);

    // The restarted root (epoch 1) reaches fib(20): it looks calls up at
    // depth 1, where the running job sits.
    let root = __SatinJob_fib(21);
    exec.run_root(JobSpec { redone: true, epoch: 1, depth: 0, ..JobSpec::new(root.key(), 0, encode_job(&root)) });
    let marked = 1_000_000u64; // not fib(20): shows the value was taken, not computed
    loop {
        match rx.recv_timeout(std::time::Duration::from_secs(60)).expect("the root ends") {
            ExecEvent::Lookup { key, epoch } => {
                assert_eq!((key, epoch), (adopted, 1), "only the running job is waited for");
                assert_eq!(node.lookup(&key, epoch), Lookup::Pending);
                let reply = Msg::FetchReply { key, value: Some(postcard::to_allocvec(&marked).unwrap().into()) };
                node.handle_message(0, 2, reply, &mut exec);
            }
            ExecEvent::RootDone { value, .. } => {
                let got: u64 = postcard::from_bytes(&value).unwrap();
                // fib(21) = fib(20) + fib(19): fib(20) took the adopted value.
                assert_eq!(got, marked + 4181);
                assert_eq!(node.stats().adopted, 1);
                return;
            }
            other => panic!("unexpected {other:?}"),
        }
    }
}

/// A worker waiting at a sync inside a job of an older epoch runs no newer
/// work nested above it: the newer job may be waiting for the older one,
/// which could then never finish.
#[test]
fn a_frame_of_an_older_epoch_never_has_newer_work_nested_above_it() {
    let (mut exec, rx) = executor(1);
    // Long enough for this thread to take a child while it runs.
    let old = __SatinJob_fib(36);
    exec.run_stolen(JobSpec::new(old.key(), 1, encode_job(&old)), 9);
    // A remote thief takes a child: the old job waits for it at its sync.
    let taken =
        (0..).find_map(|stamp| exec.take_for_thief(100 + stamp, &[]).map(|t| (100 + stamp, t))).expect("a child");
    while exec.has_work() {
        std::thread::yield_now();
    }
    let new = __SatinJob_fib(5);
    exec.run_root(JobSpec { epoch: 1, depth: 0, ..JobSpec::new(new.key(), 0, encode_job(&new)) });
    // The only worker waits in the old frame: the new root must not run.
    if let Ok(e) = rx.recv_timeout(std::time::Duration::from_millis(300)) {
        panic!("the newer root ran nested above the older frame: {e:?}");
    }
    // The stolen child's result comes back: the old job ends, then the new one runs.
    let child: __SatinJob_fib = postcard::from_bytes(&take_params(&taken.1.payload)).expect("a fib call");
    exec.deliver(taken.0, postcard::to_allocvec(&satin::sequential(|| fib(child.0))).unwrap().into());
    assert!(matches!(rx.recv().expect("an event"), ExecEvent::StolenDone { .. }));
    match rx.recv().expect("an event") {
        ExecEvent::RootDone { value, .. } => assert_eq!(postcard::from_bytes::<u64>(&value).unwrap(), 5),
        other => panic!("expected RootDone, got {other:?}"),
    }
}

/// The parameters of an encoded call (its function id stripped).
fn take_params(payload: &[u8]) -> Vec<u8> {
    let (_, params) = postcard::take_from_bytes::<&str>(payload).expect("a function id");
    params.to_vec()
}

/// Calls near the top of the tree that ran long enough are published with
/// their content key, value and place in the tree.
#[test]
fn tracked_calls_publish_their_results() {
    let runtime = Arc::new(Runtime::builder().workers(2).build().expect("a pool"));
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    let mut exec =
        LocalExecutor::new(runtime, SharedTable::default(), Some(std::time::Duration::ZERO), move |e: ExecEvent| {
            // (Idle workers are the driver's news, not these tests'.)
            if !matches!(e, ExecEvent::Hungry) {
                let _ = tx.lock().expect("sender").send(e);
            }
        })
        .expect("a fresh runtime");
    let root = __SatinJob_fib(18);
    exec.run_root(JobSpec { depth: 0, ..JobSpec::new(root.key(), 0, encode_job(&root)) });
    let keys: std::collections::HashMap<satin::JobKey, u32> = (0..=18).map(|n| (__SatinJob_fib(n).key(), n)).collect();
    let mut published = 0;
    loop {
        match rx.recv().expect("an event") {
            ExecEvent::Published { key, value, meta, .. } => {
                let n = *keys.get(&key).expect("the key of a fib call");
                assert_eq!(postcard::from_bytes::<u64>(&value).unwrap(), satin::sequential(|| fib(n)));
                // fib(n) sits between depth (18 - n) / 2 (rightmost path) and 18 - n (leftmost).
                assert!((18 - n).div_ceil(2) <= meta.depth && meta.depth <= 18 - n, "fib({n}) at depth {}", meta.depth);
                assert_ne!(meta.id, 0);
                published += 1;
            }
            ExecEvent::RootDone { value, .. } => {
                assert_eq!(postcard::from_bytes::<u64>(&value).unwrap(), 2584);
                break;
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert!(published > 0);
}

/// A function that touches a flaky resource states its own estimate and
/// retries; the executor hands them to the protocol with each of its jobs.
#[divide_and_conquer(expect = "1.5s", retries = 3)]
fn flaky(n: u32) -> u64 {
    if n < 2 {
        return n as u64;
    }
    flaky(n - 1) + flaky(n - 2)
}

#[test]
fn a_functions_own_estimate_and_retries_reach_the_protocol() {
    use satin::proto::JobPolicy;
    let own = encode_job(&__SatinJob_flaky(10));
    assert_eq!(satin::policy_of(&own), JobPolicy { expect: Some(1_500_000_000), retries: Some(3) });
    let plain = encode_job(&__SatinJob_fib(10));
    assert_eq!(satin::policy_of(&plain), JobPolicy::default());
    let (exec, _events) = executor(1);
    let key = __SatinJob_flaky(10).key();
    assert_eq!(exec.policy(&JobSpec::new(key, 1, own)).retries, Some(3));
}

#[divide_and_conquer]
fn quicksort(v: &mut [u64]) {
    if v.len() <= 1 {
        return;
    }
    let last = v.len() - 1;
    v.swap(v.len() / 2, last);
    let mut store = 0;
    for i in 0..last {
        if v[i] < v[last] {
            v.swap(i, store);
            store += 1;
        }
    }
    v.swap(store, last);
    let (lo, hi) = v.split_at_mut(store);
    quicksort(lo);
    quicksort(&mut hi[1..]);
}

/// An in-place sort across two nodes: a part of the slice another node
/// steals travels by value, is sorted there, and comes back into the
/// caller's slice before the sync completes.
#[test]
fn a_mut_slice_stolen_by_another_node_comes_back_sorted() {
    let (mut a, rx_a) = executor(1);
    let (mut b, rx_b) = executor(2);
    let mut x = 0x2545F4914F6CDD1Du64;
    let data: Vec<u64> = (0..2_000_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        })
        .collect();
    let root = __SatinJob_quicksort(&mut data.clone());
    a.run_root(JobSpec { depth: 0, ..JobSpec::new(root.key(), 0, encode_job(&root)) });
    let (stamp, taken) =
        (0..).find_map(|s| a.take_for_thief(100 + s, &[]).map(|t| (100 + s, t))).expect("a part to steal");
    b.run_stolen(JobSpec::new(taken.key, 1, taken.payload.clone()), 1);
    let part = stolen_outcome(&rx_b);
    let (_, sorted_part): ((), Vec<u64>) = postcard::from_bytes(&part).expect("the result and the slice");
    assert!(sorted_part.len() > 1000 && sorted_part.is_sorted(), "the thief sorted its copy");
    a.deliver(stamp, part);
    let outcome = root_outcome(&rx_a);
    let ((), result): ((), Vec<u64>) = postcard::from_bytes(&outcome).expect("the root's outcome");
    let mut expected = data;
    expected.sort_unstable();
    assert_eq!(result, expected);
}

static RACE_LEAVES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Whether `target` is among the leaves lo..hi, each leaf a little work.
#[divide_and_conquer]
fn any_leaf(lo: u64, hi: u64, target: u64) -> bool {
    if hi - lo == 1 {
        RACE_LEAVES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        return std::hint::black_box(fib_plain(20)) > 0 && lo == target;
    }
    let mid = (lo + hi) / 2;
    any_leaf(lo, mid, target) || any_leaf(mid, hi, target)
}

fn fib_plain(n: u32) -> u64 {
    if n < 2 {
        n as u64
    } else {
        fib_plain(n - 1) + fib_plain(n - 2)
    }
}

#[test]
fn a_result_from_another_node_that_decides_a_race_stops_the_local_branch() {
    // Node a runs the search on one worker; node b takes the oldest part,
    // the right half, whose first leaf is the one sought. Its `true`
    // arriving at a stops a's left half, which reading order would finish.
    let (mut a, rx_a) = executor(1);
    let (mut b, rx_b) = executor(1);
    let n = 1u64 << 12;
    RACE_LEAVES.store(0, std::sync::atomic::Ordering::Relaxed);
    let root = __SatinJob_any_leaf(0, n, n / 2);
    a.run_root(JobSpec { depth: 0, ..JobSpec::new(root.key(), 0, encode_job(&root)) });
    let (stamp, taken) =
        (0..).find_map(|s| a.take_for_thief(100 + s, &[]).map(|t| (100 + s, t))).expect("a part to steal");
    assert_eq!(taken.key, __SatinJob_any_leaf(n / 2, n, n / 2).key(), "the thief takes the right half");
    b.run_stolen(JobSpec::new(taken.key, 1, taken.payload.clone()), 1);
    let part = stolen_outcome(&rx_b);
    assert!(postcard::from_bytes::<bool>(&part).expect("a bool"), "the right half holds the leaf");
    a.deliver(stamp, part);
    let outcome = root_outcome(&rx_a);
    assert!(postcard::from_bytes::<bool>(&outcome).expect("a bool"));
    let visited = RACE_LEAVES.load(std::sync::atomic::Ordering::Relaxed);
    assert!(visited < n / 2, "the left half ran on: {visited} of {n} leaves visited");
}

/// A worker with nothing to do tells the driver, once until the driver
/// heard: whether the node steals is its protocol core's decision.
#[test]
fn an_idle_worker_tells_the_driver_once_until_it_heard() {
    let runtime = Arc::new(Runtime::builder().workers(2).build().expect("a pool"));
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    let exec = LocalExecutor::new(runtime, SharedTable::default(), None, move |e| {
        let _ = tx.lock().expect("sender").send(e);
    })
    .expect("a fresh runtime");
    let wait = std::time::Duration::from_secs(30);
    assert!(matches!(rx.recv_timeout(wait), Ok(ExecEvent::Hungry)));
    // Parked workers wake every millisecond and park again: a few dozen
    // parks later, still told once. (The pause lets parks happen; the
    // assertion cannot fail for want of time.)
    std::thread::sleep(std::time::Duration::from_millis(50));
    assert!(rx.try_recv().is_err(), "told again before the driver heard");
    exec.hunger_heard();
    assert!(matches!(rx.recv_timeout(wait), Ok(ExecEvent::Hungry)), "not told again after the driver heard");
}
