//! `docs/results.md` keeps a section for every scenario the simulator
//! offers: each `simulate --scenario NAME` appears there with the command
//! that reproduces its figures.

use std::process::Command;

/// The scenario names `simulate --help` lists.
fn scenarios() -> Vec<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_simulate")).arg("--help").output().expect("simulate runs");
    let help = String::from_utf8_lossy(&out.stdout).to_string();
    let from = help.find("--scenario").expect("simulate has --scenario");
    let rest = &help[from..];
    let values = &rest[rest.find("Possible values:").expect("the scenarios are listed")..];
    values
        .lines()
        .skip(1)
        .take_while(|l| l.trim_start().starts_with("- "))
        .filter_map(|l| l.trim_start().strip_prefix("- ")?.split(':').next().map(str::to_string))
        .collect()
}

#[test]
fn every_simulated_scenario_has_its_section_in_the_results() {
    let results = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/results.md")).unwrap();
    let names = scenarios();
    assert!(names.len() >= 6, "the scenario list was not read: {names:?}");
    let missing: Vec<&String> =
        names.iter().filter(|n| !results.contains(&format!("--bin simulate -- --scenario {n} "))).collect();
    assert!(missing.is_empty(), "docs/results.md has no command for the scenarios {missing:?}");
}
