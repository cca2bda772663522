//! How a run starts. The master, once `nodes` nodes are in, makes the
//! plan and sends the roster (`Start`); every node makes the same plan,
//! checks its digest and opens a connection to every other node, then says
//! `Ready`; when all are ready (or down, or after `ready_wait`), the
//! master names a moment a little ahead (`Go`) and every clock starts
//! then. Opening the connections first keeps the handshakes (n² of them)
//! out of the run: a 32-node run started on the roster alone began
//! 60–170 ms late on some nodes.

use std::collections::HashSet;

use super::{nanos, GraphEvent, GraphMsg, GraphNode, NodeId, Plan, Time, MASTER};
use crate::ft::{ft_schedule, FtSchedule};
use crate::graph::TaskGraph;
use crate::processor::Processor;

/// The farthest ahead a `Go` may name: further is a clock out of step.
const GO_HORIZON: Time = 60_000_000_000;

impl GraphNode {
    /// `from` asks to be counted in: before the start the master adds it
    /// (and starts once all are in); after it, a static schedule has no
    /// place for it.
    pub(super) fn on_join(&mut self, now: Time, from: NodeId) {
        if self.joiner || from == self.id {
            return;
        }
        match &self.plan {
            Some(plan) if !plan.roster.contains(&from) => self.send(from, GraphMsg::Full),
            Some(_) => {}
            None => {
                if !self.members.contains(&from) {
                    self.members.push(from);
                }
                self.maybe_start(now);
            }
        }
    }

    /// The master starts the run once every node it waits for is in, or
    /// with those it has at the end of its wait.
    pub(super) fn maybe_start(&mut self, now: Time) {
        if self.joiner || self.plan.is_some() {
            return;
        }
        let (have, wanted) = (self.members.len(), self.cfg.nodes);
        if have < wanted {
            if self.gather_until.is_none_or(|until| now < until) {
                return;
            }
            if have < 2 {
                let waited = self.cfg.gather_wait;
                return self.fail(format!(
                    "no other node of the {wanted} came within {waited:?}: a task-graph run needs at least 2 (a \
                     task's duplicate runs on another node)"
                ));
            }
            self.event(GraphEvent::StartedShort { have, wanted });
        }
        let roster = self.members.clone();
        if let Some(digest) = self.begin(now, roster.clone(), None) {
            for &id in &roster[1..] {
                self.send(id, GraphMsg::Start { roster: roster.clone(), digest });
            }
        }
    }

    /// Makes the plan for `roster` (its clock not started); a joiner checks
    /// its plan against the master's digest and opens its connections.
    /// Returns the plan's digest.
    pub(super) fn begin(&mut self, now: Time, roster: Vec<NodeId>, expected: Option<[u8; 32]>) -> Option<[u8; 32]> {
        let Some(me) = roster.iter().position(|&id| id == self.id) else {
            self.fail("the master started the run without this node");
            return None;
        };
        if roster.len() < 2 {
            self.fail("a task-graph run needs at least 2 nodes: a task's duplicate runs on another node");
            return None;
        }
        let schedule = ft_schedule(&self.graph, roster.len(), self.cfg.params);
        let digest = plan_digest(&self.graph, &schedule);
        if expected.is_some_and(|e| e != digest) {
            self.fail(
                "this node's plan differs from the master's: every node must run the same program on the same \
                 workflow",
            );
            return None;
        }
        let processor = Processor::all_of(&self.graph, &schedule).swap_remove(me);
        let procs = schedule.originals.procs();
        let peers: Vec<NodeId> = roster.iter().copied().filter(|&id| id != self.id && id != MASTER).collect();
        self.plan = Some(Plan {
            schedule,
            processor,
            roster,
            me,
            started: None,
            made: now,
            down: vec![None; procs],
            finished: vec![None; self.graph.len()],
            epoch: None,
            heard: HashSet::new(),
            linked: HashSet::new(),
            ready: HashSet::new(),
            said_ready: false,
        });
        self.last_progress = now;
        // A joiner already has its connection to the master (its contact);
        // the master opened one to each joiner with `Start`.
        if self.joiner {
            for id in peers {
                self.send(id, GraphMsg::Join);
            }
            self.on_linked(MASTER);
        }
        Some(digest)
    }

    /// A connection this node opened is up: a joiner connected to every
    /// other node says it is ready.
    pub(super) fn on_linked(&mut self, id: NodeId) {
        let me = self.id;
        let joiner = self.joiner;
        let Some(plan) = &mut self.plan else { return };
        plan.linked.insert(id);
        let all = plan.roster.iter().all(|&r| r == me || plan.linked.contains(&r));
        if joiner && all && !plan.said_ready {
            plan.said_ready = true;
            self.send(MASTER, GraphMsg::Ready);
        }
    }

    /// The master hears that `from` is ready.
    pub(super) fn on_ready(&mut self, from: NodeId) {
        if let Some(plan) = &mut self.plan {
            plan.ready.insert(from);
        }
    }

    /// The master starts the clocks once every node is ready or down (or
    /// after `ready_wait`).
    pub(super) fn maybe_go(&mut self, now: Time) {
        let me = self.id;
        if self.joiner {
            return;
        }
        let Some(plan) = &self.plan else { return };
        if plan.started.is_some() {
            return;
        }
        let all =
            plan.roster.iter().enumerate().all(|(p, &r)| {
                r == me || plan.down[p].is_some() || (plan.ready.contains(&r) && plan.linked.contains(&r))
            });
        if !all && now < plan.made + nanos(self.cfg.ready_wait) {
            return;
        }
        let lead = self.cfg.go_lead + std::time::Duration::from_millis(plan.roster.len() as u64);
        let at = now + nanos(lead);
        self.tell_all(GraphMsg::Go { at });
        self.go(now, at);
    }

    /// The clocks start at `at` (the same moment on every node), or at
    /// once if that is past.
    pub(super) fn go(&mut self, now: Time, at: Time) {
        let Some(plan) = &mut self.plan else { return };
        if plan.started.is_some() {
            return;
        }
        let at = at.clamp(now, now.saturating_add(GO_HORIZON));
        plan.started = Some(at);
        self.last_progress = at;
        self.event(GraphEvent::ClocksStart { at });
    }
}

/// A digest of the plan: the tasks' names and the schedule.
fn plan_digest(graph: &TaskGraph, schedule: &FtSchedule) -> [u8; 32] {
    let names: Vec<&str> = (0..graph.len()).map(|t| graph.name(t)).collect();
    *blake3::hash(format!("{names:?}{schedule:?}").as_bytes()).as_bytes()
}
