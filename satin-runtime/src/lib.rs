//! Satin: fault-tolerant divide-and-conquer parallelism.
//!
//! Put [`divide_and_conquer`] on an ordinary recursive function. Each recursive
//! call becomes a job that may run on another core; the first read of its
//! result waits for it. Run the function inside a [`Runtime`] to use all cores;
//! called anywhere else it runs sequentially with the same result.
//!
//! ```
//! use satin::divide_and_conquer;
//!
//! #[divide_and_conquer]
//! pub fn fib(n: u32) -> u64 {
//!     if n < 2 {
//!         return n as u64;
//!     }
//!     let x = fib(n - 1); // spawned: may run on another core
//!     let y = fib(n - 2); // run inline: it is the last call before a read
//!     x + y               // first read of x: waits for it
//! }
//!
//! let rt = satin::Runtime::builder().workers(2).build().unwrap();
//! assert_eq!(rt.run(|| fib(20)), 6765);
//! assert_eq!(fib(20), 6765); // no runtime: sequential
//! ```
//!
//! # Purity
//!
//! An annotated function must be referentially transparent: the same
//! parameters give the same result and the caller sees no side effects. The
//! runtime relies on this to run calls in parallel, abort calls whose result is
//! never read, and (across machines) re-execute lost work and reuse results.

#![warn(missing_docs)]

// The attribute, and the runtime that runs what it generates.
pub use satin_core::{
    divide_and_conquer, sequential, BuildError, Builder, Ran, RunStats, Runtime, DEFAULT_SPAWN_LIMIT,
};

// What generated code implements and returns, for code that names it: a
// call as a job, its key, and the errors of calls that travel.
pub use satin_core::{AcceptError, CallError, Job, JobKey, OwnedJob, Travel, TravelMut, TypeParam, WriteBackError};

// Values every job of a run shares (a branch-and-bound incumbent), the
// run's progress estimate, and checkpoint files.
/// Values every job of a run shares: the best solution so far
/// ([`Incumbent`](shared::Incumbent)) and values whose updates are joins
/// ([`Shared`](shared::Shared) over a [`Lattice`](shared::Lattice)).
pub mod shared {
    pub use satin_core::shared::{Direction, Greatest, Incumbent, Lattice, Least, Replicas, Shared, SharedSync};
}

/// How far a run has come: its estimate of the work done and left.
pub mod progress {
    pub use satin_core::progress::{Estimate, Progress, TRACK_FLOOR};
}

/// Checkpoint files: what a run wrote of its finished work, for a resume.
pub mod checkpoint {
    pub use satin_core::checkpoint::{CheckpointError, Identity, OpenReport, Record, ResultMeta, Store, DEPTH_UNKNOWN};
}

/// How a distributed run behaves: fault tolerance, stealing, stragglers,
/// the result table, and the protocol's whole configuration (which the
/// simulator takes too).
pub mod policy {
    pub use satin_proto::quorum::QuorumConfig;
    pub use satin_proto::{Config, FtMode, StealPolicy, Stragglers, TablePlacement, DEFAULT_REPLICAS, HOME_TABLE_FROM};
}

// The layers beneath, for drivers, the simulator and the runtime's own
// tests: not a stable API.
#[doc(hidden)]
pub use satin_core::{
    __private, call_fn_id, check_call, codec, dist, encode_job, function_digest, function_ids, knows_call, policy_of,
    proto, BuildKeyHasher, KeyHasher, LocalCodec, ResultCodec, SerdeCodec,
};

/// Static task graphs and their schedulers (HEFT, fault-tolerant
/// duplication): the `dag` feature, on with `net`.
/// Static task graphs: readers, HEFT, the fault-tolerant scheduler with
/// duplicates, replanning, and the node of a task-graph run across
/// machines.
#[cfg(feature = "dag")]
pub mod dag {
    pub use satin_dag::{
        adaptive_after, exec, ft, ft_schedule, graph, heft, matrix, node, processor, replan, replicate, reschedule,
        reschedule_after, schedule, schedule_rest, simulate, stg, upward_ranks, workflow, Costs, Crash, Duplicate,
        FtParams, FtSchedule, GraphConfig, GraphError, GraphMsg, GraphNode, Known, Outcome, Placement, Replan, Run,
        Schedule, Span, Stalled, TaskGraph, TaskId, ThreadRun, Violation, Workflow, WorkflowBuilder, WorkflowRun,
    };
}
/// Real distributed runs over QUIC, and the command line of a node: the
/// `net` feature, on by default.
/// Runs across processes and machines over QUIC: the command line of a
/// node, supervised local nodes, task graphs across machines.
#[cfg(feature = "net")]
pub mod net {
    pub use satin_net::{
        init_pool, init_pool_if_asked, parse_chaos, run, run_here, run_workflow, run_workflow_with,
        send_answer_to_file, status_line_wanted, table_placement, try_run, try_run_workflow, write_local_stats, AlgArg,
        Ended, FtArg, Launch, Pool, PoolError, RunError, Split, TableArg, WorkflowOptions, WorkflowRun,
        ALL_KILLED_STATUS, EXPELLED_STATUS, LOST_MAJORITY_STATUS, NODES_ENV, POOL_FILE, SUSPENDED_STATUS, USAGE_STATUS,
    };
}
/// The deterministic simulator of many nodes: the `sim` feature.
/// Many simulated nodes in one process, driving the real protocol core,
/// with fault schedules.
#[cfg(feature = "sim")]
pub mod sim {
    pub use satin_sim::{
        exec, faults, graph, run, run_on, shared, workload, Lanes, Report, SimCheckpoint, SimConfig, SplitMix64,
    };
}
