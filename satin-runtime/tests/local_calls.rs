//! Functions whose parameters cannot travel — a closure, a value that
//! borrows with a lifetime, a trait object, a function pointer, a type
//! without serde under `local` — compile with only the attribute, run in
//! parallel on the process's workers, give the plain answer, and are
//! passed by remote thieves. A compile-time note says why their calls
//! stay (allowed here; the notes themselves:
//! `tests/compile-errors/ui/closure_param.rs`, `fn_pointer_param.rs`).
#![allow(deprecated)]

use std::sync::{mpsc, Arc, Mutex};

use satin::dist::{ExecEvent, LocalExecutor};
use satin::proto::{Executor, JobSpec, SharedTable};
use satin::{divide_and_conquer, encode_job, Job, Runtime};

fn simpson<F: Fn(f64) -> f64>(f: &F, a: f64, b: f64) -> f64 {
    (b - a) / 6.0 * (f(a) + 4.0 * f((a + b) / 2.0) + f(b))
}

/// Adaptive Simpson quadrature of any integrand.
#[divide_and_conquer]
fn integrate<F: Fn(f64) -> f64 + Sync>(f: &F, a: f64, b: f64, eps: f64, whole: f64) -> f64 {
    let m = (a + b) / 2.0;
    let (left, right) = (simpson(f, a, m), simpson(f, m, b));
    if (left + right - whole).abs() <= 15.0 * eps || b - a < 1e-9 {
        return left + right + (left + right - whole) / 15.0;
    }
    let l = integrate(f, a, m, eps / 2.0, left);
    let r = integrate(f, m, b, eps / 2.0, right);
    l + r
}

fn integrate_plain<F: Fn(f64) -> f64>(f: &F, a: f64, b: f64, eps: f64, whole: f64) -> f64 {
    let m = (a + b) / 2.0;
    let (left, right) = (simpson(f, a, m), simpson(f, m, b));
    if (left + right - whole).abs() <= 15.0 * eps || b - a < 1e-9 {
        return left + right + (left + right - whole) / 15.0;
    }
    integrate_plain(f, a, m, eps / 2.0, left) + integrate_plain(f, m, b, eps / 2.0, right)
}

/// A view of a slice: a value that borrows.
#[derive(Clone, Copy)]
struct Window<'a> {
    data: &'a [i64],
}

/// (best sum, best prefix, best suffix, total) of a window.
#[divide_and_conquer]
fn max_subarray<'a>(w: Window<'a>) -> (i64, i64, i64, i64) {
    if w.data.len() <= 64 {
        return max_subarray_plain(w);
    }
    let (l, r) = w.data.split_at(w.data.len() / 2);
    let a = max_subarray(Window { data: l });
    let b = max_subarray(Window { data: r });
    (a.0.max(b.0).max(a.2 + b.1), a.1.max(a.3 + b.1), b.2.max(b.3 + a.2), a.3 + b.3)
}

fn max_subarray_plain(w: Window<'_>) -> (i64, i64, i64, i64) {
    let (mut best, mut here, mut prefix, mut total) = (i64::MIN, 0i64, i64::MIN, 0i64);
    for &x in w.data {
        here = x.max(here + x);
        best = best.max(here);
        total += x;
        prefix = prefix.max(total);
    }
    let mut suffix = i64::MIN;
    let mut sum = 0;
    for &x in w.data.iter().rev() {
        sum += x;
        suffix = suffix.max(sum);
    }
    (best, prefix, suffix, total)
}

/// A sum over a range with the term given as a trait object.
#[divide_and_conquer]
fn sum_of(term: &(dyn Fn(u64) -> u64 + Sync), lo: u64, hi: u64) -> u64 {
    if hi - lo <= 1000 {
        return (lo..hi).map(term).sum();
    }
    let mid = (lo + hi) / 2;
    sum_of(term, lo, mid) + sum_of(term, mid, hi)
}

/// A sum over a range with the term given as a function pointer.
#[divide_and_conquer]
fn sum_fn(term: fn(u64) -> u64, lo: u64, hi: u64) -> u64 {
    if hi - lo <= 1000 {
        return (lo..hi).map(term).sum();
    }
    let mid = (lo + hi) / 2;
    sum_fn(term, lo, mid) + sum_fn(term, mid, hi)
}

fn cube(x: u64) -> u64 {
    x * x * x % 1_000_003
}

/// A type without serde.
#[derive(Clone, Copy)]
struct Span {
    lo: u64,
    hi: u64,
}

