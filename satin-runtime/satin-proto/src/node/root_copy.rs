//! A master whose workers make no progress: its root copied to an idle node.
//!
//! Thieves take the oldest jobs, so the master keeps the root and, at any
//! moment, the calls its own workers run. When those workers hang — a
//! job stuck on a disk, a process starved of CPU — while the node still
//! answers messages, nothing of that work can be stolen and no victim
//! waits for it: the straggler rules of `stragglers.rs`, which copy jobs
//! lost to thieves, never reach it.
//!
//! So an idle node treats the master like any late thief. Having found
//! nothing to steal and no late job of its own to copy, it asks the master
//! how it fares (`JobStatus` about [`ROOT_STAMP`]; the answer carries the
//! master's work and busy time, as any status answer does). A master whose
//! rate of work over the last [`PACE_WINDOW`] `duplicate_after`s is below
//! half this node's own, while its root still runs there, is stalled: this
//! node runs a copy of the root, marked redone, so that every call whose
//! result the table holds (the jobs the master lost to thieves, the
//! master's published calls) is reused, not recomputed. Its result goes to
//! the master ([`Msg::RootResult`]), whose driver still works: the first
//! of the two roots to finish is the answer, proposed once
//! (`root.rs`), and printed once. A master that is gone
//! altogether is the quorum's affair (`quorum.rs`: a new master restarts
//! the root).
//!
//! A node whose program is behind (in a program of several calls, every
//! node but the master's and the shower's waits at an earlier call) holds
//! no root of the run under way. Finding the master stalled all the same,
//! it asks the master for its root (`RootWanted`; the master's network
//! side answers however hung its workers are, `RootGiven`) and runs the
//! copy from that. Otherwise a master hung in a later run would never be
//! copied: no other node could run its root.
//!
//! One copy per node per run and epoch; a copy's result from an older run
//! or epoch (the master changed meanwhile), or of another root (a node
//! whose program is behind holds the last run's), is ignored where it
//! arrives.

use bytes::Bytes;

use super::pace::Pace;
use super::{Action, Node, Time};
use crate::msg::{JobSpec, Msg, NodeId};
use crate::{Executor, FtMode, JobKey};

/// The stamp a `JobStatus` names to ask the master about its root: no
/// steal is ever numbered so (stamps count up from 1).
pub(crate) const ROOT_STAMP: u64 = u64::MAX;

/// The master's rate is judged over this many `duplicate_after`s (the
/// latest answers): a master that worked well for most of the run and
/// then hung is found as soon as its recent work says so.
pub(super) const PACE_WINDOW: u64 = 8;

/// What this node knows of the master's pace, and its copy of the root.
#[derive(Debug, Default)]
pub(super) struct RootCopy {
    /// The master's pace, from its answers about its root.
    pace: Pace,
    /// The master said its root still runs, in its latest answer.
    root_runs: bool,
    /// When this node last asked the master.
    asked: Option<Time>,
    /// The copy this node runs, if any: (run, epoch, the root's key).
    running: Option<(u32, u32, JobKey)>,
    /// The run whose root this node asked the master for.
    wanted: Option<u32>,
    /// The master's root of a run this node's program is behind: (run, root).
    given: Option<(u32, JobSpec)>,
}

impl Node {
    /// An idle node with nothing to steal and no late job of its own:
    /// runs a copy of the root if the master is stalled (`true`), or asks
    /// the master how it fares.
    pub(super) fn copy_root_here(&mut self, now: Time, exec: &mut impl Executor) -> bool {
        let master = self.master;
        let run = self.runs.done + 1;
        let eligible = self.config.stragglers.duplicates
            && self.config.ft == FtMode::Table
            && !self.draining
            && !self.is_master()
            && self.is_alive(master)
            && !self.quorum.in_minority()
            && self.runs.proposed.is_none()
            && self.runs.program_over.is_none();
        if !eligible {
            return false;
        }
        // This run's root: its program's own, or the master's if its
        // program is behind. (A node whose program is behind holds the
        // last run's root, or none.)
        let own = self.root.as_ref().filter(|r| self.runs.roots_given > self.runs.done && !r.payload.is_empty());
        let given = self.root_copy.given.as_ref().filter(|(r, _)| *r == run).map(|(_, root)| root);
        let root = own.or(given).cloned();
        if root.as_ref().is_some_and(|r| self.root_copy.running == Some((run, r.epoch, r.key))) {
            return false;
        }
        if self.root_copy.root_runs && self.master_stalled(exec) {
            let Some(root) = root else {
                if self.root_copy.wanted != Some(run) {
                    self.root_copy.wanted = Some(run);
                    self.actions.push_back(Action::Send { to: master, msg: Msg::RootWanted { run } });
                }
                return false;
            };
            self.root_copy.running = Some((run, root.epoch, root.key));
            self.root_copy.pace.clear();
            self.root_copy.root_runs = false;
            self.stats.duplicates_started += 1;
            self.start_root(JobSpec { redone: true, duplicate: true, ..root }, exec);
            return true;
        }
        let every = self.config.stragglers.duplicate_after;
        if self.root_copy.asked.is_none_or(|t| now >= t + every) {
            self.root_copy.asked = Some(now);
            self.stats.status_checks += 1;
            self.actions.push_back(Action::Send { to: master, msg: Msg::JobStatus { stamp: ROOT_STAMP } });
        }
        false
    }

