//! Strikes against nodes, drops and re-admission.
//!
//! Every timeout, lost job and failed attempt of a job a node ran for this
//! one is a strike against it (see `stragglers.rs`). `drop_after` strikes
//! within `strike_window` **drop** it: this node broadcasts the drop, and
//! for the cool-down no victim gives it work (it stays a member, finishes
//! what it runs, answers, and holds its results). Its jobs become late at
//! once, so idle nodes run copies of them. After the cool-down the node is
//! re-admitted **on probation**: one more strike before it returns a
//! result drops it again, for twice as long (up to 4 ×); a result ends
//! the probation and the back-off. A node dropped `max_drops` times
//! leaves the run.

use std::collections::VecDeque;

use super::{Action, Node, Time};
use crate::msg::{Msg, NodeId};
use crate::Executor;

/// What this node knows of another node's reliability.
#[derive(Clone, Debug, Default)]
pub(super) struct Health {
    /// Times of recent strikes (within the window).
    strikes: VecDeque<Time>,
    /// Dropped until then.
    until: Option<Time>,
    drops: u32,
    /// Drops since it last returned a result: the cool-down doubles.
    backoff: u32,
    /// Re-admitted after a drop and not yet proven: one strike drops it.
    probation: bool,
    /// Strikes ever.
    total: u64,
    /// Its progress as its status replies said (work, busy time): the
    /// first and the latest, for its rate of work.
    first_seen: Option<(u64, u64)>,
    last_seen: Option<(u64, u64)>,
    /// How much longer than estimated its jobs take: set by each job that
    /// came back (took / estimate), doubled by each hard timeout of a job
    /// it said it still ran. `None` is 1.
    pace: Option<f64>,
}

/// A node whose rate of work is below this fraction of this node's own is
/// a straggler: its late jobs get copies.
const SLOW_RATE: f64 = 0.5;
/// Rates are compared only over spans in which this node would have done
/// this much work (leaves in the simulator, CPU milliseconds in real runs):
/// less says nothing about jobs of uneven sizes.
const RATE_EVIDENCE: f64 = 20.0;

/// The most a node's pace stretches the hard timeouts of its jobs.
const MAX_STRETCH: f64 = 4.0;

/// One node's record, as [`Node::health_report`] gives it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HealthReport {
    /// The node judged.
    pub node: NodeId,
    /// Strikes against it (late, lost or failed jobs) in the window.
    pub strikes: u64,
    /// How often it was dropped.
    pub drops: u32,
}

impl Node {
    /// Whether `node` is dropped right now.
    pub(super) fn is_dropped(&self, now: Time, node: NodeId) -> bool {
        self.late.health.get(&node).and_then(|h| h.until).is_some_and(|t| now < t)
    }

    /// A job `node` ran for this one timed out, got lost or failed.
    pub(super) fn strike(&mut self, now: Time, node: NodeId) {
        if node == self.id || self.stopped {
            return;
        }
        let cfg = &self.config.stragglers;
        let (window, limit) = (cfg.strike_window, cfg.drop_after);
        let h = self.late.health.entry(node).or_default();
        h.total += 1;
        h.strikes.push_back(now);
        while h.strikes.front().is_some_and(|t| t + window <= now) {
            h.strikes.pop_front();
        }
        let limit = if h.probation { 1 } else { limit };
        if h.strikes.len() as u32 >= limit && !self.is_dropped(now, node) {
            self.drop_node(now, node);
        }
    }

    fn drop_node(&mut self, now: Time, node: NodeId) {
        let cool_down = self.config.stragglers.cool_down;
        let h = self.late.health.entry(node).or_default();
        h.drops += 1;
        h.backoff += 1;
        h.strikes.clear();
        h.probation = true;
        let for_ns = cool_down.saturating_mul(1 << (h.backoff - 1).min(2));
        h.until = Some(now + for_ns);
        let drops = h.drops;
        self.stats.drops += 1;
        self.actions.push_back(Action::Broadcast { msg: Msg::NodeDropped { node, for_ns, drops } });
    }

    /// `node` said it has done `progress` (work, busy time) so far.
    pub(super) fn record_progress(&mut self, node: NodeId, progress: (u64, u64)) {
        let h = self.late.health.entry(node).or_default();
        h.first_seen.get_or_insert(progress);
        h.last_seen = Some(progress);
    }

