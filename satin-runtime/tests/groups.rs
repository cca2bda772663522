//! Functions that call each other: the marked functions of an annotated
//! module (or `impl` block) form a group, and a call of any of them from
//! any of them spawns — minimax's `max_value`/`min_value`, a `solve` that
//! calls `search`.

use satin::Runtime;

/// A position's score: a hash of its number.
fn score(pos: u64) -> i64 {
    let x = pos.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    ((x >> 40) % 2001) as i64 - 1000
}

#[satin::divide_and_conquer]
mod game {
    use super::score;

    /// The best score the player to move can force, `depth` moves deep.
    #[divide_and_conquer]
    pub fn max_value(pos: u64, depth: u32) -> i64 {
        if depth == 0 {
            return score(pos);
        }
        (0..3).map(|m| min_value(pos * 3 + m + 1, depth - 1)).max().unwrap()
    }

    /// The best score the opponent can hold the player to.
    #[divide_and_conquer]
    pub fn min_value(pos: u64, depth: u32) -> i64 {
        if depth == 0 {
            return score(pos);
        }
        let mut worst = Vec::new();
        for m in 0..3 {
            worst.push(max_value(pos * 3 + m + 1, depth - 1));
        }
        worst.into_iter().min().unwrap()
    }

    /// Leaves below `pos`, counted by `search` on each half.
    #[divide_and_conquer]
    pub fn solve(depth: u32) -> u64 {
        let left = search(1, depth);
        let right = search(2, depth);
        left + right
    }

    #[divide_and_conquer]
    pub fn search(pos: u64, depth: u32) -> u64 {
        if depth == 0 {
            return pos % 7;
        }
        search(pos * 2, depth - 1) + search(pos * 2 + 1, depth - 1)
    }

    /// Not marked: an ordinary function of the module, left alone.
    pub fn helper() -> u32 {
        7
    }
}

fn max_plain(pos: u64, depth: u32) -> i64 {
    if depth == 0 {
        return score(pos);
    }
    (0..3).map(|m| min_plain(pos * 3 + m + 1, depth - 1)).max().unwrap()
}

fn min_plain(pos: u64, depth: u32) -> i64 {
    if depth == 0 {
        return score(pos);
    }
    (0..3).map(|m| max_plain(pos * 3 + m + 1, depth - 1)).min().unwrap()
}

fn search_plain(pos: u64, depth: u32) -> u64 {
    if depth == 0 {
        return pos % 7;
    }
    search_plain(pos * 2, depth - 1) + search_plain(pos * 2 + 1, depth - 1)
}

#[test]
fn functions_that_call_each_other_spawn_each_others_calls() {
    assert_eq!(game::helper(), 7);
    for workers in [1, 2, 4] {
        let rt = Runtime::builder().workers(workers).spawn_limit(usize::MAX).plain_when_alone(false).build().unwrap();
        assert_eq!(rt.run(|| game::max_value(0, 8)), max_plain(0, 8), "{workers} workers");
        let after_minimax = rt.stats().spawns;
        // Every inner position spawns its 3 children: 3 + 9 + … + 3^8.
        assert_eq!(after_minimax, (3u64.pow(9) - 3) / 2, "{:?}", rt.stats());
        assert_eq!(rt.run(|| game::solve(12)), search_plain(1, 12) + search_plain(2, 12));
        assert!(rt.stats().spawns > after_minimax + 1, "solve's calls of search did not spawn: {:?}", rt.stats());
    }
}
