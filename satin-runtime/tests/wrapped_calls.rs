//! A call wrapped in what the statement does to its result — `-f(x)`,
//! `!f(x)`, `f(x) as u64`, `f(x).0`, `f(x).unwrap()`, `f(x)?` in any
//! nesting — spawns as the bare call does; the rest is applied where the
//! result is read.

use satin::{divide_and_conquer, Runtime};

/// A position of a small take-away game: `stones` left, and a salt that
/// makes the leaves differ.
#[derive(Clone, Copy, serde::Serialize, serde::Deserialize)]
struct Pos {
    stones: u32,
    salt: u64,
}

impl Pos {
    fn moves(self) -> impl Iterator<Item = Pos> {
        (1..=3u32.min(self.stones)).map(move |take| Pos {
            stones: self.stones - take,
            salt: self.salt.wrapping_mul(0x9e37_79b9_7f4a_7c15).wrapping_add(u64::from(take)),
        })
    }

    fn score(self) -> i64 {
        (self.salt >> 40) as i64 % 201 - 100
    }
}

/// Negamax as written: the child's score negated in a `let`, inside the
/// loop over the moves.
#[divide_and_conquer]
fn negamax(pos: Pos, depth: u32) -> i64 {
    if depth == 0 || pos.stones == 0 {
        return pos.score();
    }
    let mut best = i64::MIN + 1;
    for child in pos.moves() {
        let s = -negamax(child, depth - 1);
        best = best.max(s);
    }
    best
}

fn negamax_plain(pos: Pos, depth: u32) -> i64 {
    if depth == 0 || pos.stones == 0 {
        return pos.score();
    }
    let mut best = i64::MIN + 1;
    for child in pos.moves() {
        let s = -negamax_plain(child, depth - 1);
        best = best.max(s);
    }
    best
}

/// Two children, each result changed before it is kept: a negation, a
/// cast, a field, a method with a literal argument, and a `!`.
#[divide_and_conquer]
fn shapes(n: u64) -> (u64, bool) {
    if n < 2 {
        return (n, n.is_multiple_of(2));
    }
    let a = shapes(n - 1).0 as i64;
    let b = (shapes(n - 2).0.wrapping_mul(3)) as i64;
    let flip = !shapes(n - 2).1;
    let sum = (-a).unsigned_abs() + b.unsigned_abs();
    (sum % 1_000_003, flip)
}

fn shapes_plain(n: u64) -> (u64, bool) {
    if n < 2 {
        return (n, n.is_multiple_of(2));
    }
    let a = shapes_plain(n - 1).0 as i64;
    let b = (shapes_plain(n - 2).0.wrapping_mul(3)) as i64;
    let flip = !shapes_plain(n - 2).1;
    let sum = (-a).unsigned_abs() + b.unsigned_abs();
    (sum % 1_000_003, flip)
}

/// Results collected by a loop after a `?` and a negation.
#[divide_and_conquer]
fn signed_total(n: u32, bad: u32) -> Result<i64, String> {
    if n == 0 {
        return Ok(1);
    }
    if n == bad {
        return Err(format!("at {n}"));
    }
    let mut total = 0;
    for k in 1..=3 {
        total += -signed_total(n.saturating_sub(k), bad)?;
    }
    let mut parts = Vec::new();
    for k in 1..=2 {
        parts.push(signed_total(n.saturating_sub(k), bad)?.unsigned_abs().count_ones());
    }
    Ok(total + i64::from(parts.iter().sum::<u32>()) % 7)
}

fn signed_total_plain(n: u32, bad: u32) -> Result<i64, String> {
    if n == 0 {
        return Ok(1);
    }
    if n == bad {
        return Err(format!("at {n}"));
    }
    let mut total = 0;
    for k in 1..=3 {
        total += -signed_total_plain(n.saturating_sub(k), bad)?;
    }
    let mut parts = Vec::new();
    for k in 1..=2 {
        parts.push(signed_total_plain(n.saturating_sub(k), bad)?.unsigned_abs().count_ones());
    }
    Ok(total + i64::from(parts.iter().sum::<u32>()) % 7)
}

