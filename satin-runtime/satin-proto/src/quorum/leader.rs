//! The leader's side: beats and entries to every member, commits once a
//! majority holds an entry, check quorum, and the membership changes it
//! decides — one at a time, the most urgent first.

use std::collections::BTreeSet;

use super::{Change, Followers, LogEntry, Output, QMsg, Quorum, Removal, Role, Time};

/// How many times `suspect_after` a newcomer may stay silent before its
/// first beat (see `advance_changes`).
const JOIN_GRACE: Time = 5;
use crate::msg::NodeId;

impl Quorum {
    pub(super) fn become_leader(&mut self, now: Time) {
        let deposed = self.last_master().filter(|&m| m != self.me);
        self.role = Role::Leader;
        self.leader = Some(self.me);
        self.lease_void = false;
        self.minority_since = None;
        self.next_election = None;
        self.take_office(now);
        self.append(now, Change::Lead { leader: self.me });
        if let Some(old) = deposed {
            // The old master goes, once this term's first entry is in: a
            // master that lost its office while alive leaves cleanly, and
            // its work is recovered as after a crash.
            self.followers.deposed = Some(old);
        }
    }

    /// Fresh bookkeeping of every member (from a static start, or won).
    pub(super) fn take_office(&mut self, now: Time) {
        self.followers = Followers { since: now, ..Followers::default() };
        let members: Vec<NodeId> = self.log.member_ids().into_iter().filter(|&m| m != self.me).collect();
        for m in members {
            self.followers.next.insert(m, self.log.len());
            self.followers.matched.insert(m, 0);
            // Silence counts from now: a new leader gives everyone a chance.
            self.heard.insert(m, now);
        }
    }

    /// Appends an entry of this term and sends it out at once.
    pub(super) fn append(&mut self, now: Time, change: Change) {
        if let Change::Add { id, .. } = change {
            self.followers.next.insert(id, 0);
            self.followers.matched.insert(id, 0);
            self.heard.entry(id).or_insert(now);
        }
        self.log.push(LogEntry { term: self.term, change });
        self.followers.waiting_since.get_or_insert(now);
        self.replicate();
        self.update_commit(now);
    }

    /// Entries (or a bare beat) to every member but this node.
    fn replicate(&mut self) {
        let len = self.log.len();
        let members: Vec<NodeId> = self.log.member_ids().into_iter().filter(|&m| m != self.me).collect();
        let behind: Vec<NodeId> =
            members.iter().copied().filter(|m| self.followers.next.get(m).is_none_or(|&n| n < len)).collect();
        if behind.is_empty() && !members.is_empty() {
            let msg = QMsg::Append {
                term: self.term,
                prev: len as u64,
                prev_term: self.log.last_term(),
                entries: Vec::new(),
                commit: self.log.commit as u64,
            };
            self.out.push_back(Output::Broadcast { msg });
            return;
        }
        for m in members {
            self.send_append(m);
        }
    }

    pub(super) fn send_append(&mut self, to: NodeId) {
        let next = self.followers.next.get(&to).copied().unwrap_or(0).min(self.log.len());
        let msg = QMsg::Append {
            term: self.term,
            prev: next as u64,
            prev_term: self.log.term_at(next),
            entries: self.log.entries_from(next),
            commit: self.log.commit as u64,
        };
        self.out.push_back(Output::Send { to, msg });
    }

    /// The leader's periodic work.
    pub(super) fn lead(&mut self, now: Time) {
        if now >= self.next_beat {
            self.next_beat = now + self.cfg.heartbeat;
            self.replicate();
        }
        if now >= self.followers.since + self.cfg.suspect_after {
            let window = self.cfg.suspect_after;
            let heard: BTreeSet<NodeId> =
                self.heard.iter().filter(|(_, &t)| t + window > now).map(|(&v, _)| v).chain([self.me]).collect();
            // Half of the committed configuration is enough to stay: the
            // other half cannot elect anyone (that takes more than half),
            // and this half can go on — each removal needs a majority only
            // of the configuration it makes. But an entry that waits too
            // long to be committed means this half cannot decide anything.
            let stalled = self.followers.waiting_since.is_some_and(|t| now >= t + 2 * window);
            if !self.is_half_committed(&heard) || stalled {
                // Check quorum: cut off from the others, this node is no
                // master any more; a majority elects another.
                self.become_follower(now, self.term, None);
                self.minority_since.get_or_insert(now);
                return;
            }
        }
        self.advance_changes(now);
    }

