//! Paired timing for the benchmarks: two sides run alternately, round by
//! round, and the median of the per-round ratios is what counts, so that
//! drift in the machine's speed cancels out.

use std::hint::black_box;
use std::time::Instant;

/// Median over `rounds` of time(a) / time(b), alternating a and b; `setup`
/// makes each side's input outside the timing, and each side's result is
/// dropped outside it (a tree of a million boxes allocated by two threads
/// takes longer to free than one allocated by one: that is the caller's
/// cost, not the call's).
pub fn paired<I, A, B>(rounds: usize, setup: impl Fn() -> I, a: impl Fn(I) -> A, b: impl Fn(I) -> B) -> f64 {
    let mut ratios = Vec::new();
    let (mut tas, mut tbs) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let (ia, ib) = (setup(), setup());
        let t = Instant::now();
        let out = black_box(a(ia));
        let ta = t.elapsed().as_secs_f64();
        drop(out);
        let t = Instant::now();
        let out = black_box(b(ib));
        let tb = t.elapsed().as_secs_f64();
        drop(out);
        ratios.push(ta / tb);
        tas.push(ta);
        tbs.push(tb);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    eprintln!("  medians {:.2} ms / {:.2} ms", median(&mut tas) * 1e3, median(&mut tbs) * 1e3);
    median(&mut ratios)
}
