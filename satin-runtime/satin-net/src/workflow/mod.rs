//! Task-graph runs across nodes: a [`Workflow`] played by node processes
//! as the processors of its fault-tolerant schedule, over the same QUIC
//! transport, pool credential, supervisor and chaos as divide-and-conquer
//! runs. The rules are `satin-dag`'s [`GraphNode`](satin_dag::GraphNode)
//! (`node.rs` here is its I/O). Every node runs the same program and builds the same workflow
//! (its tasks are found by their place in it, and a digest of the plan
//! checks that they agree); the master waits for the nodes, numbers them
//! and starts the run; each node then runs its processor's items, sends
//! news of every finished copy to every node (with the output to the nodes
//! that need it), and takes over for a crashed processor with the
//! duplicates the schedule placed for it.

mod msg;
mod node;
mod plan_trace;
mod worker;

use std::time::Duration;

use super::ending::{Ended, RunError};
use super::front::{first_steps, load_pool, FirstSteps};
use super::node_io::Identity;
use super::program::MASTER_LINE;
use super::{fresh_id, init_logging, supervise, Launch};
use satin_dag::node::{GraphConfig, MASTER};
use satin_dag::{ft_schedule, FtParams, Workflow};
use satin_proto::codec::Hello;

pub use satin_dag::WorkflowRun;

/// How [`super::run_workflow_with`] runs a workflow.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WorkflowOptions {
    /// The fault-tolerant schedule's timing (slack, abort delay).
    pub params: FtParams,
    /// How long one unit of planned cost lasts.
    pub unit: Duration,
    /// After a crash, the lowest live node replans the rest of the run and
    /// everyone follows the new plan when it ends sooner than continuing
    /// with the duplicates (default: yes).
    pub replan: bool,
    /// An output from another node counts as in only its edge's planned
    /// communication cost after it arrived: for synthetic tasks, whose
    /// data is too small to take that long (default: no).
    pub emulate_comm: bool,
}

impl WorkflowOptions {
    /// Default timing, replanning after a crash, real communication.
    pub fn new(unit: Duration) -> WorkflowOptions {
        WorkflowOptions { params: FtParams::default(), unit, replan: true, emulate_comm: false }
    }
}

/// Runs `workflow` as `args` say, its fault-tolerant schedule made with
/// `params`; a unit of planned cost takes `unit`. A helper for binaries:
/// see [`try_run_workflow`] for what it does, and [`super::run`] for how
/// it ends the process when this node's part ends without the answer.
pub fn run_workflow(app: &str, args: &Launch, workflow: &Workflow, params: FtParams, unit: Duration) -> WorkflowRun {
    super::run_workflow_with(app, args, workflow, &WorkflowOptions { params, ..WorkflowOptions::new(unit) })
}

/// Runs `workflow` as `args` say and returns how this process's part
/// ended; never exits the process.
///
/// - Neither `--listen`, `--join` nor `--local-nodes`: on threads of this
///   process, one per processor (`--workers`, default all cores, at least
///   two).
/// - `--listen ADDR --nodes N`: this process is the master; it waits for
///   N nodes in all (itself included), then starts. `--join ADDR`: one of
///   those nodes. Every node that saw the end returns the run;
///   [`Ended::Returned`]'s `shows` says which one shows it: the master
///   that ended it (the live one with the lowest processor number — the
///   `--listen` node while it lives).
/// - `--local-nodes N`: starts N such processes on loopback, injects
///   `--chaos` and prints the master's standard output
///   ([`Ended::Supervised`]).
pub fn try_run_workflow(
    app: &str,
    args: &Launch,
    workflow: &Workflow,
    options: &WorkflowOptions,
) -> Result<Ended<WorkflowRun>, RunError> {
    let WorkflowOptions { params, unit, replan, emulate_comm } = *options;
    let failed = |why: &str| Err(RunError::Failed(why.to_string()));
    if args.stats_json.is_some() && args.init_pool.is_none() {
        return Err(RunError::Usage("task-graph runs do not write --stats-json yet".into()));
    }
    if args.dashboard.is_some() || args.report.is_some() {
        return Err(RunError::Usage("task-graph runs have no dashboard yet (--dashboard, --report)".into()));
    }
    // (Task-graph nodes keep no `--stats-json` figures.)
    let two = (2, "a task's duplicate runs on another node");
    match first_steps(app, args, two, supervise::Kind::Graph)? {
        FirstSteps::PoolWritten(file) => return Ok(Ended::PoolWritten(file)),
        FirstSteps::Supervised => return Ok(Ended::Supervised),
        FirstSteps::Run => {}
    }
    if args.slurm || args.checkpoint.is_some() {
        return failed("task-graph runs take neither --slurm nor --checkpoint yet");
    }
    if !args.is_distributed() {
        let run = on_threads(args, workflow, params, unit).map_err(RunError::Failed)?;
        return Ok(Ended::Returned { value: run, shows: true });
    }
    init_logging();
    let nodes = args.nodes.map(|n| n as usize).or(crate::contract::ChildEnv::current().cluster_size);
    let master = args.join.is_none();
    let nodes = match nodes {
        Some(n) if n >= 2 => n,
        Some(_) => return failed("a task-graph run needs at least 2 nodes: a task's duplicate runs on another node"),
        None if master => return failed("the master of a task-graph run needs --nodes N: how many nodes to wait for"),
        None => 0,
    };
    let pool = load_pool(args)?;
    let id = if master { MASTER } else { fresh_id() };
    let me = Identity::from_launch(args, id, args.join, Hello::new(app, &["task graph"]), None);
    let mut cfg = GraphConfig { replan, emulate_comm, ..GraphConfig::new(nodes, params, unit) };
    // How long the master waits for its nodes: `--join-wait-ms` if given.
    if let Some(ms) = args.join_wait_ms {
        cfg.gather_wait = Duration::from_millis(ms);
    }
    let faults = super::network_faults(id, crate::contract::ChildEnv::current())
        .map_err(|e| RunError::Failed(format!("{}: {e}", crate::contract::NET_FAULTS)))?;
    match node::run(me, cfg, faults, &pool, workflow) {
        node::GraphEnd::Done { run, master } => {
            if master {
                eprintln!("{app}: {MASTER_LINE}");
                crate::contract::Report::Master.tell();
            }
            Ok(Ended::Returned { value: run, shows: master })
        }
        node::GraphEnd::Failed(why) => Err(RunError::Failed(why)),
    }
}

/// The workflow on threads of this process, one per processor.
fn on_threads(args: &Launch, workflow: &Workflow, params: FtParams, unit: Duration) -> Result<WorkflowRun, String> {
    let cores = std::thread::available_parallelism().map_or(2, |c| c.get());
    let procs = args.workers.map_or(cores, |w| w as usize).max(2);
    let schedule = ft_schedule(workflow.graph(), procs, params);
    match workflow.run_threads(&schedule, unit, None) {
        Ok(r) => Ok(WorkflowRun {
            outputs: r.outputs.into_iter().map(Some).collect(),
            tasks_completed: workflow.graph().len(),
            tasks_total: workflow.graph().len(),
            makespan: r.elapsed,
            planned: unit.mul_f64(schedule.makespan()),
            procs,
            duplicates_completed: r.duplicates_completed,
            crashed: Vec::new(),
            replanned: false,
        }),
        Err(e) => Err(e.to_string()),
    }
}
