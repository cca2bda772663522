//! The pool: worker threads, their deques, stealing, and waiting.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use crossbeam_deque::{Injector, Steal, Stealer, Worker};
use crossbeam_utils::{Backoff, CachePadded};

use super::ft::FtLog;
use super::job_ref::{JobRef, Taken};
use super::latent::LatentLoops;
use super::remote::Remote;
use super::sleep::Sleep;

/// Counters one worker writes and anyone may read. Single writer, so updates
/// are a relaxed load and store, not a locked read-modify-write.
#[derive(Default)]
pub(crate) struct WorkerCounters {
    pub(crate) spawns: AtomicU64,
    pub(crate) steals: AtomicU64,
    pub(crate) promotions: AtomicU64,
    pub(crate) released: AtomicU64,
}

impl WorkerCounters {
    #[inline]
    pub(crate) fn bump(counter: &AtomicU64) {
        Self::add(counter, 1);
    }

    #[inline]
    pub(crate) fn add(counter: &AtomicU64, n: u64) {
        counter.store(counter.load(Ordering::Relaxed) + n, Ordering::Relaxed);
    }
}

pub(crate) struct Registry {
    stealers: Vec<Stealer<JobRef>>,
    pub(crate) injector: Injector<JobRef>,
    pub(crate) sleep: Sleep,
    abort_epoch: CachePadded<AtomicU64>,
    /// A worker (or another node) found no work anywhere: the next call a
    /// worker makes in a lazily run subtree is run in parallel instead
    /// (see `Ctx::promote`). Raised with a bump of `abort_epoch`, which
    /// lazy code polls anyway.
    wanted: CachePadded<AtomicBool>,
    /// Per worker: something happened that lazy code must look at (an
    /// abort, a request for work). Polled with one load (see `Ctx::promote`).
    poll_flags: Vec<CachePadded<AtomicBool>>,
    terminate: AtomicBool,
    pub(crate) ft: Option<FtLog>,
    pub(crate) counters: Vec<CachePadded<WorkerCounters>>,
    /// Per worker: its deque may hold a local call (`Job::LOCAL`), so a
    /// remote thief passes it by (see `take_for_remote`). Set by a local
    /// spawn, cleared when the worker finds its deque empty.
    pub(crate) local_queued: Vec<CachePadded<AtomicBool>>,
    /// A spawn runs inline once its worker has this many jobs queued.
    pub(crate) spawn_limit: usize,
    /// Set once a distributed executor drives this pool.
    pub(crate) remote: OnceLock<Remote>,
    /// One worker and nothing tracked: calls entered from a run's closure
    /// run as the plain function while no executor drives the pool (see
    /// `Builder::plain_when_alone`).
    pub(crate) plain_when_alone: AtomicBool,
    pub(crate) table_hits: AtomicU64,
    pub(crate) table_lookups: AtomicU64,
    /// Kernel thread ids of the workers, for chaos that pauses them.
    pub(crate) thread_ids: std::sync::Mutex<Vec<libc::pid_t>>,
    /// When the pool started (its workers' lifetime, for busy time).
    pub(crate) born: std::time::Instant,
    /// The progress of each run, if tracked (`Builder::track_progress`).
    pub(crate) progress: Option<Arc<crate::progress::Progress>>,
    /// The jobs that moved, when recorded (`Runtime::record_jobs`).
    pub(crate) spans: super::bars::JobSpans,
}

impl Registry {
    pub(crate) fn new(
        workers: usize,
        ft: bool,
        spawn_limit: usize,
        progress: Option<Arc<crate::progress::Progress>>,
    ) -> (Arc<Registry>, Vec<Worker<JobRef>>) {
        let deques: Vec<Worker<JobRef>> = (0..workers).map(|_| Worker::new_lifo()).collect();
        let registry = Registry {
            stealers: deques.iter().map(Worker::stealer).collect(),
            injector: Injector::new(),
            sleep: Sleep::default(),
            abort_epoch: CachePadded::new(AtomicU64::new(0)),
            wanted: CachePadded::new(AtomicBool::new(false)),
            poll_flags: (0..workers).map(|_| CachePadded::new(AtomicBool::new(false))).collect(),
            terminate: AtomicBool::new(false),
            ft: ft.then(|| FtLog::new(workers)),
            counters: (0..workers).map(|_| CachePadded::new(WorkerCounters::default())).collect(),
            local_queued: (0..workers).map(|_| CachePadded::new(AtomicBool::new(false))).collect(),
            spawn_limit,
            remote: OnceLock::new(),
            plain_when_alone: AtomicBool::new(false),
            table_hits: AtomicU64::new(0),
            table_lookups: AtomicU64::new(0),
            thread_ids: std::sync::Mutex::new(Vec::new()),
            born: std::time::Instant::now(),
            progress,
            spans: super::bars::JobSpans::new(workers),
        };
        (Arc::new(registry), deques)
    }

    pub(crate) fn stealers(&self) -> &[Stealer<JobRef>] {
        &self.stealers
    }

