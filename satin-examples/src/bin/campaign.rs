//! `campaign [--runs N] [--seed S] [--replay SEED] [--failures FILE]`:
//! random faults on real processes. Each run is drawn from its seed
//! (`seed`, `seed + 1`, …): a workload (`nqueens`, `mergesort`,
//! `barnes_hut`, `raytracer`), 3 to 5 nodes, and either one to three
//! faults of the `--chaos` language or a run by hand (`--expect-nodes`) with a node killed
//! from outside. Prints one line per run and a table of outcomes; the
//! seeds of runs that did not print the right answer exactly once go to
//! `--failures` (default `campaign-failures.txt`), one per line, each
//! replayed with `--replay SEED`. Exits 1 if any run failed.
//! `--parallel N` runs N at a time (each run has its own ports and files;
//! a run's fault-free reference time is measured alone, before any run).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use clap::Parser;
use satin_examples::campaign::{draw, Bench, Outcome};

#[derive(Parser)]
#[command(about = "Random faults on real processes: each run classified, the failing seeds written out")]
struct Args {
    /// How many runs.
    #[arg(long, default_value_t = 40)]
    runs: u64,
    /// The first run's seed (the others follow it).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Runs the one run of this seed (and prints its log).
    #[arg(long)]
    replay: Option<u64>,
    /// Where the failing seeds go.
    #[arg(long, default_value = "campaign-failures.txt")]
    failures: std::path::PathBuf,
    /// A run still going after this many times its fault-free time, plus
    /// 30 s, is a hang.
    #[arg(long, default_value_t = 20)]
    limit_factor: u32,
    /// How many runs at a time.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=64))]
    parallel: u64,
}

fn main() {
    let args = Args::parse();
    let scratch = std::env::temp_dir().join(format!("satin-campaign-{}", std::process::id()));
    let bench = Bench::new(&scratch).unwrap_or_else(|e| {
        eprintln!("campaign: {e}");
        std::process::exit(2);
    });
    let seeds: Vec<u64> = match args.replay {
        Some(s) => vec![s],
        None => (args.seed..args.seed + args.runs).collect(),
    };
    // Each workload's answer and fault-free time, measured alone.
    let mut references = BTreeMap::new();
    for &seed in &seeds {
        let run = draw(seed);
        let key = (run.workload.bin, run.workload.args.clone());
        if let std::collections::btree_map::Entry::Vacant(slot) = references.entry(key) {
            match bench.reference(&run.workload) {
                Ok(r) => drop(slot.insert(r)),
                Err(e) => {
                    eprintln!("campaign: {e}");
                    std::process::exit(2);
                }
            }
        }
    }
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<(u64, Outcome, String)>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..args.parallel.min(seeds.len() as u64) {
            s.spawn(|| {
                while let Some(&seed) = seeds.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let run = draw(seed);
                    let (want, took) = &references[&(run.workload.bin, run.workload.args.clone())];
                    let limit = *took * args.limit_factor + Duration::from_secs(30);
                    let started = std::time::Instant::now();
                    let (outcome, log) = bench.run(&run, want, limit);
                    let detail = match &outcome {
                        Outcome::Wrong(a) => format!(" (got {a}, want {want})"),
                        Outcome::None(why) | Outcome::Crash(why) => format!(" ({why})"),
                        _ => String::new(),
                    };
                    let took = started.elapsed().as_secs_f64();
                    println!("seed {seed}: {} in {took:.2} s{detail} — {run}", outcome.class());
                    if args.replay.is_some() {
                        eprintln!("{log}");
                    }
                    let line = format!("{seed}\t{}\t{run}", outcome.class());
                    done.lock().unwrap_or_else(|e| e.into_inner()).push((seed, outcome, line));
                }
            });
        }
    });
    let mut done = done.into_inner().unwrap_or_else(|e| e.into_inner());
    done.sort_by_key(|d| d.0);
    let mut table: BTreeMap<&'static str, u64> = BTreeMap::new();
    let mut failed = Vec::new();
    for (_, outcome, line) in done {
        *table.entry(outcome.class()).or_default() += 1;
        if outcome != Outcome::RightOnce {
            failed.push(line);
        }
    }
    println!();
    println!("| outcome | runs |");
    println!("|---|---|");
    for class in ["right once", "wrong", "printed twice", "none", "hang", "crash"] {
        println!("| {class} | {} |", table.get(class).copied().unwrap_or(0));
    }
    let _ = std::fs::remove_dir_all(&scratch);
    if !failed.is_empty() {
        let text = failed.join("\n") + "\n";
        if let Err(e) = std::fs::write(&args.failures, text) {
            eprintln!("campaign: cannot write {}: {e}", args.failures.display());
        }
        eprintln!("campaign: {} run(s) failed; seeds in {}", failed.len(), args.failures.display());
        std::process::exit(1);
    }
}
