//! Jobs this node lost to thieves that are late, lost or failing.
//!
//! A victim keeps every job it lost to a thief (see `Stolen`) and an
//! estimate of how long it takes: the function's own (`expect = "2s"`), the
//! run's ([`super::Stragglers::expect`]), or one learned per depth of the
//! tree from the jobs that came back. From it:
//!
//! - past the **soft** timeout it asks the thief whether the job still
//!   runs there (`JobStatus`); "no", or no answer, and the job is lost: it
//!   runs again (a lost result, a hung connection, killed workers);
//! - past the **hard** timeout — with a stated estimate, or a learned one
//!   from jobs of similar length — it aborts the thief's copy (`AbortJob`)
//!   and runs the job again. A thief that said it still ran the job gets
//!   longer hard timeouts next time (see `Node::stretch` in `health.rs`).
//!   A victim whose own workers did no work meanwhile waives it: its
//!   clock says nothing of the thief's pace (a hung master).
//!
//! Estimates are learned from first runs only: a redone or copied job
//! looks its calls up in the table and may come back at once.
//!
//! **Duplicates**: a node with nothing else to do — its steal attempts all
//! failed — asks its thieves how they fare (their answers carry their rate
//! of work, see `health.rs`), then runs a copy of its latest job itself, or
//! gives one to an idle thief that asks. A job is worth a copy when every
//! node holding it is dropped, or works at less than half this node's rate
//! and the job is past its soft timeout; the latest is the one furthest past
//! its estimate (LATE's rule). Keys
//! are content hashes, so both copies compute the same value: the first
//! result is delivered, every other copy is aborted, and nothing is
//! delivered twice — the executor waits for one steal (`orig`), and every
//! copy of it is forgotten when the first result arrives.
//!
//! **Retries**: a job that failed (panicked) on a thief runs again, up to
//! `retries` times, before its failure propagates.
//!
//! Every timeout, loss and failure is a strike against the thief (see
//! `health.rs`).

use bytes::Bytes;
use std::collections::BTreeMap;

use super::{Action, Node, Running, Stolen, Time};
use crate::checkpoint::ResultMeta;
use crate::msg::{JobSpec, Msg, NodeId};
use crate::JobKey;
use crate::{Executor, JobPolicy};

/// What this node knows of late, failing and slow work: how long stolen
/// jobs take, retries, and its judgement of other nodes.
#[derive(Debug, Default)]
pub(super) struct LateJobs {
    /// Durations of stolen jobs, per depth.
    pub(super) estimates: Estimates,
    /// Failed attempts so far per job (retries).
    pub(super) attempts: BTreeMap<JobKey, u32>,
    /// Strikes and drops per node (see `health.rs`).
    pub(super) health: BTreeMap<NodeId, super::health::Health>,
}

/// What timeouts count from before any stolen job came back.
const UNKNOWN_ESTIMATE: Time = 250_000_000;

/// A learned estimate is trusted for hard timeouts (which abort work)
/// only from this many samples whose spread is below this coefficient of
/// variation: divide-and-conquer subtrees of one depth can differ a lot,
/// and aborting a healthy long job costs its whole run.
const HARD_MIN_SAMPLES: u64 = 20;
const HARD_MAX_VARIATION: f64 = 0.1;

/// Learned durations of stolen jobs, per depth of the tree (count, mean,
/// sum of squared deviations: Welford's running variance).
#[derive(Clone, Debug, Default)]
pub(super) struct Estimates {
    by_depth: BTreeMap<u32, (u64, f64, f64)>,
}

impl Estimates {
    fn learn(&mut self, depth: u32, took: Time) {
        let (n, mean, m2) = self.by_depth.entry(depth).or_insert((0, 0.0, 0.0));
        *n += 1;
        let x = took as f64;
        let delta = x - *mean;
        *mean += delta / *n as f64;
        *m2 += delta * (x - *mean);
    }

    fn get(&self, depth: u32) -> Option<Time> {
        self.by_depth.get(&depth).map(|(_, mean, _)| *mean as Time)
    }

