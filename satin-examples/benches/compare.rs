//! One run compares, per workload: the plain sequential function, satin on 1
//! worker and on all workers (fault-tolerance records on and off, and with
//! every call pushed), and `rayon::join` on the same number of threads —
//! the median of up to 20 runs each (about 5 s, after one to warm up) —
//! and prints a table of ratios for docs/performance.md.
//!
//! A second table measures the ratios that matter in pairs, alternating the
//! two variants run by run, so that drift in machine speed cancels out.
//!
//! `cargo bench -p satin-examples --bench compare` (all of it), with a
//! filter, e.g. `-- fib35`, or `-- --paired-only` for the paired table alone.
//! Both pools pin their threads (SATIN_BENCH_UNPINNED=1: neither does).

use std::hint::black_box;
use std::time::{Duration, Instant};

use satin::Runtime;
use satin_examples::{barnes_hut, fib, mergesort, nqueens, tsp, uts};

#[path = "common/pinning.rs"]
mod pinning;

/// Satin's workers are pinned, one per core (as `pinning::rayon_pool`
/// pins rayon's threads), unless SATIN_BENCH_UNPINNED=1.
fn runtime(workers: usize, ft: bool, spawn_limit: usize) -> Runtime {
    Runtime::builder()
        .workers(workers)
        .fault_tolerance(ft)
        .spawn_limit(spawn_limit)
        .pin_workers(pinning::wanted())
        .build()
        .expect("runtime")
}

/// Variant names, in table order.
const SEQUENTIAL: &str = "sequential";
const SATIN_1: &str = "satin-1w";
const SATIN_ALL: &str = "satin-all";
const SATIN_ALL_NOFT: &str = "satin-all-ft-off";
const SATIN_ALL_EAGER: &str = "satin-all-every-call-spawned";
const RAYON_ALL: &str = "rayon-join-all";
const VARIANTS: [&str; 6] = [SEQUENTIAL, SATIN_1, SATIN_ALL, SATIN_ALL_NOFT, SATIN_ALL_EAGER, RAYON_ALL];

