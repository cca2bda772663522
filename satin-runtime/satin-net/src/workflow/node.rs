//! One node of a task-graph run: its event loop. The master waits for the
//! other nodes, hands out processor numbers and starts the run; every node
//! then makes the same fault-tolerant schedule, drives its processor's
//! state machine ([`Processor`]) from what it hears — finished copies, with
//! the outputs it needs, and peers' deaths — and gives its worker thread
//! the items it says to start. The run is over on a node once every task
//! has a finished copy and the workflow's results are in.

use std::collections::HashSet;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver};
use tracing::warn;

use super::msg::GraphMsg;
use super::worker::{self, Abort, TaskRan, Work};
use super::WorkflowRun;
use crate::conn::Link;
use crate::node_io::{block_on, Identity, NodeIo, CONTACT};
use crate::supervise::{read_orders, Order};
use crate::tls::Pool;
use crate::trace::Trace;
use satin_dag::processor::{Item, Processor};
use satin_dag::{FtParams, FtSchedule, TaskId, Workflow};
use satin_proto::NodeId;

/// The master's id; joiners draw theirs at random.
pub(super) const MASTER: NodeId = 0;

/// Who this node is and how the run goes.
pub(super) struct Spec {
    pub(super) me: Identity,
    /// How many nodes the master waits for before it starts the run.
    pub(super) nodes: usize,
    pub(super) params: FtParams,
    /// How long one unit of planned cost takes.
    pub(super) unit: Duration,
    /// Outputs from another node count as in only an edge's planned
    /// communication cost after they arrived (synthetic tasks, whose data
    /// is too small to take that long).
    pub(super) emulate_comm: bool,
    /// After a crash, reschedule the rest when that ends sooner than
    /// continuing with the duplicates.
    pub(super) replan: bool,
}

/// How one node's run ended.
pub(super) enum GraphEnd {
    Done { run: WorkflowRun, master: bool },
    Failed(String),
}

pub(super) enum GraphInput {
    Link(Link<GraphMsg>),
    /// The supervisor saw the process of the node at this address end.
    Gone(SocketAddr),
    TaskRan(TaskRan),
}

impl From<Link<GraphMsg>> for GraphInput {
    fn from(l: Link<GraphMsg>) -> GraphInput {
        GraphInput::Link(l)
    }
}

/// The run as this node plays it, from the start on.
pub(super) struct Plan {
    pub(super) schedule: FtSchedule,
    pub(super) processor: Processor,
    pub(super) roster: Vec<NodeId>,
    /// This node's processor.
    pub(super) me: usize,
    pub(super) started: Instant,
    /// For each processor that crashed, when that became known here.
    pub(super) down: Vec<Option<f64>>,
    /// For each finished task, where its first copy ended and when that
    /// became known here.
    pub(super) finished: Vec<Option<(usize, f64)>>,
    /// The rest of the run was replanned after a crash.
    pub(super) replanned: bool,
    /// The finished copies heard of: (task, processor).
    pub(super) heard: HashSet<(TaskId, usize)>,
    /// Before the clocks run: the nodes this one has a connection to, and
    /// (on the master) the nodes that said they have one to every other.
    pub(super) linked: HashSet<NodeId>,
    pub(super) ready: HashSet<NodeId>,
    pub(super) said_ready: bool,
    /// When the master made the plan (it starts the clocks at the latest
    /// a while after).
    pub(super) made: Instant,
}

pub(super) struct GraphDriver<'w> {
    pub(super) spec: Spec,
    pub(super) workflow: &'w Workflow,
    pub(super) io: NodeIo<GraphMsg, GraphInput>,
    /// The master's members before the start, itself first.
    pub(super) members: Vec<NodeId>,
    pub(super) plan: Option<Plan>,
    pub(super) outputs: Vec<Option<Vec<u8>>>,
    pub(super) running: Option<(Item, Abort)>,
    pub(super) work: std::sync::mpsc::Sender<Work>,
    pub(super) duplicates_completed: usize,
    pub(super) last_progress: Instant,
    pub(super) end: Option<GraphEnd>,
    pub(super) trace: Option<Trace>,
    /// Outputs this node asked the others for.
    pub(super) asked: HashSet<TaskId>,
}

