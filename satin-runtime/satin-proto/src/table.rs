//! One node's replica of the global result table.
//!
//! Updated by asynchronous broadcast, with no consistency between replicas:
//! a miss only costs recomputation. An optional bound on the number of
//! entries evicts the oldest first.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use super::msg::{Entry, NodeId};
use crate::checkpoint::{ResultMeta, DEPTH_UNKNOWN};
use crate::{BuildKeyHasher, JobKey};

/// A table entry as worker threads see it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SharedEntry {
    /// The value itself.
    Value(bytes::Bytes),
    /// Held by another node: fetching it takes a message.
    Pointer,
    /// Being computed by a job of root epoch `epoch` somewhere.
    Running {
        /// The root epoch of the copy that runs.
        epoch: u32,
    },
}

type Shared = HashMap<JobKey, SharedEntry, BuildKeyHasher>;

/// The entries of a replica, readable from other threads. Real runs hand
/// this to worker threads, which look results up without going through the
/// protocol driver; only pointers and running jobs need the driver.
#[derive(Clone, Default)]
pub struct SharedTable {
    entries: Arc<RwLock<Shared>>,
    /// Depths (below 64, where known) at which results or running jobs
    /// sit: lookups of redone calls go down to the deepest of them, and
    /// hash calls only at these depths (see `sched::track`). With a home
    /// table this replica sees its own results and its keys' share of the
    /// others' — a sample of the depths, not all of them: a depth it never
    /// saw costs recomputation there, never a wrong answer.
    depths: Arc<AtomicU64>,
    /// The table has homes (see `proto/node/homes.rs`): what this replica
    /// lacks may be with them, so a redone call at a depth above asks.
    asks_homes: Arc<AtomicBool>,
}

impl SharedTable {
    /// Whether a miss here should ask the key's homes (through the driver).
    pub fn asks_homes(&self) -> bool {
        self.asks_homes.load(Ordering::Relaxed)
    }

    /// The entry for `key`, if this replica has one.
    pub fn get(&self, key: &JobKey) -> Option<SharedEntry> {
        self.entries.read().unwrap_or_else(|e| e.into_inner()).get(key).cloned()
    }

    /// Whether results found by depth sit at `depth`.
    pub fn has_depth(&self, depth: u32) -> bool {
        depth < 64 && self.depths.load(Ordering::Relaxed) & (1 << depth) != 0
    }

    /// Whether any result found by depth sits below `depth`.
    pub fn has_deeper(&self, depth: u32) -> bool {
        depth < 63 && self.depths.load(Ordering::Relaxed) >> (depth + 1) != 0
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Shared> {
        self.entries.write().unwrap_or_else(|e| e.into_inner())
    }

    fn note_depth(&self, meta: &ResultMeta) {
        // Depths are known only in the tracked levels near the top of the
        // tree, where calls are few and long: a lookup there pays for itself.
        if meta.depth < 64 {
            self.depths.fetch_or(1 << meta.depth, Ordering::Relaxed);
        }
    }
}

fn shared(entry: &Entry) -> SharedEntry {
    match entry {
        Entry::Value(v) => SharedEntry::Value(v.clone()),
        Entry::Pointer(_) => SharedEntry::Pointer,
        Entry::Running { epoch, .. } => SharedEntry::Running { epoch: *epoch },
    }
}

pub(crate) struct ResultTable {
    /// Values and pointers.
    entries: HashMap<JobKey, (Entry, ResultMeta), BuildKeyHasher>,
    /// Who runs the jobs whose results are not here yet, and of which
    /// epoch (several nodes may run copies of the same call).
    running: HashMap<JobKey, Vec<(NodeId, u32)>, BuildKeyHasher>,
    /// Where in the tree the running jobs sit.
    running_meta: HashMap<JobKey, ResultMeta, BuildKeyHasher>,
    order: VecDeque<JobKey>,
    capacity: Option<usize>,
    /// Mirror of the entries, kept only once someone asked for it.
    shared: Option<SharedTable>,
    asks_homes: bool,
}

impl ResultTable {
    pub(crate) fn new(capacity: Option<usize>) -> Self {
        ResultTable {
            entries: HashMap::default(),
            running: HashMap::default(),
            running_meta: HashMap::default(),
            order: VecDeque::new(),
            capacity,
            shared: None,
            asks_homes: false,
        }
    }

