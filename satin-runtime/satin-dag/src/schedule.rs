//! A static schedule: which processor runs each task when, and the checker
//! that every schedule the schedulers make must pass.

use std::fmt;

use super::graph::{TaskGraph, TaskId};

/// Tolerance of time comparisons (costs are sums of inputs' numbers).
const EPS: f64 = 1e-9;

/// One task placed on a processor.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Placement {
    /// The task.
    pub task: TaskId,
    /// The processor that runs it.
    pub proc: usize,
    /// When it starts.
    pub start: f64,
    /// When it ends: `start` plus its run time on `proc`.
    pub finish: f64,
}

/// Tasks placed on `procs` processors.
#[derive(Debug, Clone)]
pub struct Schedule {
    procs: usize,
    placements: Vec<Placement>,
}

impl Schedule {
    /// A schedule of `placements` on `procs` processors, as given: check
    /// it with [`Schedule::check`].
    pub fn from_placements(procs: usize, placements: Vec<Placement>) -> Schedule {
        Schedule { procs, placements }
    }

    /// Number of processors.
    pub fn procs(&self) -> usize {
        self.procs
    }

    /// Every placement, in the order the scheduler made them.
    pub fn placements(&self) -> &[Placement] {
        &self.placements
    }

    /// When the last task finishes.
    pub fn makespan(&self) -> f64 {
        self.placements.iter().map(|p| p.finish).fold(0.0, f64::max)
    }

    /// The placement of `task`.
    pub fn of(&self, task: TaskId) -> Option<&Placement> {
        self.placements.iter().find(|p| p.task == task)
    }

    /// Checks the schedule against `graph`: every task placed once, on a
    /// processor that exists, for its run time there; no two tasks at once
    /// on one processor; every task starts after each predecessor finished
    /// plus, across processors, the edge's communication cost.
    pub fn check(&self, graph: &TaskGraph) -> Result<(), Violation> {
        let mut at = vec![None; graph.len()];
        for p in &self.placements {
            if p.task >= graph.len() {
                return Err(Violation(format!("task {} is not in the graph", p.task)));
            }
            if p.proc >= self.procs {
                return Err(Violation(format!(
                    "task {} is on processor {} of {}",
                    graph.name(p.task),
                    p.proc,
                    self.procs
                )));
            }
            if at[p.task].replace(*p).is_some() {
                return Err(Violation(format!("task {} is placed twice", graph.name(p.task))));
            }
            let cost = graph.cost(p.task, p.proc);
            if (p.finish - p.start - cost).abs() > EPS || p.start < -EPS {
                return Err(Violation(format!(
                    "task {} runs {}..{} on processor {}, where it takes {cost}",
                    graph.name(p.task),
                    p.start,
                    p.finish,
                    p.proc
                )));
            }
        }
        if let Some(t) = at.iter().position(Option::is_none) {
            return Err(Violation(format!("task {} is not placed", graph.name(t))));
        }
        for proc in 0..self.procs {
            let mut on: Vec<&Placement> =
                self.placements.iter().filter(|p| p.proc == proc && p.finish > p.start).collect();
            on.sort_by(|a, b| a.start.total_cmp(&b.start));
            for w in on.windows(2) {
                if w[1].start < w[0].finish - EPS {
                    return Err(Violation(format!(
                        "tasks {} and {} overlap on processor {proc}",
                        graph.name(w[0].task),
                        graph.name(w[1].task)
                    )));
                }
            }
        }
        for (t, p) in at.iter().enumerate() {
            let p = p.expect("checked above");
            for &(pred, comm) in graph.preds(t) {
                let q = at[pred].expect("checked above");
                let ready = q.finish + if q.proc == p.proc { 0.0 } else { comm };
                if p.start < ready - EPS {
                    return Err(Violation(format!(
                        "task {} starts at {} before its input from task {} arrives at {ready}",
                        graph.name(t),
                        p.start,
                        graph.name(pred)
                    )));
                }
            }
        }
        Ok(())
    }
}

/// What is wrong with a schedule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation(pub String);

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Violation {}
