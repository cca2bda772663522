//! A task graph: tasks with costs, edges with communication costs.

use std::fmt;

/// Index of a task in its graph (its position in the input).
pub type TaskId = usize;

/// A directed acyclic graph of tasks. A task's cost is its run time, the
/// same on every processor or one per processor (heterogeneous machines);
/// an edge's cost is the time its data takes between two processors (none
/// on one processor).
#[derive(Debug, Clone)]
pub struct TaskGraph {
    names: Vec<String>,
    costs: Costs,
    preds: Vec<Vec<(TaskId, f64)>>,
    succs: Vec<Vec<(TaskId, f64)>>,
    /// Every task after all of its predecessors.
    order: Vec<TaskId>,
}

/// Run times of the tasks.
#[derive(Debug, Clone)]
pub enum Costs {
    /// One run time per task, on any processor.
    Uniform(Vec<f64>),
    /// `procs` run times per task, row by row: the task's time on each
    /// processor of a fixed machine.
    PerProcessor {
        /// Processors of the machine.
        procs: usize,
        /// `times[task * procs + proc]`.
        times: Vec<f64>,
    },
}

impl TaskGraph {
    /// A graph of `costs` and `edges` (from, to, communication cost); task
    /// `i` is named `names[i]`. Errors: a negative or non-finite cost, an
    /// edge to or from no task, an edge listed twice, a cycle.
    pub fn new(names: Vec<String>, costs: Costs, edges: &[(TaskId, TaskId, f64)]) -> Result<TaskGraph, GraphError> {
        let n = names.len();
        match &costs {
            Costs::Uniform(c) if c.len() != n => {
                return Err(GraphError::new(format!("{} costs for {n} tasks", c.len())))
            }
            Costs::PerProcessor { procs, times } if *procs == 0 || times.len() != n * procs => {
                return Err(GraphError::new(format!("{} run times for {n} tasks on {procs} processors", times.len())))
            }
            _ => {}
        }
        let all_costs: &[f64] = match &costs {
            Costs::Uniform(c) => c,
            Costs::PerProcessor { times, .. } => times,
        };
        if let Some((i, c)) = all_costs.iter().enumerate().find(|(_, c)| !c.is_finite() || **c < 0.0) {
            let task = match &costs {
                Costs::Uniform(_) => i,
                Costs::PerProcessor { procs, .. } => i / procs,
            };
            return Err(GraphError::about(
                task,
                format!("task {} has cost {c}: costs must be finite and not negative", names[task]),
            ));
        }
        let mut preds = vec![Vec::new(); n];
        let mut succs = vec![Vec::new(); n];
        for &(from, to, comm) in edges {
            if from >= n || to >= n {
                return Err(GraphError::new(format!(
                    "an edge {from} -> {to} names a task that does not exist ({n} tasks)"
                )));
            }
            if !comm.is_finite() || comm < 0.0 {
                return Err(GraphError::new(format!(
                    "edge {} -> {} has communication cost {comm}: costs must be finite and not negative",
                    names[from], names[to]
                )));
            }
            if succs[from].iter().any(|&(s, _)| s == to) {
                return Err(GraphError::about(to, format!("edge {} -> {} is listed twice", names[from], names[to])));
            }
            succs[from].push((to, comm));
            preds[to].push((from, comm));
        }
        let order = topological_order(&preds, &succs).map_err(|t| {
            GraphError::about(t, format!("task {} is on a cycle: a task graph must be acyclic", names[t]))
        })?;
        Ok(TaskGraph { names, costs, preds, succs, order })
    }

    /// Number of tasks.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether the graph has no task.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The name of `task` as the input gave it.
    pub fn name(&self, task: TaskId) -> &str {
        &self.names[task]
    }

    /// The run time of `task` on processor `proc`.
    pub fn cost(&self, task: TaskId, proc: usize) -> f64 {
        match &self.costs {
            Costs::Uniform(c) => c[task],
            Costs::PerProcessor { procs, times } => times[task * procs + proc % procs],
        }
    }

    /// The mean run time of `task` over `procs` processors.
    pub fn mean_cost(&self, task: TaskId, procs: usize) -> f64 {
        match &self.costs {
            Costs::Uniform(c) => c[task],
            Costs::PerProcessor { .. } => (0..procs).map(|p| self.cost(task, p)).sum::<f64>() / procs as f64,
        }
    }

    /// The number of processors the costs are given for, if they are given
    /// per processor.
    pub fn fixed_procs(&self) -> Option<usize> {
        match &self.costs {
            Costs::Uniform(_) => None,
            Costs::PerProcessor { procs, .. } => Some(*procs),
        }
    }

    /// The predecessors of `task`, with the communication cost of each edge.
    pub fn preds(&self, task: TaskId) -> &[(TaskId, f64)] {
        &self.preds[task]
    }

    /// The successors of `task`, with the communication cost of each edge.
    pub fn succs(&self, task: TaskId) -> &[(TaskId, f64)] {
        &self.succs[task]
    }

    /// Every task, each after all of its predecessors.
    pub fn topological_order(&self) -> &[TaskId] {
        &self.order
    }

    /// The sum of all run times (on processor 0 if they differ).
    pub fn total_work(&self) -> f64 {
        (0..self.len()).map(|t| self.cost(t, 0)).sum()
    }
}

/// Kahn's algorithm; on a cycle, a task that is on one.
fn topological_order(preds: &[Vec<(TaskId, f64)>], succs: &[Vec<(TaskId, f64)>]) -> Result<Vec<TaskId>, TaskId> {
    let mut missing: Vec<usize> = preds.iter().map(Vec::len).collect();
    let mut ready: Vec<TaskId> = (0..preds.len()).rev().filter(|&t| missing[t] == 0).collect();
    let mut order = Vec::with_capacity(preds.len());
    while let Some(t) = ready.pop() {
        order.push(t);
        for &(s, _) in succs[t].iter().rev() {
            missing[s] -= 1;
            if missing[s] == 0 {
                ready.push(s);
            }
        }
    }
    if order.len() == preds.len() {
        Ok(order)
    } else {
        Err((0..preds.len()).find(|&t| missing[t] > 0).expect("a task left out is on or after a cycle"))
    }
}

/// Why a task graph was refused: what is wrong and, for a file, where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphError {
    /// The line of the input (1-based), if the error has one.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
    /// The task the error is about, for a reader to find its line.
    pub(crate) task: Option<TaskId>,
}

impl GraphError {
    pub(crate) fn new(message: String) -> GraphError {
        GraphError { line: None, message, task: None }
    }

    pub(crate) fn about(task: TaskId, message: String) -> GraphError {
        GraphError { line: None, message, task: Some(task) }
    }

    pub(crate) fn at(line: usize, message: String) -> GraphError {
        GraphError { line: Some(line), message, task: None }
    }
}

impl fmt::Display for GraphError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "line {line}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for GraphError {}
