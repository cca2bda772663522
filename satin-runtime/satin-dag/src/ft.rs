//! The fault-tolerant static scheduler (seed 001): the HEFT schedule, plus
//! for every task a duplicate on another processor that starts a little
//! after the original (the slack) and is aborted when the original's end
//! reaches it. Fault-free, a duplicate only ever runs inside an idle gap —
//! or not at all (a *dummy* duplicate, placed after the original's end) —
//! so the makespan is HEFT's. When a processor crashes, the duplicates of
//! its unfinished tasks are not aborted and run to their end, and every
//! task still completes.

use super::graph::{TaskGraph, TaskId};
use super::heft::{heft, insert_busy};
use super::schedule::{Placement, Schedule, Violation};

/// Tolerance of time comparisons.
const EPS: f64 = 1e-9;

/// Timing parameters of the fault-tolerant schedule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FtParams {
    /// A duplicate starts at least this long after its original starts
    /// (the paper's experiment: three time units).
    pub slack: f64,
    /// Time from an original's end until its duplicate is stopped (the
    /// abort message's travel); below the slack, so that a duplicate never
    /// finishes before the abort reaches it while the original is alive.
    pub abort_delay: f64,
}

impl Default for FtParams {
    fn default() -> FtParams {
        FtParams { slack: 3.0, abort_delay: 1.0 }
    }
}

/// How long a crash takes to be known elsewhere: the abort delay (a
/// message's time), or the default one when nothing is ever aborted
/// (active replication's infinite abort delay).
pub(crate) fn notice_delay(abort_delay: f64) -> f64 {
    if abort_delay.is_finite() {
        abort_delay
    } else {
        FtParams::default().abort_delay
    }
}

/// A duplicate of a task.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Duplicate {
    /// The task.
    pub task: TaskId,
    /// Its processor (never the original's).
    pub proc: usize,
    /// When it starts, if its inputs are there.
    pub start: f64,
    /// When it would end, run to completion.
    pub finish: f64,
    /// When the abort reaches it if the original ends as planned: it
    /// occupies its processor fault-free until `min(finish, abort_at)`.
    pub abort_at: f64,
}

impl Duplicate {
    /// Whether it never runs fault-free (placed after its original's end).
    pub fn is_dummy(&self) -> bool {
        self.start >= self.abort_at - EPS
    }

    /// The stretch it occupies its processor in a fault-free run.
    pub fn fault_free_busy(&self) -> (f64, f64) {
        (self.start, self.finish.min(self.abort_at).max(self.start))
    }
}

/// A schedule that survives the crash of any one processor: originals as
/// HEFT placed them, and one duplicate of every task.
#[derive(Debug, Clone)]
pub struct FtSchedule {
    /// The originals: a plain schedule.
    pub originals: Schedule,
    /// One duplicate per task, indexed by task.
    pub duplicates: Vec<Duplicate>,
    /// The timing it was made with.
    pub params: FtParams,
}

/// The fault-tolerant schedule of `graph` on `procs` processors (at least
/// two: a duplicate needs another processor).
pub fn ft_schedule(graph: &TaskGraph, procs: usize, params: FtParams) -> FtSchedule {
    let originals = heft(graph, procs.max(2));
    let procs = originals.procs();
    let mut at: Vec<Placement> = vec![originals.placements()[0]; graph.len()];
    for p in originals.placements() {
        at[p.task] = *p;
    }
    // Fault-free busy stretches of every processor, kept sorted.
    let mut busy: Vec<Vec<(f64, f64)>> = vec![Vec::new(); procs];
    for p in originals.placements() {
        insert_busy(&mut busy[p.proc], (p.start, p.finish));
    }
    let mut order: Vec<TaskId> = (0..graph.len()).collect();
    order.sort_by(|&a, &b| at[a].start.total_cmp(&at[b].start).then(a.cmp(&b)));
    let mut duplicates: Vec<Option<Duplicate>> = vec![None; graph.len()];
    // Work of processor p's tasks duplicated on processor q: after p's
    // crash, q runs it on top of its own.
    let mut load = vec![vec![0.0; procs]; procs];
    for t in order {
        let orig = at[t];
        let abort_at = orig.finish + params.abort_delay;
        let mut best: Option<Duplicate> = None;
        for (q, slots) in busy.iter().enumerate() {
            if q == orig.proc {
                continue;
            }
            // Inputs as the originals of the predecessors deliver them.
            let ready = graph
                .preds(t)
                .iter()
                .map(|&(u, comm)| at[u].finish + if at[u].proc == q { 0.0 } else { comm })
                .fold(orig.start + params.slack, f64::max);
            let cost = graph.cost(t, q);
            let start = earliest_fault_free_fit(slots, ready, cost, abort_at);
            let d = Duplicate { task: t, proc: q, start, finish: start + cost, abort_at };
            // Spread the duplicates of one processor's tasks evenly over the
            // others (one crash then adds 1/(p-1) of its work to each); among
            // equals, the duplicate that would end first.
            let key = |d: &Duplicate| (load[orig.proc][d.proc] + graph.cost(t, d.proc), d.finish);
            if best.is_none_or(|b| {
                let (kb, kd) = (key(&b), key(&d));
                kd.0 < kb.0 - EPS || (kd.0 <= kb.0 + EPS && kd.1 < kb.1 - EPS)
            }) {
                best = Some(d);
            }
        }
        let d = best.expect("two processors at least");
        load[orig.proc][d.proc] += graph.cost(t, d.proc);
        let (s, f) = d.fault_free_busy();
        if f > s {
            insert_busy(&mut busy[d.proc], (s, f));
        }
        duplicates[t] = Some(d);
    }
    FtSchedule { originals, duplicates: duplicates.into_iter().map(|d| d.expect("every task")).collect(), params }
}

