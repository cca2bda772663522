//! The run's decisions in order: who leads, who is a member, the answer.
//! A tiny Raft log — a handful of entries per membership change — whose
//! configuration is the start list plus every change appended so far
//! (committed or not, as Raft counts it).

use std::collections::BTreeMap;

use crate::msg::{Change, ClusterId, LogEntry, NodeId, Seat};
use crate::roster::Members;

impl Change {
    /// Whether the entry changes who votes or who is a member: at most one
    /// such entry may be uncommitted at a time (Raft's single-server
    /// changes, whose majorities always overlap).
    pub fn changes_config(&self) -> bool {
        matches!(self, Change::Add { .. } | Change::Promote { .. } | Change::Remove { .. })
    }
}

/// The log and the configuration it implies: the start list (shared by
/// every node of a simulated run, as `roster.rs` shares it) plus what the
/// entries changed, so a node's memory grows with the changes, not with
/// the run's size.
#[derive(Clone, Debug)]
pub(super) struct Log {
    /// Members at the start (every one a voter).
    base: Members,
    entries: Vec<LogEntry>,
    /// Entries known committed.
    pub(super) commit: usize,
    /// What the entries changed: a seat, or `None` for a removed member.
    delta: BTreeMap<NodeId, Option<Seat>>,
}

impl Log {
    pub(super) fn new(base: Members) -> Log {
        Log { base, entries: Vec::new(), commit: 0, delta: BTreeMap::new() }
    }

    /// A copy for a newcomer: the start list, the entries, the commit.
    pub(super) fn snapshot(&self) -> (Vec<(NodeId, ClusterId)>, Vec<LogEntry>, u64) {
        (self.base.iter().collect(), self.entries.clone(), self.commit as u64)
    }

    pub(super) fn from_snapshot(base: Vec<(NodeId, ClusterId)>, entries: Vec<LogEntry>, commit: u64) -> Log {
        let mut log = Log::new(Members::new(&base));
        log.entries = entries;
        log.commit = (commit as usize).min(log.entries.len());
        log.recompute();
        log
    }

    fn recompute(&mut self) {
        self.delta.clear();
        for i in 0..self.entries.len() {
            let change = self.entries[i].change.clone();
            self.apply(&change);
        }
    }

    fn seat(&self, id: NodeId) -> Option<Seat> {
        match self.delta.get(&id) {
            Some(seat) => *seat,
            None => self.base.cluster_of(id).map(|cluster| Seat { cluster, voter: true }),
        }
    }

