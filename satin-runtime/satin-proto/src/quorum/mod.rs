//! Who leads the run, who is in it, and its answer — decided by a majority.
//!
//! A node cannot tell a dead peer from one cut off by the network, so no
//! node decides alone that another is gone, that it is the master now, or
//! that the run is over: those decisions are entries of a small replicated
//! log in the manner of Raft (Ongaro and Ousterhout, 2014), and an entry
//! counts once a majority of the voting members holds it. The log has a
//! handful of entries — `Lead`, `Add`, `Promote`, `Remove`, `Answer`, see
//! [`Change`] — so it is sent whole where Raft would snapshot.
//!
//! - **Failure detection.** The leader beats every `heartbeat` (an
//!   `Append`), and every member beats back (`Appended`) on its own clock,
//!   so a lost beat in either direction costs nothing. A member the leader
//!   has not heard from for `suspect_after` is removed (a `Remove` entry);
//!   a leader that has not heard from half of the voters for that long
//!   steps down (*check quorum*): a cut-off master stops being master on
//!   its own.
//! - **Elections** with *pre-votes*: a member that misses the leader first
//!   asks whether the others miss it too, and only a majority of yeses
//!   starts a real election — so a member cut off from the leader alone (an
//!   asymmetric cut) never deposes it, and a member that rejoins after a
//!   partition does not either. A member that heard from its leader within
//!   `suspect_after` votes for nobody else (the leader's *lease*). Members
//!   stand in order of id (the lowest first), so elections rarely split.
//! - **A new leader** appends `Lead` (the run's new master, which restarts
//!   the root job) and then removes the old leader, which leaves cleanly
//!   when it hears of it.
//! - **Membership changes** one at a time (Raft's single-server changes:
//!   consecutive configurations always share a majority); newcomers join
//!   as learners and get a vote once they hold the log.
//! - **The answer** is an `Answer` entry: the master prints it only once a
//!   majority holds it, and a member that holds it votes for no one who
//!   lacks it. At most one answer per run, from the side with a majority.
//! - **A minority** — a member that for `suspect_after` has neither a
//!   leader nor the replies of a majority to its pre-votes — takes no new
//!   work, and after `heal_wait` without a majority gives up
//!   ([`Output::GiveUp`]). A partition that heals in time costs nothing;
//!   a member the majority removed meanwhile is told so ([`QMsg::NotMember`])
//!   when it knocks, and leaves.
//! - **Certain deaths.** A member whose process is known to be gone (a
//!   supervisor saw it end, it said it leaves, or — in the simulator — the
//!   fail-stop crash of the papers) no longer counts in majorities: crashed
//!   nodes cannot be on the other side of a partition. Across machines
//!   without a supervisor there are none: every death is a suspicion
//!   decided by the majority.
//!
//! An even split: the half that holds the master goes on. The other half
//! cannot elect anyone (that takes more than half), and the master's half
//! removes the others one at a time — each removal needs a majority only
//! of the configuration it makes (Raft's single-server changes). If the
//! split comes while no master leads (an election under way), neither
//! half can elect one: both stop and give up after `heal_wait`. So two
//! voters survive the silent loss of the one that is not master, and no
//! other; a third voter makes it any one.

mod detector;
mod election;
mod leader;
mod links;
mod log;

pub use crate::msg::{Change, LogEntry, QMsg, Seat, Snapshot};

use bytes::Bytes;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

use super::msg::{ClusterId, NodeId};
use super::rng::SplitMix64;
use super::roster::Members;
use log::Log;

/// Nanoseconds (the driver's clock, or virtual time).
pub type Time = u64;

/// Why a leader removed a member (for logs: see [`Quorum::removal`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Removal {
    /// Its process is known to be gone.
    Dead,
    /// It was master before this leader: it goes once this term began.
    Deposed,
    /// Neither it nor others reached it for this long (nanoseconds).
    Silent(Time),
    /// It cannot talk with this other member, which stays.
    CutFrom(NodeId),
}