/// The earliest start at or after `ready` of a duplicate of run time `len`
/// whose fault-free part ends at `abort_at`: that part must fit into an
/// idle stretch; a start at or after `abort_at` occupies nothing.
fn earliest_fault_free_fit(slots: &[(f64, f64)], ready: f64, len: f64, abort_at: f64) -> f64 {
    let mut start = ready;
    for &(s, f) in slots {
        if start >= abort_at - EPS {
            return start;
        }
        let end = (start + len).min(abort_at);
        if end <= s + EPS {
            return start;
        }
        start = start.max(f);
    }
    start
}

impl FtSchedule {
    /// The fault-free makespan: the originals' (duplicates end by then).
    pub fn makespan(&self) -> f64 {
        self.originals.makespan()
    }

    /// How many duplicates are dummies (never run fault-free).
    pub fn dummies(&self) -> usize {
        self.duplicates.iter().filter(|d| d.is_dummy()).count()
    }

    /// Checks the originals as a plain schedule, then every duplicate: on
    /// another processor than its original, its own run time, starting a
    /// slack after the original and after its inputs from the originals,
    /// and fault-free inside an idle stretch of its processor.
    pub fn check(&self, graph: &TaskGraph) -> Result<(), Violation> {
        self.originals.check(graph)?;
        let orig = |t: TaskId| self.originals.of(t).expect("checked above");
        if self.duplicates.len() != graph.len() {
            return Err(Violation(format!("{} duplicates for {} tasks", self.duplicates.len(), graph.len())));
        }
        let mut busy: Vec<Vec<(f64, f64, String)>> = vec![Vec::new(); self.originals.procs()];
        for p in self.originals.placements().iter().filter(|p| p.finish > p.start + EPS) {
            busy[p.proc].push((p.start, p.finish, format!("task {}", graph.name(p.task))));
        }
        for (t, d) in self.duplicates.iter().enumerate() {
            let o = orig(t);
            let name = graph.name(t);
            if d.task != t || d.proc == o.proc || d.proc >= self.originals.procs() {
                return Err(Violation(format!(
                    "the duplicate of task {name} is on processor {} (original on {})",
                    d.proc, o.proc
                )));
            }
            if (d.finish - d.start - graph.cost(t, d.proc)).abs() > EPS {
                return Err(Violation(format!("the duplicate of task {name} does not last its run time")));
            }
            if d.start < o.start + self.params.slack - EPS {
                return Err(Violation(format!("the duplicate of task {name} starts less than the slack after it")));
            }
            if (d.abort_at - o.finish - self.params.abort_delay).abs() > EPS {
                return Err(Violation(format!("the duplicate of task {name} is not aborted when its original ends")));
            }
            for &(u, comm) in graph.preds(t) {
                let p = orig(u);
                let ready = p.finish + if p.proc == d.proc { 0.0 } else { comm };
                if d.start < ready - EPS {
                    return Err(Violation(format!(
                        "the duplicate of task {name} starts before its input from task {}",
                        graph.name(u)
                    )));
                }
            }
            let (s, f) = d.fault_free_busy();
            if f > s + EPS {
                busy[d.proc].push((s, f, format!("the duplicate of task {name}")));
            }
        }
        for (proc, stretches) in busy.iter_mut().enumerate() {
            stretches.sort_by(|a, b| a.0.total_cmp(&b.0));
            for w in stretches.windows(2) {
                if w[1].0 < w[0].1 - EPS {
                    return Err(Violation(format!("{} and {} overlap fault-free on processor {proc}", w[0].2, w[1].2)));
                }
            }
        }
        Ok(())
    }
}