    fn near(&self, depth: u32) -> Option<Time> {
        let above = self.by_depth.range(..depth).next_back().map(|(_, (_, mean, _))| *mean as Time);
        above.or_else(|| self.by_depth.values().map(|(_, mean, _)| *mean as Time).max())
    }

    /// Whether the jobs at `depth` take so similar times that running far
    /// past their mean means something is wrong.
    fn consistent(&self, depth: u32) -> bool {
        self.by_depth.get(&depth).is_some_and(|&(n, mean, m2)| {
            n >= HARD_MIN_SAMPLES && mean > 0.0 && (m2 / (n - 1) as f64).sqrt() / mean <= HARD_MAX_VARIATION
        })
    }
}

impl Stolen {
    /// Job `spec`, lost to `thief` at `now`, when this node's own
    /// progress was `ours_at` (`Executor::progress`).
    pub(super) fn new(thief: NodeId, spec: JobSpec, now: Time, ours_at: (u64, u64)) -> Stolen {
        Stolen {
            thief,
            ours_at,
            hard_from: now,
            orig: spec.stamp,
            spec,
            since: now,
            asked: None,
            confirmed: None,
            checks: 0,
            policy: JobPolicy::default(),
        }
    }
}

impl Node {
    /// How long a stolen job at `depth` is expected to take.
    /// The function's own (`expect = ...`), else the run's, else learned.
    fn estimate(&self, copy: &Stolen) -> Option<Time> {
        copy.policy.expect.or(self.config.stragglers.expect).or_else(|| self.late.estimates.get(copy.spec.depth))
    }

    /// Whether a job at `depth` past its hard timeout may be aborted: the
    /// user stated the estimate, or the learned one is consistent.
    fn hard_timeout_applies(&self, copy: &Stolen) -> bool {
        copy.policy.expect.is_some()
            || self.config.stragglers.expect.is_some()
            || self.late.estimates.consistent(copy.spec.depth)
    }

    fn copies_of(&self, orig: u64) -> impl Iterator<Item = (&u64, &Stolen)> {
        self.ledger.stolen.iter().filter(move |(_, s)| s.orig == orig)
    }

    /// How far past its estimate the job the executor waits for as `orig`
    /// is (elapsed / estimate), if it is worth a copy: its thieves are all
    /// dropped, or all work far slower than this node (a copy splits the
    /// idle nodes that help a job between two copies of it, so a job that
    /// is merely long — divide-and-conquer subtrees of one depth can
    /// differ a thousandfold — is never copied).
    fn lateness(&self, now: Time, copies: &[&Stolen], exec: &impl Executor) -> Option<f64> {
        let first = copies.iter().min_by_key(|s| s.since)?;
        let elapsed = now.saturating_sub(first.since);
        if elapsed < self.config.stragglers.duplicate_after {
            return None;
        }
        if copies.iter().all(|s| self.is_dropped(now, s.thief)) {
            return Some(f64::MAX);
        }
        if !copies.iter().all(|s| self.is_slow(s.thief, exec)) {
            return None;
        }
        let Some(est) = self.estimate_near(first) else {
            return Some(elapsed as f64 / self.config.stragglers.duplicate_after.max(1) as f64);
        };
        let late = elapsed as f64 / est.max(1) as f64;
        (late >= self.config.stragglers.soft).then_some(late)
    }

    /// The estimate at `depth`, or else at the nearest depth above it
    /// (a subtree takes no longer than its parent), or else the longest.
    fn estimate_near(&self, copy: &Stolen) -> Option<Time> {
        self.estimate(copy).or_else(|| self.late.estimates.near(copy.spec.depth))
    }

    /// The estimate timeouts count from: with nothing learned yet, a
    /// generous guess, so that a job lost before any came back is still
    /// asked about (hard timeouts never apply to it).
    fn timeout_estimate(&self, copy: &Stolen) -> Time {
        self.estimate_near(copy).unwrap_or(UNKNOWN_ESTIMATE)
    }

