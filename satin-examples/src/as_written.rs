//! Shapes of recursion as people write them, each beside the same body
//! without the annotation (and, where one exists, its `rayon` and `chili`
//! twin), for `benches/as_written.rs` and docs/performance.md, "Functions
//! as written": the chili benchmark's tree, whose children are `Option`s
//! read by a `match` in a `let`; a tree consumed by value; a skeleton over
//! a trait; negamax by play/undo on one board (its calls take turns: a
//! compile-time warning says so) and by copy-make; a memo shared through
//! `&mut` (its calls take turns too). (The closure integrand is
//! `quadrature`; the `for`-loop form of UTS is `uts::search_loop`.)

use satin::divide_and_conquer;
use serde::{Deserialize, Serialize};

/// The node of chili's (and spice's) benchmark tree.
pub struct Node {
    pub value: u64,
    pub left: Option<Box<Node>>,
    pub right: Option<Box<Node>>,
}

impl Node {
    /// A complete tree of `2^depth - 1` nodes, valued 1, as the benchmark
    /// has it — except that each node builds a pseudo-random one of its
    /// subtrees first (as `natural::Tree::build` does). Built left first
    /// everywhere, the nodes lie in memory in the order a walk that takes
    /// the right child first meets them backwards: such a walk (chili's
    /// `join` runs its second closure first) streams through memory, and
    /// a left-first one (the plain function) does not — 1.8 × between the
    /// two on one thread here, which is the layout, not the scheduler.
    pub fn build(depth: u32) -> Option<Box<Node>> {
        Node::build_from(depth, 0x9e37_79b9_7f4a_7c15)
    }

    /// The tree exactly as chili's benchmark builds it: the left subtree
    /// first everywhere.
    pub fn build_left_first(depth: u32) -> Option<Box<Node>> {
        if depth == 0 {
            return None;
        }
        let left = Node::build_left_first(depth - 1);
        let right = Node::build_left_first(depth - 1);
        Some(Box::new(Node { value: 1, left, right }))
    }

    fn build_from(depth: u32, seed: u64) -> Option<Box<Node>> {
        if depth == 0 {
            return None;
        }
        let next = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let (l, r) = (next, next.rotate_left(17));
        let (left, right) = if next >> 63 == 0 {
            let left = Node::build_from(depth - 1, l);
            (left, Node::build_from(depth - 1, r))
        } else {
            let right = Node::build_from(depth - 1, r);
            (Node::build_from(depth - 1, l), right)
        };
        Some(Box::new(Node { value: 1, left, right }))
    }
}

/// A position of a game, its value as a leaf, and the positions one move
/// away: a tree with 1–8 children per inner node.
#[derive(Serialize, Deserialize)]
pub struct Position {
    pub value: i64,
    pub moves: Vec<Position>,
}

impl Position {
    /// A tree of exactly `n` positions (`n ≥ 1`), each inner one with 1–8
    /// moves, pseudo-random from `seed`.
    pub fn build(n: usize, seed: u64) -> Position {
        let next = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let value = ((next >> 33) % 2001) as i64 - 1000;
        let below = n.saturating_sub(1);
        let k = (1 + (next >> 59) as usize % 8).min(below);
        let moves = (0..k)
            .map(|i| {
                let share = below / k + usize::from(i < below % k);
                Position::build(share, next.rotate_left(7 * i as u32 + 1))
            })
            .collect();
        Position { value, moves }
    }
}

/// The best value the player to move can force: the most of what the
/// opponent can hold them to, one move on. `max_value` and `min_value`
/// call each other and each carries the attribute alone.
#[divide_and_conquer]
pub fn max_value(p: &Position) -> i64 {
    if p.moves.is_empty() {
        return p.value;
    }
    p.moves.iter().map(|m| min_value(m)).max().unwrap_or(0)
}

/// The least value the opponent can hold the player to.
#[divide_and_conquer]
pub fn min_value(p: &Position) -> i64 {
    if p.moves.is_empty() {
        return p.value;
    }
    p.moves.iter().map(|m| max_value(m)).min().unwrap_or(0)
}

