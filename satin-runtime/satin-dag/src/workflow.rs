//! A task graph whose tasks are Rust functions: each takes its
//! predecessors' outputs (bytes, in the order the inputs were named) and
//! returns its own. Run it in order on one thread, or on threads that play
//! the processors of a fault-tolerant schedule — each thread drives its
//! [`Processor`] and runs the functions; one thread can be made to crash.

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::exec::{Crash, Stalled};
use super::ft::FtSchedule;
use super::graph::{Costs, GraphError, TaskGraph, TaskId};
use super::processor::Processor;

/// A task's function: its inputs' outputs, in order, to its output.
pub type TaskFn = Arc<dyn Fn(&[&[u8]]) -> Vec<u8> + Send + Sync>;

/// Builds a [`Workflow`] task by task.
#[derive(Default)]
pub struct WorkflowBuilder {
    names: Vec<String>,
    costs: Vec<f64>,
    edges: Vec<(TaskId, TaskId, f64)>,
    functions: Vec<TaskFn>,
}

impl WorkflowBuilder {
    /// An empty workflow.
    pub fn new() -> WorkflowBuilder {
        WorkflowBuilder::default()
    }

    /// Adds task `name`, planned to take `cost`, fed by the outputs of
    /// `inputs` (each edge costing `comm` across processors).
    pub fn task(
        &mut self,
        name: &str,
        cost: f64,
        inputs: &[TaskId],
        comm: f64,
        f: impl Fn(&[&[u8]]) -> Vec<u8> + Send + Sync + 'static,
    ) -> TaskId {
        let id = self.names.len();
        self.names.push(name.to_string());
        self.costs.push(cost);
        self.edges.extend(inputs.iter().map(|&i| (i, id, comm)));
        self.functions.push(Arc::new(f));
        id
    }

    /// The workflow; the graph's errors (a negative cost, an input that is
    /// not a task, …) as [`TaskGraph::new`] gives them.
    pub fn build(self) -> Result<Workflow, GraphError> {
        let graph = TaskGraph::new(self.names, Costs::Uniform(self.costs), &self.edges)?;
        Ok(Workflow { graph, functions: self.functions })
    }
}

/// A task graph with a function per task.
pub struct Workflow {
    graph: TaskGraph,
    functions: Vec<TaskFn>,
}

/// How a run on threads went.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadRun {
    /// Every task's output.
    pub outputs: Vec<Vec<u8>>,
    /// Duplicates that ran to their end.
    pub duplicates_completed: usize,
    /// Wall-clock time of the run.
    pub elapsed: Duration,
}

impl Workflow {
    /// A workflow of `graph`'s tasks that stand for work they do not do:
    /// each outputs a digest of its number and its inputs' outputs (so a
    /// missing or wrong input shows in every output after it); run on a
    /// schedule, each takes its planned cost.
    pub fn synthetic(graph: TaskGraph) -> Workflow {
        let functions = (0..graph.len())
            .map(|t| -> TaskFn {
                Arc::new(move |inputs: &[&[u8]]| {
                    let mut h = blake3::Hasher::new();
                    h.update(&(t as u64).to_le_bytes());
                    for i in inputs {
                        h.update(i);
                    }
                    h.finalize().as_bytes().to_vec()
                })
            })
            .collect();
        Workflow { graph, functions }
    }

    /// The task graph.
    pub fn graph(&self) -> &TaskGraph {
        &self.graph
    }

    /// The tasks no other task takes input from: the workflow's results.
    pub fn exits(&self) -> Vec<TaskId> {
        (0..self.graph.len()).filter(|&t| self.graph.succs(t).is_empty()).collect()
    }

    /// Runs task `t`'s function on its inputs' outputs.
    pub fn run_task(&self, t: TaskId, inputs: &[&[u8]]) -> Vec<u8> {
        (self.functions[t])(inputs)
    }

