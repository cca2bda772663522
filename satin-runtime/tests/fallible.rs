//! Functions that return `Result` or `Option` and `?` their calls: the
//! calls spawn, the error returned is the one the plain function returns
//! (the first in the order written), and an error aborts the calls after
//! it, which nobody reads.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use satin::{divide_and_conquer, Runtime};

/// Leaves visited by `checked_sum` (this file's tests that call it run one
/// at a time through `COUNTED`).
static VISITED: AtomicU64 = AtomicU64::new(0);
static COUNTED: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The sum of the leaves `lo..hi`, or the first leaf in `bad` as an error.
#[divide_and_conquer]
fn checked_sum(lo: u64, hi: u64, bad: &[u64]) -> Result<u64, String> {
    if hi - lo == 1 {
        VISITED.fetch_add(1, Ordering::Relaxed);
        return if bad.contains(&lo) { Err(format!("leaf {lo}")) } else { Ok(lo) };
    }
    let mid = (lo + hi) / 2;
    let left = checked_sum(lo, mid, bad)?;
    let right = checked_sum(mid, hi, bad)?;
    Ok(left + right)
}

fn checked_sum_plain(lo: u64, hi: u64, bad: &[u64]) -> Result<u64, String> {
    if hi - lo == 1 {
        return if bad.contains(&lo) { Err(format!("leaf {lo}")) } else { Ok(lo) };
    }
    let mid = (lo + hi) / 2;
    let left = checked_sum_plain(lo, mid, bad)?;
    let right = checked_sum_plain(mid, hi, bad)?;
    Ok(left + right)
}

/// `f(a)? + f(b)?` in one expression, over `Option`.
#[divide_and_conquer]
fn sum_below(lo: u64, hi: u64, limit: u64) -> Option<u64> {
    if hi - lo == 1 {
        return (lo < limit).then_some(lo);
    }
    let mid = (lo + hi) / 2;
    Some(sum_below(lo, mid, limit)? + sum_below(mid, hi, limit)?)
}

/// `f(a)?; f(b)?;` as statements: a check that returns nothing.
#[divide_and_conquer]
fn all_even_sized(lo: u64, hi: u64, odd_from: u64) -> Result<(), u64> {
    if hi - lo == 1 {
        return if lo >= odd_from { Err(lo) } else { Ok(()) };
    }
    let mid = (lo + hi) / 2;
    all_even_sized(lo, mid, odd_from)?;
    all_even_sized(mid, hi, odd_from)?;
    Ok(())
}

/// `total += f(..)?` and `v.push(f(..)?)` in a loop over children.
#[divide_and_conquer]
fn tree_count(depth: u32, fan: u64, node: u64, bad: u64) -> Result<u64, u64> {
    if node == bad {
        return Err(node);
    }
    if depth == 0 {
        return Ok(1);
    }
    let mut total = 1;
    for child in 0..fan {
        total += tree_count(depth - 1, fan, node * fan + child + 1, bad)?;
    }
    let mut sizes = Vec::new();
    for child in 0..2 {
        sizes.push(tree_count(depth - 1, 2, node * 2 + child + 1, u64::MAX)?);
    }
    Ok(total + sizes.iter().sum::<u64>())
}

fn tree_count_plain(depth: u32, fan: u64, node: u64, bad: u64) -> Result<u64, u64> {
    if node == bad {
        return Err(node);
    }
    if depth == 0 {
        return Ok(1);
    }
    let mut total = 1;
    for child in 0..fan {
        total += tree_count_plain(depth - 1, fan, node * fan + child + 1, bad)?;
    }
    let mut sizes = Vec::new();
    for child in 0..2 {
        sizes.push(tree_count_plain(depth - 1, 2, node * 2 + child + 1, u64::MAX)?);
    }
    Ok(total + sizes.iter().sum::<u64>())
}

fn runtimes() -> Vec<Runtime> {
    [1, 2, 4].into_iter().map(|w| Runtime::builder().workers(w).build().unwrap()).collect()
}

