//! `dag schedule FILE --procs P [--ft] [--json]`: schedules a task graph
//! (an STG file, or a folder with run-time and connectivity matrices) with
//! HEFT, or with the fault-tolerant scheduler (a duplicate of every task in
//! an idle gap, aborted when the original ends), checks the schedule and
//! runs it in virtual time with every single-processor crash.
//!
//! `--trace FILE [--crash P@T]` writes a Perfetto trace of the plan and of
//! a simulated run.
//!
//! `dag table FILE... --procs 4,8,16,32`: the crash experiment as a table.
//!
//! `dag run FILE [--local-nodes N [--chaos 'kill:node=2,at=30%']] [--json]`:
//! runs the graph for real, each task a synthetic one that takes its cost
//! in milliseconds (`--unit-ms`), on threads of this process or on node
//! processes (`--listen ADDR --nodes N` on the master, `--join ADDR` on the
//! others; `--local-nodes N` starts them on this machine).
//!
//! `dag generate --tasks N --seed S`: a random task graph in STG format.

use std::path::PathBuf;

use clap::{Parser, Subcommand};
use satin::dag::{ft_schedule, heft, simulate, Crash, FtParams};
use satin_examples::{cli, dag};

#[derive(Parser)]
#[command(about = "Schedules task graphs, with duplicates that survive a processor crash")]
struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Schedule one graph and report its makespan (and, with --ft, what a
    /// crash costs).
    Schedule {
        /// STG file, or a folder with `*exe_time*.csv` and `*connectivity*.csv`.
        file: PathBuf,
        /// Number of processors.
        #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=4096))]
        procs: u32,
        /// Fault-tolerant: a duplicate of every task on another processor.
        #[arg(long)]
        ft: bool,
        /// A duplicate starts this long after its original.
        #[arg(long, default_value_t = 3.0)]
        slack: f64,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
        /// Print every placement.
        #[arg(long)]
        verbose: bool,
        /// With --ft: write a Chrome trace (Perfetto) of the planned
        /// schedule and of a simulated run to FILE.
        #[arg(long, value_name = "FILE")]
        trace: Option<PathBuf>,
        /// With --trace: the run crashes processor P at time T (`P@T`).
        #[arg(long, value_name = "P@T")]
        crash: Option<String>,
    },
    /// Run the graph for real: synthetic tasks that take their cost in
    /// milliseconds, on the nodes the flags say (see --satin-help … or the
    /// guide), surviving the crash of any one node.
    Run {
        /// STG file, or a folder with `*exe_time*.csv` and `*connectivity*.csv`.
        file: PathBuf,
        /// How long one unit of cost takes, in milliseconds.
        #[arg(long, default_value_t = 1.0)]
        unit_ms: f64,
        /// A duplicate starts this long after its original (units).
        #[arg(long, default_value_t = 3.0)]
        slack: f64,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
        /// After a crash, continue with the duplicates even when
        /// rescheduling the rest would end sooner.
        #[arg(long)]
        no_replan: bool,
        #[command(flatten)]
        launch: Box<satin::net::Launch>,
    },
    /// A random task graph in STG format on standard output: each task
    /// takes input from one to three earlier ones.
    Generate {
        /// Number of tasks (without the dummy entry and exit).
        #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=100_000))]
        tasks: u32,
        /// Smallest cost.
        #[arg(long, default_value_t = 10)]
        min: u32,
        /// Largest cost.
        #[arg(long, default_value_t = 100)]
        max: u32,
        /// Smallest communication cost of an edge.
        #[arg(long, default_value_t = 0)]
        comm_min: u32,
        /// Largest communication cost of an edge (0: none, plain STG).
        #[arg(long, default_value_t = 0)]
        comm_max: u32,
        /// Each task takes input from one to this many earlier tasks.
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=64))]
        preds: u32,
        /// ... among the this many tasks just before it (0: among all
        /// earlier tasks); small windows make narrow graphs.
        #[arg(long, default_value_t = 0)]
        window: u32,
        /// Seed of the random choices.
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// The crash experiment over several graphs and processor counts, as a
    /// Markdown table.
    Table {
        /// STG files (or matrix folders).
        files: Vec<PathBuf>,
        /// Processor counts, comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "4,8,16,32")]
        procs: Vec<usize>,
    },
}

fn main() {
    match cli::parse::<Args>("dag").command {
        Command::Schedule { file, procs, ft, slack, json, verbose, trace, crash } => {
            schedule(file, procs as usize, ft, slack, json, verbose, trace, crash)
        }
        Command::Table { files, procs } => table(&files, &procs),
        Command::Run { file, unit_ms, slack, json, no_replan, launch } => {
            run(&file, unit_ms, slack, json, !no_replan, &launch)
        }
        Command::Generate { tasks, min, max, comm_min, comm_max, preds, window, seed } => {
            if min > max || comm_min > comm_max {
                cli::bad_input("dag", "a smallest value (--min, --comm-min) is above its largest (--max, --comm-max)");
            }
            let g = dag::RandomGraph {
                tasks: tasks as usize,
                cost: (min, max),
                comm: (comm_min, comm_max),
                preds: preds as usize,
                window: window as usize,
                seed,
            };
            print!("{}", dag::random_stg(g));
        }
    }
}

