//! One node of a task-graph run as a state machine without I/O, as
//! `satin-proto`'s `Node` is for divide-and-conquer runs: the real driver
//! (`satin-net`'s workflow node) and the simulator (`satin-sim`'s `graph`)
//! feed it the same inputs and carry out the same actions.
//!
//! - Inputs: [`GraphNode::start`], [`handle_message`](GraphNode::handle_message),
//!   [`handle_linked`](GraphNode::handle_linked) (a connection this node
//!   opened is up), [`handle_peer_lost`](GraphNode::handle_peer_lost),
//!   [`handle_task_ran`](GraphNode::handle_task_ran) (its worker finished
//!   or aborted an item) and [`handle_timeout`](GraphNode::handle_timeout).
//! - Outputs: [`poll_action`](GraphNode::poll_action) ([`Action`]: send,
//!   run an item, abort it, news for the log, the end) and
//!   [`poll_timeout`](GraphNode::poll_timeout) (when to call
//!   `handle_timeout`: the planned start of the next item, an input in
//!   after its edge's cost, the clocks' start, the master's wait for
//!   `Ready`, the give-up of a run where nothing moves).
//!
//! The rules live in four files: how a run starts (`start.rs`: `Join`,
//! `Start`, `Ready`, `Go`, the plan's digest), how it goes (`progress.rs`:
//! finished copies, the next item, the give-up), what a crash changes
//! (`recovery.rs`: duplicates take over, news relayed, the rest replanned,
//! outputs asked for) and how a node's part ends (`ending.rs`: the results
//! in, it waits until every live node has them).
//!
//! Time ([`Time`]) is nanoseconds on a clock every node shares: wall-clock
//! time in real runs (the clocks start at the same wall-clock moment on
//! every node, which assumes clocks kept in step), virtual time in the
//! simulator. The plan counts in units of planned cost since the start.

mod ending;
mod msg;
mod progress;
mod recovery;
mod run;
mod start;
#[cfg(test)]
mod tests;

use std::collections::{HashSet, VecDeque};
use std::time::Duration;

pub use msg::GraphMsg;
pub use run::WorkflowRun;

use super::ft::{FtParams, FtSchedule};
use super::graph::{TaskGraph, TaskId};
use super::processor::{Item, Processor};

/// Nanoseconds on the clock the nodes share.
pub type Time = u64;
/// A node's id (the master is [`MASTER`]; joiners draw theirs at random).
pub type NodeId = u64;
/// The master's id.
pub const MASTER: NodeId = 0;

/// How a task-graph run goes.
#[derive(Debug, Clone, PartialEq)]
pub struct GraphConfig {
    /// How many nodes the master waits for before it starts the run
    /// (itself included; unused on a joiner).
    pub nodes: usize,
    /// The fault-tolerant schedule's timing (slack, abort delay).
    pub params: FtParams,
    /// How long one unit of planned cost lasts.
    pub unit: Duration,
    /// After a crash the lowest live node replans the rest of the run (see
    /// `recovery.rs` for when).
    pub replan: bool,
    /// An output from another node counts as in only its edge's planned
    /// communication cost after it ended there: for synthetic tasks, whose
    /// data is too small to take that long.
    pub emulate_comm: bool,
    /// From `Go` to the start of the clocks: time for it to reach every
    /// node (one more millisecond per node is added).
    pub go_lead: Duration,
    /// The master starts the clocks this long after the plan even if some
    /// node never said it is ready (it may have died: the run finds out).
    pub ready_wait: Duration,
    /// The master waits this long for its `nodes` nodes; then it starts
    /// with those it has (two at least: a duplicate runs on another node)
    /// or fails in words.
    pub gather_wait: Duration,
    /// A run where nothing moved for ten times the planned makespan, and
    /// at least this long, fails in words.
    pub min_give_up: Duration,
}

impl GraphConfig {
    /// `nodes` nodes, default timing, replanning, real communication.
    pub fn new(nodes: usize, params: FtParams, unit: Duration) -> GraphConfig {
        GraphConfig {
            nodes,
            params,
            unit,
            replan: true,
            emulate_comm: false,
            go_lead: Duration::from_millis(20),
            ready_wait: Duration::from_secs(10),
            gather_wait: Duration::from_secs(60),
            min_give_up: Duration::from_secs(10),
        }
    }
}