    /// The table has homes from now on: readers of the mirror ask them.
    pub(crate) fn set_asks_homes(&mut self, asks: bool) {
        self.asks_homes = asks;
        if let Some(s) = &self.shared {
            s.asks_homes.store(asks, Ordering::Relaxed);
        }
    }

    /// Starts (or keeps) mirroring entries into a [`SharedTable`].
    pub(crate) fn share(&mut self) -> SharedTable {
        if let Some(s) = &self.shared {
            return s.clone();
        }
        let table = SharedTable::default();
        table.asks_homes.store(self.asks_homes, Ordering::Relaxed);
        {
            let mut w = table.write();
            for (k, (e, meta)) in &self.entries {
                w.insert(*k, shared(e));
                table.note_depth(meta);
            }
            for (k, holders) in &self.running {
                if let Some(epoch) = holders.iter().map(|(_, e)| *e).min() {
                    w.insert(*k, SharedEntry::Running { epoch });
                }
            }
        }
        self.shared = Some(table.clone());
        table
    }

    /// Inserts or replaces. A value is never replaced (results of pure
    /// calls do not change), a pointer only by a value. A running mark
    /// adds its holder to the key's, unless the value is here already
    /// (beside a pointer it stays: the pointer's holder may die first).
    pub(crate) fn put(&mut self, key: JobKey, entry: Entry, meta: ResultMeta) {
        if let Entry::Running { holder, epoch } = entry {
            if matches!(self.entries.get(&key), Some((Entry::Value(_), _))) {
                return;
            }
            let holders = self.running.entry(key).or_default();
            if !holders.contains(&(holder, epoch)) {
                holders.push((holder, epoch));
            }
            self.running_meta.insert(key, meta);
            self.mirror_running(key);
            return;
        }
        if matches!(entry, Entry::Value(_)) {
            self.running.remove(&key);
            self.running_meta.remove(&key);
        }
        match (self.entries.get(&key).map(|(e, _)| e), &entry) {
            (Some(Entry::Value(_)), _) => return,
            (Some(Entry::Pointer(_)), Entry::Pointer(_)) => return,
            (Some(_), _) => {
                let meta = if meta.depth == DEPTH_UNKNOWN { self.entries[&key].1 } else { meta };
                self.mirror(key, &entry, &meta);
                self.entries.insert(key, (entry, meta));
                return;
            }
            (None, _) => {}
        }
        if let Some(cap) = self.capacity {
            while self.entries.len() >= cap.max(1) {
                let Some(old) = self.order.pop_front() else { break };
                self.entries.remove(&old);
                if let Some(s) = &self.shared {
                    s.write().remove(&old);
                }
            }
            self.order.push_back(key);
        }
        self.mirror(key, &entry, &meta);
        self.entries.insert(key, (entry, meta));
    }

    /// Worker threads see a pointer if there is one, else the oldest
    /// running mark.
    fn mirror_running(&self, key: JobKey) {
        if let Some(s) = &self.shared {
            if self.entries.contains_key(&key) {
                return;
            }
            match self.running.get(&key).and_then(|h| h.iter().map(|(_, e)| *e).min()) {
                Some(epoch) => {
                    if let Some(meta) = self.running_meta.get(&key) {
                        s.note_depth(meta);
                    }
                    s.write().insert(key, SharedEntry::Running { epoch })
                }
                None => s.write().remove(&key),
            };
        }
    }

    /// Who runs `key` (holder, epoch), as far as this replica knows.
    pub(crate) fn running(&self, key: &JobKey) -> &[(NodeId, u32)] {
        self.running.get(key).map_or(&[], Vec::as_slice)
    }

    fn mirror(&self, key: JobKey, entry: &Entry, meta: &ResultMeta) {
        if let Some(s) = &self.shared {
            s.write().insert(key, shared(entry));
            if matches!(entry, Entry::Value(_) | Entry::Pointer(_)) {
                s.note_depth(meta);
            }
        }
    }

    pub(crate) fn get(&self, key: &JobKey) -> Option<&Entry> {
        self.entries.get(key).map(|(e, _)| e)
    }

