//! The local runtime: results, panics, aborts, and the forms the macro knows.

use std::sync::atomic::{AtomicU64, Ordering};

use satin::{divide_and_conquer, Runtime};

#[divide_and_conquer]
fn fib(n: u32) -> u64 {
    if n < 2 {
        return n as u64;
    }
    let x = fib(n - 1);
    let y = fib(n - 2);
    x + y
}

#[divide_and_conquer]
fn fib_expr(n: u32) -> u64 {
    match n {
        0 | 1 => n as u64,
        _ => fib_expr(n - 1) + fib_expr(n - 2),
    }
}

#[divide_and_conquer]
fn tree_sum(depth: u32, fanout: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let mut total = 1;
    for _ in 0..fanout {
        total += tree_sum(depth - 1, fanout);
    }
    total
}

#[divide_and_conquer]
fn tree_iter(depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    (0..3u32).map(|_| tree_iter(depth - 1)).sum::<u64>() + 1
}

#[divide_and_conquer]
fn ranges(lo: u64, hi: u64) -> Vec<u64> {
    if hi - lo <= 4 {
        return (lo..hi).collect();
    }
    let mid = lo + (hi - lo) / 2;
    let mut parts = Vec::new();
    for (a, b) in [(lo, mid), (mid, hi)] {
        parts.push(ranges(a, b));
    }
    parts.concat()
}

/// A binary split whose second call stands in a branch of an `if` in a
/// `let`.
#[divide_and_conquer]
fn count_leaves(lo: u64, hi: u64) -> u64 {
    if hi - lo <= 1 {
        return 1;
    }
    let mid = lo + (hi - lo) / 2;
    let left = count_leaves(lo, mid);
    let right = if hi - mid > 1 { count_leaves(mid, hi) } else { 1 };
    left + right
}

fn rt(workers: usize) -> Runtime {
    Runtime::builder().workers(workers).build().expect("runtime starts")
}

/// Runtimes that exercise every path: eager pushes, the default lazy
/// cut-off, and inline-almost-always.
fn every_policy(workers: usize) -> Vec<Runtime> {
    [usize::MAX, satin::DEFAULT_SPAWN_LIMIT, 1]
        .into_iter()
        .map(|limit| Runtime::builder().workers(workers).spawn_limit(limit).build().expect("runtime starts"))
        .collect()
}

#[test]
fn results_match_the_sequential_function_on_1_2_and_4_workers() {
    for rt in [1, 2, 4].into_iter().flat_map(every_policy) {
        assert_eq!(rt.run(|| fib(25)), fib(25));
        assert_eq!(rt.run(|| fib_expr(22)), fib(22));
        assert_eq!(rt.run(|| tree_sum(6, 4)), tree_sum(6, 4));
        assert_eq!(rt.run(|| tree_iter(7)), tree_iter(7));
        assert_eq!(rt.run(|| ranges(0, 1000)), (0..1000).collect::<Vec<_>>());
    }
}

/// Every form of the guide's table "Which calls run in parallel" that
/// this file writes spawns its calls (the other forms' tests: see the
/// guide): `let`s in a row, calls in an expression, `acc +=` and
/// `v.push(..)` in a loop, `map(..).sum()`, a call in a branch of an `if`
/// in a `let`. Counted on eager pushes, so that every spawn shows.
#[test]
fn every_form_of_the_guide_s_table_written_here_spawns() {
    let rt = Runtime::builder().workers(2).spawn_limit(usize::MAX).build().expect("runtime starts");
    let mut seen = 0;
    let mut spawned = |what: &str| {
        let now = rt.stats().spawns;
        assert!(now > seen, "{what}: no call spawned ({:?})", rt.stats());
        seen = now;
    };
    assert_eq!(rt.run(|| fib(20)), 6765);
    spawned("let x = f(a); let y = f(b);");
    assert_eq!(rt.run(|| fib_expr(20)), 6765);
    spawned("f(a) + f(b)");
    assert_eq!(rt.run(|| tree_sum(4, 3)), 121);
    spawned("acc += f(a) in a for loop");
    assert_eq!(rt.run(|| tree_iter(4)), 121);
    spawned("iter.map(|p| f(p)).sum()");
    assert_eq!(rt.run(|| ranges(0, 100)), (0..100).collect::<Vec<_>>());
    spawned("v.push(f(a)) in a for loop");
    assert_eq!(rt.run(|| count_leaves(0, 1000)), 1000);
    spawned("let x = if c { f(a) } else { v };");
}

