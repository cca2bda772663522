//! Programs that move data, as real processes: a mergesort whose jobs
//! carry megabytes across three nodes removes no live node, shows its
//! answer once and sends about what the data needs; by hand (one
//! `--listen`, two `--join`) exactly one process prints the answer, also
//! with a joiner killed half-way; and a master killed in the first
//! milliseconds of a run leaves an answer.

use crate::common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;

use common::{one_at_a_time, run_bin, run_with_stats, stderr, stdout, Guarded, RUN_LIMIT};

const MERGESORT: &str = env!("CARGO_BIN_EXE_mergesort");
const KERNELS: &str = env!("CARGO_BIN_EXE_kernels");

/// The checksum `mergesort n` prints, computed here.
fn expected(n: usize) -> String {
    let input = satin_examples::mergesort::random_input(n, 1);
    satin_examples::mergesort::checksum(&satin_examples::mergesort::mergesort_plain(input)).to_string()
}

/// The bytes of the input as it travels (the root call's parameters).
fn input_bytes(n: usize) -> u64 {
    postcard::to_stdvec(&satin_examples::mergesort::random_input(n, 1)).expect("encodes").len() as u64
}

#[test]
fn a_mergesort_on_three_nodes_removes_no_one_and_sends_at_most_three_times_its_input() {
    let n = 2_000_000;
    let args = ["2000000", "--local-nodes", "3", "--no-progress"];
    let (out, stats) = run_with_stats(MERGESORT, &args, &[]);
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    assert_eq!(stdout(&out).trim(), expected(n), "{log}");
    assert!(!log.contains("removed from the run"), "a live node was removed:\n{log}");
    assert_eq!(stats.total("removals"), 0, "{log}");
    assert_eq!(stats.nodes().len(), 3, "{log}");
    // One process showed it, and the others ended on their own once the
    // supervisor had its output (none stopped at the wind-down).
    let ended = log.lines().find(|l| l.contains("how the nodes ended")).unwrap_or_default();
    assert_eq!(ended.matches("printed the answer").count(), 1, "{log}");
    assert!(!ended.contains("signal"), "a node outlived the answer's output:\n{log}");
    let sent = stats.total("bytes_sent");
    let input = input_bytes(n);
    assert!(sent <= 3 * input, "{sent} bytes sent for an input of {input}:\n{log}");
    // The work was shared: the others stole jobs that carry data.
    assert!(stats.others(0, "jobs_stolen") > 0, "{log}");
    // Nodes of one host: the megabytes went through shared memory.
    let in_memory = stats.total("bytes_sent_in_memory");
    assert!(in_memory * 10 >= sent * 9, "{in_memory} of {sent} bytes through memory:\n{log}");
}

/// A node killed while frames wait for it in shared memory leaves
/// nothing there once the run is over: the supervisor removes a gone
/// node's place (`SATIN_SAME_HOST` names a directory of this test's own).
#[test]
fn a_node_killed_half_way_leaves_nothing_in_shared_memory() {
    let places = tempfile::tempdir().expect("a scratch directory");
    let root = places.path().to_str().expect("utf-8");
    let args = ["2000000", "--local-nodes", "3", "--no-progress", "--chaos", "kill:node=1,at=50%"];
    let (out, stats) = run_with_stats(MERGESORT, &args, &[("SATIN_SAME_HOST", root)]);
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    assert_eq!(stdout(&out).trim(), expected(2_000_000), "{log}");
    assert!(stats.total("bytes_sent_in_memory") > 0, "{log}");
    let left: Vec<_> = std::fs::read_dir(places.path()).expect("the directory").flatten().map(|e| e.path()).collect();
    assert!(left.is_empty(), "left behind: {left:?}\n{log}");
}

