//! Several nodes in one process: each runtime has its own replicas of the
//! shared values (`Builder::shared`), a job decoded on a node's workers
//! reads that node's replica, and values move between the nodes only
//! through the executor's shared-value calls — the path the protocol core
//! drives between machines.

use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use satin::dist::{ExecEvent, LocalExecutor};
use satin::proto::{Executor, JobSpec, SharedTable};
use satin::shared::{Incumbent, Replicas};
use satin::{divide_and_conquer, encode_job, Job, Runtime};

/// A leaf's score: scattered, so that the best leaf is found late.
fn score(x: u64) -> u64 {
    (x * 7919 + 13) % 1009 + 10
}

/// The lowest score in `lo..hi`, offered to `best` leaf by leaf.
#[divide_and_conquer]
fn lowest(lo: u64, hi: u64, best: &Incumbent) -> u64 {
    if hi - lo <= 1 {
        best.offer(score(lo));
        return score(lo);
    }
    let mid = lo + (hi - lo) / 2;
    lowest(lo, mid, best).min(lowest(mid, hi, best))
}

struct TestNode {
    runtime: Arc<Runtime>,
    exec: LocalExecutor,
    events: mpsc::Receiver<ExecEvent>,
}

impl TestNode {
    /// A node: its own pool, its own replicas, an executor on them.
    fn new() -> TestNode {
        let runtime = Arc::new(Runtime::builder().workers(2).shared(Replicas::new()).build().expect("a pool"));
        let (tx, events) = mpsc::channel();
        let tx = Mutex::new(tx);
        let exec = LocalExecutor::new(Arc::clone(&runtime), SharedTable::default(), None, move |e: ExecEvent| {
            // (Idle workers are the driver's news, not these tests'.)
            if !matches!(e, ExecEvent::Hungry) {
                let _ = tx.lock().expect("sender").send(e);
            }
        })
        .expect("a fresh runtime");
        TestNode { runtime, exec, events }
    }

    /// Runs `lowest(lo, hi)` here as a job stolen by this node, as if it
    /// came over the network, and returns its result.
    fn run(&mut self, lo: u64, hi: u64, best: &Incumbent) -> u64 {
        let job = __SatinJob_lowest(lo, hi, best);
        self.exec.run_stolen(JobSpec::new(job.key(), 1, encode_job(&job)), 9);
        loop {
            match self.events.recv().expect("the job ends") {
                ExecEvent::StolenDone { value, .. } => return postcard::from_bytes(&value).expect("a u64"),
                ExecEvent::Published { .. } => {}
                other => panic!("unexpected {other:?}"),
            }
        }
    }
}

#[test]
fn two_nodes_in_one_process_keep_their_own_replicas_until_they_exchange_news() {
    let (mut a, mut b) = (TestNode::new(), TestNode::new());
    // Each node's main program makes its incumbent in its own replicas.
    let best_a = a.runtime.shared().enter(|| Incumbent::minimize("lowest", u64::MAX));
    let best_b = b.runtime.shared().enter(|| Incumbent::minimize("lowest", u64::MAX));

    let found_a = a.run(0, 300, &best_a);
    assert_eq!(found_a, (0..300).map(score).min().unwrap());
    assert_eq!(best_a.get(), found_a, "the jobs on node a offered to node a's replica");
    assert_eq!(best_b.get(), u64::MAX, "node b heard nothing yet");

    let found_b = b.run(300, 600, &best_b);
    assert_eq!(best_b.get(), found_b, "node b's jobs offered to node b's replica");
    assert_ne!(found_a, found_b, "the halves differ, so the exchange below shows");

    // News travel as the core moves them: a's changes into b, b's into a.
    let news_a = a.exec.take_shared().expect("node a's jobs changed a value");
    let news_b = b.exec.take_shared().expect("node b's jobs changed a value");
    b.exec.merge_shared(news_a);
    a.exec.merge_shared(news_b);
    let best = found_a.min(found_b);
    assert_eq!((best_a.get(), best_b.get()), (best, best), "both replicas end at the best of both");
    assert!(a.exec.take_shared().is_none(), "a peer's value is not sent on as node a's own");
}

#[test]
fn a_value_decoded_outside_any_node_lands_in_the_process_replicas() {
    let node = Replicas::new();
    let here = node.enter(|| Incumbent::minimize("where", 50));
    let bytes = postcard::to_allocvec(&here).expect("encodes");
    let inside: Incumbent = node.enter(|| postcard::from_bytes(&bytes).expect("decodes"));
    let outside: Incumbent = postcard::from_bytes(&bytes).expect("decodes");
    inside.offer(20);
    assert_eq!(here.get(), 20, "decoded inside the node: the node's replica");
    assert_eq!(outside.get(), u64::MAX, "decoded outside: the process's own, fresh");
    assert!(Arc::ptr_eq(&Replicas::current(), Replicas::process()), "enter restores the thread's replicas");
}