/// The detector's and the minority's settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QuorumConfig {
    /// How often the leader and every member beat.
    pub heartbeat: Time,
    /// Silence after which a member is removed, a leader steps down, or a
    /// member asks whether the others miss the leader too.
    pub suspect_after: Time,
    /// How long a member without a majority waits for the partition to
    /// heal before it gives up.
    pub heal_wait: Time,
}

impl Default for QuorumConfig {
    fn default() -> Self {
        QuorumConfig { heartbeat: 100_000_000, suspect_after: 1_000_000_000, heal_wait: 30_000_000_000 }
    }
}

/// What the node must do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Output {
    /// Send `msg` to node `to`.
    Send {
        /// The receiver.
        to: NodeId,
        /// The message.
        msg: QMsg,
    },
    /// Send `msg` to every member but this one.
    Broadcast {
        /// The message.
        msg: QMsg,
    },
    /// An entry is committed (in log order; `index` counts from 1): apply it.
    Apply {
        /// The entry's place in the log.
        index: u64,
        /// The term it was proposed in.
        term: u32,
        /// What it changes.
        change: Change,
    },
    /// A newcomer's `Add` is committed: send it the welcome.
    Admit {
        /// The node admitted.
        id: NodeId,
    },
    /// This node is not a member any more: a majority removed it.
    Expelled {
        /// The member that removed this node.
        by: NodeId,
    },
    /// No majority for `heal_wait`: the run goes on elsewhere, or nowhere.
    GiveUp {
        /// How long this node waited for a majority.
        waited: Time,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Follower,
    PreCandidate,
    Candidate,
    Leader,
}

/// The state of one election round.
#[derive(Debug, Default)]
struct Round {
    started: Time,
    /// Who answered at all, and who said yes.
    replies: BTreeSet<NodeId>,
    granted: BTreeSet<NodeId>,
}

/// The leader's view of the members.
#[derive(Debug, Default)]
struct Followers {
    /// Entries each member is known to hold, and where to send from.
    matched: BTreeMap<NodeId, usize>,
    next: BTreeMap<NodeId, usize>,
    /// When the leader took office (silence is counted from then at most).
    since: Time,
    /// Links members reported lost: (reporter, peer, when).
    unreachable: Vec<(NodeId, NodeId, Time)>,
    /// Since when an entry has waited to be committed (`None`: none waits).
    waiting_since: Option<Time>,
    /// Newcomers waiting for their `Add`.
    joins: VecDeque<(NodeId, ClusterId)>,
    /// Indirect probes of silent members (see `detector.rs`).
    probes: BTreeMap<NodeId, detector::Probe>,
    /// The master this leader replaced, to be removed.
    deposed: Option<NodeId>,
    /// Members that have beaten to this leader at least once.
    beaten: BTreeSet<NodeId>,
}

