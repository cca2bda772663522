//! Two functions that call each other, each with the attribute alone in
//! one module of one file, spawn each other (the attribute finds the other
//! in the file); the results are the plain functions'.

use satin::divide_and_conquer;

#[divide_and_conquer]
fn max_value(pos: u64, depth: u32) -> i64 {
    if depth == 0 {
        return (pos.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 54) as i64 - 512;
    }
    (0..3).map(|m| min_value(pos * 3 + m + 1, depth - 1)).max().unwrap_or(0)
}

#[divide_and_conquer]
fn min_value(pos: u64, depth: u32) -> i64 {
    if depth == 0 {
        return (pos.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 54) as i64 - 512;
    }
    let a = max_value(pos * 2 + 1, depth - 1);
    let b = max_value(pos * 2 + 2, depth - 1);
    a.min(b)
}

pub fn main() {
    let rt = satin::Runtime::builder().workers(2).build().unwrap();
    let plain = satin::sequential(|| max_value(0, 10));
    assert_eq!(rt.run(|| max_value(0, 10)), plain);
    assert_eq!(rt.run(|| min_value(5, 9)), satin::sequential(|| min_value(5, 9)));
    assert!(rt.stats().spawns > 0, "the calls of each other were spawned: {:?}", rt.stats());
}