    /// Nanoseconds the workers were not parked since the pool started,
    /// all together: working, or paused (a slow or hung node).
    pub(crate) fn busy_ns(&self) -> u64 {
        let lifetime = self.born.elapsed().as_nanos() as u64 * self.stealers.len() as u64;
        lifetime.saturating_sub(self.sleep.parked_ns())
    }

    pub(crate) fn num_workers(&self) -> usize {
        self.stealers.len()
    }

    #[inline]
    pub(crate) fn abort_epoch(&self) -> u64 {
        self.abort_epoch.load(Ordering::Acquire)
    }

    /// Announces that some abort flag was set, so running jobs re-check theirs.
    pub(crate) fn bump_abort_epoch(&self) {
        self.abort_epoch.fetch_add(1, Ordering::AcqRel);
        // SeqCst, as the poller's clear-then-read (`Ctx::noticed`): a
        // request is either seen there or raises the flag again after.
        for flag in &self.poll_flags {
            flag.store(true, Ordering::SeqCst);
        }
    }

    /// The flag worker `index`'s lazy code polls.
    pub(crate) fn poll_flag(&self, index: usize) -> &AtomicBool {
        &self.poll_flags[index]
    }

    /// A worker parks with nothing to do: in a distributed run, the node's
    /// driver hears of it (its protocol core decides whether to steal).
    fn tell_hunger(&self) {
        if let Some(remote) = self.remote.get() {
            remote.hungry();
        }
    }

    /// Someone found no work: ask the lazily running workers for some.
    pub(crate) fn want_work(&self) {
        if !self.wanted.load(Ordering::Relaxed) && !self.wanted.swap(true, Ordering::SeqCst) {
            self.bump_abort_epoch();
        }
    }

    /// Whether a request for work is open. It stays open until a job is
    /// pushed (a call promoted at a leaf spawns nothing).
    pub(crate) fn work_wanted(&self) -> bool {
        self.wanted.load(Ordering::SeqCst)
    }

    /// A job was pushed: the request for work is answered.
    #[inline]
    pub(crate) fn work_offered(&self) {
        if self.wanted.load(Ordering::Relaxed) {
            self.wanted.store(false, Ordering::Relaxed);
        }
    }

    /// Whether an annotated call entered here runs as the plain function:
    /// nobody — no other worker, no other node — could take any of its
    /// calls, so the scheduler's bookkeeping would buy nothing.
    #[inline]
    pub(crate) fn runs_plainly(&self) -> bool {
        self.plain_when_alone.load(Ordering::Relaxed) && self.remote.get().is_none()
    }

    /// Whether calls are tracked (depth, eager publication, progress; see
    /// `sched::track`): in distributed runs that publish results, and in
    /// runtimes that track progress.
    pub(crate) fn tracking(&self) -> bool {
        self.progress.is_some() || self.remote.get().is_some_and(|r| r.tracking())
    }

    pub(crate) fn terminate(&self) {
        self.terminate.store(true, Ordering::Release);
        self.sleep.wake_all();
    }

    fn terminating(&self) -> bool {
        self.terminate.load(Ordering::Acquire)
    }
}

/// One worker thread's state. Lives on that thread's stack for its lifetime.
pub(crate) struct WorkerThread {
    index: usize,
    deque: Worker<JobRef>,
    registry: Arc<Registry>,
    /// Copy of `registry.spawn_limit`, one pointer hop closer.
    spawn_limit: usize,
    rng: Cell<u64>,
    /// Newest root epoch this worker may run nested now: the epoch of the
    /// innermost frame it waits in (no limit in the main loop).
    epoch_limit: Cell<u32>,
    /// Loops suspended in an inline call, whose later iterations a request
    /// for work can release (see `sched::latent`).
    latent: LatentLoops,
}

impl WorkerThread {
    pub(crate) fn new(index: usize, deque: Worker<JobRef>, registry: Arc<Registry>) -> WorkerThread {
        let seed = 0x9E37_79B9_7F4A_7C15u64.wrapping_mul(index as u64 + 1) | 1;
        WorkerThread {
            index,
            deque,
            spawn_limit: registry.spawn_limit,
            registry,
            rng: Cell::new(seed),
            epoch_limit: Cell::new(u32::MAX),
            latent: LatentLoops::default(),
        }
    }

    #[inline]
    pub(crate) fn index(&self) -> usize {
        self.index
    }

    #[inline]
    pub(crate) fn latent(&self) -> &LatentLoops {
        &self.latent
    }

    #[inline]
    pub(crate) fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The pool, for whoever must reach it later (see `job/typed_root.rs`).
    pub(crate) fn registry_arc(&self) -> &Arc<Registry> {
        &self.registry
    }

    #[inline]
    pub(crate) fn counters(&self) -> &WorkerCounters {
        &self.registry.counters[self.index]
    }

    /// Pushes a job onto this worker's deque, where thieves can take it.
    #[inline]
    pub(crate) fn push(&self, job: JobRef) {
        if self.registry.wanted.load(Ordering::Relaxed) {
            return self.push_answering(job);
        }
        self.deque.push(job);
        self.registry.sleep.new_work();
    }

