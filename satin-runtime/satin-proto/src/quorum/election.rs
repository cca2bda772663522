//! Following a leader, missing it, and electing another: pre-votes, votes,
//! the leader's lease, and how a member finds out it is in a minority.

use super::{Change, LogEntry, Output, QMsg, Quorum, Role, Round, Time};
use crate::msg::NodeId;

impl Quorum {
    /// Whether this member misses its leader: none known, known to be
    /// dead, or silent for `suspect_after`.
    pub(super) fn leader_silent(&self, now: Time) -> bool {
        match self.leader {
            Some(l) if l == self.me => false,
            Some(l) if self.certain_dead.contains(&l) => true,
            None if self.lease_void => true,
            _ => now >= self.leader_heard + self.cfg.suspect_after,
        }
    }

    /// A member's beat, and its election clock.
    pub(super) fn follow(&mut self, now: Time) {
        if let Some(leader) = self.leader.filter(|&l| l != self.me) {
            if now >= self.next_beat {
                self.next_beat = now + self.cfg.heartbeat;
                let msg = QMsg::Appended { term: self.term, ok: true, matched: self.confirmed as u64 };
                self.out.push_back(Output::Send { to: leader, msg });
            }
        }
        let due = match self.next_election {
            Some(at) => now >= at,
            None if self.leader_silent(now) => {
                self.schedule_election(now, 0);
                self.next_election.is_some_and(|at| now >= at)
            }
            None => false,
        };
        if due {
            self.next_election = None;
            self.start_pre_vote(now);
        }
    }

    /// Members stand in order of id (the lowest first, two beats apart),
    /// so that one election usually settles it; `extra` spreads retries.
    pub(super) fn schedule_election(&mut self, now: Time, extra: Time) {
        let leader = self.leader;
        let rank = self.electorate().filter(|&v| Some(v) != leader).position(|v| v == self.me);
        let rank = rank.unwrap_or_else(|| self.electorate().count()) as u64;
        self.next_election = Some(now + rank * 2 * self.cfg.heartbeat + extra);
    }

    /// Asks every voter whether it misses the leader too. Learners ask as
    /// well — not to stand, but to find out whether a majority is there.
    fn start_pre_vote(&mut self, now: Time) {
        self.role = Role::PreCandidate;
        let mut round = Round { started: now, ..Round::default() };
        round.replies.insert(self.me);
        if self.log.is_voter(self.me) {
            round.granted.insert(self.me);
        }
        self.round = round;
        let msg = QMsg::PreVote { term: self.term + 1, last: self.log.len() as u64, last_term: self.log.last_term() };
        self.ask_voters(msg);
        if self.is_quorum(&self.round.granted) && self.log.is_voter(self.me) {
            self.start_vote(now);
        }
    }

    fn start_vote(&mut self, now: Time) {
        self.term += 1;
        self.role = Role::Candidate;
        self.voted_for = Some(self.me);
        self.elections += 1;
        let mut round = Round { started: now, ..Round::default() };
        round.replies.insert(self.me);
        round.granted.insert(self.me);
        self.round = round;
        let msg = QMsg::Vote { term: self.term, last: self.log.len() as u64, last_term: self.log.last_term() };
        self.ask_voters(msg);
        if self.is_quorum(&self.round.granted) {
            self.become_leader(now);
        }
    }

    fn ask_voters(&mut self, msg: QMsg) {
        let voters: Vec<NodeId> = self.electorate().filter(|&v| v != self.me).collect();
        for v in voters {
            self.out.push_back(Output::Send { to: v, msg: msg.clone() });
        }
    }

    /// A round that did not win within `suspect_after` ends. Fewer
    /// replies than a majority: this member is cut off from most of the
    /// run — a minority, which takes no new work.
    pub(super) fn campaign(&mut self, now: Time) {
        if now < self.round.started + self.cfg.suspect_after {
            return;
        }
        if self.is_quorum(&self.round.replies) {
            // The others are there (and still follow a leader): this
            // member lost only its own link to the leader, which will
            // remove it if the link stays down.
            self.minority_since = None;
        } else {
            self.minority_since.get_or_insert(self.round.started);
        }
        self.role = Role::Follower;
        let spread = self.rng.below(self.cfg.suspect_after / 2 + 1);
        self.schedule_election(now, self.cfg.suspect_after / 2 + spread);
    }

    /// Is a log ending at (`last`, `last_term`) at least as complete as ours?
    fn up_to_date(&self, last: usize, last_term: u32) -> bool {
        (last_term, last) >= (self.log.last_term(), self.log.len())
    }

    pub(super) fn on_pre_vote(&mut self, now: Time, from: NodeId, term: u32, last: usize, last_term: u32) {
        // A leader that asks has lost its office (check quorum): it does
        // not hold its own lease.
        let lease = !self.leader_silent(now) && self.leader != Some(from);
        let granted = term > self.term
            && self.log.is_voter(from)
            && !lease
            && self.up_to_date(last, last_term)
            && !self.holds_answer_beyond(last);
        if lease {
            self.leased_out.retain(|a| !matches!(a, Asked::PreVote { from: f, .. } if *f == from));
            self.leased_out.push(Asked::PreVote { from, term, last, last_term });
        }
        self.out.push_back(Output::Send { to: from, msg: QMsg::PreVoted { term, granted, current: self.term } });
    }

