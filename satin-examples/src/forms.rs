//! Recursion as people write it, annotated as it is: a function that
//! `?`s its calls, methods on a tree, two functions that call each other,
//! a `&mut` slice split in two, sorted by both calls, then merged, and a
//! generic merge sort.
//! Beside each, the same code without the annotation (`_plain`);
//! `benches/forms.rs` compares them.

use satin::divide_and_conquer;
use serde::{Deserialize, Serialize};

/// A value that breaks the rule of [`checked_sum`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Negative {
    /// Where it stands in the slice it was found in.
    pub at: usize,
    /// The value.
    pub value: i64,
}

/// The sum of a slice of non-negative numbers, or the first negative one.
#[divide_and_conquer]
pub fn checked_sum(xs: &[i64], offset: usize) -> Result<i64, Negative> {
    if xs.len() <= 1 {
        return match xs.first() {
            Some(&v) if v < 0 => Err(Negative { at: offset, value: v }),
            first => Ok(first.copied().unwrap_or(0)),
        };
    }
    let mid = xs.len() / 2;
    let left = checked_sum(&xs[..mid], offset)?;
    let right = checked_sum(&xs[mid..], offset + mid)?;
    Ok(left + right)
}

/// [`checked_sum`] without the annotation.
pub fn checked_sum_plain(xs: &[i64], offset: usize) -> Result<i64, Negative> {
    if xs.len() <= 1 {
        return match xs.first() {
            Some(&v) if v < 0 => Err(Negative { at: offset, value: v }),
            first => Ok(first.copied().unwrap_or(0)),
        };
    }
    let mid = xs.len() / 2;
    let left = checked_sum_plain(&xs[..mid], offset)?;
    let right = checked_sum_plain(&xs[mid..], offset + mid)?;
    Ok(left + right)
}

/// A tree with a value in every node.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Node {
    /// This node's value.
    pub value: u64,
    /// Its subtrees.
    pub children: Vec<Node>,
}

#[divide_and_conquer]
impl Node {
    /// A tree of `fan` children per node, `depth` levels below the root.
    #[divide_and_conquer]
    pub fn grow(depth: u32, fan: u32, seed: u64) -> Node {
        if depth == 0 {
            return Node { value: seed % 1000, children: Vec::new() };
        }
        let children = (0..u64::from(fan)).map(|k| Self::grow(depth - 1, fan, seed * 31 + k + 1)).collect();
        Node { value: seed % 1000, children }
    }

    /// The sum of every value below and at this node.
    #[divide_and_conquer]
    pub fn total(&self) -> u64 {
        self.value + self.children.iter().map(|c| c.total()).sum::<u64>()
    }

    /// [`Node::total`] without the annotation.
    pub fn total_plain(&self) -> u64 {
        self.value + self.children.iter().map(|c| c.total_plain()).sum::<u64>()
    }
}

/// [`Node::grow`] without the annotation.
pub fn grow_plain(depth: u32, fan: u32, seed: u64) -> Node {
    if depth == 0 {
        return Node { value: seed % 1000, children: Vec::new() };
    }
    let children = (0..u64::from(fan)).map(|k| grow_plain(depth - 1, fan, seed * 31 + k + 1)).collect();
    Node { value: seed % 1000, children }
}

/// A position's score in a made-up game: a hash of its number.
pub fn score(pos: u64) -> i64 {
    let x = pos.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    ((x >> 40) % 2001) as i64 - 1000
}

/// Minimax written as two functions that call each other.
#[divide_and_conquer]
pub mod minimax {
    use super::score;

    /// The best score the player to move can force, `depth` moves deep,
    /// `moves` moves from each position.
    #[divide_and_conquer]
    pub fn max_value(pos: u64, depth: u32, moves: u64) -> i64 {
        if depth == 0 {
            return score(pos);
        }
        (0..moves).map(|m| min_value(pos * moves + m + 1, depth - 1, moves)).max().unwrap_or(0)
    }

    /// The best score the opponent can hold the player to.
    #[divide_and_conquer]
    pub fn min_value(pos: u64, depth: u32, moves: u64) -> i64 {
        if depth == 0 {
            return score(pos);
        }
        (0..moves).map(|m| max_value(pos * moves + m + 1, depth - 1, moves)).min().unwrap_or(0)
    }
}

