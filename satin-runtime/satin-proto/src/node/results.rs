//! Results: of jobs stolen by this node (back to their victims), of long
//! local jobs (eager publication), the replicated table, lookups of redone
//! jobs — values, pointers fetched from their holder, and jobs still
//! running elsewhere, which a newer-epoch lookup waits for (adopts).

use bytes::Bytes;
use std::collections::BTreeMap;

use super::{Action, Asking, Fetching, Lookup, Node, Running, Time};
use crate::checkpoint::ResultMeta;
use crate::msg::{Entry, Msg, NodeId};
use crate::JobKey;
use crate::{Executor, FtMode};

/// Lookups of redone jobs that wait for other nodes, and nodes that wait
/// for jobs running here.
#[derive(Debug, Default)]
pub(super) struct Lookups {
    /// Waiting for the homes of their key to answer (the home table): the
    /// lookup's epoch, the homes yet to answer.
    pub(super) asking: BTreeMap<JobKey, Asking>,
    /// Waiting for a value from another node: a pointer's holder, or the
    /// node running the job (an adoption).
    pub(super) fetching: BTreeMap<JobKey, Fetching>,
    /// Nodes waiting for the result of a job running here (they adopted it).
    pub(super) awaiting: BTreeMap<JobKey, Vec<NodeId>>,
}

fn meta_of(r: &Running) -> ResultMeta {
    ResultMeta { depth: r.depth, id: 0, parent: r.parent }
}

impl Node {
    /// The job stolen from `victim` by steal `stamp` finished here. Its
    /// result goes back to the victim and into the table; if the victim
    /// died meanwhile (an orphan the executor let run on, see
    /// [`Executor::abandon`]), into the table only.
    pub fn handle_job_finished(
        &mut self,
        now: Time,
        victim: NodeId,
        stamp: u64,
        key: JobKey,
        value: Bytes,
        exec: &mut impl Executor,
    ) {
        if victim == self.id {
            // A copy of a late job, run here (see `stragglers.rs`).
            if let Some(r) = self.ledger.running_for.remove(&(victim, stamp)) {
                self.publish(key, value.clone(), meta_of(&r), exec);
                self.job_result(now, victim, stamp, key, value, exec);
            }
            return;
        }
        if let Some(r) = self.ledger.running_for.remove(&(victim, stamp)) {
            if self.is_alive(victim) {
                let msg = Msg::JobResult { stamp, key, value: value.clone() };
                self.actions.push_back(Action::Send { to: victim, msg });
            }
            // Every result returned to a victim also goes into the table.
            self.publish(key, value, meta_of(&r), exec);
            return;
        }
        if self.stopped {
            return;
        }
        let meta = self.ledger.orphans.remove(&(victim, stamp)).map_or(ResultMeta::UNKNOWN, |r| meta_of(&r));
        self.stats.orphans_saved += 1;
        self.publish(key, value, meta, exec);
    }

    /// The job stolen from `victim` by steal `stamp` failed here (it
    /// panicked): the failure goes back to the victim, whose waiting frame
    /// fails in turn, up to the root — as a panic goes to the caller in a
    /// local run. This node stays in the run. An orphan's failure goes
    /// nowhere: its re-executed copy meets the same failure.
    pub fn handle_job_failed(
        &mut self,
        now: Time,
        victim: NodeId,
        stamp: u64,
        reason: String,
        exec: &mut impl Executor,
    ) {
        if victim == self.id {
            if let Some(r) = self.ledger.running_for.remove(&(victim, stamp)) {
                self.void_running(&r, exec);
                self.job_failed(now, victim, stamp, reason, exec);
            }
            return;
        }
        if let Some(r) = self.ledger.running_for.remove(&(victim, stamp)) {
            self.void_running(&r, exec);
            if self.is_alive(victim) && !self.stopped {
                self.actions.push_back(Action::Send { to: victim, msg: Msg::JobFailed { stamp, reason } });
            }
        } else if let Some(r) = self.ledger.orphans.remove(&(victim, stamp)) {
            self.void_running(&r, exec);
        }
    }

