//! Rescheduling after a crash, the dynamic alternative: no duplicates;
//! when a processor's crash is known, every task not started yet and every
//! task the crashed processor had not finished are scheduled again, by
//! HEFT's rule, onto the processors left.

use super::exec::Crash;
use super::graph::{TaskGraph, TaskId};
use super::heft::{by_rank, earliest_gap, insert_busy, upward_ranks};
use super::schedule::{Placement, Schedule};

/// The makespan of `plan` when `crash` happens and is known `detection`
/// later: what started on a surviving processor by then runs as planned;
/// what the crashed processor finished by its crash is done; the rest is
/// list-scheduled again from the moment the crash is known.
pub fn reschedule_after(graph: &TaskGraph, plan: &Schedule, crash: Crash, detection: f64) -> f64 {
    let known = crash.at + detection;
    let procs = plan.procs();
    let mut finish: Vec<Option<(usize, f64)>> = vec![None; graph.len()];
    let mut busy: Vec<Vec<(f64, f64)>> = vec![Vec::new(); procs];
    let mut at = vec![None; graph.len()];
    for p in plan.placements() {
        at[p.task] = Some(*p);
    }
    // In topological order: a task stands only if its inputs do.
    for &t in graph.topological_order() {
        let p = at[t].expect("a plan places every task");
        let inputs = graph.preds(t).iter().all(|&(u, _)| finish[u].is_some());
        let kept = inputs && if p.proc == crash.proc { p.finish <= crash.at } else { p.start < known };
        if kept {
            finish[p.task] = Some((p.proc, p.finish));
            if p.proc != crash.proc {
                busy[p.proc].push((p.start, p.finish));
            }
        }
    }
    for slots in &mut busy {
        slots.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    let rest = (0..graph.len()).filter(|&t| finish[t].is_none()).collect();
    let alive: Vec<bool> = (0..procs).map(|p| p != crash.proc).collect();
    schedule_rest(graph, rest, &alive, known, &mut finish, &mut busy);
    finish.iter().map(|f| f.expect("every task").1).fold(0.0, f64::max)
}

/// List-schedules `rest` by HEFT's rule (upward rank; each task where it
/// ends first, in the earliest idle gap) onto the processors `alive`, none
/// starting before `from`. `finish` says where and when every task not in
/// `rest` ends (each task's predecessors must be there or earlier in the
/// order); `busy` holds each processor's busy stretches, sorted. Both are
/// updated; returns the placements.
pub fn schedule_rest(
    graph: &TaskGraph,
    rest: Vec<TaskId>,
    alive: &[bool],
    from: f64,
    finish: &mut [Option<(usize, f64)>],
    busy: &mut [Vec<(f64, f64)>],
) -> Vec<Placement> {
    let live = alive.iter().filter(|&&a| a).count().max(1);
    let rest = by_rank(graph, &upward_ranks(graph, live), rest);
    let mut placements = Vec::with_capacity(rest.len());
    for t in rest {
        let mut best: Option<Placement> = None;
        for proc in (0..alive.len()).filter(|&p| alive[p]) {
            let ready = graph
                .preds(t)
                .iter()
                .map(|&(u, comm)| {
                    let (q, end) = finish[u].expect("predecessors come first");
                    end + if q == proc { 0.0 } else { comm }
                })
                .fold(from, f64::max);
            let cost = graph.cost(t, proc);
            let start = earliest_gap(&busy[proc], ready, cost);
            if best.is_none_or(|b| start + cost < b.finish) {
                best = Some(Placement { task: t, proc, start, finish: start + cost });
            }
        }
        let p = best.expect("a processor survives");
        insert_busy(&mut busy[p.proc], (p.start, p.finish));
        finish[t] = Some((p.proc, p.finish));
        placements.push(p);
    }
    placements
}

/// The makespan when the runtime, once it knows of the crash, follows the
/// shorter of two continuations, both known at that moment from the plan:
/// the fault-tolerant schedule's duplicates ([`simulate`]) or rescheduling
/// the rest ([`reschedule_after`]; the run up to the crash is the plan in
/// both). `None` if the duplicates lose a task.
///
/// [`simulate`]: super::exec::simulate
pub fn adaptive_after(graph: &TaskGraph, schedule: &super::ft::FtSchedule, crash: Crash) -> Option<f64> {
    let with_duplicates = super::exec::simulate(graph, schedule, &[crash]).ok()?.makespan;
    let rescheduled = reschedule_after(graph, &schedule.originals, crash, schedule.params.abort_delay);
    Some(with_duplicates.min(rescheduled))
}
