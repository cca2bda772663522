//! A peer out of the run: the design's recovery procedure, on every live
//! node (steps 1 and 2; step 0 and 3, a new master restarting the root,
//! are the majority's decision, in `quorum.rs`).

use super::{Action, Node, Time};
use crate::checkpoint::ResultMeta;
use crate::msg::NodeId;
use crate::{Executor, FtMode};

impl Node {
    /// `peer`'s process is gone for certain: a supervisor saw it end, it
    /// said it leaves (`Leave`), or — in the simulator — it crashed in the
    /// papers' fail-stop model. It counts in no majority from now on, and
    /// its work is recovered at once; the leader removes it from the log.
    /// (A lost connection is only a suspicion: [`Node::handle_link_down`].)
    pub fn handle_peer_dead(&mut self, now: Time, peer: NodeId, exec: &mut impl Executor) {
        if self.stopped || peer == self.id || self.contact_lost(peer, super::JoinFailure::ContactGone) {
            return;
        }
        self.runs.gone.insert(peer);
        self.quorum.certain_dead(now, peer);
        self.pump_quorum(now, exec);
        if !self.stopped && self.roster.is_alive(peer) {
            self.recover_from(now, peer, exec);
            self.advance_answers(now, exec);
        }
    }

    /// `peer` is out of the run (removed by the majority, or dead for
    /// certain): the design's recovery procedure. The new master, if the
    /// old one is gone, is the majority's choice (`quorum.rs`), which
    /// restarts the root; here the orphans and the lost jobs.
    pub(super) fn recover_from(&mut self, now: Time, peer: NodeId, exec: &mut impl Executor) {
        if self.stopped || !self.roster.is_alive(peer) {
            return;
        }
        let before = self.homes_before_change();
        self.roster.remove(peer);
        self.roster_changes += 1;
        self.stats.recoveries += 1;
        self.table.forget_holder(peer);
        self.rehome(before);
        // With the broadcast table a lookup is a local read: every job may
        // as well look. With homes each costs a round trip, and only redone
        // jobs and their descendants can find anything (the design's rule).
        if self.config.ft == FtMode::Table && self.table_replicas == 0 {
            exec.recovery_started();
        }
        if self.steal.local.is_some_and(|(v, ..)| v == peer) {
            self.steal.local = None;
        }
        if self.steal.wide.is_some_and(|(v, ..)| v == peer) {
            self.steal.wide = None;
        }
        self.steal.late.retain(|(v, _)| *v != peer);
        self.lookups_lost_with(peer, exec);
        self.asks_lost_with(peer, exec);
        if self.config.ft == FtMode::None {
            self.actions.push_back(Action::Failed { reason: format!("node {peer} died and fault tolerance is off") });
            self.stop();
            return;
        }
        // A master that is gone (or replaced) leaves a root to restart,
        // which may wait for what still runs of the old tree.
        let root_restarts = peer == self.master || self.deposed.contains(&peer);
        self.checkpoint_peer_gone(peer);
        // Step 2: orphans. Save finished parts; the executor aborts the
        // rest — or, when the root restarts (its new epoch may wait for
        // them), lets them run on and publish their results when they end.
        // After a worker's death nothing may wait for them: its re-queued
        // jobs would compute them again beside them.
        let orphans: Vec<(NodeId, u64)> = self.ledger.running_for.keys().filter(|(v, _)| *v == peer).copied().collect();
        for (victim, stamp) in orphans {
            let running = self.ledger.running_for.remove(&(victim, stamp));
            let abandoned = exec.abandon(victim, stamp, root_restarts);
            match running {
                Some(r) if abandoned.runs_on => {
                    self.ledger.orphans.insert((victim, stamp), r);
                }
                Some(r) => self.void_running(&r, exec),
                None => {}
            }
            for s in abandoned.stolen_out {
                self.forget_job(s, false, exec);
            }
            for (k, v) in abandoned.finished {
                self.stats.orphans_saved += 1;
                self.publish(k, v.into(), ResultMeta::UNKNOWN, exec);
            }
        }
        // Step 1: re-queue what the dead node stole from us, marked redone.
        // (A job with another copy still running elsewhere waits for it.)
        let lost: Vec<u64> = self.ledger.stolen.iter().filter(|(_, s)| s.thief == peer).map(|(k, _)| *k).collect();
        for stamp in lost {
            if let Some(copy) = self.ledger.stolen.remove(&stamp) {
                self.copy_ended(copy, exec);
            }
        }
        self.handle_idle(now, exec);
    }
}
