//! The thread that runs one node's tasks, one at a time as its processor
//! in the schedule does: the task's function, then the rest of its planned
//! cost (the work a synthetic task stands for), spent in slices so that an
//! aborted duplicate stops within one.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::dag::processor::Item;
use crate::dag::Workflow;

/// A task for the worker.
pub(super) struct Work {
    pub(super) item: Item,
    pub(super) inputs: Vec<Vec<u8>>,
    /// How long the plan has it take.
    pub(super) planned: Duration,
    /// Raised when the original of a duplicate finished elsewhere.
    pub(super) abort: Arc<AtomicBool>,
}

/// What became of a task.
pub(super) struct Ran {
    pub(super) item: Item,
    /// `None`: aborted.
    pub(super) output: Option<Vec<u8>>,
    pub(super) start: Instant,
    pub(super) took: Duration,
}

/// The longest a worker sleeps before it looks at the abort flag again.
const SLICE: Duration = Duration::from_millis(1);

/// Runs every task `work` brings and hands each outcome to `done`, until
/// the channel closes.
pub(super) fn run(workflow: &Workflow, work: Receiver<Work>, done: impl Fn(Ran)) {
    for w in work {
        let start = Instant::now();
        let inputs: Vec<&[u8]> = w.inputs.iter().map(Vec::as_slice).collect();
        let output = workflow.run_task(w.item.task, &inputs);
        let until = start + w.planned;
        let mut aborted = false;
        loop {
            if w.abort.load(Ordering::Acquire) {
                aborted = true;
                break;
            }
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            std::thread::sleep(left.min(SLICE));
        }
        done(Ran { item: w.item, output: (!aborted).then_some(output), start, took: start.elapsed() });
    }
}
