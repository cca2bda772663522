//! What the members say to each other about leadership and membership,
//! and the log entries and snapshots those messages carry (the majority's
//! rules are in `crate::quorum`).

use serde::{Deserialize, Serialize};

use super::{ClusterId, NodeId};

/// Messages of the majority's log (a small Raft): replication, elections, membership.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum QMsg {
    /// Leader to member, every heartbeat: the entries after the first
    /// `prev` (whose last has term `prev_term`), and how many are
    /// committed. Empty: a heartbeat.
    Append {
        /// The leader's term.
        term: u32,
        /// The index of the entry before the new ones.
        prev: u64,
        /// Its term.
        prev_term: u32,
        /// The new entries.
        entries: Vec<LogEntry>,
        /// How far the leader has committed.
        commit: u64,
    },
    /// Member to leader: whether it took the entries, and how many of the
    /// leader's entries it holds. Also sent on the member's own beat, so
    /// the leader hears from it even when its heartbeats get lost.
    Appended {
        /// The follower's term.
        term: u32,
        /// Whether the entries matched the follower's log and were taken.
        ok: bool,
        /// How far the follower's log matches the leader's.
        matched: u64,
    },
    /// Would you vote for me in `term` (which I have not started)? Asked
    /// before any real election, so a node that merely lost its link to
    /// the leader never disturbs the others.
    PreVote {
        /// The term the candidate would stand in.
        term: u32,
        /// The index of the candidate's last entry.
        last: u64,
        /// Its term.
        last_term: u32,
    },
    /// `current`: the voter's own term (a candidate behind it catches up).
    PreVoted {
        /// The term asked about.
        term: u32,
        /// Whether the voter would vote.
        granted: bool,
        /// The voter's current term.
        current: u32,
    },
    /// Vote for me in `term`.
    Vote {
        /// The candidate's term.
        term: u32,
        /// The index of the candidate's last entry.
        last: u64,
        /// Its term.
        last_term: u32,
    },
    /// The answer to `Vote`.
    Voted {
        /// The voter's term.
        term: u32,
        /// Whether it voted for the candidate.
        granted: bool,
    },
    /// You are not a member of this run any more (a majority removed you).
    NotMember {
        /// The sender's term.
        term: u32,
    },
    /// Member to leader: my connection to `peer` is lost (while both of
    /// us may still reach you): one of us must go.
    Unreachable {
        /// The node that cannot be reached.
        peer: NodeId,
    },
    /// Leader to member: reach `target` for me (it is silent here; see
    /// `detector.rs`).
    Probe {
        /// The silent member.
        target: NodeId,
    },
    /// Are you there? (For a leader's probe.)
    Ping,
    /// The answer to `Ping`.
    Pong,
    /// Member to leader: `target` answered a ping.
    Reached {
        /// The member reached.
        target: NodeId,
    },
    /// A member passes a newcomer's join on to the leader.
    JoinVia {
        /// The newcomer.
        id: NodeId,
        /// Its cluster.
        cluster: ClusterId,
    },
}

impl QMsg {
    /// Messages the core repeats until they are answered, so that losing
    /// one costs a beat: beats both ways, and a leader's entries for a
    /// follower that has not confirmed them (sent again each beat). A real
    /// driver may send them unreliably (if they fit in a datagram), past
    /// any message stuck behind a lost packet: under heavy loss a reliable
    /// stream can hold an entry back for seconds, long enough for the
    /// leader to step down over an entry that waits. Entries that add a
    /// member go reliably — the newcomer's address travels before them —
    /// and so does everything else (votes among them: an election must
    /// not fail for a lost packet).
    pub fn may_be_lost(&self) -> bool {
        match self {
            QMsg::Append { entries, .. } => !entries.iter().any(|e| matches!(e.change, super::Change::Add { .. })),
            QMsg::Appended { .. } => true,
            // A lost probe costs only the rescue it would have won.
            QMsg::Probe { .. } | QMsg::Ping | QMsg::Pong | QMsg::Reached { .. } => true,
            _ => false,
        }
    }

    /// Nodes the message names (their addresses travel before it).
    pub fn names(&self) -> Vec<NodeId> {
        match self {
            QMsg::Append { entries, .. } => entries
                .iter()
                .filter_map(|e| match e.change {
                    super::Change::Add { id, .. } => Some(id),
                    _ => None,
                })
                .collect(),
            QMsg::JoinVia { id, .. } => vec![*id],
            _ => Vec::new(),
        }
    }
}

/// What an entry decides.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Change {
    /// `leader` leads from this entry's term on: the run's master, which
    /// restarts the root job if it was not the master before.
    Lead {
        /// The new leader.
        leader: NodeId,
    },
    /// A newcomer joins, first without a vote (a learner) so that a
    /// joiner that dies at once never holds up a decision.
    Add {
        /// The newcomer.
        id: NodeId,
        /// Its cluster.
        cluster: ClusterId,
    },
    /// A learner that has caught up gets a vote.
    Promote {
        /// The learner.
        id: NodeId,
    },
    /// A member is out: dead, cut off, deposed, or gone.
    Remove {
        /// The member removed.
        id: NodeId,
    },
    /// The answer of run `run` (1 for a program's first annotated call;
    /// see `node/sequence.rs`). Once committed, that run is over. A large
    /// value stays out of the log (it would travel with every entry sent
    /// again): `holder` has it, and sends it only where it is needed (see
    /// `node/answer.rs`).
    Answer {
        /// Which run of the program.
        run: u32,
        /// The encoded answer, if it is small enough for the log.
        #[serde(with = "crate::shared_bytes::option")]
        value: Option<bytes::Bytes>,
        /// The one node that shows the answer (see `node/answer.rs`).
        shower: NodeId,
        /// The leader that proposed it, which holds its value.
        holder: NodeId,
    },
}

/// One entry of the log: a change, in the term its leader proposed it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogEntry {
    /// The leader's term when the entry was proposed.
    pub term: u32,
    /// What the entry changes.
    pub change: Change,
}

/// A member as the configuration knows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seat {
    /// The member's cluster.
    pub cluster: ClusterId,
    /// Whether it votes (a learner does not, yet).
    pub voter: bool,
}

/// What a member hands a newcomer: enough to follow the log.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    /// The members at the log's start: (id, cluster).
    pub base: Vec<(NodeId, ClusterId)>,
    /// The entries since.
    pub entries: Vec<LogEntry>,
    /// How many of them are committed.
    pub commit: u64,
    /// The current term.
    pub term: u32,
    /// The current leader.
    pub leader: NodeId,
}
