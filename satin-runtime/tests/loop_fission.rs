//! Loops that read each call's result in the same iteration: every
//! iteration's call spawns, and the rest of the body runs in order as the
//! results are read (loop fission).

use satin::{divide_and_conquer, Runtime};

/// Keeps the best child and counts the children, reading each result in
/// its own iteration, with a `let` before the call and a `continue`.
#[divide_and_conquer]
fn best_leaf(node: u64, depth: u32) -> u64 {
    if depth == 0 {
        return node.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 54;
    }
    let (mut best, mut seen) = (0, 0);
    for k in 0..4 {
        let child = node * 4 + k + 1;
        let value = best_leaf(child, depth - 1);
        seen += 1;
        if value <= best {
            continue;
        }
        best = value;
    }
    best + seen - 4
}

fn best_leaf_plain(node: u64, depth: u32) -> u64 {
    if depth == 0 {
        return node.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 54;
    }
    let (mut best, mut seen) = (0, 0);
    for k in 0..4 {
        let child = node * 4 + k + 1;
        let value = best_leaf_plain(child, depth - 1);
        seen += 1;
        if value <= best {
            continue;
        }
        best = value;
    }
    best + seen - 4
}

/// `?` on the call, and a `break` and a `return` after it: the results are
/// read in order, so the first error in order is the one returned.
#[divide_and_conquer]
fn first_over(items: &[u64], limit: u64) -> Result<Vec<u64>, u64> {
    if items.len() <= 2 {
        return match items.iter().find(|&&x| x > limit) {
            Some(&x) => Err(x),
            None => Ok(items.to_vec()),
        };
    }
    let mut kept = Vec::new();
    for chunk in items.chunks(items.len().div_ceil(3)) {
        let part = first_over(chunk, limit)?;
        if part.is_empty() {
            break;
        }
        if part.len() > 1_000_000 {
            return Ok(part);
        }
        kept.extend(part);
    }
    Ok(kept)
}

#[test]
fn a_loop_that_reads_each_result_spawns_every_iteration() {
    for workers in [1, 2, 4] {
        let rt = Runtime::builder().workers(workers).spawn_limit(usize::MAX).plain_when_alone(false).build().unwrap();
        assert_eq!(rt.run(|| best_leaf(0, 8)), best_leaf_plain(0, 8), "{workers} workers");
        // Every inner node spawns its 4 calls: 4 + 16 + … + 4^8.
        assert_eq!(rt.stats().spawns, (4u64.pow(9) - 4) / 3, "{:?}", rt.stats());
        let items: Vec<u64> = (0..3000).collect();
        assert_eq!(rt.run(|| first_over(&items, 5000)), Ok(items.clone()));
        let mut bad = items.clone();
        bad[700] = 9000;
        bad[2500] = 8000;
        assert_eq!(rt.run(|| first_over(&bad, 5000)), Err(9000), "the first error in order");
    }
}
