//! Work stealing between nodes: requests, replies, victim choice, back-off.

use super::{Action, Node, Running, StealPolicy, Stolen, Time, Timer};
use crate::msg::{JobSpec, Msg, NodeId};
use crate::Executor;

/// This node as a thief: its outstanding requests and its back-off.
#[derive(Debug, Default)]
pub(super) struct Stealing {
    /// Names the next request.
    pub(super) next_request: u64,
    /// Outstanding steal requests: victim, request id, when sent (one in
    /// the node's own cluster, one across clusters).
    pub(super) local: Option<(NodeId, u64, Time)>,
    pub(super) wide: Option<(NodeId, u64, Time)>,
    /// Requests given up on but not answered yet: their reply may still
    /// carry a job, which a leaving node must not lose.
    pub(super) late: Vec<(NodeId, u64)>,
    /// Failed attempts in a row (the back-off they earn is
    /// [`Timer::StealBackoff`]).
    pub(super) failed: usize,
}

impl Node {
    /// The executor may have run out of work (a worker parked, a call
    /// ended, a step of the simulator): the core decides whether this
    /// node is idle — joined, running, and its executor without work
    /// ([`Executor::has_work`]) — and if so sends its shared news, leaves
    /// if it drains, or steals if no request is outstanding. Drivers call
    /// it whenever that may have changed and decide nothing themselves.
    pub fn handle_idle(&mut self, now: Time, exec: &mut impl Executor) {
        if self.stopped || !self.joined || exec.has_work() {
            return;
        }
        self.send_shared_news(exec);
        if self.draining {
            // A steal reply still on its way may carry a job: leaving before
            // it arrives would lose that job and make its victim redo it.
            let awaiting_steal = self.steal.local.is_some() || self.steal.wide.is_some() || !self.steal.late.is_empty();
            // A master whose answer waits for the majority stays for it.
            if !exec.runs_anything() && !awaiting_steal && self.runs.proposed.is_none() {
                self.leave(now, exec);
            }
            return;
        }
        // A minority takes no new work: what it would compute, the
        // majority computes too.
        if self.quorum.in_minority() {
            return;
        }
        if self.timers.pending(Timer::Dropped, now) || self.timers.pending(Timer::StealBackoff, now) {
            return;
        }
        self.timers.stop(Timer::StealBackoff);
        // What this node holds is asked for only when a request goes out.
        let holds = || exec.held_values();
        match self.config.steal {
            StealPolicy::Random => {
                if self.steal.local.is_none() && self.steal.wide.is_none() {
                    if let Some(victim) = self.roster.random_any(&mut self.rng) {
                        self.steal.local = Some((victim, self.request(now, victim, holds()), now));
                    }
                }
            }
            StealPolicy::MasterWorker => {
                let master = self.master;
                if self.steal.local.is_none() && master != self.id && self.is_alive(master) {
                    self.steal.local = Some((master, self.request(now, master, holds()), now));
                }
            }
            StealPolicy::ClusterAware => {
                if self.steal.local.is_none() {
                    if let Some(victim) = self.roster.random_local(&mut self.rng) {
                        self.steal.local = Some((victim, self.request(now, victim, holds()), now));
                    }
                }
                if self.steal.wide.is_none() {
                    if let Some(victim) = self.roster.random_wide(&mut self.rng) {
                        self.steal.wide = Some((victim, self.request(now, victim, holds()), now));
                    }
                }
            }
        }
    }

    pub(super) fn steal_request(
        &mut self,
        now: Time,
        thief: NodeId,
        id: u64,
        holds: &[[u8; 32]],
        exec: &mut impl Executor,
    ) {
        // A request can overtake its sender's `Leave`, or come from a node
        // declared dead: a job given to it would be lost. A dropped node
        // gets nothing until its cool-down is over.
        let thief_ok =
            self.joined && self.is_alive(thief) && !self.is_dropped(now, thief) && !self.quorum.in_minority();
        // Under master–worker only the master gives work.
        let thief_ok = thief_ok && (self.config.steal != StealPolicy::MasterWorker || self.master == self.id);
        let mut job = if thief_ok { exec.take_for_thief(self.ledger.next_stamp + 1, holds) } else { None };
        if let Some(spec) = &job {
            self.ledger.next_stamp += 1;
            self.stats.jobs_given += 1;
            let policy = exec.policy(spec);
            let ours = exec.progress();
            self.ledger.stolen.insert(spec.stamp, Stolen { policy, ..Stolen::new(thief, spec.clone(), now, ours) });
            self.set_late_timer(now);
        } else if thief_ok {
            // Nothing else to give: a copy of a late job, if one is worth it.
            job = self.copy_for(now, thief, exec);
        }
        self.actions.push_back(Action::Send { to: thief, msg: Msg::StealReply { id, job } });
    }