    pub(crate) fn meta(&self, key: &JobKey) -> Option<ResultMeta> {
        self.entries.get(key).map(|(_, m)| *m)
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Drops `holder`'s running mark of `key` for epoch `epoch` (any
    /// epoch: `None`).
    pub(crate) fn not_running(&mut self, key: &JobKey, holder: NodeId, epoch: Option<u32>) {
        if let Some(holders) = self.running.get_mut(key) {
            holders.retain(|(h, e)| *h != holder || epoch.is_some_and(|x| x != *e));
            if holders.is_empty() {
                self.running.remove(key);
                self.running_meta.remove(key);
            }
            self.mirror_running(*key);
        }
    }

    /// Every value here, with its place in the tree.
    pub(crate) fn values(&self) -> impl Iterator<Item = (JobKey, &bytes::Bytes, ResultMeta)> + '_ {
        self.entries.iter().filter_map(|(k, (e, m))| match e {
            Entry::Value(v) => Some((*k, v, *m)),
            _ => None,
        })
    }

    /// Every key with an entry or a running mark here.
    pub(crate) fn keys(&self) -> impl Iterator<Item = JobKey> + '_ {
        self.entries.keys().chain(self.running.keys().filter(|k| !self.entries.contains_key(*k))).copied()
    }

    /// What this replica would tell a new home of `key`: its value (a
    /// pointer to `me` if larger than `threshold`) or pointer, and its
    /// running marks.
    pub(crate) fn held(&self, key: &JobKey, me: NodeId, threshold: usize) -> Vec<(JobKey, Entry, ResultMeta)> {
        let mut out = Vec::new();
        if let Some((e, m)) = self.entries.get(key) {
            let e = match e {
                Entry::Value(v) if v.len() > threshold => Entry::Pointer(me),
                _ => e.clone(),
            };
            out.push((*key, e, *m));
        }
        let meta = self.running_meta.get(key).copied().unwrap_or(ResultMeta::UNKNOWN);
        for &(holder, epoch) in self.running(key) {
            out.push((*key, Entry::Running { holder, epoch }, meta));
        }
        out
    }

    /// Values larger than `threshold`: the ones other replicas only know as
    /// pointers to this node.
    pub(crate) fn large_values(&self, threshold: usize) -> Vec<(JobKey, bytes::Bytes, ResultMeta)> {
        self.entries
            .iter()
            .filter_map(|(k, (e, m))| match e {
                Entry::Value(v) if v.len() > threshold => Some((*k, v.clone(), *m)),
                _ => None,
            })
            .collect()
    }

    /// What a newcomer needs: values up to `threshold`, and pointers (to
    /// `me` for the larger values held here). Running marks stay out: the
    /// newcomer's jobs are of the current epoch.
    pub(crate) fn sync_entries(&self, threshold: usize, me: NodeId) -> Vec<(JobKey, Entry, ResultMeta)> {
        self.entries
            .iter()
            .map(|(k, (e, m))| match e {
                Entry::Value(v) if v.len() > threshold => (*k, Entry::Pointer(me), *m),
                _ => (*k, e.clone(), *m),
            })
            .collect()
    }

    /// Drops `key`'s pointer if it points to `holder` (which has no value).
    pub(crate) fn forget_pointer(&mut self, key: &JobKey, holder: NodeId) {
        if self.get(key) == Some(&Entry::Pointer(holder)) {
            self.entries.remove(key);
            if let Some(s) = &self.shared {
                s.write().remove(key);
            }
            self.mirror_running(*key);
        }
    }

    /// Drops pointers to and running marks of `holder` (it is gone:
    /// fetching or waiting would fail).
    pub(crate) fn forget_holder(&mut self, holder: NodeId) {
        let gone: Vec<JobKey> =
            self.entries.iter().filter(|(_, (e, _))| *e == Entry::Pointer(holder)).map(|(k, _)| *k).collect();
        for k in &gone {
            self.entries.remove(k);
            if let Some(s) = &self.shared {
                s.write().remove(k);
            }
            self.mirror_running(*k);
        }
        let marked: Vec<JobKey> =
            self.running.iter().filter(|(_, h)| h.iter().any(|(n, _)| *n == holder)).map(|(k, _)| *k).collect();
        for k in marked {
            self.not_running(&k, holder, None);
        }
    }
}
