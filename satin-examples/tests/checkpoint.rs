//! Checkpoints in real runs: node processes killed with SIGKILL (every one
//! of them), suspended with SIGUSR1, a damaged file, a file of another
//! computation — then the same command again.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{one_at_a_time, run, run_with_stats, stderr, stdout, Guarded, Stats, NQUEENS, RUN_LIMIT};

const SUSPENDED: i32 = 75;
const ALL_KILLED: i32 = 3;
/// The bytes that begin every frame of a checkpoint file.
const FRAME_MARKER: [u8; 4] = [0xC5, 0x5A, 0x7E, 0x1D];

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("satin-ckpt-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("a temp dir");
    d
}

/// Runs nqueens 15 on 3 local nodes with a checkpoint and the given chaos,
/// which must end the run without an answer with `status`.
fn interrupted(file: &Path, chaos: &str, status: i32) -> Output {
    let f = file.to_str().expect("utf-8");
    let out = run(&[
        "15",
        "--local-nodes",
        "3",
        "--workers",
        "1",
        "--idle-timeout-ms",
        "500",
        "--checkpoint",
        f,
        "--checkpoint-interval",
        "100ms",
        "--chaos",
        chaos,
    ]);
    assert_eq!(out.status.code(), Some(status), "{}", stderr(&out));
    assert_eq!(stdout(&out), "", "no answer from an interrupted run");
    assert!(stderr(&out).contains("can be resumed from its checkpoint"), "{}", stderr(&out));
    assert!(std::fs::metadata(file).expect("the checkpoint exists").len() > 0);
    out
}

/// The same command again, without chaos: the right answer, from the file;
/// the nodes' figures.
fn resumed(file: &Path) -> (Output, Stats) {
    let f = file.to_str().expect("utf-8");
    let args = ["15", "--local-nodes", "3", "--workers", "1", "--idle-timeout-ms", "500", "--checkpoint", f];
    let (out, stats) = run_with_stats(NQUEENS, &args, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "2279184");
    assert!(stderr(&out).contains("resuming from"), "{}", stderr(&out));
    (out, stats)
}

#[test]
fn every_node_killed_then_the_same_command_finishes_from_the_checkpoint() {
    let file = dir("total-loss").join("run.ckpt");
    let lost = interrupted(&file, "kill:node=all,at=60%", ALL_KILLED);
    assert!(stderr(&lost).contains("every node was killed"), "{}", stderr(&lost));
    let (out, stats) = resumed(&file);
    let log = stderr(&out);
    assert!(stats.total("records_loaded") > 0, "{log}");
    assert!(stats.total("table_hits") > 0, "the resumed run reused nothing:\n{log}");
}

#[test]
fn a_suspended_run_resumes_with_the_same_command() {
    let file = dir("suspend").join("run.ckpt");
    let out = interrupted(&file, "suspend:at=50%", SUSPENDED);
    assert!(stderr(&out).contains("the run is suspended"), "{}", stderr(&out));
    let (out, stats) = resumed(&file);
    assert!(stats.total("records_loaded") > 0, "{}", stderr(&out));
}

/// A suspend due at the moment its node is killed is not lost: the kill
/// goes first, and the signal to a live node (the whole run suspends
/// either way). Before, SIGUSR1 went to the dying process, and the run
/// went on to its answer without a word.
#[test]
fn a_suspend_sent_to_a_node_killed_at_that_moment_goes_to_a_live_one() {
    let file = dir("suspend-dead").join("run.ckpt");
    let out = interrupted(&file, "suspend:node=1,at=50%;kill:node=1,at=50%", SUSPENDED);
    let log = stderr(&out);
    assert!(log.contains("node 1 is gone; SIGUSR1 node 0 instead"), "{log}");
    assert!(log.contains("the run is suspended"), "{log}");
    let (out, stats) = resumed(&file);
    assert!(stats.total("records_loaded") > 0, "{}", stderr(&out));
}

/// A node that comes to join while the run is being suspended is no part
/// of the checkpoint: told so if its knock arrived, or finding its contact
/// gone, it does not turn the suspended run into a failed one. Before,
/// its "cannot join" (status 1) made the whole command fail.
#[test]
fn a_node_joining_as_the_run_is_suspended_leaves_it_suspended() {
    let file = dir("suspend-join").join("run.ckpt");
    let out = interrupted(&file, "join:at=50%;suspend:at=50%+5ms", SUSPENDED);
    let log = stderr(&out);
    assert!(log.contains("node 3 joins"), "{log}");
    assert!(log.contains("the run is suspended"), "{log}");
    let (out, stats) = resumed(&file);
    assert!(stats.total("records_loaded") > 0, "{}", stderr(&out));
}

