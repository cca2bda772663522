//! The local scheduler as the protocol core's [`Executor`]: what a real
//! (multi-process) node runs its jobs on.
//!
//! Jobs arrive as encoded calls (stolen from another node, or the root) and
//! run as entry jobs on the pool; remote thieves take the oldest spawned job
//! out of a worker deque. Outcomes come back to the driver as [`ExecEvent`]s
//! through a callback, from worker threads.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use crate::checkpoint::ResultMeta;
use crate::proto::{Abandoned, Executor, JobSpec, NodeId, SharedTable, SharedValues};
use crate::sched::{EntryOutcome, EntrySpec, Place, Ran, RemoteEvent, Runtime};
use crate::JobKey;

/// Runs a distributed root job (key, encoded call) to its encoded result:
/// each annotated call the program makes outside a run (see
/// [`with_root_runner`]).
pub type RootRunner = Box<dyn FnMut(JobKey, Vec<u8>) -> satin_proto::Bytes>;

thread_local! {
    static ROOT_RUNNER: RefCell<Option<RootRunner>> = const { RefCell::new(None) };
}

pub use crate::job::typed_root::encode_held;

/// Runs `f` on this thread with `runner` in place: every annotated call
/// `f` makes outside a runtime becomes the root job of a distributed run,
/// handed to `runner` (every node of the run calls the same `f`, so the
/// k-th call is the same run everywhere).
pub fn with_root_runner<R>(runner: RootRunner, f: impl FnOnce() -> R) -> R {
    ROOT_RUNNER.with(|r| *r.borrow_mut() = Some(runner));
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            ROOT_RUNNER.with(|r| r.borrow_mut().take());
        }
    }
    let _reset = Reset;
    f()
}

/// Runs `f` on this thread with `pool` as the pool that local calls
/// (`Job::LOCAL`: calls that cannot be encoded) made outside a run use:
/// in a distributed program they run on the node's own cores, not as runs
/// of the cluster.
pub fn with_local_pool<R>(pool: Arc<Runtime>, f: impl FnOnce() -> R) -> R {
    let outer = crate::job::local::set_pool(Some(pool));
    struct Reset(Option<Option<Arc<Runtime>>>);
    impl Drop for Reset {
        fn drop(&mut self) {
            crate::job::local::set_pool(self.0.take().flatten());
        }
    }
    let _reset = Reset(Some(outer));
    f()
}

pub(crate) fn take_root_runner() -> Option<RootRunner> {
    ROOT_RUNNER.with(|r| r.borrow_mut().take())
}

/// Puts the runner back after a call (see [`take_root_runner`]): the next
/// call outside a runtime is the next run.
pub(crate) fn put_back_root_runner(runner: RootRunner) {
    ROOT_RUNNER.with(|r| *r.borrow_mut() = Some(runner));
}

/// What the executor tells its driver. Each of the events that end an entry
/// job ([`ExecEvent::ends_entry`]) is followed, once the driver has handled
/// it, by a call of [`LocalExecutor::entry_ended`].
#[derive(Debug)]
pub enum ExecEvent {
    /// A redone call waits for a result held elsewhere or still being
    /// computed by an older job: ask the node (`Node::lookup`) and answer
    /// with `lookup_done`.
    Lookup {
        /// The call's key.
        key: JobKey,
        /// The root epoch of the call that looks.
        epoch: u32,
    },
    /// A call ran long enough to be published (`Node::handle_local_job_finished`).
    Published {
        /// The call's key.
        key: JobKey,
        /// Its encoded result.
        value: Vec<u8>,
        /// Where in the tree it sits and how long it took.
        meta: ResultMeta,
        /// How long it ran.
        ran: std::time::Duration,
    },
    /// A job stolen from `victim` by steal `stamp` finished here.
    StolenDone {
        /// The node the job was stolen from.
        victim: NodeId,
        /// The steal that took it.
        stamp: u64,
        /// The job's key.
        key: JobKey,
        /// Its encoded result.
        value: satin_proto::Bytes,
        /// Where and when it ran (for traces).
        ran: Ran,
    },
    /// The root job finished here.
    RootDone {
        /// Which start of the root (its `JobSpec::stamp`): the core drops
        /// the outcome of a start it has replaced.
        start: u64,
        /// The encoded answer, or (`held`) a stand-in for it.
        value: satin_proto::Bytes,
        /// The answer is large and this process's program holds it
        /// unencoded: `value` only stands for it, and must never leave
        /// the process; [`encode_held`] encodes it while the program
        /// waits (`satin_proto::Node::handle_root_held`).
        held: bool,
        /// Where and when it ran (for traces).
        ran: Ran,
    },
    /// An entry job was aborted: the job stolen from `victim` by steal
    /// `stamp` (`None`: the root) gives no result.
    Aborted {
        /// (victim, steal) of a stolen job; `None`: the root.
        stolen: Option<(NodeId, u64)>,
        /// Where and when it ran (for traces).
        ran: Ran,
    },
    /// A job stolen from `victim` could not run (undecodable bytes) or
    /// panicked; `reason` says which.
    StolenFailed {
        /// The node the job was stolen from.
        victim: NodeId,
        /// The steal that took it.
        stamp: u64,
        /// Why it failed.
        reason: String,
        /// Where and when it ran (for traces).
        ran: Ran,
    },
    /// The root job failed: the run cannot give an answer.
    RootFailed {
        /// Which start of the root (its `JobSpec::stamp`).
        start: u64,
        /// Why it failed.
        reason: String,
        /// Where and when it ran (for traces).
        ran: Ran,
    },
    /// A worker found no work in the pool and parks: the node could take
    /// work from others (`Node::handle_idle`). Told once until
    /// [`LocalExecutor::hunger_heard`].
    Hungry,
}