/// Runs fib(27) until another worker has stolen something (whether it does
/// in one run depends on thread wake-up timing); returns the runs made.
fn run_until_stolen(rt: &Runtime) -> u64 {
    for runs in 1..=200 {
        assert_eq!(rt.run(|| fib(27)), 196418);
        if rt.stats().steals > 0 {
            return runs;
        }
    }
    panic!("no steal in 200 runs of fib(27) on 2 workers: {:?}", rt.stats());
}

#[test]
fn spawns_are_stolen_on_several_workers() {
    let rt = Runtime::builder().workers(2).spawn_limit(usize::MAX).build().unwrap();
    let runs = run_until_stolen(&rt);
    let s = rt.stats();
    // One spawn (`let x`) per inner call: fib(28) - 1 of them per run.
    assert_eq!(s.spawns, 317_810 * runs, "{s:?}");
    assert_eq!(s.stolen_records, 0, "every stolen result was read: {s:?}");
    assert_eq!(s.recorded_steals, s.steals, "fault tolerance on: every steal is recorded: {s:?}");
}

#[test]
fn fault_tolerance_records_can_be_switched_off() {
    let rt = Runtime::builder().workers(2).spawn_limit(usize::MAX).fault_tolerance(false).build().unwrap();
    run_until_stolen(&rt);
    let s = rt.stats();
    assert_eq!((s.recorded_steals, s.stolen_records), (0, 0), "{s:?}");
}

#[test]
fn job_keys_are_blake3_of_function_id_and_postcard_params() {
    use satin::{Job, JobKey};
    // A function's id is its module's path, its name and its signature.
    assert_eq!(__SatinJob_fib::FN_ID, concat!(module_path!(), "::fib(u32) -> u64"));
    assert!(__SatinJob_fib::FN_ID.ends_with("local::fib(u32) -> u64"));
    let mut expected = blake3::Hasher::new();
    expected.update(concat!(module_path!(), "::fib(u32) -> u64").as_bytes());
    expected.update(&[0]);
    expected.update(&postcard::to_stdvec(&10u32).unwrap());
    assert_eq!(__SatinJob_fib(10).key(), JobKey(*expected.finalize().as_bytes()));
    assert_eq!(__SatinJob_fib(10).key(), __SatinJob_fib(10).key());
    assert_ne!(__SatinJob_fib(10).key(), __SatinJob_fib(11).key());
    assert_ne!(__SatinJob_fib(10).key(), __SatinJob_fib_expr(10).key(), "same params, other function");
}

#[divide_and_conquer]
fn explode(n: u32) -> u64 {
    if n == 0 {
        panic!("boom at the leaf");
    }
    let a = explode(n - 1);
    let b = fib(12);
    a + b
}

#[test]
fn a_panic_in_a_job_reaches_the_caller_with_its_message() {
    for rt in every_policy(2) {
        let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| rt.run(|| explode(10)))).unwrap_err();
        let msg = err.downcast_ref::<&str>().copied().unwrap_or_default();
        assert_eq!(msg, "boom at the leaf");
        // The pool still works afterwards.
        assert_eq!(rt.run(|| fib(20)), 6765);
    }
}

static LEAVES: AtomicU64 = AtomicU64::new(0);

/// Finds whether `target` is among the leaves 0..2^depth; counts leaves visited.
#[divide_and_conquer]
fn search(lo: u64, hi: u64, target: u64) -> bool {
    if hi - lo == 1 {
        LEAVES.fetch_add(1, Ordering::Relaxed);
        // Some work per leaf so the abort has something to cut.
        return std::hint::black_box(fib_plain(18)) > 0 && lo == target;
    }
    let mid = (lo + hi) / 2;
    let left = search(lo, mid, target);
    let right = search(mid, hi, target);
    if left {
        return true;
    }
    right
}

fn fib_plain(n: u32) -> u64 {
    if n < 2 {
        n as u64
    } else {
        fib_plain(n - 1) + fib_plain(n - 2)
    }
}