    /// A node behind the run wants the root of run `run`: the master
    /// gives the one it runs.
    pub(super) fn root_wanted(&mut self, from: NodeId, run: u32) {
        let current = self.is_master() && !self.stopped && run == self.runs.done + 1 && self.runs.proposed.is_none();
        let root = self.root.as_ref().filter(|r| current && !r.payload.is_empty());
        if let Some(root) = root {
            let root = JobSpec { stamp: 0, ..root.clone() };
            self.actions.push_back(Action::Send { to: from, msg: Msg::RootGiven { run, root } });
        }
    }

    /// The master gave its root of run `run`: kept for a copy while the
    /// run lasts.
    pub(super) fn root_given(&mut self, from: NodeId, run: u32, root: JobSpec) {
        if from == self.master && run == self.runs.done + 1 && !root.payload.is_empty() {
            self.root_copy.given = Some((run, root));
        }
    }

    /// The master answered about its root: whether it still runs there,
    /// and how much work it has done.
    pub(super) fn root_status(&mut self, now: Time, from: NodeId, running: bool, progress: (u64, u64)) {
        if from != self.master {
            return;
        }
        let window = PACE_WINDOW * self.config.stragglers.duplicate_after;
        self.root_copy.pace.record(now, progress, window);
        self.root_copy.root_runs = running;
    }

    /// Whether the master worked at less than half this node's rate over
    /// the window — once the span is long enough to say so (see
    /// `health.rs`: the same rule as for thieves, over recent answers).
    fn master_stalled(&self, exec: &impl Executor) -> bool {
        self.root_copy.pace.stalled(exec.progress())
    }

    /// What a `JobStatus` about the root gets here: whether this master
    /// still runs it, and how much work this node has done.
    pub(super) fn answer_root_status(&mut self, from: NodeId, exec: &impl Executor) {
        let running = self.is_master() && self.runs.proposed.is_none() && self.root.is_some();
        let msg = Msg::JobStatusReply { stamp: ROOT_STAMP, running, progress: exec.progress() };
        self.actions.push_back(Action::Send { to: from, msg });
    }

    /// The root finished on this node, which is not the master: it ran a
    /// copy, whose answer goes to the master.
    pub(super) fn root_copy_finished(&mut self, value: Bytes) {
        let Some((run, epoch, key)) = self.root_copy.running else { return };
        // (The master judges the epoch: a node behind knows only the
        // master's root's.)
        if run == self.runs.done + 1 && self.is_alive(self.master) {
            self.actions.push_back(Action::Send { to: self.master, msg: Msg::RootResult { run, epoch, key, value } });
        }
    }

    /// A copy of the root finished on another node: on the master whose root
    /// has not finished yet, its value is the answer.
    pub(super) fn root_result(
        &mut self,
        now: Time,
        (run, epoch, key): (u32, u32, JobKey),
        value: Bytes,
        exec: &mut impl Executor,
    ) {
        let ours = self.root.as_ref().is_some_and(|r| r.key == key);
        let current = ours && (run, epoch) == (self.runs.done + 1, self.root_epoch());
        if !self.is_master() || self.stopped || self.runs.proposed.is_some() || !current {
            return;
        }
        self.stats.duplicates_won += 1;
        self.root_answer(now, value, exec);
    }

    /// A new run, or a new master: the judgement of the last one's pace
    /// says nothing of the next (a copy still running is aborted with its
    /// run, or replaced by the new master's root).
    pub(super) fn forget_master_pace(&mut self) {
        self.root_copy.pace.clear();
        self.root_copy.root_runs = false;
        self.root_copy.wanted = None;
        self.root_copy.given = None;
    }
}