impl ExecEvent {
    /// Whether this event ends an entry job.
    pub fn ends_entry(&self) -> bool {
        !matches!(self, ExecEvent::Lookup { .. } | ExecEvent::Published { .. } | ExecEvent::Hungry)
    }
}

/// Where an entry job came from, which decides the event its end makes.
enum Origin {
    Stolen {
        victim: NodeId,
        stamp: u64,
        key: JobKey,
    },
    /// The root, as its node's core numbered this start of it.
    Root {
        start: u64,
    },
}

type Sink = Arc<dyn Fn(ExecEvent) + Send + Sync>;

/// See the module docs.
pub struct LocalExecutor {
    runtime: Arc<Runtime>,
    events: Sink,
    /// Abort flags of the jobs run for other nodes, by (victim, stamp).
    running: HashMap<(NodeId, u64), Arc<AtomicBool>>,
    root: Option<Arc<AtomicBool>>,
    /// Entry jobs queued or running, or ended with their event not yet
    /// handled by the driver.
    active: Arc<AtomicUsize>,
    /// Let orphans run to the end instead of aborting them.
    keep_orphans: bool,
    /// Chaos: jobs stolen from now on fail at once with this probability.
    fail_rate: f64,
    rng: crate::proto::SplitMix64,
    /// This process's shared values as the core moves them between nodes.
    shared: crate::shared::SharedSync,
}

/// User and system CPU time of this process, in nanoseconds.
/// The CPU time the pool's worker threads used, where the system says
/// (Linux: each thread's `schedstat`), else the whole process's. A node's
/// rate of work is its workers' work: the network threads' encoding and
/// decoding of large messages is no work done (see `health.rs`).
fn workers_cpu_ns(tids: &[libc::pid_t]) -> u64 {
    let mut total = 0u64;
    for tid in tids {
        let Ok(text) = std::fs::read_to_string(format!("/proc/self/task/{tid}/schedstat")) else {
            return process_cpu_ns();
        };
        let Some(ns) = text.split_whitespace().next().and_then(|n| n.parse::<u64>().ok()) else {
            return process_cpu_ns();
        };
        total += ns;
    }
    if tids.is_empty() {
        process_cpu_ns()
    } else {
        total
    }
}

fn process_cpu_ns() -> u64 {
    // SAFETY: an all-zero rusage is a valid value of the plain C struct,
    // and getrusage only writes into it.
    let usage = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut u);
        u
    };
    let ns = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1_000;
    ns(usage.ru_utime) + ns(usage.ru_stime)
}

/// Why a [`LocalExecutor`] cannot attach to a runtime.
#[derive(Debug)]
pub struct AlreadyAttached;

impl std::fmt::Display for AlreadyAttached {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "this runtime already serves a distributed executor")
    }
}

impl std::error::Error for AlreadyAttached {}