#[test]
fn dropping_an_unread_spawn_aborts_it() {
    // LEAVES is shared: the policies run one after another in this test.
    for rt in every_policy(2) {
        let n = 1u64 << 12;
        LEAVES.store(0, Ordering::Relaxed);
        assert!(rt.run(|| search(0, n, 3)));
        let visited = LEAVES.load(Ordering::Relaxed);
        assert!(visited < n / 2, "the right half should be aborted, visited {visited} of {n}");
        LEAVES.store(0, Ordering::Relaxed);
        assert!(!rt.run(|| search(0, 256, 1000)));
        assert_eq!(LEAVES.load(Ordering::Relaxed), 256, "nothing found: every leaf runs");
    }
}

#[test]
fn nested_runs_and_no_runtime_are_sequential_and_correct() {
    assert_eq!(fib(20), 6765);
    let rt = rt(2);
    assert_eq!(rt.run(|| rt.run(|| fib(20))), 6765);
}

#[test]
fn zero_workers_is_an_error() {
    assert!(matches!(Runtime::builder().workers(0).build(), Err(satin::BuildError::ZeroWorkers)));
}

static TINY_DONE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// One tiny call beside one big one: with a queue of one job, the big call
/// runs lazily from the start, and the only job to steal is the tiny one.
/// The big call's leaves wait until the tiny one ran (on the other worker:
/// this one is busy), so that it cannot end before the other worker is
/// idle.
#[divide_and_conquer]
fn lopsided(n: u32) -> u64 {
    if n == 0 {
        return std::hint::black_box(fib_plain(16));
    }
    if n == 99 {
        TINY_DONE.store(true, Ordering::Release);
        return 0;
    }
    if n == 100 {
        let tiny = lopsided(99);
        let big = lopsided(12);
        return tiny + big;
    }
    if n == 12 {
        while !TINY_DONE.load(Ordering::Acquire) {
            std::hint::spin_loop();
        }
    }
    let x = lopsided(n - 1);
    let y = lopsided(n - 1);
    x + y
}

#[test]
fn an_idle_worker_gets_part_of_a_lazily_run_call() {
    let rt = Runtime::builder().workers(2).spawn_limit(1).build().unwrap();
    assert_eq!(rt.run(|| lopsided(100)), fib_plain(16) * (1 << 12));
    // The tiny call is the only job ever queued; once it is done, the idle
    // worker's requests make the lazily run call spawn parts of itself.
    let s = rt.stats();
    assert!(s.promotions >= 1 && s.spawns >= 2, "the lazily run call was never split: {s:?}");
}

static OR_LEAVES: AtomicU64 = AtomicU64::new(0);

/// Whether `target` is among the leaves lo..hi, as a plain `||`.
#[divide_and_conquer]
fn any_leaf(lo: u64, hi: u64, target: u64) -> bool {
    if hi - lo == 1 {
        OR_LEAVES.fetch_add(1, Ordering::Relaxed);
        return std::hint::black_box(fib_plain(18)) > 0 && lo == target;
    }
    let mid = (lo + hi) / 2;
    any_leaf(lo, mid, target) || any_leaf(mid, hi, target)
}

#[test]
fn or_spawns_its_right_side_and_aborts_it_when_the_left_decides() {
    for rt in every_policy(2) {
        let n = 1u64 << 12;
        OR_LEAVES.store(0, Ordering::Relaxed);
        assert!(rt.run(|| any_leaf(0, n, 3)));
        let visited = OR_LEAVES.load(Ordering::Relaxed);
        assert!(visited < n / 2, "the right half should be aborted, visited {visited} of {n}");
        OR_LEAVES.store(0, Ordering::Relaxed);
        assert!(rt.run(|| any_leaf(0, n, n - 1)), "found in the branch read last");
        OR_LEAVES.store(0, Ordering::Relaxed);
        assert!(!rt.run(|| any_leaf(0, 256, 1000)));
        assert_eq!(OR_LEAVES.load(Ordering::Relaxed), 256, "nothing found: every leaf runs");
    }
    // Both halves run in parallel: the right one is spawned, not inline.
    let rt = Runtime::builder().workers(2).spawn_limit(usize::MAX).build().unwrap();
    assert!(!rt.run(|| any_leaf(0, 1 << 12, u64::MAX)));
    assert!(rt.stats().spawns >= (1 << 12) - 1, "{:?}", rt.stats());
}

