//! Active replication, the alternative the fault-tolerant static scheduler
//! is measured against (FTSA-style): every task runs twice, on two
//! processors, and neither copy is ever aborted. A crash costs little, but
//! the second copies take processor time in every run.

use super::ft::{Duplicate, FtParams, FtSchedule};
use super::graph::TaskGraph;
use super::heft::{by_rank, earliest_gap, insert_busy, upward_ranks};
use super::schedule::{Placement, Schedule};

/// Both copies of every task, by upward rank, each on the processor where
/// it ends first (the second on another processor than the first); inputs
/// come from the predecessors' first copies. Expressed as an [`FtSchedule`]
/// whose duplicates are never aborted (an infinite abort delay).
pub fn replicate(graph: &TaskGraph, procs: usize) -> FtSchedule {
    let procs = procs.max(2);
    let procs = graph.fixed_procs().map_or(procs, |fixed| procs.min(fixed).max(2));
    let order = by_rank(graph, &upward_ranks(graph, procs), (0..graph.len()).collect());
    let mut busy: Vec<Vec<(f64, f64)>> = vec![Vec::new(); procs];
    let mut first: Vec<Option<Placement>> = vec![None; graph.len()];
    let mut second: Vec<Option<Duplicate>> = vec![None; graph.len()];
    for t in order {
        let place = |busy: &[Vec<(f64, f64)>], not: Option<usize>| -> Placement {
            let mut best: Option<Placement> = None;
            for (proc, slots) in busy.iter().enumerate() {
                if Some(proc) == not {
                    continue;
                }
                let ready = graph
                    .preds(t)
                    .iter()
                    .map(|&(u, comm)| {
                        let q = first[u].expect("predecessors rank higher");
                        q.finish + if q.proc == proc { 0.0 } else { comm }
                    })
                    .fold(0.0, f64::max);
                let cost = graph.cost(t, proc);
                let start = earliest_gap(slots, ready, cost);
                if best.is_none_or(|b| start + cost < b.finish) {
                    best = Some(Placement { task: t, proc, start, finish: start + cost });
                }
            }
            best.expect("two processors at least")
        };
        let a = place(&busy, None);
        insert_busy(&mut busy[a.proc], (a.start, a.finish));
        let b = place(&busy, Some(a.proc));
        insert_busy(&mut busy[b.proc], (b.start, b.finish));
        first[t] = Some(a);
        second[t] =
            Some(Duplicate { task: t, proc: b.proc, start: b.start, finish: b.finish, abort_at: f64::INFINITY });
    }
    let placements = graph.topological_order().iter().map(|&t| first[t].expect("every task")).collect();
    FtSchedule {
        originals: Schedule::from_placements(procs, placements),
        duplicates: second.into_iter().map(|d| d.expect("every task")).collect(),
        params: FtParams { slack: 0.0, abort_delay: f64::INFINITY },
    }
}
