//! Task-graph runs under simulated faults: every node is a real
//! [`GraphNode`] (`satin-dag`'s core, which real task-graph runs drive
//! too), its worker a model that takes each item's planned time (times a
//! `slow` factor), its network a model with latency, delay, loss and cut
//! links (`net.rs`), faults from the fault language `--chaos` reads
//! (`faults.rs`). One seed decides everything.
//!
//! [`run_graph`] plays one run; [`violations`] checks what it must give
//! whatever the faults — every node ends (no task waits forever), every
//! output a node holds or sends is the fault-free one, every task's
//! output is in once on every node that ends the run — and, for faults
//! the schedule is built to survive, that every node whose clocks started
//! and that was not crashed ends with the results. [`random_case`] draws
//! graphs and fault schedules for property tests.

mod check;
mod faults;
mod net;
mod random;

use std::collections::{HashMap, HashSet};

use satin_dag::node::{Action, GraphConfig, GraphEvent, GraphNode, Loss, NodeId};
use satin_dag::processor::Item;
use satin_dag::{ft_schedule, FtParams, TaskGraph, Workflow, WorkflowRun};
use satin_faults::When;
use satin_proto::SplitMix64;

pub use check::violations;
pub use random::{random_case, random_graph, FaultClass, GraphCase};
/// The fault language, as `--chaos` reads it too.
pub use satin_faults::{parse, to_spec, Fault};

use crate::events::EventQueue;
use crate::workload::Nanos;
use net::{Fate, Network, Packet};

/// How a simulated task-graph run goes.
#[derive(Debug, Clone)]
pub struct GraphSimConfig {
    /// Nodes at the start (the master and its joiners).
    pub nodes: usize,
    /// The fault-tolerant schedule's timing.
    pub params: FtParams,
    /// How long one unit of planned cost lasts.
    pub unit: Nanos,
    /// Replan after a crash (as real runs do by default).
    pub replan: bool,
    /// One way, before jitter (up to half as much again).
    pub latency: Nanos,
    /// From a process's end to the others' hearing of it (the supervisor's
    /// notice).
    pub notice: Nanos,
    /// A connection that hears nothing this long is lost.
    pub idle_timeout: Nanos,
    /// The simulation stops here; a node that has not ended by then waits
    /// for ever.
    pub limit: Nanos,
    /// Every random draw.
    pub seed: u64,
    /// Print what each node reports, and its faults, as the run goes (for
    /// replaying one seed).
    pub verbose: bool,
}

impl GraphSimConfig {
    /// `nodes` nodes, a unit of a millisecond, a loopback-like network.
    pub fn new(nodes: usize, seed: u64) -> GraphSimConfig {
        GraphSimConfig {
            nodes,
            params: FtParams::default(),
            unit: 1_000_000,
            replan: true,
            latency: 100_000,
            notice: 5_000_000,
            idle_timeout: 1_000_000_000,
            limit: 3_600_000_000_000,
            seed,
            verbose: false,
        }
    }
}

/// How a simulated node's part ended.
#[derive(Debug, Clone, PartialEq)]
pub enum GraphEnding {
    /// With the results.
    Done {
        /// How the run went, as it saw it.
        run: WorkflowRun,
        /// It was the live node with the lowest processor number.
        master: bool,
    },
    /// Without them, in words.
    Failed(String),
    /// A fault ended its process first.
    Crashed,
    /// Still waiting when the simulation stopped.
    Waiting,
}

/// What a simulated task-graph run gave.
#[derive(Debug, Clone)]
pub struct GraphReport {
    /// How each node ended (joiners that came with a fault after the
    /// first `nodes`).
    pub ends: Vec<GraphEnding>,
    /// Whether each node's clocks started.
    pub clocks_started: Vec<bool>,
    /// Outputs that travelled and differ from the fault-free ones.
    pub wrong_outputs: Vec<String>,
    /// Messages sent.
    pub messages: u64,
    /// When the last node ended (virtual time).
    pub end: Nanos,
    /// Items run to their end, duplicates included.
    pub items_run: u64,
}

