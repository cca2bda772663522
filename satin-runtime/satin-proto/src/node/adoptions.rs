//! Waits for a job on a stalled node given up.
//!
//! A lookup of a redone call may wait for the same call running on another
//! node (an adoption, `results.rs`): a restarted root reuses the jobs the
//! lost master's thieves still run, instead of computing them twice. If
//! that node's workers hang while it still answers — a job stuck on a
//! disk, a process starved of CPU — the wait never ends: the job was
//! stolen from a node that is gone, so no victim times it out, and the
//! holder answers every question.
//!
//! So an idle node, with nothing to steal and no late job to copy, treats
//! the holders of its adoptions as `root_copy.rs` treats the master: it
//! asks each how it fares (`JobStatus` about [`ADOPTION_STAMP`]; the
//! answer carries its work and busy time), and a holder whose rate of work
//! over the window is below half this node's own is stalled. Every
//! adoption from it ends as a miss — those calls run here, their own
//! lookups reusing what the table holds — and no later lookup adopts a
//! job of it until its answers show it working again. The job on the
//! stalled node, should it ever finish, publishes a result nobody waits
//! for.

use std::collections::{BTreeMap, BTreeSet};

use super::pace::Pace;
use super::root_copy::PACE_WINDOW;
use super::{Action, Node, Time};
use crate::msg::{Msg, NodeId};
use crate::{Executor, JobKey};

/// The stamp a `JobStatus` names to ask a holder how it fares: no steal
/// is ever numbered so (stamps count up from 1; the root's is `u64::MAX`).
pub(crate) const ADOPTION_STAMP: u64 = u64::MAX - 1;

/// What this node knows of the nodes whose jobs its lookups wait for.
#[derive(Debug, Default)]
pub(super) struct Holders {
    /// Each holder's pace, from its answers.
    pace: BTreeMap<NodeId, Pace>,
    /// When this node last asked each.
    asked: BTreeMap<NodeId, Time>,
    /// Holders found stalled: no lookup adopts a job of theirs.
    stalled: BTreeSet<NodeId>,
}

impl Holders {
    /// Whether a lookup may wait for a job running on `holder`.
    pub(super) fn may_adopt_from(&self, holder: NodeId) -> bool {
        !self.stalled.contains(&holder)
    }
}

impl Node {
    /// An idle node with nothing to steal and no late job to copy: ends
    /// its adoptions of stalled holders (`true`: their calls now run
    /// here), or asks the holders how they fare.
    pub(super) fn give_up_stalled_adoptions(&mut self, now: Time, exec: &mut impl Executor) -> bool {
        // (Copies of late work are off: a wait is a wait.)
        if !self.config.stragglers.duplicates {
            return false;
        }
        // Stalled holders are asked too: their answers may show them
        // working again.
        let holders: BTreeSet<NodeId> = self.adopted_from().chain(self.holders.stalled.iter().copied()).collect();
        self.holders.pace.retain(|n, _| holders.contains(n));
        self.holders.asked.retain(|n, _| holders.contains(n));
        let ours = exec.progress();
        let stalled: Vec<NodeId> = self.holders.pace.iter().filter(|(_, p)| p.stalled(ours)).map(|(n, _)| *n).collect();
        let mut gave_up = false;
        for holder in stalled {
            self.holders.stalled.insert(holder);
            let keys: Vec<JobKey> = self
                .lookups
                .fetching
                .iter()
                .filter(|(_, f)| f.holder == holder && f.adopt.is_some())
                .map(|(k, _)| *k)
                .collect();
            for key in keys {
                self.lookups.fetching.remove(&key);
                self.stats.adoptions_given_up += 1;
                self.lookup_answered(key, None, true, exec);
                gave_up = true;
            }
        }
        if gave_up {
            return true;
        }
        let every = self.config.stragglers.duplicate_after;
        for holder in holders {
            if self.holders.asked.get(&holder).is_none_or(|&t| now >= t + every) {
                self.holders.asked.insert(holder, now);
                self.stats.status_checks += 1;
                self.actions.push_back(Action::Send { to: holder, msg: Msg::JobStatus { stamp: ADOPTION_STAMP } });
            }
        }
        false
    }

    /// A holder answered how it fares. One whose work goes on again may
    /// be adopted from again.
    pub(super) fn holder_status(&mut self, now: Time, from: NodeId, progress: (u64, u64), exec: &impl Executor) {
        let window = PACE_WINDOW * self.config.stragglers.duplicate_after;
        let pace = self.holders.pace.entry(from).or_default();
        pace.record(now, progress, window);
        if pace.working(exec.progress()) {
            self.holders.stalled.remove(&from);
        }
    }

    /// Whether this node found `holder` stalled, and adopts no job of it.
    pub fn found_stalled(&self, holder: NodeId) -> bool {
        !self.holders.may_adopt_from(holder)
    }

    /// The other nodes whose running jobs this node's lookups wait for.
    fn adopted_from(&self) -> impl Iterator<Item = NodeId> + '_ {
        let me = self.id;
        self.lookups.fetching.values().filter(move |f| f.adopt.is_some() && f.holder != me).map(|f| f.holder)
    }
}
