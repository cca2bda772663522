//! Checkpoints (seed 002 §3): one coordinator — the master — writes the
//! results that every node publishes to a file, in a batch per interval,
//! through its driver (the computation never waits for the disk).
//!
//! - Small results reach the coordinator as the table updates every node
//!   broadcasts anyway; large ones (pointers elsewhere) are sent to it in a
//!   `CheckpointBatch` per interval. It keeps the values it writes, so when
//!   their publisher dies it points everyone at itself instead: results a
//!   crashed node had checkpointed are reused like an orphan's.
//! - The coordinator opens the file before the root starts: a resumed run
//!   seeds the table with the file's results and runs the root as a redone
//!   job, whose lookups find them. A new master takes the file over (it
//!   reads, repairs and extends it) and gets everyone's large results again.
//! - Suspend: the coordinator tells everyone, each sends what it has and
//!   stops; the coordinator writes the last batch and stops once it is
//!   durable.
//!
//! Data in flight to a coordinator that dies is lost: it only costs
//! recomputation.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use super::{Action, Node, Time};
use crate::checkpoint::{Record, ResultMeta};
use crate::msg::{Entry, JobSpec, Msg, NodeId};
use crate::JobKey;
use crate::{Executor, FtMode};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum File {
    /// Not this node's to write.
    Closed,
    Opening,
    Open,
    /// Opening failed: this node writes nothing.
    Failed,
}

pub(super) struct Checkpoint {
    interval: Time,
    /// Large results published here since the last tick, for the coordinator.
    outbox: Vec<Record>,
    file: File,
    /// The root waits for the file to be read (the master at start).
    root_waits: bool,
    /// Results to write at the next tick, and the keys the file holds.
    pending: Vec<Record>,
    queued: HashSet<JobKey>,
    /// Large values this coordinator holds for the file, by publisher.
    held_for: BTreeMap<JobKey, NodeId>,
    /// Ids of the calls whose results the file holds: a result whose
    /// parent's is saved is not worth writing.
    saved_ids: HashSet<u64>,
    next_seq: u64,
    writing: Option<u64>,
    /// Suspending: the members whose last batch has not come yet.
    suspending: Option<BTreeSet<NodeId>>,
    /// When the coordinator stops waiting for them (see `suspend`).
    suspend_deadline: Option<Time>,
    /// The last write before stopping is out.
    final_write: Option<u64>,
}

impl Checkpoint {
    /// The pending results worth writing: none whose parent's result is
    /// saved or written with them (the paper's compression, before the
    /// bytes are written rather than after).
    fn batch(&mut self) -> Vec<Record> {
        let pending = crate::checkpoint::compact(std::mem::take(&mut self.pending));
        let batch: Vec<Record> =
            pending.into_iter().filter(|r| r.meta.parent == 0 || !self.saved_ids.contains(&r.meta.parent)).collect();
        self.saved_ids.extend(batch.iter().map(|r| r.meta.id).filter(|&id| id != 0));
        batch
    }

    pub(super) fn new(interval: Time) -> Checkpoint {
        Checkpoint {
            interval: interval.max(1),
            outbox: Vec::new(),
            file: File::Closed,
            root_waits: false,
            pending: Vec::new(),
            queued: HashSet::new(),
            held_for: BTreeMap::new(),
            saved_ids: HashSet::new(),
            next_seq: 0,
            writing: None,
            suspending: None,
            suspend_deadline: None,
            final_write: None,
        }
    }
}

impl Node {
    /// At start: the master opens the file (and the root waits for it);
    /// every node ticks at the interval.
    pub(super) fn start_checkpoints(&mut self, now: Time) {
        // A joiner is nobody's master yet (it opens the file if it ever
        // becomes one: `checkpoint_new_master`).
        let master = self.is_master() && self.joined;
        let first = self.config.checkpoint_first;
        let Some(c) = &mut self.checkpoint else { return };
        let at = now + first.unwrap_or(c.interval);
        self.timers.set(super::Timer::Checkpoint, at);
        if master {
            c.file = File::Opening;
            c.root_waits = true;
            self.actions.push_back(Action::CheckpointOpen);
        }
    }

