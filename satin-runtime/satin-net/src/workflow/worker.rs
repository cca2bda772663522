//! The thread that runs one node's tasks, one at a time as its processor
//! in the schedule does: the task's function, then the rest of its planned
//! cost (the work a synthetic task stands for), waited out so that an
//! aborted duplicate stops at once.

use std::sync::mpsc::Receiver;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use satin_dag::processor::Item;
use satin_dag::Workflow;

/// A task for the worker.
pub(super) struct Work {
    pub(super) item: Item,
    pub(super) inputs: Vec<Vec<u8>>,
    /// How long the plan has it take.
    pub(super) planned: Duration,
    /// Raised when the original of a duplicate finished elsewhere.
    pub(super) abort: Abort,
}

/// A flag the driver raises to stop a running task, and the worker waits
/// on.
#[derive(Clone, Default)]
pub(super) struct Abort(Arc<(Mutex<bool>, Condvar)>);

impl Abort {
    pub(super) fn raise(&self) {
        let (flag, raised) = &*self.0;
        *flag.lock().unwrap_or_else(|e| e.into_inner()) = true;
        raised.notify_all();
    }

    /// Waits until `deadline`; true if the flag was raised first.
    fn wait_until(&self, deadline: Instant) -> bool {
        let (flag, raised) = &*self.0;
        let mut up = flag.lock().unwrap_or_else(|e| e.into_inner());
        while !*up {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            up = raised.wait_timeout(up, left).unwrap_or_else(|e| e.into_inner()).0;
        }
        true
    }
}

/// What became of a task.
pub(super) struct TaskRan {
    pub(super) item: Item,
    /// `None`: aborted.
    pub(super) output: Option<Vec<u8>>,
    pub(super) start: Instant,
    pub(super) took: Duration,
}

/// Runs every task `work` brings and hands each outcome to `done`, until
/// the channel closes.
pub(super) fn run(workflow: &Workflow, work: Receiver<Work>, done: impl Fn(TaskRan)) {
    for w in work {
        let start = Instant::now();
        let inputs: Vec<&[u8]> = w.inputs.iter().map(Vec::as_slice).collect();
        let output = workflow.run_task(w.item.task, &inputs);
        let aborted = w.abort.wait_until(start + w.planned);
        done(TaskRan { item: w.item, output: (!aborted).then_some(output), start, took: start.elapsed() });
    }
}
