//! A loop that `?`s its calls starts no iteration after one whose call
//! failed, as the plain loop returns there: on one worker (where the
//! calls after the queue's first few run inline) the number of calls is
//! the plain function's, and the error is the plain function's.

use std::sync::atomic::{AtomicUsize, Ordering};

use satin::divide_and_conquer;

static ACCUMULATED: AtomicUsize = AtomicUsize::new(0);
static READ_IN_TURN: AtomicUsize = AtomicUsize::new(0);

/// `total += f(..)?` in a `for` loop (the loop form).
#[divide_and_conquer]
fn accumulated(depth: u32, k: u64) -> Result<u64, String> {
    if depth == 0 {
        ACCUMULATED.fetch_add(1, Ordering::Relaxed);
        return if k == 10 { Err(format!("bad cell {k}")) } else { Ok(k) };
    }
    let mut total = 0;
    for k in 0..100 {
        total += accumulated(depth - 1, k)?;
    }
    Ok(total)
}

/// `let v = f(..)?;` read in its own iteration (the fission form).
#[divide_and_conquer]
fn read_in_turn(depth: u32, k: u64) -> Option<u64> {
    if depth == 0 {
        READ_IN_TURN.fetch_add(1, Ordering::Relaxed);
        return (k != 10).then_some(k);
    }
    let mut best = 0;
    for k in 0..100 {
        let v = read_in_turn(depth - 1, k)?;
        best = best.max(v);
    }
    Some(best)
}

/// The calls `f` makes, counted by `counter`, and its result.
fn counted<T>(counter: &AtomicUsize, f: impl FnOnce() -> T) -> (usize, T) {
    counter.store(0, Ordering::Relaxed);
    let out = f();
    (counter.load(Ordering::Relaxed), out)
}

pub fn main() {
    // One worker that schedules (the plain function is what one worker
    // runs by default: nobody could take a call from it).
    let one = satin::Runtime::builder().workers(1).plain_when_alone(false).build().unwrap();
    let plain = counted(&ACCUMULATED, || satin::sequential(|| accumulated(1, 0)));
    assert_eq!(plain, (11, Err("bad cell 10".to_string())));
    assert_eq!(counted(&ACCUMULATED, || one.run(|| accumulated(1, 0))), plain);
    let plain = counted(&READ_IN_TURN, || satin::sequential(|| read_in_turn(1, 0)));
    assert_eq!(plain, (11, None));
    assert_eq!(counted(&READ_IN_TURN, || one.run(|| read_in_turn(1, 0))), plain);
    // On two workers the first error in order is still the answer.
    let two = satin::Runtime::builder().workers(2).build().unwrap();
    assert_eq!(two.run(|| accumulated(2, 0)), Err("bad cell 10".to_string()));
    assert_eq!(two.run(|| read_in_turn(2, 0)), None);
}