/// The quorum state of one node (sans-IO: the node feeds it the time,
/// messages and deaths, and drains [`Quorum::poll`]).
#[derive(Debug)]
pub struct Quorum {
    me: NodeId,
    cfg: QuorumConfig,
    term: u32,
    role: Role,
    leader: Option<NodeId>,
    voted_for: Option<NodeId>,
    log: Log,
    /// Entries handed out as [`Output::Apply`].
    applied: usize,
    /// Entries of the current leader's log this member is known to hold.
    confirmed: usize,
    /// Last time each member was heard from.
    heard: BTreeMap<NodeId, Time>,
    /// The leader was last heard then; elections count from it.
    leader_heard: Time,
    /// Processes known to be gone: they count in no majority.
    certain_dead: BTreeSet<NodeId>,
    /// Pre-votes and votes refused for the leader's lease alone (see
    /// `election::Asked`), since the leader last changed.
    leased_out: Vec<election::Asked>,
    /// The last leader is dead for certain and no other leads yet: its
    /// lease holds no more.
    lease_void: bool,
    round: Round,
    /// The next pre-vote, once the leader has been silent that long.
    next_election: Option<Time>,
    followers: Followers,
    /// No majority since then.
    minority_since: Option<Time>,
    gave_up: bool,
    expelled: bool,
    /// Not a member yet (a joiner before its welcome).
    outside: bool,
    /// The latest time this node was given.
    now: Time,
    /// The master before any `Lead` entry (the run's first leader).
    first_leader: Option<NodeId>,
    next_beat: Time,
    /// When each removed member was last told so (rate limit).
    told: BTreeMap<NodeId, Time>,
    /// This node's last tick, to notice its own stalls (`detector.rs`).
    last_tick: Option<Time>,
    /// Members this node pings for a leader's probe: (target, leader).
    probing: BTreeMap<NodeId, NodeId>,
    /// Why this node, as leader, removed each member it removed.
    removed: BTreeMap<NodeId, Removal>,
    /// Members whose connection with this one was lost, and since when
    /// (`links.rs`): reported to the leader if they stay lost.
    lost_links: BTreeMap<NodeId, Time>,
    out: VecDeque<Output>,
    rng: SplitMix64,
    /// Elections this node started and removals it decided (statistics).
    pub elections: u64,
    /// Members removed by this node as leader.
    pub removals: u64,
    /// Stalls of this node's own that it did not count as others' silence.
    pub stalls: u64,
    /// Silence windows indirect probes won for members this node leads.
    pub rescues: u64,
}

impl Quorum {
    /// A member of a run that starts with `base` (all voters) and `leader`;
    /// many nodes may share `base` (see `roster.rs`).
    pub fn new(me: NodeId, base: &Members, leader: NodeId, cfg: QuorumConfig, seed: u64) -> Quorum {
        let mut q = Quorum::blank(me, cfg, seed, Log::new(base.clone()));
        q.leader = Some(leader);
        q.first_leader = Some(leader);
        q.role = if leader == me { Role::Leader } else { Role::Follower };
        q.outside = false;
        q
    }

    /// A node that has asked to join and waits for its welcome.
    pub fn joining(me: NodeId, cfg: QuorumConfig, seed: u64) -> Quorum {
        Quorum::blank(me, cfg, seed, Log::new(Members::new(&[])))
    }

    fn blank(me: NodeId, cfg: QuorumConfig, seed: u64, log: Log) -> Quorum {
        Quorum {
            me,
            cfg,
            term: 0,
            role: Role::Follower,
            leader: None,
            voted_for: None,
            log,
            applied: 0,
            confirmed: 0,
            heard: BTreeMap::new(),
            leader_heard: 0,
            certain_dead: BTreeSet::new(),
            leased_out: Vec::new(),
            lease_void: false,
            round: Round::default(),
            next_election: None,
            followers: Followers::default(),
            minority_since: None,
            gave_up: false,
            expelled: false,
            outside: true,
            now: 0,
            first_leader: None,
            next_beat: 0,
            told: BTreeMap::new(),
            last_tick: None,
            probing: BTreeMap::new(),
            removed: BTreeMap::new(),
            lost_links: BTreeMap::new(),
            out: VecDeque::new(),
            rng: SplitMix64::new(seed ^ me.rotate_left(17) ^ 0x517c_c1b7_2722_0a95),
            elections: 0,
            removals: 0,
            stalls: 0,
            rescues: 0,
        }
    }

    /// Starts the clocks (the leader of a static start beats at once).
    pub fn start(&mut self, now: Time) {
        self.leader_heard = now;
        self.next_beat = now;
        if self.role == Role::Leader {
            self.take_office(now);
        }
        self.tick(now);
    }

    /// The welcome's copy of the log: from now on this node is a member
    /// (a learner until it gets a vote).
    pub fn welcomed(&mut self, now: Time, s: Snapshot) {
        self.log = Log::from_snapshot(s.base, s.entries, s.commit);
        // What the welcome says is committed was applied by the node
        // already (its members, master and root came with it).
        self.applied = self.log.commit;
        // The leader's own log: this node holds all of it.
        self.confirmed = self.log.len();
        self.term = s.term;
        self.leader = Some(s.leader);
        self.lease_void = false;
        self.first_leader = Some(s.leader);
        self.role = Role::Follower;
        self.outside = false;
        self.leader_heard = now;
        // Say so at once: the leader gives a learner its vote once it
        // holds the log, and a run is safer with more voters.
        let msg = QMsg::Appended { term: self.term, ok: true, matched: self.confirmed as u64 };
        self.out.push_back(Output::Send { to: s.leader, msg });
        self.next_beat = now + self.cfg.heartbeat;
    }

