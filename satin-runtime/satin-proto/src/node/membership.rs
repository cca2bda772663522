//! Who is in the run: static start, admission, graceful leave.

use super::{Action, Config, Node, Time};
use crate::checkpoint::ResultMeta;
use crate::msg::{ClusterId, Entry, JobSpec, Msg, NodeId};
use crate::quorum::{Quorum, Snapshot};
use crate::roster::{Members, Roster};
use crate::JobKey;
use crate::{Executor, FtMode};

impl Node {
    /// A member of a run whose membership every node knows at start. The
    /// root job is replicated to all; the master (`master`) runs it.
    pub fn member(
        id: NodeId,
        cluster: ClusterId,
        members: &[(NodeId, ClusterId)],
        master: NodeId,
        root: JobSpec,
        config: Config,
        seed: u64,
    ) -> Node {
        Node::member_of(id, cluster, &Members::new(members), master, root, config, seed)
    }

    /// [`Node::member`] with a member list that other nodes may share (a
    /// simulator's many nodes hold one copy of it).
    pub fn member_of(
        id: NodeId,
        cluster: ClusterId,
        members: &Members,
        master: NodeId,
        root: JobSpec,
        config: Config,
        seed: u64,
    ) -> Node {
        let mut n = Node::new(id, cluster, config, seed);
        n.roster = Roster::new(id, cluster, members.clone());
        n.master = master;
        n.runs.origin = Some(master);
        n.runs.first_root = Some(root.key);
        n.runs.program_root = Some(root.clone());
        n.root = Some(root);
        n.joined = true;
        n.choose_table(members.len());
        let quorum_config = n.config.quorum;
        n.quorum = if members.cluster_of(id).is_some() {
            Quorum::new(id, members, master, quorum_config, seed)
        } else {
            // A run that starts with this node alone (its first node).
            let with_me: Vec<(NodeId, ClusterId)> = members.iter().chain([(id, cluster)]).collect();
            Quorum::new(id, &Members::new(&with_me), master, quorum_config, seed)
        };
        n
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn welcomed(
        &mut self,
        now: Time,
        members: Vec<(NodeId, ClusterId)>,
        master: NodeId,
        root: JobSpec,
        table_replicas: u32,
        quorum: Snapshot,
        exec: &mut impl Executor,
    ) {
        if self.joined {
            return;
        }
        let mut roster = Roster::new(self.id, self.cluster, Members::new(&members));
        // Deaths this node heard of before its welcome stay deaths.
        for dead in self.roster.dead() {
            roster.remove(dead);
        }
        self.roster = roster;
        self.master = master;
        self.joined = true;
        self.timers.stop(super::Timer::JoinRetry);
        self.table_replicas = table_replicas as usize;
        self.table.set_asks_homes(self.table_replicas > 0);
        // The log's answers end the runs before this one (the quorum takes
        // what the welcome says is committed as applied).
        let answers: Vec<_> = quorum.entries[..(quorum.commit as usize).min(quorum.entries.len())]
            .iter()
            .filter_map(|e| match &e.change {
                crate::quorum::Change::Answer { run, value, shower, holder } => {
                    Some((*run, value.clone(), *shower, *holder))
                }
                _ => None,
            })
            .collect();
        self.quorum.welcomed(now, quorum);
        self.pump_quorum(now, exec);
        for (run, value, shower, holder) in answers {
            self.answer_committed(now, run, value, shower, holder, exec);
        }
        self.root = self.root_from_welcome(root);
        self.timers.set(super::Timer::Quorum, self.quorum.next_tick(now));
        self.roster_changes += 1;
        self.publish_carried(exec);
        self.handle_idle(now, exec);
    }

    /// The newcomer's `Add` is committed (this node leads): welcome it.
    pub(super) fn admit(&mut self, newcomer: NodeId) {
        let Some(root) = self.root_for_newcomer() else { return };
        // Welcome first: the entries the newcomer is now home for come
        // after it.
        let members = self.roster.live_with_clusters().collect();
        let table_replicas = self.table_replicas as u32;
        let quorum = self.quorum.snapshot();
        let origin = self.runs.origin.unwrap_or(self.master);
        let welcome = Msg::Welcome { members, master: self.master, origin, root, table_replicas, quorum };
        self.actions.push_back(Action::Send { to: newcomer, msg: welcome });
        if self.is_suspending() {
            // Admitted after the suspend went out (its `Add` was on its
            // way): it stops with the others, holding nothing to save.
            self.actions.push_back(Action::Send { to: newcomer, msg: Msg::Suspend });
            return;
        }
        // The newcomer may become master and restart the root: it needs
        // what the others have saved so far (a home table sends it what it
        // is home for instead).
        if self.config.ft == FtMode::Table && self.table.len() > 0 && self.table_replicas == 0 {
            let entries = self.table.sync_entries(self.config.pointer_threshold, self.id);
            self.actions.push_back(Action::Send { to: newcomer, msg: Msg::TableSync { entries } });
        }
    }

    /// A member joined (announced by the node that admitted it).
    pub(super) fn member_joined(&mut self, id: NodeId, cluster: ClusterId, exec: &mut impl Executor) {
        let before = self.homes_before_change();
        if self.roster.insert(id, cluster) {
            self.roster_changes += 1;
            self.rehome(before);
            // A joiner starts from the run's shared values, not from nothing.
            self.send_all_shared(id, exec);
        }
    }

    /// Graceful leave without losing work: from now on this node steals no
    /// more; the jobs it runs finish (thieves still help with them) and their
    /// results go back as usual; once it has nothing left it
    /// [`leave`](Self::leave)s.
    /// A job that never ends here (the root, on the master) would keep it
    /// in the run: it leaves anyway after [`Config::leave_timeout`].
    pub fn begin_leave(&mut self, now: Time, exec: &mut impl Executor) {
        if self.stopped {
            return;
        }
        if !self.draining {
            self.timers.set(super::Timer::Leave, now + self.config.leave_timeout);
        }
        self.draining = true;
        self.handle_idle(now, exec);
    }

    /// Graceful leave: pass every finished result on, tell everyone, stop.
    /// The others then recover as for a crash of this node.
    ///
    /// Small results are broadcast as values. Large ones — those abandoned
    /// here and those this node holds for others' pointers — go to an heir,
    /// and everyone gets a pointer to it. The heir is the newest live node:
    /// in a migration (join the new set, then leave the old one) that is one
    /// of the new set, not an old node about to leave as well.
    pub fn leave(&mut self, _now: Time, exec: &mut impl Executor) {
        if self.stopped {
            return;
        }
        let abandoned = exec.abandon_all();
        self.ledger.running_for.clear();
        self.ledger.orphans.clear();
        let heir = self.live_members().filter(|m| *m != self.id).last();
        if self.config.ft == FtMode::Table {
            let threshold = self.config.pointer_threshold;
            let mut large: Vec<(JobKey, Vec<u8>, ResultMeta)> = Vec::new();
            for (key, value) in abandoned.finished {
                if value.len() <= threshold {
                    self.publish(key, value.into(), ResultMeta::UNKNOWN, exec);
                } else {
                    large.push((key, value, ResultMeta::UNKNOWN));
                }
            }
            large.extend(self.table.large_values(threshold).into_iter().map(|(k, v, m)| (k, v.to_vec(), m)));
            if let (Some(heir), false) = (heir, large.is_empty()) {
                for (key, _, meta) in &large {
                    let msg = Msg::TablePut { key: *key, entry: Entry::Pointer(heir), meta: *meta };
                    self.spread(key, msg);
                }
                let results = large.into_iter().map(|(k, v, _)| (k, v)).collect();
                self.actions.push_back(Action::Send { to: heir, msg: Msg::HandOver { results } });
            }
        }
        self.actions.push_back(Action::Broadcast { msg: Msg::Leave });
        self.stop();
    }
}