    /// The latest job that `runner` does not run already. (Every copy of a
    /// late job is suspect, so a new one is added only while all that run
    /// are on slow, hung or dropped nodes.)
    fn latest(&self, now: Time, runner: NodeId, exec: &impl Executor) -> Option<u64> {
        // Copies of one job need not sit next to each other by stamp:
        // group them once (a busy victim may have lost thousands of jobs).
        let mut copies: BTreeMap<u64, Vec<&Stolen>> = BTreeMap::new();
        for s in self.ledger.stolen.values() {
            copies.entry(s.orig).or_default().push(s);
        }
        copies
            .into_iter()
            .filter(|(_, c)| c.iter().all(|s| s.thief != runner))
            .filter_map(|(o, c)| self.lateness(now, &c, exec).map(|l| (o, l)))
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(o, _)| o)
    }

    /// A new copy of job `orig` for `runner`, registered as stolen by it.
    fn new_copy(&mut self, now: Time, orig: u64, runner: NodeId, ours: (u64, u64)) -> JobSpec {
        let (base, policy) =
            self.copies_of(orig).map(|(_, s)| (s.spec.clone(), s.policy)).next().expect("a late job has a copy");
        self.ledger.next_stamp += 1;
        let spec = JobSpec { stamp: self.ledger.next_stamp, redone: true, duplicate: true, ..base };
        self.ledger.stolen.insert(spec.stamp, Stolen { orig, policy, ..Stolen::new(runner, spec.clone(), now, ours) });
        self.stats.duplicates_started += 1;
        spec
    }

    /// A copy of the latest job for an idle `thief`, if one is worth it.
    pub(super) fn copy_for(&mut self, now: Time, thief: NodeId, exec: &impl Executor) -> Option<JobSpec> {
        if !self.config.stragglers.duplicates || self.is_slow(thief, exec) {
            return None;
        }
        let orig = self.latest(now, thief, exec)?;
        Some(self.new_copy(now, orig, thief, exec.progress()))
    }

    /// Runs a copy of the latest job here; `false` if none is worth it.
    pub(super) fn copy_here(&mut self, now: Time, exec: &mut impl Executor) -> bool {
        if !self.config.stragglers.duplicates || self.draining {
            return false;
        }
        let Some(orig) = self.latest(now, self.id, exec) else {
            self.probe_thieves(now);
            return false;
        };
        let spec = self.new_copy(now, orig, self.id, exec.progress());
        let running =
            Running { key: spec.key, epoch: spec.epoch, depth: spec.depth, parent: spec.parent, announced: false };
        self.ledger.running_for.insert((self.id, spec.stamp), running);
        exec.run_stolen(spec, self.id);
        true
    }

    /// An idle node asks the thieves of its jobs how they fare (at most
    /// every `duplicate_after` per job), so that a slow or hung one is
    /// known before the soft timeout: idle, it has nothing better to do.
    fn probe_thieves(&mut self, now: Time) {
        let every = self.config.stragglers.duplicate_after;
        let me = self.id;
        let mut asks = Vec::new();
        for (stamp, copy) in self.ledger.stolen.iter_mut().filter(|(_, s)| s.thief != me) {
            let quiet = copy.confirmed.is_none_or(|c| now >= c + every);
            if copy.asked.is_none() && quiet && now >= copy.since + every {
                copy.asked = Some(now);
                asks.push((copy.thief, *stamp));
            }
        }
        for (thief, stamp) in asks {
            self.stats.status_checks += 1;
            self.actions.push_back(Action::Send { to: thief, msg: Msg::JobStatus { stamp } });
        }
    }

    /// The result of copy `stamp` came back, from thief `from` (this node
    /// for a copy run here): the first of its job's copies to finish wins.
    pub(super) fn job_result(
        &mut self,
        now: Time,
        from: NodeId,
        stamp: u64,
        key: JobKey,
        value: Bytes,
        exec: &mut impl Executor,
    ) {
        let Some(won) = self.ledger.stolen.remove(&stamp).filter(|s| s.thief == from) else {
            // A copy already beaten or aborted, or whose parent was aborted
            // here: an orphan result, still worth keeping.
            self.publish(key, value, ResultMeta::UNKNOWN, exec);
            return;
        };
        // A redone job (and everything under it) looks its calls up in the
        // table first: its time says how much of its subtree was already
        // done, not how long such a job takes. Learned from, twenty answers
        // from the table in a tenth of a millisecond each made a
        // "consistent" estimate that hard-timed-out every job computed
        // afterwards (a restarted root's thieves, dropped one after another).
        if !won.spec.redone {
            if won.thief != self.id && self.hard_timeout_applies(&won) {
                let estimate = self.timeout_estimate(&won);
                self.record_pace(won.thief, now.saturating_sub(won.since), estimate);
            }
            self.late.estimates.learn(won.spec.depth, now.saturating_sub(won.since));
        }
        self.late.attempts.remove(&key);
        self.proved_healthy(from);
        let waited = exec.deliver(won.orig, value.clone());
        if waited && stamp != won.orig {
            self.stats.duplicates_won += 1;
        }
        let losers: Vec<(u64, Stolen)> = self.take_family(won.orig);
        for (c, lost) in losers {
            self.stats.duplicates_aborted += 1;
            self.stats.loser_time += now.saturating_sub(lost.since);
            // Beaten by a copy that started after it, having run twice as
            // long as the winner needed: a straggler.
            let (lost_ran, won_ran) = (now.saturating_sub(lost.since), now.saturating_sub(won.since));
            if waited && lost_ran >= 2 * won_ran {
                self.strike(now, lost.thief);
            }
            self.abort_copy(c, &lost, exec);
        }
        if !waited {
            let meta = ResultMeta { depth: won.spec.depth, id: 0, parent: won.spec.parent };
            self.publish(key, value, meta, exec);
        }
    }

    /// Removes every copy of job `orig` still registered.
    fn take_family(&mut self, orig: u64) -> Vec<(u64, Stolen)> {
        let stamps: Vec<u64> = self.copies_of(orig).map(|(c, _)| *c).collect();
        stamps.into_iter().filter_map(|c| self.ledger.stolen.remove(&c).map(|s| (c, s))).collect()
    }

    /// Stops copy `stamp`: here (with whatever other nodes stole from
    /// inside it), or by telling its thief.
    fn abort_copy(&mut self, stamp: u64, copy: &Stolen, exec: &mut impl Executor) {
        if copy.thief == self.id {
            if let Some(r) = self.ledger.running_for.remove(&(self.id, stamp)) {
                let abandoned = exec.abandon(self.id, stamp, false);
                self.void_running(&r, exec);
                for s in abandoned.stolen_out {
                    self.forget_job(s, true, exec);
                }
            }
        } else if self.is_alive(copy.thief) {
            self.actions.push_back(Action::Send { to: copy.thief, msg: Msg::AbortJob { stamp } });
        }
    }

    /// The executor forgot job `orig` (its parent was aborted here): so do
    /// its copies — and, if `abort`, so do the thieves that run them (no
    /// result of theirs is wanted; after a crash they run on, as orphans
    /// whose results the restarted root may use).
    pub(super) fn forget_job(&mut self, orig: u64, abort: bool, exec: &mut impl Executor) {
        for (c, copy) in self.take_family(orig) {
            if abort || c != orig {
                self.abort_copy(c, &copy, exec);
            }
        }
    }

    /// Copy `copy` ended without a result (lost, aborted, failed, or its
    /// thief died): unless another copy still runs, the job runs again.
    pub(super) fn copy_ended(&mut self, copy: Stolen, exec: &mut impl Executor) {
        if self.copies_of(copy.orig).next().is_some() {
            return;
        }
        self.stats.redone += 1;
        exec.requeue(JobSpec { stamp: copy.orig, redone: true, duplicate: false, ..copy.spec });
    }

    /// Copy `stamp` failed on thief `from` (it panicked there): retried
    /// while the job has attempts left, else the failure propagates.
    pub(super) fn job_failed(&mut self, now: Time, from: NodeId, stamp: u64, reason: String, exec: &mut impl Executor) {
        let Some(copy) = self.ledger.stolen.remove(&stamp).filter(|s| s.thief == from) else { return };
        let tries = self.late.attempts.entry(copy.spec.key).or_insert(0);
        *tries += 1;
        if *tries <= copy.policy.retries.unwrap_or(self.config.stragglers.retries) {
            self.stats.retried += 1;
            self.strike(now, from);
            self.copy_ended(copy, exec);
            return;
        }
        self.late.attempts.remove(&copy.spec.key);
        for (c, other) in self.take_family(copy.orig) {
            self.abort_copy(c, &other, exec);
        }
        exec.fail(copy.orig, &reason);
    }

    /// Thief `from` cannot run copy `stamp` (see [`Executor::can_run`]):
    /// no fault of the thief's, so no strike and no attempt counted; the
    /// job runs here unless another copy runs elsewhere.
    pub(super) fn job_refused(&mut self, from: NodeId, stamp: u64, exec: &mut impl Executor) {
        let Some(copy) = self.ledger.stolen.remove(&stamp).filter(|s| s.thief == from) else { return };
        if self.copies_of(copy.orig).next().is_none() {
            exec.requeue(JobSpec { stamp: copy.orig, ..copy.spec });
        }
    }

    /// The thief's answer to a status question.
    pub(super) fn status_reply(
        &mut self,
        now: Time,
        from: NodeId,
        stamp: u64,
        running: bool,
        exec: &mut impl Executor,
    ) {
        let Some(copy) = self.ledger.stolen.get_mut(&stamp).filter(|s| s.thief == from) else { return };
        copy.asked = None;
        if running {
            copy.confirmed = Some(now);
            copy.checks += 1;
            self.set_late_timer(now);
        } else {
            self.lost(now, stamp, exec);
        }
    }

    /// Copy `stamp` is gone on its thief without a word.
    fn lost(&mut self, now: Time, stamp: u64, exec: &mut impl Executor) {
        if let Some(copy) = self.ledger.stolen.remove(&stamp) {
            self.stats.jobs_lost += 1;
            self.strike(now, copy.thief);
            self.copy_ended(copy, exec);
        }
    }

    /// The victim `from` aborts the job it lost to this node by `stamp`.
    pub(super) fn abort_job(&mut self, from: NodeId, stamp: u64, exec: &mut impl Executor) {
        let Some(r) = self.ledger.running_for.remove(&(from, stamp)) else { return };
        let abandoned = exec.abandon(from, stamp, false);
        // What finished inside is right, and the copy that won may be
        // missing parts of it: keep it.
        for (k, v) in abandoned.finished {
            self.publish(k, v.into(), ResultMeta::UNKNOWN, exec);
        }
        self.void_running(&r, exec);
        for s in abandoned.stolen_out {
            self.forget_job(s, true, exec);
        }
    }

    /// Soft and hard timeouts of the jobs thieves run for this node.
    /// Asks `thief` now whether the jobs it stole from this node still run
    /// there (a lost connection may have lost their results); no answer in
    /// time, or "no", and they run again, as at a soft timeout.
    pub(super) fn ask_after_jobs_of(&mut self, now: Time, thief: NodeId) {
        let stamps: Vec<u64> =
            self.ledger.stolen.iter().filter(|(_, s)| s.thief == thief && s.asked.is_none()).map(|(c, _)| *c).collect();
        for stamp in stamps {
            self.ledger.stolen.get_mut(&stamp).expect("listed").asked = Some(now);
            self.stats.status_checks += 1;
            self.actions.push_back(Action::Send { to: thief, msg: Msg::JobStatus { stamp } });
        }
        self.set_late_timer(now);
    }

    /// `Timer::LateJobs` is due: every late copy's next step.
    pub(super) fn check_late_jobs(&mut self, now: Time, exec: &mut impl Executor) {
        if self.stopped {
            return;
        }
        let cfg = self.config.stragglers.clone();
        let stamps: Vec<u64> = self.ledger.stolen.iter().filter(|(_, s)| s.thief != self.id).map(|(c, _)| *c).collect();
        for stamp in stamps {
            let Some(copy) = self.ledger.stolen.get(&stamp) else { continue };
            let est = self.timeout_estimate(copy);
            let elapsed = now.saturating_sub(copy.since);
            let hard_elapsed = now.saturating_sub(copy.hard_from);
            let hard = hard_elapsed as f64 >= self.hard_after(copy, est) && self.hard_timeout_applies(copy);
            if hard && stalled_since(copy.ours_at, exec.progress()) {
                // This node's own workers made no progress while the thief
                // ran the job: it cannot tell a late thief from its own
                // stall (a hung master measuring its thieves by its own
                // clock aborted each job it gave and dropped every thief).
                // The job stays where it runs; soft timeouts still ask.
                self.stats.hard_timeouts_waived += 1;
                let copy = self.ledger.stolen.get_mut(&stamp).expect("present");
                copy.ours_at = exec.progress();
                copy.hard_from = now;
            } else if hard {
                let copy = self.ledger.stolen.remove(&stamp).expect("present");
                self.stats.hard_timeouts += 1;
                if copy.confirmed.is_some() {
                    self.back_off_timeouts(copy.thief);
                }
                self.strike(now, copy.thief);
                self.abort_copy(stamp, &copy, exec);
                self.copy_ended(copy, exec);
            } else if elapsed as f64 >= cfg.soft * est as f64 {
                match (copy.asked, copy.confirmed) {
                    (Some(t), _) if now >= t + cfg.answer_timeout => self.lost(now, stamp, exec),
                    (Some(_), _) => {}
                    (None, Some(c)) if now < c + status_interval(est, copy.checks) => {}
                    (None, _) => {
                        let thief = copy.thief;
                        self.ledger.stolen.get_mut(&stamp).expect("present").asked = Some(now);
                        self.stats.status_checks += 1;
                        self.actions.push_back(Action::Send { to: thief, msg: Msg::JobStatus { stamp } });
                    }
                }
            }
        }
        self.set_late_timer(now);
    }

    /// How long after it started `copy` reaches its hard timeout, in ns:
    /// `hard` × the estimate, stretched for a thief that runs late.
    fn hard_after(&self, copy: &Stolen, est: Time) -> f64 {
        self.config.stragglers.hard * est as f64 * self.stretch(copy.thief)
    }

    /// Wakes the node at the next soft or hard timeout, status answer due,
    /// or status check.
    pub(super) fn set_late_timer(&mut self, now: Time) {
        let cfg = &self.config.stragglers;
        let mut next: Option<Time> = None;
        for copy in self.ledger.stolen.values().filter(|s| s.thief != self.id) {
            let est = self.timeout_estimate(copy);
            let soft = copy.since + (cfg.soft * est as f64) as Time;
            let hard = if self.hard_timeout_applies(copy) {
                copy.hard_from + self.hard_after(copy, est) as Time
            } else {
                Time::MAX
            };
            let check = match (copy.asked, copy.confirmed) {
                (Some(t), _) => t + cfg.answer_timeout,
                (None, Some(c)) => c + status_interval(est, copy.checks),
                (None, None) => soft,
            };
            let due = check.max(soft).min(hard).max(now + 1);
            next = Some(next.map_or(due, |n| n.min(due)));
        }
        if let Some(at) = next {
            self.timers.set_earliest(super::Timer::LateJobs, at);
        }
    }
}

/// Whether this node's own workers, busy since `then` (its (work, busy
/// time) then; `now` its progress now), did (next to) no work in that
/// time: none at all, or less than half the rate it kept so far.
fn stalled_since(then: (u64, u64), now: (u64, u64)) -> bool {
    let (work, busy) = (now.0.saturating_sub(then.0), now.1.saturating_sub(then.1));
    busy > 0 && (work == 0 || super::health::slower_than_us(work, busy, now))
}

/// After a soft timeout, when the thief is asked again.
fn status_interval(est: Time, checks: u32) -> Time {
    // A quarter of the estimate, doubling with every "still running": a
    // long job costs a few questions, a hung one is asked about again.
    (est / 4).max(10_000_000).saturating_mul(1 << checks.min(16))
}
