//! A peer's death: the design's recovery procedure, on every live node.

use super::{Action, Node, Time};
use crate::checkpoint::ResultMeta;
use crate::proto::msg::{JobSpec, NodeId};
use crate::proto::{Executor, FtMode};

impl Node {
    /// The driver declares `peer` dead (crash detected, or it left).
    pub fn handle_peer_dead(&mut self, now: Time, peer: NodeId, exec: &mut impl Executor) {
        if self.stopped || peer == self.id {
            return;
        }
        if !self.roster.is_alive(peer) {
            return;
        }
        let before = self.homes_before_change();
        self.roster.remove(peer);
        self.stats.recoveries += 1;
        self.table.forget_holder(peer);
        self.rehome(before);
        // With the broadcast table a lookup is a local read: every job may
        // as well look. With homes each costs a round trip, and only redone
        // jobs and their descendants can find anything (the design's rule).
        if self.config.ft == FtMode::Table && self.table_replicas == 0 {
            exec.recovery_started();
        }
        if self.local_steal.is_some_and(|(v, ..)| v == peer) {
            self.local_steal = None;
        }
        if self.wide_steal.is_some_and(|(v, ..)| v == peer) {
            self.wide_steal = None;
        }
        self.late_steals.retain(|(v, _)| *v != peer);
        self.lookups_lost_with(peer, exec);
        self.asks_lost_with(peer, exec);
        if self.config.ft == FtMode::None {
            self.actions.push_back(Action::Failed { reason: format!("node {peer} died and fault tolerance is off") });
            self.stop();
            return;
        }
        // Step 0: a new master, deterministically the lowest live id; the
        // root's next incarnation is a new epoch on every node alike.
        let master_died = peer == self.master;
        if master_died {
            let lowest = self.live_members().next();
            self.master = lowest.unwrap_or(self.id);
            if let Some(root) = &mut self.root {
                root.epoch += 1;
            }
        }
        self.checkpoint_peer_dead(peer, master_died);
        // Step 2: orphans. Save finished parts; the executor aborts the
        // rest — or, when the root restarts (its new epoch may wait for
        // them), lets them run on and publish their results when they end.
        // After a worker's death nothing may wait for them: its re-queued
        // jobs would compute them again beside them.
        let orphans: Vec<(NodeId, u64)> = self.running_for.keys().filter(|(v, _)| *v == peer).copied().collect();
        for (victim, stamp) in orphans {
            let running = self.running_for.remove(&(victim, stamp));
            let abandoned = exec.abandon(victim, stamp, master_died);
            match running {
                Some(r) if abandoned.runs_on => {
                    self.orphans.insert((victim, stamp), r);
                }
                Some(r) => self.void_running(&r, exec),
                None => {}
            }
            for s in abandoned.stolen_out {
                self.forget_job(s, false, exec);
            }
            for (k, v) in abandoned.finished {
                self.stats.orphans_saved += 1;
                self.publish(k, v, ResultMeta::UNKNOWN, exec);
            }
        }
        // Step 1: re-queue what the dead node stole from us, marked redone.
        // (A job with another copy still running elsewhere waits for it.)
        let lost: Vec<u64> = self.stolen.iter().filter(|(_, s)| s.thief == peer).map(|(k, _)| *k).collect();
        for stamp in lost {
            if let Some(copy) = self.stolen.remove(&stamp) {
                self.copy_ended(copy, exec);
            }
        }
        // The restarted root will reach jobs that still run here: have it
        // wait for them instead of computing them again.
        if master_died {
            let running: Vec<(NodeId, u64)> = self.running_for.keys().chain(self.orphans.keys()).copied().collect();
            let epoch = self.root_epoch();
            for (victim, stamp) in running {
                let old = self.running_for.get(&(victim, stamp)).or_else(|| self.orphans.get(&(victim, stamp)));
                if old.is_some_and(|r| r.epoch < epoch) {
                    self.announce_running(victim, stamp);
                }
            }
        }
        // Step 3: the new master restarts the replicated root job.
        if master_died && self.is_master() {
            if let Some(root) = self.root.clone() {
                self.stats.redone += 1;
                exec.run_root(JobSpec { redone: true, ..root });
            }
        }
        self.handle_idle(now, exec);
    }
}
