//! One processor of a fault-tolerant schedule, as a state machine without
//! I/O: told what it learns (a copy of a task finished somewhere, an
//! original ended, a processor crashed), it says which of its planned items
//! to start next. `exec::simulate` drives every processor in virtual time;
//! a real run drives each from its node's messages.
//!
//! The rules: items in planned order, each once its inputs are in (a
//! duplicate not before its planned start), except that an original never
//! waits for a duplicate ahead of it; a duplicate is skipped once the
//! abort from its original's end has arrived. Once a crash is known (an
//! abort message's time after it), the duplicates of the crashed
//! processor's unfinished tasks go first, out of order, and a processor
//! whose next item waits runs a later one whose inputs are in.
//!
//! Virtual time tells it when things happened ([`Processor::copy_finished`],
//! [`Processor::peer_down`]); a real run tells it when news arrived
//! ([`Processor::copy_arrived`], [`Processor::peer_down_known`]), and the
//! arrival is what counts: the message carried the output and the abort.

use std::collections::VecDeque;

use super::ft::FtSchedule;
use super::graph::{TaskGraph, TaskId};

/// A planned item: a task's original or its duplicate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Item {
    /// The task.
    pub task: TaskId,
    /// Whether this is the task's duplicate.
    pub duplicate: bool,
    /// When the plan starts it.
    pub planned: f64,
    /// How long the plan has it run.
    pub len: f64,
}

/// A finished copy of a task, as one processor knows it.
#[derive(Debug, Clone, Copy)]
struct Copy {
    on: usize,
    at: f64,
    /// `at` is when its output arrived here (a real run), not when it
    /// ended there (its output then takes the edge's cost to arrive).
    arrived: bool,
}

/// One processor's view of the run.
#[derive(Debug, Clone)]
pub struct Processor {
    id: usize,
    queue: VecDeque<Item>,
    /// Finished copies of each task: where, and when their output is in
    /// here.
    copies: Vec<Vec<Copy>>,
    /// When each task's original ended, if it did.
    original_end: Vec<Option<f64>>,
    /// The processor of each task's original.
    original_proc: Vec<usize>,
    /// When each processor crashed (infinite: it did not).
    down: Vec<f64>,
    /// Time from an original's end until its duplicate here is aborted
    /// (infinite: never, as under active replication).
    delay: f64,
    /// Time from a crash until it is known here: the abort delay, or a
    /// message's time when nothing is ever aborted.
    notice: f64,
    /// How far behind its plan the run is (a real run's drift): a
    /// duplicate starts this much after its planned start, so that it
    /// stays behind its original by the slack.
    lag: f64,
}

impl Processor {
    /// Processor `id` with its planned `items`, of a graph of `tasks` tasks
    /// on `procs` processors; `original_proc[t]` runs task t's original;
    /// news (aborts, crashes) takes `delay` to arrive.
    pub fn new(
        id: usize,
        mut items: Vec<Item>,
        tasks: usize,
        procs: usize,
        original_proc: Vec<usize>,
        delay: f64,
    ) -> Processor {
        // In planned order; at one instant, what takes no time first (a
        // zero-cost task planned at the start of another runs before it),
        // and originals before duplicates.
        items.sort_by(|a, b| {
            a.planned.total_cmp(&b.planned).then((a.len > 0.0).cmp(&(b.len > 0.0))).then(a.duplicate.cmp(&b.duplicate))
        });
        Processor {
            id,
            queue: items.into(),
            copies: vec![Vec::new(); tasks],
            original_end: vec![None; tasks],
            original_proc,
            down: vec![f64::INFINITY; procs],
            delay,
            notice: super::ft::notice_delay(delay),
            lag: 0.0,
        }
    }

    /// Every processor of `schedule`, each with its originals and
    /// duplicates; news takes the schedule's abort delay to arrive.
    pub fn all_of(graph: &TaskGraph, schedule: &FtSchedule) -> Vec<Processor> {
        let procs = schedule.originals.procs();
        let mut original_proc = vec![0; graph.len()];
        let mut items: Vec<Vec<Item>> = vec![Vec::new(); procs];
        for p in schedule.originals.placements() {
            original_proc[p.task] = p.proc;
            items[p.proc].push(Item { task: p.task, duplicate: false, planned: p.start, len: p.finish - p.start });
        }
        for d in &schedule.duplicates {
            items[d.proc].push(Item { task: d.task, duplicate: true, planned: d.start, len: d.finish - d.start });
        }
        let delay = schedule.params.abort_delay;
        items
            .into_iter()
            .enumerate()
            .map(|(id, items)| Processor::new(id, items, graph.len(), procs, original_proc.clone(), delay))
            .collect()
    }

    /// A copy of `task` finished on processor `on` at `end`; its output
    /// reaches this processor the edge's cost later (at once on `on`).
    pub fn copy_finished(&mut self, task: TaskId, on: usize, end: f64, original: bool) {
        self.copies[task].push(Copy { on, at: end, arrived: false });
        if original {
            self.original_end[task] = Some(end);
        }
    }

