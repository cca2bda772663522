#![deny(deprecated)]

use satin::divide_and_conquer;

/// No serde here: `local` keeps the calls on this process, without a note.
#[derive(Clone, Copy)]
struct Span {
    lo: u64,
    hi: u64,
}

#[divide_and_conquer(local)]
fn count(s: Span) -> u64 {
    if s.hi - s.lo <= 1 {
        return s.hi - s.lo;
    }
    let mid = (s.lo + s.hi) / 2;
    count(Span { lo: s.lo, hi: mid }) + count(Span { lo: mid, hi: s.hi })
}

#[divide_and_conquer(local)]
fn integrate<F: Fn(f64) -> f64 + Sync>(f: &F, a: f64, b: f64) -> f64 {
    if b - a < 0.1 {
        return (b - a) * f((a + b) / 2.0);
    }
    let m = (a + b) / 2.0;
    integrate(f, a, m) + integrate(f, m, b)
}

pub fn main() {
    assert_eq!(count(Span { lo: 0, hi: 10 }), 10);
    assert!(integrate(&|x| x, 0.0, 1.0) > 0.4);
}
