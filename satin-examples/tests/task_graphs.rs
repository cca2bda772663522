//! Real task-graph runs: node processes on loopback play the processors of
//! a fault-tolerant schedule; one is killed with SIGKILL mid-run, and the
//! duplicates of its tasks, or a new plan for the rest, finish the run with
//! the right results.

use crate::common;

use common::{run_bin as run, stderr, stdout};

const DAG: &str = env!("CARGO_BIN_EXE_dag");
const WORKFLOW: &str = env!("CARGO_BIN_EXE_workflow");

fn graph() -> String {
    satin_examples::data_dir().join("stg/generated/random100.stg").display().to_string()
}

fn field(json: &str, key: &str) -> String {
    let v: serde_json::Value = serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}"));
    v[key].to_string()
}

/// `dag run … --json` with `args`, checked to end with every task done and
/// the right results; returns its JSON line and log.
fn dag_run(args: &[&str], envs: &[(&str, &str)]) -> (String, String) {
    let mut all = vec!["run", "--json"];
    let g = graph();
    all.push(&g);
    all.extend_from_slice(args);
    let out = run(DAG, &all, envs);
    let log = stderr(&out);
    assert!(out.status.success(), "dag {all:?} failed:\n{log}");
    let json = stdout(&out);
    assert_eq!(field(&json, "tasks_total"), "102", "{json}");
    assert_eq!(field(&json, "tasks_completed"), "102", "{json}");
    assert_eq!(field(&json, "result_ok"), "true", "{json}");
    (json, log)
}

#[test]
fn a_task_graph_runs_on_four_nodes_as_planned() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("run.json");
    let (json, _) = dag_run(&["--local-nodes", "4", "--trace", &trace.display().to_string()], &[]);
    assert_eq!(field(&json, "procs"), "4");
    assert_eq!(field(&json, "crashed"), "[]");
    // The duplicates sit in idle gaps and are aborted: at most one that
    // the abort reached late runs to its end.
    let dups: usize = field(&json, "duplicates_completed").parse().unwrap();
    assert!(dups <= 2, "{json}");
    // The trace shows the plan and the run: every task planned once and
    // run at least once.
    let events: Vec<serde_json::Value> = serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    let count = |cat: &str| events.iter().filter(|e| e["cat"] == cat).count();
    assert_eq!(count("planned"), 102);
    assert!(count("job") >= 102, "{} spans of the run", count("job"));
}

#[test]
fn a_node_killed_at_30_percent_leaves_its_tasks_to_their_duplicates() {
    let (json, log) = dag_run(&["--local-nodes", "4", "--chaos", "kill:node=2,at=30%", "--no-replan"], &[]);
    assert_eq!(field(&json, "replanned"), "false");
    assert!(log.contains("chaos: SIGKILL node 2"), "{log}");
    let crashed: Vec<usize> = serde_json::from_str(&field(&json, "crashed")).unwrap();
    assert_eq!(crashed.len(), 1, "{json}");
    // The kill landed mid-run: the dead node's unfinished tasks ran as
    // duplicates elsewhere.
    let dups: usize = field(&json, "duplicates_completed").parse().unwrap();
    assert!(dups > 0, "{json}\n{log}");
}

/// On a narrow graph with costly edges the duplicates continue badly (a
/// lost chain's duplicates sit on different processors); the lowest live
/// node replans the rest, and every node follows the new plan — fetching
/// inputs whose data went elsewhere.
#[test]
fn after_a_kill_the_rest_is_replanned_where_that_ends_sooner() {
    let g = satin_examples::data_dir().join("stg/generated/narrow236_comm.stg").display().to_string();
    let args = ["run", "--json", &g, "--unit-ms", "0.5", "--local-nodes", "4", "--chaos", "kill:node=1,at=30%"];
    let out = run(DAG, &args, &[]);
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    let json = stdout(&out);
    assert_eq!(field(&json, "tasks_completed"), "238", "{json}");
    assert_eq!(field(&json, "result_ok"), "true", "{json}");
    assert_eq!(field(&json, "replanned"), "true", "{json}\n{log}");
    assert!(log.contains("every node follows the new plan"), "{log}");
}

#[test]
fn the_run_survives_its_master_killed() {
    let (json, log) = dag_run(&["--local-nodes", "4", "--chaos", "kill:node=0,at=30%"], &[]);
    assert_eq!(field(&json, "crashed"), "[0]", "{json}");
    assert!(log.contains("this node is its master"), "{log}");
}

/// Without the supervisor's death notices a crash is found by QUIC's idle
/// timeout, as across machines.
#[test]
fn a_crash_is_found_by_the_idle_timeout_without_notices() {
    let (json, _) = dag_run(
        &["--local-nodes", "3", "--idle-timeout-ms", "400", "--chaos", "kill:node=1,at=30%"],
        &[("SATIN_DEATH_NOTICES", "off")],
    );
    assert_eq!(field(&json, "crashed").matches(',').count(), 0, "one crash: {json}");
    assert_ne!(field(&json, "crashed"), "[]", "{json}");
}