/// What the node asks its driver to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Send `msg` to node `to`.
    Send {
        /// The node.
        to: NodeId,
        /// The message.
        msg: GraphMsg,
    },
    /// Run `item` on the worker (one at a time): its task's function on
    /// `inputs`, then the rest of `planned` (the work a synthetic task
    /// stands for), abortable; report with `handle_task_ran`.
    Run {
        /// The item.
        item: Item,
        /// Its inputs' outputs, in the order its task names them.
        inputs: Vec<Vec<u8>>,
        /// How long the plan has it take.
        planned: Duration,
    },
    /// Stop the running item (of this task) at once.
    Abort {
        /// The running item's task.
        task: TaskId,
    },
    /// News for the log and the trace.
    Event(GraphEvent),
    /// This node's part is over with the results (and no live node
    /// waits for them any more). `master`: this node is the live one with
    /// the lowest processor number, which shows the results.
    Done {
        /// How it went.
        run: WorkflowRun,
        /// This node shows the results.
        master: bool,
    },
    /// This node's part ended without the results.
    Failed {
        /// Why, in words.
        why: String,
    },
}

/// How a peer was lost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Loss {
    /// Its process ended (its supervisor saw it): every node hears so.
    Ended,
    /// It closed its connections in order: it is through with the run.
    Closed,
    /// Its connection failed (`reason`): it may be dead, or only cut off
    /// from this node while others still hear from it.
    Unreachable {
        /// What the connection said.
        reason: String,
    },
}

impl std::fmt::Display for Loss {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Loss::Ended => f.write_str("its process ended"),
            Loss::Closed => f.write_str("it closed its connection"),
            Loss::Unreachable { reason } => f.write_str(reason),
        }
    }
}

/// What happened, for the log and the trace.
#[derive(Debug, Clone, PartialEq)]
pub enum GraphEvent {
    /// The clocks start at `at` (draw the plan from [`GraphNode::schedule`]).
    ClocksStart {
        /// The start.
        at: Time,
    },
    /// A processor is down; its duplicates take over.
    ProcessorDown {
        /// The processor.
        proc: usize,
        /// Its node.
        node: NodeId,
        /// Why it is taken for down.
        reason: String,
    },
    /// This node replanned the rest of the run.
    Replanned {
        /// When the new plan ends (units).
        makespan: f64,
        /// When the duplicates would end (units; infinite: never).
        with_duplicates: f64,
        /// Every node follows the new plan (it ends sooner, or nothing
        /// else is left to follow).
        followed: bool,
    },
    /// This node follows a new plan from now on.
    NewPlan,
    /// This node asks the others for a task's output: its data went
    /// elsewhere.
    AskedFor {
        /// The task.
        task: TaskId,
    },
    /// The master started with fewer nodes than it waited for.
    StartedShort {
        /// The nodes it has.
        have: usize,
        /// The nodes it waited for.
        wanted: usize,
    },
    /// A message named tasks or processors this run does not have.
    Ignored {
        /// Which message.
        what: &'static str,
    },
}

/// The run as this node plays it, from the plan on.
#[derive(Debug)]
struct Plan {
    schedule: FtSchedule,
    processor: Processor,
    roster: Vec<NodeId>,
    /// This node's processor.
    me: usize,
    /// When the clocks start (`None`: no `Go` yet).
    started: Option<Time>,
    /// When the plan was made here.
    made: Time,
    /// For each processor that crashed, when that became known here.
    down: Vec<Option<f64>>,
    /// For each finished task, where its first copy ended and when that
    /// became known here.
    finished: Vec<Option<(usize, f64)>>,
    /// The processors down when the plan followed now was made (`None`:
    /// the first plan, with its duplicates).
    epoch: Option<u32>,
    /// The finished copies heard of: (task, processor).
    heard: HashSet<(TaskId, usize)>,
    /// Before the clocks run: the nodes this one has a connection to, and
    /// (on the master) the nodes that said they have one to every other.
    linked: HashSet<NodeId>,
    ready: HashSet<NodeId>,
    said_ready: bool,
}