#[divide_and_conquer(local)]
fn count_odd(s: Span) -> u64 {
    if s.hi - s.lo <= 1000 {
        return (s.lo..s.hi).filter(|x| x % 2 == 1).count() as u64;
    }
    let mid = (s.lo + s.hi) / 2;
    count_odd(Span { lo: s.lo, hi: mid }) + count_odd(Span { lo: mid, hi: s.hi })
}

/// A result without serde: a local function's results stay in their
/// process too.
#[derive(Debug, PartialEq, Eq)]
struct Tally {
    odd: u64,
    largest: Option<u64>,
}

#[divide_and_conquer(local)]
fn tally(s: Span) -> Tally {
    if s.hi - s.lo <= 1000 {
        return Tally { odd: (s.lo..s.hi).filter(|x| x % 2 == 1).count() as u64, largest: s.hi.checked_sub(1) };
    }
    let mid = (s.lo + s.hi) / 2;
    let a = tally(Span { lo: s.lo, hi: mid });
    let b = tally(Span { lo: mid, hi: s.hi });
    Tally { odd: a.odd + b.odd, largest: a.largest.max(b.largest) }
}

/// A closure parameter makes the function local without the word; its
/// result need not be serde either.
#[divide_and_conquer]
fn tally_where<F: Fn(u64) -> bool + Sync>(keep: &F, lo: u64, hi: u64) -> Tally {
    if hi - lo <= 1000 {
        return Tally {
            odd: (lo..hi).filter(|&x| keep(x)).count() as u64,
            largest: (lo..hi).filter(|&x| keep(x)).max(),
        };
    }
    let mid = (lo + hi) / 2;
    let a = tally_where(keep, lo, mid);
    let b = tally_where(keep, mid, hi);
    Tally { odd: a.odd + b.odd, largest: a.largest.max(b.largest) }
}

fn data(n: usize) -> Vec<i64> {
    let mut x = 0x2545F4914F6CDD1Du64;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 2001) as i64 - 1000
        })
        .collect()
}

#[test]
fn a_closure_integrand_runs_in_parallel_and_gives_the_plain_answer() {
    let rt = Runtime::builder().workers(2).build().unwrap();
    let k = 7.0;
    let f = |x: f64| (k * x).sin() * x.exp();
    let whole = simpson(&f, 0.0, 3.0);
    let plain = integrate_plain(&f, 0.0, 3.0, 1e-10, whole);
    let before = rt.stats().spawns;
    let par = rt.run(|| integrate(&f, 0.0, 3.0, 1e-10, whole));
    assert_eq!(par.to_bits(), plain.to_bits());
    assert!(rt.stats().spawns > before, "integrate spawned nothing: {:?}", rt.stats());
    // Outside a runtime: the plain function.
    assert_eq!(integrate(&f, 0.0, 3.0, 1e-10, whole).to_bits(), plain.to_bits());
}

#[test]
fn borrowing_values_trait_objects_function_pointers_and_local_types_run_in_parallel() {
    let rt = Runtime::builder().workers(2).build().unwrap();
    let spawned = |what: &str, before: u64| {
        assert!(rt.stats().spawns > before, "{what} spawned nothing: {:?}", rt.stats());
        rt.stats().spawns
    };
    let v = data(100_000);
    let before = rt.stats().spawns;
    assert_eq!(rt.run(|| max_subarray(Window { data: &v })), max_subarray_plain(Window { data: &v }));
    let before = spawned("max_subarray", before);
    let offset = 3;
    let term = move |x: u64| x * offset % 17;
    assert_eq!(rt.run(|| sum_of(&term, 0, 200_000)), (0..200_000).map(term).sum::<u64>());
    let before = spawned("sum_of", before);
    assert_eq!(rt.run(|| sum_fn(cube, 0, 200_000)), (0..200_000).map(cube).sum::<u64>());
    let before = spawned("sum_fn", before);
    assert_eq!(rt.run(|| count_odd(Span { lo: 0, hi: 100_001 })), 50_000);
    spawned("count_odd", before);
}