/// A fault schedule in the language the simulator and `--chaos` share:
/// the simulator's task-graph nodes (the same core) survive it, and so do
/// real processes given it unchanged.
#[test]
fn a_schedule_the_graph_simulator_survives_runs_as_chaos_on_real_processes() {
    use satin::sim::graph::{self, GraphEnding, GraphSimConfig};
    let spec = "vanish:node=3,at=20%;partition:node=2,at=45%";
    let text = std::fs::read_to_string(graph()).unwrap();
    let g = satin::dag::stg::parse(&text).unwrap();
    let cfg = GraphSimConfig { idle_timeout: 400_000_000, ..GraphSimConfig::new(4, 7) };
    let report = graph::run_graph(&g, &cfg, &graph::parse(spec).unwrap()).unwrap();
    assert!(graph::violations(&g, 4, &report, true).is_empty());
    assert_eq!(report.ends[3], GraphEnding::Crashed);
    // Node 2, cut off for good, finishes alone; the others without it.
    for i in 0..3 {
        assert!(matches!(report.ends[i], GraphEnding::Done { .. }), "simulated node {i}: {:?}", report.ends[i]);
    }
    let (json, log) = dag_run(&["--local-nodes", "4", "--idle-timeout-ms", "400", "--chaos", spec], &[]);
    assert!(log.contains("chaos: node 2 is cut off"), "{log}");
    // `crashed` names processors, numbered in the order the nodes joined
    // (racy under `--local-nodes`, not their labels): node 3's is 3 when
    // they joined in order, and whichever it is, the silent death and the
    // node cut off for good make two.
    let crashed: Vec<usize> = serde_json::from_str(&field(&json, "crashed")).unwrap();
    assert!(crashed.contains(&3) || crashed.len() == 2, "the silent death went unseen: {json}\n{log}");
}

/// The master cut off for most of the run, the link back before the idle
/// timeout: the others finish meanwhile and wait for it (a node that has
/// the results stays until every live node has them), so what they sent
/// it reaches it when the link heals, and it shows the results.
#[test]
fn a_master_cut_off_while_the_others_finish_gets_their_news_when_the_link_heals() {
    let chaos = "partition:node=0,at=500ms;heal:node=0,at=2800ms";
    let (json, log) = dag_run(&["--local-nodes", "3", "--idle-timeout-ms", "5000", "--chaos", chaos], &[]);
    assert!(log.contains("chaos: node 0 is reachable again"), "{log}");
    assert!(log.contains("node 0 0 (master: printed the answer)"), "{log}");
    assert_eq!(field(&json, "crashed"), "[]", "{json}");
}

#[test]
fn a_workflow_of_rust_functions_gives_the_sequential_answer_after_a_kill() {
    let expected = satin_examples::pipeline::sequential(8, 50_000);
    let out = run(WORKFLOW, &["8", "50000"], &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).lines().next(), Some(expected.as_str()));
    let out = run(WORKFLOW, &["8", "50000", "--local-nodes", "3", "--chaos", "kill:node=1,at=40%"], &[]);
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    assert_eq!(stdout(&out).lines().next(), Some(expected.as_str()), "{log}");
}

#[test]
fn task_graph_runs_refuse_what_they_cannot_do() {
    // One node has nowhere to put a duplicate.
    let out = run(DAG, &["run", &graph(), "--local-nodes", "1"], &[]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("at least 2 nodes"), "{}", stderr(&out));
    // Bad numbers are refused with a message, status 2.
    for (bin, args, want) in [
        (WORKFLOW, vec!["0"], "BLOCKS \"0\""),
        (WORKFLOW, vec!["4", "x"], "SIZE \"x\""),
        (DAG, vec!["run", "/nonexistent.stg"], "cannot read /nonexistent.stg"),
        (DAG, vec!["generate", "--min", "9", "--max", "3"], "above its largest"),
    ] {
        let out = run(bin, &args, &[]);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(want), "{args:?}: {}", stderr(&out));
    }
    // No dashboard for task graphs yet: said, not ignored.
    for flag in [["--dashboard", "127.0.0.1:0"], ["--report", "/tmp/never.html"]] {
        let out = run(DAG, &[&["run", &graph()][..], &flag[..]].concat(), &[]);
        assert_eq!(out.status.code(), Some(2), "{flag:?}: {}", stderr(&out));
        assert!(stderr(&out).contains("task-graph runs have no dashboard yet"), "{}", stderr(&out));
    }
    // Faults a static schedule has no meaning for.
    for (chaos, words) in [
        ("leave:node=1,at=1s", "no graceful leave"),
        ("suspend:at=1s", "no checkpoint"),
        ("fail:node=1,rate=0.5", "no stolen jobs"),
    ] {
        let out = run(DAG, &["run", &graph(), "--local-nodes", "3", "--chaos", chaos], &[]);
        assert_eq!(out.status.code(), Some(2), "{chaos}: {}", stderr(&out));
        assert!(stderr(&out).contains(words), "{chaos}: {}", stderr(&out));
    }
    let out = run(DAG, &["run", &graph(), "--unit-ms", "-1"], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    // A master that does not know how many nodes to wait for.
    let out = run(DAG, &["run", &graph(), "--listen", "127.0.0.1:0", "--pool", "/nonexistent"], &[]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("--nodes"), "{}", stderr(&out));
    // A node that joins after the start is told so; the run goes on.
    let out = run(DAG, &["run", "--json", &graph(), "--local-nodes", "3", "--chaos", "join:at=400ms"], &[]);
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    assert!(log.contains("a static schedule takes no joiners"), "{log}");
    assert_eq!(field(&stdout(&out), "result_ok"), "true");
}
