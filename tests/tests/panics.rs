//! A panic in a job of a distributed run goes to the caller, node by node,
//! up to the root, as it does in a local run: the run fails at once with
//! the panic's message, and no node is taken for crashed.

use std::process::Command;

const PANICKY: &str = env!("CARGO_BIN_EXE_panicky");

fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(PANICKY).args(args).output().expect("panicky runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).trim().to_string(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// A run that writes its nodes' figures (`--stats-json`): the `recoveries`
/// figure of every node that wrote them, besides what [`run`] returns.
fn run_with_recoveries(args: &[&str]) -> (Option<i32>, String, String, Vec<u64>) {
    let dir = tempfile::tempdir().expect("a scratch directory");
    let file = dir.path().join("stats.json");
    let all = [args, &["--stats-json", file.to_str().expect("utf-8")]].concat();
    let (code, out, log) = run(&all);
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("no statistics ({e}):\n{log}"));
    let stats: serde_json::Value = serde_json::from_str(&text).expect("the statistics are JSON");
    let nodes = stats["nodes"].as_array().expect("a list of nodes");
    let recoveries = nodes.iter().filter_map(|n| n["stats"]["recoveries"].as_u64()).collect();
    (code, out, log, recoveries)
}

#[test]
fn without_a_bad_leaf_three_nodes_count_every_leaf() {
    let (code, out, log) = run(&["14", "--local-nodes", "3", "--workers", "1"]);
    assert_eq!(code, Some(0), "{log}");
    assert_eq!(out, "16384");
}

#[test]
fn a_panicking_leaf_fails_the_run_with_its_message_and_crashes_no_node() {
    for leaf in ["0", "16383", "9000"] {
        let (code, out, log, r) =
            run_with_recoveries(&["14", "--bad-leaf", leaf, "--local-nodes", "3", "--workers", "1"]);
        assert_eq!(code, Some(1), "{log}");
        assert_eq!(out, "", "no answer");
        assert!(log.contains(&format!("a job panicked: leaf {leaf} is bad")), "{log}");
        assert_eq!(r, vec![0, 0, 0], "a node was taken for crashed:\n{log}");
    }
}

#[test]
fn a_panic_on_one_machine_still_goes_to_the_caller() {
    let (code, _, log) = run(&["10", "--bad-leaf", "3"]);
    assert_eq!(code, Some(101), "a panic in main: {log}");
    assert!(log.contains("leaf 3 is bad"), "{log}");
}
