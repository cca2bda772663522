//! Functions as one writes them (see `satin_examples::natural`), no
//! cut-offs, against the same body without the annotation, against the
//! annotated body with a hand-written cut-off, against `rayon::join` and
//! (tree sum, fib) against `chili` —
//! all in one run, in pairs: the two sides run alternately, round by round,
//! and the median of the per-round ratios is reported, so that drift in the
//! machine's speed cancels out. Inputs are copied outside the timed part.
//!
//! `cargo bench -p satin-examples --bench natural` (about 2 minutes;
//! `SATIN_BENCH_UNPINNED=1` leaves the threads of both pools unpinned).

use satin::Runtime;
use satin_examples::{fib, natural};

#[path = "common/pinning.rs"]
mod pinning;

#[path = "common/paired.rs"]
mod paired;
use paired::paired;

struct Row {
    name: &'static str,
    speedup: f64,
    nocut_vs_cut: f64,
    vs_rayon: f64,
    /// satin / chili, where the function has a chili twin.
    vs_chili: Option<f64>,
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    // Both pools pin their threads, one per core (SATIN_BENCH_UNPINNED=1:
    // neither does), so that no run starts with two workers on one core.
    let pinned = pinning::wanted();
    let rt = Runtime::builder().workers(workers).pin_workers(pinned).build().expect("runtime");
    let pool = pinning::rayon_pool(workers);
    // chili's pool: the calling thread and workers - 1 others (unpinned:
    // chili has no pinning of its own).
    let chili_pool = chili::ThreadPool::new();
    let rounds = 11;
    let mut rows = Vec::new();

    let xs = natural::random(1 << 24, 1);
    rows.push(Row {
        name: "sum(&[u64]), 16M elements",
        speedup: paired(rounds, || (), |_| natural::sum_plain(&xs), |_| rt.run(|| natural::sum(&xs))),
        nocut_vs_cut: paired(rounds, || (), |_| rt.run(|| natural::sum(&xs)), |_| rt.run(|| natural::sum_cut(&xs))),
        vs_rayon: paired(rounds, || (), |_| rt.run(|| natural::sum(&xs)), |_| pool.install(|| natural::sum_rayon(&xs))),
        vs_chili: None,
    });

    let input = natural::random(4_000_000, 2);
    let copy = || input.clone();
    rows.push(Row {
        name: "quicksort(&mut [u64]), 4M elements",
        speedup: paired(
            rounds,
            copy,
            |mut v| natural::quicksort_plain(&mut v),
            |mut v| rt.run(|| natural::quicksort(&mut v)),
        ),
        nocut_vs_cut: paired(
            rounds,
            copy,
            |mut v| rt.run(|| natural::quicksort(&mut v)),
            |mut v| rt.run(|| natural::quicksort_cut(&mut v)),
        ),
        vs_rayon: paired(
            rounds,
            copy,
            |mut v| rt.run(|| natural::quicksort(&mut v)),
            |mut v| pool.install(|| natural::quicksort_rayon(&mut v)),
        ),
        vs_chili: None,
    });

    let tree = natural::Tree::build(21, 3);
    rows.push(Row {
        name: "tree_sum(&Tree), 2M leaves",
        speedup: paired(rounds, || (), |_| natural::tree_sum_plain(&tree), |_| rt.run(|| natural::tree_sum(&tree))),
        nocut_vs_cut: paired(
            rounds,
            || (),
            |_| rt.run(|| natural::tree_sum(&tree)),
            |_| rt.run(|| natural::tree_sum_cut(&tree, 0)),
        ),
        vs_rayon: paired(
            rounds,
            || (),
            |_| rt.run(|| natural::tree_sum(&tree)),
            |_| pool.install(|| natural::tree_sum_rayon(&tree)),
        ),
        vs_chili: Some(paired(
            rounds,
            || (),
            |_| rt.run(|| natural::tree_sum(&tree)),
            |_| natural::tree_sum_chili(&tree, &mut chili_pool.scope()),
        )),
    });

    let (items, target) = natural::subset_input(26);
    rows.push(Row {
        name: "subset_sum(&[u64], u64), 26 items, no solution",
        speedup: paired(
            rounds,
            || (),
            |_| natural::subset_sum_plain(&items, target),
            |_| rt.run(|| natural::subset_sum(&items, target)),
        ),
        nocut_vs_cut: paired(
            rounds,
            || (),
            |_| rt.run(|| natural::subset_sum(&items, target)),
            |_| rt.run(|| natural::subset_sum_cut(&items, target)),
        ),
        vs_rayon: paired(
            rounds,
            || (),
            |_| rt.run(|| natural::subset_sum(&items, target)),
            |_| pool.install(|| natural::subset_sum_rayon(&items, target)),
        ),
        vs_chili: None,
    });

    rows.push(Row {
        name: "fib(u32), fib(38)",
        speedup: paired(rounds, || (), |_| fib::fib_plain(38), |_| rt.run(|| fib::fib(38))),
        nocut_vs_cut: paired(rounds, || (), |_| rt.run(|| fib::fib(38)), |_| rt.run(|| natural::fib_cut(38))),
        vs_rayon: paired(rounds, || (), |_| rt.run(|| fib::fib(38)), |_| pool.install(|| fib::fib_rayon(38))),
        vs_chili: Some(paired(
            rounds,
            || (),
            |_| rt.run(|| fib::fib(38)),
            |_| fib::fib_chili(38, &mut chili_pool.scope()),
        )),
    });

    let how = if pinned { "pinned" } else { "unpinned" };
    println!("\nNatural forms, no cut-offs, {workers} workers ({how}); median of {rounds} paired rounds:\n");
    println!("| function | speed-up over the plain function | without cut-off / with | satin / rayon::join | satin / chili |");
    println!("|---|---|---|---|---|");
    for r in rows {
        let chili = r.vs_chili.map_or("—".to_string(), |v| format!("{v:.2}"));
        println!("| {} | {:.2} | {:.2} | {:.2} | {chili} |", r.name, r.speedup, r.nocut_vs_cut, r.vs_rayon);
    }
}
