//! First found wins: a subset-sum search written with `||` between its two
//! calls (`satin_examples::natural::has_subset`), with its one solution in
//! the branch read first, in the branch read second, or nowhere; against
//! the plain function (reading order, stops at the first solution) and
//! `rayon::join` (both branches run to their end). Medians of alternating
//! rounds.
//!
//! `cargo bench -p satin-examples --bench search` (about a minute).

use std::hint::black_box;
use std::time::Instant;

use satin::Runtime;
use satin_examples::natural::{self, Solution};

#[path = "common/pinning.rs"]
mod pinning;

fn time<R>(f: impl FnOnce() -> R) -> (R, f64) {
    let t = Instant::now();
    let r = black_box(f());
    (r, t.elapsed().as_secs_f64())
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let n: usize = std::env::var("SEARCH_ITEMS").ok().and_then(|v| v.parse().ok()).unwrap_or(32);
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    let pinned = pinning::wanted();
    let rt = Runtime::builder().workers(workers).pin_workers(pinned).build().expect("runtime");
    let pool = pinning::rayon_pool(workers);
    let rounds = 7;
    println!("\nSubset sum, {n} items, {workers} workers; median of {rounds} rounds (ms):\n");
    println!("| solution | plain function | satin | rayon::join | plain / satin | rayon / satin |");
    println!("|---|---|---|---|---|---|");
    for at in [Solution::ReadFirst, Solution::ReadSecond, Solution::None] {
        let (items, target) = natural::search_input(n, at);
        let expected = at != Solution::None;
        let (mut plain, mut satin, mut rayon) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..rounds {
            let (r, t) = time(|| natural::has_subset_plain(&items, target));
            assert_eq!(r, expected);
            plain.push(t);
            let (r, t) = time(|| rt.run(|| natural::has_subset(&items, target)));
            assert_eq!(r, expected);
            satin.push(t);
            let (r, t) = time(|| pool.install(|| natural::has_subset_rayon(&items, target)));
            assert_eq!(r, expected);
            rayon.push(t);
        }
        let (p, s, r) = (median(plain), median(satin), median(rayon));
        let name = match at {
            Solution::ReadFirst => "in the branch read first",
            Solution::ReadSecond => "in the branch read second",
            Solution::None => "none",
        };
        println!("| {name} | {:.3} | {:.3} | {:.1} | {:.2} | {:.0} |", p * 1e3, s * 1e3, r * 1e3, p / s, r / s);
    }
}