    fn inputs<'a>(&self, t: TaskId, outputs: &'a [Option<Vec<u8>>]) -> Vec<&'a [u8]> {
        self.graph.preds(t).iter().map(|&(u, _)| outputs[u].as_deref().expect("inputs first")).collect()
    }

    /// Every task's output, computed in topological order on this thread.
    pub fn run_sequential(&self) -> Vec<Vec<u8>> {
        let mut outputs: Vec<Option<Vec<u8>>> = vec![None; self.graph.len()];
        for &t in self.graph.topological_order() {
            let out = self.run_task(t, &self.inputs(t, &outputs));
            outputs[t] = Some(out);
        }
        outputs.into_iter().map(|o| o.expect("every task")).collect()
    }

    /// Runs `schedule` on one thread per processor. A task takes its
    /// function's time plus its planned cost in `unit`s (a stand-in for
    /// work the function does not do); `crash` stops a processor's thread
    /// at that time, losing what it runs. `Err` if the crash left a task
    /// without any copy, found when nothing has moved for ten times the
    /// planned makespan (and at least ten seconds).
    pub fn run_threads(
        &self,
        schedule: &FtSchedule,
        unit: Duration,
        crash: Option<Crash>,
    ) -> Result<ThreadRun, Stalled> {
        let procs = schedule.originals.procs();
        let delay = schedule.params.abort_delay;
        let processors = Processor::all_of(&self.graph, schedule);
        let shared = Shared {
            state: Mutex::new(State {
                processors,
                outputs: vec![None; self.graph.len()],
                original_end: vec![None; self.graph.len()],
                duplicates_completed: 0,
                last_progress: 0.0,
            }),
            moved: Condvar::new(),
            start: Instant::now(),
            unit,
            delay,
            crash,
            // Generous: a loaded machine may not schedule a thread for a while.
            give_up: (10.0 * schedule.makespan()).max(10.0 / unit.as_secs_f64().max(1e-9)),
        };
        std::thread::scope(|scope| {
            for proc in 0..procs {
                let shared = &shared;
                scope.spawn(move || self.processor_thread(shared, proc));
            }
            if let Some(c) = crash {
                // The crash becomes news for every processor when it happens.
                let wait = unit.mul_f64(c.at);
                std::thread::sleep(wait.saturating_sub(shared.start.elapsed()));
                let mut state = shared.state.lock().unwrap_or_else(|e| e.into_inner());
                for p in &mut state.processors {
                    p.peer_down(c.proc, c.at);
                }
                shared.moved.notify_all();
            }
        });
        let state = shared.state.into_inner().unwrap_or_else(|e| e.into_inner());
        if let Some(task) = state.outputs.iter().position(Option::is_none) {
            return Err(Stalled { task });
        }
        Ok(ThreadRun {
            outputs: state.outputs.into_iter().map(|o| o.expect("checked")).collect(),
            duplicates_completed: state.duplicates_completed,
            elapsed: shared.start.elapsed(),
        })
    }

    /// One processor: ask its state machine what to run, run it, tell
    /// every processor, until every task has an output (or this processor
    /// crashes, or nothing moves any more).
    fn processor_thread(&self, shared: &Shared, me: usize) {
        let crashes_at = shared.crash.filter(|c| c.proc == me).map_or(f64::INFINITY, |c| c.at);
        let mut state = shared.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            let now = shared.now();
            if now >= crashes_at
                || state.outputs.iter().all(Option::is_some)
                || now - state.last_progress > shared.give_up
            {
                shared.moved.notify_all();
                return;
            }
            let Some(item) = state.processors[me].next(&self.graph, now) else {
                state = shared.moved.wait_timeout(state, shared.unit).unwrap_or_else(|e| e.into_inner()).0;
                continue;
            };
            let inputs: Vec<Vec<u8>> = self.inputs(item.task, &state.outputs).into_iter().map(<[u8]>::to_vec).collect();
            drop(state);
            let refs: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
            let out = self.run_task(item.task, &refs);
            // The planned cost, spent in slices: a duplicate stops when its
            // original's abort arrives, a crash ends everything.
            let until = now + self.graph.cost(item.task, me);
            let mut stopped = false;
            loop {
                let now = shared.now();
                if now >= until || now >= crashes_at {
                    break;
                }
                let guard = shared.state.lock().unwrap_or_else(|e| e.into_inner());
                if item.duplicate && guard.original_end[item.task].is_some_and(|e| e + shared.delay <= now) {
                    stopped = true;
                    break;
                }
                drop(guard);
                std::thread::sleep(shared.unit.mul_f64((until - now).min(1.0)));
            }
            state = shared.state.lock().unwrap_or_else(|e| e.into_inner());
            let end = shared.now();
            if stopped || end >= crashes_at {
                continue;
            }
            if state.outputs[item.task].is_none() {
                state.outputs[item.task] = Some(out);
            }
            if item.duplicate {
                state.duplicates_completed += 1;
            } else {
                state.original_end[item.task] = Some(end);
            }
            for p in &mut state.processors {
                p.copy_finished(item.task, me, end, !item.duplicate);
            }
            state.last_progress = end;
            shared.moved.notify_all();
        }
    }
}

struct Shared {
    state: Mutex<State>,
    moved: Condvar,
    start: Instant,
    unit: Duration,
    delay: f64,
    crash: Option<Crash>,
    give_up: f64,
}

impl Shared {
    /// Time since the start, in units.
    fn now(&self) -> f64 {
        self.start.elapsed().as_secs_f64() / self.unit.as_secs_f64()
    }
}

struct State {
    processors: Vec<Processor>,
    outputs: Vec<Option<Vec<u8>>>,
    original_end: Vec<Option<f64>>,
    duplicates_completed: usize,
    last_progress: f64,
}
