//! What the node's event loop hears: connections, messages, peers that
//! go down or die, and the local executor's events.

use super::*;

impl Driver {
    pub(super) fn on_input(&mut self, got: Input) {
        let now = self.now();
        match got {
            Input::Hello { id, addr, label, conn } => {
                self.io.net.hello(id, addr, label, conn);
                if id != CONTACT {
                    let name = self.peer_name(id);
                    let address = self.io.net.addrs.get(&id).map(|a| a.to_string());
                    self.on_board(|b| {
                        if !b.knows(id) {
                            b.event(format!("node {name} connected"));
                        }
                        b.alive(id, name, address, false);
                    });
                }
                self.node.handle_link_up(now, id, &mut self.exec);
            }
            Input::Linked { id, conn } => {
                self.io.net.outgoing_up(id, conn);
                self.node.handle_connected(id);
            }
            Input::Closed { id } => self.node.handle_closed(now, id),
            Input::Addr { id, addr, label } => self.io.net.learn(id, addr, label),
            Input::Message { from, msg } => {
                tracing::trace!(kind = msg.kind(), from = %self.peer_name(from), "message");
                if matches!(msg, Msg::Quorum(_)) {
                    self.beats.heard(from, Instant::now());
                }
                if let Msg::StealReply { job: Some(job), .. } = &msg {
                    debug!(
                        "running a job stolen from node {} ({} bytes of parameters)",
                        self.peer_name(from),
                        job.payload.len()
                    );
                }
                if matches!(msg, Msg::Leave) {
                    self.on_board(|b| b.leaving(from));
                }
                let joined = self.node.joined();
                self.node.handle_message(now, from, msg, &mut self.exec);
                if !joined && self.node.joined() {
                    // Welcomed: the contact is a member now, under its own id.
                    self.io.net.drop_peer(CONTACT);
                }
            }
            Input::PeerDown { id, reason, unanswered, ours, declared_dead } => {
                self.on_peer_down(id, reason, unanswered, ours, declared_dead)
            }
            Input::Exec(event) => self.on_exec(event),
            Input::Checkpoint(done) => self.on_checkpoint(done),
            Input::Slow { factor } => {
                let workers = self.exec.worker_thread_ids();
                self.throttle.get_or_insert_with(|| crate::throttle::Throttle::start(workers)).set(factor);
            }
            Input::FailRate { rate } => self.exec.set_fail_rate(rate),
            Input::ProcessEnded { addr } => {
                let id = self.io.net.addrs.iter().find(|(id, a)| **a == addr && **id != CONTACT).map(|(id, _)| *id);
                if let Some(id) = id {
                    self.on_certain_death(id, "its process ended (seen by the supervisor)");
                }
            }
            Input::NextRoot { key, payload } => {
                let root = JobSpec::root(key, payload);
                self.node.next_root(now, root, &mut self.exec);
            }
            // Only a node that waits for it at its start takes a roster.
            Input::Roster { .. } => {}
            Input::OutputOut => self.node.output_out(now),
            Input::LeaveNow => {
                warn!("told to leave the run now, handing over what is finished");
                self.marker(&format!("node {} leaving", self.spec.me.label));
                self.node.leave(now, &mut self.exec);
            }
            Input::Close { returned } => {
                if returned {
                    // Programs that wait for an answer elsewhere end too.
                    self.node.program_over(now);
                }
                self.closing = true;
                self.end.get_or_insert(RunEnd::Left);
            }
        }
    }

    /// `id`'s process is gone for certain.
    pub(super) fn on_certain_death(&mut self, id: NodeId, reason: &str) {
        if self.io.net.dead.contains(&id) {
            return;
        }
        let name = self.peer_name(id);
        warn!("node {name} is gone: {reason}");
        self.marker(&format!("node {name} gone; recovery"));
        self.io.net.cut(id);
        let now = self.now();
        self.node.handle_peer_dead(now, id, &mut self.exec);
    }