    /// What a newcomer needs (see [`Quorum::welcomed`]).
    pub fn snapshot(&self) -> Snapshot {
        let (base, entries, commit) = self.log.snapshot();
        Snapshot { base, entries, commit, term: self.term, leader: self.leader.unwrap_or(self.me) }
    }

    /// The next thing to send or apply, until `None`.
    pub fn poll(&mut self) -> Option<Output> {
        self.out.pop_front()
    }

    // ---- queries --------------------------------------------------------

    /// Whether this node leads the current term.
    pub fn is_leader(&self) -> bool {
        self.role == Role::Leader
    }

    /// The leader this node follows, if it knows one.
    pub fn leader(&self) -> Option<NodeId> {
        self.leader
    }

    /// The current term.
    pub fn term(&self) -> u32 {
        self.term
    }

    /// Whether this node has had no majority for a while: it takes no new
    /// work until it has one again.
    pub fn in_minority(&self) -> bool {
        self.minority_since.is_some()
    }

    /// Since when this node has had no majority, if it has none now.
    pub fn minority_since(&self) -> Option<Time> {
        self.minority_since
    }

    /// Whether `id` is a member (in the latest configuration).
    pub fn is_member(&self, id: NodeId) -> bool {
        self.log.is_member(id)
    }

    /// Voting members, this node included if it votes.
    pub fn voters(&self) -> Vec<NodeId> {
        self.log.voters().collect()
    }

    /// A one-line account, for debugging stuck runs.
    pub fn summary(&self) -> String {
        let log: Vec<String> =
            (0..self.log.len()).map(|i| format!("{:?}", self.log.entry(i).map(|e| (e.term, &e.change)))).collect();
        format!(
            "role {:?} term {} leader {:?} voters {:?} commit {}/{} applied {} dead {:?} log [{}]",
            self.role,
            self.term,
            self.leader,
            self.voters(),
            self.log.commit,
            self.log.len(),
            self.applied,
            self.certain_dead,
            log.join(", ").chars().take(600).collect::<String>()
        )
    }

    /// On the leader: the members heard from within `suspect_after`
    /// (`None` elsewhere: only the leader keeps a clock per member).
    pub fn heard_lately(&self) -> Option<Vec<NodeId>> {
        let now = self.now;
        (self.role == Role::Leader || self.gave_up || self.expelled)
            .then(|| self.heard.iter().filter(|(_, &t)| t + self.cfg.suspect_after > now).map(|(&id, _)| id).collect())
    }

    /// Why this node, as leader, removed `id` (`None`: it did not).
    pub fn removal(&self, id: NodeId) -> Option<Removal> {
        self.removed.get(&id).copied()
    }

    /// Who leads, the voters, and which of them this node heard from
    /// within `suspect_after` (the leader knows; others know only their
    /// leader): what a log line about the majority names.
    pub fn voters_heard(&self) -> (Vec<NodeId>, Vec<NodeId>) {
        let window = self.cfg.suspect_after;
        let voters: Vec<NodeId> = self.electorate().collect();
        let heard = voters
            .iter()
            .copied()
            .filter(|&v| {
                v == self.me
                    || self.heard.get(&v).is_some_and(|&t| t + window > self.now)
                    || (self.leader == Some(v) && self.leader_heard + window > self.now)
            })
            .collect();
        (voters, heard)
    }

    /// The latest time this node was given.
    pub fn now(&self) -> Time {
        self.now
    }

    /// Whether this node is out of the run (removed, or gave up).
    pub fn is_out(&self) -> bool {
        self.expelled || self.gave_up
    }