/// One node of a task-graph run (see the module's documentation).
#[derive(Debug)]
pub struct GraphNode {
    id: NodeId,
    graph: TaskGraph,
    cfg: GraphConfig,
    /// A joiner (not the master).
    joiner: bool,
    /// The latest time an input brought.
    now: Time,
    /// The master's members before the start, itself first.
    members: Vec<NodeId>,
    /// Until when the master waits for them.
    gather_until: Option<Time>,
    plan: Option<Plan>,
    outputs: Vec<Option<Vec<u8>>>,
    /// The item the worker runs.
    running: Option<Item>,
    duplicates_completed: usize,
    last_progress: Time,
    /// Tasks this node asked the others for.
    asked: HashSet<TaskId>,
    /// Tasks others asked for that this node has not seen finish yet, and
    /// who asked.
    wanted: Vec<(TaskId, NodeId)>,
    /// The nodes that said they have the results.
    peers_ended: HashSet<NodeId>,
    /// The results are in here; the others are waited for.
    linger: Option<ending::Linger>,
    ended: bool,
    actions: VecDeque<Action>,
}

impl GraphNode {
    /// The master of a run of `graph`: it waits for `cfg.nodes` nodes.
    pub fn master(graph: TaskGraph, cfg: GraphConfig) -> GraphNode {
        GraphNode::new(MASTER, false, graph, cfg)
    }

    /// Node `id`, which joins the master's run.
    pub fn joiner(id: NodeId, graph: TaskGraph, cfg: GraphConfig) -> GraphNode {
        GraphNode::new(id, true, graph, cfg)
    }

    fn new(id: NodeId, joiner: bool, graph: TaskGraph, cfg: GraphConfig) -> GraphNode {
        GraphNode {
            id,
            outputs: vec![None; graph.len()],
            graph,
            cfg,
            joiner,
            now: 0,
            members: vec![id],
            gather_until: None,
            plan: None,
            running: None,
            duplicates_completed: 0,
            last_progress: 0,
            asked: HashSet::new(),
            wanted: Vec::new(),
            peers_ended: HashSet::new(),
            linger: None,
            ended: false,
            actions: VecDeque::new(),
        }
    }

    /// The node starts: a joiner asks the master in, a master alone in its
    /// run starts it.
    pub fn start(&mut self, now: Time) {
        self.now = self.now.max(now);
        if self.joiner {
            self.send(MASTER, GraphMsg::Join);
        } else {
            self.gather_until = Some(now + nanos(self.cfg.gather_wait));
            self.maybe_start(now);
        }
        self.step(now);
    }

    /// `msg` came from node `from`.
    pub fn handle_message(&mut self, now: Time, from: NodeId, msg: GraphMsg) {
        self.input(now, |node| node.on_message(now, from, msg));
    }

    fn on_message(&mut self, now: Time, from: NodeId, msg: GraphMsg) {
        match msg {
            GraphMsg::Join => self.on_join(now, from),
            GraphMsg::Start { roster, digest } => {
                if self.plan.is_none() && from == MASTER {
                    self.begin(now, roster, Some(digest));
                }
            }
            GraphMsg::Ready => self.on_ready(from),
            GraphMsg::Go { at } => {
                if from == MASTER {
                    self.go(now, at);
                }
            }
            GraphMsg::Full => self.fail("the run had started without this node: a static schedule takes no joiners"),
            GraphMsg::Finished { task, proc, original, end, output } => {
                self.on_finished(now, task as usize, proc as usize, original, end, output)
            }
            GraphMsg::Replan { epoch, placements } => self.apply_replan(now, epoch, &placements),
            GraphMsg::Ended => self.on_ended(from),
            GraphMsg::Need { task } => self.on_need(from, task),
        }
    }

    /// A connection this node opened to `id` is up.
    pub fn handle_linked(&mut self, now: Time, id: NodeId) {
        self.now = self.now.max(now);
        self.on_linked(id);
        self.step(now);
    }

    /// Node `id` is gone to this node, as `loss` says.
    pub fn handle_peer_lost(&mut self, now: Time, id: NodeId, loss: Loss) {
        self.input(now, |node| node.peer_lost(now, id, loss));
    }

    /// The worker ran `item` to its end (`output`) or stopped it on an
    /// abort (`None`).
    pub fn handle_task_ran(&mut self, now: Time, item: Item, output: Option<Vec<u8>>) {
        self.input(now, |node| node.on_ran(now, item, output));
    }

    /// The time [`poll_timeout`](Self::poll_timeout) named has come.
    pub fn handle_timeout(&mut self, now: Time) {
        self.input(now, |_| {});
    }

