//! Carrying out the protocol core's actions: sends, timers, the run's end,
//! checkpoint writes, forgetting peers; and reaching every member.

use super::*;

impl Driver {
    /// Carries out what the core asked for.
    pub(super) fn carry_out_actions(&mut self) {
        // An improvement goes out before anything this node sends after it
        // (a result that depends on it, say): a peer that hears of one
        // from here has heard of the other first.
        while let Some(action) = self.node.poll_action() {
            match action {
                Action::Send { to, msg } => {
                    let msg = self.encode_held_answer(msg);
                    self.io.net.send(to, msg)
                }
                Action::Broadcast { msg } => self.send_to_members(msg),
                Action::Done { value, shows } => {
                    self.answered(RunEnd::Answer { value: Some(value), master: true, shows })
                }
                Action::Finished { value, shows } => self.answered(RunEnd::Answer { value, master: false, shows }),
                Action::Failed { reason } => self.end = Some(RunEnd::Failed(reason)),
                Action::Stop => {
                    self.end.get_or_insert(RunEnd::Left);
                }
                Action::CheckpointOpen => self.open_checkpoint(),
                Action::CheckpointWrite { seq, mut records } => {
                    if let Some(c) = &self.checkpointer {
                        records.extend(self.exec.shared().checkpoint_record());
                        c.write(seq, records);
                    }
                }
                Action::Suspended => self.end = Some(RunEnd::Suspended),
                Action::PeerFigures { from, figures } => self.peer_figures(from, figures),
                Action::MasterBoard { from, board } => self.master_board(from, board),
                Action::ShareFigures => self.share_figures(),
                Action::PublishAfter { after } => self.exec.set_publish_after(Duration::from_nanos(after)),
                Action::Forget { peer } => {
                    self.on_board(|b| b.gone(peer));
                    if !self.io.net.dead.contains(&peer) {
                        let name = self.peer_name(peer);
                        self.say_why_out(peer);
                        self.marker(&format!("node {name} removed; recovery"));
                        self.io.net.cut(peer);
                    }
                }
                Action::CannotJoin { why } => {
                    let at = self.spec.me.contact.map_or(String::new(), |c| c.to_string());
                    let said = self.contact_said.take().map_or(String::new(), |r| format!(" ({r})"));
                    self.end = Some(RunEnd::Failed(format!("cannot join the run at {at}: {why}{said}")))
                }
                Action::LostMajority { waited } => {
                    debug!("giving up: {}", self.node.quorum_summary());
                    self.end = Some(RunEnd::LostMajority { waited: Duration::from_nanos(waited) })
                }
                Action::Expelled { by, carry, rejoin, removals } => {
                    let at = self.io.net.addrs.get(&by).copied().filter(|_| by != CONTACT);
                    let was_origin = self.node.is_origin().then_some(self.node.id());
                    let by = match by {
                        CONTACT => "its contact".to_string(),
                        _ => format!("node {}", self.peer_name(by)),
                    };
                    // The core's word on joining again: not after too many tries.
                    let again = match rejoin {
                        true => Again::Through(at),
                        false => Again::No { removed: removals },
                    };
                    self.end = Some(RunEnd::Expelled { by, again, carry, was_origin })
                }
                Action::Leadership { leader, in_minority, before } => self.log_leadership(leader, in_minority, before),
            }
        }
        self.note_run_figures();
        if let Some(s) = &mut self.status {
            s.update(&self.node, self.io.net.sent().0, self.exec.progress());
        }
        self.update_board();
        self.report_status();
    }

    /// `msg`, with the stand-in for an answer this node's program holds
    /// (`ExecEvent::RootDone { held }`) replaced by the answer's encoding
    /// — or by none once the program has taken the value: the asker then
    /// looks elsewhere, as for a node that lost it.
    fn encode_held_answer(&self, msg: Msg) -> Msg {
        match (msg, &self.held) {
            (Msg::AnswerValue { run, value: Some(v) }, Some(held))
                if v.as_ptr() == held.as_ptr() && v.len() == held.len() =>
            {
                Msg::AnswerValue { run, value: satin_core::dist::encode_held(&v) }
            }
            (msg, _) => msg,
        }
    }

    /// Says when the leader changes or this node loses (or regains) the
    /// majority, as the core tells (`Action::Leadership`).
    fn log_leadership(&self, leader: Option<NodeId>, in_minority: bool, before: (Option<NodeId>, bool)) {
        match (leader, in_minority) {
            (_, true) if !before.1 => {
                let (voters, heard) = self.node.voters_heard();
                warn!(
                    "no majority of the run reachable (heard lately from {} of the voters {}): taking no new work until it is",
                    self.names(&heard),
                    self.names(&voters)
                );
            }
            (Some(l), false) if before.1 => {
                info!("majority reachable again; node {} leads the run", self.peer_name(l))
            }
            (Some(l), _) if Some(l) != before.0 => info!("node {} leads the run", self.peer_name(l)),
            _ => {}
        }
        debug!("quorum: {}", self.node.quorum_summary());
    }

    /// Nodes by name, for a log line: `0, 1 and 3`, or `none`.
    pub(super) fn names(&self, ids: &[NodeId]) -> String {
        let names: Vec<String> = ids.iter().map(|&id| self.peer_name(id)).collect();
        match names.as_slice() {
            [] => "none".to_string(),
            [one] => format!("node {one}"),
            [rest @ .., last] => format!("nodes {} and {last}", rest.join(", ")),
        }
    }

    /// Says in words why `peer` is out of the run: what this node saw as
    /// the leader that removed it, or that the majority removed it.
    fn say_why_out(&self, peer: NodeId) {
        use satin_proto::quorum::Removal;
        let name = self.peer_name(peer);
        let (voters, _) = self.node.voters_heard();
        let by = self.names(&voters);
        match self.node.removal(peer) {
            // Its death was said when it was known.
            Some(Removal::Dead) => info!("node {name} is out of the run"),
            Some(Removal::Silent(t)) => {
                warn!("node {name} did not answer for {:.1} s; removed by the majority of {by}", t as f64 / 1e9)
            }
            Some(Removal::Deposed) => info!("node {name}, master before, is out of the run (the majority of {by})"),
            Some(Removal::CutFrom(other)) => {
                warn!("node {name} cannot reach node {}; removed by the majority of {by}", self.peer_name(other))
            }
            None => match self.node.leader() {
                Some(l) => {
                    info!("node {name} was removed from the run by the majority (node {} leads)", self.peer_name(l))
                }
                None => info!("node {name} is out of the run"),
            },
        }
    }

    pub(super) fn send_to_members(&mut self, msg: Msg) {
        let peers: Vec<NodeId> = self.node.live_members().filter(|m| *m != self.spec.me.id).collect();
        for p in peers {
            self.io.net.send(p, msg.clone());
        }
    }

    /// Connect to every member early (and again after a lost connection),
    /// so that beats reach them all.
    pub(super) fn connect_to_members(&mut self) {
        let members: Vec<NodeId> = self.node.live_members().filter(|m| *m != self.spec.me.id).collect();
        for m in members {
            if self.io.net.may_connect(m) {
                self.io.net.connect(m);
            }
        }
    }
}
