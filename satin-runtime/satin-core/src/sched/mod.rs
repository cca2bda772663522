//! The local scheduler: worker threads, deques, spawn/sync, abort.
//! Design notes: `README.md` beside this file.

mod affinity;
mod bars;
mod ctx;
mod entry;
mod failure;
mod ft;
mod job_ref;
mod keep;
mod latent;
mod priority;
mod race;
mod registry;
mod remote;
mod root;
mod sleep;
mod slot;
mod tls;
mod track;

pub use bars::JobSpan;
pub use ctx::Ctx;
pub(crate) use ctx::Place;
pub(crate) use entry::EntrySpec;
pub use entry::{EntryOutcome, Ran};
pub use failure::{failed, Failure};
pub use keep::Keep;
pub use latent::LazyIter;
pub use race::{decides_false, decides_some, decides_true, Entrant, Race};
pub use remote::RemoteEvent;
pub use slot::{Slot, SpawnList};
pub(crate) use tls::current_ctx;
pub use tls::sequential;
pub(crate) use track::run_slow;

use std::fmt;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;

use crate::shared::Replicas;
pub(crate) use registry::Registry;
use registry::WorkerThread;
use root::RootJob;

/// Configures a [`Runtime`].
#[derive(Debug, Clone)]
pub struct Builder {
    workers: Option<usize>,
    fault_tolerance: bool,
    stack_size: Option<usize>,
    spawn_limit: usize,
    pin_workers: bool,
    worker_niceness: Option<i32>,
    shared: Option<Arc<Replicas>>,
    track_progress: bool,
    plain_when_alone: bool,
}

/// Default of [`Builder::spawn_limit`].
pub const DEFAULT_SPAWN_LIMIT: usize = 4;

/// Why a [`Runtime`] could not be built.
#[derive(Debug)]
pub enum BuildError {
    /// `workers(0)` was requested.
    ZeroWorkers,
    /// The operating system refused to start a worker thread.
    Spawn(std::io::Error),
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::ZeroWorkers => write!(f, "a runtime needs at least one worker thread"),
            BuildError::Spawn(e) => write!(f, "could not start a worker thread: {e}"),
        }
    }
}

impl std::error::Error for BuildError {}

impl Default for Builder {
    fn default() -> Self {
        Builder {
            workers: None,
            fault_tolerance: true,
            stack_size: None,
            spawn_limit: DEFAULT_SPAWN_LIMIT,
            pin_workers: false,
            worker_niceness: None,
            shared: None,
            track_progress: false,
            plain_when_alone: true,
        }
    }
}

impl Builder {
    /// Number of worker threads; default: all cores.
    pub fn workers(mut self, n: usize) -> Self {
        self.workers = Some(n);
        self
    }

    /// Keep the fault-tolerance records (stolen-job lists); default on.
    /// Off only to measure what they cost.
    pub fn fault_tolerance(mut self, on: bool) -> Self {
        self.fault_tolerance = on;
        self
    }

    /// With one worker, no progress to track and no other node (nothing
    /// can take a call from it), a run's annotated calls run as the plain
    /// function does — their sequential copies, at its speed, with its
    /// answer. `false` keeps the scheduler's lazy path on one worker: to
    /// measure what that path costs per call, or to test it. Default on.
    pub fn plain_when_alone(mut self, on: bool) -> Self {
        self.plain_when_alone = on;
        self
    }

    /// Stack size of each worker thread in bytes; default: the platform's.
    pub fn stack_size(mut self, bytes: usize) -> Self {
        self.stack_size = Some(bytes);
        self
    }

    /// Lazy spawning: a spawn runs inline, like a plain call, when its worker
    /// already has `limit` jobs queued for thieves. Thieves take the oldest
    /// (largest) jobs, so a short queue keeps every core busy while most calls
    /// cost no more than a function call. `usize::MAX` pushes every spawn
    /// (what `rayon::join` does); default [`DEFAULT_SPAWN_LIMIT`].
    pub fn spawn_limit(mut self, limit: usize) -> Self {
        self.spawn_limit = limit.max(1);
        self
    }