/// A complete binary recursion of depth `d`.
#[divide_and_conquer]
fn leaves(d: u32) -> u64 {
    if d == 0 {
        return 1;
    }
    let a = leaves(d - 1);
    let b = leaves(d - 1);
    a + b
}

#[test]
fn a_spawned_call_that_comes_back_unstolen_runs_lazily() {
    // One worker: nobody ever steals, so after the first few spawns fill
    // the deque every call is the plain call. Were the calls that come back
    // from the deque run in parallel again, each would refill it on its way
    // down: about d^4/24 spawns (2 700 here) instead of a few per level.
    let rt = Runtime::builder().workers(1).plain_when_alone(false).build().unwrap();
    assert_eq!(rt.run(|| leaves(16)), 1 << 16);
    let s = rt.stats();
    assert!(s.spawns > 0 && s.spawns <= 4 * 16, "{s:?}");
}

#[test]
fn one_worker_alone_runs_the_plain_function() {
    // Nobody could take a call: no spawn, no promotion, the plain answer.
    let rt = Runtime::builder().workers(1).build().unwrap();
    assert_eq!(rt.run(|| leaves(16)), 1 << 16);
    let s = rt.stats();
    assert_eq!((s.spawns, s.promotions, s.released), (0, 0, 0), "{s:?}");
    // Two workers, or one whose progress is tracked, schedule.
    for rt in [
        Runtime::builder().workers(2).build().unwrap(),
        Runtime::builder().workers(1).track_progress(true).build().unwrap(),
    ] {
        assert_eq!(rt.run(|| leaves(16)), 1 << 16);
        assert!(rt.stats().spawns > 0, "{} workers: {:?}", rt.workers(), rt.stats());
    }
}

/// The cores the calling thread may run on.
fn allowed_cores() -> Vec<usize> {
    // SAFETY: a zeroed cpu_set_t is an empty set; the size passed is its own.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        assert_eq!(libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set), 0);
        (0..libc::CPU_SETSIZE as usize).filter(|&c| libc::CPU_ISSET(c, &set)).collect()
    }
}

#[test]
fn pinned_workers_each_run_on_one_core_of_the_process() {
    let process = allowed_cores();
    let rt = Runtime::builder().workers(2).pin_workers(true).build().unwrap();
    let seen = rt.run(allowed_cores);
    assert_eq!(seen.len(), 1, "a pinned worker may run on one core: {seen:?}");
    assert!(process.contains(&seen[0]), "{seen:?} is not among the process's cores {process:?}");
    assert_eq!(rt.run(|| fib(20)), 6765);
    // Unpinned workers keep the process's cores.
    assert_eq!(rt_unpinned_cores(), process);
}

fn rt_unpinned_cores() -> Vec<usize> {
    Runtime::builder().workers(2).build().unwrap().run(allowed_cores)
}

static RACE_LEAVES: AtomicU64 = AtomicU64::new(0);

/// [`any_leaf`] with its own count of leaves visited.
#[divide_and_conquer]
fn any_leaf_counted(lo: u64, hi: u64, target: u64) -> bool {
    if hi - lo == 1 {
        RACE_LEAVES.fetch_add(1, Ordering::Relaxed);
        return std::hint::black_box(fib_plain(18)) > 0 && lo == target;
    }
    let mid = (lo + hi) / 2;
    any_leaf_counted(lo, mid, target) || any_leaf_counted(mid, hi, target)
}

/// The first `Some` of the leaves lo..hi holding `target`.
#[divide_and_conquer]
fn find_leaf(lo: u64, hi: u64, target: u64) -> Option<u64> {
    if hi - lo == 1 {
        RACE_LEAVES.fetch_add(1, Ordering::Relaxed);
        return (std::hint::black_box(fib_plain(18)) > 0 && lo == target).then_some(lo);
    }
    let mid = (lo + hi) / 2;
    find_leaf(lo, mid, target).or_else(|| find_leaf(mid, hi, target))
}

