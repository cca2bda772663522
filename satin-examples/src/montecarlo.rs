//! Independent Monte Carlo simulations, split by divide and conquer. Each
//! simulation seeds its own generator from (seed, index), so the answer does
//! not depend on how the work was split or scheduled.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use satin::divide_and_conquer;

/// Darts thrown by one simulation.
pub const DARTS: u64 = 1000;

/// Darts inside the unit quarter circle, over simulations `lo..hi`.
#[divide_and_conquer]
pub fn hits(lo: u64, hi: u64, seed: u64) -> u64 {
    if hi - lo <= 16 {
        return (lo..hi).map(|i| simulation(seed, i)).sum();
    }
    let mid = lo + (hi - lo) / 2;
    let a = hits(lo, mid, seed);
    let b = hits(mid, hi, seed);
    a + b
}

/// One simulation: its own stream of the seeded generator.
pub fn simulation(seed: u64, index: u64) -> u64 {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(index);
    (0..DARTS)
        .filter(|_| {
            let (x, y): (f64, f64) = (rng.gen(), rng.gen());
            x * x + y * y <= 1.0
        })
        .count() as u64
}

/// The estimate of π from `n` simulations.
pub fn estimate(n: u64, seed: u64) -> (u64, f64) {
    let h = hits(0, n, seed);
    (h, 4.0 * h as f64 / (n * DARTS) as f64)
}
