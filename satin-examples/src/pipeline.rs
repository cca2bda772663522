//! The `workflow` example's tasks: blocks of numbers generated, sorted,
//! merged and summarised, each a function from its inputs' bytes to its
//! output's (numbers as little-endian `u64`s).

use rand::{Rng, SeedableRng};

pub fn numbers(bytes: &[u8]) -> Vec<u64> {
    bytes.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes"))).collect()
}

fn bytes(numbers: &[u64]) -> Vec<u8> {
    numbers.iter().flat_map(|n| n.to_le_bytes()).collect()
}

/// Block `i`: `size` pseudo-random numbers, the same on every machine.
pub fn generate(i: usize, size: usize) -> Vec<u8> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(i as u64);
    bytes(&(0..size).map(|_| rng.gen::<u64>()).collect::<Vec<_>>())
}

/// A block, sorted.
pub fn sort(block: &[u8]) -> Vec<u8> {
    let mut n = numbers(block);
    n.sort_unstable();
    bytes(&n)
}

/// Two sorted blocks, merged into one.
pub fn merge(a: &[u8], b: &[u8]) -> Vec<u8> {
    bytes(&crate::mergesort::merge(&numbers(a), &numbers(b)))
}

/// The run's answer: how many numbers, their median, and a checksum of the
/// sorted sequence (which any misplaced number changes).
pub fn summarise(sorted: &[u8]) -> String {
    let n = numbers(sorted);
    let median = n.get(n.len() / 2).copied().unwrap_or(0);
    let sum = blake3::hash(sorted).to_hex();
    format!("{} numbers, median {median}, checksum {}", n.len(), &sum[..16])
}

/// The same answer, computed in one go: every block, sorted together.
pub fn sequential(blocks: usize, size: usize) -> String {
    let mut all: Vec<u64> = (0..blocks).flat_map(|i| numbers(&generate(i, size))).collect();
    all.sort_unstable();
    summarise(&bytes(&all))
}
