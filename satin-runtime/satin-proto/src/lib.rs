//! The distributed protocol core, sans-IO.
//!
//! One [`Node`] per process (or per simulated node). It never reads a clock,
//! touches a socket or starts a thread: the driver passes `now` into every
//! `handle_*` call, drains [`Node::poll_action`] for what to send and
//! whether the run is over, and asks [`Node::poll_timeout`] when to wake it
//! (every deadline is the core's, in one table: [`Timer`]). The local job store is
//! reached through the [`Executor`] trait, synchronously.
//!
//! Driver contract, in order, after any input:
//! 1. call the matching `handle_*` method (message, peer death, local job
//!    finished, local queue empty, timer);
//! 2. drain `poll_action` until it returns `None` and carry the actions out;
//! 3. call `handle_timeout` at (or after) the instant `poll_timeout` gives.
//!
//! Who leads, who is a member and what the answer is are decided by a
//! majority ([`quorum`]): no node alone declares another dead, becomes
//! master or ends the run.
//!
//! Recovery follows the design's procedure: when a peer is out of the run,
//! (0) a dead master is replaced by the one a majority elects, (2) jobs this node
//! runs for the dead peer are orphans — their finished parts go into the
//! result table and the rest is aborted, (1) jobs the dead peer stole from
//! this node are re-queued as *redone* (they and their descendants look up
//! the table before running), (3) a new master restarts the replicated root
//! job. Orphans are handled before re-queuing, so a re-queued job never
//! belongs to a subtree that was just aborted.
//!
//! Jobs still running when the root restarts (orphans among them) are
//! announced as `Running` entries of the table: a lookup of the restarted
//! root's newer *epoch* waits for them instead of computing them again.

#![warn(missing_docs)]

pub mod checkpoint;
pub mod codec;
pub mod dedup;
mod key;
mod msg;
mod node;
pub mod quorum;
mod rng;
mod roster;
pub mod shared_bytes;
mod table;
pub mod values;

pub use bytes::Bytes;
pub use key::{BuildKeyHasher, JobKey, KeyHasher};
pub use msg::{
    keep_longest, ClusterId, Entry, JobBar, JobKind, JobSpec, Msg, NodeId, SharedValues, JOB_BARS_PER_REPORT,
};
pub use node::{
    Action, Config, FtMode, HealthReport, JoinFailure, Lookup, Node, NodeFigures, NodeStats, StealPolicy, Stragglers,
    TablePlacement, Time, Timer, DEFAULT_REPLICAS, HOME_TABLE_FROM, PUBLISH_FRACTION, SHARED_NEWS_EVERY,
};
pub use rng::SplitMix64;
pub use roster::Members;
pub use table::{SharedEntry, SharedTable};

/// What an annotated function asks of the jobs of its calls that run on
/// other nodes (`#[divide_and_conquer(expect = "2s", retries = 3)]`); each
/// unset field falls back to the run's [`Stragglers`] setting.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JobPolicy {
    /// Expected duration, nanoseconds.
    pub expect: Option<u64>,
    /// How often a failed stolen job is retried elsewhere before the failure goes to its caller.
    pub retries: Option<u32>,
}

/// What an [`Executor::abandon`] leaves behind.
#[derive(Debug, Default)]
pub struct Abandoned {
    /// Finished jobs inside the abandoned subtree whose parents had not read
    /// them: worth saving in the result table.
    pub finished: Vec<(JobKey, Vec<u8>)>,
    /// Stamps of jobs inside the subtree that other nodes stole: nobody
    /// waits for their results any more (they become orphan results).
    pub stolen_out: Vec<u64>,
    /// The job was not aborted: it runs to the end, and its result is
    /// reported as finished then.
    pub runs_on: bool,
}

