//! Messages between nodes — the wire types, which the state machines
//! (`node/`, `quorum/`) import and never the reverse: the protocol
//! messages here, the majority's (`QMsg`, log entries, snapshots) in
//! `quorum.rs`, a node's figures in `figures.rs`. Encoded with postcard by
//! real drivers; the simulator passes them by value and charges their
//! encoded size.

use bytes::Bytes;
use serde::{Deserialize, Serialize};

use crate::checkpoint::{Record, ResultMeta};
use crate::JobKey;

mod figures;
mod quorum;

pub use figures::{keep_longest, JobBar, JobKind, NodeFigures, JOB_BARS_PER_REPORT};
pub use quorum::{Change, LogEntry, QMsg, Seat, Snapshot};

/// A node's identity for one lifetime: a restarted process is a new node.
pub type NodeId = u64;

/// Which cluster a node belongs to (cluster-aware stealing).
pub type ClusterId = u32;

/// A job as it travels: its key and whatever the executor needs to run it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobSpec {
    /// The job's content key.
    pub key: JobKey,
    /// Set by the victim when the job is stolen: (victim, stamp) names this
    /// steal, even if the same job is in flight twice (re-execution). For
    /// a root the executor is told to run, the number of that start on
    /// its node, which the executor reports back with the root's outcome
    /// (`Node::handle_root_finished`): an outcome of an earlier start is
    /// stale.
    pub stamp: u64,
    /// The encoded call (function id and parameters), as the executor runs
    /// it. Shared: a root's megabytes are held once however often the
    /// job is kept, queued or sent.
    #[serde(with = "crate::shared_bytes")]
    pub payload: Bytes,
    /// Re-executed after a crash: look up the result table before running,
    /// and so do all descendants.
    pub redone: bool,
    /// A copy of a late job that the master hands out to race the
    /// original (stragglers); `redone` is set too.
    pub duplicate: bool,
    /// Which incarnation of the root job this job descends from: 0 for the
    /// first, one more at every restart of the root. A job waits for
    /// (adopts) a running job only of an older epoch, and a frame of an
    /// older epoch never runs newer work nested above it: that keeps
    /// adoption free of deadlocks (see `docs/architecture.md`).
    pub epoch: u32,
    /// Calls between the root and this job (`DEPTH_UNKNOWN` if not tracked).
    pub depth: u32,
    /// Id of the nearest enclosing tracked call on the victim (0: none).
    pub parent: u64,
}

impl JobSpec {
    /// A job with nothing known about where it sits in the tree.
    pub fn new(key: JobKey, stamp: u64, payload: impl Into<Bytes>) -> JobSpec {
        JobSpec {
            key,
            stamp,
            payload: payload.into(),
            redone: false,
            duplicate: false,
            epoch: 0,
            depth: crate::checkpoint::DEPTH_UNKNOWN,
            parent: 0,
        }
    }

    /// A run's root job: depth 0, no steal, epoch 0 (the core sets the
    /// epoch and `redone` when it starts or restarts it).
    pub fn root(key: JobKey, payload: impl Into<Bytes>) -> JobSpec {
        JobSpec { depth: 0, ..JobSpec::new(key, 0, payload) }
    }
}

/// A result table entry: the value itself, where to fetch it, or who is
/// computing it right now.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Entry {
    /// Shared: a replica holds the same bytes as the message that carried them.
    Value(#[serde(with = "crate::shared_bytes")] Bytes),
    /// A pointer: the value is with this node; fetch it from there.
    Pointer(NodeId),
    /// `holder` runs the job (of root epoch `epoch`) and will publish its
    /// result: a newer-epoch job that needs it waits instead of recomputing.
    Running {
        /// The node that runs the job.
        holder: NodeId,
        /// The root epoch of the copy that runs.
        epoch: u32,
    },
}

