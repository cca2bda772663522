#![deny(deprecated)]

// Two annotated functions that call each other from different modules:
// neither attribute sees the other, so neither spawns — a warning (made an
// error here) at each one's call of the other, not a silently plain run.
mod maximise {
    use super::minimise::min_value;
    use satin::divide_and_conquer;

    #[divide_and_conquer]
    pub fn max_value(pos: u64, depth: u32) -> i64 {
        if depth == 0 {
            return pos as i64 % 7;
        }
        (0..3).map(|m| min_value(pos * 3 + m, depth - 1)).max().unwrap_or(0)
    }
}

mod minimise {
    use super::maximise::max_value;
    use satin::divide_and_conquer;

    #[divide_and_conquer]
    pub fn min_value(pos: u64, depth: u32) -> i64 {
        if depth == 0 {
            return pos as i64 % 5;
        }
        (0..3).map(|m| max_value(pos * 3 + m, depth - 1)).min().unwrap_or(0)
    }
}

// A function that recurses through a helper call and itself: no warning.
#[satin::divide_and_conquer]
fn sum(n: u64) -> u64 {
    if n < 2 {
        return leaf(n);
    }
    sum(n - 1) + sum(n - 2)
}

fn leaf(n: u64) -> u64 {
    n
}

fn main() {
    let _ = (maximise::max_value(0, 2), sum(3));
}
