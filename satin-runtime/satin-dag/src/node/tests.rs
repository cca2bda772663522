//! The graph core driven by hand: messages delivered in a microsecond,
//! items run for their planned time. (The simulator, `satin-sim`'s
//! `graph`, drives it under random fault schedules.)

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Duration;

use super::*;
use crate::graph::Costs;
use crate::workflow::Workflow;

/// A diamond with a tail: a → b, c → d → e.
fn diamond() -> TaskGraph {
    let names = ["a", "b", "c", "d", "e"].map(String::from).to_vec();
    let edges = [(0, 1, 2.0), (0, 2, 2.0), (1, 3, 1.0), (2, 3, 1.0), (3, 4, 1.0)];
    TaskGraph::new(names, Costs::Uniform(vec![4.0, 6.0, 5.0, 3.0, 2.0]), &edges).expect("a graph")
}

const MS: Time = 1_000_000;

enum Ev {
    Msg { to: usize, from: NodeId, msg: GraphMsg },
    Linked { at: usize, peer: NodeId },
    Ran { at: usize, item: Item, output: Vec<u8> },
    Timer { at: usize },
    Lost { at: usize, peer: NodeId },
}

struct Net {
    nodes: Vec<GraphNode>,
    ends: Vec<Option<Action>>,
    dead: Vec<bool>,
    queue: BinaryHeap<Reverse<(Time, u64, usize)>>,
    events: Vec<Option<Ev>>,
    workflow: Workflow,
}

impl Net {
    fn new(n: usize, cfg: impl Fn(usize) -> GraphConfig) -> Net {
        let graph = diamond();
        let nodes = (0..n)
            .map(|i| match i {
                0 => GraphNode::master(graph.clone(), cfg(0)),
                _ => GraphNode::joiner(i as NodeId, graph.clone(), cfg(i)),
            })
            .collect();
        let mut net = Net {
            nodes,
            ends: vec![None; n],
            dead: vec![false; n],
            queue: BinaryHeap::new(),
            events: Vec::new(),
            workflow: Workflow::synthetic(graph),
        };
        for i in 0..n {
            net.nodes[i].start(0);
            net.pump(0, i);
        }
        net
    }

    fn at(&mut self, t: Time, ev: Ev) {
        self.events.push(Some(ev));
        let seq = self.events.len() as u64 - 1;
        self.queue.push(Reverse((t, seq, seq as usize)));
    }

    /// Carries out node `i`'s actions.
    fn pump(&mut self, now: Time, i: usize) {
        while let Some(a) = self.nodes[i].poll_action() {
            match a {
                Action::Send { to, msg } => {
                    // Every send links anew: `handle_linked` is idempotent.
                    self.at(now + 2 * MS, Ev::Linked { at: i, peer: to });
                    self.at(now + MS / 1000, Ev::Msg { to: to as usize, from: i as NodeId, msg })
                }
                Action::Run { item, inputs, planned } => {
                    let refs: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
                    let output = self.workflow.run_task(item.task, &refs);
                    self.at(now + planned.as_nanos() as Time, Ev::Ran { at: i, item, output });
                }
                Action::Abort { .. } | Action::Event(_) => {}
                end @ (Action::Done { .. } | Action::Failed { .. }) => self.ends[i] = Some(end),
            }
        }
        if let Some(t) = self.nodes[i].poll_timeout() {
            self.at(t, Ev::Timer { at: i });
        }
    }

    /// Runs until nothing is left or `until`.
    fn run(&mut self, until: Time) {
        while let Some(Reverse((t, _, k))) = self.queue.pop() {
            if t > until {
                break;
            }
            let Some(ev) = self.events[k].take() else { continue };
            let i = match &ev {
                Ev::Msg { to, .. } => *to,
                Ev::Linked { at, .. } | Ev::Ran { at, .. } | Ev::Timer { at } | Ev::Lost { at, .. } => *at,
            };
            if self.dead[i] {
                continue;
            }
            match ev {
                Ev::Msg { from, msg, .. } if !self.dead[from as usize] => self.nodes[i].handle_message(t, from, msg),
                Ev::Msg { .. } => {}
                Ev::Linked { peer, .. } => self.nodes[i].handle_linked(t, peer),
                Ev::Ran { item, output, .. } => self.nodes[i].handle_task_ran(t, item, Some(output)),
                Ev::Timer { .. } => self.nodes[i].handle_timeout(t),
                Ev::Lost { peer, .. } => self.nodes[i].handle_peer_lost(t, peer, Loss::Ended),
            }
            self.pump(t, i);
        }
    }

