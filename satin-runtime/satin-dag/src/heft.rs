//! HEFT (Topcuoglu, Hariri and Wu, 2002): list scheduling by upward rank,
//! each task on the processor where it finishes first, inserted into the
//! earliest idle gap long enough for it.

use super::graph::{TaskGraph, TaskId};
use super::schedule::{Placement, Schedule};

/// Upward ranks on `procs` processors: a task's mean run time plus the
/// longest path of mean run times and communication costs to an exit.
pub fn upward_ranks(graph: &TaskGraph, procs: usize) -> Vec<f64> {
    let mut rank = vec![0.0; graph.len()];
    for &t in graph.topological_order().iter().rev() {
        let below = graph.succs(t).iter().map(|&(s, comm)| comm + rank[s]).fold(0.0, f64::max);
        rank[t] = graph.mean_cost(t, procs) + below;
    }
    rank
}

/// The HEFT schedule of `graph` on `procs` processors (for a graph with a
/// run time per processor, `procs` is at most that many).
pub fn heft(graph: &TaskGraph, procs: usize) -> Schedule {
    let procs = procs.max(1);
    let procs = graph.fixed_procs().map_or(procs, |fixed| procs.min(fixed));
    let order = by_rank(graph, &upward_ranks(graph, procs), (0..graph.len()).collect());
    let mut busy: Vec<Vec<(f64, f64)>> = vec![Vec::new(); procs];
    let mut placed: Vec<Option<Placement>> = vec![None; graph.len()];
    let mut placements = Vec::with_capacity(graph.len());
    for t in order {
        let mut best: Option<Placement> = None;
        for (proc, slots) in busy.iter().enumerate() {
            let ready = graph
                .preds(t)
                .iter()
                .map(|&(p, comm)| {
                    let q = placed[p].expect("predecessors rank higher");
                    q.finish + if q.proc == proc { 0.0 } else { comm }
                })
                .fold(0.0, f64::max);
            let cost = graph.cost(t, proc);
            let start = earliest_gap(slots, ready, cost);
            let candidate = Placement { task: t, proc, start, finish: start + cost };
            if best.is_none_or(|b| candidate.finish < b.finish) {
                best = Some(candidate);
            }
        }
        let p = best.expect("at least one processor");
        insert_busy(&mut busy[p.proc], (p.start, p.finish));
        placed[t] = Some(p);
        placements.push(p);
    }
    Schedule::from_placements(procs, placements)
}

/// The earliest start at or after `ready` of an idle stretch of `len` on a
/// processor busy during `slots` (sorted by start).
pub(crate) fn earliest_gap(slots: &[(f64, f64)], ready: f64, len: f64) -> f64 {
    let mut start = ready;
    for &(s, f) in slots {
        if start + len <= s {
            return start;
        }
        start = start.max(f);
    }
    start
}

/// `tasks` in list-scheduling order: decreasing `rank`; among equals, the
/// topological order (a zero-cost task ranks with its successor and must
/// still come first).
pub(crate) fn by_rank(graph: &TaskGraph, rank: &[f64], mut tasks: Vec<TaskId>) -> Vec<TaskId> {
    let mut position = vec![0; graph.len()];
    for (k, &t) in graph.topological_order().iter().enumerate() {
        position[t] = k;
    }
    tasks.sort_by(|&a, &b| rank[b].total_cmp(&rank[a]).then(position[a].cmp(&position[b])));
    tasks
}

/// Adds a busy stretch to a processor's stretches, kept sorted by start.
pub(crate) fn insert_busy(slots: &mut Vec<(f64, f64)>, stretch: (f64, f64)) {
    let at = slots.partition_point(|&(s, _)| s <= stretch.0);
    slots.insert(at, stretch);
}
