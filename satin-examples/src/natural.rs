//! Five functions as one writes them, annotated as they are: a borrowed
//! slice, an in-place sort through `&mut`, a borrowed tree, a search with a
//! call inside an `if` in a `let`, and `fib` — no grain-size cut-offs.
//! Beside each: the same body without the annotation (`_plain`), the
//! annotated one with a hand-written cut-off (`_cut`), and `rayon::join`
//! (and, for the tree sum, `chili`).
//! `benches/natural.rs` compares them.

use satin::divide_and_conquer;
use serde::{Deserialize, Serialize};

/// Below this size the `_cut` variants call the plain function.
const CUT: usize = 4096;

/// Sum of a slice by halves.
#[divide_and_conquer]
pub fn sum(xs: &[u64]) -> u64 {
    if xs.len() <= 1 {
        return xs.first().copied().unwrap_or(0);
    }
    let (left, right) = xs.split_at(xs.len() / 2);
    sum(left) + sum(right)
}

/// [`sum`] without the annotation.
pub fn sum_plain(xs: &[u64]) -> u64 {
    if xs.len() <= 1 {
        return xs.first().copied().unwrap_or(0);
    }
    let (left, right) = xs.split_at(xs.len() / 2);
    sum_plain(left) + sum_plain(right)
}

/// [`sum`] with a hand-written cut-off.
#[divide_and_conquer]
pub fn sum_cut(xs: &[u64]) -> u64 {
    if xs.len() <= CUT {
        return sum_plain(xs);
    }
    let (left, right) = xs.split_at(xs.len() / 2);
    sum_cut(left) + sum_cut(right)
}

/// [`sum`] with `rayon::join`.
pub fn sum_rayon(xs: &[u64]) -> u64 {
    if xs.len() <= 1 {
        return xs.first().copied().unwrap_or(0);
    }
    let (left, right) = xs.split_at(xs.len() / 2);
    let (a, b) = rayon::join(|| sum_rayon(left), || sum_rayon(right));
    a + b
}

/// Lomuto partition around the middle element; returns the pivot's place.
pub fn partition(v: &mut [u64]) -> usize {
    let last = v.len() - 1;
    v.swap(v.len() / 2, last);
    let mut store = 0;
    for i in 0..last {
        if v[i] < v[last] {
            v.swap(i, store);
            store += 1;
        }
    }
    v.swap(store, last);
    store
}

/// In-place quicksort.
#[divide_and_conquer]
pub fn quicksort(v: &mut [u64]) {
    if v.len() <= 1 {
        return;
    }
    let p = partition(v);
    let (lo, hi) = v.split_at_mut(p);
    quicksort(lo);
    quicksort(&mut hi[1..]);
}

/// [`quicksort`] without the annotation.
pub fn quicksort_plain(v: &mut [u64]) {
    if v.len() <= 1 {
        return;
    }
    let p = partition(v);
    let (lo, hi) = v.split_at_mut(p);
    quicksort_plain(lo);
    quicksort_plain(&mut hi[1..]);
}

/// [`quicksort`] with a hand-written cut-off.
#[divide_and_conquer]
pub fn quicksort_cut(v: &mut [u64]) {
    if v.len() <= CUT {
        return quicksort_plain(v);
    }
    let p = partition(v);
    let (lo, hi) = v.split_at_mut(p);
    quicksort_cut(lo);
    quicksort_cut(&mut hi[1..]);
}

/// [`quicksort`] with `rayon::join`.
pub fn quicksort_rayon(v: &mut [u64]) {
    if v.len() <= 1 {
        return;
    }
    let p = partition(v);
    let (lo, hi) = v.split_at_mut(p);
    rayon::join(|| quicksort_rayon(lo), || quicksort_rayon(&mut hi[1..]));
}

/// A binary tree with values at the leaves.
#[derive(Serialize, Deserialize, Clone, Debug)]
pub enum Tree {
    Leaf(u64),
    Node(Box<Tree>, Box<Tree>),
}

