//! Recursion as people write it, on real node processes (`forms`, three
//! local nodes of one worker): a function that `?`s its calls, a method
//! taking `self`, two functions that call each other and `&mut` halves
//! merged after the calls. Each gives the plain function's answer, and
//! the nodes other than the first steal calls of it: the forms travel.

use crate::common;

use common::{one_at_a_time, run_bin, run_with_stats, stderr, stdout, Stats};
use satin_examples::forms;

const FORMS: &str = env!("CARGO_BIN_EXE_forms");

/// Runs `forms` on three local nodes; returns its answer, its log and the
/// nodes' figures.
/// Runs `f` (a sequential computation of an expected answer) in this
/// binary's turn, as the clusters run: on two cores, a computation beside
/// another test's cluster would slow that cluster down — and `--chaos`
/// faults placed at a percentage of a calibration run would land late.
fn alone<T>(f: impl FnOnce() -> T) -> T {
    let _turn = one_at_a_time();
    f()
}

fn on_three_nodes(args: &[&str]) -> (String, String, Stats) {
    let args = [args, &["--local-nodes", "3", "--workers", "1"]].concat();
    let (out, stats) = run_with_stats(FORMS, &args, &[]);
    let log = stderr(&out);
    assert!(out.status.success(), "forms {args:?} failed:\n{log}");
    (stdout(&out), log, stats)
}

#[test]
fn a_function_that_question_marks_its_calls_runs_across_nodes() {
    let (answer, log, stats) = on_three_nodes(&["orbits", "6000000"]);
    assert_eq!(answer, alone(|| format!("{:?}", forms::longest_orbit_plain(1, 6_000_000, u32::MAX))), "{log}");
    assert!(stats.others(0, "jobs_stolen") > 0, "no other node stole a call:\n{log}");
    // An error: the same one as the plain function's, the first in order.
    let (answer, log, _) = on_three_nodes(&["orbits", "6000000", "--limit", "400"]);
    assert_eq!(answer, alone(|| format!("{:?}", forms::longest_orbit_plain(1, 6_000_000, 400))), "{log}");
    assert!(answer.starts_with("Err(TooLong"), "{answer}");
}

#[test]
fn a_method_runs_across_nodes_and_survives_a_killed_node() {
    let expected = alone(|| forms::Board::empty(15).solutions_plain().to_string());
    let (answer, log, stats) = on_three_nodes(&["queens", "15"]);
    assert_eq!(answer, expected, "{log}");
    assert!(stats.others(0, "jobs_stolen") > 0, "no other node stole a call:\n{log}");
    let (answer, log, _) = on_three_nodes(&["queens", "15", "--chaos", "kill:node=2,at=40%"]);
    assert_eq!(answer, expected, "{log}");
}

#[test]
fn functions_that_call_each_other_run_across_nodes() {
    let (answer, log, stats) = on_three_nodes(&["minimax", "13"]);
    assert_eq!(answer, alone(|| forms::max_value_plain(0, 13, 4).to_string()), "{log}");
    assert!(stats.others(0, "jobs_stolen") > 0, "no other node stole a call:\n{log}");
}

#[test]
fn mut_halves_merged_after_the_calls_run_across_nodes() {
    let mut numbers = forms::numbers(4_000_000, 3);
    let expected = alone(|| forms::count_inversions_plain(&mut numbers).to_string());
    let (answer, log, stats) = on_three_nodes(&["inversions", "4000000"]);
    assert_eq!(answer, expected, "{log}");
    assert!(stats.others(0, "jobs_stolen") > 0, "no other node stole a call:\n{log}");
}

#[test]
fn a_generic_function_runs_across_nodes() {
    let numbers = forms::numbers(2_000_000, 5);
    let mut sorted = numbers.clone();
    sorted.sort();
    let expected = format!("{} {}", sorted.len(), forms::digest(&sorted));
    let (answer, log, stats) = on_three_nodes(&["sort", "2000000"]);
    assert_eq!(answer, expected, "{log}");
    // Every node runs the program to its call of `merge_sort::<i64>`, so
    // every node knows that instantiation: others steal its calls.
    assert!(stats.others(0, "jobs_stolen") > 0, "no other node stole a call:\n{log}");
    assert_eq!(stats.total("refused"), 0, "{log}");
}

