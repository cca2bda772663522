//! Functions as written (docs/performance.md, "Functions as written"):
//! shapes people write — chili's tree with a `match` in each `let`, two
//! functions that call each other over a game tree, a tree
//! consumed by value, a closure integrand, a skeleton over a trait with an
//! owning and a borrowing instance, UTS with its children in a `for` loop —
//! each against the same body without the annotation, on all workers and
//! on one, and against `chili` and `rayon` where they have a twin. Paired
//! rounds (see `common/paired.rs`): the median of per-round ratios.
//!
//! `cargo bench -p satin-examples --bench as_written` (about 3 minutes;
//! `-- WORD` runs only the shapes whose name contains WORD).

use satin::Runtime;
use satin_examples::as_written::{self, Board, Inversions, Node, Owned, Position, Primes};
use satin_examples::{kdtree, kernels, quadrature, uts};

#[path = "common/pinning.rs"]
mod pinning;

#[path = "common/paired.rs"]
mod paired;
use paired::paired;

struct Row {
    name: String,
    /// plain time ÷ annotated time on all workers, and on one.
    all: f64,
    one: f64,
    /// annotated time ÷ chili's, and ÷ rayon's, where a twin exists.
    vs_chili: Option<f64>,
    vs_rayon: Option<f64>,
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
    let pool = pinning::rayon_pool(workers);
    let chili_pool = chili::ThreadPool::new();
    let rounds = 11;
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let want = |name: &str| filter.as_deref().is_none_or(|f| name.contains(f));
    let mut rows = Vec::new();
    // (plain ÷ annotated on all workers, on one worker)
    let both = |plain: &dyn Fn(), annotated: &dyn Fn(&Runtime)| {
        (
            paired(rounds, || (), |_| plain(), |_| annotated(&rt)),
            paired(rounds, || (), |_| plain(), |_| annotated(&one)),
        )
    };