    /// A connection failed. Not a death: a cut link, a partition or lost
    /// packets look the same. The majority decides (`proto/quorum`); this
    /// node opens its connection again meanwhile. What a failed connection
    /// to a joiner's contact means is the core's decision too
    /// (`proto/node/joining.rs`).
    pub(super) fn on_peer_down(
        &mut self,
        id: NodeId,
        reason: String,
        unanswered: bool,
        ours: bool,
        declared_dead: bool,
    ) {
        if self.io.net.dead.contains(&id) {
            return;
        }
        let now = self.now();
        if id == CONTACT {
            // The next join opens a new connection; the words are kept
            // for the message if the joiner gives up.
            debug!("connection with the contact lost ({reason})");
            self.io.net.drop_peer(CONTACT);
            self.contact_said = Some(reason);
        } else if declared_dead {
            warn!("node {} closed its connection: the majority removed this node from the run", self.peer_name(id));
            debug!("({reason})");
        } else {
            info!(
                "connection with node {} lost ({reason}); the majority decides whether it is gone",
                self.peer_name(id)
            );
            if ours {
                self.io.net.reconnect_later(id, RECONNECT);
            }
        }
        match (declared_dead, unanswered) {
            (true, _) => self.node.handle_declared_dead(now, id, &mut self.exec),
            (false, true) => {
                self.node.handle_unanswered(now, id, &mut self.exec);
                if id == CONTACT && !self.node.stopped() {
                    // The contact may not be listening yet (tasks of a
                    // batch job start in any order): the core knocks again.
                    info!("no answer from the contact yet; trying again");
                }
            }
            (false, false) => self.node.handle_link_down(now, id, &mut self.exec),
        }
    }

    pub(super) fn on_exec(&mut self, event: ExecEvent) {
        let now = self.now();
        let ends_entry = event.ends_entry();
        match event {
            ExecEvent::Lookup { key, epoch } => match self.node.lookup(&key, epoch) {
                Lookup::Hit(v) => self.exec.lookup_done(&key, Some(v)),
                Lookup::Miss => self.exec.lookup_done(&key, None),
                Lookup::Pending => {}
            },
            ExecEvent::Published { key, value, meta, ran } => {
                self.node.handle_local_job_finished(now, ran.as_nanos() as u64, key, value.into(), meta, &mut self.exec)
            }
            ExecEvent::StolenDone { victim, stamp, key, value, ran } => {
                self.span(&format!("job stolen from {victim}"), ran);
                self.exec.stolen_done(victim, stamp);
                self.node.handle_job_finished(now, victim, stamp, key, value, &mut self.exec);
            }
            ExecEvent::RootDone { start, value, held: false, ran } => {
                self.span("root job", ran);
                self.node.handle_root_finished(now, start, value, &mut self.exec)
            }
            ExecEvent::RootDone { start, value: stand_in, held: true, ran } => {
                self.span("root job", ran);
                // A checkpoint keeps the answer's bytes, and a copy of the
                // root run for a stalled master sends them to it
                // (`proto/node/root_copy.rs`): encoded now, while the
                // program waits. Otherwise only a message that carries the
                // answer encodes it (`Driver::carry_out_actions`).
                // (A stale start's outcome is dropped by the core: nothing
                // is encoded or kept for it.)
                let needs_bytes = self.spec.core.config.checkpoint_interval.is_some() || !self.node.is_master();
                let current = self.node.root_start_is_current(start);
                let encoded = (needs_bytes && current).then(|| satin_core::dist::encode_held(&stand_in)).flatten();
                match encoded {
                    Some(value) => self.node.handle_root_finished(now, start, value, &mut self.exec),
                    None => {
                        if current {
                            self.held = Some(stand_in.clone());
                        }
                        self.node.handle_root_held(now, start, stand_in, &mut self.exec)
                    }
                }
            }
            ExecEvent::Aborted { stolen, ran } => {
                self.span("aborted job", ran);
                if let Some((victim, stamp)) = stolen {
                    self.exec.stolen_done(victim, stamp);
                    self.node.handle_job_aborted(now, victim, stamp, &mut self.exec);
                }
            }
            ExecEvent::StolenFailed { victim, stamp, reason, ran } => {
                self.span(&format!("job stolen from {victim} (failed)"), ran);
                warn!("a job stolen from node {} failed: {reason}", self.peer_name(victim));
                self.exec.stolen_done(victim, stamp);
                self.node.handle_job_failed(now, victim, stamp, reason, &mut self.exec);
            }
            // A worker parks with nothing to do: whether to steal, and
            // whom, is the core's decision.
            ExecEvent::Hungry => {
                self.exec.hunger_heard();
                self.node.handle_idle(now, &mut self.exec);
            }
            ExecEvent::RootFailed { start, reason, ran } => {
                self.span("root job (failed)", ran);
                self.node.handle_root_failed(now, start, reason);
            }
        }
        if ends_entry && self.exec.entry_ended() {
            self.node.handle_idle(now, &mut self.exec);
        }
    }

    pub(super) fn span(&mut self, name: &str, ran: satin_core::Ran) {
        if let Some(t) = &mut self.trace {
            t.span(name, ran);
        }
    }
}
