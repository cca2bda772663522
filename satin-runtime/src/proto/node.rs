//! The per-node protocol state machine.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};

use super::msg::{ClusterId, Entry, JobSpec, Msg, NodeId};
use super::rng::SplitMix64;
use super::table::{ResultTable, SharedValues};
use super::Executor;
use crate::JobKey;

/// Nanoseconds since the driver's epoch (virtual time in the simulator).
pub type Time = u64;

/// How much fault tolerance a run has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FtMode {
    /// A crash fails the run.
    None,
    /// Orphans are discarded; work stolen by dead nodes is re-executed.
    Naive,
    /// The design's procedure: orphans' finished parts are saved in the
    /// replicated result table and reused.
    Table,
}

/// Victim selection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StealPolicy {
    /// Random stealing: one request at a time to a random live peer.
    Random,
    /// Cluster-aware random stealing: synchronous steals inside the own
    /// cluster, plus at most one asynchronous wide-area steal outstanding.
    ClusterAware,
}

#[derive(Clone, Debug)]
pub struct Config {
    pub ft: FtMode,
    pub steal: StealPolicy,
    /// Results larger than this travel in the table as `(key, holder)` pointers.
    pub pointer_threshold: usize,
    /// Bound on a table replica's entries (oldest dropped first).
    pub table_capacity: Option<usize>,
    /// Pause after a full round of failed steal attempts.
    pub steal_backoff: Time,
    /// Publish the result of any job that ran at least this long, not only
    /// results returned to victims, so that little finished work dies with
    /// a crashed node. `None`: only returned results (the paper's table).
    pub publish_after: Option<Time>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            ft: FtMode::Table,
            steal: StealPolicy::ClusterAware,
            pointer_threshold: 1024,
            table_capacity: None,
            steal_backoff: 5_000_000,
            publish_after: Some(1_000_000_000),
        }
    }
}

/// What the driver must do.
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use]
pub enum Action {
    Send {
        to: NodeId,
        msg: Msg,
    },
    /// To every live member except this node.
    Broadcast {
        msg: Msg,
    },
    /// Call `handle_timeout` at `at`.
    SetTimer {
        at: Time,
    },
    /// The root job finished here (this node is the master): the answer.
    Done {
        value: Vec<u8>,
    },
    /// The master ended the run; `value` is the root job's result if it
    /// was small enough to travel with the news.
    Finished {
        value: Option<Vec<u8>>,
    },
    /// The run cannot go on (a crash with `FtMode::None`).
    Failed {
        reason: String,
    },
    /// This node is finished (terminated or left): stop driving it.
    Stop,
}

/// Result of a table lookup by a redone job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Lookup {
    Hit(Vec<u8>),
    Miss,
    /// Fetching from the holder; the answer comes through
    /// [`Executor::lookup_done`].
    Pending,
}

/// Counters of one node.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeStats {
    pub steal_requests: u64,
    pub jobs_stolen: u64,
    pub jobs_given: u64,
    pub redone: u64,
    pub orphans_saved: u64,
    pub table_hits: u64,
    pub table_misses: u64,
    pub recoveries: u64,
}

#[derive(Clone, Debug)]
struct Member {
    cluster: ClusterId,
    alive: bool,
}

/// A job this node lost to a thief: enough to run it again.
#[derive(Clone, Debug)]
struct Stolen {
    thief: NodeId,
    spec: JobSpec,
}

/// The protocol state of one node. See the module docs for the contract.
pub struct Node {
    id: NodeId,
    cluster: ClusterId,
    config: Config,
    members: BTreeMap<NodeId, Member>,
    /// Live peers in this node's cluster and in other clusters; rebuilt on
    /// every membership change, read on every steal attempt.
    local_peers: Vec<NodeId>,
    wide_peers: Vec<NodeId>,
    master: NodeId,
    root: Option<JobSpec>,
    rng: SplitMix64,
    next_request: u64,
    local_steal: Option<(NodeId, u64)>,
    wide_steal: Option<(NodeId, u64)>,
    failed_steals: usize,
    backoff_until: Option<Time>,
    /// Jobs stolen from this node, by stamp.
    stolen: HashMap<u64, Stolen>,
    next_stamp: u64,
    /// Jobs this node runs for other nodes, by (victim, stamp).
    running_for: HashSet<(NodeId, u64)>,
    table: ResultTable,
    fetching: HashMap<JobKey, NodeId>,
    joined: bool,
    stopped: bool,
    /// Leaving once the jobs started here are finished (see `begin_leave`).
    draining: bool,
    actions: VecDeque<Action>,
    stats: NodeStats,
}

