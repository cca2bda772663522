//! Running a fault-tolerant schedule in virtual time, with crashes: the
//! driver of every processor's state machine (`processor.rs`, which holds
//! the rules for what starts when). An input comes
//! from whichever copy of the predecessor ends first, plus the edge's cost
//! across processors. An original's end stops its duplicate when the abort
//! arrives (`abort_delay` later): a duplicate not started by then is
//! skipped. A crashed processor loses what it runs and runs nothing more.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::ft::FtSchedule;
use super::graph::{TaskGraph, TaskId};
use super::processor::{Item, Processor};

/// A processor that stops at a time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Crash {
    /// The processor.
    pub proc: usize,
    /// When it stops: what it would finish later is lost.
    pub at: f64,
}

/// How a simulated run went.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// When the last task had a finished copy.
    pub makespan: f64,
    /// When each task's first copy finished.
    pub finished: Vec<f64>,
    /// Duplicates that ran to their end.
    pub duplicates_completed: usize,
    /// What each processor ran, in the order it started.
    pub spans: Vec<Span>,
}

/// One item a processor ran.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Span {
    /// The task.
    pub task: TaskId,
    /// The processor.
    pub proc: usize,
    /// Whether it was the task's duplicate.
    pub duplicate: bool,
    /// When it started.
    pub start: f64,
    /// When it ended, was stopped, or was lost.
    pub end: f64,
    /// How it ended.
    pub outcome: Outcome,
}

/// How an item ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Ran to its end.
    Completed,
    /// A duplicate stopped by its original's abort message.
    Aborted,
    /// Lost with its crashed processor.
    Lost,
}

/// A run that could not finish: a task no copy of which survived.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stalled {
    /// A task with no finished copy.
    pub task: TaskId,
}

impl std::fmt::Display for Stalled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the run stalled: no copy of task {} finished", self.task)
    }
}

impl std::error::Error for Stalled {}

#[derive(Clone, Copy)]
struct Running {
    item: Item,
    start: f64,
    end: f64,
}

/// A time on the event heap, earliest first.
#[derive(PartialEq)]
struct At(f64);

impl Eq for At {}

impl PartialOrd for At {
    fn partial_cmp(&self, other: &At) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for At {
    fn cmp(&self, other: &At) -> Ordering {
        other.0.total_cmp(&self.0)
    }
}

/// Runs `schedule` of `graph` with `crashes`.
pub fn simulate(graph: &TaskGraph, schedule: &FtSchedule, crashes: &[Crash]) -> Result<Run, Stalled> {
    let procs = schedule.originals.procs();
    let delay = schedule.params.abort_delay;
    let mut processors = Processor::all_of(graph, schedule);
    let dead_at: Vec<f64> = (0..procs)
        .map(|p| crashes.iter().filter(|c| c.proc == p).map(|c| c.at).fold(f64::INFINITY, f64::min))
        .collect();
    let mut running: Vec<Option<Running>> = vec![None; procs];
    let mut copies: Vec<Vec<(usize, f64)>> = vec![Vec::new(); graph.len()];
    let mut original_end: Vec<Option<f64>> = vec![None; graph.len()];
    let mut duplicates_completed = 0;
    let mut spans = Vec::new();
    let mut events = BinaryHeap::new();
    events.push(At(0.0));
    for d in &schedule.duplicates {
        events.push(At(d.start));
    }
    for c in crashes {
        events.push(At(c.at));
        events.push(At(c.at + super::ft::notice_delay(delay)));
    }
    while let Some(At(now)) = events.pop() {
        while events.peek().is_some_and(|At(t)| *t <= now) {
            events.pop();
        }
        for c in crashes.iter().filter(|c| c.at <= now) {
            for p in &mut processors {
                p.peer_down(c.proc, c.at);
            }
        }
        for proc in 0..procs {
            // What ends by now: finished, or a duplicate stopped by its abort.
            if let Some(r) = running[proc] {
                let aborted_at = r.item.duplicate.then(|| original_end[r.item.task].map(|e| e + delay)).flatten();
                let stop = aborted_at.filter(|&a| a < r.end);
                let span = |end: f64, outcome: Outcome| Span {
                    task: r.item.task,
                    proc,
                    duplicate: r.item.duplicate,
                    start: r.start,
                    end,
                    outcome,
                };
                if let Some(a) = stop.filter(|&a| a <= now) {
                    running[proc] = None;
                    spans.push(span(
                        a.min(dead_at[proc]),
                        if a <= dead_at[proc] { Outcome::Aborted } else { Outcome::Lost },
                    ));
                } else if r.end <= now && r.end <= dead_at[proc] {
                    running[proc] = None;
                    spans.push(span(r.end, Outcome::Completed));
                    copies[r.item.task].push((proc, r.end));
                    for p in &mut processors {
                        p.copy_finished(r.item.task, proc, r.end, !r.item.duplicate);
                    }
                    if r.item.duplicate {
                        duplicates_completed += 1;
                    } else {
                        original_end[r.item.task] = Some(r.end);
                        events.push(At(r.end + delay));
                    }
                    for &(_, comm) in graph.succs(r.item.task) {
                        events.push(At(r.end + comm));
                    }
                }
            }
        }
        for proc in 0..procs {
            if now >= dead_at[proc] {
                if let Some(r) = running[proc].take() {
                    let (task, duplicate, start) = (r.item.task, r.item.duplicate, r.start);
                    spans.push(Span { task, proc, duplicate, start, end: dead_at[proc], outcome: Outcome::Lost });
                }
                continue;
            }
            while running[proc].is_none() {
                let Some(item) = processors[proc].next(graph, now) else { break };
                let end = now + graph.cost(item.task, proc);
                running[proc] = Some(Running { item, start: now, end });
                events.push(At(end));
                if item.duplicate {
                    if let Some(e) = original_end[item.task] {
                        events.push(At(e + delay));
                    }
                }
                if end <= now {
                    break;
                }
            }
        }
        // A zero-length item ended at `now`: look again at this instant.
        if running.iter().flatten().any(|r| r.end <= now) {
            events.push(At(now));
        }
    }
    let finished: Vec<f64> = copies.iter().map(|c| c.iter().map(|&(_, e)| e).fold(f64::INFINITY, f64::min)).collect();
    if let Some(task) = finished.iter().position(|f| f.is_infinite()) {
        return Err(Stalled { task });
    }
    spans.sort_by(|a, b| a.start.total_cmp(&b.start));
    Ok(Run { makespan: finished.iter().copied().fold(0.0, f64::max), finished, duplicates_completed, spans })
}
