//! A program's successive annotated calls as successive runs of one
//! cluster (`Config::sequence`).
//!
//! Every node runs the same program, so every node makes the same calls in
//! the same order: the k-th call outside a run is run k on every node.
//! The nodes agree on the sequence through the log: the answer of run k
//! is the log's k-th `Answer` entry (`Change::Answer { run: k, .. }`),
//! carrying the whole value, so that every node — not only the master —
//! hands it to its program, which goes on to its next call. The cluster
//! stays: membership, the leader, the result table (content keys: a call
//! that recurs in a later run is found there) and the connections.
//!
//! A node whose program reaches call k + 1 gives its root to the core
//! ([`Node::next_root`]); the master runs it, the others keep it, as they
//! keep the first root, to restart it if the master dies. A node whose
//! program is slower still helps (stealing needs no root), and one whose
//! program lags behind the log finds its answers already there (the
//! driver keeps them until asked). A joiner's welcome carries every
//! answer so far: its program, started from the beginning, goes through
//! them at once to the call the cluster is at.
//!
//! A checkpoint file holds the whole program: it is named by the first
//! call (its identity), and every run's results and answer go into it. A
//! program started again after losing every node finds each finished run's
//! answer there (its root's key) and resumes the run it was in.

use super::{Action, Node, NodeId, Time};
use crate::msg::JobSpec;
use crate::Executor;

/// The runs of the program this node has seen end, and the answer of the
/// current one on its way to the log.
#[derive(Debug)]
pub(super) struct Runs {
    /// The answer this node proposed as master, until it is committed.
    pub(super) proposed: Option<Vec<u8>>,
    /// The answer's log entry (term, index), once committed.
    pub(super) decision: Option<(u32, u64)>,
    /// The answer is committed, but this master lacks its value (another
    /// master committed it, too large to travel): its root gives it.
    pub(super) answer_due: bool,
    /// Runs whose answers this node has.
    pub(super) done: u32,
    /// The root epoch of the last run that ended.
    pub(super) last_epoch: u32,
    /// The answers of the runs so far, for joiners.
    pub(super) answers: Vec<Vec<u8>>,
    /// Roots this node's program gave it (the first at construction).
    pub(super) roots_given: u32,
    /// The node the user started, which shows the answers (see `origin.rs`).
    pub(super) origin: Option<NodeId>,
    /// When this node last heard from the origin.
    pub(super) origin_heard: Option<Time>,
    /// A joiner that was the origin before the majority removed it: its
    /// id then.
    pub(super) claimed_origin: Option<NodeId>,
}

impl Default for Runs {
    fn default() -> Runs {
        Runs {
            proposed: None,
            decision: None,
            answer_due: false,
            done: 0,
            last_epoch: 0,
            answers: Vec::new(),
            roots_given: 1,
            origin: None,
            origin_heard: None,
            claimed_origin: None,
        }
    }
}

impl Node {
    /// The program on this node made its next annotated call, `root`: the
    /// next run. The master starts it; every node keeps it in case the
    /// master dies.
    pub fn next_root(&mut self, _now: Time, root: JobSpec, exec: &mut impl Executor) {
        if self.stopped || !self.config.sequence {
            return;
        }
        self.runs.roots_given += 1;
        if self.runs.roots_given <= self.runs.done {
            // A joiner's program catching up: this run's answer is here.
            return;
        }
        // Jobs of the new tree are never older than those of the last.
        let epoch = self.runs.last_epoch.max(self.quorum.term());
        // A program resumed from its checkpoint file (one file for all its
        // runs): this run's calls may be there too.
        let redone = root.redone || self.stats.records_loaded > 0;
        let root = JobSpec { epoch, redone, ..root };
        self.root = Some(root.clone());
        if self.is_master() {
            exec.run_root(root);
        }
    }

    /// The answer of the current run, `value`, is out: with a sequence,
    /// the node keeps it for joiners and stays for the next run; else it
    /// is done.
    pub(super) fn run_over(&mut self, value: Option<Vec<u8>>) {
        if !self.config.sequence {
            self.stop();
            return;
        }
        self.runs.answers.push(value.unwrap_or_default());
        self.runs.done += 1;
        self.runs.last_epoch = self.root_epoch();
        self.root = None;
        self.runs.proposed = None;
        self.runs.answer_due = false;
    }

    /// The master says run `run` is over. Without a sequence, this node is
    /// done; with one, it is the answer unless the log brought it first.
    pub(super) fn terminated(&mut self, run: u32, value: Option<Vec<u8>>) {
        if self.config.sequence && run != self.runs.done + 1 {
            return;
        }
        let kept = self.config.sequence.then(|| value.clone()).flatten();
        let shows = self.follower_shows(&value);
        self.actions.push_back(Action::Finished { value, shows });
        self.run_over(kept);
    }

    /// A joiner welcomed into a cluster whose program is past its first
    /// calls: its own program gets their answers, in order, at once, and
    /// joins the run in progress at its call.
    pub(super) fn catch_up(&mut self, answers: Vec<Vec<u8>>) {
        if !self.config.sequence {
            return;
        }
        for value in answers {
            self.actions.push_back(Action::Finished { value: Some(value.clone()), shows: false });
            self.runs.answers.push(value);
            self.runs.done += 1;
        }
    }

    /// What of an answer goes into the log and to every node: all of it
    /// with a sequence (every program needs it to go on), else only a
    /// small one (the others only end).
    pub(super) fn answer_that_travels(&self, value: Vec<u8>) -> Option<Vec<u8>> {
        (self.config.sequence || value.len() <= self.config.pointer_threshold).then_some(value)
    }

    /// Runs whose answers this node has.
    pub fn runs_done(&self) -> u32 {
        self.runs.done
    }
}
