//! What the tests that start real node processes share: running a command
//! with a bound on its time, one cluster at a time, a guard that ends a
//! process with its test, and reading its output and the figures its
//! nodes write (`--stats-json`).

use std::ops::{Deref, DerefMut};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

pub const NQUEENS: &str = env!("CARGO_BIN_EXE_nqueens");
pub const KDTREE: &str = env!("CARGO_BIN_EXE_kdtree");
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
    let child = Guarded::spawn(
        Command::new(bin).args(args).envs(envs.iter().copied()).stdout(Stdio::piped()).stderr(Stdio::piped()),
    );
    finish(child)
}

/// A child process that is killed (SIGKILL) and reaped when dropped — when
/// its test ends, pass or fail — so that no node outlives the suite (the
/// node processes of a `--local-nodes` supervisor end with it: it sets
/// their parent-death signal). Derefs to the [`Child`].
pub struct Guarded(Option<Child>);

impl Guarded {
    /// Starts `cmd`, or fails the test saying which program did not start.
    pub fn spawn(cmd: &mut Command) -> Guarded {
        let child = cmd.spawn().unwrap_or_else(|e| panic!("{:?} starts: {e}", cmd.get_program()));
        Guarded(Some(child))
    }
}

impl From<Child> for Guarded {
    fn from(child: Child) -> Guarded {
        Guarded(Some(child))
    }
}

impl Deref for Guarded {
    type Target = Child;
    fn deref(&self) -> &Child {
        self.0.as_ref().expect("the child is held until dropped")
    }
}

impl DerefMut for Guarded {
    fn deref_mut(&mut self) -> &mut Child {
        self.0.as_mut().expect("the child is held until dropped")
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Waits for a child, failing the test (and killing the child) if it does
/// not finish within `RUN_LIMIT`.
pub fn finish(child: impl Into<Guarded>) -> Output {
    let mut guarded: Guarded = child.into();
    let child = guarded.0.take().expect("the child is held until dropped");
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

/// A run of `bin` with `args` (and `envs` set) that writes its nodes'
/// figures (`--stats-json`): its output and the figures.
pub fn run_with_stats(bin: &str, args: &[&str], envs: &[(&str, &str)]) -> (Output, Stats) {
    let dir = tempfile::tempdir().expect("a scratch directory");
    let file = dir.path().join("stats.json");
    let mut all = args.to_vec();
    all.extend(["--stats-json", file.to_str().expect("utf-8")]);
    let out = run_bin(bin, &all, envs);
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("no statistics file ({e}):\n{}", stderr(&out)));
    (out, Stats(serde_json::from_str(&text).expect("the statistics are JSON")))
}

impl Stats {
    /// The figures a process wrote to `file` with `--stats-json`.
    pub fn read(file: &std::path::Path) -> Stats {
        let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("no statistics in {}: {e}", file.display()));
        Stats(serde_json::from_str(&text).expect("the statistics are JSON"))
    }
}

/// What `--stats-json` wrote: `{"nodes": [{"node": "0", "stats": {..},
/// "runs": [..], ..}, ..]}`.
pub struct Stats(pub serde_json::Value);

impl Stats {
    /// The entry of supervised node `node`, if it wrote one.
    fn node(&self, node: usize) -> Option<&serde_json::Value> {
        let name = node.to_string();
        self.0["nodes"].as_array()?.iter().find(|n| n["node"].as_str() == Some(name.as_str()))
    }

    /// Figure `field` of node `node` at its end: one of the node's own
    /// (`table_hits`, `bytes_sent`, …) or else a protocol counter (under
    /// `stats`: `jobs_stolen`, `redone`, …).
    pub fn of(&self, node: usize, field: &str) -> u64 {
        let one = self.node(node).unwrap_or_else(|| panic!("no node {node} in {:#}", self.0));
        figure(one, field)
    }

    /// Bytes node `node` sent in messages of `kind` (`sent_by_kind`).
    pub fn of_kind(&self, node: usize, kind: &str) -> u64 {
        let one = self.node(node).unwrap_or_else(|| panic!("no node {node} in {:#}", self.0));
        one["sent_by_kind"][kind]["bytes"].as_u64().unwrap_or(0)
    }

    /// Figure `field` of node `node` at the end of the program's run
    /// `run` (from 0; the counters add up from run to run).
    pub fn in_run(&self, node: usize, run: usize, field: &str) -> u64 {
        let one = self.node(node).unwrap_or_else(|| panic!("no node {node} in {:#}", self.0));
        figure(&one["runs"][run], field)
    }

    /// How many runs node `node` has figures for (`runs`).
    pub fn runs(&self, node: usize) -> usize {
        let one = self.node(node).unwrap_or_else(|| panic!("no node {node} in {:#}", self.0));
        one["runs"].as_array().map_or(0, Vec::len)
    }

    /// Figure `field` summed over every node.
    pub fn total(&self, field: &str) -> u64 {
        let nodes = self.0["nodes"].as_array().expect("a list of nodes");
        nodes.iter().map(|n| figure(n, field)).sum()
    }

    /// Figure `field` summed over every node but `but`.
    pub fn others(&self, but: usize, field: &str) -> u64 {
        let nodes = self.0["nodes"].as_array().expect("a list of nodes");
        nodes.iter().filter(|n| n["node"].as_str() != Some(but.to_string().as_str())).map(|n| figure(n, field)).sum()
    }

    /// The values of node `node`'s replicas of the shared incumbents at
    /// its end (its program may have ended without the answer: a node
    /// that did not show it waits at its call).
    pub fn incumbents(&self, node: usize) -> Vec<u64> {
        let one = self.node(node).unwrap_or_else(|| panic!("no node {node} in {:#}", self.0));
        one["incumbents"].as_object().map(|m| m.values().filter_map(|v| v.as_u64()).collect()).unwrap_or_default()
    }

    /// Whether node `node` took part in the search: it stole jobs or gave
    /// them away.
    pub fn searched(&self, node: usize) -> bool {
        self.of(node, "jobs_stolen") + self.of(node, "jobs_given") > 0
    }

    /// Node numbers that wrote their figures.
    pub fn nodes(&self) -> Vec<usize> {
        let nodes = self.0["nodes"].as_array().expect("a list of nodes");
        nodes.iter().filter_map(|n| n["node"].as_str()?.parse().ok()).collect()
    }
}

fn figure(entry: &serde_json::Value, field: &str) -> u64 {
    entry[field]
        .as_u64()
        .or_else(|| entry["stats"][field].as_u64())
        .unwrap_or_else(|| panic!("no {field} in {entry:#}"))
}