/// [`minimax::max_value`] without the annotation.
pub fn max_value_plain(pos: u64, depth: u32, moves: u64) -> i64 {
    if depth == 0 {
        return score(pos);
    }
    (0..moves).map(|m| min_value_plain(pos * moves + m + 1, depth - 1, moves)).max().unwrap_or(0)
}

/// [`minimax::min_value`] without the annotation.
pub fn min_value_plain(pos: u64, depth: u32, moves: u64) -> i64 {
    if depth == 0 {
        return score(pos);
    }
    (0..moves).map(|m| max_value_plain(pos * moves + m + 1, depth - 1, moves)).min().unwrap_or(0)
}

/// Sorts `v` and returns how many pairs were out of order: both halves by
/// the calls, then a merge over the whole slice.
#[divide_and_conquer]
pub fn count_inversions(v: &mut [i64]) -> u64 {
    if v.len() <= 1 {
        return 0;
    }
    let mid = v.len() / 2;
    let (left, right) = v.split_at_mut(mid);
    let a = count_inversions(left);
    let b = count_inversions(right);
    a + b + merge(v, mid)
}

/// [`count_inversions`] without the annotation.
pub fn count_inversions_plain(v: &mut [i64]) -> u64 {
    if v.len() <= 1 {
        return 0;
    }
    let mid = v.len() / 2;
    let (left, right) = v.split_at_mut(mid);
    let a = count_inversions_plain(left);
    let b = count_inversions_plain(right);
    a + b + merge(v, mid)
}

/// Merges the sorted `v[..mid]` and `v[mid..]`; returns the pairs out of
/// order between them.
fn merge(v: &mut [i64], mid: usize) -> u64 {
    let mut merged = Vec::with_capacity(v.len());
    let (mut i, mut j, mut inversions) = (0, mid, 0u64);
    while i < mid && j < v.len() {
        if v[i] <= v[j] {
            merged.push(v[i]);
            i += 1;
        } else {
            merged.push(v[j]);
            inversions += (mid - i) as u64;
            j += 1;
        }
    }
    merged.extend_from_slice(&v[i..mid]);
    merged.extend_from_slice(&v[j..]);
    v.copy_from_slice(&merged);
    inversions
}

/// Merge sort of any ordered type that can travel: a generic function.
#[divide_and_conquer]
pub fn merge_sort<T: Ord + Clone>(v: &[T]) -> Vec<T> {
    if v.len() <= 32 {
        let mut out = v.to_vec();
        out.sort();
        return out;
    }
    let (a, b) = v.split_at(v.len() / 2);
    let left = merge_sort(a);
    let right = merge_sort(b);
    merged(left, right)
}

/// [`merge_sort`] without the annotation.
pub fn merge_sort_plain<T: Ord + Clone>(v: &[T]) -> Vec<T> {
    if v.len() <= 32 {
        let mut out = v.to_vec();
        out.sort();
        return out;
    }
    let (a, b) = v.split_at(v.len() / 2);
    let left = merge_sort_plain(a);
    let right = merge_sort_plain(b);
    merged(left, right)
}

/// The two sorted vectors as one.
fn merged<T: Ord>(a: Vec<T>, b: Vec<T>) -> Vec<T> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut a, mut b) = (a.into_iter().peekable(), b.into_iter().peekable());
    while let (Some(x), Some(y)) = (a.peek(), b.peek()) {
        out.push(if x <= y { a.next() } else { b.next() }.expect("peeked"));
    }
    out.extend(a);
    out.extend(b);
    out
}

/// Where each number of `v` stands in sorted order (ties by position):
/// a generic function that sorts `(value, position)` pairs with
/// [`merge_sort`] — an instantiation, `merge_sort::<(T, u32)>`, that only
/// this function uses.
#[divide_and_conquer]
pub fn ranks<T: Ord + Clone>(v: &[T]) -> Vec<u32> {
    let pairs: Vec<(T, u32)> = v.iter().cloned().zip(0..).collect();
    let sorted = merge_sort(&pairs);
    let mut rank = vec![0; v.len()];
    for (r, (_, at)) in sorted.iter().enumerate() {
        rank[*at as usize] = r as u32;
    }
    rank
}

/// The position a program with several steps starts its next step from,
/// given the last step's score.
pub fn next_position(score: i64) -> u64 {
    score.unsigned_abs() % 97 + 1
}

/// An order-sensitive digest of a sequence, to print instead of it.
pub fn digest<T: std::hash::Hash>(v: &[T]) -> u64 {
    use std::hash::{BuildHasher, BuildHasherDefault};
    BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default().hash_one(v)
}

