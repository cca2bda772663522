//! How a run goes once the clocks run: every finished copy is news for
//! every node (with its output), which the processor's state machine
//! turns into the next item to start; an original's news aborts its
//! duplicate here. A node fails, in words, when nothing moved for ten
//! times the planned makespan (a worker hung on an item included).

use super::{Action, GraphEvent, GraphMsg, GraphNode, Time};
use crate::graph::TaskId;
use crate::processor::Item;

impl GraphNode {
    /// News that a copy of `task` finished on processor `proc` at `end`
    /// (the sender's clock), with its output if it carries one.
    pub(super) fn on_finished(
        &mut self,
        now: Time,
        task: TaskId,
        proc: usize,
        original: bool,
        end: f64,
        output: Option<Vec<u8>>,
    ) {
        let units = self.units(now);
        let tasks = self.graph.len();
        let Some(plan) = &mut self.plan else { return };
        if task >= tasks || proc >= plan.down.len() {
            self.event(GraphEvent::Ignored { what: "news of a task or processor this run does not have" });
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
        let emulate = self.cfg.emulate_comm;
        let Some(plan) = &mut self.plan else { return };
        plan.finished[task].get_or_insert((proc, units));
        if original {
            // How late the run is: this original's end against its plan.
            if let Some(p) = plan.schedule.originals.of(task) {
                plan.processor.running_late(end.min(units) - p.finish);
            }
        }
        let data = output.is_some();
        if emulate && data {
            // As in the plan: in an edge's cost after it ended there (the
            // message's own travel is part of that cost). The clocks of
            // two nodes differ by about the start message's travel.
            let end = if end.is_finite() { end.min(units) } else { units };
            plan.processor.copy_finished(task, proc, end, original);
        } else {
            plan.processor.copy_arrived(task, proc, units, original);
        }
        if let Some(out) = output {
            self.outputs[task].get_or_insert(out);
        }
        if !original {
            self.duplicates_completed += 1;
        }
        if self.running.is_some_and(|item| original && item.duplicate && item.task == task) {
            self.actions.push_back(Action::Abort { task });
        }
        self.last_progress = now;
        self.answer_wanted(task);
    }

    /// The worker ran `item`: to its end with `output`, or aborted (`None`).
    pub(super) fn on_ran(&mut self, now: Time, item: Item, output: Option<Vec<u8>>) {
        if self.running.is_some_and(|r| r == item) {
            self.running = None;
        }
        let Some(output) = output else { return };
        let units = self.units(now);
        let Some(plan) = &mut self.plan else { return };
        if item.task >= self.graph.len() {
            return;
        }
        let me = plan.me;
        plan.finished[item.task].get_or_insert((me, units));
        plan.heard.insert((item.task, me));
        if let (false, Some(p)) = (item.duplicate, plan.schedule.originals.of(item.task)) {
            plan.processor.running_late(units - p.finish);
        }
        plan.processor.copy_arrived(item.task, me, units, !item.duplicate);
        if item.duplicate {
            self.duplicates_completed += 1;
        }
        self.outputs[item.task].get_or_insert(output.clone());
        self.tell_all(GraphMsg::Finished {
            task: item.task as u32,
            proc: me as u32,
            original: !item.duplicate,
            end: units,
            output: Some(output),
        });
        self.last_progress = now;
        self.answer_wanted(item.task);
    }

    /// Gives the worker the next item the processor says to start; a copy
    /// of a task that already finished somewhere is passed over.
    pub(super) fn start_next(&mut self, now: Time) {
        if self.running.is_some() || self.ended || self.lingering() {
            return;
        }
        let units = self.units(now);
        let unit = self.cfg.unit;
        let Some(plan) = &mut self.plan else { return };
        if plan.started.is_none_or(|s| now < s) {
            return;
        }
        while let Some(item) = plan.processor.next(&self.graph, units) {
            if plan.processor.finished(item.task) {
                continue;
            }
            let preds = self.graph.preds(item.task);
            let missing: Vec<TaskId> = preds.iter().map(|&(u, _)| u).filter(|&u| self.outputs[u].is_none()).collect();
            if !missing.is_empty() {
                // Its inputs are done, but their data is elsewhere (the
                // plan changed after a crash): ask for it, and wait.
                plan.processor.put_back(item);
                self.ask_for(missing);
                return;
            }
            let inputs: Vec<Vec<u8>> =
                preds.iter().map(|&(u, _)| self.outputs[u].clone().unwrap_or_default()).collect();
            let planned = unit.mul_f64(self.graph.cost(item.task, plan.me));
            self.running = Some(item);
            self.actions.push_back(Action::Run { item, inputs, planned });
            return;
        }
    }

    /// Fails when nothing moved for ten times the planned makespan (the
    /// results in, the node lingers instead: see `ending.rs`).
    pub(super) fn check_stalled(&mut self, now: Time) {
        let Some(started) = self.plan.as_ref().and_then(|p| p.started) else { return };
        let give_up = self.give_up_after();
        // (A worker still busy after that long is hung: it counts too.)
        if now >= started && now.saturating_sub(self.last_progress) >= give_up {
            let why = self.stall_report(give_up);
            self.fail(why);
        }
    }

    /// Why a run where nothing moves is given up: the first task without a
    /// copy, the processors down, what this node waits for.
    fn stall_report(&self, give_up: Time) -> String {
        let Some(plan) = &self.plan else { return String::new() };
        let graph = &self.graph;
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
        format!(
            "nothing moved for {:?}: task {} has no copy left on a live node (processors down: {:?}); next here: {}",
            std::time::Duration::from_nanos(give_up),
            graph.name(missing),
            (0..plan.down.len()).filter(|&p| plan.down[p].is_some()).collect::<Vec<_>>(),
            if waiting.is_empty() { "nothing".to_string() } else { waiting.join("; ") }
        )
    }
}