/// [`max_value`] without the annotation.
pub fn max_value_plain(p: &Position) -> i64 {
    if p.moves.is_empty() {
        return p.value;
    }
    p.moves.iter().map(min_value_plain).max().unwrap_or(0)
}

/// [`min_value`] without the annotation.
pub fn min_value_plain(p: &Position) -> i64 {
    if p.moves.is_empty() {
        return p.value;
    }
    p.moves.iter().map(max_value_plain).min().unwrap_or(0)
}

/// The monotone paths (right or down) from `(r, c)` to the far corner of
/// an `n × n` grid, or the first bad cell a path meets, in the order the
/// plain function meets them: `?` on each call.
#[divide_and_conquer]
pub fn grid_paths(r: u32, c: u32, n: u32, bad: (u32, u32)) -> Result<u64, (u32, u32)> {
    if (r, c) == bad {
        return Err(bad);
    }
    if r + 1 == n && c + 1 == n {
        return Ok(1);
    }
    let down = if r + 1 < n { grid_paths(r + 1, c, n, bad)? } else { 0 };
    let right = if c + 1 < n { grid_paths(r, c + 1, n, bad)? } else { 0 };
    Ok(down + right)
}

/// [`grid_paths`] without the annotation.
pub fn grid_paths_plain(r: u32, c: u32, n: u32, bad: (u32, u32)) -> Result<u64, (u32, u32)> {
    if (r, c) == bad {
        return Err(bad);
    }
    if r + 1 == n && c + 1 == n {
        return Ok(1);
    }
    let down = if r + 1 < n { grid_paths_plain(r + 1, c, n, bad)? } else { 0 };
    let right = if c + 1 < n { grid_paths_plain(r, c + 1, n, bad)? } else { 0 };
    Ok(down + right)
}

/// The sum of a tree's values, written as chili's benchmark writes it.
/// (`Node` has no serde: its calls stay on this process.)
#[divide_and_conquer(local)]
pub fn sum(node: &Node) -> u64 {
    let left = match &node.left {
        Some(l) => sum(l),
        None => 0,
    };
    let right = match &node.right {
        Some(r) => sum(r),
        None => 0,
    };
    node.value + left + right
}

/// [`sum`] without the annotation.
pub fn sum_plain(node: &Node) -> u64 {
    let left = match &node.left {
        Some(l) => sum_plain(l),
        None => 0,
    };
    let right = match &node.right {
        Some(r) => sum_plain(r),
        None => 0,
    };
    node.value + left + right
}

/// [`sum`] with `rayon::join`.
pub fn sum_rayon(node: &Node) -> u64 {
    let (left, right) =
        rayon::join(|| node.left.as_deref().map_or(0, sum_rayon), || node.right.as_deref().map_or(0, sum_rayon));
    node.value + left + right
}

/// [`sum`] with `chili` (the benchmark's own code).
pub fn sum_chili(node: &Node, scope: &mut chili::Scope<'_>) -> u64 {
    let (left, right) = scope.join(
        |s| node.left.as_deref().map_or(0, |l| sum_chili(l, s)),
        |s| node.right.as_deref().map_or(0, |r| sum_chili(r, s)),
    );
    node.value + left + right
}

/// A tree that a function consumes by value.
#[derive(Serialize, Deserialize, Clone, Debug)]
pub enum Owned {
    Leaf(u64),
    Node(Box<Owned>, Box<Owned>),
}

impl Owned {
    /// A complete tree of `2^depth` leaves.
    pub fn build(depth: u32, seed: u64) -> Owned {
        if depth == 0 {
            return Owned::Leaf(seed % 1000);
        }
        let next = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        Owned::Node(Box::new(Owned::build(depth - 1, next)), Box::new(Owned::build(depth - 1, next.rotate_left(17))))
    }
}

/// The sum of a tree's leaves, the tree taken by value.
#[divide_and_conquer]
pub fn total(t: Owned) -> u64 {
    match t {
        Owned::Leaf(v) => v,
        Owned::Node(l, r) => {
            let a = total(*l);
            let b = total(*r);
            a + b
        }
    }
}

/// [`total`] without the annotation.
pub fn total_plain(t: Owned) -> u64 {
    match t {
        Owned::Leaf(v) => v,
        Owned::Node(l, r) => total_plain(*l) + total_plain(*r),
    }
}