    for (depth, built, build) in [
        (22, "", Node::build as fn(u32) -> Option<Box<Node>>),
        (22, ", built left first as chili builds it", Node::build_left_first),
        (24, ", built left first as chili builds it", Node::build_left_first),
    ] {
        let name = format!("chili's tree, `match` in each `let`, 2^{depth} nodes{built}");
        if !want(&name) {
            continue;
        }
        let tree = build(depth).expect("a tree");
        let (all, one_w) =
            both(&|| consume(as_written::sum_plain(&tree)), &|r| consume(r.run(|| as_written::sum(&tree))));
        rows.push(Row {
            name,
            all,
            one: one_w,
            vs_chili: Some(paired(
                rounds,
                || (),
                |_| rt.run(|| as_written::sum(&tree)),
                |_| as_written::sum_chili(&tree, &mut chili_pool.scope()),
            )),
            vs_rayon: Some(paired(
                rounds,
                || (),
                |_| rt.run(|| as_written::sum(&tree)),
                |_| pool.install(|| as_written::sum_rayon(&tree)),
            )),
        });
    }
    if want("call each other") {
        let game = Position::build(5_000_000, 11);
        let (all, one_w) =
            both(&|| consume(as_written::max_value_plain(&game)), &|r| consume(r.run(|| as_written::max_value(&game))));
        rows.push(Row {
            name: "two functions that call each other, each with the attribute alone (5M positions, 1–8 moves)".into(),
            all,
            one: one_w,
            vs_chili: None,
            vs_rayon: None,
        });
    }
    if want("grid") {
        // A bad cell the depth-first walk meets after an eighth of the
        // walk (the plain function stops there), and none.
        for (bad, what) in [((3, 11), "an early bad cell"), ((99, 99), "no bad cell")] {
            let n = 15;
            let (all, one_w) = both(&|| consume(as_written::grid_paths_plain(0, 0, n, bad)), &|r| {
                consume(r.run(|| as_written::grid_paths(0, 0, n, bad)))
            });
            rows.push(Row {
                name: format!("monotone grid paths, `?` on each call in an `if` in a `let`, {what} (15 × 15)"),
                all,
                one: one_w,
                vs_chili: None,
                vs_rayon: None,
            });
        }
    }
    if want("by value") {
        let owned = Owned::build(21, 7);
        let copy = || owned.clone();
        rows.push(Row {
            name: "a tree consumed by value, 2M leaves".into(),
            all: paired(rounds, copy, as_written::total_plain, |t| rt.run(|| as_written::total(t))),
            one: paired(rounds, copy, as_written::total_plain, |t| one.run(|| as_written::total(t))),
            vs_chili: None,
            vs_rayon: Some(paired(
                rounds,
                copy,
                |t| rt.run(|| as_written::total(t)),
                |t| pool.install(|| as_written::total_rayon(t)),
            )),
        });
    }
    if want("closure") {
        let f = |x: f64| quadrature::wave(30.0, 40, x);
        let whole = quadrature::simpson(&f, 0.0, 10.0);
        let (all, one_w) = both(&|| consume(quadrature::integrate_plain(&f, 0.0, 10.0, 1e-11, whole)), &|r| {
            consume(r.run(|| quadrature::integrate(&f, 0.0, 10.0, 1e-11, whole)))
        });
        rows.push(Row {
            name: "a closure integrand (adaptive Simpson)".into(),
            all,
            one: one_w,
            vs_chili: None,
            vs_rayon: None,
        });
    }
    if want("skeleton") {
        let (all, one_w) = both(&|| consume(as_written::dac_plain(Primes { lo: 0, hi: 3_000_000 })), &|r| {
            consume(r.run(|| as_written::dac(Primes { lo: 0, hi: 3_000_000 })))
        });
        rows.push(Row {
            name: "a skeleton over a trait, owning instance (primes)".into(),
            all,
            one: one_w,
            vs_chili: None,
            vs_rayon: None,
        });

        let data: Vec<u32> = (0..2_000_000u32).map(|i| i.wrapping_mul(2_654_435_761) % 1_000_000).collect();
        let (all, one_w) = both(&|| consume(as_written::dac_plain(Inversions(&data))), &|r| {
            consume(r.run(|| as_written::dac_here(Inversions(&data))))
        });
        rows.push(Row {
            name: "a skeleton over a trait, borrowing instance (inversions)".into(),
            all,
            one: one_w,
            vs_chili: None,
            vs_rayon: None,
        });
    }
    if want("negamax") {
        let (all, one_w) = both(&|| consume(as_written::negamax_plain(&mut Board::new(10), 8, 1)), &|r| {
            consume(r.run(|| as_written::negamax(&mut Board::new(10), 8, 1)))
        });
        rows.push(Row {
            name: "negamax, play/undo on one board (warns: calls take turns)".into(),
            all,
            one: one_w,
            vs_chili: None,
            vs_rayon: None,
        });
        let (all, one_w) = both(&|| consume(as_written::negamax_copies_plain(&Board::new(10), 8, 1)), &|r| {
            consume(r.run(|| as_written::negamax_copies(&Board::new(10), 8, 1)))
        });
        rows.push(Row { name: "negamax, copy-make".into(), all, one: one_w, vs_chili: None, vs_rayon: None });
    }
    if want("prefix") {
        let xs = kernels::random_numbers(10_000_000, 1);
        let (all, one_w) =
            both(&|| consume(kernels::prefix_sums_plain(&xs)), &|r| consume(r.run(|| kernels::prefix_sums(&xs))));
        rows.push(Row {
            name: "split–scan–fix-up prefix sums returning a new `Vec` (10 M)".into(),
            all,
            one: one_w,
            vs_chili: None,
            vs_rayon: Some(paired(
                rounds,
                || (),
                |_| consume(rt.run(|| kernels::prefix_sums(&xs))),
                |_| consume(pool.install(|| kernels::prefix_sums_rayon(&xs))),
            )),
        });
    }
    if want("k-d tree build") {
        let points = kdtree::random_points(1_000_000, 1);
        let copy = || points.clone();
        rows.push(Row {
            name: "a k-d tree build, `build_kdtree(Vec<Point>, depth)` (1 M)".into(),
            all: paired(rounds, copy, |p| kdtree::build_plain(p, 0), |p| rt.run(|| kdtree::build_kdtree(p, 0))),
            one: paired(rounds, copy, |p| kdtree::build_plain(p, 0), |p| one.run(|| kdtree::build_kdtree(p, 0))),
            vs_chili: None,
            vs_rayon: Some(paired(
                rounds,
                copy,
                |p| rt.run(|| kdtree::build_kdtree(p, 0)),
                |p| pool.install(|| kdtree::build_rayon(p, 0)),
            )),
        });
    }
    if want("quickhull") {
        let points = kernels::random_disc(2_000_000, 1);
        let (all, one_w) =
            both(&|| consume(kernels::quickhull_plain(&points)), &|r| consume(r.run(|| kernels::quickhull(&points))));
        rows.push(Row {
            name: "quickhull, `hull_side(&[Point], a, b) -> Vec<Point>` (2 M points)".into(),
            all,
            one: one_w,
            vs_chili: None,
            vs_rayon: None,
        });
    }
    for name in ["T1", "T2", "T3", "T4", "T5"].into_iter().filter(|t| want(&format!("UTS {t}"))) {
        let (params, _) = uts::sample(name).expect("a sample tree");
        let root = uts::Node::root(&params);
        let (all, one_w) = both(&|| consume(uts::search_loop_plain(&params, root)), &|r| {
            consume(r.run(|| uts::search_loop(&params, root)))
        });
        rows.push(Row {
            name: format!("UTS {name}, children in a `for` loop"),
            all,
            one: one_w,
            vs_chili: None,
            vs_rayon: Some(paired(
                rounds,
                || (),
                |_| rt.run(|| uts::search_loop(&params, root)),
                |_| pool.install(|| uts::search_rayon(&params, root)),
            )),
        });
    }

    let how = if pinned { "pinned" } else { "unpinned" };
    println!("\nFunctions as written, {workers} workers ({how}); median of {rounds} paired rounds:\n");
    println!("| shape | plain ÷ annotated, {workers} workers | plain ÷ annotated, lazy path on 1 worker | satin / chili | satin / rayon |");
    println!("|---|---|---|---|---|");
    let or_dash = |v: Option<f64>| v.map_or("—".to_string(), |v| format!("{v:.2}"));
    for r in rows {
        println!("| {} | {:.2} | {:.2} | {} | {} |", r.name, r.all, r.one, or_dash(r.vs_chili), or_dash(r.vs_rayon));
    }
}

/// Keeps a result from being optimised away.
fn consume<T>(value: T) {
    std::hint::black_box(value);
}
