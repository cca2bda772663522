//! How many nodes of a search tree the branch-and-bound examples expand,
//! for comparing a shared bound with a per-branch one and with the
//! sequential search: one counter per process, read around a run. Each
//! thread adds its count in batches (a shared counter bumped by every node
//! of two workers would cost more than the node), so a reading may miss
//! the last few thousand of each worker until [`flush`].

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

static EXPANDED: AtomicU64 = AtomicU64::new(0);
const BATCH: u64 = 4096;

thread_local! {
    static UNCOUNTED: Cell<u64> = const { Cell::new(0) };
}

/// Counts one expanded node.
pub fn one() {
    UNCOUNTED.with(|c| {
        let n = c.get() + 1;
        if n == BATCH {
            EXPANDED.fetch_add(n, Ordering::Relaxed);
            c.set(0);
        } else {
            c.set(n);
        }
    });
}

/// Counts one expanded node at once, for searches whose nodes cost far
/// more than a shared counter's update (the Held–Karp TSP's): no reading
/// misses them.
pub fn one_at_once() {
    EXPANDED.fetch_add(1, Ordering::Relaxed);
}

/// Adds the calling thread's uncounted nodes to the total.
pub fn flush() {
    UNCOUNTED.with(|c| EXPANDED.fetch_add(c.replace(0), Ordering::Relaxed));
}

/// The nodes counted so far in this process (after [`flush`] on the
/// calling thread; other threads' last batches may be missing: at most
/// [`slack`] for `threads` threads).
pub fn total() -> u64 {
    flush();
    EXPANDED.load(Ordering::Relaxed)
}

/// The most a reading can miss with `threads` threads counting.
pub fn slack(threads: u64) -> u64 {
    threads * BATCH
}
