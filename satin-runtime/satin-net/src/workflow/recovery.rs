//! A node's part when a peer dies: its processor's duplicates take over at
//! once; the lowest live processor also replans the rest of the run from
//! what it knows ([`dag::replan`](satin_dag::replan)) and, when that ends
//! sooner than continuing with the duplicates, sends the new plan to
//! everyone. A node given a task whose inputs' data went elsewhere asks
//! for it.

use std::time::Instant;

use tracing::warn;

use super::msg::GraphMsg;
use super::node::GraphDriver;
use satin_dag::processor::{Item, Processor};
use satin_dag::{replan, Known, TaskId};
use satin_proto::NodeId;

impl GraphDriver<'_> {
    pub(super) fn peer_lost(&mut self, id: NodeId, reason: &str) {
        let now = self.now();
        let Some(plan) = &mut self.plan else {
            if self.spec.me.contact.is_none() {
                self.members.retain(|&m| m != id);
            } else if id == super::node::MASTER {
                self.fail(format!("the master went before the run started ({reason})"));
            }
            return;
        };
        let Some(proc) = plan.roster.iter().position(|&r| r == id) else { return };
        if plan.down[proc].is_some() || proc == plan.me {
            return;
        }
        plan.down[proc] = Some(now);
        plan.processor.peer_down_known(proc, now);
        warn!("processor {proc} (node {id}) is down: {reason}; the duplicates of its tasks take over");
        if let Some(t) = &mut self.trace {
            t.marker(&format!("processor {proc} down"));
        }
        let coordinator = (0..plan.me).all(|p| plan.down[p].is_some());
        let replanned = plan.replanned;
        let route = self.route(id);
        self.io.net.cut(route);
        self.io.net.cut(id);
        self.last_progress = Instant::now();
        self.relay_finished_on(proc);
        if self.spec.replan && coordinator && !replanned {
            self.replan();
        }
    }

    /// A processor that dies while it sends the news of a finished copy
    /// may reach some nodes and not others: a node that waits for that
    /// output would wait forever (the duplicate was aborted where the news
    /// came). So every node passes on what it knows finished there, with
    /// the output, while a live task still needs it or it is a result.
    fn relay_finished_on(&mut self, proc: usize) {
        let graph = self.workflow.graph();
        let Some(plan) = &self.plan else { return };
        let needed =
            |t: TaskId| graph.succs(t).is_empty() || graph.succs(t).iter().any(|&(s, _)| !plan.processor.finished(s));
        let relays: Vec<GraphMsg> = (0..graph.len())
            .filter(|&t| plan.finished[t].is_some_and(|(on, _)| on == proc) && needed(t))
            .filter_map(|t| {
                let output = self.outputs[t].clone()?;
                let original = plan.schedule.originals.of(t).is_some_and(|p| p.proc == proc);
                let end = plan.finished[t].map_or(0.0, |(_, at)| at);
                Some(GraphMsg::Finished { task: t as u32, proc: proc as u32, original, end, output: Some(output) })
            })
            .collect();
        for msg in relays {
            self.tell_all(msg);
        }
    }

    /// Replans the rest of the run; sends and follows the new plan if it
    /// ends sooner than the duplicates would.
    fn replan(&mut self) {
        let now = self.now();
        let graph = self.workflow.graph();
        let Some(plan) = &self.plan else { return };
        let r = replan(graph, &plan.schedule, Known { finished: &plan.finished, down: &plan.down, now });
        if !r.is_better() {
            warn!(
                "replanned the rest: it would end at {:.0}, the duplicates at {:.0}; continuing with the duplicates",
                r.makespan, r.with_duplicates
            );
            return;
        }
        warn!(
            "replanned the rest: it ends at {:.0}, the duplicates would at {:.0}; every node follows the new plan",
            r.makespan, r.with_duplicates
        );
        let placements: Vec<(u32, u32, f64, f64)> =
            r.placements.iter().map(|p| (p.task as u32, p.proc as u32, p.start, p.finish)).collect();
        self.tell_all(GraphMsg::Replan { placements: placements.clone() });
        self.apply_replan(&placements);
    }

    /// Follows a new plan: this processor's items are its tasks in it (no
    /// duplicates any more).
    pub(super) fn apply_replan(&mut self, placements: &[(u32, u32, f64, f64)]) {
        let now = self.now();
        let graph = self.workflow.graph();
        let Some(plan) = &mut self.plan else { return };
        let procs = plan.down.len();
        if placements.iter().any(|&(t, p, _, _)| t as usize >= graph.len() || p as usize >= procs) {
            warn!("a new plan names tasks or processors this run does not have; ignored");
            return;
        }
        let mut original_proc: Vec<usize> = vec![0; graph.len()];
        for p in plan.schedule.originals.placements() {
            original_proc[p.task] = p.proc;
        }
        let mut hosts: Vec<Option<usize>> = vec![None; graph.len()];
        let mut items = Vec::new();
        for &(task, proc, start, finish) in placements {
            let (task, proc) = (task as usize, proc as usize);
            original_proc[task] = proc;
            hosts[task] = Some(proc);
            if proc == plan.me {
                items.push(Item { task, duplicate: false, planned: start, len: finish - start });
            }
        }
        let delay = plan.schedule.params.abort_delay;
        let mut processor = Processor::new(plan.me, items, graph.len(), procs, original_proc, delay);
        for (task, done) in plan.finished.iter().enumerate() {
            if let Some((on, _)) = *done {
                processor.copy_arrived(task, on, now, true);
            }
        }
        // The crashes are not news to the new plan's processor: it
        // follows the plan in order, which already counts them.
        plan.processor = processor;
        // What runs here and the new plan puts elsewhere (a duplicate of a
        // lost task, most likely) stops: the new plan counts on this
        // processor's time.
        if let Some((item, abort)) = &self.running {
            if hosts[item.task] != Some(plan.me) {
                abort.raise();
            }
        }
        plan.replanned = true;
        if let Some(t) = &mut self.trace {
            t.marker("the rest replanned");
        }
        self.last_progress = Instant::now();
    }

    /// Asks every live node for the outputs of `tasks` (once each).
    pub(super) fn ask_for(&mut self, tasks: Vec<TaskId>) {
        for task in tasks {
            if !self.asked.insert(task) {
                continue;
            }
            tracing::info!("asking for the output of task {task}: its data went elsewhere");
            self.tell_all(GraphMsg::Need { task: task as u32 });
        }
    }
}
