//! Merge sort of owned vectors; small pieces are sorted in place.

use rand::{Rng, SeedableRng};
use satin::divide_and_conquer;

/// Below this length a piece is sorted sequentially.
pub const CUTOFF: usize = 4096;

/// `data`, sorted.
#[divide_and_conquer]
pub fn mergesort(data: Vec<u64>) -> Vec<u64> {
    if data.len() <= CUTOFF {
        return sort_small(data);
    }
    let (left, right) = halves(data);
    let a = mergesort(left);
    let b = mergesort(right);
    merge(&a, &b)
}

/// The same algorithm without the annotation.
pub fn mergesort_plain(data: Vec<u64>) -> Vec<u64> {
    if data.len() <= CUTOFF {
        return sort_small(data);
    }
    let (left, right) = halves(data);
    merge(&mergesort_plain(left), &mergesort_plain(right))
}

/// The same algorithm with `rayon::join`.
pub fn mergesort_rayon(data: Vec<u64>) -> Vec<u64> {
    if data.len() <= CUTOFF {
        return sort_small(data);
    }
    let (left, right) = halves(data);
    let (a, b) = rayon::join(|| mergesort_rayon(left), || mergesort_rayon(right));
    merge(&a, &b)
}

/// A piece small enough to sort in place.
fn sort_small(mut data: Vec<u64>) -> Vec<u64> {
    data.sort_unstable();
    data
}

/// Splits `data` into two owned halves.
fn halves(mut data: Vec<u64>) -> (Vec<u64>, Vec<u64>) {
    let right = data.split_off(data.len() / 2);
    (data, right)
}

/// Merges two sorted slices.
pub fn merge(a: &[u64], b: &[u64]) -> Vec<u64> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i] <= b[j] {
            out.push(a[i]);
            i += 1;
        } else {
            out.push(b[j]);
            j += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// `n` random numbers from `seed` (ChaCha8: the same on every platform).
pub fn random_input(n: usize, seed: u64) -> Vec<u64> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    (0..n).map(|_| rng.gen()).collect()
}

/// Position-weighted checksum: changes if any element or the order changes.
pub fn checksum(sorted: &[u64]) -> u64 {
    sorted.iter().enumerate().fold(0u64, |acc, (i, x)| acc.wrapping_add(x.wrapping_mul(i as u64 + 1)))
}
