//! How many bytes of calls and results this process encoded, hashed and
//! decoded: what distribution costs in work, beside what it sends. A
//! node is a process, so these are a node's figures (`--stats-json`).

use std::sync::atomic::{AtomicU64, Ordering};

static ENCODED: AtomicU64 = AtomicU64::new(0);
static HASHED: AtomicU64 = AtomicU64::new(0);
static DECODED: AtomicU64 = AtomicU64::new(0);

/// Bytes encoded, hashed and decoded by this process so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ValueCounts {
    /// Written in postcard's format (parameters of calls that leave
    /// their worker's deque for another node, results, the root).
    pub encoded: u64,
    /// Fed to blake3 for keys (a call's parameters, a borrowed value's
    /// digest).
    pub hashed: u64,
    /// Read back from postcard's format.
    pub decoded: u64,
}

/// The counts so far.
pub fn counts() -> ValueCounts {
    ValueCounts {
        encoded: ENCODED.load(Ordering::Relaxed),
        hashed: HASHED.load(Ordering::Relaxed),
        decoded: DECODED.load(Ordering::Relaxed),
    }
}

pub(crate) fn encoded(n: usize) {
    ENCODED.fetch_add(n as u64, Ordering::Relaxed);
}

/// `n` bytes went into a blake3 hasher for a key.
pub fn hashed(n: usize) {
    HASHED.fetch_add(n as u64, Ordering::Relaxed);
}

pub(crate) fn decoded(n: usize) {
    DECODED.fetch_add(n as u64, Ordering::Relaxed);
}
