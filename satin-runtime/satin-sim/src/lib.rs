//! Deterministic simulator: many nodes in one process, virtual time,
//! per-link latency and bandwidth, faults from a schedule — all from one
//! seed. Every simulated node is a real [`Node`] (the protocol core real
//! runs use) plus a [`ModelExecutor`] that plays its processor.
//!
//! Each step takes the earliest event (ties in scheduling order), hands it
//! to its node's core or executor, then pumps that node: start work, pass
//! finished jobs to the core, let an idle core steal, carry out its actions.
//!
//! [`graph`] does the same for task-graph runs: every node a real
//! `satin_dag::GraphNode`, under faults of the same language.

#![warn(missing_docs)]

mod config;
mod disk;
mod events;
pub mod exec;
pub mod faults;
pub mod graph;
mod invariants;
mod lifecycle;
mod links;
mod network;
mod report;
pub mod shared;
mod step;
mod summary;
pub mod workload;

use std::collections::{HashMap, HashSet};

pub use config::{Lanes, SimConfig};
pub use disk::SimCheckpoint;
pub use report::Report;
/// The seeded random numbers the simulator draws from (its scenarios too).
pub use satin_proto::SplitMix64;

use events::{Ev, EventQueue};
use exec::ModelExecutor;
use faults::When;
use satin_proto::Node;
use workload::{Nanos, Tree};

struct SimNode<'t> {
    core: Node,
    exec: ModelExecutor<'t>,
    cluster: u32,
    /// Crashed, left, or terminated: receives nothing any more.
    gone: bool,
    crashed: bool,
    /// Crashed without anyone being told.
    silent: bool,
    leaves: u64,
    /// When each leaf executed here started.
    started_at: Vec<Nanos>,
    /// When a timer event for this node is scheduled (the core's
    /// `poll_timeout` when it was last asked).
    wake: Option<Nanos>,
}

impl<'t> SimNode<'t> {
    /// A node that has not run anything yet.
    fn new(core: Node, exec: ModelExecutor<'t>, cluster: u32) -> SimNode<'t> {
        SimNode {
            core,
            exec,
            cluster,
            gone: false,
            crashed: false,
            silent: false,
            leaves: 0,
            started_at: Vec::new(),
            wake: None,
        }
    }
}

struct World<'t> {
    cfg: &'t SimConfig,
    tree: &'t Tree,
    nodes: Vec<SimNode<'t>>,
    queue: EventQueue,
    now: Nanos,
    rng: SplitMix64,
    distinct_leaves: HashSet<u32>,
    /// First time each job's value was broadcast, and by whom.
    published: HashMap<u32, (Nanos, usize)>,
    /// Jobs announced as running (for newer-epoch lookups to wait for):
    /// since when, by whom, of which epoch.
    running: HashMap<u32, (Nanos, usize, u32)>,
    /// (sender, gone node) pairs whose departure the sender will notice.
    noticed: HashSet<(usize, usize)>,
    initial_nodes: usize,
    progress_faults: Vec<usize>,
    /// Latest delivery time per link (kept in order with `fifo_links`;
    /// otherwise only deliveries later than a crash's detection).
    link_clock: HashMap<(usize, usize), Nanos>,
    /// Until when each link's lane is busy sending (`Lanes`): (from, to,
    /// control lane).
    link_busy: HashMap<(usize, usize, bool), Nanos>,
    /// The control lane's `link_clock`.
    control_clock: HashMap<(usize, usize), Nanos>,
    /// When a node last learned of a membership change (a death, a
    /// leave, a join): a home table moves entries then.
    membership_changed: Nanos,
    /// `SATIN_SIM_TRACE_MSGS`: print every message but failed steals.
    trace_msgs: bool,
    disk: Option<disk::Disk>,
    /// Cut links, cut-off nodes, loss.
    net: network::Network,
    /// The answers printed, as log entries (term, index).
    decisions: HashSet<(u32, u64)>,
    /// The machine each node runs on (a process that starts over as a new
    /// node keeps its machine, and its network faults).
    machine: Vec<usize>,
    resuming: bool,
    report: Report,
    finished: bool,
}