/// Median wall time of `f` over up to 20 runs within about 5 s (at least
/// 3), after one run that warms caches and the pool.
fn median_seconds<R>(f: impl Fn() -> R) -> f64 {
    black_box(f());
    let budget = Instant::now();
    let mut times = Vec::new();
    while times.len() < 3 || (times.len() < 20 && budget.elapsed() < Duration::from_secs(5)) {
        let t = Instant::now();
        black_box(f());
        times.push(t.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// The medians of every workload measured, in table order; the command
/// line's words (but flags) select workloads by name.
struct Medians {
    filters: Vec<String>,
    rows: Vec<(String, [f64; 6])>,
}

impl Medians {
    fn from_args() -> Medians {
        let filters = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
        Medians { filters, rows: Vec::new() }
    }

    fn bench_workload<R: Send>(
        &mut self,
        group: &str,
        plain: impl Fn() -> R,
        annotated: impl Fn() -> R + Sync,
        rayon: impl Fn() -> R + Sync,
    ) {
        if !self.filters.is_empty() && !self.filters.iter().any(|f| group.contains(f.as_str())) {
            return;
        }
        let all = std::thread::available_parallelism().map_or(1, |n| n.get());
        let satin = |rt: Runtime| median_seconds(|| rt.run(&annotated));
        let pool = pinning::rayon_pool(all);
        let medians = [
            median_seconds(&plain),
            satin(runtime(1, true, satin::DEFAULT_SPAWN_LIMIT)),
            satin(runtime(all, true, satin::DEFAULT_SPAWN_LIMIT)),
            satin(runtime(all, false, satin::DEFAULT_SPAWN_LIMIT)),
            satin(runtime(all, true, usize::MAX)),
            median_seconds(|| pool.install(&rayon)),
        ];
        for (variant, m) in VARIANTS.iter().zip(medians) {
            eprintln!("{group}/{variant}: {:.2} ms", m * 1e3);
        }
        self.rows.push((group.to_string(), medians));
    }
}

fn benches(c: &mut Medians) {
    c.bench_workload("fib35", || fib::fib_plain(35), || fib::fib(35), || fib::fib_rayon(35));
    for n in [12, 13, 14] {
        c.bench_workload(
            &format!("nqueens{n}"),
            || nqueens::nqueens_plain(n, 0, 0, 0),
            || nqueens::solutions(n),
            || nqueens::nqueens_rayon(n, 0, 0, 0),
        );
    }
    let bodies = barnes_hut::plummer::sphere(20_000, 1);
    c.bench_workload(
        "barnes_hut20k",
        || barnes_hut::tree_accelerations(bodies.clone(), 0.5),
        || barnes_hut::tree_accelerations(bodies.clone(), 0.5),
        || barnes_hut::rayon_version::tree_accelerations(bodies.clone(), 0.5),
    );
    let m = tsp_instance("gr17");
    c.bench_workload(
        "tsp_gr17",
        || tsp::simple::solve_plain(&m),
        || tsp::simple::solve(&m, tsp::Bound::Shared),
        || tsp::simple::solve_rayon(&m),
    );
    for name in ["T1", "T3"] {
        let (params, _) = uts::sample(name).expect("a sample tree");
        let root = uts::Node::root(&params);
        let params = &params;
        c.bench_workload(
            &format!("uts_{name}"),
            || uts::search_plain(params, root),
            || uts::search(params, root),
            || uts::search_rayon(params, root),
        );
    }
    let input = mergesort::random_input(10_000_000, 1);
    c.bench_workload(
        "mergesort10M",
        || mergesort::mergesort_plain(input.clone()),
        || mergesort::mergesort(input.clone()),
        || mergesort::mergesort_rayon(input.clone()),
    );
}

fn tsp_instance(name: &str) -> tsp::Matrix {
    let path = satin_examples::data_dir().join("tsp").join(format!("{name}.tsp"));
    tsp::parse(&std::fs::read_to_string(path).expect("bundled")).expect("valid")
}

fn print_ratios(medians: &Medians) {
    println!("\n| workload | sequential | satin 1w | satin all | ft on/off | every call spawned | rayon::join | speed-up vs sequential | satin / rayon |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for (group, [seq, one, all, noft, eager, ray]) in &medians.rows {
        let ms = |s: f64| format!("{:.1} ms", s * 1e3);
        println!(
            "| {group} | {} | {} | {} | {:.3} | {} | {} | {:.2} | {:.2} |",
            ms(*seq),
            ms(*one),
            ms(*all),
            all / noft,
            ms(*eager),
            ms(*ray),
            seq / all,
            all / ray
        );
    }
}

/// Median over `rounds` of time(a) / time(b), running a and b alternately so
/// that drift in machine speed hits both alike.
fn paired_ratio<A, B>(rounds: usize, a: impl Fn() -> A, b: impl Fn() -> B) -> f64 {
    let time = |f: &dyn Fn()| {
        let t = std::time::Instant::now();
        f();
        t.elapsed().as_secs_f64()
    };
    let mut ratios: Vec<f64> = (0..rounds)
        .map(|_| {
            let ta = time(&|| drop(black_box(a())));
            let tb = time(&|| drop(black_box(b())));
            ta / tb
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    ratios[rounds / 2]
}

fn print_paired() {
    let all = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (ft_on, ft_off) =
        (runtime(all, true, satin::DEFAULT_SPAWN_LIMIT), runtime(all, false, satin::DEFAULT_SPAWN_LIMIT));
    let pool = pinning::rayon_pool(all);
    println!("\nPaired ratios (median over alternating runs; {all} workers/threads):\n");
    println!("| workload | rounds | sequential / satin (speed-up) | satin / rayon::join | ft on / ft off |");
    println!("|---|---|---|---|---|");
    let row = |name: &str,
               rounds: usize,
               plain: &dyn Fn() -> u64,
               sat: &(dyn Fn() -> u64 + Sync),
               ray: &(dyn Fn() -> u64 + Sync)| {
        let speedup = paired_ratio(rounds, plain, || ft_on.run(sat));
        let vs_rayon = paired_ratio(rounds, || ft_on.run(sat), || pool.install(ray));
        let ft = paired_ratio(rounds, || ft_on.run(sat), || ft_off.run(sat));
        println!("| {name} | {rounds} | {speedup:.2} | {vs_rayon:.2} | {ft:.3} |");
    };
    row("fib35", 41, &|| fib::fib_plain(35), &|| fib::fib(35), &|| fib::fib_rayon(35));
    row("nqueens14", 41, &|| nqueens::nqueens_plain(14, 0, 0, 0), &|| nqueens::solutions(14), &|| {
        nqueens::nqueens_rayon(14, 0, 0, 0)
    });
    let bodies = barnes_hut::plummer::sphere(20_000, 1);
    let checksum = |(_, acc): (Vec<barnes_hut::Body>, Vec<barnes_hut::Vec3>)| acc[acc.len() / 2][0].to_bits();
    row(
        "barnes_hut20k",
        11,
        &|| checksum(barnes_hut::tree_accelerations(bodies.clone(), 0.5)),
        &|| checksum(barnes_hut::tree_accelerations(bodies.clone(), 0.5)),
        &|| checksum(barnes_hut::rayon_version::tree_accelerations(bodies.clone(), 0.5)),
    );
    let m = tsp_instance("gr17");
    row("tsp_gr17", 5, &|| tsp::simple::solve_plain(&m), &|| tsp::simple::solve(&m, tsp::Bound::Shared), &|| {
        tsp::simple::solve_rayon(&m)
    });
    for name in ["T1", "T3"] {
        let (params, _) = uts::sample(name).expect("a sample tree");
        let root = uts::Node::root(&params);
        let params = &params;
        row(
            &format!("uts_{name}"),
            11,
            &|| uts::search_plain(params, root).nodes,
            &|| uts::search(params, root).nodes,
            &|| uts::search_rayon(params, root).nodes,
        );
    }
    let input = mergesort::random_input(10_000_000, 1);
    let sum = |v: Vec<u64>| v[v.len() / 2];
    row(
        "mergesort10M",
        11,
        &|| sum(mergesort::mergesort_plain(input.clone())),
        &|| sum(mergesort::mergesort(input.clone())),
        &|| sum(mergesort::mergesort_rayon(input.clone())),
    );
}

fn main() {
    if std::env::args().any(|a| a == "--paired-only") {
        print_paired();
        return;
    }
    let mut medians = Medians::from_args();
    benches(&mut medians);
    print_ratios(&medians);
    print_paired();
}