/// A message between two nodes of a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Msg {
    /// A new node asks to join; `cluster` is its cluster.
    Join {
        /// The newcomer's cluster.
        cluster: ClusterId,
    },
    /// A node that waits for the run's first membership (`--expect-nodes`)
    /// asks its rendezvous to count it in; a node already running takes
    /// it as a `Join`.
    Gather {
        /// The newcomer's cluster.
        cluster: ClusterId,
        /// How many nodes the sender expects the run to start with.
        expect: u32,
    },
    /// The run's first membership, gathered by its rendezvous: the
    /// members and their clusters, the master first. Every member starts
    /// from it as a static member and passes it on once to the others
    /// (so a rendezvous that dies half-way through sending it loses no
    /// one); a node already running ignores it.
    Roster {
        /// The members and their clusters, the master first.
        members: Vec<(NodeId, ClusterId)>,
    },
    /// Reply to `Join`, from the leader once the newcomer's `Add` is
    /// committed: the members (id, cluster), the master, the root job, the
    /// table's homes per key (0: a broadcast table), and the run's log
    /// (whose `Answer` entries end the runs so far).
    Welcome {
        /// The members and their clusters.
        members: Vec<(NodeId, ClusterId)>,
        /// The current master.
        master: NodeId,
        /// The run's first master, the node the user started: it shows
        /// the answers (see `node/origin.rs`).
        origin: NodeId,
        /// The root job, for the newcomer to restart if the master dies;
        /// without its payload when it is the first call, which the
        /// newcomer made itself (every node runs the same program: real
        /// runs' handshakes check that the first calls' keys agree).
        root: JobSpec,
        /// How many homes each table key has (0: a broadcast table).
        table_replicas: u32,
        /// The log of the run so far.
        quorum: Snapshot,
    },
    /// Leadership and membership (see `proto/quorum`).
    Quorum(QMsg),
    /// Graceful leave: run recovery as for a crash of the sender.
    Leave,
    /// The sender's figures, for the master's dashboard (`node/figures.rs`).
    Figures(NodeFigures),
    /// The master's dashboard as it is now (JSON), for a node that serves
    /// one (`NodeFigures::watches`; `node/figures.rs`).
    Board(#[serde(with = "crate::shared_bytes")] Bytes),
    /// The sender is the run's origin, node `was` joined again after the
    /// majority removed it (see `node/origin.rs`).
    OriginMoved {
        /// The origin's id before.
        was: NodeId,
    },
    /// An idle node asks the receiver for a job.
    StealRequest {
        /// Names the request; the reply carries it back.
        id: u64,
        /// Digests of values the thief holds (what its program's call of
        /// this run borrows, `Executor::held_values`): a job that borrows
        /// one may name it instead of carrying it.
        holds: Vec<[u8; 32]>,
    },
    /// The answer to `StealRequest`: the oldest stealable job, or none.
    StealReply {
        /// The request answered.
        id: u64,
        /// The stolen job, if the victim had one.
        job: Option<JobSpec>,
    },
    /// The result of the job the receiver lost to the sender by steal `stamp`.
    JobResult {
        /// The steal that took the job.
        stamp: u64,
        /// The job's key.
        key: JobKey,
        /// The encoded result.
        #[serde(with = "crate::shared_bytes")]
        value: Bytes,
    },
    /// A copy of the root job finished on the sender (the master's
    /// workers were stalled, see `node/root_copy.rs`): its result, for the
    /// master to announce if its own root has not finished.
    RootResult {
        /// The program's run (1 for its first annotated call).
        run: u32,
        /// The root's epoch the copy ran in.
        epoch: u32,
        /// The root's key: a node whose program is behind may hold the
        /// last run's root.
        key: JobKey,
        /// The encoded result.
        #[serde(with = "crate::shared_bytes")]
        value: Bytes,
    },
    /// Replicate a table entry.
    TablePut {
        /// The job's key.
        key: JobKey,
        /// Its value, a pointer to it, or who runs it.
        entry: Entry,
        /// Where in the tree the job sits and how long it took.
        meta: ResultMeta,
    },
    /// The sender no longer computes `key` (its `Running` entry is void);
    /// a waiting `Fetch` gets its answer separately.
    NotRunning {
        /// The job's key.
        key: JobKey,
        /// The epoch of the `Running` entry withdrawn.
        epoch: u32,
    },
    /// The sender's table, for a node that just joined (values up to the
    /// pointer threshold, pointers otherwise).
    TableSync {
        /// (key, entry, where in the tree) for every entry the sender holds.
        entries: Vec<(JobKey, Entry, ResultMeta)>,
    },
    /// Hand finished results to the receiver (graceful leave).
    HandOver {
        /// (key, encoded value) for each result.
        results: Vec<(JobKey, Vec<u8>)>,
    },
    /// Ask a pointer's holder for the value — or the node that runs the
    /// job, which answers when the job has finished (or ended without a
    /// result: `None`).
    Fetch {
        /// The job's key.
        key: JobKey,
        /// For a running job: the epoch of the copy waited for (the
        /// holder waits only with a copy that old, or older).
        running: Option<u32>,
    },
    /// Ask a home of `key` what it knows of it (the home table).
    TableGet {
        /// The key asked about.
        key: JobKey,
    },
    /// A home's answer to `TableGet`: its entry, and who runs the job.
    TableGot {
        /// The key asked about.
        key: JobKey,
        /// The home's entry for it, if any.
        entry: Option<(Entry, ResultMeta)>,
        /// The nodes running the job, with their epochs.
        running: Vec<(NodeId, u32)>,
    },
    /// The answer to `Fetch`: the value, or `None` if the holder has none (any more).
    FetchReply {
        /// The key asked for.
        key: JobKey,
        /// The encoded value, if the holder has it.
        #[serde(with = "crate::shared_bytes::option")]
        value: Option<Bytes>,
    },
    /// The run is over (sent by the master as its `Answer` entry
    /// commits), with the root job's result if it is small (at most
    /// `Config::pointer_threshold` bytes).
    Terminate {
        /// Which run of the program (see `node/sequence.rs`).
        run: u32,
        /// The answer, if it is small enough to travel with the news.
        #[serde(with = "crate::shared_bytes::option")]
        value: Option<Bytes>,
        /// The node that shows it (see `node/answer.rs`).
        shower: NodeId,
        /// The node that holds its value.
        holder: NodeId,
    },
    /// Please send the value of run `run`'s answer (see `node/answer.rs`).
    AskAnswer {
        /// The run.
        run: u32,
    },
    /// The value of run `run`'s answer, in reply to `AskAnswer` or
    /// unasked to the node that shows it; `None`: the sender has none.
    AnswerValue {
        /// The run.
        run: u32,
        /// The encoded answer.
        #[serde(with = "crate::shared_bytes::option")]
        value: Option<Bytes>,
    },
    /// The sender showed run `run`'s answer: nobody else shows it.
    Shown {
        /// The run.
        run: u32,
    },
    /// The program ended after `runs` annotated calls: nodes whose
    /// programs wait for an answer end without it.
    ProgramOver {
        /// How many calls the program made.
        runs: u32,
    },
    /// The job the receiver lost to the sender by steal `stamp` failed (it
    /// panicked): the failure goes on in the receiver's waiting frame, as a
    /// panic goes to the caller in a local run.
    JobFailed {
        /// The steal that took the job.
        stamp: u64,
        /// Why it failed (the panic's message).
        reason: String,
    },
    /// The receiver's job stolen by steal `stamp` cannot run on the sender
    /// (it does not know the job's function: a generic function's
    /// instantiation it has never used): the receiver runs it itself.
    JobRefused {
        /// The steal that took the job.
        stamp: u64,
    },
    /// The root job failed: the run is over without an answer (sent by
    /// the master).
    RunFailed {
        /// Why the root job failed.
        reason: String,
    },
    /// Results for the checkpoint coordinator to write: large ones, which
    /// it knows only as pointers (small ones reach it as table updates).
    /// `last`: the sender is suspending and sends nothing more.
    CheckpointBatch {
        /// The results to write.
        records: Vec<Record>,
        /// The sender is suspending: nothing more comes from it.
        last: bool,
    },
    /// Please suspend the run (to the coordinator).
    SuspendRequest,
    /// Victim to thief: does the job of steal `stamp` still run with you?
    /// (Its soft timeout passed.)
    JobStatus {
        /// The steal asked about.
        stamp: u64,
    },
    /// Thief to victim: the answer to `JobStatus`, with how much work the
    /// thief has done so far ([`crate::Executor::progress`]): the
    /// victim compares its rate with its own to spot a slow or hung node.
    JobStatusReply {
        /// The steal asked about.
        stamp: u64,
        /// Whether the thief still runs the job.
        running: bool,
        /// The thief's work so far: (units done, nanoseconds it had work).
        progress: (u64, u64),
    },
    /// Victim to thief: stop the job of steal `stamp` — another copy of it
    /// finished, or it ran past its hard timeout. No result is wanted.
    AbortJob {
        /// The steal whose job to stop.
        stamp: u64,
    },
    /// Broadcast by a victim that dropped `node` (its jobs kept timing
    /// out or failing): give it no work for `for_ns` nanoseconds. `drops`
    /// counts its drops so far; a node dropped `Config::max_drops` times
    /// leaves the run.
    NodeDropped {
        /// The node dropped.
        node: NodeId,
        /// How long to give it no work, in nanoseconds.
        for_ns: u64,
        /// How often it has been dropped so far.
        drops: u32,
    },
    /// The run is being suspended (from the coordinator): send what you
    /// have and stop.
    Suspend,
    /// Shared values (`satin::shared`): news of the sender's, or all of
    /// them for a member that joined or whose link came back (see
    /// `node/shared.rs`).
    Shared(SharedValues),
    /// To the master, from a node whose program is behind run `run` (it
    /// holds no root of it) and finds the master stalled: the root, to
    /// run a copy of it (`node/root_copy.rs`).
    RootWanted {
        /// The run whose root is wanted.
        run: u32,
    },
    /// The master's answer to `RootWanted`: its root of run `run`.
    RootGiven {
        /// The run.
        run: u32,
        /// The root, with its payload.
        root: JobSpec,
    },
}

