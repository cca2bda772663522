//! The task stream's record (the dashboard draws it): which worker ran
//! which job, when, for how long, and of what kind. Only jobs that moved
//! are recorded — taken from another worker or another node, run again
//! after a crash, the root — not the calls a worker runs from its own
//! deque, which are far too many to draw and cost nothing to explain.
//!
//! Off until someone asks ([`crate::Runtime::record_jobs`]): then a
//! recorded job costs two clock reads and two pushes onto its worker's
//! own lists (under a lock no one else takes but the reader, once a
//! second). The jobs running now are known too: a task stream draws them
//! as they grow, and a node that dies leaves them drawn as it last said.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;
use satin_proto::JobKind;

/// Spans a worker keeps between two readings; past it, the shorter half
/// goes (the long ones are what the stream shows).
const KEPT_PER_WORKER: usize = 4096;

/// One job that ran on this pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobSpan {
    /// The worker thread that ran it.
    pub worker: usize,
    /// When it started.
    pub start: Instant,
    /// How long it ran.
    pub took: Duration,
    /// What kind of job it was.
    pub kind: JobKind,
}

pub(crate) struct JobSpans {
    on: AtomicBool,
    per_worker: Vec<CachePadded<Mutex<WorkerSpans>>>,
}

/// One worker's record: jobs it ended, and the ones it runs now (nested:
/// a worker that waits for a stolen job's children runs others above it).
#[derive(Default)]
struct WorkerSpans {
    ended: Vec<JobSpan>,
    running: Vec<(Instant, JobKind)>,
}

impl JobSpans {
    pub(crate) fn new(workers: usize) -> JobSpans {
        JobSpans { on: AtomicBool::new(false), per_worker: (0..workers).map(|_| Default::default()).collect() }
    }

    /// Whether jobs are recorded: read once per job that moved.
    #[inline]
    pub(crate) fn on(&self) -> bool {
        self.on.load(Ordering::Relaxed)
    }

    pub(crate) fn set_on(&self, on: bool) {
        self.on.store(on, Ordering::Relaxed);
    }

    fn worker(&self, worker: usize) -> std::sync::MutexGuard<'_, WorkerSpans> {
        self.per_worker[worker].lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Worker `worker` starts a job of kind `kind` (as far as known
    /// before it ends); returns when, for [`JobSpans::ended`].
    pub(crate) fn started(&self, worker: usize, kind: JobKind) -> Instant {
        let start = Instant::now();
        self.worker(worker).running.push((start, kind));
        start
    }

    /// The job worker `worker` started at `start` ended, as `kind`.
    pub(crate) fn ended(&self, worker: usize, start: Instant, kind: JobKind) {
        let span = JobSpan { worker, start, took: start.elapsed(), kind };
        let mut spans = self.worker(worker);
        if let Some(i) = spans.running.iter().rposition(|r| r.0 == start) {
            spans.running.remove(i);
        }
        // (Cut before the push: the job that just ended is kept.)
        let bounds = (KEPT_PER_WORKER - 1, KEPT_PER_WORKER / 2);
        satin_proto::keep_longest(&mut spans.ended, bounds, |s| s.took, |s| s.start);
        spans.ended.push(span);
    }

    /// Every span that ended since the last call, oldest first.
    pub(crate) fn take(&self) -> Vec<JobSpan> {
        let mut all = Vec::new();
        for w in 0..self.per_worker.len() {
            all.append(&mut self.worker(w).ended);
        }
        all.sort_unstable_by_key(|s| s.start);
        all
    }

    /// The jobs running now, as spans so far.
    pub(crate) fn running(&self) -> Vec<JobSpan> {
        let mut all = Vec::new();
        for w in 0..self.per_worker.len() {
            let spans = self.worker(w);
            all.extend(spans.running.iter().map(|&(start, kind)| JobSpan {
                worker: w,
                start,
                took: start.elapsed(),
                kind,
            }));
        }
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_list_keeps_the_longest_half_in_order_of_start() {
        let spans = JobSpans::new(1);
        let t0 = Instant::now();
        for i in 0..KEPT_PER_WORKER {
            let start = t0 + Duration::from_micros(i as u64);
            spans.per_worker[0].lock().unwrap().ended.push(JobSpan {
                worker: 0,
                start,
                took: Duration::from_micros((i % 2) as u64 * 100),
                kind: JobKind::Stolen,
            });
        }
        let start = spans.started(0, JobKind::Redone);
        assert_eq!(spans.running().len(), 1, "running until it ends");
        spans.ended(0, start, JobKind::Redone);
        assert!(spans.running().is_empty());
        let taken = spans.take();
        assert_eq!(taken.len(), KEPT_PER_WORKER / 2 + 1);
        let (redone, kept): (Vec<&JobSpan>, Vec<&JobSpan>) = taken.iter().partition(|s| s.kind == JobKind::Redone);
        assert_eq!(redone.len(), 1, "the job that ended after the cut is kept");
        assert!(kept.iter().all(|s| s.took == Duration::from_micros(100)), "the longer half is kept");
        assert!(taken.windows(2).all(|w| w[0].start <= w[1].start));
        assert!(spans.take().is_empty(), "taken once");
    }
}
