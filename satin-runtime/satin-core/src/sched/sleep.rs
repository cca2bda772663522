//! Idle workers park here; pushes and completions wake them.
//!
//! The push fast path reads one counter (`sleepers`) with a relaxed load and
//! touches the mutex only when somebody sleeps. That leaves a window in which a
//! worker decides to sleep just as a job is pushed and misses the wake-up; the
//! park therefore has a short timeout, which bounds the cost of the race to one
//! timeout instead of adding a fence to every spawn.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

const PARK_TIMEOUT: Duration = Duration::from_millis(1);

#[derive(Default)]
pub(crate) struct Sleep {
    sleepers: AtomicUsize,
    lock: Mutex<()>,
    wake: Condvar,
    /// Nanoseconds workers spent parked, all together: what is not parked
    /// of their lifetime is busy (a rate of work per busy second tells a
    /// slow node from one that waits, see `proto/node/health.rs`).
    parked_ns: AtomicU64,
}

impl Sleep {
    /// Parks the calling thread until woken or the park timeout passes.
    pub(crate) fn park(&self, still_idle: impl FnOnce() -> bool) {
        let guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        if still_idle() {
            let since = Instant::now();
            let _ = self.wake.wait_timeout(guard, PARK_TIMEOUT);
            self.parked_ns.fetch_add(since.elapsed().as_nanos() as u64, Ordering::Relaxed);
        }
        self.sleepers.fetch_sub(1, Ordering::SeqCst);
    }

    /// Nanoseconds spent parked so far, by all workers together.
    pub(crate) fn parked_ns(&self) -> u64 {
        self.parked_ns.load(Ordering::Relaxed)
    }

    /// Workers parked right now: they found no work anywhere in the pool.
    pub(crate) fn sleepers(&self) -> usize {
        self.sleepers.load(Ordering::Relaxed)
    }

    /// Called after new work appears: wakes one sleeper, if any.
    #[inline]
    pub(crate) fn new_work(&self) {
        if self.sleepers.load(Ordering::Relaxed) > 0 {
            let _guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
            self.wake.notify_one();
        }
    }

    /// Wakes every sleeper (a stolen job finished, or the pool shuts down).
    pub(crate) fn wake_all(&self) {
        if self.sleepers.load(Ordering::Relaxed) > 0 {
            let _guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
            self.wake.notify_all();
        }
    }
}
