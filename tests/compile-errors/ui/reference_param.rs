#![deny(deprecated)]

use satin::divide_and_conquer;

// The slice may be borrowed; what it holds travels by value.
#[divide_and_conquer]
fn count(words: &[&str]) -> usize {
    words.len()
}

fn main() {}
