#![deny(deprecated)]

use satin::divide_and_conquer;

// The call's argument reads `x`, which the loop changes: the calls cannot
// all start first, and the warning (an error here) names `x`.
#[divide_and_conquer]
fn walk(n: u64) -> u64 {
    if n < 3 {
        return n;
    }
    let (mut x, mut total) = (n, 0);
    for _ in 0..2 {
        x -= 1;
        let v = walk(x);
        total = total.max(v);
    }
    total
}

fn main() {}
