//! How good the progress estimate is (`satin::progress`): each workload
//! runs on all workers of a runtime that tracks progress while another
//! thread reads the estimate every 2 ms. The table gives, at 10, 50 and
//! 90 % of the run's real time, the estimated share done and the total
//! time the estimate then predicted (elapsed + time left) against the
//! real total; and what tracking costs (median time with / without, over
//! alternating runs).
//!
//! `cargo bench -p satin-examples --bench progress` (about a minute).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use satin::Runtime;
use satin_examples::{fib, mergesort, nqueens, tsp, uts};

/// (elapsed, estimated share, estimated time left) at each reading.
type Samples = Vec<(Duration, f64, Option<Duration>)>;

fn runtime(track: bool) -> Arc<Runtime> {
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    Arc::new(Runtime::builder().workers(workers).track_progress(track).build().expect("runtime"))
}

/// Runs `f` once on a tracking runtime, reading the estimate meanwhile.
fn sampled<R: Send>(f: &(dyn Fn() -> R + Sync)) -> (Duration, Samples) {
    let rt = runtime(true);
    let running = Arc::new(AtomicBool::new(true));
    let reader = {
        let (rt, running) = (Arc::clone(&rt), Arc::clone(&running));
        std::thread::spawn(move || {
            let mut samples = Vec::new();
            while running.load(Ordering::Acquire) {
                if let Some(e) = rt.progress() {
                    if !e.done && e.elapsed > Duration::ZERO {
                        samples.push((e.elapsed, e.fraction, e.eta));
                    }
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            samples
        })
    };
    let start = Instant::now();
    std::hint::black_box(rt.run(f));
    let total = start.elapsed();
    running.store(false, Ordering::Release);
    (total, reader.join().expect("reader"))
}

/// The reading nearest to `share` of `total`.
fn at(samples: &Samples, total: Duration, share: f64) -> Option<(f64, Option<Duration>, Duration)> {
    let t = total.mul_f64(share);
    samples
        .iter()
        .min_by_key(|(e, ..)| e.abs_diff(t))
        .map(|&(elapsed, fraction, eta)| (fraction, eta.map(|left| elapsed + left), elapsed))
}

/// Median of (time with tracking / time without), alternating runs.
fn overhead<R: Send>(rounds: usize, f: &(dyn Fn() -> R + Sync)) -> f64 {
    let (on, off) = (runtime(true), runtime(false));
    let mut ratios: Vec<f64> = (0..rounds)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(on.run(f));
            let with = t.elapsed();
            let t = Instant::now();
            std::hint::black_box(off.run(f));
            with.as_secs_f64() / t.elapsed().as_secs_f64()
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    ratios[ratios.len() / 2]
}

fn row<R: Send>(name: &str, f: &(dyn Fn() -> R + Sync)) {
    let (total, samples) = sampled(f);
    let mut cells = Vec::new();
    for share in [0.1, 0.5, 0.9] {
        cells.push(match at(&samples, total, share) {
            Some((fraction, predicted, _)) => {
                let predicted = predicted.map_or("—".to_string(), |p| format!("{:.2} s", p.as_secs_f64()));
                format!("{:.0} % / {predicted}", fraction * 100.0)
            }
            None => "—".into(),
        });
    }
    let tracked = runtime_tracked(f);
    println!(
        "| {name} | {:.2} s | {} | {} | {} | {tracked} | {:.3} |",
        total.as_secs_f64(),
        cells[0],
        cells[1],
        cells[2],
        overhead(7, f)
    );
}

/// Calls the estimate saw in one run.
fn runtime_tracked<R: Send>(f: &(dyn Fn() -> R + Sync)) -> usize {
    let rt = runtime(true);
    rt.run(f);
    rt.progress().map_or(0, |e| e.tracked)
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    println!("| workload | run time | at 10 %: estimate / predicted total | at 50 % | at 90 % | calls tracked | time with / without tracking |");
    println!("|---|---|---|---|---|---|---|");
    row("fib 40", &|| fib::fib(40));
    row("nqueens 16", &|| nqueens::solutions(16));
    for name in ["T1", "T3"] {
        let (params, _) = uts::sample(name).expect("a sample tree");
        let root = uts::Node::root(&params);
        row(&format!("uts {name}"), &|| uts::search(&params, root));
    }
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/data/tsp/gr17.tsp");
    let m = tsp::parse(&std::fs::read_to_string(path).expect("bundled")).expect("valid");
    row("tsp gr17 (branch and bound)", &|| tsp::simple::solve(&m, tsp::Bound::Shared));
    let input = mergesort::random_input(20_000_000, 1);
    row("mergesort 20M", &|| mergesort::mergesort(input.clone()));
}