    /// Whether the root waits for the checkpoint file to be read.
    pub(super) fn opens_checkpoint(&self) -> bool {
        self.checkpoint.as_ref().is_some_and(|c| c.root_waits)
    }

    fn is_coordinator(&self) -> bool {
        self.is_master() && self.checkpoint.as_ref().is_some_and(|c| matches!(c.file, File::Opening | File::Open))
    }

    /// The driver read the checkpoint file: its (valid, compacted)
    /// records, or why it cannot be used. At start a bad file ends the run
    /// (nothing is ever mixed); on a takeover this node writes nothing.
    pub fn handle_checkpoint_opened(
        &mut self,
        _now: Time,
        found: Result<Vec<Record>, String>,
        exec: &mut impl Executor,
    ) {
        let Some(c) = &mut self.checkpoint else { return };
        if c.file != File::Opening || self.stopped {
            return;
        }
        let records = match found {
            Ok(r) => r,
            Err(reason) => {
                c.file = File::Failed;
                if c.root_waits {
                    self.actions.push_back(Action::Failed { reason });
                    self.stop();
                }
                return;
            }
        };
        c.file = File::Open;
        let saved: HashSet<JobKey> = records.iter().map(|r| r.key).collect();
        // What the table knows and the file does not (a takeover): written
        // at the next tick.
        let missing: Vec<Record> = self
            .table
            .values()
            .filter(|(k, _, _)| !saved.contains(k))
            .map(|(key, value, meta)| Record { key, meta, value: value.to_vec() })
            .collect();
        let threshold = self.config.pointer_threshold;
        let mut sync = Vec::new();
        for r in &records {
            self.table.put(r.key, Entry::Value(crate::Bytes::copy_from_slice(&r.value)), r.meta);
            let entry = if r.value.len() <= threshold {
                Entry::Value(crate::Bytes::copy_from_slice(&r.value))
            } else {
                Entry::Pointer(self.id)
            };
            sync.push((r.key, entry, r.meta));
        }
        self.stats.records_loaded += records.len() as u64;
        let c = self.checkpoint.as_mut().expect("checked above");
        c.saved_ids = records.iter().map(|r| r.meta.id).filter(|&id| id != 0).collect();
        c.queued = saved;
        for r in missing {
            c.queued.insert(r.key);
            c.pending.push(r);
        }
        self.spread_entries(sync);
        let c = self.checkpoint.as_mut().expect("checked above");
        if std::mem::take(&mut c.root_waits) {
            if let Some(root) = self.root.clone() {
                // A resumed run looks its calls up in what the file held.
                self.start_root(JobSpec { redone: !records.is_empty(), ..root }, exec);
            }
        }
    }

    /// The driver made write `seq` durable; it took `bytes`.
    pub fn handle_checkpoint_written(&mut self, _now: Time, seq: u64, records: u64, bytes: u64) {
        let Some(c) = &mut self.checkpoint else { return };
        if c.writing == Some(seq) {
            c.writing = None;
        }
        self.stats.records_written += records;
        self.stats.checkpoint_bytes += bytes;
        if c.final_write == Some(seq) {
            self.actions.push_back(Action::Suspended);
            self.stop();
        }
    }

    /// A result reached this node's table: the coordinator queues it for
    /// the file; a large one published here goes to the coordinator.
    pub(super) fn checkpoint_saw(&mut self, key: JobKey, value: &[u8], meta: ResultMeta, from: NodeId) {
        let coordinator = self.is_coordinator();
        let me = self.id;
        let threshold = self.config.pointer_threshold;
        let Some(c) = &mut self.checkpoint else { return };
        if coordinator {
            if c.queued.insert(key) {
                c.pending.push(Record { key, meta, value: value.to_vec() });
                if from != me && value.len() > threshold {
                    c.held_for.insert(key, from);
                }
            }
        } else if from == me && value.len() > threshold {
            c.outbox.push(Record { key, meta, value: value.to_vec() });
        }
    }

