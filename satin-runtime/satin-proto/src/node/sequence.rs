//! A program's successive annotated calls as successive runs of one
//! cluster (`Config::sequence`).
//!
//! Every node runs the same program, so every node makes the same calls in
//! the same order: the k-th call outside a run is run k on every node.
//! The nodes agree on the sequence through the log: the answer of run k
//! is the log's k-th `Answer` entry (`Change::Answer { run: k, .. }`).
//! The master's program and the shower's go on to their next calls; the
//! others wait with the answer, fetching its value only if they must take
//! over as master (`answer.rs`: a value goes only where it is needed).
//! The cluster stays: membership, the leader, the result table (content
//! keys: a call that recurs in a later run is found there) and the
//! connections.
//!
//! A node whose program reaches call k + 1 gives its root to the core
//! ([`Node::next_root`]); the master runs it, the others keep it to
//! restart it if the master dies. A node whose program is behind still
//! helps (stealing needs no root). A joiner's welcome carries the log,
//! whose `Answer` entries end the runs so far: its program waits at its
//! first call like any other that is behind.
//!
//! A checkpoint file holds the whole program: it is named by the first
//! call (its identity), and every run's results and answer go into it. A
//! program started again after losing every node finds each finished run's
//! answer there (its root's key) and resumes the run it was in.

use super::answer::{Asking, Ended};
use super::{Node, NodeId, Time};
use crate::msg::JobSpec;
use crate::Executor;
use bytes::Bytes;

/// The runs of the program this node has seen end, and the answer of the
/// current one on its way to the log (see `answer.rs`).
#[derive(Debug)]
pub(super) struct Runs {
    /// The answer this node proposed as master, until it is committed.
    pub(super) proposed: Option<Bytes>,
    /// The stand-in for an answer this node's program holds unencoded
    /// ([`Node::handle_root_held`]): never small, never checkpointed.
    pub(super) held: Option<Bytes>,
    /// The answer's log entry (term, index), once committed.
    pub(super) decision: Option<(u32, u64)>,
    /// The root runs again to recompute a committed answer nobody has
    /// any more (see `answer.rs`).
    pub(super) answer_due: bool,
    /// Runs whose answers are committed.
    pub(super) done: u32,
    /// How each of them ended (index: run − 1).
    pub(super) ended: Vec<Ended>,
    /// Answers handed to this node's program so far.
    pub(super) handed: u32,
    /// Runs whose answer was shown before this node knew how they ended.
    pub(super) shown_early: std::collections::BTreeSet<u32>,
    /// Values that came before this node knew how their runs ended.
    pub(super) values_early: std::collections::BTreeMap<u32, Bytes>,
    /// A question out for an answer's value.
    pub(super) asking: Option<Asking>,
    /// The program ended elsewhere after this many calls.
    pub(super) program_over: Option<u32>,
    /// A run whose answer this node's program was handed to show, not yet
    /// announced: `Shown` goes out once the program goes on (its next
    /// call, or its end), so that a shower killed before that has it
    /// shown again rather than never (see `answer.rs`).
    pub(super) show_unannounced: Option<u32>,
    /// Nodes whose process ended for certain (not merely removed): a
    /// shower among them may have shown nothing anyone saw.
    pub(super) gone: std::collections::BTreeSet<NodeId>,
    /// The root job of the call this node's program waits in.
    pub(super) program_root: Option<JobSpec>,
    /// The first call's key: a newcomer, whose program makes the same
    /// first call, needs only its key in its welcome.
    pub(super) first_root: Option<crate::JobKey>,
    /// A master whose program was behind the run takes the root over as
    /// a restart once it gets there.
    pub(super) restart_due: bool,
    /// The root epoch of the last run that ended.
    pub(super) last_epoch: u32,
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
            held: None,
            decision: None,
            answer_due: false,
            done: 0,
            ended: Vec::new(),
            handed: 0,
            shown_early: Default::default(),
            values_early: Default::default(),
            asking: None,
            program_over: None,
            show_unannounced: None,
            gone: Default::default(),
            program_root: None,
            first_root: None,
            restart_due: false,
            last_epoch: 0,
            roots_given: 1,
            origin: None,
            origin_heard: None,
            claimed_origin: None,
        }
    }
}

impl Node {
    /// A joiner's own program made its first call, `root`: the welcome
    /// need not carry it, and this node can restart it as master.
    pub fn with_program_root(mut self, root: JobSpec) -> Node {
        self.runs.first_root = Some(root.key);
        self.runs.program_root = Some(root);
        self
    }

    /// The program on this node made its next annotated call, `root`: the
    /// next run. The master starts it; every node keeps it in case the
    /// master dies.
    pub fn next_root(&mut self, now: Time, root: JobSpec, exec: &mut impl Executor) {
        if self.stopped || !self.config.sequence {
            return;
        }
        // The program went on past the answer it was to show.
        self.announce_shown();
        self.runs.roots_given += 1;
        self.runs.program_root = Some(root.clone());
        if self.runs.roots_given <= self.runs.done {
            // A program catching up: this run is over; its answer comes
            // when this node needs it (see `answer.rs`).
            self.advance_answers(now, exec);
            return;
        }
        // Jobs of the new tree are never older than those of the last.
        let epoch = self.runs.last_epoch.max(self.quorum.term());
        // A program resumed from its checkpoint file (one file for all its
        // runs), or a master that takes the run over: this run's calls
        // may be in the table.
        let restart = std::mem::take(&mut self.runs.restart_due) && self.is_master();
        let redone = root.redone || self.stats.records_loaded > 0 || restart;
        let root = JobSpec { epoch, redone, ..root };
        self.root = Some(root.clone());
        self.forget_master_pace();
        if self.is_master() {
            if restart {
                self.stats.redone += 1;
            }
            self.start_root(root, exec);
        }
    }

    /// Runs whose answers this node has.
    pub fn runs_done(&self) -> u32 {
        self.runs.done
    }

    /// The root for a newcomer's welcome: without its payload when it is
    /// the first call, which the newcomer made itself.
    pub(super) fn root_for_newcomer(&self) -> Option<JobSpec> {
        let at_current_call = self.runs.roots_given == self.runs.done + 1;
        let root = self.root.clone().or_else(|| self.runs.program_root.clone().filter(|_| at_current_call))?;
        if Some(root.key) == self.runs.first_root {
            return Some(JobSpec { payload: Default::default(), ..root });
        }
        Some(root)
    }

    /// The root a welcome named, with the payload this node's own first
    /// call has when the welcome left it out.
    pub(super) fn root_from_welcome(&self, root: JobSpec) -> Option<JobSpec> {
        if !root.payload.is_empty() {
            return Some(root);
        }
        let own = self.runs.program_root.as_ref().filter(|own| own.key == root.key)?;
        Some(JobSpec { payload: own.payload.clone(), ..root })
    }
}
