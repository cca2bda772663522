//! What the tests that start real node processes share: running a command
//! with a bound on its time, one cluster at a time, and reading its output
//! and the statistics lines of its nodes.
#![allow(dead_code)] // each test binary uses its own part

use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

pub const NQUEENS: &str = env!("CARGO_BIN_EXE_nqueens");
/// Generous bound on one run; only a hang gets anywhere near it.
pub const RUN_LIMIT: Duration = Duration::from_secs(180);

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// One cluster at a time: they share two cores, and timing-dependent
/// scenarios (a kill at 300 ms) mean more when runs do not compete.
pub fn one_at_a_time() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs nqueens with `args` to completion, in its turn (see [`finish`]).
pub fn run(args: &[&str]) -> Output {
    run_with(args, &[])
}

/// [`run`] with environment variables set.
pub fn run_with(args: &[&str], envs: &[(&str, &str)]) -> Output {
    run_bin(NQUEENS, args, envs)
}

/// Runs the binary `bin` with `args` and `envs` to completion, in its turn.
pub fn run_bin(bin: &str, args: &[&str], envs: &[(&str, &str)]) -> Output {
    let _turn = one_at_a_time();
    let child = Command::new(bin)
        .args(args)
        .envs(envs.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{bin} starts: {e}"));
    finish(child)
}

/// Waits for a child, failing the test (and killing the child) if it does
/// not finish within `RUN_LIMIT`.
pub fn finish(child: Child) -> Output {
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    rx.recv_timeout(RUN_LIMIT)
        .unwrap_or_else(|_| {
            // SAFETY: kill(2) has no memory-safety preconditions.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            panic!("a node did not finish within {RUN_LIMIT:?}")
        })
        .expect("output")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

/// The sum of one statistic over every node's line (`field N`).
pub fn total(log: &str, field: &str) -> u64 {
    log.lines()
        .filter_map(|l| l.split(&format!("{field} ")).nth(1))
        .filter_map(|rest| rest.split(|c: char| !c.is_ascii_digit()).next()?.parse::<u64>().ok())
        .sum()
}