#[test]
fn results_and_errors_match_the_plain_function() {
    let _alone = COUNTED.lock().unwrap_or_else(|e| e.into_inner());
    let n = 1 << 12;
    let cases: [&[u64]; 5] = [&[], &[3], &[n - 2], &[100, 3000], &[3000, 100]];
    for rt in runtimes() {
        for bad in cases {
            let got = rt.run(|| checked_sum(0, n, bad));
            assert_eq!(got, checked_sum_plain(0, n, bad), "bad leaves {bad:?}, {} workers", rt.workers());
        }
        assert_eq!(rt.run(|| sum_below(0, 1024, 2000)), Some(1023 * 512));
        assert_eq!(rt.run(|| sum_below(0, 1024, 1000)), None);
        assert_eq!(rt.run(|| all_even_sized(0, 1024, 2000)), Ok(()));
        assert_eq!(rt.run(|| all_even_sized(0, 1024, 700)), Err(700), "the first error in order");
        for bad in [u64::MAX, 2, 40, 300] {
            assert_eq!(rt.run(|| tree_count(5, 3, 0, bad)), tree_count_plain(5, 3, 0, bad), "bad node {bad}");
        }
    }
}

#[test]
fn question_marked_calls_spawn() {
    let _alone = COUNTED.lock().unwrap_or_else(|e| e.into_inner());
    let rt = Runtime::builder().workers(2).spawn_limit(usize::MAX).build().unwrap();
    assert_eq!(rt.run(|| checked_sum(0, 1 << 10, &[])), Ok((0..1 << 10).sum()));
    // One spawn per inner node's `let right = ..?`.
    assert_eq!(rt.stats().spawns, (1 << 10) - 1, "{:?}", rt.stats());
    let before = rt.stats().spawns;
    rt.run(|| sum_below(0, 256, 1000)).unwrap();
    rt.run(|| all_even_sized(0, 256, 1000)).unwrap();
    rt.run(|| tree_count(3, 3, 0, u64::MAX)).unwrap();
    assert!(rt.stats().spawns > before + 2 * 255, "{:?}", rt.stats());
}

/// The calls `race_error` makes: the root calls `LEFT` then `RIGHT`.
const ROOT: u8 = 0;
const LEFT: u8 = 1;
const RIGHT: u8 = 2;
const PROBE: u8 = 3;
static RIGHT_STARTED: AtomicBool = AtomicBool::new(false);
static RIGHT_FINISHED: AtomicBool = AtomicBool::new(false);

/// `LEFT` fails once `RIGHT`, spawned before it, is running on another
/// worker (`wait_for_right`); `RIGHT` keeps making calls until it is
/// aborted. It finishes only if the abort never comes (after a minute, so
/// that a broken abort fails the test instead of hanging it).
#[divide_and_conquer]
fn race_error(part: u8, wait_for_right: bool) -> Result<u64, String> {
    match part {
        ROOT => {
            let left = race_error(LEFT, wait_for_right)?;
            let right = race_error(RIGHT, wait_for_right)?;
            Ok(left + right)
        }
        LEFT => {
            while wait_for_right && !RIGHT_STARTED.load(Ordering::Acquire) {
                std::thread::yield_now();
            }
            Err("left failed".into())
        }
        RIGHT => {
            RIGHT_STARTED.store(true, Ordering::Release);
            let give_up = std::time::Instant::now() + std::time::Duration::from_secs(60);
            let mut calls = 0;
            while std::time::Instant::now() < give_up {
                // Each call is a spawn point, where an abort is noticed.
                calls += race_error(PROBE, wait_for_right)?;
                std::thread::yield_now();
            }
            RIGHT_FINISHED.store(true, Ordering::Release);
            Ok(calls)
        }
        _ => Ok(1),
    }
}

#[test]
fn an_early_error_aborts_the_calls_after_it() {
    let _alone = COUNTED.lock().unwrap_or_else(|e| e.into_inner());
    // One worker: the calls queued after the error never run; leaves 0 to 3
    // are all that is visited.
    let rt = Runtime::builder().workers(1).plain_when_alone(false).build().unwrap();
    let n = 1u64 << 14;
    VISITED.store(0, Ordering::Relaxed);
    assert_eq!(rt.run(|| checked_sum(0, n, &[3])), Err("leaf 3".into()));
    assert_eq!(VISITED.load(Ordering::Relaxed), 4, "only the leaves up to the error run");
    // Several workers: a call after the error that is already running on
    // another worker is stopped, and the error is the answer.
    for rt in runtimes().into_iter().filter(|rt| rt.workers() > 1) {
        RIGHT_STARTED.store(false, Ordering::Release);
        RIGHT_FINISHED.store(false, Ordering::Release);
        assert_eq!(rt.run(|| race_error(ROOT, true)), Err("left failed".into()));
        assert!(RIGHT_STARTED.load(Ordering::Acquire), "{} workers: the right call ran", rt.workers());
        assert!(!RIGHT_FINISHED.load(Ordering::Acquire), "{} workers: the right call was aborted", rt.workers());
    }
}