impl LocalExecutor {
    /// Attaches to `runtime`; `table` is the node's result table (see
    /// [`crate::proto::Node::shared_table`]); calls near the top of the
    /// tree that run at least `publish_after` are published (`None`:
    /// nothing is tracked); `events` receives outcomes and requests.
    pub fn new(
        runtime: Arc<Runtime>,
        table: SharedTable,
        publish_after: Option<std::time::Duration>,
        events: impl Fn(ExecEvent) + Send + Sync + 'static,
    ) -> Result<LocalExecutor, AlreadyAttached> {
        let events: Sink = Arc::new(events);
        let to_driver = Arc::clone(&events);
        let remote_events = Box::new(move |e: RemoteEvent| {
            to_driver(match e {
                RemoteEvent::Lookup { key, epoch } => ExecEvent::Lookup { key, epoch },
                RemoteEvent::Published { key, value, meta, ran } => ExecEvent::Published { key, value, meta, ran },
                RemoteEvent::Hungry => ExecEvent::Hungry,
            })
        });
        if !runtime.registry().attach_remote(table, publish_after, remote_events) {
            return Err(AlreadyAttached);
        }
        Ok(LocalExecutor {
            events,
            running: HashMap::new(),
            root: None,
            active: Arc::new(AtomicUsize::new(0)),
            keep_orphans: false,
            fail_rate: 0.0,
            rng: crate::proto::SplitMix64::new(std::process::id() as u64),
            shared: crate::shared::SharedSync::start(Arc::clone(runtime.shared())),
            runtime,
        })
    }

    /// The job a remote thief took by steal `stamp` came back: done, or to
    /// be run again (for the progress estimate).
    fn stolen_ended(&self, stamp: u64, done: bool) {
        if let Some(p) = self.runtime.progress_tracker() {
            p.stolen_ended(stamp, done);
        }
    }

    /// How far this node's run is, if its runtime tracks progress: the
    /// master's estimate is the run's.
    pub fn progress(&self) -> Option<crate::progress::Estimate> {
        self.runtime.progress()
    }

    /// The run is over (its answer is known here).
    pub fn run_ended(&self) {
        if let Some(p) = self.runtime.progress_tracker() {
            p.run_ended();
        }
    }

    /// This node's shared values as the driver sees them (for the
    /// checkpoint file).
    pub fn shared(&self) -> &crate::shared::SharedSync {
        &self.shared
    }

    /// Orphans (jobs run for a node that died) run to the end and their
    /// results go into the result table, instead of being aborted: with
    /// coarse stolen jobs, most of the work finished inside an orphan is
    /// otherwise lost. Only worth it with the result table.
    pub fn keep_orphans(&mut self, on: bool) {
        self.keep_orphans = on;
    }

    /// Chaos (`--chaos fail`): jobs stolen from now on fail at once with
    /// probability `rate`, as if they had panicked.
    pub fn set_fail_rate(&mut self, rate: f64) {
        self.fail_rate = rate.clamp(0.0, 1.0);
    }