fn runtime() -> Runtime {
    Runtime::builder().workers(2).build().expect("a pool")
}

#[test]
fn a_negated_call_in_a_loop_spawns_every_child() {
    let rt = runtime();
    let root = Pos { stones: 14, salt: 7 };
    assert_eq!(rt.run(|| negamax(root, 9)), negamax_plain(root, 9));
    assert!(rt.stats().spawns > 0, "the negated calls ran one after another: {:?}", rt.stats());
}

#[test]
fn casts_fields_methods_and_nots_on_a_call_spawn_it() {
    let rt = runtime();
    assert_eq!(rt.run(|| shapes(16)), shapes_plain(16));
    assert!(rt.stats().spawns > 0, "the wrapped calls ran one after another: {:?}", rt.stats());
}

#[test]
fn collected_results_are_negated_and_question_marked_in_order() {
    let rt = runtime();
    assert_eq!(rt.run(|| signed_total(10, 99)), signed_total_plain(10, 99));
    assert!(rt.stats().spawns > 0, "the collected calls ran one after another: {:?}", rt.stats());
    // An error deep in the tree is the one the plain function returns.
    assert_eq!(rt.run(|| signed_total(10, 4)), signed_total_plain(10, 4));
    assert_eq!(signed_total_plain(10, 4), Err("at 4".to_string()));
}

/// Paths through a grid with walls, counted with a `?` on the calls in
/// the branches of conditional `let`s; a path longer than `limit` steps
/// is an error.
#[divide_and_conquer]
fn paths(walls: &[u32], r: u32, c: u32, limit: u32) -> Result<u64, String> {
    if r + c > limit {
        return Err(format!("longer than {limit} at ({r}, {c})"));
    }
    if r == 7 && c == 7 {
        return Ok(1);
    }
    let open = |r: u32, c: u32| r <= 7 && c <= 7 && walls[(r * 8 + c) as usize] == 0;
    let down = if open(r + 1, c) { paths(walls, r + 1, c, limit)? } else { 0 };
    let right = match open(r, c + 1) {
        true => paths(walls, r, c + 1, limit)?,
        false => 0,
    };
    Ok(down + right)
}

fn paths_plain(walls: &[u32], r: u32, c: u32, limit: u32) -> Result<u64, String> {
    if r + c > limit {
        return Err(format!("longer than {limit} at ({r}, {c})"));
    }
    if r == 7 && c == 7 {
        return Ok(1);
    }
    let open = |r: u32, c: u32| r <= 7 && c <= 7 && walls[(r * 8 + c) as usize] == 0;
    let down = if open(r + 1, c) { paths_plain(walls, r + 1, c, limit)? } else { 0 };
    let right = match open(r, c + 1) {
        true => paths_plain(walls, r, c + 1, limit)?,
        false => 0,
    };
    Ok(down + right)
}

#[test]
fn a_question_mark_in_the_branches_of_a_conditional_let_spawns_the_call() {
    let walls: Vec<u32> = (0..64u32).map(|i| u32::from(i % 11 == 5)).collect();
    let rt = runtime();
    let all = rt.run(|| paths(&walls, 0, 0, 14));
    assert_eq!(all, paths_plain(&walls, 0, 0, 14));
    assert!(all.as_ref().is_ok_and(|&n| n > 100), "{all:?}");
    assert!(rt.stats().spawns > 0, "the conditional calls ran one after another: {:?}", rt.stats());
    // Too short a limit: the error the plain function returns, the first
    // in order.
    assert_eq!(rt.run(|| paths(&walls, 0, 0, 9)), paths_plain(&walls, 0, 0, 9));
    assert!(paths_plain(&walls, 0, 0, 9).is_err());
}
