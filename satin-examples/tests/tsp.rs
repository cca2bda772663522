//! The TSP example: TSPLIB distances as TSPLIB defines them (checked by
//! the length of the published optimal tours), the published optima found
//! by the Held–Karp search (shared, per-branch and sequential alike) and by
//! the simple bound, how many nodes each expands, and runs across nodes
//! with a node killed.

use satin_examples::tsp::{self, held_karp::Root, Bound, LowerBound, Matrix};

use crate::common;

fn instance(name: &str) -> Matrix {
    let path = satin_examples::data_dir().join("tsp").join(format!("{name}.tsp"));
    tsp::parse(&std::fs::read_to_string(&path).unwrap()).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn optimum(name: &str) -> u64 {
    let table = std::fs::read_to_string(satin_examples::data_dir().join("tsp/optima.tsv")).unwrap();
    let row = table.lines().find(|l| l.split('\t').next() == Some(name)).expect("listed");
    row.split('\t').nth(3).unwrap().parse().unwrap()
}

/// The length of a `.opt.tour` file's tour under our distances.
fn tour_length(m: &Matrix, name: &str) -> u64 {
    let text =
        std::fs::read_to_string(satin_examples::data_dir().join("tsp").join(format!("{name}.opt.tour"))).unwrap();
    let cities: Vec<usize> = text
        .lines()
        .skip_while(|l| l.trim() != "TOUR_SECTION")
        .skip(1)
        .flat_map(|l| l.split_whitespace().map(str::to_string).collect::<Vec<_>>())
        .map_while(|t| t.parse::<i64>().ok().filter(|&c| c > 0))
        .map(|c| c as usize - 1)
        .collect();
    assert_eq!(cities.len(), m.n, "{name}: a tour through every city");
    (0..m.n).map(|i| m.dist(cities[i], cities[(i + 1) % m.n])).sum()
}

#[test]
fn distances_follow_tsplib_and_give_the_published_tour_lengths() {
    // GEO (ulysses16), EXPLICIT LOWER_DIAG_ROW (fri26), FULL_MATRIX (bays29).
    for name in ["ulysses16", "ulysses22", "fri26", "bays29", "att48"] {
        let m = instance(name);
        assert_eq!(tour_length(&m, name), optimum(name), "{name}");
        assert!((0..m.n).all(|a| (0..m.n).all(|b| m.dist(a, b) == m.dist(b, a))), "{name}: symmetric");
    }
    assert_eq!(instance("gr17").n, 17);
}

#[test]
fn bad_files_are_refused_with_a_reason() {
    for (text, want) in [
        ("DIMENSION: 3\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n1 0 0\n2 3 4\nEOF\n", "expected 3 lines"),
        ("DIMENSION: 1001\nEDGE_WEIGHT_TYPE: EUC_2D\n", "1 to 1000 cities"),
        (
            "DIMENSION: 2\nEDGE_WEIGHT_TYPE: EXPLICIT\nEDGE_WEIGHT_FORMAT: FULL_MATRIX\nEDGE_WEIGHT_SECTION\n0 1 x 0\n",
            "`x` is not a number",
        ),
        (
            "DIMENSION: 2\nEDGE_WEIGHT_TYPE: EXPLICIT\nEDGE_WEIGHT_FORMAT: FULL_MATRIX\nEDGE_WEIGHT_SECTION\n0 1 1\n",
            "needs 4 weights",
        ),
        ("DIMENSION: 2\nEDGE_WEIGHT_TYPE: MAN_3D\nNODE_COORD_SECTION\n1 0 0\n2 1 1\n", "not supported"),
        ("hello\n", "unexpected `hello`"),
        ("", "no DIMENSION"),
    ] {
        let err = tsp::parse(text).expect_err(text);
        assert!(err.contains(want), "{text:?}: {err}");
    }
}

#[test]
fn the_simple_bound_refuses_more_than_64_cities() {
    let m = instance("eil76");
    let err = tsp::check(&m, LowerBound::Simple).unwrap_err();
    assert!(err.contains("at most 64 cities") && err.contains("76"), "{err}");
    assert_eq!(tsp::check(&m, LowerBound::HeldKarp), Ok(()));
}

/// The counter of expanded nodes is the process's: the tests that read it
/// take this lock.
static COUNTER: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn expanded(f: &dyn Fn() -> u64) -> (u64, u64) {
    let before = satin_examples::expanded::total();
    let best = f();
    (best, satin_examples::expanded::total() - before)
}

#[test]
fn held_karp_finds_every_published_optimum_up_to_76_cities_shared_and_sequential_and_to_70_per_branch() {
    let _one = COUNTER.lock().unwrap_or_else(|e| e.into_inner());
    let rt = satin::Runtime::builder().workers(2).build().unwrap();
    for name in [
        "burma14",
        "ulysses16",
        "gr17",
        "gr21",
        "ulysses22",
        "fri26",
        "bays29",
        "att48",
        "eil51",
        "berlin52",
        "st70",
        "eil76",
    ] {
        let m = instance(name);
        let want = optimum(name);
        let (plain, plain_nodes) = expanded(&|| tsp::solve_plain(&m));
        let (shared, shared_nodes) = expanded(&|| rt.run(|| tsp::solve(&m, Bound::Shared)));
        assert_eq!(tsp::known_best(&m), want, "{name}: the shared incumbent ends at the optimum");
        assert_eq!((plain, shared), (want, want), "{name}");
        // The per-branch bound prunes far less: on eil76 it expands for
        // half a minute of both cores (the shared bound and the sequential
        // search a fifth of a second), so it is checked up to st70 (3 s).
        if name != "eil76" {
            let (local, _) = expanded(&|| rt.run(|| tsp::solve(&m, Bound::PerBranch)));
            assert_eq!(local, want, "{name}: per branch");
        }
        // The root's bound is a lower bound, and close: within 1 % here.
        let root = Root::new(&m);
        let gap = root.gap(want);
        assert!((0.0..1.0).contains(&gap), "{name}: root gap {gap} %");
        // Where the root does not settle it, both searches expand nodes,
        // each counted once (not in batches).
        if plain_nodes > 0 {
            assert!(shared_nodes > 0, "{name}");
        }
    }
}

#[test]
fn the_first_tour_is_a_tour_and_the_root_bound_stays_below_it() {
    for name in ["att48", "eil51", "st70", "kroA100"] {
        let m = instance(name);
        let (len, tour) = tsp::tour::good_tour(&m);
        let mut cities = tour.clone();
        cities.sort();
        assert_eq!(cities, (0..m.n).collect::<Vec<_>>(), "{name}: every city once");
        assert_eq!(len, tsp::tour::length(&m, &tour));
        assert!(len >= optimum(name), "{name}: no tour is shorter than the optimum");
        // The nearest-neighbour tour from city 0 alone is longer or equal.
        let nn = tsp::tour::length(&m, &tsp::tour::nearest_neighbour(&m, 0));
        assert!(len <= nn, "{name}: {len} against {nn}");
        let root = Root::new(&m);
        assert!(root.ascent.unwrap().bound <= optimum(name) as f64 + 1e-6, "{name}");
    }
}

/// The seeds' simple bound, kept beside Held–Karp.
#[test]
fn the_shared_bound_finds_the_optimum_expanding_about_the_sequential_nodes() {
    let _one = COUNTER.lock().unwrap_or_else(|e| e.into_inner());
    let m = instance("burma14");
    let (plain, plain_nodes) = expanded(&|| tsp::simple::solve_plain(&m));
    assert_eq!(plain, optimum("burma14"));
    let rt = satin::Runtime::builder().workers(2).build().unwrap();
    let (shared, shared_nodes) = expanded(&|| rt.run(|| tsp::simple::solve(&m, Bound::Shared)));
    let (local, local_nodes) = expanded(&|| rt.run(|| tsp::simple::solve(&m, Bound::PerBranch)));
    assert_eq!((shared, local), (plain, plain));
    // Workers' last uncounted batches (< 4096 each) may be missing; and
    // two workers may expand fewer nodes than one search (a short tour
    // found early in the second half prunes the first).
    let slack = satin_examples::expanded::slack(2);
    assert!(shared_nodes <= plain_nodes * 12 / 10 + slack, "shared: {shared_nodes} against {plain_nodes}");
    assert!(local_nodes > 5 * plain_nodes, "a per-branch bound prunes far less: {local_nodes} against {plain_nodes}");
    // A bigger one, and an explicit matrix.
    let m = instance("gr21");
    assert_eq!(rt.run(|| tsp::simple::solve(&m, Bound::Shared)), optimum("gr21"));
}

/// Runs the `tsp` binary; its standard output and error.
fn run_tsp(args: &[&str]) -> (String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tsp")).args(args).output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "tsp {args:?} failed:\n{stderr}");
    (stdout.into_owned(), stderr.into_owned())
}

/// `tsp` with `args` across nodes: its answer, its log, and what each
/// node that lived to the end holds in its replica of the incumbent.
fn run_tsp_nodes(args: &[&str]) -> (String, String, common::Stats) {
    let (out, stats) = common::run_with_stats(env!("CARGO_BIN_EXE_tsp"), args, &[]);
    let (stdout, stderr) = (common::stdout(&out), common::stderr(&out));
    assert!(out.status.success(), "tsp {args:?} failed:\n{stderr}");
    (stdout, stderr, stats)
}

/// What each node's replica of the incumbent holds at its end.
fn known_on_each_node(stats: &common::Stats) -> Vec<u64> {
    stats.nodes().into_iter().flat_map(|n| stats.incumbents(n)).collect()
}

#[test]
fn across_nodes_every_replica_ends_at_the_optimum_even_after_a_crash() {
    let file = satin_examples::data_dir().join("tsp/gr17.tsp");
    let file = file.to_str().unwrap();
    let want = optimum("gr17");
    let (stdout, stderr, stats) = run_tsp_nodes(&[file, "--bound", "simple", "--local-nodes", "3", "--no-progress"]);
    assert_eq!(stdout.lines().next(), Some(want.to_string().as_str()), "{stderr}");
    // A node that did not find the optimum itself knows it only from
    // another node's improvement.
    assert_eq!(known_on_each_node(&stats), vec![want; 3], "{stderr}");

    // The master (which set the first bound) killed while the search runs:
    // the others finish with the right answer and the best value found.
    let chaos = ["--local-nodes", "3", "--no-progress", "--chaos", "kill:node=0,at=1500ms", "--idle-timeout-ms", "500"];
    let (stdout, stderr, stats) = run_tsp_nodes(&[&[file, "--bound", "simple"][..], &chaos[..]].concat());
    assert_eq!(stdout.lines().next(), Some(want.to_string().as_str()), "{stderr}");
    assert!(stderr.contains("killed") || stderr.contains("SIGKILL"), "the kill happened: {stderr}");
    assert_eq!(known_on_each_node(&stats), vec![want; 2], "{stderr}");
}

#[test]
fn held_karp_across_nodes_finds_a_100_city_optimum_after_the_master_is_killed() {
    // kroB100: about 5 500 nodes, seconds on two workers; the first tour
    // is not the optimum, so the nodes must search.
    let file = satin_examples::data_dir().join("tsp/kroB100.tsp");
    let file = file.to_str().unwrap();
    let want = optimum("kroB100");
    let chaos = ["--local-nodes", "3", "--no-progress", "--chaos", "kill:node=0,at=1500ms", "--idle-timeout-ms", "500"];
    let (stdout, stderr, stats) = run_tsp_nodes(&[&[file][..], &chaos[..]].concat());
    assert_eq!(stdout.lines().next(), Some(want.to_string().as_str()), "{stderr}");
    assert!(stderr.contains("killed") || stderr.contains("SIGKILL"), "the kill happened: {stderr}");
    assert_eq!(known_on_each_node(&stats), vec![want; 2], "{stderr}");
    assert_eq!(stats.nodes().len(), 2, "the two survivors report: {stderr}");
    assert!(stats.nodes().into_iter().all(|n| stats.searched(n)), "both survivors searched: {stderr}");
}

#[test]
fn an_instance_the_root_settles_still_runs_across_nodes() {
    // burma14: the first tour meets the root's bound; every node still
    // makes the call and the run ends at once with the answer.
    let file = satin_examples::data_dir().join("tsp/burma14.tsp");
    let (stdout, stderr) = run_tsp(&[file.to_str().unwrap(), "--local-nodes", "2", "--no-progress"]);
    assert_eq!(stdout.lines().next(), Some(optimum("burma14").to_string().as_str()), "{stderr}");
    let (stdout, _) = run_tsp(&[file.to_str().unwrap(), "--sequential"]);
    assert_eq!(stdout.lines().next(), Some(optimum("burma14").to_string().as_str()));
}
