//! A node's part when a peer is lost: its processor's duplicates take over
//! at once, and every node passes on the news of copies finished there
//! (with their outputs). The lowest live processor also replans the rest
//! of the run from what it knows ([`replan`](crate::replan)) and sends the
//! new plan to everyone — after the first crash when that ends sooner than
//! the duplicates, after any later one always (one crash is what the
//! duplicates cover, and a new plan has none). A node given a task whose
//! inputs' data went elsewhere asks for it.

use super::{GraphEvent, GraphMsg, GraphNode, Loss, NodeId, Time, MASTER};
use crate::graph::TaskId;
use crate::processor::{Item, Processor};
use crate::replan::{replan, Known};

impl GraphNode {
    pub(super) fn peer_lost(&mut self, now: Time, id: NodeId, loss: Loss) {
        let reason = loss.to_string();
        let units = self.units(now);
        let Some(plan) = &mut self.plan else {
            if !self.joiner {
                self.members.retain(|&m| m != id);
            } else if id == MASTER {
                self.fail(format!("the master went before the run started ({reason})"));
            }
            return;
        };
        if self.joiner && id == MASTER && plan.started.is_none() {
            // Only the master says `Go`: without it this node's clock
            // would never start.
            self.fail(format!("the master went before the run started ({reason})"));
            return;
        }
        let Some(proc) = plan.roster.iter().position(|&r| r == id) else { return };
        if plan.down[proc].is_some() || proc == plan.me {
            return;
        }
        if self.peers_ended.contains(&id) {
            // It had the results and went: no news, nothing to take over.
            plan.down[proc] = Some(units);
            return;
        }
        plan.down[proc] = Some(units);
        plan.processor.peer_down_known(proc, units);
        let coordinator = (0..plan.me).all(|p| plan.down[p].is_some());
        let crashes = plan.down.iter().filter(|d| d.is_some()).count();
        let replanned = plan.epoch.is_some();
        self.event(GraphEvent::ProcessorDown { proc, node: id, reason });
        self.last_progress = now;
        self.relay_finished_on(proc);
        if matches!(loss, Loss::Unreachable { .. }) {
            self.ask_for_tasks_of(proc);
        }
        // (A node that has the results plans nothing: the rest is news.)
        if self.cfg.replan && coordinator && !self.lingering() {
            self.replan(now, replanned || crashes > 1);
        }
    }

    /// A connection that failed may be a cut between these two nodes only:
    /// another node may still hear from `proc` what this one no longer
    /// can. The unfinished tasks `proc` was to run are asked for.
    fn ask_for_tasks_of(&mut self, proc: usize) {
        let Some(plan) = &self.plan else { return };
        let orphans: Vec<TaskId> = plan
            .schedule
            .originals
            .placements()
            .iter()
            .filter(|p| p.proc == proc && !plan.processor.finished(p.task))
            .map(|p| p.task)
            .collect();
        self.ask_for(orphans);
    }

    /// A processor that dies while it sends the news of a finished copy
    /// may reach some nodes and not others: a node that waits for that
    /// output would wait forever (the duplicate was aborted where the news
    /// came). So every node passes on what it knows finished there, with
    /// the output, while a live task still needs it or it is a result.
    fn relay_finished_on(&mut self, proc: usize) {
        let graph = &self.graph;
        let Some(plan) = &self.plan else { return };
        let needed =
            |t: TaskId| graph.succs(t).is_empty() || graph.succs(t).iter().any(|&(s, _)| !plan.processor.finished(s));
        let tasks: Vec<TaskId> =
            (0..graph.len()).filter(|&t| plan.finished[t].is_some_and(|(on, _)| on == proc) && needed(t)).collect();
        self.relay(&tasks);
    }

    /// Passes on the news of `tasks` (finished, as known here) with their
    /// outputs to every live node.
    fn relay(&mut self, tasks: &[TaskId]) {
        let relays: Vec<GraphMsg> = tasks.iter().filter_map(|&t| self.news_of(t)).collect();
        for msg in relays {
            self.tell_all(msg);
        }
    }

    /// Replans the rest of the run; sends and follows the new plan if it
    /// ends sooner than the duplicates would, or if `always`.
    fn replan(&mut self, now: Time, always: bool) {
        let units = self.units(now);
        let Some(plan) = &self.plan else { return };
        let known = Known { finished: &plan.finished, down: &plan.down, now: units };
        let r = replan(&self.graph, &plan.schedule, known);
        let followed = always || r.is_better();
        let epoch = plan.down.iter().filter(|d| d.is_some()).count() as u32;
        self.event(GraphEvent::Replanned { makespan: r.makespan, with_duplicates: r.with_duplicates, followed });
        if !followed {
            return;
        }
        let placements: Vec<(u32, u32, f64, f64)> =
            r.placements.iter().map(|p| (p.task as u32, p.proc as u32, p.start, p.finish)).collect();
        self.tell_all(GraphMsg::Replan { epoch, placements: placements.clone() });
        self.apply_replan(now, epoch, &placements);
    }