    pub(super) fn on_appended(&mut self, now: Time, from: NodeId, term: u32, ok: bool, matched: usize) {
        if term > self.term {
            self.become_follower(now, term, None);
            return;
        }
        if self.role != Role::Leader || term < self.term {
            return;
        }
        self.followers.beaten.insert(from);
        if ok {
            let known = self.followers.matched.entry(from).or_insert(0);
            if matched > *known {
                *known = matched;
                self.followers.next.insert(from, matched);
                self.update_commit(now);
                // A learner that caught up may get its vote now.
                self.advance_changes(now);
            }
        } else {
            let next = self.followers.next.entry(from).or_insert(0);
            *next = (*next).min(matched);
            self.send_append(from);
        }
    }

    /// Commits the longest prefix a majority holds, if its last entry is
    /// of this term (Raft's rule: an older term's entry commits only under
    /// one of the current term).
    pub(super) fn update_commit(&mut self, now: Time) {
        let mut n = self.log.len();
        while n > self.log.commit {
            if self.log.term_at(n) == self.term {
                let holders: BTreeSet<NodeId> = self
                    .electorate()
                    .filter(|&v| v == self.me || self.followers.matched.get(&v).is_some_and(|&m| m >= n))
                    .collect();
                if self.is_quorum(&holders) {
                    self.log.commit = n;
                    self.followers.waiting_since = (n < self.log.len()).then_some(now);
                    self.apply_committed();
                    self.advance_changes(now);
                    return;
                }
            }
            n -= 1;
        }
    }

    /// Whether an entry of this term is committed (the new leader's first
    /// entry): only then may it change the configuration.
    fn settled_in(&self) -> bool {
        self.log.commit > 0 && self.log.term_at(self.log.commit) == self.term
            || (self.term == 0 && self.first_leader == Some(self.me))
    }

    /// The next membership change, if none is pending: the dead first,
    /// then the deposed master, silent members, lost links, learners that
    /// have caught up (a run is safer with more voters), and newcomers.
    pub(super) fn advance_changes(&mut self, now: Time) {
        if self.role != Role::Leader || self.log.change_pending() || !self.settled_in() {
            return;
        }
        let members: Vec<NodeId> = self.log.member_ids().into_iter().filter(|&m| m != self.me).collect();
        let dead_or_deposed = members
            .iter()
            .find(|m| self.certain_dead.contains(m))
            .or(self.followers.deposed.as_ref().filter(|d| members.contains(d)))
            .copied();
        let silent = match dead_or_deposed {
            Some(_) => None,
            // Others are asked to reach a silent member first (`detector.rs`).
            None => self.silent_member(now, &members).filter(|&m| self.may_remove_silent(now, m)),
        };
        let why = |id: NodeId| {
            if self.certain_dead.contains(&id) {
                Removal::Dead
            } else if self.followers.deposed == Some(id) {
                Removal::Deposed
            } else {
                Removal::Silent(now.saturating_sub(self.heard.get(&id).copied().unwrap_or(self.followers.since)))
            }
        };
        if let Some(id) = dead_or_deposed.or(silent) {
            self.removed.insert(id, why(id));
        }
        // A second learner to promote right behind the first (see below).
        let mut pair = None;
        let change = dead_or_deposed
            .or(silent)
            .map(|id| Change::Remove { id })
            .or_else(|| self.cut_link_removal(now))
            .or_else(|| {
                let ready: Vec<NodeId> = members
                    .iter()
                    .copied()
                    .filter(|&m| {
                        !self.log.is_voter(m)
                            && self.followers.matched.get(&m).is_some_and(|&x| x >= self.log.len())
                            && self.heard.get(&m).is_some_and(|&t| t + self.cfg.suspect_after > now)
                    })
                    .collect();
                // An even number of voters survives no more deaths than
                // one fewer, and two voters survive none: learners are
                // promoted to an odd count only. A leader alone promotes two
                // at once (see below); otherwise one goes now, to an odd
                // count, or with a second one ready to follow it. (A first
                // joiner killed before the second one caught up left the
                // other two waiting forever on a majority of two.)
                let voters = self.log.voters().count();
                if voters == 1 && ready.len() >= 2 {
                    pair = Some(ready[1]);
                }
                let odd_after = voters.is_multiple_of(2);
                ready.first().filter(|_| odd_after || ready.len() >= 2).map(|&id| Change::Promote { id })
            })
            .or_else(|| self.next_join());
        if let Some(change) = change {
            if let Change::Remove { id } = change {
                self.removals += 1;
                if self.followers.deposed == Some(id) {
                    self.followers.deposed = None;
                }
            }
            self.append(now, change);
        }
        // A leader that was the only voter promotes a second learner right
        // behind the first, before either commits: from one voter to three
        // in one step, so that no configuration of two voters is ever
        // committed. Raft changes one voter at a time so that every old
        // majority meets every new one; here the only old majority is this
        // leader, which counts with the new configuration from the moment
        // it appends it, and a learner votes only once it holds the entry
        // that made it a voter.
        if let Some(second) = pair {
            if self.log.voters().count() == 2 && !self.log.is_voter(second) {
                self.append(now, Change::Promote { id: second });
            }
        }
    }