    /// Pin worker `i` to the `i`-th core this process may use (round robin
    /// when there are more workers than cores); default off. Worth it when
    /// the runtime has the machine to itself: each worker keeps a core of
    /// its own, also right after the pool slept (unpinned, the kernel can
    /// wake two workers on one core and take milliseconds to separate
    /// them). Leave it off when several runtimes or programs share the
    /// cores. Linux only; elsewhere, and where the kernel refuses, workers
    /// stay unpinned.
    pub fn pin_workers(mut self, on: bool) -> Self {
        self.pin_workers = on;
        self
    }

    /// Runs the worker threads `steps` nice values below the process
    /// (Linux; elsewhere, or where the kernel refuses, at the process's).
    /// A distributed node lowers them a few steps, so that its network and
    /// event loop run the moment they wake (see `sched/priority.rs`).
    pub fn lower_worker_priority(mut self, steps: i32) -> Self {
        self.worker_niceness = (steps > 0).then_some(steps);
        self
    }

    /// The replicas of shared values ([`crate::shared`]) that jobs on this
    /// runtime use; default: the process's ([`Replicas::process`]). Give
    /// each runtime its own to run several nodes in one process.
    pub fn shared(mut self, replicas: Arc<Replicas>) -> Self {
        self.shared = Some(replicas);
        self
    }

    /// Estimate each run's progress ([`Runtime::progress`]; default off):
    /// the top levels of the call tree are tracked, those whose calls take
    /// long enough (see [`crate::progress`]). What a status line or a
    /// dashboard shows; it costs a little at the top of the tree only.
    pub fn track_progress(mut self, on: bool) -> Self {
        self.track_progress = on;
        self
    }

    /// Starts the worker threads.
    pub fn build(self) -> Result<Runtime, BuildError> {
        let workers = match self.workers {
            Some(0) => return Err(BuildError::ZeroWorkers),
            Some(n) => n,
            None => std::thread::available_parallelism().map_or(1, |n| n.get()),
        };
        let progress = self.track_progress.then(Arc::default);
        let plain_when_alone = self.plain_when_alone && workers == 1 && progress.is_none();
        let (registry, deques) = Registry::new(workers, self.fault_tolerance, self.spawn_limit, progress);
        registry.plain_when_alone.store(plain_when_alone, std::sync::atomic::Ordering::Relaxed);
        let shared = self.shared.unwrap_or_else(|| Arc::clone(Replicas::process()));
        let mut threads = Vec::with_capacity(workers);
        let cores = if self.pin_workers { affinity::allowed_cores() } else { Vec::new() };
        for (index, deque) in deques.into_iter().enumerate() {
            let registry2 = Arc::clone(&registry);
            let shared2 = Arc::clone(&shared);
            let core = (!cores.is_empty()).then(|| cores[index % cores.len()]);
            let mut b = std::thread::Builder::new().name(format!("satin-worker-{index}"));
            if let Some(size) = self.stack_size {
                b = b.stack_size(size);
            }
            let niceness = self.worker_niceness;
            let spawned = b.spawn(move || {
                shared2.adopt_for_thread();
                if let Some(steps) = niceness {
                    priority::lower_current_thread(steps);
                }
                if let Some(core) = core {
                    affinity::pin_current_thread(core);
                }
                WorkerThread::new(index, deque, registry2).main_loop()
            });
            match spawned {
                Ok(handle) => threads.push(handle),
                Err(e) => {
                    registry.terminate();
                    threads.into_iter().for_each(|t: JoinHandle<()>| drop(t.join()));
                    return Err(BuildError::Spawn(e));
                }
            }
        }
        Ok(Runtime { registry, threads, shared })
    }
}

/// A pool of worker threads that runs annotated functions in parallel.
pub struct Runtime {
    registry: Arc<Registry>,
    threads: Vec<JoinHandle<()>>,
    shared: Arc<Replicas>,
}