    /// The job stolen from `victim` by steal `stamp` was aborted here: no
    /// result will come from it.
    pub fn handle_job_aborted(&mut self, _now: Time, victim: NodeId, stamp: u64, exec: &mut impl Executor) {
        let gone =
            self.ledger.running_for.remove(&(victim, stamp)).or_else(|| self.ledger.orphans.remove(&(victim, stamp)));
        if let Some(r) = gone {
            self.void_running(&r, exec);
        }
        // A copy run here that was not aborted on purpose: another may run.
        if victim == self.id {
            if let Some(copy) = self.ledger.stolen.remove(&stamp) {
                self.copy_ended(copy, exec);
            }
        }
    }

    /// A local job that ran for `ran` (the executor measures it) finished.
    /// Long ones are published (see [`crate::Config::publish_threshold`]).
    pub fn handle_local_job_finished(
        &mut self,
        now: Time,
        ran: Time,
        key: JobKey,
        value: Bytes,
        meta: ResultMeta,
        exec: &mut impl Executor,
    ) {
        if self.config.publish_threshold(now).is_some_and(|t| ran >= t) && !self.stopped {
            self.publish(key, value, meta, exec);
        }
    }

    /// A redone job of root epoch `epoch` is about to run: is its result
    /// in the table, or being computed by an older job it may wait for?
    /// With a home table, what this replica does not know its key's homes
    /// are asked (the answer comes through [`Executor::lookup_done`]).
    pub fn lookup(&mut self, key: &JobKey, epoch: u32) -> Lookup {
        if self.config.ft != FtMode::Table {
            return Lookup::Miss;
        }
        match self.lookups.asking.get(key) {
            // The homes' answer may make the ask wait for a running job
            // older than its own epoch only: joined by a lookup of an older
            // epoch still, that job could be the one waiting.
            Some(asked) if asked.epoch > epoch => {
                self.stats.table_misses += 1;
                return Lookup::Miss;
            }
            Some(_) => return Lookup::Pending,
            None => {}
        }
        match self.lookup_here(key, epoch, false) {
            Some(found) => found,
            None => {
                let asked = self.ask_homes(key, epoch, false);
                if asked == Lookup::Miss {
                    self.stats.table_misses += 1;
                }
                asked
            }
        }
    }

    /// A lookup in this replica; `None`: it knows nothing of `key` (a hit,
    /// and a miss while a fetch of the key is out, are counted here).
    /// `again`: the lookup has asked the homes twice.
    pub(super) fn lookup_here(&mut self, key: &JobKey, epoch: u32, again: bool) -> Option<Lookup> {
        match self.lookups.fetching.get(key) {
            // Joining a wait for a running job is for newer epochs only.
            Some(f) if f.adopt.is_some_and(|running| running >= epoch) => {
                self.stats.table_misses += 1;
                return Some(Lookup::Miss);
            }
            Some(_) => return Some(Lookup::Pending),
            None => {}
        }
        let (holder, adopt) = match self.table.get(key) {
            Some(Entry::Value(v)) => {
                self.stats.table_hits += 1;
                return Some(Lookup::Hit(v.clone()));
            }
            Some(Entry::Pointer(holder)) if *holder != self.id && self.is_alive(*holder) => (*holder, None),
            // Only a job of an older epoch: it never waits for this one,
            // directly or through frames nested above it.
            _ => match self.table.running(key).iter().find(|(h, e)| {
                *e < epoch
                    && if *h == self.id {
                        self.runs_at(key, *e)
                    } else {
                        // (Not a job of a node found stalled: `adoptions.rs`.)
                        self.is_alive(*h) && self.holders.may_adopt_from(*h)
                    }
            }) {
                Some(&(holder, e)) => (holder, Some(e)),
                None => return None,
            },
        };
        // The holder answers when it can: at once for a value, when the
        // job ends for a running one (see `fetch`).
        self.lookups.fetching.insert(*key, Fetching { holder, adopt, epoch, again });
        if holder == self.id {
            self.lookups.awaiting.entry(*key).or_default();
        } else {
            self.actions.push_back(Action::Send { to: holder, msg: Msg::Fetch { key: *key, running: adopt } });
        }
        Some(Lookup::Pending)
    }