/// Runs one simulation to completion.
pub fn run(cfg: &SimConfig) -> Report {
    let tree = Tree::build(&cfg.shape, cfg.mean_leaf_cost, cfg.cost, cfg.seed);
    run_on(cfg, &tree)
}

/// Runs one simulation on a tree built beforehand (sweeps reuse trees).
pub fn run_on(cfg: &SimConfig, tree: &Tree) -> Report {
    let mut w = World {
        cfg,
        tree,
        nodes: Vec::new(),
        queue: EventQueue::default(),
        now: 0,
        rng: SplitMix64::new(cfg.seed),
        distinct_leaves: HashSet::new(),
        published: HashMap::new(),
        running: HashMap::new(),
        noticed: HashSet::new(),
        initial_nodes: cfg.node_count() as usize,
        progress_faults: Vec::new(),
        link_clock: HashMap::new(),
        link_busy: HashMap::new(),
        control_clock: HashMap::new(),
        membership_changed: 0,
        trace_msgs: std::env::var_os("SATIN_SIM_TRACE_MSGS").is_some(),
        disk: cfg.checkpoint.map(disk::Disk::new),
        net: network::Network::default(),
        decisions: HashSet::new(),
        machine: Vec::new(),
        resuming: false,
        report: Report { leaves_needed: tree.leaves(), seed: cfg.seed, ..Report::default() },
        finished: false,
    };
    if let Err(why) = faults::check(&cfg.faults) {
        w.report.failure = Some(why);
        return w.report;
    }
    for (i, f) in cfg.faults.iter().enumerate() {
        match f.at {
            When::After(t) => w.schedule(t, Ev::Fault(i)),
            When::Share(_) | When::ShareThen(..) => w.progress_faults.push(i),
        }
    }
    w.start_nodes();
    while let Some((at, ev)) = w.queue.pop() {
        if w.finished {
            break;
        }
        if at > cfg.time_limit {
            if w.report.answer.is_none() {
                w.report.failure = Some("time limit reached".into());
            }
            break;
        }
        w.now = at;
        w.dispatch(ev);
        w.resume_if_all_gone();
    }
    if !w.finished && std::env::var_os("SATIN_SIM_DEBUG").is_some() {
        for (i, n) in w.nodes.iter().enumerate() {
            eprintln!("node {i} gone {} crashed {}: {}\n    {}", n.gone, n.crashed, n.core.summary(), n.exec.summary());
        }
    }
    if w.report.answer.is_none() && w.report.failure.is_none() {
        w.report.failure = Some("no events left and no answer: the run is stuck".into());
    }
    if cfg.run_to_end {
        w.report.stuck = w.nodes.iter().filter(|n| !n.gone).count() as u64;
    }
    let mut report = std::mem::take(&mut w.report);
    w.sum_up(&mut report);
    w.report = report;
    w.report.result_ok = w.report.failure.is_none() && w.report.answer == Some(tree.answer());
    w.report
}

impl World<'_> {
    fn check_progress(&mut self) {
        let done = self.distinct_leaves.len() as f64 / self.tree.leaves().max(1) as f64;
        let due: Vec<usize> = self
            .progress_faults
            .iter()
            .copied()
            .filter(|&f| matches!(self.cfg.faults[f].at, When::Share(p) | When::ShareThen(p, _) if done >= p))
            .collect();
        if due.is_empty() {
            return;
        }
        self.progress_faults.retain(|f| !due.contains(f));
        for f in due {
            // At this instant, after the current node's step (or that long
            // after it).
            let then = match self.cfg.faults[f].at {
                When::ShareThen(_, then) => then,
                _ => 0,
            };
            self.schedule(self.now + then, Ev::Fault(f));
        }
    }
}
