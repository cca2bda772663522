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

/// Simulations done by one job of the flat version.
pub const CHUNK: u64 = 500;

/// Darts inside the quarter circle over simulations `lo..hi`, as a flat
/// tree: the root spawns one job per [`CHUNK`] simulations at once (the
/// shape of a master–worker program).
#[divide_and_conquer]
pub fn hits_flat(lo: u64, hi: u64, seed: u64) -> u64 {
    if hi - lo <= CHUNK {
        return (lo..hi).map(|i| simulation(seed, i)).sum();
    }
    (lo..hi).step_by(CHUNK as usize).map(|c| hits_flat(c, (c + CHUNK).min(hi), seed)).sum()
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

/// The estimate of π from `n` simulations (the hits too), split in halves
/// or, `flat`, in chunks spawned by the root.
pub fn estimate(n: u64, seed: u64, flat: bool) -> (u64, f64) {
    let h = if flat { hits_flat(0, n, seed) } else { hits(0, n, seed) };
    (h, 4.0 * h as f64 / (n * DARTS) as f64)
}