    /// A peer asks for `key`'s value: answered now if it is here, when the
    /// job that computes it ends if a copy of epoch `running` or older runs
    /// here, else with nothing.
    pub(super) fn fetch(&mut self, from: NodeId, key: JobKey, running: Option<u32>) {
        let value = match self.table.get(&key) {
            Some(Entry::Value(v)) => Some(v.clone()),
            _ if running.is_some_and(|e| self.runs_before(&key, e + 1)) => {
                self.lookups.awaiting.entry(key).or_default().push(from);
                return;
            }
            _ => None,
        };
        self.actions.push_back(Action::Send { to: from, msg: Msg::FetchReply { key, value } });
    }

    /// Whether a job with this key runs here for another node.
    pub fn runs(&self, key: &JobKey) -> bool {
        self.runs_where(key, |_| true)
    }

    /// Whether a job with this key and an epoch below `epoch` runs here.
    fn runs_before(&self, key: &JobKey, epoch: u32) -> bool {
        self.runs_where(key, |e| e < epoch)
    }

    /// Whether a job with this key and epoch runs here for another node.
    pub fn runs_at(&self, key: &JobKey, epoch: u32) -> bool {
        self.runs_where(key, |e| e == epoch)
    }

    fn runs_where(&self, key: &JobKey, epoch_ok: impl Fn(u32) -> bool) -> bool {
        self.ledger.running_for.values().chain(self.ledger.orphans.values()).any(|r| r.key == *key && epoch_ok(r.epoch))
    }

    pub(super) fn table_put(
        &mut self,
        from: NodeId,
        key: JobKey,
        entry: Entry,
        meta: ResultMeta,
        exec: &mut impl Executor,
    ) {
        if self.config.ft != FtMode::Table {
            return;
        }
        self.table.put(key, entry.clone(), meta);
        // A value that arrives while a fetch or a question to the homes
        // is out answers it at once.
        if let Entry::Value(v) = entry {
            self.checkpoint_saw(key, &v, meta, from);
            if let Some(f) = self.lookups.fetching.remove(&key) {
                self.lookup_answered(key, Some(v), f.adopt.is_some(), exec);
            } else if self.lookups.asking.remove(&key).is_some() {
                self.lookup_answered(key, Some(v), false, exec);
            }
        }
    }

    pub(super) fn fetch_reply(&mut self, key: JobKey, value: Option<Bytes>, exec: &mut impl Executor) {
        let Some(f) = self.lookups.fetching.remove(&key) else { return };
        match value {
            Some(v) => {
                let meta = self.table.meta(&key).unwrap_or(ResultMeta::UNKNOWN);
                self.table.put(key, Entry::Value(crate::Bytes::copy_from_slice(&v)), meta);
                self.lookup_answered(key, Some(v), f.adopt.is_some(), exec);
            }
            None => {
                // What this replica knew of the holder is stale.
                match f.adopt {
                    Some(epoch) => self.table.not_running(&key, f.holder, Some(epoch)),
                    None => self.table.forget_pointer(&key, f.holder),
                }
                self.look_again(key, f, exec);
            }
        }
    }

    /// A wait for another node ended with nothing (its holder died, or no
    /// longer holds or runs what it was asked for): the value may still be
    /// elsewhere — a home may hold it, another node may run the same job —
    /// so the lookup looks again, here and then (once) at the homes, and
    /// misses only if nothing else is known.
    fn look_again(&mut self, key: JobKey, f: Fetching, exec: &mut impl Executor) {
        match self.lookup_here(&key, f.epoch, f.again) {
            // `lookup_here` counted the hit or the miss.
            Some(Lookup::Hit(v)) => exec.lookup_done(&key, Some(v)),
            Some(Lookup::Miss) => exec.lookup_done(&key, None),
            Some(Lookup::Pending) => {}
            None if !f.again && self.ask_homes(&key, f.epoch, true) == Lookup::Pending => {}
            None => self.lookup_answered(key, None, f.adopt.is_some(), exec),
        }
    }

    pub(super) fn lookup_answered(
        &mut self,
        key: JobKey,
        value: Option<Bytes>,
        adopted: bool,
        exec: &mut impl Executor,
    ) {
        match &value {
            Some(_) => {
                self.stats.table_hits += 1;
                if adopted {
                    self.stats.adopted += 1;
                }
            }
            None => self.stats.table_misses += 1,
        }
        exec.lookup_done(&key, value);
    }