#[test]
fn an_instantiation_only_the_master_has_used_is_refused_and_runs_there() {
    let numbers = forms::numbers(1_000_000, 7);
    let mut order: Vec<(i64, u32)> = numbers.iter().copied().zip(0..).collect();
    order.sort();
    let mut ranks = vec![0u32; numbers.len()];
    for (r, (_, at)) in order.iter().enumerate() {
        ranks[*at as usize] = r as u32;
    }
    let expected = format!("{} {}", ranks.len(), forms::digest(&ranks));
    let (answer, log, stats) = on_three_nodes(&["ranks", "1000000"]);
    assert_eq!(answer, expected, "{log}");
    // `merge_sort::<(i64, u32)>` is called only by `ranks`, which only the
    // master runs: the other nodes have never used it, refuse its calls,
    // and the master runs them itself.
    assert!(stats.total("refused") > 0, "no node refused a call:\n{log}");
    assert_eq!(stats.others(0, "jobs_stolen"), 0, "{log}");
}

#[test]
fn a_program_s_successive_calls_are_runs_of_the_same_nodes_and_survive_a_crash_in_the_second() {
    let expected = alone(|| {
        let first = forms::max_value_plain(0, 13, 4);
        format!("{first} {}", forms::max_value_plain(forms::next_position(first), 14, 4))
    });
    let (answer, log, stats) = on_three_nodes(&["steps", "14"]);
    assert_eq!(answer, expected, "{log}");
    // The nodes' figures at the end of each run: both runs were shared.
    let in_first: u64 = (1..3).map(|n| stats.in_run(n, 0, "jobs_stolen")).sum();
    let in_both: u64 = (1..3).map(|n| stats.in_run(n, 1, "jobs_stolen")).sum();
    assert!(in_first > 0, "the other nodes did not steal in the first run:\n{log}");
    assert!(in_both > in_first, "the other nodes did not steal in the second run:\n{log}");
    // A node killed during the second call (three quarters of the way),
    // then the master: the answer is the same.
    for victim in ["2", "0"] {
        let chaos = format!("kill:node={victim},at=75%");
        let (answer, log, _) = on_three_nodes(&["steps", "14", "--chaos", &chaos]);
        assert_eq!(answer, expected, "{chaos}:\n{log}");
        // (After the calibration run without faults that places the 75 %.)
        let faulty = log.split("chaos: the run takes").nth(1).expect("a calibration run first");
        let masters = faulty.lines().filter(|l| l.ends_with("the run is over; this node is its master")).count();
        assert_eq!(masters, 2, "{chaos}: one master per run:\n{log}");
    }
    // A node that joins during the second call starts its program from the
    // beginning: it catches up with the first answer and ends with the rest.
    let (answer, log, _) = on_three_nodes(&["steps", "14", "--chaos", "join:at=60%"]);
    assert_eq!(answer, expected, "{log}");
    assert!(log.contains("node 3 joins") && log.contains("node 3 0"), "the joiner did not end well:\n{log}");
}

#[test]
fn a_program_of_several_calls_resumes_from_its_checkpoint_after_losing_every_node() {
    let expected = alone(|| {
        let first = forms::max_value_plain(0, 13, 4);
        format!("{first} {}", forms::max_value_plain(forms::next_position(first), 14, 4))
    });
    let dir = std::env::temp_dir().join(format!("satin-forms-steps-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("steps.ckpt");
    let f = file.to_str().expect("utf-8");
    let args = ["steps", "14", "--local-nodes", "3", "--workers", "1", "--idle-timeout-ms", "500", "--checkpoint", f];
    // Every node killed during the second call (the first, one move
    // shallower, takes about a fifth of the run: half-way leaves room for
    // a run faster or slower than the calibration run).
    let lost = run_bin(FORMS, &[&args[..], &["--chaos", "kill:node=all,at=50%"]].concat(), &[]);
    let log = stderr(&lost);
    assert!(!lost.status.success() && stdout(&lost).is_empty(), "{log}");
    assert!(log.contains("can be resumed from its checkpoint"), "{log}");
    // The same command: the first call's answer comes from the file, the
    // second call runs again, and the program prints both.
    let (out, stats) = run_with_stats(FORMS, &args, &[]);
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    assert_eq!(stdout(&out), expected, "{log}");
    assert!(log.contains("resuming from"), "{log}");
    assert!(stats.total("table_hits") > 0, "the first call's answer was not reused:\n{log}");
    let _ = std::fs::remove_dir_all(&dir);
}
