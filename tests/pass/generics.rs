//! Generic functions and generic `impl` blocks compile as written, and a
//! call outside a runtime gives the sequential result.

use satin::divide_and_conquer;
use serde::{Deserialize, Serialize};

#[divide_and_conquer]
fn msort<T: Ord + Clone>(v: &[T]) -> Vec<T> {
    if v.len() <= 1 {
        return v.to_vec();
    }
    let (a, b) = v.split_at(v.len() / 2);
    let (x, y) = (msort(a), msort(b));
    let mut out: Vec<T> = x.into_iter().chain(y).collect();
    out.sort();
    out
}

#[derive(Serialize, Deserialize)]
struct Tree<T>(Vec<Tree<T>>, T);

#[divide_and_conquer]
impl<T: Copy + Into<u64>> Tree<T> {
    #[divide_and_conquer]
    fn sum(&self) -> u64 {
        let mut total = self.1.into();
        for child in &self.0 {
            total += child.sum();
        }
        total
    }
}

pub fn main() {
    assert_eq!(msort(&[3, 1, 2]), vec![1, 2, 3]);
    assert_eq!(msort(&["b".to_string(), "a".to_string()]), vec!["a".to_string(), "b".to_string()]);
    let t = Tree(vec![Tree(Vec::new(), 2u8), Tree(Vec::new(), 3u8)], 1u8);
    assert_eq!(t.sum(), 6);
}
