#![deny(deprecated)]

// Copy-make in a loop over a shared board: no warning (a method called
// on a parameter bound without `mut` cannot change it), and each child,
// borrowed by its spawned call, outlives its iteration.
use satin::divide_and_conquer;

#[derive(Clone, serde::Serialize, serde::Deserialize)]
pub struct Board {
    cells: Vec<i8>,
}

impl Board {
    fn moves(&self) -> Vec<usize> {
        (0..self.cells.len()).filter(|&i| self.cells[i] == 0).collect()
    }
    fn with(&self, m: usize) -> Board {
        let mut next = self.clone();
        next.cells[m] = 1;
        next
    }
}

#[divide_and_conquer(strict)]
fn search(board: &Board, depth: u32) -> i64 {
    if depth == 0 {
        return board.cells.iter().map(|&c| i64::from(c)).sum();
    }
    let mut best = i64::MIN + 1;
    for mv in board.moves() {
        let child = board.with(mv);
        let s = -search(&child, depth - 1);
        best = best.max(s);
    }
    best
}

pub fn main() {
    assert_eq!(search(&Board { cells: vec![0; 4] }, 2), 2);
}