fn run(file: &std::path::Path, unit_ms: f64, slack: f64, json: bool, replan: bool, launch: &satin::net::Launch) {
    if !(unit_ms.is_finite() && unit_ms > 0.0 && unit_ms <= 3_600_000.0) {
        cli::bad_input("dag", format_args!("--unit-ms {unit_ms}: must be a positive number of milliseconds"));
    }
    if !(slack.is_finite() && slack >= 0.0) {
        cli::bad_input("dag", format_args!("--slack {slack}: must be a time, not negative"));
    }
    let graph = dag::read(file).unwrap_or_else(|e| cli::bad_input("dag", e));
    let workflow = satin::dag::Workflow::synthetic(graph);
    let expected = workflow.run_sequential();
    let params = FtParams { slack, abort_delay: (slack / 3.0).min(1.0) };
    let unit = std::time::Duration::from_secs_f64(unit_ms / 1000.0);
    // Synthetic tasks: their data is tiny, so an edge's planned cost is
    // waited out after the data arrived, as the plan has it.
    let options = satin::net::WorkflowOptions { params, unit, replan, emulate_comm: true };
    let r = satin::net::run_workflow_with("dag", launch, &workflow, &options);
    let result_ok = workflow.exits().iter().all(|&t| r.outputs[t].as_ref() == Some(&expected[t]));
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1000.0;
    if json {
        println!(
            "{{\"tasks_completed\":{},\"tasks_total\":{},\"makespan_ms\":{:.1},\"planned_ms\":{:.1},\"result_ok\":{},\"procs\":{},\"duplicates_completed\":{},\"crashed\":{:?},\"replanned\":{}}}",
            r.tasks_completed,
            r.tasks_total,
            ms(r.makespan),
            ms(r.planned),
            result_ok,
            r.procs,
            r.duplicates_completed,
            r.crashed,
            r.replanned
        );
    } else {
        println!(
            "{} of {} tasks completed on {} processors in {:.1} ms (planned {:.1} ms); results {}",
            r.tasks_completed,
            r.tasks_total,
            r.procs,
            ms(r.makespan),
            ms(r.planned),
            if result_ok { "right" } else { "WRONG" }
        );
        println!(
            "duplicates run to their end: {}; processors crashed: {:?}; {}",
            r.duplicates_completed,
            r.crashed,
            if r.replanned { "the rest was replanned after the crash" } else { "no replan" }
        );
    }
    let all = r.tasks_completed == r.tasks_total;
    std::process::exit(if all && result_ok { 0 } else { 1 });
}