/// A node dies without a word just before the suspend: once the other
/// live node has stopped, no majority is left to agree that it is gone,
/// and its last batch never comes. The coordinator waits for it only
/// twice the failure detector's time, writes what it has and stops; the
/// same command resumes. Before, the run never ended (campaign seed 224).
#[test]
fn a_suspend_just_after_a_silent_death_still_ends_and_resumes() {
    let file = dir("suspend-vanish").join("run.ckpt");
    let out = interrupted(&file, "vanish:node=2,at=45%;suspend:at=50%", SUSPENDED);
    let log = stderr(&out);
    assert!(log.contains("node 2 dies silently"), "{log}");
    assert!(log.contains("the run is suspended"), "{log}");
    let (out, stats) = resumed(&file);
    assert!(stats.total("records_loaded") > 0, "{}", stderr(&out));
}

#[test]
fn a_damaged_checkpoint_is_repaired_and_the_answer_stays_right() {
    let file = dir("damaged").join("run.ckpt");
    // Late enough that the file holds two batches to damage, early
    // enough that a run 30 % faster than its calibration run is still
    // going (at 80 % one 22 % faster had ended: CI failed).
    interrupted(&file, "kill:node=all,at=65%", ALL_KILLED);
    let mut bytes = std::fs::read(&file).expect("the checkpoint");
    // Frames start with a marker (`checkpoint/format.rs` of the protocol crate):
    // two header copies, then the records. A byte flipped in the body of
    // the last record but one and the last one torn off.
    let frames: Vec<usize> = bytes.windows(4).enumerate().filter(|(_, w)| *w == FRAME_MARKER).map(|(i, _)| i).collect();
    assert!(frames.len() >= 4, "too few records to damage: {} frames in {} bytes", frames.len(), bytes.len());
    let flipped = frames[frames.len() - 2] + 12;
    bytes[flipped] ^= 0x5a;
    bytes.truncate(bytes.len() - 7);
    std::fs::write(&file, &bytes).expect("damaged");
    let log = stderr(&resumed(&file).0);
    assert!(log.contains("was damaged") && log.contains("valid record(s) found"), "{log}");
    // The file was rewritten from its valid records: clean now.
    let again = stderr(&resumed(&file).0);
    assert!(!again.contains("was damaged"), "{again}");
}

#[test]
fn one_node_alone_resumes_after_a_kill() {
    let file = dir("lone").join("run.ckpt");
    let f = file.to_str().expect("utf-8");
    let _turn = one_at_a_time();
    let mut child = Guarded::spawn(
        Command::new(NQUEENS)
            .args(["16", "--workers", "2", "--checkpoint", f, "--checkpoint-interval", "50ms"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null()),
    );
    // Kill it once some results are in the file (beyond its header).
    let deadline = Instant::now() + RUN_LIMIT;
    while std::fs::metadata(&file).map_or(0, |m| m.len()) < 600 {
        assert!(child.try_wait().expect("waits").is_none(), "the run ended before a result was checkpointed");
        assert!(Instant::now() < deadline, "nothing was checkpointed");
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().expect("SIGKILL");
    let _ = child.wait();
    drop(_turn);
    let out = run(&["16", "--workers", "2", "--checkpoint", f]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "14772512");
    let log = stderr(&out);
    assert!(log.contains("resuming from") && !log.contains(" 0 reused"), "{log}");
    // Finished, the file answers at once: only the answer is left in it.
    let out = run(&["16", "--workers", "2", "--checkpoint", f]);
    assert_eq!(stdout(&out), "14772512");
    assert!(stderr(&out).contains("1 results loaded, 1 reused"), "{}", stderr(&out));
}

#[test]
fn checkpoints_of_other_computations_and_other_files_are_refused_untouched() {
    let d = dir("refuse");
    let file = d.join("run.ckpt");
    let f = file.to_str().expect("utf-8");
    let out = run(&["11", "--workers", "1", "--checkpoint", f]);
    assert_eq!(stdout(&out), "2680", "{}", stderr(&out));
    let before = std::fs::read(&file).expect("written");

    // Other arguments: another computation.
    let out = run(&["12", "--workers", "1", "--checkpoint", f]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("another computation") && stderr(&out).contains("--checkpoint-fresh"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read(&file).expect("still there"), before);
    // ... unless the user says to start over.
    let out = run(&["12", "--workers", "1", "--checkpoint", f, "--checkpoint-fresh"]);
    assert_eq!(stdout(&out), "14200", "{}", stderr(&out));

    // Not a checkpoint at all: refused, left as it is, also with --checkpoint-fresh.
    let text = d.join("notes.txt");
    std::fs::write(&text, "my notes\n").expect("written");
    for fresh in [false, true] {
        let mut args = vec!["11", "--workers", "1", "--checkpoint", text.to_str().expect("utf-8")];
        if fresh {
            args.push("--checkpoint-fresh");
        }
        let out = run(&args);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(stderr(&out).contains("is not a checkpoint file"), "{}", stderr(&out));
    }
    assert_eq!(std::fs::read_to_string(&text).expect("still there"), "my notes\n");

    // Bad flag values are usage errors.
    let out = run(&["11", "--checkpoint", f, "--checkpoint-interval", "soon"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let out = run(&["11", "--checkpoint-interval", "1s"]);
    assert_eq!(out.status.code(), Some(2), "--checkpoint-interval needs --checkpoint");
}
