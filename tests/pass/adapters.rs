//! `.map(|x| f(x))` before any method that reads every element spawns
//! every call; the results are the plain function's.

use satin::divide_and_conquer;

#[divide_and_conquer]
fn best(node: u64, depth: u32) -> u64 {
    if depth == 0 {
        return node * 7 % 11;
    }
    (0..3).map(|k| best(node * 3 + k, depth - 1)).max_by_key(|v| v % 5).unwrap_or(0)
}

#[divide_and_conquer]
fn folded(node: u64, depth: u32) -> u64 {
    if depth == 0 {
        return node;
    }
    (0..3).map(|k| folded(node * 3 + k, depth - 1)).fold(1, |acc, v| acc.wrapping_mul(31).wrapping_add(v))
}

pub fn main() {
    let rt = satin::Runtime::builder().workers(2).build().unwrap();
    let plain_best = satin::sequential(|| best(1, 6));
    assert_eq!(rt.run(|| best(1, 6)), plain_best);
    let plain_folded = satin::sequential(|| folded(1, 6));
    assert_eq!(rt.run(|| folded(1, 6)), plain_folded);
    assert!(rt.stats().spawns > 0, "the calls were spawned: {:?}", rt.stats());
}
