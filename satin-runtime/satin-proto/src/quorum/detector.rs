//! A failure detector that does not lie under load.
//!
//! Silence is evidence of a death only if the node that hears it was
//! listening. Two rules keep a busy run from removing live members:
//!
//! - **Local health** (Lifeguard's idea, HashiCorp memberlist, 2018): a
//!   node notices its own stalls — its periodic tick comes late because
//!   its event loop did not run — and does not count the stall as silence
//!   of others: every member's last-heard time moves forward by the
//!   stall. A node that could not read its beats suspects no one for it.
//! - **Indirect probes** (SWIM, Das, Gupta and Motivala, 2002): before the
//!   leader removes a silent member, it asks up to two others to reach it
//!   (`Probe`); each pings the member (`Ping`/`Pong`) and tells the leader
//!   if it answered (`Reached`). A member others can reach is given
//!   another silence window — a few times at most, since a member the
//!   leader itself never hears cannot follow the log.

use super::{Output, QMsg, Quorum, Time};
use crate::msg::NodeId;

/// A tick later than this many heartbeats means this node itself stalled.
const STALL_BEATS: Time = 3;
/// How many members a leader asks to reach a silent one.
const HELPERS: usize = 2;
/// How many extra silence windows indirect probes can win a member
/// before the leader removes it anyway.
const MAX_RESCUES: u32 = 3;

/// A leader's indirect probe of one silent member.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Probe {
    /// When the helpers were asked (`None`: not asked in this silence).
    sent: Option<Time>,
    /// Silence windows won for it so far.
    rescues: u32,
}

impl Quorum {
    /// At each tick: a stall of this node's own is no silence of others.
    pub(super) fn forgive_own_stall(&mut self, now: Time) {
        let last = self.last_tick.replace(now);
        let Some(last) = last else { return };
        let gap = now.saturating_sub(last);
        if gap <= STALL_BEATS * self.cfg.heartbeat {
            return;
        }
        let stall = gap - self.cfg.heartbeat;
        self.stalls += 1;
        for t in self.heard.values_mut() {
            *t = (*t + stall).min(now);
        }
        self.leader_heard = (self.leader_heard + stall).min(now);
        self.followers.since = (self.followers.since + stall).min(now);
        if let Some(w) = &mut self.followers.waiting_since {
            *w = (*w + stall).min(now);
        }
        if let Some(at) = &mut self.next_election {
            *at += stall;
        }
    }

    /// Whether the leader may remove the silent member `m` now: only once
    /// others failed to reach it, or if nobody else can be asked.
    pub(super) fn may_remove_silent(&mut self, now: Time, m: NodeId) -> bool {
        let wait = (2 * self.cfg.heartbeat).max(self.cfg.suspect_after / 2);
        let probe = self.followers.probes.entry(m).or_default();
        if probe.rescues >= MAX_RESCUES {
            return true;
        }
        if let Some(sent) = probe.sent {
            return now >= sent + wait;
        }
        let window = self.cfg.suspect_after;
        let helpers: Vec<NodeId> = self
            .heard
            .iter()
            .filter(|(&h, &t)| h != m && h != self.me && t + window > now && self.log.is_member(h))
            .map(|(&h, _)| h)
            .take(HELPERS)
            .collect();
        if helpers.is_empty() {
            return true;
        }
        self.followers.probes.entry(m).or_default().sent = Some(now);
        for h in helpers {
            self.out.push_back(Output::Send { to: h, msg: QMsg::Probe { target: m } });
        }
        false
    }

    /// A member heard directly is no longer in question.
    pub(super) fn heard_directly(&mut self, from: NodeId) {
        self.followers.probes.remove(&from);
    }

    /// The leader asks this node to reach `target`.
    pub(super) fn on_probe(&mut self, from: NodeId, target: NodeId) {
        if target == self.me {
            self.out.push_back(Output::Send { to: from, msg: QMsg::Reached { target } });
            return;
        }
        self.probing.insert(target, from);
        self.out.push_back(Output::Send { to: target, msg: QMsg::Ping });
    }

    /// `from` answered a ping: the leaders that asked hear of it.
    pub(super) fn on_pong(&mut self, from: NodeId) {
        if let Some(leader) = self.probing.remove(&from) {
            self.out.push_back(Output::Send { to: leader, msg: QMsg::Reached { target: from } });
        }
    }

    /// A helper reached `target`: it is alive, though this leader does not
    /// hear it — another silence window, a few times at most.
    pub(super) fn on_reached(&mut self, now: Time, target: NodeId) {
        if self.role != super::Role::Leader || !self.log.is_member(target) {
            return;
        }
        let probe = self.followers.probes.entry(target).or_default();
        if probe.sent.is_none() || probe.rescues >= MAX_RESCUES {
            return;
        }
        probe.sent = None;
        probe.rescues += 1;
        self.rescues += 1;
        self.heard.insert(target, now);
    }
}
