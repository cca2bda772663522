//! Latent loops (`sched/latent.rs`): a loop whose worker runs a call
//! inline hands its later iterations to a worker that asks for work.
//!
//! Each test is built so that without the release it could not finish:
//! the first calls a loop runs inline wait until a *later* iteration of
//! the same loop has run on another worker, which only a release can give
//! that worker (a spawn limit of 1 makes the loop run its calls inline as
//! soon as one is queued). A watchdog turns a hang into a failure.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::Mutex;
use std::thread::{self, ThreadId};
use std::time::Duration;

use satin::{divide_and_conquer, Runtime};

const WIDTH: u32 = 64;

/// Runs `f` on another thread; fails (instead of hanging) if it has not
/// finished after a minute, which no correct run comes near.
fn finishes<R: Send + 'static>(what: &str, f: impl FnOnce() -> R + Send + 'static) -> R {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)));
    });
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(Ok(r)) => r,
        Ok(Err(p)) => std::panic::resume_unwind(p),
        Err(_) => panic!("{what}: no answer after 60 s: the loop's later iterations never reached the other worker"),
    }
}

fn pool() -> Runtime {
    Runtime::builder().workers(2).spawn_limit(1).build().expect("runtime starts")
}

/// A small binary tree: in lazy code its calls poll (every third level),
/// in parallel code they spawn; either way a request for work is seen.
#[divide_and_conquer]
fn pair(n: u32) -> u64 {
    if n == 0 {
        return 1;
    }
    pair(n - 1) + pair(n - 1)
}

struct Wait {
    root: Mutex<Option<ThreadId>>,
    late_elsewhere: AtomicBool,
    spins: AtomicU64,
}

impl Wait {
    const fn new() -> Wait {
        Wait { root: Mutex::new(None), late_elsewhere: AtomicBool::new(false), spins: AtomicU64::new(0) }
    }

    fn start(&self) {
        *self.root.lock().unwrap() = Some(thread::current().id());
        self.late_elsewhere.store(false, Ordering::SeqCst);
    }

    /// Iteration `i`: on the root's worker, an early iteration waits until
    /// a late one ran on the other worker; a late one elsewhere says so.
    fn visit(&self, i: u32) {
        let here = *self.root.lock().unwrap() == Some(thread::current().id());
        if !here && i >= WIDTH / 2 {
            self.late_elsewhere.store(true, Ordering::SeqCst);
        }
        while here && i < WIDTH / 2 && !self.late_elsewhere.load(Ordering::SeqCst) {
            self.spins.fetch_add(pair(3), Ordering::Relaxed);
        }
    }
}

static FOLDED: Wait = Wait::new();

#[divide_and_conquer]
fn folded(i: u32, root: bool) -> u64 {
    if root {
        FOLDED.start();
        return (0..WIDTH).map(|c| folded(c, false)).fold(0, |acc, v| acc * 3 + v);
    }
    FOLDED.visit(i);
    u64::from(i)
}

#[test]
fn a_folded_loop_releases_its_later_iterations_and_keeps_their_order() {
    let expected = (0..WIDTH).fold(0u64, |acc, v| acc * 3 + u64::from(v));
    let (value, stats) = finishes("fold", || {
        let rt = pool();
        let value = rt.run(|| folded(0, true));
        (value, rt.stats())
    });
    assert_eq!(value, expected, "results folded in iteration order");
    assert!(stats.released > 0, "no iteration was released: {stats:?}");
}

static COLLECTED: Wait = Wait::new();

#[divide_and_conquer]
fn collected(i: u32, root: bool) -> Vec<u32> {
    if root {
        COLLECTED.start();
        let parts: Vec<Vec<u32>> = (0..WIDTH).map(|c| collected(c, false)).collect();
        return parts.concat();
    }
    COLLECTED.visit(i);
    vec![i]
}

#[test]
fn a_collected_loop_releases_its_later_iterations_and_keeps_their_order() {
    let (value, stats) = finishes("collect", || {
        let rt = pool();
        let value = rt.run(|| collected(0, true));
        (value, rt.stats())
    });
    assert_eq!(value, (0..WIDTH).collect::<Vec<_>>(), "results collected in iteration order");
    assert!(stats.released > 0, "no iteration was released: {stats:?}");
}

static FAILING: Wait = Wait::new();

fn checked(i: u32) -> u32 {
    assert!(i != WIDTH / 2 + 5, "no iteration {i}");
    i
}

#[divide_and_conquer]
fn failing(i: u32, root: bool) -> u64 {
    if root {
        FAILING.start();
        return (0..WIDTH).map(|c| failing(checked(c), false)).sum();
    }
    FAILING.visit(i);
    u64::from(i)
}

/// The iterator that makes the calls is user code; a release runs it for a
/// loop suspended below, maybe under an unrelated job. Its panic surfaces
/// from the loop, where the plain function would have met it.
#[test]
fn a_panic_while_releasing_reaches_the_caller_from_the_loop() {
    let message = finishes("panic", || {
        let rt = pool();
        let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| rt.run(|| failing(0, true)))).unwrap_err();
        let message = err.downcast_ref::<String>().cloned().unwrap_or_default();
        // The pool still works.
        assert_eq!(rt.run(|| pair(10)), 1024);
        message
    });
    assert_eq!(message, format!("no iteration {}", WIDTH / 2 + 5));
}

/// A node of a critical branching tree: its state, and its number of
/// children (200 at the root, then 8 with probability 1/8).
fn branch(seed: u64, depth: u32) -> (u64, u32) {
    let x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29) ^ seed;
    let n = match depth {
        0 => 200,
        _ if x.is_multiple_of(8) => 8,
        _ => 0,
    };
    (x, n)
}

/// Its size and depth.
#[divide_and_conquer]
fn binomial(seed: u64, depth: u32) -> (u64, u32) {
    let (x, n) = branch(seed, depth);
    (0..n)
        .map(|i| binomial(x.wrapping_add(u64::from(i) + 1), depth + 1))
        .fold((1, depth), |a, b| (a.0 + b.0, a.1.max(b.1)))
}

/// [`binomial`] without the annotation.
fn binomial_plain(seed: u64, depth: u32) -> (u64, u32) {
    let (x, n) = branch(seed, depth);
    (0..n)
        .map(|i| binomial_plain(x.wrapping_add(u64::from(i) + 1), depth + 1))
        .fold((1, depth), |a, b| (a.0 + b.0, a.1.max(b.1)))
}

#[test]
fn an_irregular_tree_gives_the_plain_answer_on_every_pool() {
    let expected = binomial_plain(7, 0);
    assert!(expected.0 > 1_000, "a tree worth the test: {expected:?}");
    for (workers, limit) in [(1, 4), (2, 1), (2, 4), (3, 2)] {
        let rt = Runtime::builder().workers(workers).spawn_limit(limit).build().expect("runtime starts");
        for _ in 0..5 {
            assert_eq!(rt.run(|| binomial(7, 0)), expected, "{workers} workers, spawn limit {limit}");
        }
    }
}