    /// Kernel thread ids of the pool's workers (chaos pauses them).
    pub fn worker_thread_ids(&self) -> Vec<libc::pid_t> {
        self.runtime.registry().thread_ids.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The job stolen from `victim` by steal `stamp` finished (the driver saw
    /// its `StolenDone`): forget its abort flag.
    pub fn stolen_done(&mut self, victim: NodeId, stamp: u64) {
        self.running.remove(&(victim, stamp));
    }

    /// The driver has handled an [`ExecEvent`]; true when no entry job is
    /// left here (time to steal, or for a draining node to leave).
    ///
    /// Counting an entry job as ended only now, not when its worker
    /// finishes, keeps a draining node from leaving between the two with
    /// the job's result still unsent.
    pub fn entry_ended(&mut self) -> bool {
        self.active.fetch_sub(1, Ordering::AcqRel) == 1
    }

    /// The driver heard the last [`ExecEvent::Hungry`]: a worker that
    /// parks from now on tells again.
    pub fn hunger_heard(&self) {
        if let Some(remote) = self.runtime.registry().remote.get() {
            remote.hunger_heard();
        }
    }

    /// Raises the publication threshold (see `LocalExecutor::new`).
    pub fn set_publish_after(&self, after: std::time::Duration) {
        self.runtime.registry().set_publish_after(after);
    }

    /// Records the jobs that move, for a task stream (see
    /// [`Runtime::record_jobs`]).
    pub fn record_jobs(&self, on: bool) {
        self.runtime.record_jobs(on);
    }

    /// The jobs recorded since the last call (see
    /// [`Runtime::take_job_spans`]).
    pub fn take_job_spans(&self) -> Vec<crate::JobSpan> {
        self.runtime.take_job_spans()
    }

    /// The recorded jobs running now (see [`Runtime::running_job_spans`]).
    pub fn running_job_spans(&self) -> Vec<crate::JobSpan> {
        self.runtime.running_job_spans()
    }

    /// Calls spawned on this node's runtime so far.
    pub fn spawns(&self) -> u64 {
        self.runtime.stats().spawns
    }

    /// Lookups of redone calls in the result table.
    pub fn table_lookups(&self) -> u64 {
        self.runtime.registry().table_lookups.load(Ordering::Relaxed)
    }

    /// Results this node took from the result table instead of computing.
    pub fn table_hits(&self) -> u64 {
        self.runtime.registry().table_hits.load(Ordering::Relaxed)
    }

    fn start(&self, job: JobSpec, abort: Arc<AtomicBool>, origin: Origin) {
        self.active.fetch_add(1, Ordering::AcqRel);
        let events = Arc::clone(&self.events);
        let done = move |outcome: EntryOutcome, ran: Ran| {
            events(match (outcome, origin) {
                (EntryOutcome::Value(value), Origin::Stolen { victim, stamp, key }) => {
                    ExecEvent::StolenDone { victim, stamp, key, value, ran }
                }
                (EntryOutcome::Value(value), Origin::Root { start }) => {
                    ExecEvent::RootDone { start, value, held: false, ran }
                }
                (EntryOutcome::Held(value), Origin::Root { start }) => {
                    ExecEvent::RootDone { start, value, held: true, ran }
                }
                (EntryOutcome::Held(_), Origin::Stolen { victim, stamp, .. }) => ExecEvent::StolenFailed {
                    victim,
                    stamp,
                    reason: "a stolen job's result was held as a root's (a bug)".into(),
                    ran,
                },
                (EntryOutcome::Aborted, Origin::Stolen { victim, stamp, .. }) => {
                    ExecEvent::Aborted { stolen: Some((victim, stamp)), ran }
                }
                (EntryOutcome::Aborted, Origin::Root { .. }) => ExecEvent::Aborted { stolen: None, ran },
                (EntryOutcome::Failed(reason), Origin::Stolen { victim, stamp, .. }) => {
                    ExecEvent::StolenFailed { victim, stamp, reason, ran }
                }
                (EntryOutcome::Failed(reason), Origin::Root { start }) => ExecEvent::RootFailed { start, reason, ran },
            })
        };
        let spec = EntrySpec {
            key: job.key,
            payload: job.payload,
            redone: job.redone,
            duplicate: job.duplicate,
            epoch: job.epoch,
            place: Place { depth: job.depth, frame: job.parent, redone: job.redone, lookup_depth: 0 },
        };
        self.runtime.registry().inject_entry(spec, abort, Box::new(done));
    }
}

impl Executor for LocalExecutor {
    fn take_for_thief(&mut self, stamp: u64, holds: &[[u8; 32]]) -> Option<JobSpec> {
        // Values the thief holds go by their digests (see `job/lent`).
        let take = crate::job::lent::for_thief(holds, || self.runtime.registry().take_for_remote(stamp))?;
        if let Some(p) = self.runtime.progress_tracker() {
            if take.place.depth != crate::checkpoint::DEPTH_UNKNOWN {
                p.stolen(stamp, take.place.frame, take.place.depth);
            }
        }
        Some(JobSpec {
            key: take.key,
            stamp,
            payload: take.payload,
            redone: take.redone,
            duplicate: false,
            epoch: take.epoch,
            depth: take.place.depth,
            parent: take.place.frame,
        })
    }

    fn held_values(&self) -> Vec<[u8; 32]> {
        crate::job::lent::held_values()
    }

    fn can_run(&self, job: &JobSpec) -> bool {
        crate::knows_call(&job.payload)
    }

    fn run_stolen(&mut self, job: JobSpec, victim: NodeId) {
        if self.fail_rate > 0.0 && self.rng.unit() < self.fail_rate {
            // Counted as an entry job: the driver ends it when it handles the event.
            self.active.fetch_add(1, Ordering::AcqRel);
            let reason = "injected failure (--chaos fail)".to_string();
            (self.events)(ExecEvent::StolenFailed {
                victim,
                stamp: job.stamp,
                reason,
                ran: Ran { worker: 0, start: std::time::Instant::now(), took: std::time::Duration::ZERO },
            });
            return;
        }
        let abort = Arc::new(AtomicBool::new(false));
        self.running.insert((victim, job.stamp), Arc::clone(&abort));
        let origin = Origin::Stolen { victim, stamp: job.stamp, key: job.key };
        self.start(job, abort, origin);
    }

    fn run_root(&mut self, job: JobSpec) {
        if let Some(p) = self.runtime.progress_tracker() {
            p.run_started();
        }
        let abort = Arc::new(AtomicBool::new(false));
        if let Some(old) = self.root.replace(Arc::clone(&abort)) {
            old.store(true, Ordering::Release);
        }
        let start = job.stamp;
        self.start(job, abort, Origin::Root { start });
    }

    fn requeue(&mut self, job: JobSpec) {
        self.stolen_ended(job.stamp, false);
        // The slot runs again as a redone job (see `sched::remote`).
        self.runtime.registry().requeue_remote(job.stamp);
    }

    fn deliver(&mut self, stamp: u64, value: satin_proto::Bytes) -> bool {
        self.stolen_ended(stamp, true);
        self.runtime.registry().deliver_remote(stamp, value)
    }

    fn fail(&mut self, stamp: u64, reason: &str) -> bool {
        self.stolen_ended(stamp, false);
        self.runtime.registry().fail_remote(stamp, reason)
    }

    fn abandon(&mut self, victim: NodeId, stamp: u64, run_on: bool) -> Abandoned {
        if self.keep_orphans && run_on {
            // Its partial results live in stack frames that an abort would
            // throw away; finished, the whole result goes into the table.
            return Abandoned { runs_on: self.running.contains_key(&(victim, stamp)), ..Abandoned::default() };
        }
        if let Some(flag) = self.running.remove(&(victim, stamp)) {
            flag.store(true, Ordering::Release);
            self.runtime.registry().bump_abort_epoch();
        }
        Abandoned::default()
    }

    fn abandon_all(&mut self) -> Abandoned {
        for (_, flag) in self.running.drain() {
            flag.store(true, Ordering::Release);
        }
        if let Some(root) = self.root.take() {
            root.store(true, Ordering::Release);
        }
        let registry = self.runtime.registry();
        registry.bump_abort_epoch();
        // Jobs waiting at a sync for another node's result, or for a
        // lookup, would wait forever.
        registry.abort_all_remote();
        registry.resolve_all_lookups();
        Abandoned::default()
    }

    fn runs_anything(&self) -> bool {
        self.active.load(Ordering::Acquire) > 0
    }

    fn policy(&self, job: &JobSpec) -> crate::proto::JobPolicy {
        crate::job::policy_of(&job.payload)
    }

    /// CPU time this process used, and how long its workers were not
    /// parked: a worker that waits for other nodes parks; one that shares
    /// its core with a noisy neighbour, or is paused, or hung, does not —
    /// and gets less CPU than wall time. (Calls made would be no measure:
    /// one call's work differs from another's.)
    fn progress(&self) -> (u64, u64) {
        // In CPU milliseconds: the core compares rates over at least 20 units.
        (workers_cpu_ns(&self.worker_thread_ids()) / 1_000_000, self.runtime.registry().busy_ns())
    }

    fn lookup_done(&mut self, key: &JobKey, value: Option<satin_proto::Bytes>) {
        self.runtime.registry().resolve_lookup(key, value);
    }

    fn take_shared(&mut self) -> Option<SharedValues> {
        self.shared.news()
    }

    fn all_shared(&self) -> Option<SharedValues> {
        self.shared.everything()
    }

    fn merge_shared(&mut self, values: SharedValues) {
        self.shared.merge(values);
    }

    /// Busy while an entry job runs and no worker is out of work: a worker
    /// parked (with nothing queued from outside) means the pool could take
    /// more, also when it waits for a result from another node.
    fn has_work(&self) -> bool {
        let registry = self.runtime.registry();
        self.active.load(Ordering::Acquire) > 0 && (registry.sleep.sleepers() == 0 || !registry.injector.is_empty())
    }

    fn recovery_started(&mut self) {
        // Redone jobs and their descendants look up the table (`Ctx::redone`);
        // nothing else here needs to.
    }
}
