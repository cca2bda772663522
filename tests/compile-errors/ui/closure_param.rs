#![deny(deprecated)]

use satin::divide_and_conquer;

// Runs in parallel on this process's cores; the note says why its calls
// never go to another node, and how to keep them local without it.
#[divide_and_conquer]
fn integrate<F: Fn(f64) -> f64 + Sync>(f: &F, a: f64, b: f64, eps: f64) -> f64 {
    let m = (a + b) / 2.0;
    if b - a < eps {
        return (b - a) * f(m);
    }
    integrate(f, a, m, eps) + integrate(f, m, b, eps)
}

fn main() {
    let _ = integrate(&|x| x * x, 0.0, 1.0, 0.1);
}