    /// Lookups answered by `peer` will not be: each looks again. Called
    /// after the table forgot what `peer` held.
    pub(super) fn lookups_lost_with(&mut self, peer: NodeId, exec: &mut impl Executor) {
        let lost: Vec<JobKey> =
            self.lookups.fetching.iter().filter(|(_, f)| f.holder == peer).map(|(k, _)| *k).collect();
        for key in lost {
            if let Some(f) = self.lookups.fetching.remove(&key) {
                self.look_again(key, f, exec);
            }
        }
        for waiting in self.lookups.awaiting.values_mut() {
            waiting.retain(|w| *w != peer);
        }
    }

    /// Tells everyone that the job stolen from `victim` by steal `stamp`
    /// runs here, so a newer-epoch lookup of its key waits for it.
    pub(super) fn announce_running(&mut self, victim: NodeId, stamp: u64) {
        if self.config.ft != FtMode::Table {
            return;
        }
        let me = self.id;
        let Some(r) =
            self.ledger.running_for.get_mut(&(victim, stamp)).or_else(|| self.ledger.orphans.get_mut(&(victim, stamp)))
        else {
            return;
        };
        if r.announced {
            return;
        }
        r.announced = true;
        let (key, meta, entry) = (r.key, meta_of(r), Entry::Running { holder: me, epoch: r.epoch });
        self.table.put(key, entry.clone(), meta);
        self.spread(&key, Msg::TablePut { key, entry, meta });
    }

    /// A job announced as running here ended without a result: whoever
    /// waits for it computes it after all.
    pub(super) fn void_running(&mut self, r: &Running, exec: &mut impl Executor) {
        // Another copy of the same call and epoch may still run here:
        // then the mark stands. Waiters compute it themselves either way
        // (a copy of a newer epoch must not be waited for).
        if r.announced && !self.runs_at(&r.key, r.epoch) {
            self.table.not_running(&r.key, self.id, Some(r.epoch));
            self.spread(&r.key, Msg::NotRunning { key: r.key, epoch: r.epoch });
        }
        self.answer_awaiting(r.key, None, exec);
    }

    /// Answers the nodes (this one included) waiting for `key`.
    fn answer_awaiting(&mut self, key: JobKey, value: Option<&Bytes>, exec: &mut impl Executor) {
        for peer in self.lookups.awaiting.remove(&key).unwrap_or_default() {
            let msg = Msg::FetchReply { key, value: value.cloned() };
            self.actions.push_back(Action::Send { to: peer, msg });
        }
        if self.lookups.fetching.get(&key).is_some_and(|f| f.holder == self.id) {
            let f = self.lookups.fetching.remove(&key).expect("checked above");
            match value {
                Some(v) => self.lookup_answered(key, Some(v.clone()), f.adopt.is_some(), exec),
                None => self.look_again(key, f, exec),
            }
        }
    }

    /// Puts a result into the table: locally as a value, and to everyone as
    /// the value (small) or a pointer to this node (large). Lookups that
    /// wait for it, here or elsewhere, are answered.
    pub(super) fn publish(&mut self, key: JobKey, value: Bytes, meta: ResultMeta, exec: &mut impl Executor) {
        if self.config.ft != FtMode::Table {
            return;
        }
        let known = matches!(self.table.get(&key), Some(Entry::Value(_)));
        if !known {
            let entry = if value.len() <= self.config.pointer_threshold {
                Entry::Value(value.clone())
            } else {
                Entry::Pointer(self.id)
            };
            self.table.put(key, Entry::Value(value.clone()), meta);
            self.checkpoint_saw(key, &value, meta, self.id);
            self.stats.published += 1;
            self.spread(&key, Msg::TablePut { key, entry, meta });
        }
        self.answer_awaiting(key, Some(&value), exec);
        if let Some(f) = self.lookups.fetching.remove(&key) {
            self.lookup_answered(key, Some(value), f.adopt.is_some(), exec);
        } else if self.lookups.asking.remove(&key).is_some() {
            self.lookup_answered(key, Some(value), false, exec);
        }
    }
}
