//! `satin::net::try_run`: every way a program's part can end comes back
//! as a value — the process goes on to look at it.

use std::net::UdpSocket;

use satin::net::{try_run, Ended, Launch, RunError, Split, USAGE_STATUS};
use satin::{divide_and_conquer, Runtime};

#[divide_and_conquer]
fn count(n: u32) -> u64 {
    if n == 0 {
        return 1;
    }
    count(n - 1) + count(n - 1)
}

fn launch(args: &[&str]) -> Launch {
    let line = std::iter::once("prog").chain(args.iter().copied()).map(str::to_string);
    match Launch::from_args("prog", line) {
        Ok(Split::Run(launch, _)) => *launch,
        other => panic!("a valid command line: {:?}", other.err()),
    }
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("satin-try-run-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

#[test]
fn a_local_run_returns_the_value_as_master() {
    let ended = try_run("prog", &launch(&["--workers", "2"]), Runtime::builder(), || count(10));
    match ended {
        Ok(Ended::Returned { value, shows }) => assert_eq!((value, shows), (1024, true)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn init_pool_returns_the_file_it_wrote() {
    let dir = scratch("pool");
    let file = dir.join("pool.cred");
    let path = file.to_str().expect("utf-8");
    let ended = try_run("prog", &launch(&["--init-pool", path]), Runtime::builder(), || -> u64 { unreachable!() });
    match ended {
        Ok(Ended::PoolWritten(written)) => assert!(written.exists(), "{}", written.display()),
        other => panic!("{other:?}"),
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn setups_that_make_no_sense_are_errors_with_their_status() {
    let e = try_run("prog", &launch(&["--listen", "127.0.0.1:0"]), Runtime::builder(), || count(3)).unwrap_err();
    assert!(matches!(&e, RunError::Failed(m) if m.contains("pool credential")), "{e}");
    assert_eq!(e.exit_status(), 1);
    let e = try_run("prog", &launch(&["--checkpoint", "x.ckpt", "--ft", "naive"]), Runtime::builder(), || count(3))
        .unwrap_err();
    assert!(matches!(&e, RunError::Failed(m) if m.contains("--ft table")), "{e}");
    let e =
        try_run("prog", &launch(&["--local-nodes", "2", "--chaos", "kill:node=5,at=10ms"]), Runtime::builder(), || {
            count(3)
        })
        .unwrap_err();
    assert!(matches!(&e, RunError::Usage(m) if m.contains("node 5")), "{e}");
    assert_eq!(e.exit_status(), USAGE_STATUS);
}

/// A node whose part ends without an answer (here: a joiner whose contact
/// never answers) ends the program's function at the annotated call and
/// returns the reason; the code after the call does not run.
#[test]
fn a_node_that_cannot_join_returns_the_reason_from_inside_the_call() {
    let dir = scratch("join");
    let file = dir.join("pool.cred");
    satin::net::init_pool(&file).expect("a pool credential");
    // A port nobody listens on: bound, then let go.
    let port = UdpSocket::bind("127.0.0.1:0").and_then(|s| s.local_addr()).expect("a free port").port();
    let contact = format!("127.0.0.1:{port}");
    let args = launch(&["--join", &contact, "--join-wait-ms", "300", "--pool", file.to_str().expect("utf-8")]);
    let mut after_the_call = false;
    let ended = try_run("prog", &args, Runtime::builder(), || {
        let n = count(12);
        after_the_call = true;
        n
    });
    let e = ended.expect_err("no contact, no run");
    assert!(matches!(&e, RunError::Failed(m) if m.contains("cannot join")), "{e:?}");
    assert!(!after_the_call, "the function went on past the call that had no answer");
    // The process goes on: a local run still works.
    assert_eq!(Runtime::builder().workers(2).build().expect("a pool").run(|| count(5)), 32);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_local_run_writes_the_pools_figures_as_json() {
    let dir = scratch("stats");
    let file = dir.join("stats.json");
    let args = launch(&["--workers", "2", "--stats-json", file.to_str().expect("utf-8")]);
    let ended = try_run("prog", &args, Runtime::builder(), || count(14));
    assert!(matches!(ended, Ok(Ended::Returned { value: 16384, shows: true })), "{ended:?}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).expect("written")).expect("JSON");
    let node = &json["nodes"][0];
    assert_eq!(node["node"], "local");
    assert_eq!(node["workers"], 2);
    assert!(node["pool"]["spawns"].as_u64().is_some_and(|s| s > 0), "{json:#}");
    let _ = std::fs::remove_dir_all(dir);
}
