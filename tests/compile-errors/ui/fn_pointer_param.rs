#![deny(deprecated)]

use satin::divide_and_conquer;

#[divide_and_conquer]
fn integrate(f: fn(f64) -> f64, a: f64, b: f64) -> f64 {
    (b - a) * f((a + b) / 2.0)
}

fn main() {}