    /// Steal requests unanswered for `Config::steal_timeout` are given
    /// up (the victim may be gone; its reply, if it comes, is late):
    /// whether one was. The timer is set again for a request still out.
    pub(super) fn steal_replies_late(&mut self, now: Time) -> bool {
        let Some(limit) = self.config.steal_timeout else { return false };
        let mut late = false;
        // A draining node waits for its replies: a job in one would be lost.
        if !self.draining {
            for out in [&mut self.steal.local, &mut self.steal.wide] {
                if let Some((victim, id, sent)) = *out {
                    if sent + limit <= now {
                        *out = None;
                        self.steal.late.push((victim, id));
                        late = true;
                    }
                }
            }
        }
        let next = [self.steal.local, self.steal.wide].into_iter().flatten().map(|(.., sent)| sent + limit).min();
        if let Some(at) = next {
            self.timers.set(Timer::StealReply, at.max(now + limit / 8).max(now + 1));
        }
        late
    }

    fn request(&mut self, now: Time, victim: NodeId, holds: Vec<[u8; 32]>) -> u64 {
        self.steal.next_request += 1;
        self.stats.steal_requests += 1;
        let msg = Msg::StealRequest { id: self.steal.next_request, holds };
        self.actions.push_back(Action::Send { to: victim, msg });
        if let Some(limit) = self.config.steal_timeout {
            self.timers.set_earliest(Timer::StealReply, now + limit);
        }
        self.steal.next_request
    }

    pub(super) fn steal_reply(
        &mut self,
        now: Time,
        from: NodeId,
        id: u64,
        job: Option<JobSpec>,
        exec: &mut impl Executor,
    ) {
        if self.steal.local.is_some_and(|(v, i, _)| (v, i) == (from, id)) {
            self.steal.local = None;
        } else if self.steal.wide.is_some_and(|(v, i, _)| (v, i) == (from, id)) {
            self.steal.wide = None;
        } else {
            self.steal.late.retain(|late| *late != (from, id));
        }
        match job {
            Some(spec) if !exec.can_run(&spec) => {
                // Given back at once; the owner runs it, and this node,
                // still idle, asks elsewhere.
                self.stats.refused += 1;
                self.actions.push_back(Action::Send { to: from, msg: Msg::JobRefused { stamp: spec.stamp } });
                self.handle_idle(now, exec);
            }
            Some(spec) => {
                self.stats.jobs_stolen += 1;
                self.steal.failed = 0;
                let running = Running {
                    key: spec.key,
                    epoch: spec.epoch,
                    depth: spec.depth,
                    parent: spec.parent,
                    announced: false,
                };
                self.ledger.running_for.insert((from, spec.stamp), running);
                // A job of an older epoch is one a restarted root may reach:
                // say it runs here, so that it is waited for, not redone.
                if spec.epoch < self.root_epoch() {
                    self.announce_running(from, spec.stamp);
                }
                exec.run_stolen(spec, from);
            }
            None => {
                self.steal.failed += 1;
                let victims = match self.config.steal {
                    StealPolicy::MasterWorker => 1,
                    _ => self.roster.live_peers(),
                };
                if self.steal.failed >= victims.max(1) {
                    self.steal.failed = 0;
                    // Nobody has work to give: run a copy of a late job,
                    // or the calls a stalled node was to compute.
                    if self.copy_here(now, exec)
                        || self.copy_root_here(now, exec)
                        || self.give_up_stalled_adoptions(now, exec)
                    {
                        return;
                    }
                    self.timers.set(Timer::StealBackoff, now + self.config.steal_backoff);
                    return;
                }
                self.handle_idle(now, exec);
            }
        }
    }
}