/// The local job store of a node, as the protocol sees it.
pub trait Executor {
    /// Removes the oldest stealable job (thieves take the largest work) and
    /// marks it with `stamp`, by which it is delivered or re-queued later.
    /// The thief holds the values digested in `holds`
    /// ([`Executor::held_values`]): the job may name those it borrows.
    fn take_for_thief(&mut self, stamp: u64, holds: &[[u8; 32]]) -> Option<JobSpec>;
    /// Digests of the values this node holds for jobs to name (what its
    /// program's call of the current run borrows); sent with each steal
    /// request.
    fn held_values(&self) -> Vec<[u8; 32]> {
        Vec::new()
    }
    /// Whether this node can run `job` at all. A job it cannot run (a
    /// generic function's instantiation this process has never used, see
    /// `job/generic.rs`) goes back to its owner, which runs it itself.
    fn can_run(&self, _job: &JobSpec) -> bool {
        true
    }
    /// Runs a job stolen from `victim`; when it finishes the driver calls
    /// [`Node::handle_job_finished`] with the victim and `job.stamp`.
    fn run_stolen(&mut self, job: JobSpec, victim: NodeId);
    /// Runs the root job, in place of any root it runs now; when it
    /// finishes the driver calls [`Node::handle_root_finished`] (or
    /// `_held`, `_failed`) with `job.stamp`, which numbers this start.
    fn run_root(&mut self, job: JobSpec);
    /// Puts the job lost by steal `job.stamp` back into the queue, to be run
    /// here (`job.redone` is set).
    fn requeue(&mut self, job: JobSpec);
    /// The result of the job lost by steal `stamp` came back. `false` if
    /// nothing here waits for it any more.
    fn deliver(&mut self, stamp: u64, value: Bytes) -> bool;
    /// The job lost by steal `stamp` failed on its thief (it panicked, see
    /// [`Node::handle_job_failed`]): complete it with that failure, which
    /// goes on in its owner as the job's own panic would. `false` if nothing
    /// here waits for it any more. Executors whose jobs cannot fail (the
    /// simulator's) never see this.
    fn fail(&mut self, stamp: u64, reason: &str) -> bool;
    /// The job stolen from `victim` by steal `stamp` is an orphan: abort it
    /// and everything below it, returning what finished inside — or, if
    /// `run_on` (a restarted root will wait for it) and the executor keeps
    /// orphans, let it run to the end, in which case the driver still
    /// reports it finished and the node puts its result into the table.
    fn abandon(&mut self, victim: NodeId, stamp: u64, run_on: bool) -> Abandoned;
    /// Aborts everything (graceful leave).
    fn abandon_all(&mut self) -> Abandoned;
    /// Answer to a [`Lookup::Pending`] table lookup: the value, or `None`
    /// (compute it after all).
    fn lookup_done(&mut self, key: &JobKey, value: Option<Bytes>);
    /// Whether this node is busy enough not to steal.
    fn has_work(&self) -> bool;
    /// Whether any job is queued or running here at all (a draining node
    /// leaves when not). Defaults to [`has_work`](Self::has_work).
    fn runs_anything(&self) -> bool {
        self.has_work()
    }
    /// The policy of the function `job` calls (default: none of its own).
    fn policy(&self, _job: &JobSpec) -> JobPolicy {
        JobPolicy::default()
    }
    /// How much work this node has done so far, in the executor's own unit
    /// (calls, leaves), and for how long (nanoseconds) it had work to do:
    /// only the rate matters — a node whose work per busy second is far
    /// below this one's is a straggler (see `stragglers.rs`).
    fn progress(&self) -> (u64, u64) {
        (0, 0)
    }

    /// Shared values (`satin::shared`) that jobs here changed since the
    /// last call: news for every other member. `None`: nothing new, and
    /// always for an executor that keeps no shared values.
    fn take_shared(&mut self) -> Option<SharedValues> {
        None
    }

    /// Every shared value here, for a member that joined or whose link
    /// came back (it may have missed news).
    fn all_shared(&self) -> Option<SharedValues> {
        None
    }

    /// Values a peer sent, joined into the replicas here.
    fn merge_shared(&mut self, values: SharedValues) {
        let _ = values;
    }
    /// A peer failed. From now on every job that starts here may duplicate
    /// work finished elsewhere: an executor may treat all queued, running
    /// and future jobs as redone (look up the table first). Fault-free runs
    /// never pay for this. Called only with the broadcast table, whose
    /// lookups are local reads; with a home table only redone jobs and
    /// their descendants look up.
    fn recovery_started(&mut self);
}