impl Node {
    fn new(id: NodeId, cluster: ClusterId, config: Config, seed: u64) -> Node {
        let table = ResultTable::new(config.table_capacity);
        Node {
            id,
            cluster,
            config,
            members: BTreeMap::new(),
            local_peers: Vec::new(),
            wide_peers: Vec::new(),
            master: id,
            root: None,
            rng: SplitMix64::new(seed ^ id.wrapping_mul(0x9E37_79B9_7F4A_7C15)),
            next_request: 0,
            local_steal: None,
            wide_steal: None,
            failed_steals: 0,
            backoff_until: None,
            stolen: HashMap::new(),
            next_stamp: 0,
            running_for: HashSet::new(),
            table,
            fetching: HashMap::new(),
            joined: false,
            stopped: false,
            draining: false,
            actions: VecDeque::new(),
            stats: NodeStats::default(),
        }
    }

    /// A member of a run whose membership every node knows at start. The
    /// root job is replicated to all; the master (`master`) runs it.
    pub fn member(
        id: NodeId,
        cluster: ClusterId,
        members: &[(NodeId, ClusterId)],
        master: NodeId,
        root: JobSpec,
        config: Config,
        seed: u64,
    ) -> Node {
        let mut n = Node::new(id, cluster, config, seed);
        for &(m, c) in members {
            n.members.insert(m, Member { cluster: c, alive: true });
        }
        n.members.insert(id, Member { cluster, alive: true });
        n.master = master;
        n.root = Some(root);
        n.joined = true;
        n.membership_changed();
        n
    }

    /// A node joining a running computation through `contact`.
    pub fn joining(id: NodeId, cluster: ClusterId, contact: NodeId, config: Config, seed: u64) -> Node {
        let mut n = Node::new(id, cluster, config, seed);
        n.members.insert(id, Member { cluster, alive: true });
        n.actions.push_back(Action::Send { to: contact, msg: Msg::Join { cluster } });
        n
    }

    pub fn id(&self) -> NodeId {
        self.id
    }

    pub fn master(&self) -> NodeId {
        self.master
    }

    pub fn is_master(&self) -> bool {
        self.master == self.id
    }

    pub fn stats(&self) -> &NodeStats {
        &self.stats
    }

    pub fn table_len(&self) -> usize {
        self.table.len()
    }

    /// A read-only view of this replica's values, for threads that look up
    /// results while the driver owns the node (real runs' worker threads).
    pub fn shared_values(&mut self) -> SharedValues {
        self.table.share()
    }

    /// A one-line summary of the protocol state, for debugging stuck runs.
    pub fn summary(&self) -> String {
        format!(
            "master {}, stopped {}, stolen {:?}, running_for {:?}, fetching {}, local {:?}, wide {:?}, alive {:?}",
            self.master,
            self.stopped,
            self.stolen.iter().map(|(s, e)| (*s, e.thief)).collect::<Vec<_>>(),
            self.running_for,
            self.fetching.len(),
            self.local_steal,
            self.wide_steal,
            self.live_members().collect::<Vec<_>>()
        )
    }

    /// Live members, this node included.
    pub fn live_members(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.members.iter().filter(|(_, m)| m.alive).map(|(id, _)| *id)
    }

    /// Starts the run: the master starts the root job.
    pub fn start(&mut self, _now: Time, exec: &mut impl Executor) {
        if self.is_master() {
            if let Some(root) = self.root.clone() {
                exec.run_root(root);
            }
        }
    }

    /// The next thing to do, if any.
    pub fn poll_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    // ---- inputs -------------------------------------------------------

