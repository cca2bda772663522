//! The end of a node's part. Once every result is in here (each depends on
//! every task before it, so every task ran somewhere), the node tells every
//! live node (`Ended`) — one still without the results asks it for them —
//! and lingers: it answers `Need` and relays news of
//! dead processors, until every live node of the roster has said `Ended`
//! too or is down — or the give-up time has passed. Only then does its
//! part end (`Done`). A node cut off for a while thus still gets what it
//! missed: had the others gone at once, what they had sent it would have
//! gone with their processes (a connection's unsent data dies with it).

use std::collections::HashSet;

use super::{Action, GraphMsg, GraphNode, NodeId, Time, WorkflowRun};

/// A node that has the results, waiting for the others to have them.
#[derive(Debug)]
pub(super) struct Linger {
    run: WorkflowRun,
    master: bool,
    since: Time,
}

impl GraphNode {
    /// Once every result is here: lingers (see the module).
    pub(super) fn check_results(&mut self, now: Time) {
        if self.linger.is_some() {
            return self.maybe_end(now);
        }
        let Some(plan) = &self.plan else { return };
        let Some(started) = plan.started else { return };
        let tasks = self.graph.len();
        let results_in = (0..tasks).filter(|&t| self.graph.succs(t).is_empty()).all(|t| self.outputs[t].is_some());
        if !results_in {
            return;
        }
        let run = WorkflowRun {
            outputs: self.outputs.clone(),
            // Every task is one of the results or comes before one.
            tasks_completed: tasks,
            tasks_total: tasks,
            makespan: std::time::Duration::from_nanos(now.saturating_sub(started)),
            planned: self.cfg.unit.mul_f64(plan.schedule.makespan()),
            procs: plan.roster.len(),
            duplicates_completed: self.duplicates_completed,
            crashed: (0..plan.down.len()).filter(|&p| plan.down[p].is_some()).collect(),
            replanned: plan.epoch.is_some(),
        };
        // The live node with the lowest processor number shows the results.
        let master = (0..plan.me).all(|p| plan.down[p].is_some());
        self.linger = Some(Linger { run, master, since: now });
        if let Some(item) = self.running {
            // A duplicate, or an item of a new plan, that is needed no more.
            self.actions.push_back(Action::Abort { task: item.task });
        }
        self.tell_all(GraphMsg::Ended);
        self.maybe_end(now);
    }

    /// `from` has the results. A node still without them asks it for
    /// those it lacks: whatever news it waits for may never come (its
    /// sender died, or took this node for dead while `from` did not).
    pub(super) fn on_ended(&mut self, from: NodeId) {
        self.peers_ended.insert(from);
        if self.linger.is_some() || self.plan.is_none() {
            return;
        }
        let lacking: Vec<usize> =
            (0..self.graph.len()).filter(|&t| self.graph.succs(t).is_empty() && self.outputs[t].is_none()).collect();
        for task in lacking {
            self.send(from, GraphMsg::Need { task: task as u32 });
        }
    }

    /// A lingering node's part ends once no live node waits for the
    /// results, or at the give-up time.
    pub(super) fn maybe_end(&mut self, now: Time) {
        let (Some(linger), Some(plan)) = (&self.linger, &self.plan) else { return };
        let waited: &HashSet<NodeId> = &self.peers_ended;
        let someone_waits = plan
            .roster
            .iter()
            .enumerate()
            .any(|(p, id)| p != plan.me && plan.down[p].is_none() && !waited.contains(id));
        if someone_waits && now < linger.since + self.give_up_after() {
            return;
        }
        let Some(Linger { run, master, .. }) = self.linger.take() else { return };
        self.ended = true;
        self.actions.push_back(Action::Done { run, master });
    }

    /// Until when a lingering node waits at most.
    pub(super) fn linger_deadline(&self) -> Option<Time> {
        self.linger.as_ref().map(|l| l.since + self.give_up_after())
    }

    /// Whether this node has the results and only waits for the others.
    pub(super) fn lingering(&self) -> bool {
        self.linger.is_some()
    }
}