/// Counters of a runtime, summed over its workers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RunStats {
    /// Calls made available to other workers.
    pub spawns: u64,
    /// Spawned calls that another worker took and ran.
    pub steals: u64,
    /// Lazily run calls that ran in parallel instead because a worker (or
    /// another node) wanted work.
    pub promotions: u64,
    /// Iterations of loops that ran a call inline, spawned because a
    /// worker (or another node) wanted work: the oldest such loops' next
    /// iterations answer a request before any call is promoted.
    pub released: u64,
    /// Steals recorded in the fault-tolerance lists since the start (0 with
    /// fault tolerance off).
    pub recorded_steals: u64,
    /// Steals whose result the victim has not read yet (0 when idle).
    pub stolen_records: u64,
}

impl Runtime {
    /// A builder with the defaults: all cores, fault-tolerance records on.
    pub fn builder() -> Builder {
        Builder::default()
    }

    /// A runtime with the default configuration.
    pub fn new() -> Result<Runtime, BuildError> {
        Builder::default().build()
    }

    /// Number of worker threads.
    pub fn workers(&self) -> usize {
        self.registry.num_workers()
    }

    /// Runs `f` on a worker thread and returns its result. Annotated functions
    /// called inside `f` run in parallel on the pool. A panic inside `f` or any
    /// job it spawned resumes here, with its original payload.
    pub fn run<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        if let Some(ctx) = current_ctx() {
            // SAFETY: `current_ctx` returns the live context of this thread's job.
            if std::ptr::eq(unsafe { &*ctx }.worker.registry(), &*self.registry) {
                return f();
            }
        }
        let job = RootJob::new(f);
        if let Some(p) = &self.registry.progress {
            p.run_started();
        }
        // SAFETY: `job` lives on this stack until `wait` returns, which is
        // after the one execution of the pushed reference.
        self.registry.injector.push(unsafe { job.as_job_ref() });
        self.registry.sleep.wake_all();
        let result = job.wait();
        if let Some(p) = &self.registry.progress {
            p.run_ended();
        }
        match result {
            Ok(r) => r,
            Err(p) => std::panic::resume_unwind(p),
        }
    }

    /// How far the current (or last) run is, if the runtime tracks
    /// progress ([`Builder::track_progress`]).
    pub fn progress(&self) -> Option<crate::progress::Estimate> {
        self.registry.progress.as_ref().map(|p| p.estimate())
    }

    /// The progress tracker itself (for the executor, which adds remote work).
    pub(crate) fn progress_tracker(&self) -> Option<&Arc<crate::progress::Progress>> {
        self.registry.progress.as_ref()
    }

    /// The replicas of shared values its jobs use.
    pub fn shared(&self) -> &Arc<Replicas> {
        &self.shared
    }

    pub(crate) fn registry(&self) -> &Registry {
        &self.registry
    }

    /// Records, from now on (or no longer), the jobs that move between
    /// workers or nodes, for a task stream ([`Runtime::take_job_spans`]).
    pub fn record_jobs(&self, on: bool) {
        self.registry.spans.set_on(on);
    }

    /// The jobs recorded since the last call, oldest first (see
    /// [`Runtime::record_jobs`]).
    pub fn take_job_spans(&self) -> Vec<JobSpan> {
        self.registry.spans.take()
    }

    /// The recorded kinds of jobs running now, each as a span so far.
    pub fn running_job_spans(&self) -> Vec<JobSpan> {
        self.registry.spans.running()
    }

    /// Counters since the runtime started.
    pub fn stats(&self) -> RunStats {
        let mut s = RunStats::default();
        for c in &self.registry.counters {
            s.spawns += c.spawns.load(Ordering::Relaxed);
            s.steals += c.steals.load(Ordering::Relaxed);
            s.promotions += c.promotions.load(Ordering::Relaxed);
            s.released += c.released.load(Ordering::Relaxed);
        }
        if let Some(ft) = &self.registry.ft {
            s.stolen_records = (0..self.workers()).map(|w| ft.stolen_from(w).len() as u64).sum();
            s.recorded_steals = ft.recorded();
        }
        s
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.registry.terminate();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}