/// Every call is decided by `&&` as soon as one leaf is `false`.
#[divide_and_conquer]
fn all_leaves_but(lo: u64, hi: u64, missing: u64) -> bool {
    if hi - lo == 1 {
        RACE_LEAVES.fetch_add(1, Ordering::Relaxed);
        return std::hint::black_box(fib_plain(18)) > 0 && lo != missing;
    }
    let mid = (lo + hi) / 2;
    all_leaves_but(lo, mid, missing) && all_leaves_but(mid, hi, missing)
}

#[test]
fn the_branch_read_second_ends_the_branch_read_first_when_it_decides_first() {
    // The leaf that decides is the first of the right half: the right half,
    // spawned and taken by the other worker, decides at once, and the left
    // half, read first and running inline, is stopped. Reading order would
    // visit all n/2 leaves of the left half first.
    let n = 1u64 << 12;
    for rt in every_policy(2) {
        RACE_LEAVES.store(0, Ordering::Relaxed);
        assert!(rt.run(|| any_leaf_counted(0, n, n / 2)));
        let visited = RACE_LEAVES.load(Ordering::Relaxed);
        assert!(visited < n / 2, "||: the left half ran on, visited {visited} of {n}");

        RACE_LEAVES.store(0, Ordering::Relaxed);
        assert_eq!(rt.run(|| find_leaf(0, n, n / 2)), Some(n / 2));
        let visited = RACE_LEAVES.load(Ordering::Relaxed);
        assert!(visited < n / 2, "or_else: the left half ran on, visited {visited} of {n}");

        RACE_LEAVES.store(0, Ordering::Relaxed);
        assert!(!rt.run(|| all_leaves_but(0, n, n / 2)));
        let visited = RACE_LEAVES.load(Ordering::Relaxed);
        assert!(visited < n / 2, "&&: the left half ran on, visited {visited} of {n}");

        // Undecided races give the plain function's answers.
        assert_eq!(rt.run(|| find_leaf(0, 64, 1000)), None);
        assert!(rt.run(|| all_leaves_but(0, 64, 1000)));
        assert_eq!(rt.run(|| find_leaf(0, 64, 3)), Some(3));
    }
}

/// Whether some leaf below `node` (fan-out 4) is `target`, by `.any`.
#[divide_and_conquer]
fn any_below(node: u64, depth: u32, target: u64) -> bool {
    if depth == 0 {
        RACE_LEAVES.fetch_add(1, Ordering::Relaxed);
        return std::hint::black_box(fib_plain(18)) > 0 && node == target;
    }
    (0..4).any(|k| any_below(node * 4 + k, depth - 1, target))
}

/// Whether every leaf below `node` differs from `missing`, by `.all`.
#[divide_and_conquer]
fn all_below(node: u64, depth: u32, missing: u64) -> bool {
    if depth == 0 {
        RACE_LEAVES.fetch_add(1, Ordering::Relaxed);
        return std::hint::black_box(fib_plain(18)) > 0 && node != missing;
    }
    (0..4).all(|k| all_below(node * 4 + k, depth - 1, missing))
}

#[test]
fn any_and_all_over_children_stop_at_the_first_child_to_decide() {
    // Leaves are numbered 4^6 .. 2·4^6 at depth 6 below node 1; the one
    // sought is the first leaf of the last child, read last in order.
    let leaves = 1u64 << 12;
    let target = leaves + 3 * (leaves / 4);
    for rt in every_policy(2) {
        RACE_LEAVES.store(0, Ordering::Relaxed);
        assert!(rt.run(|| any_below(1, 6, target)));
        let visited = RACE_LEAVES.load(Ordering::Relaxed);
        assert!(visited < 3 * leaves / 4, "any: the first three children ran on, visited {visited} of {leaves}");

        RACE_LEAVES.store(0, Ordering::Relaxed);
        assert!(!rt.run(|| all_below(1, 6, target)));
        let visited = RACE_LEAVES.load(Ordering::Relaxed);
        assert!(visited < 3 * leaves / 4, "all: the first three children ran on, visited {visited} of {leaves}");

        // Undecided: every leaf runs, and the answers are the plain ones.
        RACE_LEAVES.store(0, Ordering::Relaxed);
        assert!(!rt.run(|| any_below(1, 3, 0)));
        assert_eq!(RACE_LEAVES.load(Ordering::Relaxed), 64);
        assert!(rt.run(|| all_below(1, 3, 0)));
        assert!(rt.run(|| any_below(1, 3, 64 + 5)));
    }
}
