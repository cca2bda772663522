//! The run's log (`proto/quorum`) applied to this node: a new master and
//! root epoch, members joining and removed, the answer once a majority
//! holds it; suspicions passed on; and what a node that lost the majority,
//! or was removed by it, does.

use super::{Action, Node, Time};
use crate::checkpoint::ResultMeta;
use crate::msg::{JobSpec, Msg, NodeId};
use crate::quorum::{Change, Output, QMsg};
use crate::Executor;
use crate::JobKey;

impl Node {
    /// Carries out what the quorum asks for.
    pub(super) fn pump_quorum(&mut self, now: Time, exec: &mut impl Executor) {
        while let Some(out) = self.quorum.poll() {
            if self.stopped {
                break;
            }
            match out {
                Output::Send { to, msg } => self.actions.push_back(Action::Send { to, msg: Msg::Quorum(msg) }),
                Output::Broadcast { msg } => self.actions.push_back(Action::Broadcast { msg: Msg::Quorum(msg) }),
                Output::Apply { index, term, change } => {
                    if let Change::Answer { .. } = change {
                        self.runs.decision = Some((term, index));
                    }
                    self.apply_change(now, term, change, exec)
                }
                Output::Admit { id } => self.admit(id),
                Output::Expelled { by } => self.expelled(by, exec),
                Output::GiveUp { waited } => {
                    self.actions.push_back(Action::LostMajority { waited });
                    self.stop();
                }
            }
        }
        self.stats.elections = self.quorum.elections;
        self.stats.removals = self.quorum.removals;
        self.stats.stalls = self.quorum.stalls;
        self.stats.rescues = self.quorum.rescues;
    }

    /// A connection to `peer` failed. Not a death — a cut link or a lost
    /// packet looks the same — but worth telling the leader: two members
    /// that cannot talk cannot share work (see `proto/quorum`). What
    /// travelled on the lost connection may be lost with it: questions to
    /// `peer` are asked again or given up, and the jobs it stole from this
    /// node are asked after at once.
    pub fn handle_link_down(&mut self, now: Time, peer: NodeId, exec: &mut impl Executor) {
        if self.stopped || self.contact_lost(peer, super::JoinFailure::Refused) {
            return;
        }
        self.quorum.link_down(now, peer);
        self.pump_quorum(now, exec);
        if self.stopped || !self.is_alive(peer) || !self.joined {
            return;
        }
        self.lookups_lost_with(peer, exec);
        self.asks_lost_with(peer, exec);
        if self.steal.local.is_some_and(|(v, ..)| v == peer) {
            self.steal.local = None;
        }
        if self.steal.wide.is_some_and(|(v, ..)| v == peer) {
            self.steal.wide = None;
        }
        self.steal.late.retain(|(v, _)| *v != peer);
        self.ask_after_jobs_of(now, peer);
        self.handle_idle(now, exec);
    }

    /// This node's own connection to `peer` is up (again): the link works.
    pub fn handle_connected(&mut self, peer: NodeId) {
        self.quorum.link_works(peer);
    }

    /// The log entry (term, index) of the answer this node applied, if any:
    /// every node that prints an answer prints the same one.
    pub fn decision(&self) -> Option<(u32, u64)> {
        self.runs.decision
    }

    /// A member closed its connection with this node because it removed
    /// it: the majority has decided this node is out.
    pub fn handle_declared_dead(&mut self, now: Time, by: NodeId, exec: &mut impl Executor) {
        if self.stopped || self.expelled_before_admitted(by) || !self.joined {
            return;
        }
        self.quorum.handle(now, by, QMsg::NotMember { term: 0 });
        self.pump_quorum(now, exec);
    }

    /// Whether this node has no majority at the moment: it takes no new
    /// work (steals none, gives none) until it has one again.
    pub fn in_minority(&self) -> bool {
        self.quorum.in_minority()
    }

    /// On the master, the members heard from lately (see
    /// `Quorum::heard_lately`); `None` elsewhere.
    pub fn heard_lately(&self) -> Option<Vec<NodeId>> {
        self.quorum.heard_lately()
    }

    /// The quorum's state in one line (for debug logs).
    pub fn quorum_summary(&self) -> String {
        self.quorum.summary()
    }

    /// Why this node removed `peer` as leader, if it did.
    pub fn removal(&self, peer: NodeId) -> Option<crate::quorum::Removal> {
        self.quorum.removal(peer)
    }

