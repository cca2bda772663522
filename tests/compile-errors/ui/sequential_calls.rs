#![deny(deprecated)]

use satin::divide_and_conquer;

// Both calls run, but inside blocks no form looks into: a warning (made an
// error here), not a silently sequential function.
#[divide_and_conquer]
fn count(n: u32) -> u64 {
    if n < 2 {
        return 1;
    }
    let total = { count(n - 1) } + { count(n - 2) };
    total
}

// One branch or the other: nothing could run at once, no warning.
#[divide_and_conquer]
fn find(lo: u32, hi: u32, x: u32) -> bool {
    if hi - lo <= 1 {
        return lo == x;
    }
    let mid = (lo + hi) / 2;
    if x < mid {
        find(lo, mid, x)
    } else {
        find(mid, hi, x)
    }
}

fn main() {}