/// Each data-carrying kernel as a user writes it (Strassen, FFT,
/// quickhull, prefix sums, a k-d tree build) gives on three nodes the
/// answer its plain twin gives on one thread, bit for bit.
#[test]
fn every_kernel_gives_its_plain_answer_on_three_nodes() {
    for [kernel, size] in
        [["strassen", "512"], ["fft", "18"], ["quickhull", "500000"], ["prefix", "2000000"], ["kdbuild", "300000"]]
    {
        let plain = run_bin(KERNELS, &[kernel, size, "--plain", "--no-progress"], &[]);
        assert!(plain.status.success(), "{}", stderr(&plain));
        let three = run_bin(KERNELS, &[kernel, size, "--local-nodes", "3", "--no-progress"], &[]);
        let log = stderr(&three);
        assert!(three.status.success(), "{kernel}: {log}");
        assert_eq!(stdout(&three).trim(), stdout(&plain).trim(), "{kernel} {size}: {log}");
        assert!(!stdout(&plain).trim().is_empty());
    }
}

/// Prefix sums pass halves of the root's slice down: a stolen half
/// travels as the root's digest and its place, and is keyed from them —
/// the input is hashed once per node and no steal reply carries it.
#[test]
fn halves_of_the_root_s_slice_travel_and_are_keyed_by_their_place() {
    let n = "4000000";
    let plain = run_bin(KERNELS, &["prefix", n, "--plain", "--no-progress"], &[]);
    let (out, stats) = run_with_stats(KERNELS, &["prefix", n, "--local-nodes", "3", "--no-progress"], &[]);
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    assert_eq!(stdout(&out).trim(), stdout(&plain).trim(), "{log}");
    let input =
        postcard::to_stdvec(&satin_examples::kernels::random_numbers(4_000_000, 1)).expect("encodes").len() as u64;
    assert!(stats.others(0, "jobs_stolen") > 0, "{log}");
    for node in 0..3 {
        let hashed = stats.of(node, "bytes_hashed");
        assert!(hashed * 2 <= input * 3, "node {node} hashed {hashed} bytes for an input of {input}:\n{log}");
        let replies = stats.of_kind(node, "StealReply");
        assert!(
            replies * 100 <= input,
            "node {node} sent {replies} bytes of steal replies for an input of {input}:\n{log}"
        );
    }
}

/// With `SATIN_SAME_HOST=off`, the same answer with every byte through
/// QUIC.
#[test]
fn without_shared_memory_nodes_of_one_host_send_everything_through_quic() {
    let args = ["1000000", "--local-nodes", "3", "--no-progress"];
    let (out, stats) = run_with_stats(MERGESORT, &args, &[("SATIN_SAME_HOST", "off")]);
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    assert_eq!(stdout(&out).trim(), expected(1_000_000), "{log}");
    assert!(stats.total("bytes_sent") > 1 << 20, "{log}");
    assert_eq!(stats.total("bytes_sent_in_memory"), 0, "{log}");
}

/// A node started by hand, its log read line by line on a thread.
struct Process {
    child: Option<Guarded>,
    log: mpsc::Receiver<String>,
}

impl Process {
    fn start(args: &[&str]) -> Process {
        let mut child = Guarded::spawn(
            Command::new(MERGESORT)
                .args(args)
                .env("RUST_LOG", "satin_net::driver=debug")
                .stdout(Stdio::piped())
                .stderr(Stdio::piped()),
        );
        let stderr = child.stderr.take().expect("piped");
        let (tx, log) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        Process { child: Some(child), log }
    }

    /// Waits for a line that contains `needle`; the log read so far if
    /// none comes within the run limit.
    fn says(&self, needle: &str) -> Result<String, String> {
        let mut seen = String::new();
        while let Ok(line) = self.log.recv_timeout(RUN_LIMIT) {
            if line.contains(needle) {
                return Ok(line);
            }
            seen.push_str(&line);
            seen.push('\n');
        }
        Err(seen)
    }

    /// Its standard output and whether it exited successfully, once it ends.
    fn output(&mut self) -> (String, bool) {
        let out = common::finish(self.child.take().expect("still running"));
        (String::from_utf8_lossy(&out.stdout).into_owned(), out.status.success())
    }

    fn kill(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
        }
    }
}

