//! A search that plays a move on one board, calls, and undoes it — and a
//! memo shared through `&mut` — compile as written and give the plain
//! function's answer (their calls take turns; a compile-time warning says
//! why, allowed here: see `tests/compile-errors/ui/play_undo.rs`).
#![allow(deprecated)]

use satin::{divide_and_conquer, Runtime};
use std::collections::HashMap;

#[derive(Clone, serde::Serialize, serde::Deserialize)]
pub struct Board {
    cells: Vec<i8>,
}

impl Board {
    fn moves(&self) -> Vec<usize> {
        (0..self.cells.len()).filter(|&i| self.cells[i] == 0).collect()
    }
    fn play(&mut self, m: usize, side: i8) {
        self.cells[m] = side;
    }
    fn undo(&mut self, m: usize) {
        self.cells[m] = 0;
    }
    /// The board after `m` (copy-make).
    fn with(&self, m: usize, side: i8) -> Board {
        let mut next = self.clone();
        next.play(m, side);
        next
    }
    fn score(&self) -> i64 {
        self.cells.iter().enumerate().map(|(i, &c)| i64::from(c) * (i as i64 % 5 - 2)).sum()
    }
}

#[divide_and_conquer]
fn search(board: &mut Board, depth: u32, side: i8) -> i64 {
    if depth == 0 {
        return i64::from(side) * board.score();
    }
    let mut best = i64::MIN + 1;
    for mv in board.moves() {
        board.play(mv, side);
        let s = -search(board, depth - 1, -side);
        board.undo(mv);
        best = best.max(s);
    }
    best
}

fn search_plain(board: &mut Board, depth: u32, side: i8) -> i64 {
    if depth == 0 {
        return i64::from(side) * board.score();
    }
    let mut best = i64::MIN + 1;
    for mv in board.moves() {
        board.play(mv, side);
        let s = -search_plain(board, depth - 1, -side);
        board.undo(mv);
        best = best.max(s);
    }
    best
}

/// The same search by copy-make: each call gets its own board.
#[divide_and_conquer]
fn search_copies(board: &Board, depth: u32, side: i8) -> i64 {
    if depth == 0 {
        return i64::from(side) * board.score();
    }
    let mut best = i64::MIN + 1;
    for mv in board.moves() {
        let next = board.with(mv, side);
        let s = -search_copies(&next, depth - 1, -side);
        best = best.max(s);
    }
    best
}

/// Copy-make with the children's results added up (`+=`) and pushed:
/// each child, borrowed by its spawned call, is kept until the joins.
#[divide_and_conquer]
fn leaves_below(board: &Board, depth: u32, side: i8) -> i64 {
    if depth == 0 {
        return board.score();
    }
    let mut sum = 0;
    for mv in board.moves() {
        let child = board.with(mv, side);
        sum += leaves_below(&child, depth - 1, -side);
    }
    sum
}

#[divide_and_conquer]
fn child_scores(board: &Board, depth: u32, side: i8) -> Vec<i64> {
    let mut out = Vec::new();
    for mv in board.moves() {
        let child = board.with(mv, side);
        out.push(leaves_below(&child, depth, -side));
    }
    out
}

#[divide_and_conquer]
fn memo(n: u64, seen: &mut HashMap<u64, u64>) -> u64 {
    if n < 2 {
        return n;
    }
    if let Some(&v) = seen.get(&n) {
        return v;
    }
    let v = memo(n - 1, seen).wrapping_add(memo(n - 2, seen));
    seen.insert(n, v);
    v
}

#[test]
fn play_and_undo_on_one_board_and_a_shared_memo_give_the_plain_answers() {
    let rt = Runtime::builder().workers(2).build().expect("a pool");
    let mut board = Board { cells: vec![0; 7] };
    let expected = search_plain(&mut board.clone(), 5, 1);
    assert_eq!(rt.run(|| search(&mut board, 5, 1)), expected);
    assert!(board.cells.iter().all(|&c| c == 0), "every move was undone");
    // By copy-make, every move's call spawns.
    // (Each `next` is borrowed by its spawned call beyond its iteration:
    // the rewritten loop keeps it until the calls are joined, E0597 before.)
    let fresh = Board { cells: vec![0; 7] };
    let before = rt.stats().spawns;
    assert_eq!(rt.run(|| search_copies(&fresh, 5, 1)), expected);
    assert!(rt.stats().spawns > before, "copy-make ran one call after another: {:?}", rt.stats());
    let plain = |b: &Board| -> Vec<i64> {
        fn below(b: &Board, depth: u32, side: i8) -> i64 {
            if depth == 0 {
                return b.score();
            }
            b.moves().into_iter().map(|m| below(&b.with(m, side), depth - 1, -side)).sum()
        }
        b.moves().into_iter().map(|m| below(&b.with(m, 1), 4, -1)).collect()
    };
    let before = rt.stats().spawns;
    assert_eq!(rt.run(|| child_scores(&fresh, 4, 1)), plain(&fresh));
    assert!(rt.stats().spawns > before, "the collectors spawned nothing: {:?}", rt.stats());
    let mut seen = HashMap::new();
    assert_eq!(rt.run(|| memo(90, &mut seen)), 2_880_067_194_370_816_120);
    assert_eq!(seen.len(), 89);
}
