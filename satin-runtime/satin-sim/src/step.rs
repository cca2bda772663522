//! One step of the simulation: the earliest event goes to its node's core
//! or executor (or to the world, for faults and the disk), then that node
//! is pumped — work started, finished jobs passed to the core, an idle
//! core let steal — and the core's actions carried out.

use super::events::Ev;
use super::exec::{decode, Output};
use super::{disk, SimNode, World};
use satin_proto::{Action, Msg};

impl World<'_> {
    pub(crate) fn dispatch(&mut self, ev: Ev) {
        let now = self.now;
        // The executors that may run now learn the time: the event's node,
        // or every node for the rare events that may touch any (a loop over
        // 10 000 nodes per event would be most of a large run's time).
        match &ev {
            Ev::Deliver { to: n, .. }
            | Ev::LeafDone { node: n, .. }
            | Ev::Timer { node: n }
            | Ev::PeerDead { node: n, .. }
            | Ev::LinkDown { node: n, .. }
            | Ev::DiskOpened { node: n } => {
                if let Some(node) = self.nodes.get_mut(*n) {
                    node.exec.now = now;
                }
            }
            Ev::LinkTimeout { from, to, .. } => {
                for n in [*from, *to] {
                    if let Some(node) = self.nodes.get_mut(n) {
                        node.exec.now = now;
                    }
                }
            }
            Ev::Fanout { to, .. } => {
                for &t in to {
                    self.nodes[t].exec.now = now;
                }
            }
            Ev::Fault(_) | Ev::DiskWritten { .. } | Ev::Resume => {
                for n in &mut self.nodes {
                    n.exec.now = now;
                }
            }
        }
        match ev {
            Ev::Deliver { to, from, msg } => {
                if self.nodes[to].gone {
                    self.notice_gone(from, to);
                    return;
                }
                let SimNode { core, exec, .. } = &mut self.nodes[to];
                let changes = core.roster_changes();
                core.handle_message(now, from as u64, *msg, exec);
                if core.roster_changes() != changes {
                    self.membership_changed = now;
                }
                self.pump(to);
            }
            Ev::Fanout { to, from, msg } => {
                // A table update changes only the replica — unless it
                // answers a lookup that waits for it: pump only then.
                let table_only = matches!(*msg, Msg::TablePut { .. });
                for t in to {
                    if self.nodes[t].gone {
                        self.notice_gone(from, t);
                        continue;
                    }
                    let SimNode { core, exec, .. } = &mut self.nodes[t];
                    let waiting = exec.waits_for_lookups();
                    let changes = core.roster_changes();
                    core.handle_message(now, from as u64, (*msg).clone(), exec);
                    if core.roster_changes() != changes {
                        self.membership_changed = now;
                    }
                    if !table_only || waiting {
                        self.pump(t);
                    }
                }
            }
            Ev::LeafDone { node, inst } => {
                if self.nodes[node].gone {
                    return;
                }
                self.nodes[node].exec.leaf_done(inst);
                self.pump(node);
            }
            Ev::Timer { node } => {
                if self.nodes[node].gone {
                    return;
                }
                let SimNode { core, exec, wake, .. } = &mut self.nodes[node];
                if *wake == Some(now) {
                    *wake = None;
                }
                core.handle_timeout(now, exec);
                self.pump(node);
            }
            Ev::PeerDead { node, peer } => {
                if self.nodes[node].gone {
                    return;
                }
                self.membership_changed = now;
                let SimNode { core, exec, .. } = &mut self.nodes[node];
                core.handle_peer_dead(now, peer as u64, exec);
                self.pump(node);
            }
            Ev::Fault(i) => self.fault(i),
            Ev::DiskOpened { node } => {
                if self.nodes[node].gone {
                    return;
                }
                let records = self.disk.as_mut().map(disk::Disk::open).unwrap_or_default();
                let SimNode { core, exec, .. } = &mut self.nodes[node];
                core.handle_checkpoint_opened(now, Ok(records), exec);
                self.pump(node);
            }
            Ev::DiskWritten { node, seq, records, frames } => self.disk_written(node, seq, records, frames),
            Ev::Resume => {
                self.resuming = false;
                self.report.restarts += 1;
                self.start_nodes();
            }
            Ev::LinkTimeout { from, to, episode } => self.link_timeout(from, to, episode),
            Ev::LinkDown { node, peer } => self.link_down(node, peer),
        }
    }

    /// Runs node `i` until it has nothing more to do at this instant.
    pub(crate) fn pump(&mut self, i: usize) {
        let now = self.now;
        if let Some(node) = self.nodes.get_mut(i) {
            node.exec.now = now;
        }
        loop {
            if self.nodes[i].gone {
                return;
            }
            let mut progressed = false;
            {
                let SimNode { core, exec, .. } = &mut self.nodes[i];
                exec.step(now, core);
            }
            let outputs = std::mem::take(&mut self.nodes[i].exec.outputs);
            for o in outputs {
                progressed = true;
                match o {
                    Output::LeafStarted { inst, done_at } => self.schedule(done_at, Ev::LeafDone { node: i, inst }),
                    Output::LeafExecuted(job, started) => {
                        self.report.leaves_executed += 1;
                        self.nodes[i].leaves += 1;
                        self.nodes[i].started_at.push(started);
                        self.distinct_leaves.insert(job);
                        self.check_progress();
                    }
                    Output::StolenFinished { victim, stamp, key, value } => {
                        let SimNode { core, exec, .. } = &mut self.nodes[i];
                        core.handle_job_finished(now, victim, stamp, key, value.into(), exec)
                    }
                    Output::RootFinished { start, value } => {
                        let SimNode { core, exec, .. } = &mut self.nodes[i];
                        core.handle_root_finished(now, start, value.into(), exec)
                    }
                    // The core publishes only jobs long against the run so far.
                    Output::LocalFinished { ran, key, value, meta } => {
                        let SimNode { core, exec, .. } = &mut self.nodes[i];
                        core.handle_local_job_finished(now, ran, key, value.into(), meta, exec)
                    }
                    Output::Missed { job, epoch, asked } => self.check_miss(i, job, epoch, asked),
                    Output::StolenFailed { victim, stamp } => {
                        let SimNode { core, exec, .. } = &mut self.nodes[i];
                        core.handle_job_failed(now, victim, stamp, "injected failure".into(), exec)
                    }
                    Output::StolenLost { victim, stamp } => {
                        let SimNode { core, exec, .. } = &mut self.nodes[i];
                        core.handle_job_aborted(now, victim, stamp, exec)
                    }
                }
            }
            {
                // Whether the node is idle is the core's decision.
                let SimNode { core, exec, gone, .. } = &mut self.nodes[i];
                if !*gone {
                    core.handle_idle(now, exec);
                }
            }
            while let Some(a) = self.nodes[i].core.poll_action() {
                // (Words for a real node's user change nothing here: the
                // node is pumped no further for them.)
                progressed |= !matches!(a, Action::Leadership { .. });
                self.act(i, a);
            }
            if !progressed {
                return self.arm_timer(i);
            }
        }
    }

    /// Schedules the node's wake-up where its core wants it (a timer
    /// event already scheduled earlier finds nothing due and is harmless).
    fn arm_timer(&mut self, i: usize) {
        let at = self.nodes[i].core.poll_timeout();
        if at != self.nodes[i].wake {
            self.nodes[i].wake = at;
            if let Some(at) = at {
                self.schedule(at.max(self.now), Ev::Timer { node: i });
            }
        }
    }

    pub(crate) fn act(&mut self, i: usize, a: Action) {
        match a {
            Action::Send { to, msg } => {
                self.observe(i, &msg);
                self.send(i, to as usize, msg)
            }
            Action::Broadcast { msg } => {
                self.observe(i, &msg);
                if self.trace_msgs {
                    eprintln!("{} {i}->all {}", self.now, format!("{msg:?}").chars().take(200).collect::<String>());
                }
                if self.net.faulty() || self.cfg.lanes != crate::Lanes::Unqueued {
                    // Each copy meets the network (and its lane) on its own link.
                    let n = self.nodes.len();
                    let to: Vec<usize> =
                        self.nodes[i].core.live_members().map(|t| t as usize).filter(|&t| t != i && t < n).collect();
                    let bytes = super::links::wire_size(&msg);
                    for t in to {
                        self.send_sized(i, t, msg.clone(), bytes);
                    }
                    return;
                }
                let bytes = super::links::wire_size(&msg);
                let (mut local, mut wide) = (Vec::new(), Vec::new());
                for t in self.nodes[i].core.live_members() {
                    let t = t as usize;
                    if t == i || t >= self.nodes.len() {
                        continue;
                    }
                    if self.nodes[t].cluster == self.nodes[i].cluster {
                        local.push(t);
                    } else {
                        wide.push(t);
                    }
                }
                for group in [local, wide] {
                    let Some(&first) = group.first() else { continue };
                    self.report.messages += group.len() as u64;
                    self.count_kind(&msg, group.len() as u64);
                    self.report.bytes += (bytes * group.len()) as u64;
                    let jitter = if self.cfg.jitter > 0 { self.rng.below(self.cfg.jitter) } else { 0 };
                    let at = self.in_order(i, &group, self.now + self.delay(i, first, bytes) + jitter);
                    self.schedule(at, Ev::Fanout { to: group, from: i, msg: Box::new(msg.clone()) });
                }
            }
            Action::Done { value, shows } => {
                self.report.answers += 1;
                self.report.shown += u64::from(shows);
                if let Some(d) = self.nodes[i].core.decision() {
                    self.decisions.insert(d);
                    self.report.decisions = self.decisions.len() as u64;
                }
                if self.report.answer.is_none() {
                    self.report.answer = Some(decode(&value));
                    self.report.virtual_seconds = self.now as f64 / 1e9;
                    self.report.shared_value = self.nodes[i].exec.shared.value();
                    self.check_shared();
                }
                self.finished = !self.cfg.run_to_end;
            }
            Action::Failed { reason } => {
                self.report.failure = Some(reason);
                self.report.virtual_seconds = self.now as f64 / 1e9;
                self.finished = true;
            }
            Action::Finished { shows, value } => {
                self.report.shown += u64::from(shows);
                self.report.shown_by_others += u64::from(shows);
                // A master that took over showing a run decided before it.
                if let (true, Some(value), None) = (shows, &value, self.report.answer) {
                    self.report.answer = Some(decode(value));
                    self.report.virtual_seconds = self.now as f64 / 1e9;
                    self.report.shared_value = self.nodes[i].exec.shared.value();
                    self.check_shared();
                    self.finished = !self.cfg.run_to_end;
                }
            }
            Action::CheckpointOpen => {
                let at = self.now + self.disk.as_ref().map_or(0, |d| d.time(d.bytes.len()));
                self.schedule(at, Ev::DiskOpened { node: i });
            }
            Action::CheckpointWrite { seq, records } => {
                let frames = disk::Disk::frames(&records);
                let at = self.now + self.disk.as_ref().map_or(0, |d| d.time(frames.len()));
                self.schedule(at, Ev::DiskWritten { node: i, seq, records: records.len() as u64, frames });
            }
            Action::Suspended => self.report.suspended += 1,
            Action::Stop => self.nodes[i].gone = true,
            Action::Forget { .. } => {}
            // Simulated nodes report no figures for a dashboard, and
            // their executor publishes what the core lets it.
            Action::PeerFigures { .. }
            | Action::MasterBoard { .. }
            | Action::ShareFigures
            | Action::PublishAfter { .. }
            // (What a real node logs for its user.)
            | Action::Leadership { .. } => {}
            Action::Expelled { by, carry, rejoin, .. } => {
                self.report.expelled += 1;
                if rejoin {
                    self.rejoin(i, by as usize, carry);
                }
            }
            Action::LostMajority { .. } => self.report.gave_up += 1,
            // The core stops the joiner (`Action::Stop` follows).
            Action::CannotJoin { .. } => self.report.joins_given_up += 1,
        }
    }
}