    // ---- inputs ---------------------------------------------------------

    /// Any message from `from` shows that it is there.
    pub fn heard(&mut self, now: Time, from: NodeId) {
        self.now = self.now.max(now);
        // Only the leader keeps a clock per member (at 10 000 simulated
        // members, every node keeping one would be most of the memory).
        if self.role == Role::Leader && self.log.is_member(from) {
            self.heard.insert(from, now);
            self.heard_directly(from);
        }
        if self.leader == Some(from) {
            self.leader_heard = now;
        }
        self.link_works(from);
    }

    /// `id`'s process is known to be gone.
    pub fn certain_dead(&mut self, now: Time, id: NodeId) {
        if id == self.me || !self.certain_dead.insert(id) {
            return;
        }
        if self.leader == Some(id) {
            // No need to wait out its silence: stand in id order from now,
            // and its lease is void (a member that heard it lately would
            // otherwise refuse every vote for `suspect_after`).
            self.leader = None;
            self.lease_void = true;
            self.answer_leased_out(now);
            if self.role == Role::Follower {
                self.schedule_election(now, 0);
            }
        }
        if self.role == Role::Leader {
            // A smaller electorate may make a majority of what is there.
            self.update_commit(now);
        }
        self.tick(now);
    }

    /// A join request reached this node (from the newcomer, or passed on).
    pub fn join(&mut self, now: Time, id: NodeId, cluster: ClusterId) {
        if self.outside || self.is_out() {
            return;
        }
        match self.role {
            Role::Leader => {
                if self.log.is_member(id) {
                    // It missed its welcome: again.
                    if self.log.commit > 0 || self.applied > 0 {
                        self.out.push_back(Output::Admit { id });
                    }
                } else if !self.followers.joins.iter().any(|j| j.0 == id) {
                    self.followers.joins.push_back((id, cluster));
                    self.heard.insert(id, now);
                    self.advance_changes(now);
                }
            }
            _ => {
                if let Some(leader) = self.leader.filter(|&l| l != self.me) {
                    self.out.push_back(Output::Send { to: leader, msg: QMsg::JoinVia { id, cluster } });
                }
            }
        }
    }

    /// The leader decided the answer of run `run`: it goes into the log;
    /// it is out once a majority holds it. False if this node does not lead.
    pub fn propose_answer(&mut self, now: Time, run: u32, value: Option<Bytes>, shower: NodeId) -> bool {
        if self.role != Role::Leader {
            return false;
        }
        self.append(now, Change::Answer { run, value, shower, holder: self.me });
        true
    }

    /// A quorum message from node `from`.
    pub fn handle(&mut self, now: Time, from: NodeId, msg: QMsg) {
        if self.is_out() || self.outside {
            return;
        }
        self.heard(now, from);
        if self.tell_if_removed(now, from, &msg) {
            return;
        }
        match msg {
            QMsg::Append { term, prev, prev_term, entries, commit } => {
                self.on_append(now, from, term, prev as usize, prev_term, entries, commit as usize)
            }
            QMsg::Appended { term, ok, matched } => self.on_appended(now, from, term, ok, matched as usize),
            QMsg::PreVote { term, last, last_term } => self.on_pre_vote(now, from, term, last as usize, last_term),
            QMsg::PreVoted { term, granted, current } => self.on_pre_voted(now, from, term, granted, current),
            QMsg::Vote { term, last, last_term } => self.on_vote(now, from, term, last as usize, last_term),
            QMsg::Voted { term, granted } => self.on_voted(now, from, term, granted),
            QMsg::NotMember { .. } => self.expel(from),
            QMsg::Unreachable { peer } => {
                if self.role == Role::Leader && self.log.is_member(peer) {
                    self.followers.unreachable.push((from, peer, now));
                    self.advance_changes(now);
                }
            }
            QMsg::JoinVia { id, cluster } => self.join(now, id, cluster),
            QMsg::Probe { target } => self.on_probe(from, target),
            QMsg::Ping => self.out.push_back(Output::Send { to: from, msg: QMsg::Pong }),
            QMsg::Pong => self.on_pong(from),
            QMsg::Reached { target } => self.on_reached(now, target),
        }
    }