enum Ev {
    Start { node: usize },
    Packet { to: usize, from: usize, packet: Packet },
    Ran { node: usize, inst: u64 },
    Timer { node: usize, at: Nanos },
    Lost { node: usize, peer: usize, loss: Loss },
    Fault(usize),
    LinkTimeout { a: usize, b: usize, episode: u64 },
}

struct SimGraphNode {
    core: GraphNode,
    /// Crashed or ended: receives nothing any more.
    gone: bool,
    end: GraphEnding,
    clocks_started: bool,
    /// Its worker's item, numbered, with the output it gives.
    running: Option<(u64, Item, Vec<u8>)>,
    slow: f64,
    wake: Option<Nanos>,
}

struct World<'g> {
    cfg: GraphSimConfig,
    graph: &'g TaskGraph,
    workflow: Workflow,
    want: Vec<Vec<u8>>,
    nodes: Vec<SimGraphNode>,
    ids: HashMap<NodeId, usize>,
    queue: EventQueue<Ev>,
    net: Network,
    rng: SplitMix64,
    faults: Vec<Fault>,
    /// The planned makespan in units (faults at a share of it).
    makespan: f64,
    shares_placed: bool,
    /// Connections opened, (from, to).
    dialled: HashSet<(usize, usize)>,
    /// Nodes told that a peer closed its connections, (node, peer).
    told_closed: HashSet<(usize, usize)>,
    next_inst: u64,
    report: GraphReport,
}

/// Plays one run of `graph` with `faults`; an error if a fault is one a
/// task-graph run has no meaning for (said in words).
pub fn run_graph(graph: &TaskGraph, cfg: &GraphSimConfig, faults: &[Fault]) -> Result<GraphReport, String> {
    faults::check(faults, cfg.nodes)?;
    let workflow = Workflow::synthetic(graph.clone());
    let want = workflow.run_sequential();
    let mut w = World {
        cfg: cfg.clone(),
        graph,
        workflow,
        want,
        nodes: Vec::new(),
        ids: HashMap::new(),
        queue: EventQueue::default(),
        net: Network::new(cfg.latency),
        rng: SplitMix64::new(cfg.seed ^ 0x6A5F),
        faults: faults.to_vec(),
        makespan: ft_schedule(graph, cfg.nodes.max(1), cfg.params).makespan(),
        shares_placed: false,
        dialled: HashSet::new(),
        told_closed: HashSet::new(),
        next_inst: 0,
        report: GraphReport {
            ends: Vec::new(),
            clocks_started: Vec::new(),
            wrong_outputs: Vec::new(),
            messages: 0,
            end: 0,
            items_run: 0,
        },
    };
    for i in 0..cfg.nodes {
        w.add_node();
        // The joiners start a little after one another, as processes do.
        w.queue.push(i as Nanos * 200_000, Ev::Start { node: i });
    }
    for (k, f) in faults.iter().enumerate() {
        if let When::After(at) = f.at {
            w.queue.push(at, Ev::Fault(k));
        }
    }
    w.run();
    w.report.ends = w.nodes.iter().map(|n| n.end.clone()).collect();
    w.report.clocks_started = w.nodes.iter().map(|n| n.clocks_started).collect();
    Ok(w.report)
}

