//! Recursion as people write it (see `satin_examples::forms`): `?` on the
//! calls (no error, an error found late, one found early), methods on a
//! tree, two functions that call each other, `&mut` halves merged after
//! the calls, a generic merge sort, and Unbalanced Tree Search on its five published sample
//! trees — each against the same code without the annotation,
//! on all cores, on one worker that keeps the scheduler (the lazy
//! path's per-call cost) and on one worker as built by default (the
//! plain function), in pairs.
//!
//! `cargo bench -p satin-examples --bench forms` (about a minute;
//! `SATIN_BENCH_UNPINNED=1` leaves the workers unpinned).

use satin::Runtime;
use satin_examples::forms::{self, minimax, Node};
use satin_examples::uts;

// Only `wanted` here: these rows compare with no other pool.
#[allow(dead_code)]
#[path = "common/pinning.rs"]
mod pinning;

#[path = "common/paired.rs"]
mod paired;
use paired::paired;

struct Row {
    name: &'static str,
    /// time(plain) / time(satin, all workers)
    speedup: f64,
    /// time(satin, one worker that schedules) / time(plain)
    overhead: f64,
    /// time(satin, one worker as built by default) / time(plain)
    alone: f64,
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    let pinned = pinning::wanted();
    let rt = Runtime::builder().workers(workers).pin_workers(pinned).build().expect("runtime");
    // One worker that keeps the scheduler's lazy path: what that path
    // costs per call (one worker alone runs the plain function by default).
    let one = Runtime::builder().workers(1).plain_when_alone(false).pin_workers(pinned).build().expect("runtime");
    let alone = Runtime::builder().workers(1).pin_workers(pinned).build().expect("runtime");
    let rounds = 11;
    let mut rows = Vec::new();
    // Both ratios of one function: `plain` against `annotated` on all
    // workers, then on one.
    // `cargo bench --bench forms -- UTS`: only the rows whose name holds
    // one of the words given.
    let only: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let mut measure = |name: &'static str, plain: &dyn Fn(), annotated: &(dyn Fn() + Sync)| {
        if !only.is_empty() && !only.iter().any(|w| name.contains(w.as_str())) {
            return;
        }
        let speedup = 1.0 / paired(rounds, || (), |_| rt.run(annotated), |_| plain());
        let overhead = paired(rounds, || (), |_| one.run(annotated), |_| plain());
        let alone = paired(rounds, || (), |_| alone.run(annotated), |_| plain());
        rows.push(Row { name, speedup, overhead, alone });
    };

    let ok = forms::numbers(1 << 23, 1);
    measure(
        "checked_sum(&[i64]) with `?`, no error, 8M elements",
        &|| assert!(forms::checked_sum_plain(&ok, 0).is_ok()),
        &|| assert!(forms::checked_sum(&ok, 0).is_ok()),
    );
    let mut late = ok.clone();
    late[ok.len() - 1000] = -1;
    measure(
        "checked_sum, an error 1000 from the end",
        &|| assert!(forms::checked_sum_plain(&late, 0).is_err()),
        &|| assert!(forms::checked_sum(&late, 0).is_err()),
    );
    let mut early = ok.clone();
    early[ok.len() / 3] = -1;
    measure(
        "checked_sum, an error a third of the way",
        &|| assert!(forms::checked_sum_plain(&early, 0).is_err()),
        &|| assert!(forms::checked_sum(&early, 0).is_err()),
    );

    let tree = forms::grow_plain(9, 5, 1);
    measure("Node::total(&self), 2.4M nodes", &|| assert!(tree.total_plain() > 0), &|| assert!(tree.total() > 0));
    measure(
        "Node::grow (Self::grow), 2.4M nodes",
        &|| assert!(!forms::grow_plain(9, 5, 1).children.is_empty()),
        &|| assert!(!Node::grow(9, 5, 1).children.is_empty()),
    );
    measure(
        "minimax::max_value / min_value, 4 moves, depth 11",
        &|| assert!(forms::max_value_plain(0, 11, 4) > -1001),
        &|| assert!(minimax::max_value(0, 11, 4) > -1001),
    );
    measure("negamax (one function, the same tree)", &|| assert!(forms::negamax_plain(0, 11, 4, 1) > -1001), &|| {
        assert!(forms::negamax(0, 11, 4, 1) > -1001)
    });
    let input = forms::numbers(4_000_000, 3);
    measure(
        "count_inversions(&mut [i64]), merge after the calls, 4M",
        &|| assert!(forms::count_inversions_plain(&mut input.clone()) > 0),
        &|| assert!(forms::count_inversions(&mut input.clone()) > 0),
    );

    measure(
        "merge_sort::<i64>(&[T]), a generic function, 4M",
        &|| assert_eq!(forms::merge_sort_plain(&input).len(), input.len()),
        &|| assert_eq!(forms::merge_sort(&input).len(), input.len()),
    );
    let words: Vec<String> = input[..1_000_000].iter().map(|x| format!("w{x:04}")).collect();
    measure(
        "merge_sort::<String>, the same function, 1M words",
        &|| assert_eq!(forms::merge_sort_plain(&words).len(), words.len()),
        &|| assert_eq!(forms::merge_sort(&words).len(), words.len()),
    );

    // Unbalanced Tree Search, the published sample trees.
    for name in ["T1", "T2", "T3", "T4", "T5"] {
        let (params, published) = uts::sample(name).expect("a sample tree");
        let root = uts::Node::root(&params);
        let label: &'static str = Box::leak(format!("UTS {name} ({} nodes)", published.nodes).into_boxed_str());
        let params = &params;
        measure(label, &|| assert_eq!(uts::search_plain(params, root), published), &|| {
            assert_eq!(uts::search(params, root), published)
        });
    }

    let how = if pinned { "pinned" } else { "unpinned" };
    println!("\nForms as written, {workers} workers ({how}); median of {rounds} paired rounds:\n");
    println!(
        "| function | speed-up over the plain function ({workers} workers) | lazy path on 1 worker / plain | 1 worker \
         (default: the plain function) / plain |"
    );
    println!("|---|---|---|---|");
    for r in rows {
        println!("| {} | {:.2} | {:.2} | {:.2} |", r.name, r.speedup, r.overhead, r.alone);
    }
}