#[test]
fn a_local_function_returns_a_type_without_serde() {
    let rt = Runtime::builder().workers(2).build().unwrap();
    let before = rt.stats().spawns;
    assert_eq!(rt.run(|| tally(Span { lo: 0, hi: 100_001 })), Tally { odd: 50_000, largest: Some(100_000) });
    assert!(rt.stats().spawns > before, "tally spawned nothing: {:?}", rt.stats());
    let before = rt.stats().spawns;
    let threes = |x: u64| x.is_multiple_of(3);
    assert_eq!(rt.run(|| tally_where(&threes, 0, 100_000)), Tally { odd: 33_334, largest: Some(99_999) });
    assert!(rt.stats().spawns > before, "tally_where spawned nothing: {:?}", rt.stats());
    // Outside a runtime: the plain function.
    assert_eq!(tally(Span { lo: 0, hi: 10 }), Tally { odd: 5, largest: Some(9) });
    // Its job's results refuse to encode, saying so, rather than travel.
    let out = Tally { odd: 1, largest: None };
    assert!(<<__SatinJob_tally as Job>::Codec as satin::ResultCodec<Tally>>::encode(&out).is_err());
}

fn executor(workers: usize) -> (LocalExecutor, mpsc::Receiver<ExecEvent>) {
    let runtime = Arc::new(Runtime::builder().workers(workers).build().expect("a pool"));
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    let exec = LocalExecutor::new(runtime, SharedTable::default(), None, move |e: ExecEvent| {
        // (Idle workers are the driver's news, not these tests'.)
        if !matches!(e, ExecEvent::Hungry) {
            let _ = tx.lock().expect("sender").send(e);
        }
    })
    .expect("a fresh runtime");
    (exec, rx)
}

/// A travelling function whose body integrates with a closure: its own
/// call is a distributed root, the integration's calls are local.
#[divide_and_conquer]
fn area(k: u32, eps: f64) -> f64 {
    let f = |x: f64| wave(k, x);
    integrate(&f, 0.0, 50.0, eps, simpson(&f, 0.0, 50.0))
}

/// An integrand that costs a little: forty sines.
fn wave(k: u32, x: f64) -> f64 {
    (0..40).map(|i| (f64::from(k + i) * x).sin().abs()).sum::<f64>() * x
}

/// Remote thieves pass local calls by: every steal a node asks for while
/// the root integrates finds nothing, and the root still finishes with
/// the plain answer on its own workers.
#[test]
fn a_remote_thief_never_takes_a_local_call() {
    let (mut exec, rx) = executor(2);
    let root = __SatinJob_area(9, 1e-9);
    exec.run_root(JobSpec { depth: 0, ..JobSpec::new(root.key(), 0, encode_job(&root)) });
    // Steal requests arrive as an idle node sends them: one each time the
    // executor has had a millisecond to report.
    let mut asked = 0u64;
    let outcome = loop {
        assert!(exec.take_for_thief(1000 + asked, &[]).is_none(), "a remote thief took a local call");
        asked += 1;
        match rx.recv_timeout(std::time::Duration::from_millis(1)) {
            Ok(ExecEvent::RootDone { value, .. }) => break value,
            Ok(ExecEvent::Published { .. }) | Err(mpsc::RecvTimeoutError::Timeout) => {}
            Ok(other) => panic!("unexpected {other:?}"),
            Err(e) => panic!("{e}"),
        }
    };
    let value: f64 = postcard::from_bytes(&outcome).expect("the root's result");
    let f = |x: f64| wave(9, x);
    assert_eq!(value.to_bits(), integrate_plain(&f, 0.0, 50.0, 1e-9, simpson(&f, 0.0, 50.0)).to_bits());
    assert!(asked > 10, "the root ended before thieves asked ({asked} asks): the test tested nothing");
}

/// Whether some point of a grid in [lo, hi) satisfies `pred`: a race of
/// `||` in a local function (its entrants stay local too).
#[divide_and_conquer]
fn exists<F: Fn(u64) -> bool + Sync>(pred: &F, lo: u64, hi: u64) -> bool {
    if hi - lo <= 64 {
        return (lo..hi).any(pred);
    }
    let mid = (lo + hi) / 2;
    exists(pred, lo, mid) || exists(pred, mid, hi)
}

#[test]
fn a_race_in_a_local_function_keeps_its_calls_local() {
    assert_eq!(<__SatinJob_exists<'_, fn(u64) -> bool> as Job>::LOCAL, Some("takes a closure (`F`)"));
    let rt = Runtime::builder().workers(2).build().unwrap();
    let target = 77_777;
    assert!(rt.run(|| exists(&|x| x == target, 0, 1 << 20)));
    assert!(!rt.run(|| exists(&|x| x == target, 0, 1000)));
}
