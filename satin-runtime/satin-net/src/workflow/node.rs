//! One node of a task-graph run on a real network: the I/O around
//! `satin-dag`'s [`GraphNode`], which decides everything. This driver
//! opens the QUIC endpoint, turns what the links and the supervisor say
//! into the core's inputs, carries out its actions (messages, the worker
//! thread's items and aborts, log lines and the trace) and sleeps until
//! the core's `poll_timeout`.
//!
//! A joiner reaches the master on the connection it opened to its contact
//! ([`CONTACT`]); the core knows the master only as [`MASTER`], so this
//! driver maps the one to the other both ways.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver};
use tracing::{info, warn};

use super::worker::{self, Abort, TaskRan, Work};
use crate::conn::Link;
use crate::contract::{read_orders, Order};
use crate::netfault::Faults;
use crate::node_io::{block_on, Identity, NodeIo, CONTACT};
use crate::tls::Pool;
use crate::trace::Trace;
use satin_dag::node::{Action, GraphConfig, GraphEvent, GraphMsg, GraphNode, Loss, Time, MASTER};
use satin_dag::processor::Item;
use satin_dag::{Workflow, WorkflowRun};
use satin_proto::NodeId;

/// How one node's run ended.
pub(super) enum GraphEnd {
    Done { run: WorkflowRun, master: bool },
    Failed(String),
}

pub(super) enum GraphInput {
    Link(Link<GraphMsg>),
    /// The supervisor saw the process of the node at this address end.
    Gone(SocketAddr),
    /// `--chaos slow`/`hang`: items started from now take this many times
    /// their planned time (infinite: they never end unless aborted).
    Slow(f64),
    TaskRan(TaskRan),
}

impl From<Link<GraphMsg>> for GraphInput {
    fn from(l: Link<GraphMsg>) -> GraphInput {
        GraphInput::Link(l)
    }
}

/// The clock the nodes share: wall-clock nanoseconds since the Unix epoch,
/// read once and carried on by this process's monotonic clock (so that it
/// never steps back while the run goes).
struct SharedClock {
    wall: Time,
    at: Instant,
}

impl SharedClock {
    fn new() -> SharedClock {
        let wall = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as Time);
        SharedClock { wall, at: Instant::now() }
    }

    fn now(&self) -> Time {
        self.wall + self.at.elapsed().as_nanos() as Time
    }

    /// The local instant of shared time `t`.
    fn instant(&self, t: Time) -> Instant {
        match t.checked_sub(self.wall) {
            Some(after) => self.at + Duration::from_nanos(after),
            None => self.at,
        }
    }
}

struct GraphDriver<'w> {
    core: GraphNode,
    joiner: bool,
    unit: Duration,
    clock: SharedClock,
    io: NodeIo<GraphMsg, GraphInput>,
    /// The item on the worker, and its abort flag.
    running: Option<(Item, Abort)>,
    /// Items take this many times their planned time (`--chaos slow`).
    slow: f64,
    work: std::sync::mpsc::Sender<Work>,
    end: Option<GraphEnd>,
    trace: Option<Trace>,
    workflow: &'w Workflow,
}

/// Runs one node to the end of the run. Blocks the calling thread.
pub(super) fn run(
    me: Identity,
    cfg: GraphConfig,
    faults: Option<Arc<Faults>>,
    pool: &Pool,
    workflow: &Workflow,
) -> GraphEnd {
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
        block_on(drive(me, cfg, faults, pool, workflow, input_tx, input, work_tx)).unwrap_or_else(GraphEnd::Failed)
    })
}

