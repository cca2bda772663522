//! How far a run is, and how long it has left: an estimate for a tree
//! whose size nobody knows in advance (see [`model`] for how, and where it
//! is poor).
//!
//! A runtime built with [`crate::Builder::track_progress`] tracks the top
//! levels of each run's call tree — the levels whose calls take long
//! enough to be worth it (a mean of at least [`TRACK_FLOOR`]), at most
//! [`model::MAX_FRAMES`] calls — through the slow path distributed runs
//! use for the result table; the first level below them is only counted,
//! and further down calls run at full speed. A node
//! of a distributed run also counts each job a remote thief took as a
//! call that finishes when its result comes back.

pub mod model;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use model::{FrameId, TreeModel};

/// Calls whose depth averages less than this are not tracked (once 16 of
/// them ran): below them the tree runs at full speed.
pub const TRACK_FLOOR: Duration = Duration::from_micros(200);

/// Frame ids of jobs taken by remote thieves: apart from the runtime's
/// own (which count up from a per-process salt below this bit).
const REMOTE_FRAME: u64 = 1 << 63;

/// One runtime's progress tracker.
#[derive(Debug)]
pub struct Progress {
    state: Mutex<State>,
    /// The model has no room for more calls (read without the lock).
    full: AtomicBool,
    next_frame: AtomicU64,
    /// Per depth: the total and the number of durations of tracked calls.
    durations: [(AtomicU64, AtomicU64); 64],
}

#[derive(Debug, Default)]
struct State {
    model: TreeModel,
    started: Option<Instant>,
    /// The last run's end, once it ended.
    ended: Option<Instant>,
}

/// What [`Progress::estimate`] says.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// The share of the run done, from 0 to 1.
    pub fraction: f64,
    /// Time since the run started.
    pub elapsed: Duration,
    /// Time left at the rate so far; `None` until there is a rate to go by
    /// (1 % done).
    pub eta: Option<Duration>,
    /// Calls tracked (the top of the tree the estimate sees).
    pub tracked: usize,
    /// Whether the run is over.
    pub done: bool,
}

impl Default for Progress {
    fn default() -> Self {
        Progress {
            state: Mutex::default(),
            full: AtomicBool::new(false),
            next_frame: AtomicU64::new(1),
            durations: std::array::from_fn(|_| (AtomicU64::new(0), AtomicU64::new(0))),
        }
    }
}

impl Progress {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A new run starts: the tree and the clock start afresh.
    pub fn run_started(&self) {
        let mut s = self.state();
        s.model = TreeModel::default();
        s.started = Some(Instant::now());
        s.ended = None;
        self.full.store(false, Ordering::Relaxed);
        for (sum, count) in &self.durations {
            sum.store(0, Ordering::Relaxed);
            count.store(0, Ordering::Relaxed);
        }
    }

    /// The run ended: the estimate is 1 from now on.
    pub fn run_ended(&self) {
        self.state().ended.get_or_insert_with(Instant::now);
    }

    /// A fresh id for a tracked call.
    pub(crate) fn next_frame(&self) -> FrameId {
        self.next_frame.fetch_add(1, Ordering::Relaxed) & !REMOTE_FRAME
    }

    /// Whether calls at `depth` are worth tracking.
    pub(crate) fn tracks(&self, depth: u32) -> bool {
        let Some((sum, count)) = self.durations.get(depth as usize) else { return false };
        let count = count.load(Ordering::Relaxed);
        let long_enough = count < 16 || sum.load(Ordering::Relaxed) / count >= TRACK_FLOOR.as_nanos() as u64;
        long_enough && !self.full.load(Ordering::Relaxed)
    }

    /// A tracked call at `depth` ran for `ran`.
    pub(crate) fn record_duration(&self, depth: u32, ran: Duration) {
        if let Some((sum, count)) = self.durations.get(depth as usize) {
            sum.fetch_add(ran.as_nanos() as u64, Ordering::Relaxed);
            count.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Call `id` started at `depth` under `parent`.
    pub(crate) fn started(&self, id: FrameId, parent: FrameId, depth: u32) {
        let mut s = self.state();
        s.model.started(id, parent, depth);
        self.full.store(!s.model.has_room(), Ordering::Relaxed);
    }

    /// A call under `parent` at a depth too short to track started, or
    /// (`done`) finished.
    pub(crate) fn untracked(&self, parent: FrameId, done: bool) {
        self.state().model.untracked(parent, done);
    }

    /// Call `id` finished.
    pub(crate) fn finished(&self, id: FrameId) {
        self.state().model.finished(id);
    }

    /// Call `id` will not finish here.
    pub(crate) fn abandoned(&self, id: FrameId) {
        let mut s = self.state();
        s.model.abandoned(id);
        self.full.store(!s.model.has_room(), Ordering::Relaxed);
    }

    /// The job a remote thief took by steal `stamp`, spawned at `depth`
    /// under `parent`, is a call that finishes when its result is back.
    pub(crate) fn stolen(&self, stamp: u64, parent: FrameId, depth: u32) {
        self.started(REMOTE_FRAME | stamp, parent, depth);
    }

    /// The result of steal `stamp` came back (`true`), or the job came
    /// back to be run again (`false`).
    pub(crate) fn stolen_ended(&self, stamp: u64, done: bool) {
        if done {
            self.finished(REMOTE_FRAME | stamp);
        } else {
            self.abandoned(REMOTE_FRAME | stamp);
        }
    }

    /// How far the current (or last) run is.
    pub fn estimate(&self) -> Estimate {
        let s = self.state();
        let now = s.ended.unwrap_or_else(Instant::now);
        let elapsed = s.started.map_or(Duration::ZERO, |t| now.saturating_duration_since(t));
        let done = s.ended.is_some();
        let fraction = if done { 1.0 } else { s.model.fraction() };
        let eta = if done {
            Some(Duration::ZERO)
        } else {
            (0.01..1.0)
                .contains(&fraction)
                .then(|| Duration::from_secs_f64(elapsed.as_secs_f64() * (1.0 - fraction) / fraction))
        };
        Estimate { fraction, elapsed, eta, tracked: s.model.len(), done }
    }
}

/// Forgets a tracked call that unwinds (an abort, a panic): it will not
/// finish, and its job may run again elsewhere.
pub(crate) struct Unfinished<'p> {
    pub(crate) progress: &'p Progress,
    pub(crate) frame: FrameId,
}

impl Unfinished<'_> {
    /// The call finished.
    pub(crate) fn finish(self) {
        self.progress.finished(self.frame);
        std::mem::forget(self);
    }
}

impl Drop for Unfinished<'_> {
    fn drop(&mut self) {
        self.progress.abandoned(self.frame);
    }
}