/// `n` pseudo-random numbers in `0..1000` (xorshift from `seed`).
pub fn numbers(n: usize, seed: u64) -> Vec<i64> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 1000) as i64
        })
        .collect()
}

/// Minimax as one function (negamax): [`minimax::max_value`] for `sign`
/// 1, with the same calls.
#[divide_and_conquer]
pub fn negamax(pos: u64, depth: u32, moves: u64, sign: i64) -> i64 {
    if depth == 0 {
        return sign * score(pos);
    }
    -(0..moves).map(|m| negamax(pos * moves + m + 1, depth - 1, moves, -sign)).min().unwrap_or(0)
}

/// [`negamax`] without the annotation.
pub fn negamax_plain(pos: u64, depth: u32, moves: u64, sign: i64) -> i64 {
    if depth == 0 {
        return sign * score(pos);
    }
    -(0..moves).map(|m| negamax_plain(pos * moves + m + 1, depth - 1, moves, -sign)).min().unwrap_or(0)
}

/// A partly filled N-queens board: one queen in each of the first `row`
/// rows, the attacked columns and diagonals as bit masks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Board {
    n: u32,
    row: u32,
    cols: u32,
    left: u32,
    right: u32,
}

#[divide_and_conquer]
impl Board {
    /// The solutions that complete this board: a method taking `self`.
    #[divide_and_conquer]
    pub fn solutions(self) -> u64 {
        if self.row == self.n {
            return 1;
        }
        let mut count = 0;
        let mut free = !(self.cols | self.left | self.right) & ((1 << self.n) - 1);
        while free != 0 {
            let bit = free & free.wrapping_neg();
            free &= free - 1;
            count += self.place(bit).solutions();
        }
        count
    }
}

impl Board {
    /// An empty board of `n` rows (`n` at most 31).
    pub fn empty(n: u32) -> Board {
        Board { n, row: 0, cols: 0, left: 0, right: 0 }
    }

    /// This board with a queen in the next row, in the column of `bit`.
    fn place(self, bit: u32) -> Board {
        let mask = (1u32 << self.n) - 1;
        Board {
            n: self.n,
            row: self.row + 1,
            cols: self.cols | bit,
            left: ((self.left | bit) << 1) & mask,
            right: (self.right | bit) >> 1,
        }
    }

    /// [`Board::solutions`] without the annotation.
    pub fn solutions_plain(self) -> u64 {
        if self.row == self.n {
            return 1;
        }
        let mut count = 0;
        let mut free = !(self.cols | self.left | self.right) & ((1 << self.n) - 1);
        while free != 0 {
            let bit = free & free.wrapping_neg();
            free &= free - 1;
            count += self.place(bit).solutions_plain();
        }
        count
    }
}

/// A Collatz orbit longer than allowed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TooLong {
    /// The number it starts from.
    pub start: u64,
    /// Its length.
    pub steps: u32,
}

/// The longest Collatz orbit (steps, start) of the numbers in `lo..hi`, or
/// the first one longer than `limit` steps: a function that `?`s its calls.
#[divide_and_conquer]
pub fn longest_orbit(lo: u64, hi: u64, limit: u32) -> Result<(u32, u64), TooLong> {
    if hi - lo <= 256 {
        return orbits(lo, hi, limit);
    }
    let mid = lo + (hi - lo) / 2;
    let left = longest_orbit(lo, mid, limit)?;
    let right = longest_orbit(mid, hi, limit)?;
    Ok(left.max(right))
}

/// [`longest_orbit`] without the annotation.
pub fn longest_orbit_plain(lo: u64, hi: u64, limit: u32) -> Result<(u32, u64), TooLong> {
    if hi - lo <= 256 {
        return orbits(lo, hi, limit);
    }
    let mid = lo + (hi - lo) / 2;
    let left = longest_orbit_plain(lo, mid, limit)?;
    let right = longest_orbit_plain(mid, hi, limit)?;
    Ok(left.max(right))
}

fn orbits(lo: u64, hi: u64, limit: u32) -> Result<(u32, u64), TooLong> {
    let mut best = (0, lo);
    for start in lo..hi {
        let (mut x, mut steps) = (start, 0u32);
        while x > 1 {
            x = if x % 2 == 0 { x / 2 } else { 3 * x + 1 };
            steps += 1;
        }
        if steps > limit {
            return Err(TooLong { start, steps });
        }
        best = best.max((steps, start));
    }
    Ok(best)
}
