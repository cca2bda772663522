//! One node's replica of the global result table.
//!
//! Updated by asynchronous broadcast, with no consistency between replicas:
//! a miss only costs recomputation. An optional bound on the number of
//! entries evicts the oldest first.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, RwLock};

use super::msg::Entry;
use crate::{BuildKeyHasher, JobKey};

type Values = HashMap<JobKey, Arc<[u8]>, BuildKeyHasher>;

/// The values of a replica, readable from other threads. Real runs hand this
/// to worker threads, which look results up without going through the
/// protocol driver. Pointers are not in it: fetching one takes a message.
#[derive(Clone, Default)]
pub struct SharedValues(Arc<RwLock<Values>>);

impl SharedValues {
    pub fn get(&self, key: &JobKey) -> Option<Arc<[u8]>> {
        self.0.read().unwrap_or_else(|e| e.into_inner()).get(key).cloned()
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Values> {
        self.0.write().unwrap_or_else(|e| e.into_inner())
    }
}

pub(crate) struct ResultTable {
    entries: HashMap<JobKey, Entry, BuildKeyHasher>,
    order: VecDeque<JobKey>,
    capacity: Option<usize>,
    /// Mirror of the values, kept only once someone asked for it.
    shared: Option<SharedValues>,
}

impl ResultTable {
    pub(crate) fn new(capacity: Option<usize>) -> Self {
        ResultTable { entries: HashMap::default(), order: VecDeque::new(), capacity, shared: None }
    }

    /// Starts (or keeps) mirroring values into a [`SharedValues`].
    pub(crate) fn share(&mut self) -> SharedValues {
        if let Some(s) = &self.shared {
            return s.clone();
        }
        let shared = SharedValues::default();
        {
            let mut w = shared.write();
            for (k, e) in &self.entries {
                if let Entry::Value(v) = e {
                    w.insert(*k, v.clone());
                }
            }
        }
        self.shared = Some(shared.clone());
        shared
    }

    /// Inserts or replaces; a value never gets replaced by a pointer.
    pub(crate) fn put(&mut self, key: JobKey, entry: Entry) {
        match self.entries.get(&key) {
            Some(Entry::Value(_)) if matches!(entry, Entry::Pointer(_)) => return,
            Some(_) => {
                self.mirror(key, &entry);
                self.entries.insert(key, entry);
                return;
            }
            None => {}
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
        self.mirror(key, &entry);
        self.entries.insert(key, entry);
    }

    fn mirror(&self, key: JobKey, entry: &Entry) {
        if let (Some(s), Entry::Value(v)) = (&self.shared, entry) {
            s.write().insert(key, v.clone());
        }
    }

    pub(crate) fn get(&self, key: &JobKey) -> Option<&Entry> {
        self.entries.get(key)
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Values larger than `threshold`: the ones other replicas only know as
    /// pointers to this node.
    pub(crate) fn large_values(&self, threshold: usize) -> Vec<(JobKey, Arc<[u8]>)> {
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
