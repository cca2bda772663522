//! The plan drawn in the trace beside the run: one thread per processor.

use std::time::{Duration, Instant};

use crate::trace::Trace;
use satin_dag::{FtSchedule, TaskGraph};

/// The trace's process that shows the plan.
const PLAN_PID: u64 = 1 << 40;

/// Draws processor `me`'s part of the plan beside the run: its originals,
/// and the stretch each of its duplicates is planned to occupy fault-free
/// (until its abort).
pub(super) fn draw_plan(
    trace: &mut Trace,
    graph: &TaskGraph,
    schedule: &FtSchedule,
    me: usize,
    start: Instant,
    unit: Duration,
) {
    trace.process_name(PLAN_PID, "plan (a thread per processor)");
    let at = |t: f64| start + unit.mul_f64(t);
    for p in schedule.originals.placements().iter().filter(|p| p.proc == me) {
        let took = unit.mul_f64(p.finish - p.start);
        trace.span_in(PLAN_PID, p.proc, "planned", graph.name(p.task), at(p.start), took);
    }
    for d in schedule.duplicates.iter().filter(|d| d.proc == me && !d.is_dummy()) {
        let (from, to) = d.fault_free_busy();
        let name = format!("duplicate of {}", graph.name(d.task));
        trace.span_in(PLAN_PID, d.proc, "planned duplicate", &name, at(from), unit.mul_f64(to - from));
    }
}