/// Runs one node to the end of the run. Blocks the calling thread.
pub(super) fn run(spec: Spec, pool: &Pool, workflow: &Workflow) -> GraphEnd {
    let (input_tx, input) = unbounded_channel::<GraphInput>();
    let (work_tx, work_rx) = std::sync::mpsc::channel::<Work>();
    std::thread::scope(|scope| {
        let ran_tx = input_tx.clone();
        scope.spawn(move || {
            worker::run(workflow, work_rx, |ran| {
                let _ = ran_tx.send(GraphInput::TaskRan(ran));
            })
        });
        // The worker ends when `work_tx` (in the driver) is dropped.
        block_on(drive(spec, pool, workflow, input_tx, input, work_tx)).unwrap_or_else(GraphEnd::Failed)
    })
}

async fn drive(
    mut spec: Spec,
    pool: &Pool,
    workflow: &Workflow,
    input_tx: tokio::sync::mpsc::UnboundedSender<GraphInput>,
    mut input: UnboundedReceiver<GraphInput>,
    work: std::sync::mpsc::Sender<Work>,
) -> GraphEnd {
    let inputs = crate::conn::Inputs { urgent: input_tx.clone(), ordinary: input_tx.clone() };
    let mut io = match NodeIo::open(pool, &mut spec.me, None, true, inputs, None) {
        Ok(io) => io,
        Err(e) => return GraphEnd::Failed(e),
    };
    if spec.me.contact.is_some() {
        io.net.send(CONTACT, GraphMsg::Join);
    }
    if spec.me.supervised {
        let tx = input_tx.clone();
        read_orders(move |order| match order {
            Order::Gone(addr) => tx.send(GraphInput::Gone(addr)).is_ok(),
            // Slow and failing nodes are the divide-and-conquer runtime's.
            Order::Slow(_) | Order::Fail(_) | Order::Net(_) | Order::Roster(_) | Order::Over => true,
        });
    }
    let label = spec.me.label.clone();
    let trace =
        spec.me.trace.clone().map(|p| Trace::new(p, label.parse().unwrap_or(spec.me.id), &format!("node {label}")));
    let mut d = GraphDriver {
        members: vec![spec.me.id],
        spec,
        workflow,
        io,
        plan: None,
        outputs: vec![None; workflow.graph().len()],
        running: None,
        work,
        duplicates_completed: 0,
        last_progress: Instant::now(),
        end: None,
        trace,
        asked: HashSet::new(),
    };
    d.maybe_start();
    loop {
        d.maybe_go();
        d.start_next();
        d.check_over();
        if d.end.is_some() {
            break;
        }
        tokio::select! {
            got = input.recv() => match got {
                Some(got) => d.on_input(got),
                None => break,
            },
            _ = tokio::time::sleep(d.sleep_for()) => {}
        }
    }
    let end = d.end.take().unwrap_or_else(|| GraphEnd::Failed("the node's inputs ended".into()));
    if let Some(t) = &d.trace {
        if let Err(e) = t.write() {
            warn!("cannot write the trace: {e}");
        }
    }
    d.io.close().await;
    end
}

