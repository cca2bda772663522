//! Static task graphs: a DAG of tasks known before the run, read from a
//! file or built in code, scheduled ahead of time onto processors.
//!
//! - [`graph`]: the graph, with run times (uniform or per processor) and
//!   communication costs, validated on construction (no cycle, no
//!   negative cost, no dangling edge);
//! - [`stg`], [`matrix`]: readers for the Standard Task Graph format and
//!   for run-time and connectivity matrices;
//! - [`heft`](mod@heft): the HEFT list scheduler;
//! - [`ft`]: the fault-tolerant scheduler, HEFT plus a duplicate of every
//!   task in an idle gap of another processor, aborted when the original
//!   ends;
//! - [`processor`]: one processor of a fault-tolerant schedule as a
//!   state machine without I/O, which [`exec`] drives in virtual time with
//!   crashes;
//! - [`replicate`](mod@replicate), [`reschedule`]: the alternatives it is measured
//!   against, active replication and rescheduling after the crash;
//! - [`replan`](mod@replan): rescheduling the rest of a real run from what a node
//!   knows when it learns of a crash, when that beats the duplicates;
//! - [`schedule`]: a schedule and its checker;
//! - [`workflow`]: a graph whose tasks are Rust functions, run in order or
//!   on threads that play a fault-tolerant schedule's processors;
//! - [`node`]: one node of a task-graph run across machines, as a state
//!   machine without I/O (its messages, start, progress and recovery),
//!   driven by `satin-net` on real processes and by `satin-sim` under
//!   simulated faults.

#![warn(missing_docs)]

pub mod exec;
pub mod ft;
pub mod graph;
pub mod heft;
pub mod matrix;
pub mod node;
pub mod processor;
pub mod replan;
pub mod replicate;
pub mod reschedule;
pub mod schedule;
pub mod stg;
pub mod workflow;

pub use exec::{simulate, Crash, Outcome, Run, Span, Stalled};
pub use ft::{ft_schedule, Duplicate, FtParams, FtSchedule};
pub use graph::{Costs, GraphError, TaskGraph, TaskId};
pub use heft::{heft, upward_ranks};
pub use node::{GraphConfig, GraphMsg, GraphNode, WorkflowRun};
pub use replan::{replan, Known, Replan};
pub use replicate::replicate;
pub use reschedule::{adaptive_after, reschedule_after, schedule_rest};
pub use schedule::{Placement, Schedule, Violation};
pub use workflow::{ThreadRun, Workflow, WorkflowBuilder};