impl World<'_> {
    /// A new node (the first is the master).
    fn add_node(&mut self) {
        let i = self.nodes.len();
        // Ids as real joiners draw them: at random (the master's is 0).
        let id = if i == 0 { 0 } else { (SplitMix64::new(self.cfg.seed ^ i as u64).next_u64() >> 1).max(1) };
        let cfg = GraphConfig {
            replan: self.cfg.replan,
            ..GraphConfig::new(self.cfg.nodes, self.cfg.params, std::time::Duration::from_nanos(self.cfg.unit))
        };
        let core = if i == 0 {
            GraphNode::master(self.graph.clone(), cfg)
        } else {
            GraphNode::joiner(id, self.graph.clone(), cfg)
        };
        self.ids.insert(id, i);
        self.nodes.push(SimGraphNode {
            core,
            gone: false,
            end: GraphEnding::Waiting,
            clocks_started: false,
            running: None,
            slow: 1.0,
            wake: None,
        });
    }

    fn id(&self, i: usize) -> NodeId {
        self.nodes[i].core.id()
    }

    fn run(&mut self) {
        // A bound on events as well as on time: a core that asked to be
        // woken at the same instant for ever would show here.
        let mut budget: u64 = 50_000_000;
        while let Some((t, ev)) = self.queue.pop() {
            if t > self.cfg.limit || budget == 0 {
                break;
            }
            budget -= 1;
            self.step(t, ev);
        }
    }

    fn step(&mut self, t: Nanos, ev: Ev) {
        match ev {
            Ev::Start { node } => {
                self.nodes[node].core.start(t);
                self.pump(t, node);
            }
            Ev::Packet { to, from, packet } => {
                if self.nodes[to].gone {
                    // A process that ended its part closed its connections:
                    // the sender finds out when its packet reaches it.
                    let closed = matches!(self.nodes[to].end, GraphEnding::Done { .. });
                    if closed && !self.nodes[from].gone && self.told_closed.insert((from, to)) {
                        let at = t + self.cfg.latency;
                        self.queue.push(at, Ev::Lost { node: from, peer: to, loss: Loss::Closed });
                    }
                    return;
                }
                let from_id = self.id(from);
                match packet {
                    Packet::Msg(msg) => {
                        self.check_output(from, &msg);
                        self.nodes[to].core.handle_message(t, from_id, msg);
                    }
                    Packet::Linked => self.nodes[to].core.handle_linked(t, from_id),
                }
                self.pump(t, to);
            }
            Ev::Ran { node, inst } => {
                let n = &mut self.nodes[node];
                if n.gone || n.running.as_ref().is_none_or(|(i, ..)| *i != inst) {
                    return;
                }
                let (_, item, output) = n.running.take().expect("checked");
                self.report.items_run += 1;
                n.core.handle_task_ran(t, item, Some(output));
                self.pump(t, node);
            }
            Ev::Timer { node, at } => {
                if self.nodes[node].gone || self.nodes[node].wake != Some(at) {
                    return;
                }
                self.nodes[node].wake = None;
                self.nodes[node].core.handle_timeout(t);
                self.pump(t, node);
            }
            Ev::Lost { node, peer, loss } => {
                if self.nodes[node].gone {
                    return;
                }
                if self.cfg.verbose {
                    eprintln!("{:>12.3} ms  node {node} loses node {peer}: {loss}", t as f64 / 1e6);
                }
                let id = self.id(peer);
                self.nodes[node].core.handle_peer_lost(t, id, loss);
                self.pump(t, node);
            }
            Ev::Fault(k) => {
                if self.cfg.verbose {
                    eprintln!("{:>12.3} ms  fault {}", t as f64 / 1e6, self.faults[k]);
                }
                self.fault(t, k)
            }
            Ev::LinkTimeout { a, b, episode } => {
                if self.net.time_out((a, b), episode) {
                    for (x, y) in [(a, b), (b, a)] {
                        if !self.nodes[x].gone {
                            self.queue.push(t, Ev::Lost { node: x, peer: y, loss: idle_timeout() });
                        }
                    }
                }
            }
        }
    }

    /// Carries out node `i`'s actions and sets its timer.
    fn pump(&mut self, now: Nanos, i: usize) {
        while let Some(action) = self.nodes[i].core.poll_action() {
            match action {
                Action::Send { to, msg } => {
                    if let Some(&to) = self.ids.get(&to) {
                        self.send(now, i, to, Packet::Msg(msg));
                    }
                }
                Action::Run { item, inputs, planned } => {
                    if self.cfg.verbose {
                        eprintln!("{:>12.3} ms  node {i} runs {item:?}", now as f64 / 1e6);
                    }
                    let refs: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
                    let output = self.workflow.run_task(item.task, &refs);
                    self.next_inst += 1;
                    let inst = self.next_inst;
                    let n = &mut self.nodes[i];
                    n.running = Some((inst, item, output));
                    if n.slow.is_finite() {
                        let took = (planned.as_nanos() as f64 * n.slow) as Nanos;
                        self.queue.push(now + took, Ev::Ran { node: i, inst });
                    }
                }
                Action::Abort { task } => {
                    if self.cfg.verbose {
                        eprintln!("{:>12.3} ms  node {i} aborts task {task}", now as f64 / 1e6);
                    }
                    let n = &mut self.nodes[i];
                    if let Some((_, item, _)) = n.running.take_if(|(_, item, _)| item.task == task) {
                        n.core.handle_task_ran(now, item, None);
                    }
                }
                Action::Event(GraphEvent::ClocksStart { at }) => {
                    self.nodes[i].clocks_started = true;
                    self.place_shares(at);
                }
                Action::Event(e) => {
                    if self.cfg.verbose {
                        eprintln!("{:>12.3} ms  node {i}: {e:?}", now as f64 / 1e6);
                    }
                }
                Action::Done { run, master } => self.ended(now, i, GraphEnding::Done { run, master }),
                Action::Failed { why } => self.ended(now, i, GraphEnding::Failed(why)),
            }
        }
        let n = &mut self.nodes[i];
        if n.gone {
            return;
        }
        match n.core.poll_timeout() {
            Some(at) if n.wake != Some(at) => {
                n.wake = Some(at);
                self.queue.push(at.max(now), Ev::Timer { node: i, at });
            }
            Some(_) => {}
            None => n.wake = None,
        }
    }

    fn send(&mut self, now: Nanos, from: usize, to: usize, packet: Packet) {
        self.report.messages += 1;
        if self.nodes[to].gone && self.dialled.insert((from, to)) {
            // A connection to a process that is no more: nobody answers.
            let at = now + self.cfg.idle_timeout;
            self.queue.push(at, Ev::Lost { node: from, peer: to, loss: idle_timeout() });
            return;
        }
        if let Fate::Arrives(at, packet) = self.net.send(now, from, to, packet, &mut self.rng) {
            self.queue.push(at, Ev::Packet { to, from, packet });
            if !self.nodes[to].gone && self.dialled.insert((from, to)) {
                // The first message opens the connection: the dialling end
                // hears the handshake's answer.
                self.queue.push(now + 2 * self.cfg.latency, Ev::Packet { to: from, from: to, packet: Packet::Linked });
            }
        }
    }

    /// Node `i`'s part is over; a failed process's end is seen by the
    /// supervisor, which tells the others (a finished one's is not news).
    fn ended(&mut self, now: Nanos, i: usize, end: GraphEnding) {
        let failed = matches!(end, GraphEnding::Failed(_));
        self.report.end = self.report.end.max(now);
        let n = &mut self.nodes[i];
        n.end = end;
        n.gone = true;
        n.running = None;
        self.net.forget(i, self.nodes.len());
        if failed {
            self.tell_gone(now, i);
        }
    }

    /// The supervisor tells every live node that `i`'s process ended.
    fn tell_gone(&mut self, now: Nanos, i: usize) {
        for j in (0..self.nodes.len()).filter(|&j| j != i && !self.nodes[j].gone) {
            self.queue.push(now + self.cfg.notice, Ev::Lost { node: j, peer: i, loss: Loss::Ended });
        }
    }

    /// Faults at a share of the plan are placed once the clocks start.
    fn place_shares(&mut self, start: Nanos) {
        if self.shares_placed {
            return;
        }
        self.shares_placed = true;
        for (k, f) in self.faults.iter().enumerate() {
            let (s, then) = match f.at {
                When::Share(s) => (s, 0),
                When::ShareThen(s, then) => (s, then),
                When::After(_) => continue,
            };
            let at = start + (s * self.makespan * self.cfg.unit as f64) as Nanos + then;
            self.queue.push(at, Ev::Fault(k));
        }
    }

    /// Records an output that travelled and is not the fault-free one.
    fn check_output(&mut self, from: usize, msg: &satin_dag::GraphMsg) {
        let satin_dag::GraphMsg::Finished { task, output: Some(output), .. } = msg else { return };
        let task = *task as usize;
        if self.want.get(task).is_some_and(|w| w != output) {
            self.report.wrong_outputs.push(format!("node {from} sent a wrong output of task {task}"));
        }
    }
}

/// A connection that heard nothing for the idle timeout.
fn idle_timeout() -> Loss {
    Loss::Unreachable { reason: "no answer within the idle timeout".into() }
}
