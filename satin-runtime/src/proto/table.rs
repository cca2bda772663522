//! One node's replica of the global result table.
//!
//! Updated by asynchronous broadcast, with no consistency between replicas:
//! a miss only costs recomputation. An optional bound on the number of
//! entries evicts the oldest first.

use std::collections::{HashMap, VecDeque};

use super::msg::Entry;
use crate::{BuildKeyHasher, JobKey};

pub(crate) struct ResultTable {
    entries: HashMap<JobKey, Entry, BuildKeyHasher>,
    order: VecDeque<JobKey>,
    capacity: Option<usize>,
}

impl ResultTable {
    pub(crate) fn new(capacity: Option<usize>) -> Self {
        ResultTable { entries: HashMap::default(), order: VecDeque::new(), capacity }
    }

    /// Inserts or replaces; a value never gets replaced by a pointer.
    pub(crate) fn put(&mut self, key: JobKey, entry: Entry) {
        match self.entries.get(&key) {
            Some(Entry::Value(_)) if matches!(entry, Entry::Pointer(_)) => return,
            Some(_) => {
                self.entries.insert(key, entry);
                return;
            }
            None => {}
        }
        if let Some(cap) = self.capacity {
            while self.entries.len() >= cap.max(1) {
                let Some(old) = self.order.pop_front() else { break };
                self.entries.remove(&old);
            }
            self.order.push_back(key);
        }
        self.entries.insert(key, entry);
    }

    pub(crate) fn get(&self, key: &JobKey) -> Option<&Entry> {
        self.entries.get(key)
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Values larger than `threshold`: the ones other replicas only know as
    /// pointers to this node.
    pub(crate) fn large_values(&self, threshold: usize) -> Vec<(JobKey, std::sync::Arc<[u8]>)> {
        self.entries
            .iter()
            .filter_map(|(k, e)| match e {
                Entry::Value(v) if v.len() > threshold => Some((*k, v.clone())),
                _ => None,
            })
            .collect()
    }

    /// Drops pointers to `holder` (it is gone: fetching would fail).
    pub(crate) fn forget_holder(&mut self, holder: u64) {
        self.entries.retain(|_, e| *e != Entry::Pointer(holder));
    }
}