    /// A push while somebody asks for work: the oldest loops' next
    /// iterations go first, beneath this (likely smaller) call, and the
    /// request is answered.
    #[cold]
    #[inline(never)]
    fn push_answering(&self, job: JobRef) {
        self.release_latent();
        self.deque.push(job);
        self.registry.work_offered();
        self.registry.sleep.new_work();
    }

    /// Spawns later iterations of this worker's oldest latent loops (see
    /// `sched::latent`); returns how many.
    #[cold]
    #[inline(never)]
    pub(crate) fn release_latent(&self) -> usize {
        let released = self.latent.release();
        WorkerCounters::add(&self.counters().released, released as u64);
        released
    }

    /// Whether this worker already offers enough work to thieves that a new
    /// spawn had better run inline: the lazy-spawning cut-off.
    #[inline]
    pub(crate) fn has_enough_queued(&self) -> bool {
        self.deque.len() >= self.spawn_limit
    }

    /// Whether a spawned job that came back unstolen runs lazily: when
    /// older jobs of this worker still wait for thieves (and spawning is
    /// lazy at all: an unlimited `spawn_limit` pushes every spawn).
    #[inline]
    pub(crate) fn keeps_returned_jobs_lazy(&self) -> bool {
        self.spawn_limit != usize::MAX && !self.deque.is_empty()
    }

    #[inline]
    pub(crate) fn pop(&self) -> Option<JobRef> {
        self.deque.pop()
    }

    fn next_random(&self) -> u64 {
        // xorshift64*: enough to pick a victim.
        let mut x = self.rng.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng.set(x);
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Takes a job from another worker (random victim first) or the injector.
    fn steal(&self) -> Option<(JobRef, Taken)> {
        let n = self.registry.num_workers();
        loop {
            let mut retry = false;
            if n > 1 {
                let start = (self.next_random() % n as u64) as usize;
                for i in 0..n {
                    let victim = (start + i) % n;
                    if victim == self.index {
                        continue;
                    }
                    match self.registry.stealers[victim].steal() {
                        Steal::Success(job) => return Some((job, Taken::Stolen { victim })),
                        Steal::Retry => retry = true,
                        Steal::Empty => {}
                    }
                }
            }
            match self.registry.injector.steal() {
                Steal::Success(job) => return Some((job, Taken::Injected)),
                Steal::Retry => retry = true,
                Steal::Empty => {}
            }
            if !retry {
                self.registry.want_work();
                return None;
            }
        }
    }

    fn find_work(&self) -> Option<(JobRef, Taken)> {
        self.pop().map(|j| (j, Taken::Popped)).or_else(|| {
            self.set_local_queued(false);
            self.steal()
        })
    }

    /// Notes whether this worker's deque may hold a local call: a remote
    /// thief takes the oldest job of a deque, and one that turns out local
    /// goes to the injector, where its own worker — waiting deep in the
    /// call's tree — could take it and run an old, large job nested on its
    /// stack, again at every request.
    #[inline]
    pub(crate) fn set_local_queued(&self, queued: bool) {
        let flag = &self.registry.local_queued[self.index];
        if flag.load(Ordering::Relaxed) != queued {
            flag.store(queued, Ordering::Relaxed);
        }
    }

    #[inline]
    pub(crate) fn epoch_limit(&self) -> u32 {
        self.epoch_limit.get()
    }

    /// Executes other work until `done()` holds: the steal-while-sync loop,
    /// for a frame of root epoch `epoch`. Work of a newer epoch is not run
    /// nested above it: a newer job may wait for an older one to finish
    /// (adoption), and must never sit above it on the same stack.
    pub(crate) fn wait_until_in(&self, epoch: u32, done: impl Fn() -> bool) {
        let outer = self.epoch_limit.replace(self.epoch_limit.get().min(epoch));
        let backoff = Backoff::new();
        while !done() {
            let ran = match self.find_work() {
                // SAFETY: the job was just taken out of a deque, so this is its
                // one execution.
                Some((job, taken)) => unsafe { job.execute(self, taken) },
                None => false,
            };
            if ran {
                backoff.reset();
            } else if backoff.is_completed() {
                self.registry.tell_hunger();
                self.registry.sleep.park(|| !done());
            } else {
                backoff.snooze();
            }
        }
        self.epoch_limit.set(outer);
    }

    /// The worker thread's main loop.
    pub(crate) fn main_loop(&self) {
        // SAFETY: gettid has no preconditions.
        let tid = unsafe { libc::gettid() };
        self.registry.thread_ids.lock().unwrap_or_else(|e| e.into_inner()).push(tid);
        let backoff = Backoff::new();
        loop {
            if let Some((job, taken)) = self.find_work() {
                // SAFETY: taken out of a deque: executed exactly once, here.
                unsafe { job.execute(self, taken) };
                backoff.reset();
            } else if self.registry.terminating() {
                return;
            } else if backoff.is_completed() {
                let registry = &self.registry;
                registry.tell_hunger();
                registry.sleep.park(|| !registry.terminating() && registry.injector.is_empty());
            } else {
                backoff.snooze();
            }
        }
    }
}