    /// The voters, and those of them this node heard from lately (see
    /// `Quorum::voters_heard`).
    pub fn voters_heard(&self) -> (Vec<NodeId>, Vec<NodeId>) {
        self.quorum.voters_heard()
    }

    /// The leader this node follows, if it knows one (for status lines).
    pub fn leader(&self) -> Option<NodeId> {
        self.quorum.leader()
    }

    fn apply_change(&mut self, now: Time, term: u32, change: Change, exec: &mut impl Executor) {
        match change {
            Change::Lead { leader } => self.apply_leader(now, leader, term, exec),
            Change::Add { id, cluster } => self.member_joined(id, cluster, exec),
            Change::Promote { .. } => {}
            Change::Remove { id } => {
                self.actions.push_back(Action::Forget { peer: id });
                if self.is_alive(id) {
                    self.recover_from(now, id, exec);
                }
                self.advance_answers(now, exec);
            }
            Change::Answer { run, value, shower, holder } => {
                self.answer_committed(now, run, value, shower, holder, exec)
            }
        }
    }

    /// A new master leads from `term` on: it restarts the root job, whose
    /// epoch is that term, and the jobs still running for the old tree
    /// are announced so that the new one waits for them.
    fn apply_leader(&mut self, now: Time, leader: NodeId, term: u32, exec: &mut impl Executor) {
        if leader == self.master {
            // Master again after losing the majority for a while: an
            // answer found meanwhile goes into the log now.
            if leader == self.id {
                self.propose_again(now);
            }
            return;
        }
        let old = self.master;
        self.deposed.insert(old);
        self.master = leader;
        self.forget_master_pace();
        if let Some(root) = &mut self.root {
            root.epoch = root.epoch.max(term);
        }
        self.checkpoint_new_master();
        let epoch = self.root_epoch();
        let running: Vec<(NodeId, u64)> =
            self.ledger.running_for.keys().chain(self.ledger.orphans.keys()).copied().collect();
        for (victim, stamp) in running {
            let old =
                self.ledger.running_for.get(&(victim, stamp)).or_else(|| self.ledger.orphans.get(&(victim, stamp)));
            if old.is_some_and(|r| r.epoch < epoch) {
                self.announce_running(victim, stamp);
            }
        }
        if self.is_master() && self.runs.proposed.is_some() {
            // This node found the answer while the majority was out of
            // reach, and leads again: it goes into the log now.
            self.propose_again(now);
        } else if self.is_master() {
            match self.root.clone() {
                Some(root) => {
                    self.stats.redone += 1;
                    self.start_root(JobSpec { redone: true, ..root }, exec);
                }
                // This node's program is behind the run: it gets there
                // with the answers it fetches (`answer.rs`), and restarts
                // the root then.
                None => self.runs.restart_due = true,
            }
        }
        self.tell_new_leader(leader);
        self.advance_answers(now, exec);
        self.handle_idle(now, exec);
    }

    /// The majority removed this node: it is out of the run. What it
    /// finished goes with it (see [`Action::Expelled`]).
    fn expelled(&mut self, by: NodeId, exec: &mut impl Executor) {
        let abandoned = exec.abandon_all();
        self.ledger.running_for.clear();
        self.ledger.orphans.clear();
        let mut carry: Vec<(JobKey, Vec<u8>, ResultMeta)> =
            abandoned.finished.into_iter().map(|(k, v)| (k, v, ResultMeta::UNKNOWN)).collect();
        carry.extend(self.table.large_values(0).into_iter().map(|(k, v, m)| (k, v.to_vec(), m)));
        self.expel(by, carry);
    }

    /// This node is out of the run, told by `by`: [`Action::Expelled`]
    /// with what it finished, and whether the process joins again — the
    /// one place the rejoin limit is checked.
    pub(super) fn expel(&mut self, by: NodeId, carry: Vec<(JobKey, Vec<u8>, ResultMeta)>) {
        let rejoin = self.config.rejoins < self.config.max_rejoins;
        let removals = self.config.rejoins + 1;
        self.actions.push_back(Action::Expelled { by, carry, rejoin, removals });
        self.stop();
    }

    /// Results a former incarnation of this process finished (it was
    /// removed while cut off): published once this node is welcomed.
    pub fn carry_results(&mut self, carry: Vec<(JobKey, Vec<u8>, ResultMeta)>) {
        self.join.carried = carry;
    }

    pub(super) fn publish_carried(&mut self, exec: &mut impl Executor) {
        for (key, value, meta) in std::mem::take(&mut self.join.carried) {
            self.publish(key, value.into(), meta, exec);
        }
    }
}