    /// News that a copy of `task` finished on processor `on` (with its
    /// output, if this processor needs it) arrived at `now`: the output is
    /// in, and an original's end aborts its duplicate here from now on.
    pub fn copy_arrived(&mut self, task: TaskId, on: usize, now: f64, original: bool) {
        self.copies[task].push(Copy { on, at: now, arrived: true });
        if original {
            // Known here now: as if it ended one delay ago.
            self.original_end[task] = Some(if self.delay.is_finite() { now - self.delay } else { now });
        }
    }

    /// Processor `proc` crashed at `at`.
    pub fn peer_down(&mut self, proc: usize, at: f64) {
        self.down[proc] = self.down[proc].min(at);
    }

    /// Processor `proc`'s crash became known here at `now`.
    pub fn peer_down_known(&mut self, proc: usize, now: f64) {
        self.peer_down(proc, now - self.notice);
    }

    /// Has any copy of `task` finished, as far as this processor knows?
    pub fn finished(&self, task: TaskId) -> bool {
        !self.copies[task].is_empty()
    }

    /// Has the original of `task` finished, as far as this processor knows?
    pub fn original_finished(&self, task: TaskId) -> bool {
        self.original_end[task].is_some()
    }

    /// The run is `lag` behind its plan (measured from the originals that
    /// ended lately): duplicates start that much later than planned.
    pub fn running_late(&mut self, lag: f64) {
        self.lag = lag.max(0.0);
    }

    /// Puts back an item [`next`](Self::next) gave, to be given again
    /// first (its inputs' data had not come yet).
    pub fn put_back(&mut self, item: Item) {
        self.queue.push_front(item);
    }

    /// Items of the plan not started yet.
    pub fn remaining(&self) -> impl Iterator<Item = &Item> {
        self.queue.iter()
    }

    /// When every input of `item` is in here, as far as is known
    /// (infinite while one has no finished copy).
    fn inputs_at(&self, graph: &TaskGraph, item: &Item) -> f64 {
        graph
            .preds(item.task)
            .iter()
            .map(|&(u, comm)| {
                self.copies[u]
                    .iter()
                    .map(|c| c.at + if c.arrived || c.on == self.id { 0.0 } else { comm })
                    .fold(f64::INFINITY, f64::min)
            })
            .fold(0.0, f64::max)
    }

    /// The next moment after `now` at which [`next`](Self::next) may give
    /// an item it does not give at `now`, from what is known (an input
    /// coming in after its edge's cost, a duplicate's planned start, an
    /// abort or a crash becoming known); `None` if only news can change
    /// that. A driver sleeps until then, or until news.
    pub fn wake_at(&self, graph: &TaskGraph, now: f64) -> Option<f64> {
        let mut times: Vec<f64> = Vec::new();
        for item in &self.queue {
            let ready = self.inputs_at(graph, item);
            times.push(if item.duplicate { ready.max(item.planned + self.lag) } else { ready });
            if let (true, Some(end)) = (item.duplicate, self.original_end[item.task]) {
                times.push(end + self.delay);
            }
        }
        times.extend(self.down.iter().map(|d| d + self.notice));
        times.into_iter().filter(|&t| t > now && t.is_finite()).min_by(f64::total_cmp)
    }

    /// The item to start at `now`, taken out of the plan; `None` if nothing
    /// can start yet.
    pub fn next(&mut self, graph: &TaskGraph, now: f64) -> Option<Item> {
        let (delay, notice) = (self.delay, self.notice);
        let original_end = &self.original_end;
        // Duplicates whose abort has arrived are skipped.
        self.queue.retain(|i| !(i.duplicate && original_end[i.task].is_some_and(|e| e + delay <= now)));
        let inputs_in = |item: &Item| self.inputs_at(graph, item) <= now;
        // The original of a duplicate is lost once its processor's crash is
        // known here.
        let lost = |item: &Item| {
            item.duplicate
                && self.original_end[item.task].is_none()
                && self.down[self.original_proc[item.task]] + notice <= now
        };
        let crash_known = self.down.iter().any(|&d| d + notice <= now);
        let k = self.queue.iter().position(|i| lost(i) && inputs_in(i)).or_else(|| {
            if crash_known {
                self.queue.iter().position(|i| !i.duplicate && inputs_in(i))
            } else {
                // In planned order, except that an original never waits
                // for a duplicate: a duplicate only fills idle time.
                let startable = |i: &Item| (!i.duplicate || now >= i.planned + self.lag) && inputs_in(i);
                let first_original = self.queue.iter().position(|i| !i.duplicate);
                match self.queue.front() {
                    Some(i) if startable(i) => Some(0),
                    _ => first_original.filter(|&k| inputs_in(&self.queue[k])),
                }
            }
        })?;
        self.queue.remove(k)
    }
}
