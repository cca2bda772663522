//! The root job on this node: each start numbered, and only the outcome
//! of the last start taken.
//!
//! A node runs a root many times over a program: each run's, a restart
//! after a master died, a copy for a stalled master (`root_copy.rs`), a
//! recomputation of an answer nobody holds (`answer.rs`), a resume from
//! a checkpoint. The executor aborts the root it ran before when told to
//! run another, but an outcome already on its way cannot be called back:
//! a master whose own root finished just after a copy's result ended the
//! run reports it while its program has gone on to the next call. Taken
//! then, it would end the *next* run with the last run's answer — or with
//! the stand-in of an answer held unencoded, decoded as the next run's
//! value (`kdtree --build` with its master hung: 115 instead of 1 126 208).
//!
//! So every start gets a number, carried to the executor as the root's
//! [`JobSpec::stamp`] and reported back with its outcome, and is for a
//! run. Only the last start's outcome counts, and only while its run has
//! no answer (from this node or another, `answer.rs`) — or, for a start
//! that recomputes an answer whose value was lost, until it gives it: an
//! outcome that comes after that, before or after the program's next
//! call, is stale and dropped here.

use bytes::Bytes;

use super::{Action, Node, Time};
use crate::msg::{JobSpec, Msg};
use crate::Executor;

/// The starts of the root on this node.
#[derive(Debug, Default)]
pub(super) struct Starts {
    /// The last start: its number, and the run it is for.
    last: Option<(u64, u32)>,
    /// Outcomes dropped as stale.
    pub(super) stale: u64,
}

impl Node {
    /// Runs `root` here as a new start: the outcome of any earlier start
    /// no longer counts.
    pub(super) fn start_root(&mut self, root: JobSpec, exec: &mut impl Executor) {
        // A recomputation is for a run that has ended (its answer's value
        // was lost, `answer.rs`); any other start, for the run under way.
        let run = if self.runs.answer_due { self.runs.handed + 1 } else { self.runs.done + 1 };
        let stamp = self.root_starts.last.map_or(1, |(n, _)| n + 1);
        self.root_starts.last = Some((stamp, run));
        exec.run_root(JobSpec { stamp, ..root });
    }

    /// Whether the root started as `start` is the one whose outcome
    /// counts: the last start, its run still open (or recomputed).
    pub fn root_start_is_current(&self, start: u64) -> bool {
        match self.root_starts.last {
            Some((last, run)) if last == start => run > self.runs.done || self.runs.answer_due,
            _ => false,
        }
    }

    /// As `root_start_is_current`, counting a stale outcome.
    fn root_outcome_counts(&mut self, start: u64) -> bool {
        let current = self.root_start_is_current(start);
        if !current {
            self.root_starts.stale += 1;
        }
        current
    }

    /// The root started as `start` (its [`JobSpec::stamp`]) failed here (it
    /// panicked): on the master, the run ends without an answer, on every
    /// node.
    pub fn handle_root_failed(&mut self, _now: Time, start: u64, reason: String) {
        if !self.root_outcome_counts(start) {
            return;
        }
        if self.is_master() && !self.stopped {
            self.actions.push_back(Action::Broadcast { msg: Msg::RunFailed { reason: reason.clone() } });
            self.actions.push_back(Action::Failed { reason });
            self.stop();
        }
    }

    /// The root started as `start` finished here: the master proposes the
    /// answer, which is out once a majority holds it (see `quorum.rs`).
    /// On another node, the root that finished was a copy (`root_copy.rs`):
    /// its value goes to the master.
    pub fn handle_root_finished(&mut self, now: Time, start: u64, value: Bytes, exec: &mut impl Executor) {
        if !self.root_outcome_counts(start) {
            return;
        }
        if !self.is_master() && !self.stopped {
            self.root_copy_finished(value);
            return;
        }
        self.root_answer(now, value, exec);
    }

    /// A root of this run finished, here or as a copy elsewhere: on the
    /// master, its value is the answer proposed.
    pub(super) fn root_answer(&mut self, now: Time, value: Bytes, exec: &mut impl Executor) {
        if self.is_master() && !self.stopped && self.runs.proposed.is_none() {
            self.checkpoint_answer(&value);
            self.propose_answer(now, value, exec);
        }
    }

    /// The root started as `start` finished here with a large answer that
    /// this node's program holds unencoded: `stand_in` takes the value's
    /// place in the protocol. It is never small (it rides in no log entry
    /// and no `Terminate`) and goes into no checkpoint; the driver replaces
    /// it with the encoded value in any message that carries it, while the
    /// program still holds the value (see `answer.rs`).
    pub fn handle_root_held(&mut self, now: Time, start: u64, stand_in: Bytes, exec: &mut impl Executor) {
        if !self.root_outcome_counts(start) {
            return;
        }
        if self.is_master() && !self.stopped && self.runs.proposed.is_none() {
            self.runs.held = Some(stand_in.clone());
            self.propose_answer(now, stand_in, exec);
        }
    }

    /// Root outcomes dropped as stale: a later start had replaced them.
    pub fn stale_root_outcomes(&self) -> u64 {
        self.root_starts.stale
    }
}