impl GraphDriver<'_> {
    /// The id a peer's messages come from, with the contact's stand-in
    /// taken for the master.
    pub(super) fn who(id: NodeId) -> NodeId {
        if id == CONTACT {
            MASTER
        } else {
            id
        }
    }

    /// Where to send to `id`: a joiner reaches the master on the
    /// connection it opened to its contact.
    pub(super) fn route(&self, id: NodeId) -> NodeId {
        if id == MASTER && self.spec.me.contact.is_some() {
            CONTACT
        } else {
            id
        }
    }

    pub(super) fn fail(&mut self, why: String) {
        if self.end.is_none() {
            self.end = Some(GraphEnd::Failed(why));
        }
    }

    fn on_input(&mut self, got: GraphInput) {
        match got {
            GraphInput::Link(Link::Hello { id, addr, label, conn }) => {
                self.io.net.hello(id, addr, label, conn);
                if self.spec.me.contact.is_none() && id != MASTER {
                    if self.plan.is_some() {
                        self.io.net.send(id, GraphMsg::Full);
                    } else if !self.members.contains(&id) {
                        self.members.push(id);
                        self.maybe_start();
                    }
                }
            }
            GraphInput::Link(Link::Linked { id, conn }) => {
                self.io.net.linked(id, conn);
                self.on_linked(id);
            }
            GraphInput::Link(Link::Closed { .. }) => {}
            GraphInput::Link(Link::Addr { id, addr, label }) => {
                self.io.net.addrs.insert(id, addr);
                self.io.net.learn(id, addr, label);
            }
            GraphInput::Link(Link::Message { from, msg }) => self.on_message(Self::who(from), msg),
            GraphInput::Link(Link::PeerDown { id, reason, .. }) => self.peer_lost(Self::who(id), &reason),
            GraphInput::Gone(addr) => {
                let gone: Vec<NodeId> =
                    self.io.net.addrs.iter().filter(|(_, a)| **a == addr).map(|(id, _)| Self::who(*id)).collect();
                for id in gone {
                    self.peer_lost(id, "its process ended");
                }
            }
            GraphInput::TaskRan(ran) => self.on_ran(ran),
        }
    }

    fn on_message(&mut self, from: NodeId, msg: GraphMsg) {
        match msg {
            GraphMsg::Join => {}
            GraphMsg::Start { roster, digest } => {
                if self.plan.is_none() && from == MASTER {
                    self.begin(roster, Some(digest));
                }
            }
            GraphMsg::Ready => self.on_ready(from),
            GraphMsg::Go { at } => {
                if from == MASTER {
                    self.go(at);
                }
            }
            GraphMsg::Full => {
                self.fail("the run had started without this node: a static schedule takes no joiners".into())
            }
            GraphMsg::Finished { task, proc, original, end, output } => {
                self.on_finished(task as usize, proc as usize, original, end, output)
            }
            GraphMsg::Replan { placements } => self.apply_replan(&placements),
            GraphMsg::Need { task } => {
                if let Some(output) = self.outputs.get(task as usize).cloned().flatten() {
                    let to = self.route(from);
                    self.io.net.send(to, GraphMsg::Output { task, output });
                }
            }
            GraphMsg::Output { task, output } => {
                if let Some(slot) = self.outputs.get_mut(task as usize) {
                    slot.get_or_insert(output);
                }
            }
        }
    }

    /// Has the run's clock started?
    pub(super) fn running_clock(&self) -> bool {
        self.plan.as_ref().is_some_and(|p| Instant::now() >= p.started)
    }

    /// Time since the start, in units of planned cost.
    pub(super) fn now(&self) -> f64 {
        self.plan.as_ref().map_or(0.0, |p| p.started.elapsed().as_secs_f64() / self.spec.unit.as_secs_f64())
    }

    fn on_finished(&mut self, task: TaskId, proc: usize, original: bool, end: f64, output: Option<Vec<u8>>) {
        let now = self.now();
        let tasks = self.workflow.graph().len();
        let Some(plan) = &mut self.plan else { return };
        if task >= tasks || proc >= plan.down.len() {
            warn!("news of task {task} on processor {proc}, which this run does not have; ignored");
            return;
        }
        if !plan.heard.insert((task, proc)) {
            // Passed on again after a crash: only its output may be new.
            if let Some(out) = output {
                self.outputs[task].get_or_insert(out);
            }
            return;
        }
        if plan.down[proc].is_some() {
            // News from a processor already given up, late: pass it on as
            // the others were passed on when its death became known.
            let relay =
                GraphMsg::Finished { task: task as u32, proc: proc as u32, original, end, output: output.clone() };
            self.tell_all(relay);
        }
        let Some(plan) = &mut self.plan else { return };
        plan.finished[task].get_or_insert((proc, now));
        if original {
            // How late the run is: this original's end against its plan.
            if let Some(p) = plan.schedule.originals.of(task) {
                plan.processor.running_late(end.min(now) - p.finish);
            }
        }
        let data = output.is_some();
        if let Some(out) = output {
            self.outputs[task].get_or_insert(out);
        }
        if self.spec.emulate_comm && data {
            // As in the plan: in an edge's cost after it ended there (the
            // message's own travel is part of that cost). The clocks of
            // two nodes differ by about the start message's travel.
            let end = if end.is_finite() { end.min(now) } else { now };
            plan.processor.copy_finished(task, proc, end, original);
        } else {
            plan.processor.copy_arrived(task, proc, now, original);
        }
        if !original {
            self.duplicates_completed += 1;
        }
        if let Some((item, abort)) = &self.running {
            if original && item.duplicate && item.task == task {
                abort.raise();
            }
        }
        self.last_progress = Instant::now();
    }

    fn on_ran(&mut self, ran: TaskRan) {
        self.running = None;
        let now = self.now();
        let graph = self.workflow.graph();
        let item = ran.item;
        if let Some(t) = &mut self.trace {
            let what = match (&ran.output, item.duplicate) {
                (None, _) => "aborted duplicate of",
                (Some(_), true) => "duplicate of",
                (Some(_), false) => "",
            };
            let name = format!("{what} {}", graph.name(item.task));
            t.span(name.trim(), satin_core::Ran { worker: 0, start: ran.start, took: ran.took });
        }
        let Some(output) = ran.output else { return };
        let Some(plan) = &mut self.plan else { return };
        plan.finished[item.task].get_or_insert((plan.me, now));
        if let (false, Some(p)) = (item.duplicate, plan.schedule.originals.of(item.task)) {
            plan.processor.running_late(now - p.finish);
        }
        plan.processor.copy_arrived(item.task, plan.me, now, !item.duplicate);
        if item.duplicate {
            self.duplicates_completed += 1;
        }
        let me = plan.me;
        self.outputs[item.task].get_or_insert(output.clone());
        self.tell_all(GraphMsg::Finished {
            task: item.task as u32,
            proc: me as u32,
            original: !item.duplicate,
            end: now,
            output: Some(output),
        });
        self.last_progress = Instant::now();
    }

    /// Sends `msg` to every live node but this one.
    pub(super) fn tell_all(&mut self, msg: GraphMsg) {
        let Some(plan) = &self.plan else { return };
        let peers: Vec<NodeId> = (0..plan.roster.len())
            .filter(|&p| p != plan.me && plan.down[p].is_none())
            .map(|p| plan.roster[p])
            .collect();
        for id in peers {
            let to = self.route(id);
            self.io.net.send(to, msg.clone());
        }
    }

    /// How long to sleep unless news comes: until the processor may have
    /// something to start (a planned start, an input in after its edge's
    /// cost), and at most a second (to notice a stalled run).
    fn sleep_for(&self) -> Duration {
        const HEARTBEAT: Duration = Duration::from_secs(1);
        let Some(plan) = &self.plan else { return HEARTBEAT };
        if !self.running_clock() {
            return plan.started.saturating_duration_since(Instant::now());
        }
        if self.running.is_some() {
            return HEARTBEAT;
        }
        let now = self.now();
        match plan.processor.wake_at(self.workflow.graph(), now) {
            Some(t) => self.spec.unit.mul_f64(t - now).min(HEARTBEAT),
            None => HEARTBEAT,
        }
    }

    /// Gives the worker the next item the processor says to start; a copy
    /// of a task that already finished somewhere is passed over.
    fn start_next(&mut self) {
        if self.running.is_some() || self.end.is_some() || !self.running_clock() {
            return;
        }
        let now = self.now();
        let graph = self.workflow.graph();
        let Some(plan) = &mut self.plan else { return };
        while let Some(item) = plan.processor.next(graph, now) {
            if plan.processor.finished(item.task) {
                continue;
            }
            let missing: Vec<TaskId> =
                graph.preds(item.task).iter().map(|&(u, _)| u).filter(|&u| self.outputs[u].is_none()).collect();
            if !missing.is_empty() {
                // Its inputs are done, but their data is elsewhere (the
                // plan changed after a crash): ask for it, and wait.
                plan.processor.put_back(item);
                self.ask_for(missing);
                return;
            }
            let inputs: Vec<Vec<u8>> =
                graph.preds(item.task).iter().map(|&(u, _)| self.outputs[u].clone().unwrap_or_default()).collect();
            let abort = Abort::default();
            let planned = self.spec.unit.mul_f64(graph.cost(item.task, plan.me));
            let work = Work { item, inputs, planned, abort: abort.clone() };
            if self.work.send(work).is_err() {
                self.fail("the worker thread is gone".into());
                return;
            }
            self.running = Some((item, abort));
            return;
        }
    }

    /// Over when every task has a finished copy and every result is here;
    /// failed when nothing moved for ten times the planned makespan.
    fn check_over(&mut self) {
        let Some(plan) = &self.plan else { return };
        let graph = self.workflow.graph();
        let all = (0..graph.len()).all(|t| plan.processor.finished(t));
        let results_in = self.workflow.exits().iter().all(|&t| self.outputs[t].is_some());
        if all && results_in {
            let master = (0..plan.me).all(|p| plan.down[p].is_some());
            let run = WorkflowRun {
                outputs: self.outputs.clone(),
                tasks_completed: graph.len(),
                tasks_total: graph.len(),
                makespan: plan.started.elapsed(),
                planned: self.spec.unit.mul_f64(plan.schedule.makespan()),
                procs: plan.roster.len(),
                duplicates_completed: self.duplicates_completed,
                crashed: (0..plan.down.len()).filter(|&p| plan.down[p].is_some()).collect(),
                replanned: plan.replanned,
            };
            self.end = Some(GraphEnd::Done { run, master });
            return;
        }
        let give_up = self.spec.unit.mul_f64(10.0 * plan.schedule.makespan()).max(Duration::from_secs(10));
        if self.last_progress.elapsed() > give_up && self.running.is_none() {
            let missing = (0..graph.len()).find(|&t| !plan.processor.finished(t)).unwrap_or(0);
            let waiting: Vec<String> = plan
                .processor
                .remaining()
                .take(4)
                .map(|i| {
                    let ins: Vec<String> = graph
                        .preds(i.task)
                        .iter()
                        .map(|&(u, _)| {
                            let state = match (plan.processor.finished(u), self.outputs[u].is_some()) {
                                (true, true) => "in",
                                (true, false) => "done elsewhere",
                                (false, _) => "not done",
                            };
                            format!("{} {state}", graph.name(u))
                        })
                        .collect();
                    let kind = if i.duplicate { "duplicate of " } else { "" };
                    format!("{kind}{} (inputs: {})", graph.name(i.task), ins.join(", "))
                })
                .collect();
            let why = format!(
                "nothing moved for {give_up:?}: task {} has no copy left on a live node (processors down: {:?}); \
                 next here: {}",
                graph.name(missing),
                (0..plan.down.len()).filter(|&p| plan.down[p].is_some()).collect::<Vec<_>>(),
                if waiting.is_empty() { "nothing".to_string() } else { waiting.join("; ") }
            );
            self.fail(why);
        }
    }
}
