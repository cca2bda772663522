//! The fault campaign in CI: a few dozen short runs drawn at random
//! (workloads, 3 to 5 nodes, faults of every word of the `--chaos`
//! language, runs by hand with any node killed from outside), each of
//! which must print the right answer exactly once. A failing seed is
//! named, with the command that replays it.

use crate::common;

use std::process::Command;

const CAMPAIGN: &str = env!("CARGO_BIN_EXE_campaign");

#[test]
fn two_dozen_random_fault_schedules_each_print_the_right_answer_once() {
    let _turn = common::one_at_a_time();
    let dir = tempfile::tempdir().expect("a scratch directory");
    let failures = dir.path().join("failures.txt");
    let out = Command::new(CAMPAIGN)
        .args(["--runs", "24", "--seed", "1000", "--parallel", "2", "--failures"])
        .arg(&failures)
        .output()
        .expect("the campaign runs");
    let report = String::from_utf8_lossy(&out.stdout);
    let seeds = std::fs::read_to_string(&failures).unwrap_or_default();
    assert!(
        out.status.success(),
        "failing runs (replay one with `campaign --replay SEED`):\n{seeds}\n{report}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(report.contains("| right once | 24 |"), "{report}");
    assert!(!failures.exists(), "no failing seed is written when none fails");
}
