//! Task-graph runs under random simulated faults: every node the real
//! `satin-dag` core (`GraphNode`), faults in the language `--chaos` reads.
//!
//! Every schedule must keep these promises (see `graph::violations`):
//! - **no task waits for ever**: every node ends, with the results or in
//!   words;
//! - **every task's output once, the right one**: every output that
//!   travels, and every output a node that ended with the results holds, is
//!   the fault-free one; such a node has every task done and every result;
//! - **the results whenever the schedule is built to survive the faults**
//!   (crashes and silent deaths of all but one node, a node or a group cut
//!   off, delay, loss, slow nodes, once the clocks run): every node whose
//!   clocks started and that no fault crashed ends with them.
//!
//! `SATIN_SIM_GRAPH_SEEDS=N` runs N seeds of each class (default 10 000);
//! `SATIN_SIM_GRAPH_SEED=S` replays one and prints its case and report.

use satin_dag::{Costs, TaskGraph};
use satin_faults::{parse, to_spec};
use satin_sim::graph::{random_case, run_graph, violations, FaultClass, GraphEnding, GraphSimConfig};

fn seeds() -> std::ops::Range<u64> {
    if let Some(s) = std::env::var("SATIN_SIM_GRAPH_SEED").ok().and_then(|s| s.parse().ok()) {
        return s..s + 1;
    }
    let n = std::env::var("SATIN_SIM_GRAPH_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(10_000);
    0..n
}

/// Runs every seed of `class`; panics with the failing seeds' cases.
fn check_class(class: FaultClass) -> (usize, usize) {
    let mut failures = Vec::new();
    let (mut survivable, mut faulty) = (0, 0);
    let replay = std::env::var_os("SATIN_SIM_GRAPH_SEED").is_some();
    for seed in seeds() {
        let case = random_case(seed, class);
        let cfg = GraphSimConfig { verbose: replay, ..GraphSimConfig::new(case.nodes, seed) };
        let report = run_graph(&case.graph, &cfg, &case.faults).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let wrong = violations(&case.graph, case.nodes, &report, case.survivable);
        survivable += usize::from(case.survivable);
        faulty += usize::from(!case.faults.is_empty());
        if replay {
            eprintln!("seed {seed}: {} tasks, {} nodes, survivable {}", case.graph.len(), case.nodes, case.survivable);
            eprintln!("faults (as --chaos reads them): {}", to_spec(&case.faults));
            for (i, end) in report.ends.iter().enumerate() {
                let end = match end {
                    GraphEnding::Done { run, master } => format!("done (master {master}, crashed {:?})", run.crashed),
                    other => format!("{other:?}"),
                };
                eprintln!("node {i}: {end}");
            }
        }
        let spec = to_spec(&case.faults);
        assert_eq!(parse(&spec).map(|f| f.len()), Ok(case.faults.len()), "seed {seed}: {spec} does not read back");
        if !wrong.is_empty() {
            failures.push(format!(
                "seed {seed} ({} tasks, {} nodes); faults (as --chaos reads them): {}\n  {}",
                case.graph.len(),
                case.nodes,
                to_spec(&case.faults),
                wrong.join("\n  ")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} seeds broke a promise (replay one with SATIN_SIM_GRAPH_SEED=S):\n{}",
        failures.len(),
        seeds().count(),
        failures.iter().take(10).cloned().collect::<Vec<_>>().join("\n")
    );
    (survivable, faulty)
}

#[test]
fn random_task_graph_runs_under_survivable_faults_end_with_the_fault_free_results() {
    let (survivable, faulty) = check_class(FaultClass::Survivable);
    // The promise of results is checked on most seeds, with faults on most.
    let n = seeds().count();
    assert!(survivable * 10 >= n * 9, "only {survivable} of {n} seeds were survivable");
    assert!(faulty * 2 >= n, "only {faulty} of {n} seeds had faults");
}

#[test]
fn random_task_graph_runs_under_any_faults_end_and_never_give_a_wrong_output() {
    check_class(FaultClass::Any);
}

/// A chain a → b → c → d of ten units each.
fn chain() -> TaskGraph {
    let names = ["a", "b", "c", "d"].map(String::from).to_vec();
    TaskGraph::new(names, Costs::Uniform(vec![10.0; 4]), &[(0, 1, 1.0), (1, 2, 1.0), (2, 3, 1.0)]).expect("a chain")
}

#[test]
fn a_node_killed_mid_run_leaves_the_others_the_results_and_is_named_crashed() {
    let faults = parse("crash:node=1,at=30%").unwrap();
    let report = run_graph(&chain(), &GraphSimConfig::new(3, 1), &faults).unwrap();
    assert_eq!(report.ends[1], GraphEnding::Crashed);
    for i in [0, 2] {
        match &report.ends[i] {
            GraphEnding::Done { run, .. } => assert_eq!(run.crashed, vec![1], "node {i}"),
            other => panic!("node {i}: {other:?}"),
        }
    }
    assert!(violations(&chain(), 3, &report, true).is_empty());
}

#[test]
fn the_checker_names_a_run_that_gives_up_though_its_faults_were_survivable() {
    // Without replanning, the duplicates cover one crash; two nodes of
    // three lost at once leave tasks with no copy. The run gives up in
    // words, and the promise of results (asked for here) is broken.
    let graph = chain();
    let cfg = GraphSimConfig { replan: false, ..GraphSimConfig::new(3, 2) };
    let faults = parse("crash:node=0,at=5%;crash:node=1,at=5%").unwrap();
    let report = run_graph(&graph, &cfg, &faults).unwrap();
    match &report.ends[2] {
        GraphEnding::Failed(why) => assert!(why.contains("nothing moved"), "{why}"),
        other => panic!("{other:?}"),
    }
    let wrong = violations(&graph, 3, &report, true);
    assert!(wrong.iter().any(|w| w.contains("node 2 failed")), "{wrong:?}");
    // With replanning (the default) the last node finishes alone.
    let report = run_graph(&graph, &GraphSimConfig::new(3, 2), &faults).unwrap();
    assert!(violations(&graph, 3, &report, true).is_empty());
    assert!(matches!(report.ends[2], GraphEnding::Done { master: true, .. }));
}

#[test]
fn a_node_cut_off_for_good_and_the_rest_each_finish_on_their_side() {
    let faults = parse("partition:node=2,at=20%").unwrap();
    let report = run_graph(&chain(), &GraphSimConfig::new(3, 3), &faults).unwrap();
    for (i, end) in report.ends.iter().enumerate() {
        assert!(matches!(end, GraphEnding::Done { .. }), "node {i}: {end:?}");
    }
    assert!(violations(&chain(), 3, &report, true).is_empty());
}

#[test]
fn a_master_cut_off_while_the_others_finish_shows_the_results_once_the_link_heals() {
    // The others run its tasks' duplicates and have the results long
    // before the heal; they stay until it has them too.
    let faults = parse("partition:node=0,at=10%;heal:node=0,at=500ms").unwrap();
    let report = run_graph(&chain(), &GraphSimConfig::new(3, 6), &faults).unwrap();
    for (i, end) in report.ends.iter().enumerate() {
        match end {
            GraphEnding::Done { run, master } => {
                assert!(run.crashed.is_empty(), "node {i}: {:?}", run.crashed);
                assert_eq!(*master, i == 0, "node {i}");
            }
            other => panic!("node {i}: {other:?}"),
        }
    }
}

#[test]
fn a_late_joiner_is_told_the_run_is_full() {
    let faults = parse("join:at=40%").unwrap();
    let report = run_graph(&chain(), &GraphSimConfig::new(2, 4), &faults).unwrap();
    match &report.ends[2] {
        GraphEnding::Failed(why) => assert!(why.contains("static schedule takes no joiners"), "{why}"),
        other => panic!("{other:?}"),
    }
    assert!(violations(&chain(), 2, &report, false).is_empty());
}

#[test]
fn faults_a_task_graph_run_has_no_meaning_for_are_refused_in_words() {
    for (spec, words) in [
        ("leave:node=1,at=1s", "graceful leave"),
        ("suspend:at=1s", "checkpoint"),
        ("fail:node=1,rate=0.5", "stolen jobs"),
        ("crash-cluster:cluster=1,at=1s", "clusters"),
        ("crash:node=5,at=1s", "only 3 nodes"),
    ] {
        let faults = parse(spec).unwrap();
        let err = run_graph(&chain(), &GraphSimConfig::new(3, 5), &faults).unwrap_err();
        assert!(err.contains(words), "{spec}: {err}");
    }
}
