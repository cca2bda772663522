#![deny(deprecated)]

use satin::divide_and_conquer;

#[derive(Clone, serde::Serialize, serde::Deserialize)]
pub struct Board {
    cells: Vec<i8>,
}

impl Board {
    fn moves(&self) -> Vec<usize> {
        (0..self.cells.len()).filter(|&i| self.cells[i] == 0).collect()
    }
    fn play(&mut self, m: usize) {
        self.cells[m] = 1;
    }
    fn undo(&mut self, m: usize) {
        self.cells[m] = 0;
    }
}

// A search that plays a move on one board, calls, and undoes it: the
// calls take turns, and the warning (an error here) says why and names
// copy-make. It compiles and runs as written without the lint.
#[divide_and_conquer]
pub fn search(board: &mut Board, depth: u32) -> i64 {
    if depth == 0 {
        return board.cells.iter().map(|&c| i64::from(c)).sum();
    }
    let mut best = i64::MIN + 1;
    for mv in board.moves() {
        board.play(mv);
        let s = -search(board, depth - 1);
        board.undo(mv);
        best = best.max(s);
    }
    best
}

// A memo shared through `&mut` by both calls: they take turns.
#[divide_and_conquer]
pub fn memo(n: u64, seen: &mut std::collections::HashMap<u64, u64>) -> u64 {
    if n < 2 {
        return n;
    }
    if let Some(&v) = seen.get(&n) {
        return v;
    }
    let v = memo(n - 1, seen) + memo(n - 2, seen);
    seen.insert(n, v);
    v
}

fn main() {}