    pub fn handle_message(&mut self, now: Time, from: NodeId, msg: Msg, exec: &mut impl Executor) {
        if self.stopped {
            return;
        }
        match msg {
            Msg::Join { cluster } => self.admit(from, cluster),
            Msg::Welcome { members, master, root } => {
                for (m, c) in members {
                    self.members.entry(m).or_insert(Member { cluster: c, alive: true });
                }
                self.master = master;
                self.root = Some(root);
                self.joined = true;
                self.membership_changed();
                self.handle_idle(now, exec);
            }
            Msg::NewMember { id, cluster } => {
                self.members.entry(id).or_insert(Member { cluster, alive: true });
                self.membership_changed();
            }
            Msg::Leave => self.handle_peer_dead(now, from, exec),
            Msg::StealRequest { id } => {
                // A request can overtake its sender's `Leave`, or come from a
                // node declared dead: a job given to it would be lost.
                let thief_ok = self.joined && self.is_alive(from);
                let job = if thief_ok { exec.take_for_thief(self.next_stamp + 1) } else { None };
                if let Some(spec) = &job {
                    self.next_stamp += 1;
                    self.stats.jobs_given += 1;
                    self.stolen.insert(spec.stamp, Stolen { thief: from, spec: spec.clone() });
                }
                self.actions.push_back(Action::Send { to: from, msg: Msg::StealReply { id, job } });
            }
            Msg::StealReply { id, job } => self.steal_reply(now, from, id, job, exec),
            Msg::JobResult { stamp, key, value } => {
                let waited = self.stolen.remove(&stamp).is_some() && exec.deliver(stamp, value.clone());
                if !waited {
                    // An orphan result: its parent was aborted here.
                    self.publish(key, value);
                }
            }
            Msg::TablePut { key, entry } => {
                if self.config.ft == FtMode::Table {
                    self.table.put(key, entry);
                }
            }
            Msg::HandOver { results } => {
                for (key, value) in results {
                    self.table.put(key, Entry::Value(value.into()));
                }
            }
            Msg::Fetch { key } => {
                let value = match self.table.get(&key) {
                    Some(Entry::Value(v)) => Some(v.to_vec()),
                    _ => None,
                };
                self.actions.push_back(Action::Send { to: from, msg: Msg::FetchReply { key, value } });
            }
            Msg::FetchReply { key, value } => {
                if self.fetching.remove(&key).is_some() {
                    match &value {
                        Some(v) => {
                            self.stats.table_hits += 1;
                            self.table.put(key, Entry::Value(v.as_slice().into()));
                        }
                        None => self.stats.table_misses += 1,
                    }
                    exec.lookup_done(&key, value);
                }
            }
            Msg::Terminate { value } => {
                self.actions.push_back(Action::Finished { value });
                self.stop();
            }
            Msg::JobFailed { stamp, reason } => {
                if self.stolen.remove(&stamp).is_some() {
                    exec.fail(stamp, &reason);
                }
            }
            Msg::RunFailed { reason } => {
                self.actions.push_back(Action::Failed { reason });
                self.stop();
            }
        }
    }

    /// Local queue empty: steal if no request is outstanding.
    pub fn handle_idle(&mut self, now: Time, exec: &mut impl Executor) {
        if self.stopped || !self.joined {
            return;
        }
        if self.draining {
            // A steal reply still on its way may carry a job: leaving before
            // it arrives would lose that job and make its victim redo it.
            let awaiting_steal = self.local_steal.is_some() || self.wide_steal.is_some();
            if !exec.runs_anything() && !awaiting_steal {
                self.leave(now, exec);
            }
            return;
        }
        if exec.has_work() {
            return;
        }
        if self.backoff_until.is_some_and(|t| now < t) {
            return;
        }
        self.backoff_until = None;
        match self.config.steal {
            StealPolicy::Random => {
                if self.local_steal.is_none() && self.wide_steal.is_none() {
                    let all = self.local_peers.len() + self.wide_peers.len();
                    if all > 0 {
                        let k = self.rng.below(all as u64) as usize;
                        let victim = if k < self.local_peers.len() {
                            self.local_peers[k]
                        } else {
                            self.wide_peers[k - self.local_peers.len()]
                        };
                        self.local_steal = Some((victim, self.request(victim)));
                    }
                }
            }
            StealPolicy::ClusterAware => {
                if self.local_steal.is_none() && !self.local_peers.is_empty() {
                    let victim = self.local_peers[self.rng.below(self.local_peers.len() as u64) as usize];
                    self.local_steal = Some((victim, self.request(victim)));
                }
                if self.wide_steal.is_none() && !self.wide_peers.is_empty() {
                    let victim = self.wide_peers[self.rng.below(self.wide_peers.len() as u64) as usize];
                    self.wide_steal = Some((victim, self.request(victim)));
                }
            }
        }
    }