#[allow(clippy::too_many_arguments)]
fn schedule(
    file: PathBuf,
    procs: usize,
    ft: bool,
    slack: f64,
    json: bool,
    verbose: bool,
    trace: Option<PathBuf>,
    crash: Option<String>,
) {
    let graph = dag::read(&file).unwrap_or_else(|e| cli::bad_input("dag", e));
    if !(slack.is_finite() && slack >= 0.0) {
        cli::bad_input("dag", format_args!("--slack {slack}: must be a time, not negative"));
    }
    if ft && procs < 2 {
        cli::bad_input("dag", "--ft needs two processors at least: a duplicate runs on another processor");
    }
    if trace.is_some() && !ft {
        cli::bad_input("dag", "--trace draws a fault-tolerant schedule: add --ft");
    }
    let crash = crash.map(|c| {
        let parsed = c.split_once('@').and_then(|(p, t)| Some((p.parse::<usize>().ok()?, t.parse::<f64>().ok()?)));
        match parsed {
            Some((proc, at)) if proc < procs && at.is_finite() && at >= 0.0 => Crash { proc, at },
            _ => cli::bad_input("dag", format_args!("--crash {c}: expected P@T, a processor below {procs} and a time")),
        }
    });
    let plain = heft(&graph, procs);
    if !ft {
        let valid = plain.check(&graph);
        if json {
            println!(
                "{{\"tasks\":{},\"procs\":{},\"makespan\":{},\"valid\":{}}}",
                graph.len(),
                plain.procs(),
                plain.makespan(),
                valid.is_ok()
            );
        } else {
            println!("HEFT on {} processors: makespan {}", plain.procs(), plain.makespan());
            if let Err(v) = &valid {
                println!("INVALID: {v}");
            }
        }
        if verbose {
            for p in plain.placements() {
                println!("  task {} on {}: {}..{}", graph.name(p.task), p.proc, p.start, p.finish);
            }
        }
        std::process::exit(if valid.is_ok() { 0 } else { 1 });
    }
    let params = FtParams { slack, abort_delay: (slack / 3.0).min(1.0) };
    let s = ft_schedule(&graph, procs, params);
    let valid = s.check(&graph);
    let cost = dag::crash_cost(&graph, &s);
    let (at_start, worst) = cost.map_or((f64::NAN, f64::NAN), |c| (c.at_start, c.worst));
    // What a run does: after a crash it follows the shorter of the
    // duplicates and a new plan for the rest (`--no-replan`: duplicates).
    let (adaptive_at_start, adaptive) =
        dag::adaptive_cost(&graph, &s).map_or((f64::NAN, f64::NAN), |c| (c.at_start, c.worst));
    if let Some(path) = &trace {
        let run = simulate(&graph, &s, &crash.into_iter().collect::<Vec<_>>())
            .unwrap_or_else(|st| cli::bad_input("dag", format_args!("the run lost task {}", graph.name(st.task))));
        std::fs::write(path, dag::trace(&graph, &s, &run))
            .unwrap_or_else(|e| cli::bad_input("dag", format_args!("cannot write {}: {e}", path.display())));
        eprintln!("dag: trace of the plan and of a run (makespan {}) in {}", run.makespan, path.display());
    }
    if json {
        println!(
            "{{\"tasks\":{},\"procs\":{},\"makespan\":{},\"heft_makespan\":{},\"valid\":{},\"dummies\":{},\"crash_at_start\":{},\"crash_worst\":{},\"crash_worst_adaptive\":{},\"crash_at_start_duplicates\":{},\"crash_worst_duplicates\":{}}}",
            graph.len(),
            s.originals.procs(),
            s.makespan(),
            plain.makespan(),
            valid.is_ok() && cost.is_some(),
            s.dummies(),
            adaptive_at_start,
            adaptive,
            adaptive,
            at_start,
            worst
        );
    } else {
        println!(
            "fault-tolerant schedule on {} processors: makespan {} (HEFT {})",
            s.originals.procs(),
            s.makespan(),
            plain.makespan()
        );
        println!("{} duplicates, {} of them dummies (never run fault-free)", s.duplicates.len(), s.dummies());
        println!(
            "one processor crashing: at the start {adaptive_at_start} ({:.4} x), worst over 11 times {adaptive} ({:.4} x)",
            adaptive_at_start / s.makespan(),
            adaptive / s.makespan()
        );
        println!(
            "  continuing with the duplicates only: at the start {at_start} ({:.4} x), worst {worst} ({:.4} x)",
            at_start / s.makespan(),
            worst / s.makespan()
        );
        if let Err(v) = &valid {
            println!("INVALID: {v}");
        }
        if verbose {
            for p in s.originals.placements() {
                let d = s.duplicates[p.task];
                println!(
                    "  task {} on {}: {}..{}; duplicate on {}: {}..{} (aborted at {})",
                    graph.name(p.task),
                    p.proc,
                    p.start,
                    p.finish,
                    d.proc,
                    d.start,
                    d.finish,
                    d.abort_at
                );
            }
        }
    }
    std::process::exit(if valid.is_ok() && cost.is_some() { 0 } else { 1 });
}

fn table(files: &[PathBuf], procs: &[usize]) {
    println!("| graph | tasks | processors | HEFT = fault-tolerant, fault-free | crash at the start | × | worst crash | × | dummy duplicates | replication: fault-free (×) | worst crash (× HEFT) | rescheduling: crash at start (×) | worst (×) | adaptive: crash at start (×) | worst (×) |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for file in files {
        let graph = dag::read(file).unwrap_or_else(|e| cli::bad_input("dag", e));
        let name = file.file_name().map_or_else(|| file.display().to_string(), |n| n.to_string_lossy().into_owned());
        for &p in procs {
            let r = dag::row(&graph, p).unwrap_or_else(|e| cli::bad_input("dag", format_args!("{name} on {p}: {e}")));
            let (c, rep, res, ada) = (r.cost, r.replication, r.rescheduling, r.adaptive);
            assert_eq!(c.fault_free, r.heft, "duplicates cost nothing fault-free");
            println!(
                "| {name} | {} | {p} | {} | {} | {:.4} | {} | {:.4} | {} | {} ({:.4}) | {} ({:.4}) | {} ({:.4}) | {} ({:.4}) | {} ({:.4}) | {} ({:.4}) |",
                graph.len(),
                r.heft,
                c.at_start,
                c.at_start / c.fault_free,
                c.worst,
                c.worst / c.fault_free,
                r.dummies,
                rep.fault_free,
                rep.fault_free / r.heft,
                rep.worst,
                rep.worst / r.heft,
                res.at_start,
                res.at_start / r.heft,
                res.worst,
                res.worst / r.heft,
                ada.at_start,
                ada.at_start / r.heft,
                ada.worst,
                ada.worst / r.heft
            );
        }
    }
}