/// [`total`] with `rayon::join`.
pub fn total_rayon(t: Owned) -> u64 {
    match t {
        Owned::Leaf(v) => v,
        Owned::Node(l, r) => {
            let (a, b) = rayon::join(|| total_rayon(*l), || total_rayon(*r));
            a + b
        }
    }
}

/// A problem that splits into two of itself or is solved directly: the
/// skeleton [`dac`] runs any.
pub trait Problem: Sized {
    type Out;
    fn small(&self) -> bool;
    fn solve(&self) -> Self::Out;
    fn split(&self) -> (Self, Self);
    fn combine(a: Self::Out, b: Self::Out) -> Self::Out;
}

/// Divide and conquer over any [`Problem`] that can travel.
#[divide_and_conquer]
pub fn dac<P: Problem>(p: P) -> P::Out {
    if p.small() {
        return p.solve();
    }
    let (l, r) = p.split();
    let a = dac(l);
    let b = dac(r);
    P::combine(a, b)
}

/// The same skeleton for problems that borrow: their calls stay local.
#[divide_and_conquer(local)]
pub fn dac_here<P: Problem>(p: P) -> P::Out {
    if p.small() {
        return p.solve();
    }
    let (l, r) = p.split();
    let a = dac_here(l);
    let b = dac_here(r);
    P::combine(a, b)
}

/// [`dac`] without the annotation.
pub fn dac_plain<P: Problem>(p: P) -> P::Out {
    if p.small() {
        return p.solve();
    }
    let (l, r) = p.split();
    P::combine(dac_plain(l), dac_plain(r))
}

/// Counts the primes in a range: owns its data, travels.
#[derive(Serialize, Deserialize)]
pub struct Primes {
    pub lo: u64,
    pub hi: u64,
}

impl Problem for Primes {
    type Out = u64;
    fn small(&self) -> bool {
        self.hi - self.lo <= 2000
    }
    fn solve(&self) -> u64 {
        (self.lo..self.hi).filter(|&n| is_prime(n)).count() as u64
    }
    fn split(&self) -> (Self, Self) {
        let mid = (self.lo + self.hi) / 2;
        (Primes { lo: self.lo, hi: mid }, Primes { lo: mid, hi: self.hi })
    }
    fn combine(a: u64, b: u64) -> u64 {
        a + b
    }
}

fn is_prime(n: u64) -> bool {
    n >= 2 && (2..).take_while(|d| d * d <= n).all(|d| !n.is_multiple_of(d))
}

/// The number of inversions of a slice (by merge sort): borrows.
pub struct Inversions<'a>(pub &'a [u32]);

impl Problem for Inversions<'_> {
    type Out = (u64, Vec<u32>);
    fn small(&self) -> bool {
        self.0.len() <= 64
    }
    fn solve(&self) -> (u64, Vec<u32>) {
        let mut v = self.0.to_vec();
        let mut count = 0;
        for i in 1..v.len() {
            let mut j = i;
            while j > 0 && v[j - 1] > v[j] {
                v.swap(j - 1, j);
                count += 1;
                j -= 1;
            }
        }
        (count, v)
    }
    fn split(&self) -> (Self, Self) {
        let (a, b) = self.0.split_at(self.0.len() / 2);
        (Inversions(a), Inversions(b))
    }
    fn combine((ca, a): (u64, Vec<u32>), (cb, b): (u64, Vec<u32>)) -> (u64, Vec<u32>) {
        let mut out = Vec::with_capacity(a.len() + b.len());
        let (mut i, mut j, mut count) = (0, 0, ca + cb);
        while i < a.len() && j < b.len() {
            if a[i] <= b[j] {
                out.push(a[i]);
                i += 1;
            } else {
                out.push(b[j]);
                count += (a.len() - i) as u64;
                j += 1;
            }
        }
        out.extend_from_slice(&a[i..]);
        out.extend_from_slice(&b[j..]);
        (count, out)
    }
}

/// A board of a small game: cells taken in turn (1, -1); the score of a
/// full board is a weighted sum of its cells.
#[derive(Clone, Serialize, Deserialize)]
pub struct Board {
    pub cells: Vec<i8>,
}