    pub fn handle_timeout(&mut self, now: Time, exec: &mut impl Executor) {
        if self.backoff_until.is_some_and(|t| now >= t) {
            self.backoff_until = None;
            self.handle_idle(now, exec);
        }
    }

    /// The job stolen from `victim` by steal `stamp` finished here.
    /// If the victim died meanwhile and the executor let the orphan run on
    /// (see [`Executor::abandon`]), its result goes into the table.
    pub fn handle_job_finished(&mut self, _now: Time, victim: NodeId, stamp: u64, key: JobKey, value: Vec<u8>) {
        if !self.running_for.remove(&(victim, stamp)) {
            if !self.stopped {
                self.stats.orphans_saved += 1;
                self.publish(key, value);
            }
            return;
        }
        if self.is_alive(victim) {
            let msg = Msg::JobResult { stamp, key, value: value.clone() };
            self.actions.push_back(Action::Send { to: victim, msg });
        }
        // Every result returned to a victim also goes into the table.
        self.publish(key, value);
    }

    /// The job stolen from `victim` by steal `stamp` failed here (it
    /// panicked): the failure goes back to the victim, whose waiting frame
    /// fails in turn, up to the root — as a panic goes to the caller in a
    /// local run. This node stays in the run. An orphan's failure goes
    /// nowhere: its re-executed copy meets the same failure.
    pub fn handle_job_failed(&mut self, _now: Time, victim: NodeId, stamp: u64, reason: String) {
        if self.running_for.remove(&(victim, stamp)) && self.is_alive(victim) && !self.stopped {
            self.actions.push_back(Action::Send { to: victim, msg: Msg::JobFailed { stamp, reason } });
        }
    }

    /// The root job failed here (it panicked): on the master, the run ends
    /// without an answer, on every node.
    pub fn handle_root_failed(&mut self, _now: Time, reason: String) {
        if self.is_master() && !self.stopped {
            self.actions.push_back(Action::Broadcast { msg: Msg::RunFailed { reason: reason.clone() } });
            self.actions.push_back(Action::Failed { reason });
            self.stop();
        }
    }

    /// A local job that ran for `ran` (the executor measures it) finished.
    /// Long ones are published (see [`Config::publish_after`]).
    pub fn handle_local_job_finished(&mut self, _now: Time, ran: Time, key: JobKey, value: Vec<u8>) {
        if self.config.publish_after.is_some_and(|t| ran >= t) {
            self.publish(key, value);
        }
    }

    /// The root job finished here.
    pub fn handle_root_finished(&mut self, _now: Time, value: Vec<u8>) {
        if self.is_master() && !self.stopped {
            let small = (value.len() <= self.config.pointer_threshold).then(|| value.clone());
            self.actions.push_back(Action::Broadcast { msg: Msg::Terminate { value: small } });
            self.actions.push_back(Action::Done { value });
            self.stop();
        }
    }

    /// A redone job is about to run: is its result in the table?
    pub fn lookup(&mut self, key: &JobKey) -> Lookup {
        if self.config.ft != FtMode::Table {
            return Lookup::Miss;
        }
        match self.table.get(key) {
            Some(Entry::Value(v)) => {
                self.stats.table_hits += 1;
                Lookup::Hit(v.to_vec())
            }
            Some(Entry::Pointer(_)) if self.fetching.contains_key(key) => Lookup::Pending,
            Some(Entry::Pointer(holder)) if *holder != self.id && self.is_alive(*holder) => {
                let holder = *holder;
                self.fetching.insert(*key, holder);
                self.actions.push_back(Action::Send { to: holder, msg: Msg::Fetch { key: *key } });
                Lookup::Pending
            }
            _ => {
                self.stats.table_misses += 1;
                Lookup::Miss
            }
        }
    }

