#![deny(deprecated)]

use satin::divide_and_conquer;

// Calls in the closures of iterator adapters run element after element:
// one warning (made an error here) per call.
#[divide_and_conquer]
fn reachable(node: u32, depth: u32) -> bool {
    if depth == 0 {
        return node % 7 == 0;
    }
    (0..3).filter(|k| reachable(node * 3 + k, depth - 1)).count() > 0
}

#[divide_and_conquer]
fn weight(node: u32, depth: u32) -> u64 {
    if depth == 0 {
        return node as u64;
    }
    let direct = weight(node * 2, depth - 1) + weight(node * 2 + 1, depth - 1);
    direct + (0..2).fold(0, |acc, k| acc + weight(node + k, depth - 1))
}

fn main() {}
