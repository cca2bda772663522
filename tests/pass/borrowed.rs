//! Borrowed parameters as users write them: named lifetimes, `&str`, `&T`
//! with a user type, `&mut [T]` beside owned parameters, and calls as
//! statements.

use satin::divide_and_conquer;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize)]
struct Weights {
    w: Vec<u32>,
}

#[divide_and_conquer]
fn best<'a>(items: &'a [u32], weights: &Weights, cap: u32) -> u32 {
    let Some((&first, rest)) = items.split_first() else { return 0 };
    let w = weights.w[weights.w.len() - items.len()];
    let without = best(rest, weights, cap);
    let with = if w <= cap { first + best(rest, weights, cap - w) } else { 0 };
    with.max(without)
}

#[divide_and_conquer]
fn words(s: &str) -> usize {
    match s.split_once(' ') {
        Some((a, b)) => words(a) + words(b),
        None => usize::from(!s.is_empty()),
    }
}

#[divide_and_conquer]
fn scale(v: &mut [i64], by: i64, grain: usize) {
    if v.len() <= grain {
        v.iter_mut().for_each(|x| *x *= by);
        return;
    }
    let (a, b) = v.split_at_mut(v.len() / 2);
    scale(a, by, grain);
    scale(b, by, grain);
}

pub fn main() {
    let weights = Weights { w: vec![3, 4, 5] };
    assert_eq!(best(&[4, 5, 6], &weights, 8), 10);
    assert_eq!(words("a bc d"), 3);
    let mut v = vec![1, 2, 3, 4, 5];
    scale(&mut v, -2, 2);
    assert_eq!(v, [-2, -4, -6, -8, -10]);
    let rt = satin::Runtime::builder().workers(2).build().unwrap();
    let mut w = vec![1; 1000];
    rt.run(|| scale(&mut w, 3, 10));
    assert!(w.iter().all(|&x| x == 3));
}