#[allow(clippy::too_many_arguments)] // (the channels' ends, passed once)
async fn drive(
    mut me: Identity,
    cfg: GraphConfig,
    faults: Option<Arc<Faults>>,
    pool: &Pool,
    workflow: &Workflow,
    input_tx: tokio::sync::mpsc::UnboundedSender<GraphInput>,
    mut input: UnboundedReceiver<GraphInput>,
    work: std::sync::mpsc::Sender<Work>,
) -> GraphEnd {
    let inputs = crate::conn::Inputs { urgent: input_tx.clone(), ordinary: input_tx.clone() };
    let io = match NodeIo::open(pool, &mut me, faults.clone(), true, inputs, None) {
        Ok(io) => io,
        Err(e) => return GraphEnd::Failed(e),
    };
    if me.supervised {
        let tx = input_tx.clone();
        read_orders(move |order| match order {
            Order::Gone(addr) => tx.send(GraphInput::Gone(addr)).is_ok(),
            Order::Slow(factor) => tx.send(GraphInput::Slow(factor)).is_ok(),
            Order::Net(order) => {
                match faults.as_ref().map(|f| f.apply(&order)) {
                    Some(Err(e)) => warn!("{e}"),
                    None => warn!("network fault order {order:?}, but this node's socket takes none"),
                    Some(Ok(())) => {}
                }
                true
            }
            // The supervisor refuses `fail` and `leave` for task graphs; a
            // graph node ends by itself (it needs neither the roster nor
            // `over`).
            Order::Fail(_) | Order::Leave | Order::Roster(_) | Order::Over => true,
        });
    }
    let trace =
        me.trace.clone().map(|p| Trace::new(p, me.label.parse().unwrap_or(me.id), &format!("node {}", me.label)));
    let joiner = me.contact.is_some();
    let graph = workflow.graph().clone();
    let unit = cfg.unit;
    let core = if joiner { GraphNode::joiner(me.id, graph, cfg) } else { GraphNode::master(graph, cfg) };
    let mut d = GraphDriver {
        core,
        joiner,
        unit,
        clock: SharedClock::new(),
        io,
        running: None,
        slow: 1.0,
        work,
        end: None,
        trace,
        workflow,
    };
    d.core.start(d.clock.now());
    loop {
        d.carry_out();
        if d.end.is_some() {
            break;
        }
        let wake = d.core.poll_timeout().map(|t| d.clock.instant(t));
        tokio::select! {
            got = input.recv() => match got {
                Some(got) => d.on_input(got),
                None => break,
            },
            _ = sleep_until(wake) => d.core.handle_timeout(d.clock.now()),
        }
    }
    // The worker thread is waited for: what it still runs stops now.
    if let Some((_, abort)) = d.running.take() {
        abort.raise();
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

/// Until `wake`, or for ever.
async fn sleep_until(wake: Option<Instant>) {
    match wake {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending().await,
    }
}

impl GraphDriver<'_> {
    /// The id a peer's messages come from, with the contact's stand-in
    /// taken for the master.
    fn who(id: NodeId) -> NodeId {
        if id == CONTACT {
            MASTER
        } else {
            id
        }
    }

    /// Where to send to `id`: a joiner reaches the master on the
    /// connection it opened to its contact.
    fn route(&self, id: NodeId) -> NodeId {
        if id == MASTER && self.joiner {
            CONTACT
        } else {
            id
        }
    }

    fn on_input(&mut self, got: GraphInput) {
        let now = self.clock.now();
        match got {
            GraphInput::Link(Link::Hello { id, addr, label, conn }) => self.io.net.hello(id, addr, label, conn),
            GraphInput::Link(Link::Linked { id, conn }) => {
                self.io.net.linked(id, conn);
                self.core.handle_linked(now, Self::who(id));
            }
            // An orderly close: the peer is through with the run (it ended,
            // or this node cut it). If it had not said it has the results,
            // it is as good as gone.
            GraphInput::Link(Link::Closed { id }) => self.lost(now, Self::who(id), Loss::Closed),
            GraphInput::Link(Link::Addr { id, addr, label }) => {
                self.io.net.addrs.insert(id, addr);
                self.io.net.learn(id, addr, label);
            }
            GraphInput::Link(Link::Message { from, msg }) => self.core.handle_message(now, Self::who(from), msg),
            GraphInput::Link(Link::PeerDown { id, reason, .. }) => {
                self.lost(now, Self::who(id), Loss::Unreachable { reason })
            }
            GraphInput::Gone(addr) => {
                let gone: Vec<NodeId> =
                    self.io.net.addrs.iter().filter(|(_, a)| **a == addr).map(|(id, _)| Self::who(*id)).collect();
                for id in gone {
                    self.lost(now, id, Loss::Ended);
                }
            }
            GraphInput::Slow(factor) => self.slow = factor,
            GraphInput::TaskRan(ran) => {
                self.draw_ran(&ran);
                self.running = None;
                self.core.handle_task_ran(now, ran.item, ran.output);
            }
        }
    }

    /// Node `id` is gone: the core hears of it, and its connections close.
    fn lost(&mut self, now: Time, id: NodeId, loss: Loss) {
        self.core.handle_peer_lost(now, id, loss);
        let route = self.route(id);
        self.io.net.cut(route);
        self.io.net.cut(id);
    }

    /// Carries out what the core asks for.
    fn carry_out(&mut self) {
        while let Some(action) = self.core.poll_action() {
            match action {
                Action::Send { to, msg } => {
                    let to = self.route(to);
                    self.io.net.send(to, msg);
                }
                Action::Run { item, inputs, planned } => {
                    // A hung worker waits a day (or its abort).
                    let planned = planned.mul_f64(self.slow.min(86_400.0 / planned.as_secs_f64().max(1e-9)));
                    let abort = Abort::default();
                    if self.work.send(Work { item, inputs, planned, abort: abort.clone() }).is_err() {
                        self.end.get_or_insert(GraphEnd::Failed("the worker thread is gone".into()));
                        return;
                    }
                    self.running = Some((item, abort));
                }
                Action::Abort { task } => {
                    if let Some((_, abort)) = self.running.as_ref().filter(|(item, _)| item.task == task) {
                        abort.raise();
                    }
                }
                Action::Event(event) => self.note(event),
                Action::Done { run, master } => {
                    self.end.get_or_insert(GraphEnd::Done { run, master });
                }
                Action::Failed { why } => {
                    self.end.get_or_insert(GraphEnd::Failed(why));
                }
            }
        }
    }

    /// What the core reports, in the log and the trace.
    fn note(&mut self, event: GraphEvent) {
        let graph = self.workflow.graph();
        let marker = match event {
            GraphEvent::ClocksStart { at } => {
                if let (Some(t), Some((schedule, me))) = (&mut self.trace, self.core.schedule()) {
                    let start = self.clock.instant(at);
                    super::plan_trace::draw_plan(t, graph, schedule, me, start, self.unit);
                }
                None
            }
            GraphEvent::ProcessorDown { proc, node, reason } => {
                warn!("processor {proc} (node {node}) is down: {reason}; the duplicates of its tasks take over");
                Some(format!("processor {proc} down"))
            }
            GraphEvent::Replanned { makespan, with_duplicates, followed: true } => {
                warn!(
                    "replanned the rest: it ends at {makespan:.0}, the duplicates would at {with_duplicates:.0}; \
                     every node follows the new plan"
                );
                None
            }
            GraphEvent::Replanned { makespan, with_duplicates, followed: false } => {
                warn!(
                    "replanned the rest: it would end at {makespan:.0}, the duplicates at {with_duplicates:.0}; \
                     continuing with the duplicates"
                );
                None
            }
            GraphEvent::NewPlan => Some("the rest replanned".to_string()),
            GraphEvent::AskedFor { task } => {
                info!("asking the others for the news of task {task}: its data went elsewhere, or its processor is out of reach");
                None
            }
            GraphEvent::StartedShort { have, wanted } => {
                warn!("starting with {have} of the {wanted} nodes waited for: the others did not come in time");
                None
            }
            GraphEvent::Ignored { what } => {
                warn!("{what}; ignored");
                None
            }
        };
        if let (Some(t), Some(m)) = (&mut self.trace, marker) {
            t.marker(&m);
        }
    }

    /// The item the worker ran, as a span of the trace.
    fn draw_ran(&mut self, ran: &TaskRan) {
        let Some(t) = &mut self.trace else { return };
        let what = match (&ran.output, ran.item.duplicate) {
            (None, _) => "aborted duplicate of",
            (Some(_), true) => "duplicate of",
            (Some(_), false) => "",
        };
        let name = format!("{what} {}", self.workflow.graph().name(ran.item.task));
        t.span(name.trim(), satin_core::Ran { worker: 0, start: ran.start, took: ran.took });
    }
}
