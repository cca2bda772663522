//! Who is in the run: static start, joining, graceful leave.

use super::{Action, Config, Member, Node, Time};
use crate::checkpoint::ResultMeta;
use crate::proto::msg::{ClusterId, Entry, JobSpec, Msg, NodeId};
use crate::proto::{Executor, FtMode};
use crate::JobKey;

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
        let mut n = Node::new(id, cluster, config, seed);
        for &(m, c) in members {
            n.members.insert(m, Member { cluster: c, alive: true });
        }
        n.members.insert(id, Member { cluster, alive: true });
        n.master = master;
        n.root = Some(root);
        n.joined = true;
        n.membership_changed();
        n
    }

    /// A node joining a running computation through `contact`.
    pub fn joining(id: NodeId, cluster: ClusterId, contact: NodeId, config: Config, seed: u64) -> Node {
        let mut n = Node::new(id, cluster, config, seed);
        n.members.insert(id, Member { cluster, alive: true });
        n.actions.push_back(Action::Send { to: contact, msg: Msg::Join { cluster } });
        n
    }

    pub(super) fn welcomed(
        &mut self,
        now: Time,
        members: Vec<(NodeId, ClusterId)>,
        master: NodeId,
        root: JobSpec,
        exec: &mut impl Executor,
    ) {
        for (m, c) in members {
            self.members.entry(m).or_insert(Member { cluster: c, alive: true });
        }
        self.master = master;
        self.root = Some(root);
        self.joined = true;
        self.membership_changed();
        self.handle_idle(now, exec);
    }

    pub(super) fn admit(&mut self, newcomer: NodeId, cluster: ClusterId) {
        self.members.insert(newcomer, Member { cluster, alive: true });
        self.membership_changed();
        let members = self.members.iter().filter(|(_, m)| m.alive).map(|(id, m)| (*id, m.cluster)).collect();
        if let Some(root) = self.root.clone() {
            let welcome = Msg::Welcome { members, master: self.master, root };
            self.actions.push_back(Action::Send { to: newcomer, msg: welcome });
            self.actions.push_back(Action::Broadcast { msg: Msg::NewMember { id: newcomer, cluster } });
            // The newcomer may become master and restart the root: it
            // needs what the others have saved so far.
            if self.config.ft == FtMode::Table && self.table.len() > 0 {
                let entries = self.table.sync_entries(self.config.pointer_threshold, self.id);
                self.actions.push_back(Action::Send { to: newcomer, msg: Msg::TableSync { entries } });
            }
        }
    }

    pub(super) fn membership_changed(&mut self) {
        let me = (self.id, self.cluster);
        self.local_peers.clear();
        self.wide_peers.clear();
        for (id, m) in &self.members {
            if m.alive && *id != me.0 {
                if m.cluster == me.1 {
                    self.local_peers.push(*id);
                } else {
                    self.wide_peers.push(*id);
                }
            }
        }
    }

    /// Graceful leave without losing work: from now on this node steals no
    /// more; the jobs it runs finish (thieves still help with them) and their
    /// results go back as usual; once it has nothing left it
    /// [`leave`](Self::leave)s.
    /// A job that never ends here (the root, on the master) keeps it in the
    /// run: the driver calls `leave` at a deadline of its choosing.
    pub fn begin_leave(&mut self, now: Time, exec: &mut impl Executor) {
        if self.stopped {
            return;
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
        self.running_for.clear();
        self.orphans.clear();
        let heir = self.live_members().filter(|m| *m != self.id).last();
        if self.config.ft == FtMode::Table {
            let threshold = self.config.pointer_threshold;
            let mut large: Vec<(JobKey, Vec<u8>, ResultMeta)> = Vec::new();
            for (key, value) in abandoned.finished {
                if value.len() <= threshold {
                    self.publish(key, value, ResultMeta::UNKNOWN, exec);
                } else {
                    large.push((key, value, ResultMeta::UNKNOWN));
                }
            }
            large.extend(self.table.large_values(threshold).into_iter().map(|(k, v, m)| (k, v.to_vec(), m)));
            if let (Some(heir), false) = (heir, large.is_empty()) {
                for (key, _, meta) in &large {
                    let msg = Msg::TablePut { key: *key, entry: Entry::Pointer(heir), meta: *meta };
                    self.actions.push_back(Action::Broadcast { msg });
                }
                let results = large.into_iter().map(|(k, v, _)| (k, v)).collect();
                self.actions.push_back(Action::Send { to: heir, msg: Msg::HandOver { results } });
            }
        }
        self.actions.push_back(Action::Broadcast { msg: Msg::Leave });
        self.stop();
    }
}
