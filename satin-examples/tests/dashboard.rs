//! The dashboard of a real run (`--dashboard`): three local nodes, one
//! killed with `--chaos`; the JSON and the metrics read over HTTP, and
//! the page loaded in headless Chromium, which must show the nodes, the
//! progress advancing and the killed node as crashed, the task stream
//! and each node's CPU and memory. The screenshots are kept as
//! `target/tmp/dashboard.png` and `target/tmp/report.png`.

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{one_at_a_time, Guarded, NQUEENS, RUN_LIMIT};

/// A run with a dashboard, and where the dashboard is.
struct Run {
    /// Ended with the run (the guard kills it).
    _child: Guarded,
    base: String,
    /// Holds the run's checkpoint file.
    _dir: tempfile::TempDir,
}

/// Starts nqueens 17 on three local nodes with a dashboard and a
/// checkpoint; node 2 is killed three seconds in (it has reported the
/// job it runs by then: the page draws it as lost).
fn start() -> Run {
    let dir = tempfile::tempdir().expect("a scratch directory");
    let mut child = Guarded::spawn(
        Command::new(NQUEENS)
            .args(["17", "--local-nodes", "3", "--dashboard", "127.0.0.1:0", "--chaos", "kill:node=2,at=3s"])
            .arg("--checkpoint")
            .arg(dir.path().join("run.ckpt"))
            .args(["--checkpoint-interval", "200ms"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped()),
    );
    let stderr = child.stderr.take().expect("piped");
    let mut lines = BufReader::new(stderr).lines();
    let base = loop {
        let line = lines.next().expect("the run says where its dashboard is").expect("text");
        if let Some(url) = line.split("dashboard: ").nth(1) {
            break url.trim_end_matches('/').to_string();
        }
    };
    // Keep draining stderr so the run never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    Run { _child: child, base, _dir: dir }
}

/// The body of `GET path` on the dashboard.
fn get(base: &str, path: &str) -> String {
    let addr = base.trim_start_matches("http://");
    let mut s = TcpStream::connect(addr).expect("the dashboard answers");
    write!(s, "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").expect("request sent");
    let mut text = String::new();
    s.read_to_string(&mut text).expect("a response");
    assert!(text.starts_with("HTTP/1.1 200"), "{path}: {text}");
    text.split_once("\r\n\r\n").map(|(_, body)| body.to_string()).unwrap_or_default()
}

fn status(base: &str) -> serde_json::Value {
    serde_json::from_str(&get(base, "/api/status")).expect("JSON")
}

/// Reads the status until `done` says so, or fails at the run limit.
fn until(base: &str, what: &str, done: impl Fn(&serde_json::Value) -> bool) -> serde_json::Value {
    let deadline = Instant::now() + RUN_LIMIT;
    loop {
        let s = status(base);
        if done(&s) {
            return s;
        }
        assert!(Instant::now() < deadline, "{what} never happened: {s}");
        // Polling a server: the next reading, not a synchronisation.
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The nodes with bars in the task stream: jobs that ended, or that run.
fn bar_nodes(s: &serde_json::Value) -> std::collections::BTreeSet<String> {
    let mut bars = s["task_stream"]["bars"].as_array().cloned().unwrap_or_default();
    let running = s["task_stream"]["running"].as_object().cloned().unwrap_or_default();
    bars.extend(running.values().flat_map(|r| r.as_array().cloned().unwrap_or_default()));
    bars.iter().filter_map(|b| b[0].as_str().map(str::to_string)).collect()
}

/// The bars of kind `kind` in the task stream.
fn bars_of_kind(s: &serde_json::Value, kind: &str) -> usize {
    let Some(index) = s["task_stream"]["kinds"].as_array().and_then(|k| k.iter().position(|k| k == kind)) else {
        return 0;
    };
    let bars = s["task_stream"]["bars"].as_array().cloned().unwrap_or_default();
    bars.iter().filter(|b| b[4].as_u64() == Some(index as u64)).count()
}

fn states(s: &serde_json::Value) -> Vec<String> {
    s["nodes"].as_array().expect("nodes").iter().map(|n| n["state"].as_str().unwrap_or("?").to_string()).collect()
}

#[test]
fn the_dashboard_shows_the_nodes_the_progress_and_a_crash() {
    let _turn = one_at_a_time();
    let run = start();
    let first = until(&run.base, "three nodes listed", |s| s["nodes"].as_array().is_some_and(|n| n.len() == 3));
    // Named as the supervisor's logs name them (`[node 1]`), not by id:
    // every node learns the others' short names in their handshakes.
    let mut names: Vec<&str> =
        first["nodes"].as_array().unwrap().iter().map(|n| n["name"].as_str().unwrap_or("?")).collect();
    names.sort();
    assert_eq!(names, ["0", "1", "2"], "{first}");
    // Every node reports its own figures to the master once a second: the
    // master's and at least one other's are there (node 2 may be killed
    // before it has run a call).
    let working = |s: &serde_json::Value| -> Vec<serde_json::Value> {
        let nodes = s["nodes"].as_array().cloned().unwrap_or_default();
        nodes.into_iter().filter(|n| n["figures"]["spawns"].as_u64().unwrap_or(0) > 0).collect()
    };
    let reported = until(&run.base, "two nodes' own figures", |s| working(s).len() >= 2);
    for node in working(&reported) {
        assert!(node["figures"]["cpu_s"].as_f64().unwrap_or(0.0) > 0.0, "{reported}");
        assert!(node["address"].as_str().unwrap_or("").parse::<std::net::SocketAddr>().is_ok(), "{reported}");
    }
    let p0 = first["progress"].as_f64().expect("progress is a number");
    assert!((0.0..=1.0).contains(&p0), "{first}");
    assert!(first["eta_s"].is_null() || first["eta_s"].as_f64().is_some(), "{first}");
    let later = until(&run.base, "progress advancing", |s| s["progress"].as_f64().unwrap_or(0.0) > p0);
    assert!(later["elapsed_s"].as_f64() > first["elapsed_s"].as_f64(), "{later}");
    // The task stream: jobs that moved, as bars, from more than one node;
    // and each reporting node's use of its machine over time.
    let streamed = until(&run.base, "two nodes' jobs in the task stream", |s| bar_nodes(s).len() >= 2);
    assert_eq!(streamed["task_stream"]["kinds"][2], "redone", "{streamed}");
    for node in working(&streamed) {
        let usage = node["usage"].as_array().cloned().unwrap_or_default();
        assert!(!usage.is_empty(), "no CPU and memory samples: {streamed}");
        assert!(usage.iter().all(|u| u[2].as_f64().unwrap_or(0.0) > 0.0), "no memory: {streamed}");
    }
    let crashed = until(&run.base, "the killed node shown as crashed", |s| states(s).iter().any(|st| st == "crashed"));
    assert_eq!(states(&crashed).iter().filter(|st| *st == "alive").count(), 2, "{crashed}");
    let events = |s: &serde_json::Value| s["events"].to_string();
    until(&run.base, "a checkpoint write listed", |s| events(s).contains("checkpoint: "));
    assert!(events(&crashed).contains("node 2 gone; recovery"), "{crashed}");

    let metrics = get(&run.base, "/metrics");
    assert!(metrics.contains("satin_node_up{") && metrics.contains(r#"state="crashed"} 0"#), "{metrics}");
    assert!(metrics.contains("satin_run_progress_ratio"), "{metrics}");
    assert!(
        metrics.contains("satin_node_cpu_seconds_total{") && metrics.contains("satin_node_spawns_total{"),
        "{metrics}"
    );
    assert!(get(&run.base, "/").contains("<title>satin run</title>"));

    // The page as a browser shows it, once its script has run.
    let chromium = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| Command::new(b).arg("--version").output().is_ok_and(|o| o.status.success()))
        .expect("headless Chromium is needed for this test: `.ci/run` installs it (apt-get install chromium)");
    let profile = tempfile::tempdir().expect("a browser profile");
    let browser = |extra: &[&str]| {
        Command::new(chromium)
            .args(["--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=3000"])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .args(extra)
            .arg(format!("{}/", run.base))
            .output()
            .expect("chromium runs")
    };
    let dom = String::from_utf8_lossy(&browser(&["--dump-dom"]).stdout).into_owned();
    assert!(dom.contains(r#"data-state="crashed""#), "the page does not show the crash:\n{dom}");
    assert_eq!(dom.matches("data-node=").count(), 3, "the page lists three nodes:\n{dom}");
    assert!(dom.contains("data-cpu="), "the page shows no node's CPU time:\n{dom}");
    assert!(dom.contains("data-bar-node="), "the page draws no task stream:\n{dom}");
    assert!(dom.contains("data-lost="), "the killed node's running job is not drawn as lost:\n{dom}");
    assert!(dom.matches("data-usage-node=").count() >= 4, "no CPU and memory lines of two nodes:\n{dom}");
    let shown: f64 = dom
        .split(r#"data-progress=""#)
        .nth(1)
        .and_then(|r| r.split('"').next())
        .and_then(|p| p.parse().ok())
        .expect("the page shows a progress");
    assert!(shown > 0.0 && shown <= 1.0, "{dom}");
    let shot = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("dashboard.png");
    let out = browser(&[&format!("--screenshot={}", shot.display()), "--window-size=1300,800"]);
    assert!(shot.exists(), "no screenshot: {}", String::from_utf8_lossy(&out.stderr));
    drop(run);
}

/// A run on this machine's cores alone serves the dashboard too: one row,
/// this machine, with its counters and the estimate.
#[test]
fn a_run_on_one_machine_serves_the_dashboard() {
    let _turn = one_at_a_time();
    let mut child = Guarded::spawn(
        Command::new(NQUEENS)
            .args(["16", "--workers", "2", "--dashboard", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
    );
    let mut lines = BufReader::new(child.stderr.take().expect("piped")).lines();
    let base = loop {
        let line = lines.next().expect("the run says where its dashboard is").expect("text");
        if let Some(url) = line.split("dashboard: ").nth(1) {
            break url.trim_end_matches('/').to_string();
        }
    };
    let log = std::thread::spawn(move || lines.map_while(Result::ok).collect::<Vec<_>>().join("\n"));
    let s = until(&base, "this machine's figures", |s| s["nodes"][0]["figures"]["spawns"].as_u64().unwrap_or(0) > 0);
    assert_eq!(s["nodes"].as_array().map(Vec::len), Some(1), "{s}");
    assert_eq!(s["nodes"][0]["name"], "this machine", "{s}");
    assert_eq!(s["nodes"][0]["master"], true, "{s}");
    assert!((0.0..=1.0).contains(&s["progress"].as_f64().expect("a number")), "{s}");
    assert!(s["events"].to_string().contains("the run starts on 2 workers"), "{s}");
    assert!(get(&base, "/metrics").contains(r#"satin_node_up{node="this machine""#));
    // Jobs one worker took from the other, as bars on the stream.
    let s = until(&base, "this machine's jobs in the task stream", |s| bars_of_kind(s, "stolen") > 0);
    assert_eq!(bar_nodes(&s).into_iter().collect::<Vec<_>>(), ["this machine"], "{s}");
    let out = common::finish(child);
    let log = log.join().expect("log reader");
    assert!(out.status.success(), "{log}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "14772512", "{log}");
}

/// Under `--local-nodes` the supervisor — the process the user started —
/// serves the dashboard from what the master of the moment reports: the
/// page outlives node 0, the first master.
#[test]
fn the_supervisor_serves_the_dashboard_after_node_0_is_killed() {
    let _turn = one_at_a_time();
    let mut child = Guarded::spawn(
        Command::new(NQUEENS)
            .args(["17", "--local-nodes", "3", "--workers", "1", "--dashboard", "127.0.0.1:0"])
            .args(["--chaos", "kill:node=0,at=2s"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped()),
    );
    let mut lines = BufReader::new(child.stderr.take().expect("piped")).lines();
    let base = loop {
        let line = lines.next().expect("the run says where its dashboard is").expect("text");
        // The supervisor's own line, not a node's (`[node 0] …`).
        if let Some(url) = line.strip_prefix("dashboard: ") {
            break url.trim_end_matches('/').to_string();
        }
    };
    std::thread::spawn(move || lines.for_each(drop));
    let first = until(&base, "node 0 reporting as master", |s| s["reported_by"] == "0");
    assert_eq!(first["served_by"], "supervisor", "{first}");
    let node = |s: &serde_json::Value, name: &str| {
        s["nodes"].as_array().and_then(|n| n.iter().find(|n| n["name"] == name).cloned()).unwrap_or_default()
    };
    let after = until(&base, "another master reporting node 0 crashed", |s| {
        s["reported_by"] != "0" && node(s, "0")["state"] == "crashed"
    });
    let master = after["reported_by"].as_str().expect("a node").to_string();
    assert_eq!(node(&after, &master)["master"], true, "{after}");
    // Node 0 reported to no one but its own board: the samples of its use
    // of the machine are still shown, kept from its own reports.
    assert!(!node(&after, "0")["usage"].as_array().cloned().unwrap_or_default().is_empty(), "{after}");
    // And it goes on: the next report comes (once a second), not a copy.
    let t = after["elapsed_s"].as_f64().expect("a number");
    until(&base, "a later report", |s| s["elapsed_s"].as_f64().unwrap_or(0.0) > t || s["done"] == true);
    assert!(get(&base, "/metrics").contains(r#"satin_node_up{node="0",state="crashed"} 0"#));
}

/// `--report FILE`: what the dashboard showed last, as one page that
/// opens offline — written by the supervisor from the last master's board
/// (here after node 2's crash), and shown by a browser with no server.
#[test]
fn a_report_is_one_page_that_opens_offline_with_the_runs_end() {
    let dir = tempfile::tempdir().expect("a scratch directory");
    let file = dir.path().join("run.html");
    let f = file.to_str().expect("utf-8");
    // Two workers a node: jobs move between workers too, and node 2 has
    // reported some by its death. Node 2 runs 8 times slower: killed, it
    // is surely in the middle of a job another node then runs again (at
    // full speed it may die just after it handed its result back, with
    // nothing left to redo — seen once in CI).
    let chaos = "slow:node=2,factor=8,at=0s;kill:node=2,at=1500ms";
    let args = ["16", "--local-nodes", "3", "--workers", "2", "--report", f, "--chaos", chaos];
    let out = common::run(&args);
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{log}");
    assert!(log.contains(&format!("report: {f}")), "{log}");
    let page = std::fs::read_to_string(&file).expect("the report was written");
    assert!(page.contains("<title>satin run</title>") && page.contains("window.SATIN_REPORT = {"), "{page}");
    assert!(!page.contains("src=\"http"), "the page loads something from the network");
    let chromium = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| Command::new(b).arg("--version").output().is_ok_and(|o| o.status.success()))
        .expect("headless Chromium is needed for this test: `.ci/run` installs it (apt-get install chromium)");
    let profile = tempfile::tempdir().expect("a browser profile");
    let out = Command::new(chromium)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=2000", "--dump-dom"])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("file://{f}"))
        .output()
        .expect("chromium runs");
    let dom = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(dom.matches("data-node=").count(), 3, "the report lists three nodes:\n{dom}");
    assert!(dom.contains(r#"data-state="crashed""#), "the report does not show the crash:\n{dom}");
    assert!(dom.contains(" — done</h1>"), "the report does not show the run's end:\n{dom}");
    // The task stream: bars of every node, and the killed node's work run
    // again elsewhere.
    for n in 0..3 {
        assert!(dom.contains(&format!(r#"data-bar-node="{n}""#)), "no bar of node {n} in the report:\n{dom}");
    }
    // What became of the killed node's work: run again on a live node,
    // or at least drawn as lost with it. (Once in eight runs of this file
    // no redone bar came: open in the notes.)
    let redone = |line: &&str| line.contains(r#"data-kind="redone""#) && !line.contains(r#"data-bar-node="2""#);
    let lost = |line: &&str| line.contains("data-lost=") && line.contains(r#"data-bar-node="2""#);
    assert!(dom.split("<rect").any(|r| redone(&r) || lost(&r)), "the killed node's work is not shown:\n{dom}");
    let shot = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("report.png");
    let out = Command::new(chromium)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=2000", "--window-size=1300,1100"])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{f}"))
        .output()
        .expect("chromium runs");
    assert!(shot.exists(), "no screenshot: {}", String::from_utf8_lossy(&out.stderr));
}

/// Across machines (here, processes that join one another on loopback):
/// a node given `--dashboard` — the first too — serves the run as the
/// master of the moment knows it — the first node's board at first, sent
/// to it once a second — and goes on serving after that master is killed,
/// from the new master's board.
#[test]
fn a_joiner_with_a_dashboard_serves_the_master_s_view_and_outlives_it() {
    let dir = tempfile::tempdir().expect("a scratch directory");
    let pool = dir.path().join("pool.pem");
    let pool = pool.to_str().expect("utf-8");
    let out = common::run(&["1", "--init-pool", pool]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let _turn = one_at_a_time();
    let node = |extra: &[&str]| {
        let mut child = Guarded::spawn(
            Command::new(NQUEENS)
                .args(["17", "--workers", "1", "--pool", pool, "--idle-timeout-ms", "1500"])
                .args(extra)
                .stdout(Stdio::null())
                .stderr(Stdio::piped()),
        );
        let mut lines = BufReader::new(child.stderr.take().expect("piped")).lines();
        let mut said = |what: &str| -> String {
            let line = lines.by_ref().map_while(Result::ok).find(|l| l.contains(what));
            line.and_then(|l| l.split(what).nth(1).map(|r| r.trim().trim_end_matches('/').to_string()))
                .unwrap_or_else(|| panic!("the node never said {what:?}"))
        };
        let listens = said("listening on ");
        let dashboard = extra.contains(&"--dashboard").then(|| said("dashboard: "));
        std::thread::spawn(move || lines.for_each(drop));
        (child, listens, dashboard)
    };
    let (first, first_addr, first_base) = node(&["--listen", "127.0.0.1:0", "--dashboard", "127.0.0.1:0"]);
    let (_watcher, watcher_addr, base) = node(&["--join", &first_addr, "--dashboard", "127.0.0.1:0"]);
    let base = base.expect("the joiner serves a dashboard");
    let (_third, _, _) = node(&["--join", &first_addr]);
    let three = |s: &serde_json::Value| s["nodes"].as_array().is_some_and(|n| n.len() == 3);
    let before = until(&base, "the first node's board with three nodes", |s| {
        s["reported_by"] == first_addr.as_str() && three(s)
    });
    assert_eq!(before["served_by"], watcher_addr.as_str(), "{before}");
    // The first node's own page takes the same path: the view its node
    // feeds while master (so it would follow the run to another master).
    let own = first_base.expect("the first node serves a dashboard");
    let own = until(&own, "the first node's view of itself", |s| s["reported_by"] == first_addr.as_str() && three(s));
    assert_eq!(own["served_by"], first_addr.as_str(), "{own}");
    assert!(get(&base, "/").contains("<title>satin run</title>"), "the joiner serves no page");
    drop(first);
    let after = until(&base, "a new master's board, the first node crashed", |s| {
        let crashed = s["nodes"]
            .as_array()
            .is_some_and(|n| n.iter().any(|n| n["address"] == first_addr.as_str() && n["state"] == "crashed"));
        s["reported_by"] != first_addr.as_str() && s["reported_by"].is_string() && crashed
    });
    let master = after["reported_by"].as_str().expect("a node").to_string();
    let row = after["nodes"].as_array().and_then(|n| n.iter().find(|n| n["name"] == master.as_str()).cloned());
    assert_eq!(row.map(|r| r["master"].clone()), Some(serde_json::json!(true)), "{after}");
}
