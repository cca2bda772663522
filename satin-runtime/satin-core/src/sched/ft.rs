//! Fault-tolerance bookkeeping kept from the start, switchable for measurement.
//!
//! With `ft` on, every steal is recorded in the victim's stolen-job list (which
//! job, which thief) until the victim has read the result. This is the record
//! that crash recovery needs to re-queue work stolen by a node that died. The
//! other half, keeping a finished child's result until its parent reads it, is
//! built into [`Slot`](super::Slot) and costs nothing extra.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use crossbeam_utils::CachePadded;

/// A job stolen from this worker: where its record lives and who took it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct StolenRecord {
    pub(crate) thief: usize,
}

pub(crate) struct FtLog {
    /// Per victim: job address → record. Entries leave when the victim reads
    /// the result (or drops the job).
    stolen: Vec<CachePadded<Mutex<HashMap<usize, StolenRecord>>>>,
    /// Steals recorded since the start.
    recorded: AtomicU64,
}

impl FtLog {
    pub(crate) fn new(workers: usize) -> FtLog {
        FtLog {
            stolen: (0..workers).map(|_| CachePadded::new(Mutex::new(HashMap::new()))).collect(),
            recorded: AtomicU64::new(0),
        }
    }

    pub(crate) fn record_steal(&self, victim: usize, job: usize, thief: usize) {
        self.stolen[victim].lock().unwrap_or_else(|e| e.into_inner()).insert(job, StolenRecord { thief });
        self.recorded.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn recorded(&self) -> u64 {
        self.recorded.load(Ordering::Relaxed)
    }

    pub(crate) fn result_read(&self, victim: usize, job: usize) {
        self.stolen[victim].lock().unwrap_or_else(|e| e.into_inner()).remove(&job);
    }

    /// Jobs currently stolen from `victim`.
    pub(crate) fn stolen_from(&self, victim: usize) -> Vec<(usize, StolenRecord)> {
        let map = self.stolen[victim].lock().unwrap_or_else(|e| e.into_inner());
        map.iter().map(|(k, v)| (*k, *v)).collect()
    }
}
