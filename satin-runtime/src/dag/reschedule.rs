//! Rescheduling after a crash, the dynamic alternative: no duplicates;
//! when a processor's crash is known, every task not started yet and every
//! task the crashed processor had not finished are scheduled again, by
//! HEFT's rule, onto the processors left.

use super::exec::Crash;
use super::graph::TaskGraph;
use super::heft::{by_rank, earliest_gap, insert_busy, upward_ranks};
use super::schedule::Schedule;

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
    let rest = by_rank(graph, &upward_ranks(graph, procs - 1), rest);
    for t in rest {
        let mut best: Option<(usize, f64, f64)> = None;
        for proc in (0..procs).filter(|&p| p != crash.proc) {
            let ready = graph
                .preds(t)
                .iter()
                .map(|&(u, comm)| {
                    let (q, end) = finish[u].expect("predecessors come first");
                    end + if q == proc { 0.0 } else { comm }
                })
                .fold(known, f64::max);
            let cost = graph.cost(t, proc);
            let start = earliest_gap(&busy[proc], ready, cost);
            if best.is_none_or(|b| start + cost < b.2) {
                best = Some((proc, start, start + cost));
            }
        }
        let (proc, start, end) = best.expect("a processor survives");
        insert_busy(&mut busy[proc], (start, end));
        finish[t] = Some((proc, end));
    }
    finish.iter().map(|f| f.expect("every task").1).fold(0.0, f64::max)
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