    /// Whether `node` works far slower than this node does: its work per
    /// busy second since its first status reply, against this node's since
    /// it started — once the span is long enough for the difference to
    /// mean something.
    pub(super) fn is_slow(&self, node: NodeId, exec: &impl Executor) -> bool {
        let Some(h) = self.late.health.get(&node) else { return false };
        let (Some((w0, b0)), Some((w1, b1))) = (h.first_seen, h.last_seen) else { return false };
        slower_than_us(w1.saturating_sub(w0), b1.saturating_sub(b0), exec.progress())
    }

    /// By how much the hard timeouts of jobs `node` runs are stretched.
    ///
    /// As TCP backs off its retransmission timer (Karn's rule), a node
    /// that answers but runs late — throttled, overloaded, a slower
    /// machine — gets longer timeouts after each hard timeout, and the
    /// next job it returns sets them from what it took. Without this, every
    /// job a slow node starts is aborted at the hard timeout and none ever
    /// finishes there.
    pub(super) fn stretch(&self, node: NodeId) -> f64 {
        self.late.health.get(&node).and_then(|h| h.pace).unwrap_or(1.0).clamp(1.0, MAX_STRETCH)
    }

    /// A job `node` ran came back after `took` of `estimate`.
    pub(super) fn record_pace(&mut self, node: NodeId, took: Time, estimate: Time) {
        if node != self.id && estimate > 0 {
            self.late.health.entry(node).or_default().pace = Some(took as f64 / estimate as f64);
        }
    }

    /// A job `node` said it still ran passed its hard timeout.
    pub(super) fn back_off_timeouts(&mut self, node: NodeId) {
        let h = self.late.health.entry(node).or_default();
        h.pace = Some((h.pace.unwrap_or(1.0).max(1.0) * 2.0).min(MAX_STRETCH));
    }

    /// `node` returned a result: it is off probation.
    pub(super) fn proved_healthy(&mut self, node: NodeId) {
        if let Some(h) = self.late.health.get_mut(&node) {
            h.probation = false;
            h.backoff = 0;
        }
    }

    /// Another node dropped `node` (perhaps this one).
    pub(super) fn node_dropped(&mut self, now: Time, node: NodeId, for_ns: u64, drops: u32, exec: &mut impl Executor) {
        if node == self.id {
            self.stats.dropped += 1;
            let until = now + for_ns;
            let until = self.timers.get(super::Timer::Dropped).map_or(until, |t| t.max(until));
            self.timers.set(super::Timer::Dropped, until);
            if drops >= self.config.stragglers.max_drops {
                self.begin_leave(now, exec);
            }
            return;
        }
        let h = self.late.health.entry(node).or_default();
        let until = now + for_ns;
        h.until = Some(h.until.map_or(until, |t| t.max(until)));
        h.drops = h.drops.max(drops);
        h.probation = true;
        h.strikes.clear();
    }

    /// The nodes this one keeps dropped right now (failing or slow: no
    /// work goes to them until their cool-down ends).
    pub fn dropped_now(&self, now: Time) -> Vec<NodeId> {
        self.late.health.keys().copied().filter(|&n| self.is_dropped(now, n)).collect()
    }

    /// Strikes and drops of every node this one judged (its victims'
    /// view of their thieves), in id order.
    pub fn health_report(&self) -> Vec<HealthReport> {
        self.late.health.iter().map(|(n, h)| HealthReport { node: *n, strikes: h.total, drops: h.drops }).collect()
    }
}

/// Whether `work` done in `busy` time is less than half the rate of
/// `ours` (this node's (work, busy time) so far) — once the span is
/// long enough for the difference to mean something.
pub(super) fn slower_than_us(work: u64, busy: u64, ours: (u64, u64)) -> bool {
    judge_rate(work, busy, ours) == Some(true)
}

/// [`slower_than_us`], or `None` where the span is too short to say.
pub(super) fn judge_rate(work: u64, busy: u64, ours: (u64, u64)) -> Option<bool> {
    let (v, c) = ours;
    if busy == 0 || c == 0 {
        return None;
    }
    let ours = v as f64 / c as f64;
    if ours * (busy as f64) < RATE_EVIDENCE {
        return None;
    }
    Some((work as f64 / busy as f64) < SLOW_RATE * ours)
}