impl Board {
    pub fn new(cells: usize) -> Board {
        Board { cells: vec![0; cells] }
    }
    fn moves(&self) -> Vec<usize> {
        (0..self.cells.len()).filter(|&i| self.cells[i] == 0).collect()
    }
    fn play(&mut self, m: usize, side: i8) {
        self.cells[m] = side;
    }
    fn undo(&mut self, m: usize) {
        self.cells[m] = 0;
    }
    fn with(&self, m: usize, side: i8) -> Board {
        let mut next = self.clone();
        next.play(m, side);
        next
    }
    fn score(&self) -> i64 {
        self.cells.iter().enumerate().map(|(i, &c)| i64::from(c) * ((i as i64 * 7) % 5 - 2)).sum()
    }
}

/// [`negamax_copies`] without the annotation.
pub fn negamax_copies_plain(board: &Board, depth: u32, side: i8) -> i64 {
    if depth == 0 {
        return i64::from(side) * board.score();
    }
    let mut best = i64::MIN + 1;
    for mv in board.moves() {
        let next = board.with(mv, side);
        let s = -negamax_copies_plain(&next, depth - 1, -side);
        best = best.max(s);
    }
    best
}

/// The shapes whose calls take turns, with the compile-time warnings
/// that say so allowed (a warning is an item beside the function, so the
/// allowance is the module's).
mod turns {
    #![allow(deprecated)]

    use super::Board;
    use satin::divide_and_conquer;

    /// Negamax by play/undo on one board, as written: its calls take turns
    /// (the compile-time warning, allowed here, says why and what to do).
    #[divide_and_conquer]
    pub fn negamax(board: &mut Board, depth: u32, side: i8) -> i64 {
        if depth == 0 {
            return i64::from(side) * board.score();
        }
        let mut best = i64::MIN + 1;
        for mv in board.moves() {
            board.play(mv, side);
            let s = -negamax(board, depth - 1, -side);
            board.undo(mv);
            best = best.max(s);
        }
        best
    }

    /// The number of ways to climb `n` steps one, two or three at a time,
    /// memoised in a map shared through `&mut`: its calls take turns (the
    /// warning, allowed here, says so).
    #[divide_and_conquer]
    pub fn climbs(n: u64, memo: &mut std::collections::HashMap<u64, u64>) -> u64 {
        if n < 3 {
            return [1, 1, 2][n as usize];
        }
        if let Some(&v) = memo.get(&n) {
            return v;
        }
        let v = climbs(n - 1, memo).wrapping_add(climbs(n - 2, memo)).wrapping_add(climbs(n - 3, memo));
        memo.insert(n, v);
        v
    }
}

pub use turns::{climbs, negamax};

/// [`negamax`] without the annotation.
pub fn negamax_plain(board: &mut Board, depth: u32, side: i8) -> i64 {
    if depth == 0 {
        return i64::from(side) * board.score();
    }
    let mut best = i64::MIN + 1;
    for mv in board.moves() {
        board.play(mv, side);
        let s = -negamax_plain(board, depth - 1, -side);
        board.undo(mv);
        best = best.max(s);
    }
    best
}

/// Negamax by copy-make: each call gets its own board, and every move's
/// call spawns.
#[divide_and_conquer]
pub fn negamax_copies(board: &Board, depth: u32, side: i8) -> i64 {
    if depth == 0 {
        return i64::from(side) * board.score();
    }
    let mut best = i64::MIN + 1;
    for mv in board.moves() {
        let next = board.with(mv, side);
        let s = -negamax_copies(&next, depth - 1, -side);
        best = best.max(s);
    }
    best
}

/// [`climbs`] without the annotation.
pub fn climbs_plain(n: u64, memo: &mut std::collections::HashMap<u64, u64>) -> u64 {
    if n < 3 {
        return [1, 1, 2][n as usize];
    }
    if let Some(&v) = memo.get(&n) {
        return v;
    }
    let v = climbs_plain(n - 1, memo).wrapping_add(climbs_plain(n - 2, memo)).wrapping_add(climbs_plain(n - 3, memo));
    memo.insert(n, v);
    v
}
