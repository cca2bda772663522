//! Counting N-queens solutions, row by row with bitmasks.

use satin::divide_and_conquer;

/// Rows left to fill below which a board is finished sequentially: the
/// grain size. 7 rows leave a few thousand parallel jobs for n = 14.
pub const SEQUENTIAL_ROWS: u32 = 7;

/// Solutions that extend a board whose filled rows occupy columns `cols` and
/// attack the next row along `left` and `right` diagonals.
#[divide_and_conquer]
pub fn nqueens(n: u32, cols: u32, left: u32, right: u32) -> u64 {
    let full = (1u32 << n) - 1;
    if cols == full {
        return 1;
    }
    if n - cols.count_ones() <= SEQUENTIAL_ROWS {
        return nqueens_plain(n, cols, left, right);
    }
    let mut count = 0;
    let mut free = !(cols | left | right) & full;
    while free != 0 {
        let bit = free & free.wrapping_neg();
        free ^= bit;
        count += nqueens(n, cols | bit, ((left | bit) << 1) & full, (right | bit) >> 1);
    }
    count
}

/// Number of ways to place `n` non-attacking queens on an n×n board (n ≤ 31).
pub fn solutions(n: u32) -> u64 {
    nqueens(n, 0, 0, 0)
}

/// The same search without the annotation.
pub fn nqueens_plain(n: u32, cols: u32, left: u32, right: u32) -> u64 {
    let full = (1u32 << n) - 1;
    if cols == full {
        return 1;
    }
    let mut count = 0;
    let mut free = !(cols | left | right) & full;
    while free != 0 {
        let bit = free & free.wrapping_neg();
        free ^= bit;
        count += nqueens_plain(n, cols | bit, ((left | bit) << 1) & full, (right | bit) >> 1);
    }
    count
}

/// The same search with rayon: one `join` per pair of candidate columns,
/// and the same sequential cut-off.
pub fn nqueens_rayon(n: u32, cols: u32, left: u32, right: u32) -> u64 {
    let full = (1u32 << n) - 1;
    if cols == full {
        return 1;
    }
    if n - cols.count_ones() <= SEQUENTIAL_ROWS {
        return nqueens_plain(n, cols, left, right);
    }
    let mut bits = Vec::with_capacity(n as usize);
    let mut free = !(cols | left | right) & full;
    while free != 0 {
        let bit = free & free.wrapping_neg();
        free ^= bit;
        bits.push(bit);
    }
    fn over(bits: &[u32], n: u32, cols: u32, left: u32, right: u32, full: u32) -> u64 {
        match bits {
            [] => 0,
            [bit] => nqueens_rayon(n, cols | bit, ((left | bit) << 1) & full, (right | bit) >> 1),
            _ => {
                let (a, b) = bits.split_at(bits.len() / 2);
                let (x, y) =
                    rayon::join(|| over(a, n, cols, left, right, full), || over(b, n, cols, left, right, full));
                x + y
            }
        }
    }
    over(&bits, n, cols, left, right, full)
}