    /// The driver declares `peer` dead (crash detected, or it left).
    pub fn handle_peer_dead(&mut self, now: Time, peer: NodeId, exec: &mut impl Executor) {
        if self.stopped || peer == self.id {
            return;
        }
        match self.members.get_mut(&peer) {
            Some(m) if m.alive => m.alive = false,
            _ => return,
        }
        self.membership_changed();
        self.stats.recoveries += 1;
        self.table.forget_holder(peer);
        if self.config.ft == FtMode::Table {
            exec.recovery_started();
        }
        if self.local_steal.is_some_and(|(v, _)| v == peer) {
            self.local_steal = None;
        }
        if self.wide_steal.is_some_and(|(v, _)| v == peer) {
            self.wide_steal = None;
        }
        let lost_fetches: Vec<JobKey> = self.fetching.iter().filter(|(_, h)| **h == peer).map(|(k, _)| *k).collect();
        for key in lost_fetches {
            self.fetching.remove(&key);
            exec.lookup_done(&key, None);
        }
        if self.config.ft == FtMode::None {
            self.actions.push_back(Action::Failed { reason: format!("node {peer} died and fault tolerance is off") });
            self.stop();
            return;
        }
        // Step 0: a new master, deterministically the lowest live id.
        let master_died = peer == self.master;
        if master_died {
            let lowest = self.live_members().next();
            self.master = lowest.unwrap_or(self.id);
        }
        // Step 2: orphans. Save finished parts, abort the rest.
        let orphans: Vec<(NodeId, u64)> = self.running_for.iter().filter(|(v, _)| *v == peer).copied().collect();
        for (victim, stamp) in orphans {
            self.running_for.remove(&(victim, stamp));
            let abandoned = exec.abandon(victim, stamp);
            for s in abandoned.stolen_out {
                self.stolen.remove(&s);
            }
            for (k, v) in abandoned.finished {
                self.stats.orphans_saved += 1;
                self.publish(k, v);
            }
        }
        // Step 1: re-queue what the dead node stole from us, marked redone.
        let lost: Vec<u64> = self.stolen.iter().filter(|(_, s)| s.thief == peer).map(|(k, _)| *k).collect();
        for stamp in lost {
            if let Some(s) = self.stolen.remove(&stamp) {
                self.stats.redone += 1;
                exec.requeue(JobSpec { redone: true, ..s.spec });
            }
        }
        // Step 3: the new master restarts the replicated root job.
        if master_died && self.is_master() {
            if let Some(root) = self.root.clone() {
                self.stats.redone += 1;
                exec.run_root(JobSpec { redone: true, ..root });
            }
        }
        self.handle_idle(now, exec);
    }

    /// Graceful leave without losing work: from now on this node steals no
    /// more; the jobs it runs finish (thieves still help with them) and their
    /// results go back as usual; once it has nothing left it
    /// [`leave`](Self::leave)s.
    /// A job that never ends here (the root, on the master) keeps it in the
    /// run: the driver calls `leave` at a deadline of its choosing.
    pub fn begin_leave(&mut self, now: Time, exec: &mut impl Executor) {
        if self.stopped {
            return;
        }
        self.draining = true;
        self.handle_idle(now, exec);
    }