    pub(super) fn on_pre_voted(&mut self, now: Time, from: NodeId, term: u32, granted: bool, current: u32) {
        if self.role != Role::PreCandidate || term != self.term + 1 {
            return;
        }
        if current >= term {
            // The others are in a later term already: catch up, and stand
            // (if at all) in the one after it next time.
            self.round.replies.insert(from);
            self.become_follower(now, current, None);
            return;
        }
        self.round.replies.insert(from);
        if granted {
            self.round.granted.insert(from);
        }
        if self.is_quorum(&self.round.granted) && self.log.is_voter(self.me) {
            self.start_vote(now);
        }
    }

    pub(super) fn on_vote(&mut self, now: Time, from: NodeId, term: u32, last: usize, last_term: u32) {
        let lease = !self.leader_silent(now) && self.leader != Some(from);
        if lease {
            self.leased_out.retain(|a| !matches!(a, Asked::Vote { from: f, .. } if *f == from));
            self.leased_out.push(Asked::Vote { from, term, last, last_term });
        }
        if term < self.term || lease {
            // A leader heard within `suspect_after` still leads: its
            // lease holds, whatever the candidate's term.
            let msg = QMsg::Voted { term: self.term.max(if lease { term } else { 0 }), granted: false };
            self.out.push_back(Output::Send { to: from, msg });
            return;
        }
        if term > self.term {
            self.become_follower(now, term, None);
        }
        let granted = self.voted_for.is_none_or(|v| v == from)
            && self.log.is_voter(from)
            && self.up_to_date(last, last_term)
            && !self.holds_answer_beyond(last);
        if granted {
            self.voted_for = Some(from);
            // Give the candidate its time before standing ourselves.
            self.leader_heard = now;
            self.next_election = None;
        }
        self.out.push_back(Output::Send { to: from, msg: QMsg::Voted { term: self.term, granted } });
    }

    pub(super) fn on_voted(&mut self, now: Time, from: NodeId, term: u32, granted: bool) {
        if term > self.term {
            self.become_follower(now, term, None);
            return;
        }
        if self.role != Role::Candidate || term != self.term {
            return;
        }
        self.round.replies.insert(from);
        if granted {
            self.round.granted.insert(from);
        }
        if self.is_quorum(&self.round.granted) {
            self.become_leader(now);
        }
    }

    /// A committed answer is final: never help a candidate that lacks it
    /// (the log check already refuses most; this covers equal lengths).
    fn holds_answer_beyond(&self, last: usize) -> bool {
        (last..self.log.commit).any(|i| matches!(self.log.entry(i).map(|e| &e.change), Some(Change::Answer { .. })))
    }

    /// The leader's entries, as a member sees them.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn on_append(
        &mut self,
        now: Time,
        from: NodeId,
        term: u32,
        prev: usize,
        prev_term: u32,
        entries: Vec<LogEntry>,
        commit: usize,
    ) {
        if term < self.term {
            let msg = QMsg::Appended { term: self.term, ok: false, matched: 0 };
            self.out.push_back(Output::Send { to: from, msg });
            return;
        }
        if self.leader != Some(from) || term != self.term {
            self.confirmed = 0;
        }
        self.become_follower(now, term, Some(from));
        self.next_election = None;
        if prev > self.log.len() || self.log.term_at(prev) != prev_term {
            let hint = if prev > self.log.len() { self.log.len() } else { prev.saturating_sub(1) };
            let msg = QMsg::Appended { term, ok: false, matched: hint as u64 };
            self.out.push_back(Output::Send { to: from, msg });
            return;
        }
        let given = entries.len();
        self.log.merge(prev, entries);
        self.confirmed = prev + given;
        let commit = commit.min(self.confirmed);
        if commit > self.log.commit {
            self.log.commit = commit;
            self.apply_committed();
        }
        let msg = QMsg::Appended { term, ok: true, matched: self.confirmed as u64 };
        self.out.push_back(Output::Send { to: from, msg });
    }

    /// Who the run's master was before this node won: the leader of the
    /// last `Lead` entry, or the first leader.
    pub(super) fn last_master(&self) -> Option<NodeId> {
        (0..self.log.len())
            .rev()
            .find_map(|i| match self.log.entry(i).map(|e| &e.change) {
                Some(Change::Lead { leader }) => Some(*leader),
                _ => None,
            })
            .or(self.first_leader)
    }
}

/// A question refused for the leader's lease alone, asked again if the
/// leader is found dead for certain: a candidate that heard of the death
/// before this member did would otherwise wait out its round
/// (`suspect_after`) and then some.
#[derive(Clone, Copy, Debug)]
pub(super) enum Asked {
    PreVote { from: NodeId, term: u32, last: usize, last_term: u32 },
    Vote { from: NodeId, term: u32, last: usize, last_term: u32 },
}

impl Quorum {
    /// The leader is dead for certain: the questions its lease refused
    /// are answered again.
    pub(super) fn answer_leased_out(&mut self, now: Time) {
        for asked in std::mem::take(&mut self.leased_out) {
            match asked {
                Asked::PreVote { from, term, last, last_term } => self.on_pre_vote(now, from, term, last, last_term),
                Asked::Vote { from, term, last, last_term } => self.on_vote(now, from, term, last, last_term),
            }
        }
    }
}