impl Msg {
    /// Whether the message must never wait behind data: the quorum's
    /// (beats, votes, entries). Real drivers send these on a control
    /// stream of their own; the simulator on a lane of their own
    /// (`Lanes`). Everything else keeps its order on the data stream — a
    /// leave comes after the results it hands over, so that nothing is
    /// computed again.
    pub fn urgent(&self) -> bool {
        matches!(self, Msg::Quorum(_))
    }

    /// The message's kind, as statistics name it (`bytes_by_kind`).
    pub fn kind(&self) -> &'static str {
        match self {
            Msg::Join { .. } => "Join",
            Msg::Gather { .. } => "Gather",
            Msg::Roster { .. } => "Roster",
            Msg::Welcome { .. } => "Welcome",
            Msg::Quorum(_) => "Quorum",
            Msg::Leave => "Leave",
            Msg::Figures(_) => "Figures",
            Msg::Board(_) => "Board",
            Msg::OriginMoved { .. } => "OriginMoved",
            Msg::StealRequest { .. } => "StealRequest",
            Msg::StealReply { .. } => "StealReply",
            Msg::JobResult { .. } => "JobResult",
            Msg::RootResult { .. } => "RootResult",
            Msg::TablePut { .. } => "TablePut",
            Msg::NotRunning { .. } => "NotRunning",
            Msg::TableSync { .. } => "TableSync",
            Msg::HandOver { .. } => "HandOver",
            Msg::Fetch { .. } => "Fetch",
            Msg::TableGet { .. } => "TableGet",
            Msg::TableGot { .. } => "TableGot",
            Msg::FetchReply { .. } => "FetchReply",
            Msg::Terminate { .. } => "Terminate",
            Msg::AskAnswer { .. } => "AskAnswer",
            Msg::AnswerValue { .. } => "AnswerValue",
            Msg::Shown { .. } => "Shown",
            Msg::ProgramOver { .. } => "ProgramOver",
            Msg::JobFailed { .. } => "JobFailed",
            Msg::JobRefused { .. } => "JobRefused",
            Msg::RunFailed { .. } => "RunFailed",
            Msg::CheckpointBatch { .. } => "CheckpointBatch",
            Msg::SuspendRequest => "SuspendRequest",
            Msg::JobStatus { .. } => "JobStatus",
            Msg::JobStatusReply { .. } => "JobStatusReply",
            Msg::AbortJob { .. } => "AbortJob",
            Msg::NodeDropped { .. } => "NodeDropped",
            Msg::Suspend => "Suspend",
            Msg::Shared(_) => "Shared",
            Msg::RootWanted { .. } => "RootWanted",
            Msg::RootGiven { .. } => "RootGiven",
        }
    }
}

/// Shared values as they travel (`satin::shared`): incumbents as (name,
/// maximize, value), other shared objects as (name, encoded value or
/// update). Updates are joins, so order and repeats do not matter.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SharedValues {
    /// Incumbents: (name, maximize, value).
    pub incumbents: Vec<(String, bool, u64)>,
    /// Other shared objects: (name, encoded value or update).
    pub objects: Vec<(String, serde_bytes::ByteBuf)>,
}
