//! The simulator binary and the Fig. 4 reproduction. All times here are
//! virtual and deterministic for a seed: ratios of them are safe to assert.

use std::process::Command;

use satin::policy::FtMode;
use satin::sim::{self, SimConfig};
use satin_examples::scenarios::fig4_config;

fn fig4(clusters: u32, ft: FtMode, crash: &[u32]) -> sim::Report {
    sim::run(&fig4_config(&SimConfig { seed: 1, ..SimConfig::default() }, clusters, ft, crash))
}

#[test]
fn fig4_crashing_a_cluster_beats_starting_without_it() {
    let crashed = fig4(4, FtMode::Table, &[3]);
    let three = fig4(3, FtMode::Table, &[]);
    let naive = fig4(4, FtMode::Naive, &[3]);
    assert!(crashed.result_ok && three.result_ok && naive.result_ok);
    let ratio = crashed.virtual_seconds / three.virtual_seconds;
    assert!(ratio <= 0.95, "T(1 of 4 crashed) / T(3 from start) = {ratio}");
    assert!(crashed.redundancy() <= 0.01, "redundant leaf work {}", crashed.redundancy());
    assert!(crashed.virtual_seconds < naive.virtual_seconds);
}

#[test]
fn simulate_prints_the_documented_json_fields() {
    let out = Command::new(env!("CARGO_BIN_EXE_simulate"))
        .args(["--seed", "5", "--clusters", "2", "--nodes-per-cluster", "4", "--size", "500", "--json"])
        .args(["--faults", "crash:node=3,at=40%;join:cluster=1,at=10ms"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json = String::from_utf8(out.stdout).unwrap();
    for field in [
        "virtual_seconds",
        "leaves_executed",
        "leaves_needed",
        "result_ok\":true",
        "jobs_stolen",
        "table_entries",
        "table_hits",
        "messages",
        "bytes",
    ] {
        assert!(json.contains(field), "{field} missing in {json}");
    }
    assert!(String::from_utf8_lossy(&out.stderr).contains("seed 5"));
}

#[test]
fn simulate_rejects_a_bad_fault_spec_clearly() {
    let out = Command::new(env!("CARGO_BIN_EXE_simulate")).args(["--faults", "crash:at=5s"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing node=N"));
    let out = Command::new(env!("CARGO_BIN_EXE_simulate")).args(["--clusters", "0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn fig4_scenario_prints_one_json_object_per_row() {
    let out = Command::new(env!("CARGO_BIN_EXE_simulate"))
        .args(["--scenario", "satin-fig4", "--seed", "1", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.trim_start().starts_with('[') && text.trim_end().ends_with(']'));
    assert_eq!(text.matches("\"name\"").count(), 11, "{text}");
    assert_eq!(text.matches("\"result_ok\":true").count(), 11, "{text}");
}

/// Seed 003's experiment: the interface other checks read, every task's
/// result right and none delivered twice, and the run faster than GRID
/// superscalar's published 135.8 h.
#[test]
fn gridsuperscalar_scenario_prints_table_three_as_one_json_object() {
    let out = Command::new(env!("CARGO_BIN_EXE_simulate"))
        .args(["--scenario", "gridsuperscalar", "--seed", "1", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let json = text.trim();
    assert!(json.starts_with('{') && json.ends_with('}') && json.lines().count() == 1, "{json}");
    for field in ["\"total_hours\":", "\"result_ok\":true", "\"tasks_completed_twice\":0", "\"machines\":["] {
        assert!(json.contains(field), "{field} missing in {json}");
    }
    for field in ["\"name\":\"bscgrid0", "\"completed\":", "\"failed\":", "\"jobs_per_day\":[", "],\"drops\":"] {
        assert_eq!(json.matches(field).count(), 8, "{field}: 4 machines in each of two runs: {json}");
    }
    let hours: f64 = json["{\"soft\":1.05,\"hard\":1.1,\"total_hours\":".len()..]
        .split(',')
        .next()
        .and_then(|h| h.parse().ok())
        .expect("total_hours first");
    assert!((120.0..135.79).contains(&hours), "{hours} h");
    // Narrow timeouts abort a slow machine's first late task, not every
    // task it starts (its hard timeouts are stretched): within an hour of
    // the default timeouts' run.
    let default: f64 = json
        .split("\"default_timeouts\":{\"soft\":1.25,\"hard\":2,\"total_hours\":")
        .nth(1)
        .and_then(|t| t.split(',').next())
        .and_then(|h| h.parse().ok())
        .expect("default run's total_hours");
    assert!(hours < default + 1.0, "narrow {hours} h, default {default} h");
}

/// A straggler in the Fig. 4 setup: a hung node is copied around (the run
/// ends, about as fast as without that node); without duplicates it never
/// ends.
#[test]
fn a_hung_node_in_the_fig4_setup_costs_little_with_duplicates() {
    use satin::sim::faults::{Fault, Kind, When};
    let base = SimConfig { seed: 1, ..SimConfig::default() };
    let with = |kind: Kind, duplicates: bool| {
        let mut c = fig4_config(&base, 4, FtMode::Table, &[]);
        c.faults = vec![Fault { at: When::After(0), kind }];
        c.protocol.stragglers.duplicates = duplicates;
        c.time_limit = 200_000_000_000;
        sim::run(&c)
    };
    let absent = with(Kind::Leave(37), true);
    let hung = with(Kind::hang(37), true);
    assert!(absent.result_ok && hung.result_ok, "{}", hung.to_json());
    assert!(hung.duplicates_won >= 1 && hung.completed_twice == 0, "{}", hung.to_json());
    let ratio = hung.virtual_seconds / absent.virtual_seconds;
    assert!(ratio <= 1.05, "hung / absent = {ratio}");
    assert!(!with(Kind::hang(37), false).result_ok);
}