    fn apply(&mut self, change: &Change) {
        match *change {
            Change::Add { id, cluster } => {
                if self.seat(id).is_none() && !self.was_removed(id) {
                    self.delta.insert(id, Some(Seat { cluster, voter: false }));
                }
            }
            Change::Promote { id } => {
                if let Some(seat) = self.seat(id) {
                    self.delta.insert(id, Some(Seat { voter: true, ..seat }));
                }
            }
            Change::Remove { id } => {
                if self.seat(id).is_some() {
                    self.delta.insert(id, None);
                }
            }
            Change::Lead { .. } | Change::Answer { .. } => {}
        }
    }

    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }

    pub(super) fn entry(&self, i: usize) -> Option<&LogEntry> {
        self.entries.get(i)
    }

    /// Term of the entry at position `n - 1` (0 for an empty prefix).
    pub(super) fn term_at(&self, n: usize) -> u32 {
        if n == 0 {
            0
        } else {
            self.entries.get(n - 1).map_or(0, |e| e.term)
        }
    }

    pub(super) fn last_term(&self) -> u32 {
        self.term_at(self.entries.len())
    }

    pub(super) fn entries_from(&self, n: usize) -> Vec<LogEntry> {
        self.entries.get(n..).map(<[LogEntry]>::to_vec).unwrap_or_default()
    }

    pub(super) fn push(&mut self, e: LogEntry) {
        self.apply(&e.change);
        self.entries.push(e);
    }

    /// Places `entries` after the first `prev` entries, dropping any
    /// later entry that conflicts (never a committed one: a leader's log
    /// holds every committed entry). Returns the new length.
    pub(super) fn merge(&mut self, prev: usize, entries: Vec<LogEntry>) -> usize {
        let mut truncated = false;
        for (k, e) in entries.into_iter().enumerate() {
            let at = prev + k;
            match self.entries.get(at) {
                Some(mine) if mine.term == e.term => continue,
                Some(_) => {
                    debug_assert!(at >= self.commit, "a committed entry conflicts");
                    self.entries.truncate(at);
                    truncated = true;
                    self.entries.push(e);
                }
                None if truncated => self.entries.push(e),
                None => self.push(e),
            }
        }
        if truncated {
            self.recompute();
        }
        self.entries.len()
    }

    /// Whether an uncommitted configuration change is in the log.
    pub(super) fn change_pending(&self) -> bool {
        self.entries[self.commit..].iter().any(|e| e.change.changes_config())
    }

    /// Every member, in id order.
    pub(super) fn members(&self) -> impl Iterator<Item = (NodeId, Seat)> + '_ {
        let mut added = self
            .delta
            .iter()
            .filter_map(|(&id, s)| s.filter(|_| self.base.cluster_of(id).is_none()).map(|s| (id, s)))
            .peekable();
        let mut base = self
            .base
            .iter()
            .filter_map(|(id, cluster)| match self.delta.get(&id) {
                Some(s) => s.map(|s| (id, s)),
                None => Some((id, Seat { cluster, voter: true })),
            })
            .peekable();
        std::iter::from_fn(move || match (base.peek(), added.peek()) {
            (Some(b), Some(a)) if a.0 < b.0 => added.next(),
            (Some(_), _) => base.next(),
            (None, _) => added.next(),
        })
    }

    pub(super) fn member_ids(&self) -> Vec<NodeId> {
        self.members().map(|(id, _)| id).collect()
    }

    pub(super) fn is_member(&self, id: NodeId) -> bool {
        self.seat(id).is_some()
    }

    pub(super) fn is_voter(&self, id: NodeId) -> bool {
        self.seat(id).is_some_and(|s| s.voter)
    }

    pub(super) fn voters(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.members().filter(|(_, s)| s.voter).map(|(id, _)| id)
    }

    /// Voters of the committed configuration (the start list and the
    /// committed entries only).
    pub(super) fn committed_voters(&self) -> Vec<NodeId> {
        let mut committed = Log::new(self.base.clone());
        for e in &self.entries[..self.commit] {
            committed.push(e.clone());
        }
        committed.voters().collect()
    }

    /// Whether an entry removed `id` (committed or not).
    pub(super) fn was_removed(&self, id: NodeId) -> bool {
        matches!(self.delta.get(&id), Some(None))
    }

    /// Whether a committed entry removed `id`: it is out for good (and gets
    /// told so if it knocks). An entry not committed yet may still be
    /// replaced by another leader's.
    pub(super) fn removed_for_good(&self, id: NodeId) -> bool {
        self.was_removed(id) && self.entries[..self.commit].iter().any(|e| e.change == Change::Remove { id })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(term: u32, change: Change) -> LogEntry {
        LogEntry { term, change }
    }

    #[test]
    fn the_configuration_follows_the_entries_and_a_conflict_truncates() {
        let mut log = Log::new(Members::new(&[(1, 0), (2, 0)]));
        log.push(e(1, Change::Add { id: 3, cluster: 1 }));
        assert!(log.is_member(3) && !log.is_voter(3));
        log.push(e(1, Change::Promote { id: 3 }));
        assert_eq!(log.voters().collect::<Vec<_>>(), vec![1, 2, 3]);
        assert!(log.change_pending());
        log.commit = 2;
        assert!(!log.change_pending());
        log.push(e(1, Change::Remove { id: 2 }));
        assert!(log.was_removed(2) && !log.is_member(2));
        // A new leader of term 2 never had the removal: it goes.
        let len = log.merge(2, vec![e(2, Change::Lead { leader: 1 })]);
        assert_eq!(len, 3);
        assert!(log.is_member(2) && !log.was_removed(2));
        assert_eq!(log.last_term(), 2);
        // The same entries again change nothing.
        assert_eq!(log.merge(0, log.entries_from(0)), 3);
        let (base, entries, commit) = log.snapshot();
        let copy = Log::from_snapshot(base, entries, commit);
        assert_eq!(copy.members().collect::<Vec<_>>(), log.members().collect::<Vec<_>>());
        assert_eq!(copy.commit, 2);
    }
}
