//! Replanning a real run after a crash: the runtime's adaptive choice
//! ([`adaptive_after`](super::adaptive_after)) made from what a node knows
//! at the moment — which tasks finished where and when, which processors
//! are down — rather than from the plan alone. What a live processor should
//! have started by now stays with it; the rest is list-scheduled again onto
//! the live processors from now. Beside it, the makespan the duplicates
//! would give, so that the caller follows the shorter.

use super::exec::{simulate, Crash};
use super::ft::{notice_delay, FtSchedule};
use super::graph::TaskGraph;
use super::heft::insert_busy;
use super::reschedule::schedule_rest;
use super::schedule::Placement;

/// What a node knows when it replans, in units of planned cost since the
/// start.
#[derive(Debug, Clone, Copy)]
pub struct Known<'a> {
    /// For each finished task: the processor of its first copy, and when
    /// it ended.
    pub finished: &'a [Option<(usize, f64)>],
    /// For each crashed processor: when its crash became known.
    pub down: &'a [Option<f64>],
    /// Now.
    pub now: f64,
}

/// A new plan for the rest of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Replan {
    /// Every unfinished task, on a live processor.
    pub placements: Vec<Placement>,
    /// When the new plan ends.
    pub makespan: f64,
    /// When continuing with the duplicates would end (as the plan would
    /// have run with these crashes; infinite if it loses a task).
    pub with_duplicates: f64,
}

impl Replan {
    /// Is the new plan the shorter continuation?
    pub fn is_better(&self) -> bool {
        self.makespan < self.with_duplicates
    }
}

/// The rest of `schedule`'s run replanned from what is `known`.
pub fn replan(graph: &TaskGraph, schedule: &FtSchedule, known: Known) -> Replan {
    let procs = schedule.originals.procs();
    let alive: Vec<bool> = (0..procs).map(|p| known.down.get(p).is_none_or(Option::is_none)).collect();
    let mut finish: Vec<Option<(usize, f64)>> = known.finished.to_vec();
    finish.resize(graph.len(), None);
    let mut busy: Vec<Vec<(f64, f64)>> = vec![Vec::new(); procs];
    let mut placements = Vec::new();
    // On each live processor, the first unfinished task the plan started
    // by now, if its inputs are in, stays there (it may be running),
    // ending as planned or now at the earliest. A processor runs one task
    // at a time: the ones after it have not started.
    let mut by_start: Vec<Placement> = schedule.originals.placements().to_vec();
    by_start.sort_by(|a, b| a.start.total_cmp(&b.start).then(a.finish.total_cmp(&b.finish)));
    let mut looked = vec![false; procs];
    for p in by_start {
        if looked[p.proc] || !alive[p.proc] || finish[p.task].is_some() || p.start >= known.now {
            continue;
        }
        looked[p.proc] = true;
        if graph.preds(p.task).iter().all(|&(u, _)| finish[u].is_some()) {
            let end = p.finish.max(known.now);
            finish[p.task] = Some((p.proc, end));
            insert_busy(&mut busy[p.proc], (p.start, end));
            placements.push(Placement { finish: end, ..p });
        }
    }
    let rest = (0..graph.len()).filter(|&t| finish[t].is_none()).collect();
    placements.extend(schedule_rest(graph, rest, &alive, known.now, &mut finish, &mut busy));
    let makespan = finish.iter().flatten().map(|&(_, end)| end).fold(known.now, f64::max);
    let notice = notice_delay(schedule.params.abort_delay);
    let crashes: Vec<Crash> = (0..procs)
        .filter_map(|proc| known.down.get(proc).copied().flatten().map(|at| Crash { proc, at: (at - notice).max(0.0) }))
        .collect();
    let with_duplicates = simulate(graph, schedule, &crashes).map_or(f64::INFINITY, |r| r.makespan);
    Replan { placements, makespan, with_duplicates }
}