impl Tree {
    /// A complete tree of `2^depth` leaves with pseudo-random values. Each
    /// node builds a pseudo-random one of its subtrees first, so that
    /// neither a left-first nor a right-first walk meets the nodes in the
    /// order they were allocated (which would make one walk a sequential
    /// scan of memory and the other not).
    pub fn build(depth: u32, seed: u64) -> Tree {
        if depth == 0 {
            return Tree::Leaf(seed % 1000);
        }
        let next = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let (l, r) = (next, next.rotate_left(17));
        if next >> 63 == 0 {
            let left = Box::new(Tree::build(depth - 1, l));
            Tree::Node(left, Box::new(Tree::build(depth - 1, r)))
        } else {
            let right = Box::new(Tree::build(depth - 1, r));
            Tree::Node(Box::new(Tree::build(depth - 1, l)), right)
        }
    }
}

/// Sum of a tree's leaves.
#[divide_and_conquer]
pub fn tree_sum(t: &Tree) -> u64 {
    match t {
        Tree::Leaf(v) => *v,
        Tree::Node(l, r) => {
            let a = tree_sum(l);
            let b = tree_sum(r);
            a + b
        }
    }
}

/// [`tree_sum`] without the annotation.
pub fn tree_sum_plain(t: &Tree) -> u64 {
    match t {
        Tree::Leaf(v) => *v,
        Tree::Node(l, r) => {
            let a = tree_sum_plain(l);
            let b = tree_sum_plain(r);
            a + b
        }
    }
}

/// [`tree_sum`] with a hand-written cut-off (on the subtree's size, which
/// a user would have to know or compute).
#[divide_and_conquer]
pub fn tree_sum_cut(t: &Tree, depth: u32) -> u64 {
    if depth >= 10 {
        return tree_sum_plain(t);
    }
    match t {
        Tree::Leaf(v) => *v,
        Tree::Node(l, r) => {
            let a = tree_sum_cut(l, depth + 1);
            let b = tree_sum_cut(r, depth + 1);
            a + b
        }
    }
}

/// [`tree_sum`] with `rayon::join`.
pub fn tree_sum_rayon(t: &Tree) -> u64 {
    match t {
        Tree::Leaf(v) => *v,
        Tree::Node(l, r) => {
            let (a, b) = rayon::join(|| tree_sum_rayon(l), || tree_sum_rayon(r));
            a + b
        }
    }
}

/// [`tree_sum`] with `chili` (heartbeat scheduling) on `scope`.
pub fn tree_sum_chili(t: &Tree, scope: &mut chili::Scope<'_>) -> u64 {
    match t {
        Tree::Leaf(v) => *v,
        Tree::Node(l, r) => {
            let (a, b) = scope.join(|s| tree_sum_chili(l, s), |s| tree_sum_chili(r, s));
            a + b
        }
    }
}

/// Whether some of `items` add up to `target` (all of them are tried: the
/// search below has no solution, so every branch is explored).
#[divide_and_conquer]
pub fn subset_sum(items: &[u64], target: u64) -> bool {
    if target == 0 {
        return true;
    }
    let Some((&x, rest)) = items.split_first() else { return false };
    let with = if x <= target { subset_sum(rest, target - x) } else { false };
    let without = subset_sum(rest, target);
    with || without
}

/// [`subset_sum`] without the annotation.
pub fn subset_sum_plain(items: &[u64], target: u64) -> bool {
    if target == 0 {
        return true;
    }
    let Some((&x, rest)) = items.split_first() else { return false };
    let with = if x <= target { subset_sum_plain(rest, target - x) } else { false };
    let without = subset_sum_plain(rest, target);
    with || without
}

/// [`subset_sum`] with a hand-written cut-off.
#[divide_and_conquer]
pub fn subset_sum_cut(items: &[u64], target: u64) -> bool {
    if items.len() <= 12 {
        return subset_sum_plain(items, target);
    }
    if target == 0 {
        return true;
    }
    let Some((&x, rest)) = items.split_first() else { return false };
    let with = if x <= target { subset_sum_cut(rest, target - x) } else { false };
    let without = subset_sum_cut(rest, target);
    with || without
}