    /// The root's result, written last on the coordinator: the same command
    /// run again answers at once.
    pub(super) fn checkpoint_answer(&mut self, value: &[u8]) {
        let coordinator = self.is_coordinator();
        let Some(root) = &self.root else { return };
        let key = root.key;
        let Some(c) = &mut self.checkpoint else { return };
        if coordinator {
            let mut records = c.batch();
            if c.queued.insert(key) {
                records.push(Record { key, meta: ResultMeta { depth: 0, id: 0, parent: 0 }, value: value.to_vec() });
            }
            c.next_seq += 1;
            self.actions.push_back(Action::CheckpointWrite { seq: c.next_seq, records });
        }
    }

    /// Every interval: large results go to the coordinator, which writes
    /// its batch (one write at a time).
    pub(super) fn checkpoint_tick(&mut self, now: Time, tick: Time) {
        let coordinator = self.is_coordinator();
        let master = self.master;
        let me = self.id;
        let Some(c) = &mut self.checkpoint else { return };
        if self.stopped {
            return;
        }
        let next = tick + c.interval * ((now - tick) / c.interval + 1);
        self.timers.set(super::Timer::Checkpoint, next);
        if coordinator && c.suspend_deadline.is_some_and(|d| now >= d) {
            c.suspend_deadline = None;
            let silent: Vec<NodeId> = c.suspending.iter().flatten().copied().collect();
            for peer in silent {
                self.suspend_arrived(peer);
            }
            return;
        }
        if let Some(deadline) = c.suspend_deadline {
            self.timers.set_earliest(super::Timer::Checkpoint, deadline);
        }
        if coordinator {
            if c.file == File::Open && c.writing.is_none() && !c.pending.is_empty() {
                c.next_seq += 1;
                c.writing = Some(c.next_seq);
                let records = c.batch();
                self.actions.push_back(Action::CheckpointWrite { seq: c.next_seq, records });
            }
        } else if !c.outbox.is_empty() && master != me {
            // Large results whose parent's is in the batch too stay here.
            let records = crate::checkpoint::compact(std::mem::take(&mut c.outbox));
            self.actions.push_back(Action::Send { to: master, msg: Msg::CheckpointBatch { records, last: false } });
        }
    }

    pub(super) fn checkpoint_batch(&mut self, from: NodeId, records: Vec<Record>, last: bool) {
        for r in records {
            // Keep the value: if its publisher dies, this node serves it.
            self.table.put(r.key, Entry::Value(crate::Bytes::copy_from_slice(&r.value)), r.meta);
            self.checkpoint_saw(r.key, &r.value, r.meta, from);
        }
        if last {
            self.suspend_arrived(from);
        }
    }

    /// A peer died. The coordinator serves the large values it holds for
    /// the file in place of their dead publisher. A new master takes the
    /// file over; everyone sends it their large results.
    /// A new master coordinates the checkpoint: it opens the file; every
    /// other node sends it what it holds.
    pub(super) fn checkpoint_new_master(&mut self) {
        let Some(c) = &mut self.checkpoint else { return };
        if self.master == self.id {
            if c.file == File::Closed {
                c.file = File::Opening;
                self.actions.push_back(Action::CheckpointOpen);
            }
        } else {
            // Small results reached the old coordinator as table updates;
            // with a home table the new one had only its share of them.
            let threshold = if self.table_replicas == 0 { self.config.pointer_threshold } else { 0 };
            let mut records: Vec<Record> = std::mem::take(&mut c.outbox);
            records.extend(self.table.large_values(threshold).into_iter().map(|(key, v, meta)| Record {
                key,
                meta,
                value: v.to_vec(),
            }));
            if !records.is_empty() {
                self.actions
                    .push_back(Action::Send { to: self.master, msg: Msg::CheckpointBatch { records, last: false } });
            }
        }
    }

