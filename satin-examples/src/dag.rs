//! Task graphs from files, and the crash experiment of the fault-tolerant
//! static scheduler (seed 001), for the `dag` binary.

use std::path::Path;

use satin::dag::{
    adaptive_after, ft_schedule, heft, matrix, replicate, reschedule_after, simulate, stg, Crash, FtParams, FtSchedule,
    Schedule, TaskGraph,
};

/// Reads a task graph: an STG file, or a folder holding a run-time matrix
/// (`*exe_time*.csv`) and a connectivity matrix (`*connectivity*.csv`).
pub fn read(path: &Path) -> Result<TaskGraph, String> {
    let text = |p: &Path| std::fs::read_to_string(p).map_err(|e| format!("cannot read {}: {e}", p.display()));
    if path.is_dir() {
        let find = |part: &str| -> Result<std::path::PathBuf, String> {
            std::fs::read_dir(path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?
                .filter_map(Result::ok)
                .map(|e| e.path())
                .find(|p| p.file_name().is_some_and(|n| n.to_string_lossy().contains(part)))
                .ok_or_else(|| format!("{} holds no `*{part}*.csv`", path.display()))
        };
        let (times, links) = (find("exe_time")?, find("connectivity")?);
        return matrix::parse(&text(&times)?, &text(&links)?).map_err(|e| format!("{}: {e}", path.display()));
    }
    stg::parse(&text(path)?).map_err(|e| format!("{}: {e}", path.display()))
}

/// What a crash costs a fault-tolerant schedule.
#[derive(Debug, Clone, Copy)]
pub struct CrashCost {
    /// The fault-free makespan.
    pub fault_free: f64,
    /// The worst makespan over every processor crashing at the start.
    pub at_start: f64,
    /// The worst makespan over every processor crashing at any of 11
    /// times spread over the fault-free run (its start and end included).
    pub worst: f64,
}

/// Runs `schedule` with every single crash; `None` if a run lost a task
/// (never, for a schedule `FtSchedule::check` accepts).
pub fn crash_cost(graph: &TaskGraph, schedule: &FtSchedule) -> Option<CrashCost> {
    let fault_free = simulate(graph, schedule, &[]).ok()?.makespan;
    sweep(fault_free, schedule.originals.procs(), |crash| simulate(graph, schedule, &[crash]).ok().map(|r| r.makespan))
}

/// What a crash costs when the rest is rescheduled (no duplicates), with
/// the crash known `detection` after it: at the start, and the worst over
/// the 11 crash times of [`crash_cost`].
pub fn reschedule_cost(graph: &TaskGraph, plan: &Schedule, detection: f64) -> CrashCost {
    sweep(plan.makespan(), plan.procs(), |crash| Some(reschedule_after(graph, plan, crash, detection)))
        .expect("rescheduling always finishes")
}

/// One row of the crash table: the graph on `procs` processors.
pub struct Row {
    /// HEFT's makespan.
    pub heft: f64,
    /// The fault-tolerant schedule's crash costs.
    pub cost: CrashCost,
    /// Duplicates that never run fault-free.
    pub dummies: usize,
    /// Active replication's crash costs (its fault-free makespan included).
    pub replication: CrashCost,
    /// Rescheduling's crash costs.
    pub rescheduling: CrashCost,
    /// The shorter of the two continuations, chosen when the crash is known.
    pub adaptive: CrashCost,
}

/// HEFT, the fault-tolerant schedule and the two alternatives of `graph` on
/// `procs` processors.
pub fn row(graph: &TaskGraph, procs: usize) -> Result<Row, String> {
    let params = FtParams::default();
    let ft = ft_schedule(graph, procs, params);
    ft.check(graph).map_err(|v| format!("invalid schedule: {v}"))?;
    let cost = crash_cost(graph, &ft).ok_or("a crash lost a task")?;
    let rep = replicate(graph, procs);
    rep.check(graph).map_err(|v| format!("invalid replication: {v}"))?;
    let replication = crash_cost(graph, &rep).ok_or("a crash lost a task under replication")?;
    let plan = heft(graph, procs);
    let rescheduling = reschedule_cost(graph, &plan, params.abort_delay);
    let adaptive =
        sweep(plan.makespan(), plan.procs(), |crash| adaptive_after(graph, &ft, crash)).ok_or("a crash lost a task")?;
    Ok(Row { heft: plan.makespan(), cost, dummies: ft.dummies(), replication, rescheduling, adaptive })
}

/// What a crash costs when the runtime picks, once it knows of the crash,
/// the shorter of continuing with the duplicates and rescheduling.
pub fn adaptive_cost(graph: &TaskGraph, schedule: &FtSchedule) -> Option<CrashCost> {
    sweep(schedule.makespan(), schedule.originals.procs(), |crash| adaptive_after(graph, schedule, crash))
}

/// Crash costs of `makespan_after` over every processor crashing at the
/// start and at 11 times spread over a fault-free run of `fault_free`.
fn sweep(fault_free: f64, procs: usize, makespan_after: impl Fn(Crash) -> Option<f64>) -> Option<CrashCost> {
    let (mut at_start, mut worst) = (fault_free, fault_free);
    for proc in 0..procs {
        for k in 0..=10 {
            let m = makespan_after(Crash { proc, at: fault_free * k as f64 / 10.0 })?;
            worst = worst.max(m);
            if k == 0 {
                at_start = at_start.max(m);
            }
        }
    }
    Some(CrashCost { fault_free, at_start, worst })
}

/// A Chrome trace (JSON array; opens in Perfetto and chrome://tracing) of
/// `schedule` as planned (process 1: originals, and each duplicate's
/// fault-free stretch) and of `run` as it went (process 2), one thread per
/// processor; one time unit of the graph is drawn as a millisecond.
pub fn trace(graph: &TaskGraph, schedule: &FtSchedule, run: &satin::dag::Run) -> String {
    use serde_json::json;
    let us = |t: f64| (t * 1000.0).round() as i64;
    let mut events = vec![
        json!({"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "planned"}}),
        json!({"name": "process_name", "ph": "M", "pid": 2, "args": {"name": "actual"}}),
    ];
    let mut span = |pid: u32, name: String, proc: usize, start: f64, end: f64, what: &str| {
        let (ts, dur) = (us(start), us(end) - us(start));
        events.push(
            json!({"name": name, "ph": "X", "pid": pid, "tid": proc, "ts": ts, "dur": dur, "args": {"kind": what}}),
        );
    };
    for p in schedule.originals.placements() {
        span(1, graph.name(p.task).to_string(), p.proc, p.start, p.finish, "original");
    }
    for d in &schedule.duplicates {
        let (s, f) = d.fault_free_busy();
        let kind = if d.is_dummy() { "dummy duplicate" } else { "duplicate" };
        span(1, format!("dup {}", graph.name(d.task)), d.proc, s, f, kind);
    }
    for s in &run.spans {
        let name = if s.duplicate { format!("dup {}", graph.name(s.task)) } else { graph.name(s.task).to_string() };
        let kind = match s.outcome {
            satin::dag::Outcome::Completed => "completed",
            satin::dag::Outcome::Aborted => "aborted",
            satin::dag::Outcome::Lost => "lost in the crash",
        };
        span(2, name, s.proc, s.start, s.end, kind);
    }
    let lines: Vec<String> = events.iter().map(|e| e.to_string()).collect();
    format!("[\n{}\n]\n", lines.join(",\n"))
}

/// What [`random_stg`] makes.
#[derive(Debug, Clone, Copy)]
pub struct RandomGraph {
    /// Tasks, without the dummy entry and exit.
    pub tasks: usize,
    /// Run times are drawn from `cost.0..=cost.1`.
    pub cost: (u32, u32),
    /// Communication costs of the edges between real tasks are drawn from
    /// `comm.0..=comm.1` (`(0, 0)`: none, plain STG).
    pub comm: (u32, u32),
    /// Each task takes input from one to this many earlier tasks.
    pub preds: usize,
    /// ... among the this many tasks just before it (0: among all): a
    /// small window makes a narrow graph, with a long critical path and
    /// little parallelism.
    pub window: usize,
    pub seed: u64,
}

/// A random task graph in STG format (with the `ID:COST` extension for
/// communication costs when there are any): each task takes input from
/// one to `preds` earlier tasks (or from the dummy entry, for about one
/// task in eight); the dummy exit takes every task nothing else takes
/// input from.
pub fn random_stg(g: RandomGraph) -> String {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(g.seed);
    let tasks = g.tasks;
    let mut out = format!("{tasks}\n");
    out.push_str(&format!("{:>6} {:>6} {:>6}\n", 0, 0, 0));
    let mut feeds = vec![false; tasks + 1];
    for t in 1..=tasks {
        let mut preds: Vec<usize> = if t == 1 || rng.gen_ratio(1, 8) {
            vec![0]
        } else {
            let span = if g.window == 0 { t - 1 } else { g.window.min(t - 1) };
            let k = rng.gen_range(1..=g.preds.max(1).min(span));
            rand::seq::index::sample(&mut rng, span, k).into_iter().map(|i| t - span + i).collect()
        };
        preds.sort_unstable();
        for &p in &preds {
            feeds[p] = true;
        }
        let cost = rng.gen_range(g.cost.0..=g.cost.1);
        out.push_str(&format!("{t:>6} {cost:>6} {:>6}", preds.len()));
        for p in preds {
            if g.comm.1 > 0 && p > 0 {
                out.push_str(&format!(" {:>6}", format!("{p}:{}", rng.gen_range(g.comm.0..=g.comm.1))));
            } else {
                out.push_str(&format!(" {p:>6}"));
            }
        }
        out.push('\n');
    }
    let last: Vec<usize> = (1..=tasks).filter(|&t| !feeds[t]).collect();
    out.push_str(&format!("{:>6} {:>6} {:>6}", tasks + 1, 0, last.len()));
    for p in last {
        out.push_str(&format!(" {p:>6}"));
    }
    out.push_str(&format!(
        "\n# random graph: dag generate --tasks {tasks} --min {} --max {} --comm-min {} --comm-max {} --preds {} --window {} --seed {}\n",
        g.cost.0, g.cost.1, g.comm.0, g.comm.1, g.preds, g.window, g.seed
    ));
    out
}