/// [`subset_sum`] with `rayon::join`.
pub fn subset_sum_rayon(items: &[u64], target: u64) -> bool {
    if target == 0 {
        return true;
    }
    let Some((&x, rest)) = items.split_first() else { return false };
    let (with, without) = rayon::join(
        || if x <= target { subset_sum_rayon(rest, target - x) } else { false },
        || subset_sum_rayon(rest, target),
    );
    with || without
}

/// Whether some of `items` add up to `target`, as a search: `||` between
/// the two calls, so that the first branch to find a subset ends the other
/// (whichever of the two it is), locally and on other nodes.
#[divide_and_conquer]
pub fn has_subset(items: &[u64], target: u64) -> bool {
    if target == 0 {
        return true;
    }
    let Some((&x, rest)) = items.split_first() else { return false };
    if x > target {
        return has_subset(rest, target);
    }
    has_subset(rest, target - x) || has_subset(rest, target)
}

/// [`has_subset`] without the annotation.
pub fn has_subset_plain(items: &[u64], target: u64) -> bool {
    if target == 0 {
        return true;
    }
    let Some((&x, rest)) = items.split_first() else { return false };
    if x > target {
        return has_subset_plain(rest, target);
    }
    has_subset_plain(rest, target - x) || has_subset_plain(rest, target)
}

/// [`has_subset`] with `rayon::join`: both branches run to their end.
pub fn has_subset_rayon(items: &[u64], target: u64) -> bool {
    if target == 0 {
        return true;
    }
    let Some((&x, rest)) = items.split_first() else { return false };
    if x > target {
        return has_subset_rayon(rest, target);
    }
    let (with, without) = rayon::join(|| has_subset_rayon(rest, target - x), || has_subset_rayon(rest, target));
    with || without
}

/// Where the subsets that reach a search's target lie.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Solution {
    /// Only among subsets with the first item: the branch read first.
    ReadFirst,
    /// Only among subsets without the first item: the branch read second.
    ReadSecond,
    /// Nowhere: every branch is searched.
    None,
}

/// `n` items and a target whose solutions lie where `at` says. The first
/// item is odd, every other item even: a subset with the first item has an
/// odd sum, one without it an even sum, so the target's parity decides
/// which root branch can hold a solution. The subset reaching it is items
/// 1 to n/4 (and the first item for `ReadFirst`): the first subset a
/// search of its branch tries, so a search that reaches that branch finds
/// it at once — and a search in reading order reaches it, for `ReadSecond`,
/// only after the whole branch read first.
pub fn search_input(n: usize, at: Solution) -> (Vec<u64>, u64) {
    // 40-bit even values: subset sums are then distinct in practice, so
    // the one subset built below is the only solution.
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut items: Vec<u64> = (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) & !1
        })
        .collect();
    items[0] |= 1;
    let chosen: u64 = items[1..=n / 4].iter().sum();
    let target = match at {
        Solution::ReadFirst => items[0] + chosen,
        Solution::ReadSecond => chosen,
        Solution::None => chosen | 1,
    };
    // No solution: an odd target above the sum of every item but the first
    // would be trivial; instead the first item is made too large to help.
    if at == Solution::None {
        items[0] = target + 1;
    }
    (items, target)
}

/// [`crate::fib::fib`] with a hand-written cut-off.
#[divide_and_conquer]
pub fn fib_cut(n: u32) -> u64 {
    if n < 20 {
        return crate::fib::fib_plain(n);
    }
    let x = fib_cut(n - 1);
    let y = fib_cut(n - 2);
    x + y
}

/// `n` pseudo-random values below 10^9 (xorshift, fixed seed).
pub fn random(n: usize, seed: u64) -> Vec<u64> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % 1_000_000_000
        })
        .collect()
}

/// `n` even items and an odd target: no subset sums to it, so the whole
/// tree of 2^n branches (less those over the target) is searched.
pub fn subset_input(n: usize) -> (Vec<u64>, u64) {
    let items: Vec<u64> = random(n, 7).iter().map(|v| 2 * (v % 1000) + 2).collect();
    let target = (items.iter().sum::<u64>() / 2) | 1;
    (items, target)
}