    /// Every input: the clock moves on; a node whose part ended takes
    /// nothing; after the input, what moves the run on (`step`).
    fn input(&mut self, now: Time, take: impl FnOnce(&mut GraphNode)) {
        self.now = self.now.max(now);
        if self.ended {
            return;
        }
        take(self);
        self.step(now);
    }

    /// The next thing to do, if any.
    pub fn poll_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    /// When to call [`handle_timeout`](Self::handle_timeout) unless an
    /// input comes first; `None`: only an input can change anything.
    pub fn poll_timeout(&self) -> Option<Time> {
        if self.ended {
            return None;
        }
        if let Some(deadline) = self.linger_deadline() {
            return Some(deadline);
        }
        let Some(plan) = self.plan.as_ref() else {
            return self.gather_until; // the master's wait for its nodes
        };
        let Some(started) = plan.started else {
            // The master's wait for `Ready` ends at the latest here.
            return (!self.joiner).then(|| plan.made + nanos(self.cfg.ready_wait));
        };
        if started > self.now {
            return Some(started);
        }
        let give_up = self.last_progress + self.give_up_after();
        if self.running.is_some() {
            return Some(give_up); // the worker's report comes first, unless it hangs
        }
        let wake = plan.processor.wake_at(&self.graph, self.units(self.now)).map(|u| self.at_units(u));
        Some(wake.map_or(give_up, |w| w.min(give_up)))
    }

    /// Whether this node's part is over (`Done` or `Failed` given).
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// This node's id.
    pub fn id(&self) -> NodeId {
        self.id
    }

    /// The schedule and this node's processor in it, once the plan is made.
    pub fn schedule(&self) -> Option<(&FtSchedule, usize)> {
        self.plan.as_ref().map(|p| (&p.schedule, p.me))
    }

    /// The node of each processor, once the plan is made.
    pub fn roster(&self) -> Option<&[NodeId]> {
        self.plan.as_ref().map(|p| p.roster.as_slice())
    }

    /// The task graph.
    pub fn graph(&self) -> &TaskGraph {
        &self.graph
    }

    /// What moves the run on after every input: the master's `Go`, the
    /// next item, the results, the give-up.
    fn step(&mut self, now: Time) {
        if self.ended {
            return;
        }
        if self.lingering() {
            return self.maybe_end(now);
        }
        self.maybe_start(now);
        self.maybe_go(now);
        self.start_next(now);
        self.check_results(now);
        if !self.lingering() {
            self.check_stalled(now);
        }
    }

    fn send(&mut self, to: NodeId, msg: GraphMsg) {
        self.actions.push_back(Action::Send { to, msg });
    }

    fn event(&mut self, e: GraphEvent) {
        self.actions.push_back(Action::Event(e));
    }

    fn fail(&mut self, why: impl Into<String>) {
        if !self.ended {
            self.ended = true;
            self.actions.push_back(Action::Failed { why: why.into() });
        }
    }

    /// Sends `msg` to every live node of the roster but this one.
    fn tell_all(&mut self, msg: GraphMsg) {
        let Some(plan) = &self.plan else { return };
        let peers: Vec<NodeId> = (0..plan.roster.len())
            .filter(|&p| p != plan.me && plan.down[p].is_none())
            .map(|p| plan.roster[p])
            .collect();
        for id in peers {
            self.send(id, msg.clone());
        }
    }

    /// `now` in units of planned cost since the start (0 before it).
    fn units(&self, now: Time) -> f64 {
        let started = self.plan.as_ref().and_then(|p| p.started);
        started.map_or(0.0, |s| now.saturating_sub(s) as f64 / nanos(self.cfg.unit).max(1) as f64)
    }

    /// The time at `units` after the start (just after: the rounding never
    /// wakes a node before the moment it waits for).
    fn at_units(&self, units: f64) -> Time {
        let started = self.plan.as_ref().and_then(|p| p.started).unwrap_or(self.now);
        started + (units.max(0.0) * nanos(self.cfg.unit) as f64).ceil() as Time + 1
    }

    /// A run where nothing moves this long fails.
    fn give_up_after(&self) -> Time {
        let makespan = self.plan.as_ref().map_or(0.0, |p| p.schedule.makespan());
        nanos(self.cfg.unit.mul_f64(10.0 * makespan).max(self.cfg.min_give_up))
    }
}

/// A duration in nanoseconds (saturating).
fn nanos(d: Duration) -> Time {
    d.as_nanos().min(Time::MAX as u128) as Time
}