    /// Periodic work: beats, silences, elections, the minority's wait.
    pub fn tick(&mut self, now: Time) {
        self.now = self.now.max(now);
        if self.outside || self.is_out() {
            return;
        }
        self.forgive_own_stall(now);
        self.report_lost_links(now);
        match self.role {
            Role::Leader => self.lead(now),
            Role::Follower => self.follow(now),
            Role::PreCandidate | Role::Candidate => self.campaign(now),
        }
        if let Some(since) = self.minority_since {
            let waited = now.saturating_sub(since);
            if waited >= self.cfg.heal_wait && !self.gave_up {
                self.gave_up = true;
                self.out.push_back(Output::GiveUp { waited });
            }
        }
    }

    /// When [`Quorum::tick`] wants to run next.
    pub fn next_tick(&self, now: Time) -> Time {
        now + self.cfg.heartbeat
    }

    // ---- shared internals ----------------------------------------------

    /// Members that count in majorities: voters not known to be dead.
    fn electorate(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.log.voters().filter(|v| !self.certain_dead.contains(v))
    }

    fn is_quorum(&self, set: &BTreeSet<NodeId>) -> bool {
        let (mut total, mut yes) = (0, 0);
        for v in self.electorate() {
            total += 1;
            if set.contains(&v) {
                yes += 1;
            }
        }
        total > 0 && 2 * yes > total
    }

    /// At least half of the committed configuration's electorate (check
    /// quorum's bar, see `lead`).
    fn is_half_committed(&self, set: &BTreeSet<NodeId>) -> bool {
        let (mut total, mut yes) = (0, 0);
        for v in self.log.committed_voters() {
            if self.certain_dead.contains(&v) {
                continue;
            }
            total += 1;
            if set.contains(&v) {
                yes += 1;
            }
        }
        total > 0 && 2 * yes >= total
    }

    fn become_follower(&mut self, now: Time, term: u32, leader: Option<NodeId>) {
        if term > self.term {
            self.term = term;
            self.voted_for = None;
        }
        if self.role == Role::Leader && leader != Some(self.me) {
            self.followers = Followers::default();
        }
        self.role = Role::Follower;
        self.leader = leader;
        if leader.is_some() {
            self.lease_void = false;
            self.leader_heard = now;
            self.minority_since = None;
        }
    }

    fn expel(&mut self, by: NodeId) {
        if !self.expelled && !self.outside {
            self.expelled = true;
            self.out.push_back(Output::Expelled { by });
        }
    }

    /// A removed member knocks: tell it (once a second at most).
    fn tell_if_removed(&mut self, now: Time, from: NodeId, msg: &QMsg) -> bool {
        if !self.log.removed_for_good(from) || matches!(msg, QMsg::NotMember { .. }) {
            return false;
        }
        let recent = self.told.get(&from).is_some_and(|&t| now < t + self.cfg.suspect_after);
        if !recent {
            self.told.insert(from, now);
            self.out.push_back(Output::Send { to: from, msg: QMsg::NotMember { term: self.term } });
        }
        true
    }

    /// Hands newly committed entries to the node, in order.
    fn apply_committed(&mut self) {
        while self.applied < self.log.commit {
            let e = self.log.entry(self.applied).expect("committed entries exist").clone();
            self.applied += 1;
            if let Change::Remove { id } = e.change {
                if id == self.me {
                    let by = self.leader.unwrap_or(self.me);
                    self.expel(by);
                    return;
                }
            }
            let admit = match e.change {
                Change::Add { id, .. } if self.role == Role::Leader => Some(id),
                _ => None,
            };
            self.out.push_back(Output::Apply { index: self.applied as u64, term: e.term, change: e.change });
            if let Some(id) = admit {
                self.out.push_back(Output::Admit { id });
            }
        }
    }
}

#[cfg(test)]
mod tests;
