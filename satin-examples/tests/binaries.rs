//! The binaries end to end: first line of stdout, exit codes, error messages.

use std::process::{Command, Output};

use satin_examples::data_dir;

fn run(bin: &str, args: &[&str]) -> Output {
    Command::new(bin).args(args).output().expect("binary runs")
}

fn first_line(o: &Output) -> String {
    assert!(o.status.success(), "failed: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).lines().next().unwrap_or_default().to_string()
}

fn data(path: &str) -> String {
    data_dir().join(path).display().to_string()
}

#[test]
fn every_example_prints_the_right_answer_first() {
    assert_eq!(first_line(&run(env!("CARGO_BIN_EXE_fib"), &["30"])), "832040");
    assert_eq!(first_line(&run(env!("CARGO_BIN_EXE_fib"), &["30", "--workers", "1"])), "832040");
    assert_eq!(first_line(&run(env!("CARGO_BIN_EXE_nqueens"), &["10"])), "724");
    assert_eq!(
        first_line(&run(env!("CARGO_BIN_EXE_knapsack"), &[&data("knapsack/large_scale/knapPI_1_100_1000_1")])),
        "9147"
    );
    assert_eq!(
        first_line(&run(env!("CARGO_BIN_EXE_knapsack"), &[&data("knapsack/low-dimensional/f5_l-d_kp_15_375")])),
        "481.0694"
    );
    assert_eq!(first_line(&run(env!("CARGO_BIN_EXE_tsp"), &[&data("tsp/burma14.tsp")])), "3323");
    assert_eq!(first_line(&run(env!("CARGO_BIN_EXE_tsp"), &[&data("tsp/burma14.tsp"), "--sequential"])), "3323");
    assert_eq!(first_line(&run(env!("CARGO_BIN_EXE_sat"), &[&data("cnf/uf50-01.cnf")])), "SAT");
    assert_eq!(first_line(&run(env!("CARGO_BIN_EXE_sat"), &[&data("cnf/uuf50-01.cnf")])), "UNSAT");
    let seq = first_line(&run(env!("CARGO_BIN_EXE_mergesort"), &["100000", "--seed", "7", "--sequential"]));
    assert_eq!(first_line(&run(env!("CARGO_BIN_EXE_mergesort"), &["100000", "--seed", "7"])), seq);
    let seq = first_line(&run(env!("CARGO_BIN_EXE_montecarlo"), &["2000", "--seed", "3", "--sequential"]));
    assert_eq!(first_line(&run(env!("CARGO_BIN_EXE_montecarlo"), &["2000", "--seed", "3"])), seq);
    assert!(seq.starts_with("3.1"), "{seq}");
}

#[test]
fn raytracer_writes_the_png_it_checksums() {
    let dir = std::env::temp_dir().join(format!("satin-rt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let png = dir.join("scene.png");
    let args = ["--width", "120", "--height", "80", "-o", png.to_str().unwrap()];
    let par = first_line(&run(env!("CARGO_BIN_EXE_raytracer"), &args));
    let seq = first_line(&run(env!("CARGO_BIN_EXE_raytracer"), &["--width", "120", "--height", "80", "--sequential"]));
    assert_eq!(par, seq);
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_input_exits_2_with_a_message_naming_the_problem() {
    let o = run(env!("CARGO_BIN_EXE_sat"), &["/nonexistent/x.cnf"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot read /nonexistent/x.cnf"));

    let bad = std::env::temp_dir().join(format!("satin-bad-{}.cnf", std::process::id()));
    std::fs::write(&bad, "p cnf 3 1\n1 -7 0\n").unwrap();
    let o = run(env!("CARGO_BIN_EXE_sat"), &[bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("literal -7 names a variable above 3"));
    std::fs::remove_file(&bad).unwrap();

    let o = run(env!("CARGO_BIN_EXE_nqueens"), &["14", "--workers", "0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--workers"));
    let o = run(env!("CARGO_BIN_EXE_fib"), &["abc"]);
    assert_eq!(o.status.code(), Some(2));
    let o = run(env!("CARGO_BIN_EXE_tsp"), &[&data("cnf/uf50-01.cnf")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("uf50-01.cnf: line 1: unexpected"), "{o:?}");
}

/// A program that parses its own command line becomes a node through
/// `Launch::from_env`: its own arguments and `--help` stay its own, satin's
/// flags are taken out, and `--satin-help` lists them.
#[test]
fn a_program_with_its_own_arguments_runs_on_several_nodes() {
    let bin = env!("CARGO_BIN_EXE_plain_main");
    let expected = (1..=100_000u64).map(|i| i * i).sum::<u64>().to_string();
    assert_eq!(first_line(&run(bin, &["100000"])), expected);
    assert_eq!(first_line(&run(bin, &["--workers", "1", "100000"])), expected);
    let nodes = run(bin, &["100000", "--local-nodes", "2", "--no-progress"]);
    assert_eq!(first_line(&nodes), expected);
    let stderr = String::from_utf8_lossy(&nodes.stderr);
    assert!(stderr.contains("2 local nodes"), "{stderr}");
    assert!(!stderr.contains('\u{1b}'), "no terminal colours in a pipe: {stderr}");

    let help = String::from_utf8_lossy(&run(bin, &["--help"]).stdout).to_string();
    assert!(help.starts_with("plain_main N:") && !help.contains("--local-nodes"), "{help}");
    let satin_help = String::from_utf8_lossy(&run(bin, &["--satin-help"]).stdout).to_string();
    assert!(satin_help.contains("--local-nodes") && satin_help.contains("--join"), "{satin_help}");

    let bad = run(bin, &["--workers", "0", "100"]);
    assert_eq!(bad.status.code(), Some(2));
    let msg = String::from_utf8_lossy(&bad.stderr);
    assert!(msg.starts_with("plain_main: error: invalid value '0' for '--workers"), "{msg}");
    let own_bad = run(bin, &["many"]);
    assert_eq!(own_bad.status.code(), Some(2));
    // A misspelt satin flag is not handed to the program (which would run
    // alone without a word).
    let typo = run(bin, &["10", "--lisen", "127.0.0.1:1"]);
    assert_eq!(typo.status.code(), Some(2));
    let msg = String::from_utf8_lossy(&typo.stderr);
    assert!(msg.contains("did you mean '--listen'"), "{msg}");
}

/// The value of `"key":` in a one-line JSON object.
fn json_field(line: &str, key: &str) -> String {
    let at = line.find(&format!("\"{key}\":")).unwrap_or_else(|| panic!("no {key} in {line}"));
    line[at + key.len() + 3..].split([',', '}']).next().unwrap().to_string()
}

#[test]
fn dag_schedules_and_reports_what_a_crash_costs() {
    let heft = first_line(&run(
        env!("CARGO_BIN_EXE_dag"),
        &["schedule", &data("stg/heft_canonical"), "--procs", "3", "--json"],
    ));
    assert_eq!(json_field(&heft, "makespan"), "80");
    assert_eq!(json_field(&heft, "valid"), "true");
    let ft = first_line(&run(
        env!("CARGO_BIN_EXE_dag"),
        &["schedule", &data("stg/kasahara50/rand0000.stg"), "--procs", "8", "--ft", "--json"],
    ));
    assert_eq!(json_field(&ft, "valid"), "true");
    assert_eq!(json_field(&ft, "makespan"), json_field(&ft, "heft_makespan"), "no cost fault-free");
    let (free, worst): (f64, f64) =
        (json_field(&ft, "makespan").parse().unwrap(), json_field(&ft, "crash_worst").parse().unwrap());
    assert!(worst >= free && worst < 2.0 * free, "{ft}");
    // `crash_worst` is what a run does (the shorter of the duplicates and
    // a new plan); never worse than the duplicates alone.
    let duplicates: f64 = json_field(&ft, "crash_worst_duplicates").parse().unwrap();
    assert!(worst <= duplicates && duplicates < 2.0 * free, "{ft}");
    assert_eq!(json_field(&ft, "crash_worst"), json_field(&ft, "crash_worst_adaptive"));
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("plan.json");
    let o = run(
        env!("CARGO_BIN_EXE_dag"),
        &[
            "schedule",
            &data("stg/heft_canonical"),
            "--procs",
            "3",
            "--ft",
            "--trace",
            &trace.display().to_string(),
            "--crash",
            "1@20",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let events: Vec<serde_json::Value> = serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["args"]["kind"].as_str()).collect();
    assert_eq!(kinds.iter().filter(|k| **k == "original").count(), 10, "{kinds:?}");
    assert!(kinds.contains(&"lost in the crash") || kinds.contains(&"completed"), "{kinds:?}");
    let table = run(env!("CARGO_BIN_EXE_dag"), &["table", &data("stg/application/robot.stg"), "--procs", "4,32"]);
    let text = String::from_utf8_lossy(&table.stdout);
    assert_eq!(text.lines().filter(|l| l.starts_with("| robot.stg | 90 |")).count(), 2, "{text}");
}

#[test]
fn dag_refuses_bad_graphs_with_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("cycle.stg");
    std::fs::write(&bad, "2\n0 0 0\n1 5 1 2\n2 5 1 1\n3 0 1 2\n").unwrap();
    let o = run(env!("CARGO_BIN_EXE_dag"), &["schedule", &bad.display().to_string()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("cycle.stg: line 3: task 1 is on a cycle") || err.contains("line 4"), "{err}");
    let o = run(env!("CARGO_BIN_EXE_dag"), &["schedule", &data("stg/heft_canonical"), "--procs", "1", "--ft"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("two processors"));
    let o = run(env!("CARGO_BIN_EXE_dag"), &["schedule", "/nonexistent.stg"]);
    assert_eq!(o.status.code(), Some(2));
}

/// `--init-pool FILE` needs nothing else: not the example's own required
/// arguments, nor those a program checks itself after `Launch::from_env`.
#[test]
fn init_pool_needs_none_of_the_programs_own_arguments() {
    let dir = tempfile::tempdir().expect("a scratch directory");
    for (bin, name) in [
        (env!("CARGO_BIN_EXE_nqueens"), "nqueens"),
        (env!("CARGO_BIN_EXE_tsp"), "tsp"),
        (env!("CARGO_BIN_EXE_plain_main"), "plain_main"),
        (env!("CARGO_BIN_EXE_workflow"), "workflow"),
    ] {
        let file = dir.path().join(format!("{name}.pem"));
        let out = run(bin, &["--init-pool", file.to_str().expect("utf-8")]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{name}: {err}");
        assert!(err.contains("wrote a new pool credential"), "{name}: {err}");
        let pem = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{name}: no credential: {e}"));
        assert!(pem.contains("BEGIN"), "{name}: not a PEM file");
    }
}

/// Runs `nqueens 12` with its stderr on a terminal (`script` gives it
/// one) and returns what the terminal got.
fn on_a_terminal(extra: &str) -> String {
    let cmd = format!("{} 12 --workers 1 {extra}", env!("CARGO_BIN_EXE_nqueens"));
    let out = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .env("SATIN_STATUS_AFTER_MS", "0")
        .output()
        .expect("`script` (util-linux) runs: it gives the program a terminal");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_run_on_a_terminal_shows_a_status_line_with_its_progress_and_a_pipe_does_not() {
    let tty = on_a_terminal("");
    assert!(tty.contains("% done (estimate)") && tty.contains("elapsed"), "no status line:\n{tty}");
    assert!(tty.contains("14200"), "{tty}");
    let quiet = on_a_terminal("--no-progress");
    assert!(!quiet.contains("% done"), "--no-progress drew a status line:\n{quiet}");
    let piped = Command::new(env!("CARGO_BIN_EXE_nqueens"))
        .args(["12", "--workers", "1"])
        .env("SATIN_STATUS_AFTER_MS", "0")
        .output()
        .expect("runs");
    assert!(!String::from_utf8_lossy(&piped.stderr).contains("% done"), "a pipe got a status line");
}

#[test]
fn local_nodes_on_a_terminal_show_the_master_s_estimate_on_the_supervisor_s_line() {
    let cmd = format!("{} 14 --local-nodes 2", env!("CARGO_BIN_EXE_nqueens"));
    let out = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .output()
        .expect("`script` (util-linux) runs: it gives the program a terminal");
    let tty = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{tty}");
    assert!(tty.contains("% done (estimate)") && tty.contains("nodes alive"), "no status line:\n{tty}");
    assert!(tty.contains("jobs stolen, CPU "), "the line does not sum the nodes' figures:\n{tty}");
    assert!(!tty.contains("satin-status:"), "the master's reports leaked into the log:\n{tty}");
    assert!(tty.contains("365596"), "{tty}");
    let piped = Command::new(env!("CARGO_BIN_EXE_nqueens")).args(["14", "--local-nodes", "2"]).output().expect("runs");
    let log = String::from_utf8_lossy(&piped.stderr);
    assert!(!log.contains("satin-status:") && !log.contains("% done"), "a pipe got status lines:\n{log}");
}

/// `--answer-file FILE`: the answer goes into the file, not onto standard
/// output — on this machine's cores, from the supervisor of local nodes,
/// in the sequential baseline; a file that cannot be written loses nothing.
#[test]
fn the_answer_goes_to_the_answer_file() {
    let dir = tempfile::tempdir().expect("a scratch directory");
    let nqueens = env!("CARGO_BIN_EXE_nqueens");
    for (name, extra) in
        [("cores", &[][..]), ("nodes", &["--local-nodes", "2"][..]), ("sequential", &["--sequential"][..])]
    {
        let file = dir.path().join(format!("{name}.txt"));
        let args = [&["12", "--answer-file", file.to_str().expect("utf-8")][..], extra].concat();
        let out = run(nqueens, &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{name}: {err}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "", "{name}: the answer went to standard output");
        let answer = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{name}: no answer file ({e}):\n{err}"));
        assert_eq!(answer.trim(), "14200", "{name}");
    }
    let out = run(nqueens, &["12", "--answer-file", "/nonexistent-dir/answer.txt"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot write the answer to /nonexistent-dir/answer.txt"), "{err}");
    assert_eq!(first_line(&out), "14200", "the answer was lost with its file");
}

/// A function that takes a closure runs on every core of the process
/// that calls it, in one process and under `--local-nodes` alike (each
/// node says once why its calls stay there), with the plain answer.
#[test]
fn a_closure_integrand_runs_on_every_core_of_its_node() {
    let bin = env!("CARGO_BIN_EXE_quadrature");
    let plain = first_line(&run(bin, &["3", "--sequential"]));
    assert!(plain.starts_with("0.5454"), "{plain}");
    assert_eq!(first_line(&run(bin, &["3"])), plain);
    assert_eq!(first_line(&run(bin, &["3", "--workers", "1"])), plain);
    let nodes = run(bin, &["3", "--local-nodes", "2", "--no-progress"]);
    assert_eq!(first_line(&nodes), plain);
    let stderr = String::from_utf8_lossy(&nodes.stderr);
    assert_eq!(stderr.matches("`integrate` takes a closure (`F`): its calls stay on this node").count(), 2, "{stderr}");
    let bad = run(bin, &["3", "--eps", "0"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--eps a positive"));
}