    /// Node `i` dies at `t`; the others hear of it a millisecond later.
    fn kill(&mut self, t: Time, i: usize) {
        self.run(t);
        self.dead[i] = true;
        for j in (0..self.nodes.len()).filter(|&j| j != i) {
            self.at(t + MS, Ev::Lost { at: j, peer: i as NodeId });
        }
    }

    fn done(&self, i: usize) -> &WorkflowRun {
        match &self.ends[i] {
            Some(Action::Done { run, .. }) => run,
            other => panic!("node {i} ended as {other:?}"),
        }
    }
}

/// `nodes` nodes, a unit of a millisecond, the clocks a millisecond after `Go`.
fn config_of(nodes: usize) -> GraphConfig {
    GraphConfig {
        go_lead: Duration::from_millis(1),
        ..GraphConfig::new(nodes, FtParams::default(), Duration::from_millis(1))
    }
}

fn config(_: usize) -> GraphConfig {
    config_of(3)
}

#[test]
fn three_nodes_run_the_plan_and_each_holds_the_sequential_results() {
    let mut net = Net::new(3, config);
    net.run(Time::MAX);
    let want = net.workflow.run_sequential();
    for i in 0..3 {
        let run = net.done(i);
        assert_eq!(run.outputs[4].as_ref(), Some(&want[4]), "node {i}");
        assert!(run.outputs.iter().flatten().all(|o| want.contains(o)), "node {i} holds a wrong output");
        assert_eq!(run.tasks_completed, 5);
        assert!(run.crashed.is_empty());
    }
    assert!(matches!(net.ends[0], Some(Action::Done { master: true, .. })));
    assert!(matches!(net.ends[1], Some(Action::Done { master: false, .. })));
}

#[test]
fn a_processor_lost_mid_run_leaves_its_tasks_to_the_others() {
    let mut net = Net::new(3, config);
    net.kill(12 * MS, 0);
    net.run(Time::MAX);
    let want = net.workflow.run_sequential();
    for i in 1..3 {
        let run = net.done(i);
        assert_eq!(run.outputs[4].as_ref(), Some(&want[4]), "node {i}");
        assert_eq!(run.crashed, vec![0]);
    }
    assert!(matches!(net.ends[1], Some(Action::Done { master: true, .. })), "the lowest live node shows it");
}

#[test]
fn two_crashes_leave_the_survivors_the_sequential_results_through_new_plans() {
    let mut net = Net::new(4, |_| config_of(4));
    net.kill(8 * MS, 1);
    net.kill(14 * MS, 2);
    net.run(Time::MAX);
    let want = net.workflow.run_sequential();
    for i in [0, 3] {
        let run = net.done(i);
        assert_eq!(run.outputs[4].as_ref(), Some(&want[4]), "node {i}");
        assert!(run.replanned, "node {i} follows no new plan");
        assert_eq!(run.crashed, vec![1, 2]);
    }
}

#[test]
fn a_joiner_whose_plan_differs_from_the_masters_stops_in_words() {
    let mut net = Net::new(2, |i| {
        let slack = if i == 1 { 5.0 } else { 3.0 };
        GraphConfig { params: FtParams { slack, ..FtParams::default() }, ..config_of(2) }
    });
    net.run(Time::MAX);
    match &net.ends[1] {
        Some(Action::Failed { why }) => assert!(why.contains("plan differs"), "{why}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_joiner_whose_master_goes_before_the_clocks_start_fails_in_words() {
    // Three nodes: the master starts only when all three are in, so a
    // kill at once leaves the joiners waiting for its `Go`.
    let mut net = Net::new(3, config);
    net.kill(0, 0);
    net.run(Time::MAX);
    for i in 1..3 {
        match &net.ends[i] {
            Some(Action::Failed { why }) => assert!(why.contains("master went before the run started"), "{why}"),
            other => panic!("node {i}: {other:?}"),
        }
    }
}

#[test]
fn a_node_that_joins_after_the_start_is_told_the_run_is_full() {
    let mut net = Net::new(2, |_| config_of(2));
    net.run(5 * MS);
    net.nodes.push(GraphNode::joiner(2, diamond(), config(2)));
    net.ends.push(None);
    net.dead.push(false);
    net.nodes[2].start(5 * MS);
    net.pump(5 * MS, 2);
    net.run(Time::MAX);
    match &net.ends[2] {
        Some(Action::Failed { why }) => assert!(why.contains("static schedule takes no joiners"), "{why}"),
        other => panic!("{other:?}"),
    }
    net.done(0);
    net.done(1);
}