    /// Follows a new plan made knowing `epoch` processors down: this
    /// processor's items are its tasks in it (no duplicates any more). A
    /// plan made knowing fewer crashes than the one followed is ignored.
    pub(super) fn apply_replan(&mut self, now: Time, epoch: u32, placements: &[(u32, u32, f64, f64)]) {
        let units = self.units(now);
        let tasks = self.graph.len();
        let Some(plan) = &mut self.plan else { return };
        let procs = plan.down.len();
        if placements.iter().any(|&(t, p, _, _)| t as usize >= tasks || p as usize >= procs) {
            self.event(GraphEvent::Ignored { what: "a new plan naming tasks or processors this run does not have" });
            return;
        }
        if plan.epoch.is_some_and(|e| e > epoch) {
            return;
        }
        let mut original_proc: Vec<usize> = vec![0; tasks];
        for p in plan.schedule.originals.placements() {
            original_proc[p.task] = p.proc;
        }
        let mut hosts: Vec<Option<usize>> = vec![None; tasks];
        let mut items = Vec::new();
        for &(task, proc, start, finish) in placements {
            let (task, proc) = (task as usize, proc as usize);
            original_proc[task] = proc;
            hosts[task] = Some(proc);
            if proc == plan.me {
                items.push(Item { task, duplicate: false, planned: start, len: finish - start });
            }
        }
        // Tasks the plan's maker took for unfinished that finished as far
        // as this node knows: the news did not reach it (a processor that
        // died while it sent it, a link cut then) and may not have reached
        // the node the plan gives them to. Passed on, or both would wait.
        let news: Vec<TaskId> =
            placements.iter().map(|&(t, ..)| t as usize).filter(|&t| plan.finished[t].is_some()).collect();
        let delay = plan.schedule.params.abort_delay;
        let mut processor = Processor::new(plan.me, items, tasks, procs, original_proc, delay);
        for (task, done) in plan.finished.iter().enumerate() {
            if let Some((on, _)) = *done {
                processor.copy_arrived(task, on, units, true);
            }
        }
        // The crashes are not news to the new plan's processor: it
        // follows the plan in order, which already counts them.
        plan.processor = processor;
        plan.epoch = Some(epoch);
        // What runs here and the new plan puts elsewhere (a duplicate of a
        // lost task, most likely) stops: the new plan counts on this
        // processor's time.
        let me = plan.me;
        if let Some(item) = self.running.filter(|i| hosts[i.task] != Some(me)) {
            self.actions.push_back(super::Action::Abort { task: item.task });
        }
        self.event(GraphEvent::NewPlan);
        self.last_progress = now;
        self.relay(&news);
    }

    /// Asks every live node for the news of `tasks` (once each).
    pub(super) fn ask_for(&mut self, tasks: Vec<TaskId>) {
        for task in tasks {
            if self.asked.insert(task) {
                self.event(GraphEvent::AskedFor { task });
                self.tell_all(GraphMsg::Need { task: task as u32 });
            }
        }
    }

    /// `from` asks for the news of `task`: sent now if this node has it,
    /// or once it has.
    pub(super) fn on_need(&mut self, from: NodeId, task: u32) {
        let task = task as usize;
        if task >= self.graph.len() {
            return self.event(GraphEvent::Ignored { what: "a question about a task this run does not have" });
        }
        match self.news_of(task) {
            Some(news) => self.send(from, news),
            None if !self.wanted.contains(&(task, from)) => self.wanted.push((task, from)),
            None => {}
        }
    }

    /// `task` is finished here: those who asked for it are told.
    pub(super) fn answer_wanted(&mut self, task: TaskId) {
        if !self.wanted.iter().any(|&(t, _)| t == task) {
            return;
        }
        let Some(news) = self.news_of(task) else { return };
        let askers: Vec<NodeId> = self.wanted.iter().filter(|&&(t, _)| t == task).map(|&(_, who)| who).collect();
        self.wanted.retain(|&(t, _)| t != task);
        for who in askers {
            self.send(who, news.clone());
        }
    }

    /// The news that `task` finished, with its output, if known here.
    fn news_of(&self, task: TaskId) -> Option<GraphMsg> {
        let plan = self.plan.as_ref()?;
        let (on, end) = plan.finished[task]?;
        let output = self.outputs[task].clone()?;
        let original = plan.schedule.originals.of(task).is_some_and(|p| p.proc == on);
        Some(GraphMsg::Finished { task: task as u32, proc: on as u32, original, end, output: Some(output) })
    }
}