    /// `peer` is out: the coordinator stands in for its large results.
    pub(super) fn checkpoint_peer_gone(&mut self, peer: NodeId) {
        let Some(c) = &mut self.checkpoint else { return };
        let orphaned: Vec<JobKey> = c.held_for.iter().filter(|(_, o)| **o == peer).map(|(k, _)| *k).collect();
        c.held_for.retain(|_, o| *o != peer);
        for key in orphaned {
            let meta = self.table.meta(&key).unwrap_or(ResultMeta::UNKNOWN);
            self.spread(&key, Msg::TablePut { key, entry: Entry::Pointer(self.id), meta });
        }
        self.suspend_arrived(peer);
    }

    /// Suspends the whole run (SIGUSR1 on any node, or a request).
    ///
    /// The coordinator waits for every member's last batch, but not for
    /// ever: a member that vanished without a word before the suspend
    /// (its death not yet agreed on) never sends one, and once the others
    /// have stopped no majority is left to remove it. After twice the
    /// failure detector's `suspect_after` the members still silent count
    /// as done; what they held since their last batch is computed again
    /// when the run resumes.
    pub fn suspend(&mut self, now: Time) {
        if self.stopped || self.checkpoint.is_none() || self.config.ft != FtMode::Table {
            return;
        }
        if !self.is_coordinator() {
            self.actions.push_back(Action::Send { to: self.master, msg: Msg::SuspendRequest });
            return;
        }
        let others: BTreeSet<NodeId> = self.live_members().filter(|m| *m != self.id).collect();
        let c = self.checkpoint.as_mut().expect("checked above");
        if c.suspending.is_some() {
            return;
        }
        c.suspending = Some(others);
        let deadline = now + 2 * self.config.quorum.suspect_after;
        c.suspend_deadline = Some(deadline);
        self.timers.set_earliest(super::Timer::Checkpoint, deadline);
        self.actions.push_back(Action::Broadcast { msg: Msg::Suspend });
        self.tell_knocking_suspended();
        self.suspend_arrived(self.id);
    }

    /// Whether this node, the coordinator, is suspending the run.
    pub(super) fn is_suspending(&self) -> bool {
        self.checkpoint.as_ref().is_some_and(|c| c.suspending.is_some())
    }

    /// The coordinator suspends the run: send what is left, and stop.
    pub(super) fn suspend_ordered(&mut self, from: NodeId) {
        if !self.joined {
            // Knocking at a run that was suspended before it admitted
            // this node: nothing of it is here to save.
            self.actions.push_back(Action::Suspended);
            self.stop();
            return;
        }
        if from != self.master {
            return;
        }
        self.tell_knocking_suspended();
        // A node that keeps no checkpoint state has nothing to send, but
        // the coordinator waits for its word all the same.
        let records = self.checkpoint.as_mut().map(|c| std::mem::take(&mut c.outbox)).unwrap_or_default();
        self.actions.push_back(Action::Send { to: from, msg: Msg::CheckpointBatch { records, last: true } });
        self.actions.push_back(Action::Suspended);
        self.stop();
    }

    /// `from` has sent its last batch (or died): once all have, the last
    /// write goes out, and the coordinator stops when it is durable.
    fn suspend_arrived(&mut self, from: NodeId) {
        let Some(c) = &mut self.checkpoint else { return };
        let Some(waiting) = &mut c.suspending else { return };
        waiting.remove(&from);
        if !waiting.is_empty() || c.final_write.is_some() {
            return;
        }
        c.next_seq += 1;
        c.final_write = Some(c.next_seq);
        let records = c.batch();
        self.actions.push_back(Action::CheckpointWrite { seq: c.next_seq, records });
    }
}