/// A pool credential for nodes started by hand.
fn pool(dir: &std::path::Path) -> String {
    let file = dir.join("pool.pem");
    let out = Command::new(MERGESORT).args(["--init-pool", file.to_str().expect("utf-8")]).output().expect("runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    file.to_str().expect("utf-8").to_string()
}

/// One `--listen` and two `--join`s of `mergesort n`, joiner 1 killed
/// once it runs a stolen job if `kill`: what each prints, in order.
fn by_hand(n: usize, kill: bool) -> Vec<(String, bool)> {
    let _turn = one_at_a_time();
    let dir = tempfile::tempdir().expect("a scratch directory");
    let pool = pool(dir.path());
    let size = n.to_string();
    let first = Process::start(&[&size, "--listen", "127.0.0.1:0", "--workers", "1", "--pool", &pool]);
    let line = first.says("listening on ").unwrap_or_else(|log| panic!("the first node does not listen:\n{log}"));
    let addr = line.split("listening on ").nth(1).expect("an address").trim().to_string();
    let join = ["--join", addr.as_str(), "--listen", "127.0.0.1:0", "--workers", "1", "--pool", pool.as_str()];
    let mut joiners: Vec<Process> =
        (0..2).map(|_| Process::start(&[&[size.as_str()][..], &join[..]].concat())).collect();
    if kill {
        joiners[0].says("running a job stolen from").unwrap_or_else(|log| panic!("joiner 1 never worked:\n{log}"));
        joiners[0].kill();
    }
    let mut all = vec![first];
    all.extend(joiners);
    all.iter_mut().map(Process::output).collect()
}

#[test]
fn by_hand_exactly_one_process_prints_the_answer_also_with_a_joiner_killed_half_way() {
    let n = 1_500_000;
    let want = expected(n);
    for kill in [false, true] {
        let outputs = by_hand(n, kill);
        let printed: Vec<usize> = (0..3).filter(|&i| !outputs[i].0.trim().is_empty()).collect();
        assert_eq!(printed, vec![0], "kill {kill}: exactly the process the user started prints: {outputs:?}");
        assert_eq!(outputs[0].0.trim(), want, "kill {kill}");
        assert!(outputs[0].1 && outputs[2].1, "kill {kill}: the survivors end well: {outputs:?}");
    }
}

#[test]
fn the_master_killed_in_its_first_milliseconds_leaves_an_answer() {
    // A tenth of a second's run on four nodes; node 0 killed 5, 20 or
    // 50 ms in: every other node is a voter from the start, and at the
    // end a second node goes on with the answer in case the one that
    // shows it dies before its output is out.
    for at in ["5%", "20%", "50%"] {
        let chaos = format!("kill:node=0,at={at}");
        let args = ["13", "--local-nodes", "4", "--no-progress", "--chaos", &chaos];
        let (out, _) = run_with_stats(common::NQUEENS, &args, &[]);
        let log = stderr(&out);
        assert!(out.status.success(), "{at}: {log}");
        assert_eq!(stdout(&out).trim(), "73712", "{at}: {log}");
        assert!(log.contains("SIGKILL node 0"), "node 0 was killed:\n{log}");
    }
}

#[test]
fn a_crash_while_a_removed_node_rejoins_leaves_an_answer() {
    // Node 2 is cut off for 2 s: the majority removes it and it joins
    // again as a new node; meanwhile a node of the majority is killed —
    // the one it rejoins through, or the other.
    for victim in ["0", "1"] {
        let chaos = format!("partition:node=2,at=1s,for=2s;kill:node={victim},at=3200ms");
        let args = ["16", "--local-nodes", "3", "--workers", "1", "--no-progress", "--chaos", &chaos];
        let (out, stats) = run_with_stats(common::NQUEENS, &args, &[]);
        let log = stderr(&out);
        assert!(out.status.success(), "{chaos}: {log}");
        assert_eq!(stdout(&out).trim(), "14772512", "{chaos}: {log}");
        assert!(log.contains("joining again through"), "{chaos}: node 2 was not removed:\n{log}");
        assert!(log.contains(&format!("SIGKILL node {victim}")), "{chaos}: {log}");
        assert!(stats.total("removals") >= 1, "{chaos}: {log}");
    }
}