    /// The member silent the longest past its window, if any. A learner
    /// that has not beaten yet may still be waiting for its welcome (a
    /// handshake under loss takes seconds): it holds no vote and no work,
    /// so it gets longer.
    ///
    /// Only a removal that leaves a configuration whose majority this
    /// leader hears from lately: under loss a member of the majority's
    /// side may look silent for a moment while voters cut off for good
    /// stay voters, and removing it could leave a configuration no
    /// reachable majority can decide anything in (two of 30 000 simulated
    /// schedules did so before). Such a member waits; the cut-off ones go.
    fn silent_member(&self, now: Time, members: &[NodeId]) -> Option<NodeId> {
        let silent = |m: &&NodeId| {
            let new = !self.log.is_voter(**m) && !self.followers.beaten.contains(*m);
            let wait = if new { JOIN_GRACE * self.cfg.suspect_after } else { self.cfg.suspect_after };
            self.heard.get(m).is_none_or(|&t| t + wait <= now)
        };
        members
            .iter()
            .filter(silent)
            .filter(|&&m| self.removal_keeps_a_majority(now, m))
            .min_by_key(|m| self.heard.get(m).copied().unwrap_or(0))
            .copied()
    }

    /// Whether the configuration without `m` has a majority of voters
    /// this leader heard from within `suspect_after`.
    fn removal_keeps_a_majority(&self, now: Time, m: NodeId) -> bool {
        let window = self.cfg.suspect_after;
        let heard = |v: NodeId| v == self.me || self.heard.get(&v).is_some_and(|&t| t + window > now);
        let (mut total, mut yes) = (0, 0);
        for v in self.electorate().filter(|&v| v != m) {
            total += 1;
            if heard(v) {
                yes += 1;
            }
        }
        total == 0 || 2 * yes > total
    }

    /// Two members that lost their link while both still beat to the
    /// leader: the run cannot use a pair that cannot talk — one goes (the
    /// higher id; never the leader). Only once both have beaten to the
    /// leader a beat after the report: an end the leader does not hear
    /// either is no such case — that end is cut off (a partition looks
    /// the same from the other end for a moment), and goes for its
    /// silence. Reports that never come to that are dropped after
    /// `suspect_after`.
    fn cut_link_removal(&mut self, now: Time) -> Option<Change> {
        let beat = self.cfg.heartbeat;
        let mut reports = std::mem::take(&mut self.followers.unreachable);
        let mut removal = None;
        let mut cut_from = None;
        reports.retain(|&(a, b, at)| {
            if removal.is_some() {
                return true;
            }
            if !self.log.is_member(a) || !self.log.is_member(b) || a == b || now >= at + self.cfg.suspect_after {
                return false;
            }
            let beaten_since = |m: NodeId| m == self.me || self.heard.get(&m).is_some_and(|&t| t > at + beat);
            if !beaten_since(a) || !beaten_since(b) {
                return true;
            }
            let id = if a == self.me {
                b
            } else if b == self.me {
                a
            } else {
                a.max(b)
            };
            // Not if what is left could not decide (see `silent_member`).
            if self.removal_keeps_a_majority(now, id) {
                removal = Some(Change::Remove { id });
                cut_from = Some((id, if id == a { b } else { a }));
            }
            false
        });
        self.followers.unreachable = reports;
        if let Some((id, other)) = cut_from {
            self.removed.insert(id, Removal::CutFrom(other));
        }
        removal
    }

    fn next_join(&mut self) -> Option<Change> {
        while let Some((id, cluster)) = self.followers.joins.pop_front() {
            if !self.log.is_member(id) && !self.log.was_removed(id) && !self.certain_dead.contains(&id) {
                return Some(Change::Add { id, cluster });
            }
        }
        None
    }
}