    /// Graceful leave: pass every finished result on, tell everyone, stop.
    /// The others then recover as for a crash of this node.
    ///
    /// Small results are broadcast as values. Large ones — those abandoned
    /// here and those this node holds for others' pointers — go to an heir,
    /// and everyone gets a pointer to it. The heir is the newest live node:
    /// in a migration (join the new set, then leave the old one) that is one
    /// of the new set, not an old node about to leave as well.
    pub fn leave(&mut self, _now: Time, exec: &mut impl Executor) {
        if self.stopped {
            return;
        }
        let abandoned = exec.abandon_all();
        self.running_for.clear();
        let heir = self.live_members().filter(|m| *m != self.id).last();
        if self.config.ft == FtMode::Table {
            let threshold = self.config.pointer_threshold;
            let mut large: Vec<(JobKey, Vec<u8>)> = Vec::new();
            for (key, value) in abandoned.finished {
                if value.len() <= threshold {
                    self.publish(key, value);
                } else {
                    large.push((key, value));
                }
            }
            large.extend(self.table.large_values(threshold).into_iter().map(|(k, v)| (k, v.to_vec())));
            if let (Some(heir), false) = (heir, large.is_empty()) {
                for (key, _) in &large {
                    let msg = Msg::TablePut { key: *key, entry: Entry::Pointer(heir) };
                    self.actions.push_back(Action::Broadcast { msg });
                }
                self.actions.push_back(Action::Send { to: heir, msg: Msg::HandOver { results: large } });
            }
        }
        self.actions.push_back(Action::Broadcast { msg: Msg::Leave });
        self.stop();
    }

    // ---- internals ----------------------------------------------------

    fn stop(&mut self) {
        if !self.stopped {
            self.stopped = true;
            self.actions.push_back(Action::Stop);
        }
    }

    fn membership_changed(&mut self) {
        let me = (self.id, self.cluster);
        self.local_peers.clear();
        self.wide_peers.clear();
        for (id, m) in &self.members {
            if m.alive && *id != me.0 {
                if m.cluster == me.1 {
                    self.local_peers.push(*id);
                } else {
                    self.wide_peers.push(*id);
                }
            }
        }
    }

    fn is_alive(&self, id: NodeId) -> bool {
        self.members.get(&id).is_some_and(|m| m.alive)
    }

    fn admit(&mut self, newcomer: NodeId, cluster: ClusterId) {
        self.members.insert(newcomer, Member { cluster, alive: true });
        self.membership_changed();
        let members = self.members.iter().filter(|(_, m)| m.alive).map(|(id, m)| (*id, m.cluster)).collect();
        if let Some(root) = self.root.clone() {
            let welcome = Msg::Welcome { members, master: self.master, root };
            self.actions.push_back(Action::Send { to: newcomer, msg: welcome });
            self.actions.push_back(Action::Broadcast { msg: Msg::NewMember { id: newcomer, cluster } });
        }
    }

    fn request(&mut self, victim: NodeId) -> u64 {
        self.next_request += 1;
        self.stats.steal_requests += 1;
        self.actions.push_back(Action::Send { to: victim, msg: Msg::StealRequest { id: self.next_request } });
        self.next_request
    }

    fn steal_reply(&mut self, now: Time, from: NodeId, id: u64, job: Option<JobSpec>, exec: &mut impl Executor) {
        if self.local_steal == Some((from, id)) {
            self.local_steal = None;
        } else if self.wide_steal == Some((from, id)) {
            self.wide_steal = None;
        }
        match job {
            Some(spec) => {
                self.stats.jobs_stolen += 1;
                self.failed_steals = 0;
                self.running_for.insert((from, spec.stamp));
                exec.run_stolen(spec, from);
            }
            None => {
                self.failed_steals += 1;
                let peers = self.local_peers.len() + self.wide_peers.len();
                if self.failed_steals >= peers.max(1) {
                    self.failed_steals = 0;
                    let until = now + self.config.steal_backoff;
                    self.backoff_until = Some(until);
                    self.actions.push_back(Action::SetTimer { at: until });
                    return;
                }
                self.handle_idle(now, exec);
            }
        }
    }

    /// Puts a result into the table: locally as a value, and to everyone as
    /// the value (small) or a pointer to this node (large).
    fn publish(&mut self, key: JobKey, value: Vec<u8>) {
        if self.config.ft != FtMode::Table {
            return;
        }
        let shared: std::sync::Arc<[u8]> = value.into();
        let entry = if shared.len() <= self.config.pointer_threshold {
            Entry::Value(shared.clone())
        } else {
            Entry::Pointer(self.id)
        };
        self.table.put(key, Entry::Value(shared));
        self.actions.push_back(Action::Broadcast { msg: Msg::TablePut { key, entry } });
    }
}
