//! A simulated node's local job store and processors: the simulator's
//! implementation of [`Executor`].
//!
//! Jobs are instances of tree nodes. Running an inner job spawns all its
//! children (pushed so the first child runs first, work-first) and waits
//! for them; a leaf keeps one processor (of `slots`, usually one) busy for
//! its cost times the node's slowness. Thieves take the oldest queued
//! instance. A node with no slots only hands work out (a pure master).
//! Faults make the jobs stolen by this node fail (`fail_running`, new ones
//! with `fail_rate`) or vanish without a word (`lose_running`). A finished child's value stays in its parent's
//! record until the parent finishes, so an orphaned subtree's finished parts
//! can be saved.

use std::collections::VecDeque;

/// Maps with a fixed hasher: the same seed must replay the same run, and
/// some of these are walked.
type HashMap<K, V> =
    std::collections::HashMap<K, V, std::hash::BuildHasherDefault<std::collections::hash_map::DefaultHasher>>;
type HashSet<K> =
    std::collections::HashSet<K, std::hash::BuildHasherDefault<std::collections::hash_map::DefaultHasher>>;

use super::workload::{key_of, node_of, Nanos, Tree};
use satin_proto::checkpoint::{ResultMeta, DEPTH_UNKNOWN};
use satin_proto::JobKey;
use satin_proto::{Abandoned, Executor, JobSpec, Lookup, Node, NodeId};

type InstId = u64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Origin {
    Child(InstId),
    /// Stolen from `victim` by steal `stamp`.
    Stolen {
        victim: NodeId,
        stamp: u64,
    },
    /// The root, as its node's core numbered this start of it.
    Root {
        start: u64,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Queued,
    Lookup,
    Running,
    Waiting,
    StolenOut,
}

struct Instance {
    job: u32,
    started: Nanos,
    /// Set while stolen out: the stamp the thief will answer with.
    stamp: u64,
    origin: Origin,
    redone: bool,
    /// Root epoch of the tree this instance belongs to.
    epoch: u32,
    depth: u32,
    /// Frame id of the enclosing instance (0: none known).
    parent_frame: u64,
    looked_up: bool,
    state: State,
    pending: u32,
    acc: u64,
    finished_children: Vec<(u32, u64)>,
}

/// What the processor reports to the world after a step.
#[derive(Debug, PartialEq, Eq)]
pub enum Output {
    /// A job stolen from another node finished: give it to the core.
    StolenFinished {
        /// The node the job was stolen from.
        victim: NodeId,
        /// The steal that took it.
        stamp: u64,
        /// The job's key.
        key: JobKey,
        /// The encoded result.
        value: Vec<u8>,
    },
    /// The root job started as `start` finished here: the answer, encoded.
    RootFinished {
        /// The start's number (its `JobSpec::stamp`).
        start: u64,
        /// The answer, encoded.
        value: Vec<u8>,
    },
    /// A leaf started; it ends at the given time unless aborted.
    LeafStarted {
        /// The leaf's instance.
        inst: InstId,
        /// When it ends.
        done_at: Nanos,
    },
    /// A leaf of tree node `job` finished executing; it had started then.
    LeafExecuted(u32, Nanos),
    /// A job spawned here finished after running for `ran`.
    LocalFinished {
        /// How long the job ran.
        ran: Nanos,
        /// The job's key.
        key: JobKey,
        /// The encoded result.
        value: Vec<u8>,
        /// Where in the tree the job sits and how long it took.
        meta: ResultMeta,
    },
    /// A redone job of tree node `job` (root epoch `epoch`) missed in the
    /// table and runs; it looked the table up at `asked` (earlier than now
    /// if the answer came from other nodes).
    Missed {
        /// The tree node.
        job: u32,
        /// The root epoch of the lookup.
        epoch: u32,
        /// When the table was asked.
        asked: Nanos,
    },
    /// A job stolen from `victim` failed here (an injected fault).
    StolenFailed {
        /// The node the job was stolen from.
        victim: NodeId,
        /// The steal that took it.
        stamp: u64,
    },
    /// A job stolen from `victim` vanished here (its workers were killed).
    StolenLost {
        /// The node the job was stolen from.
        victim: NodeId,
        /// The steal that took it.
        stamp: u64,
    },
}

/// A simulated node's processors and job store: instances of the tree's
/// jobs, spawned, stolen, run and aborted as the real runtime's are. The
/// protocol core reaches it through [`satin_proto::Executor`].
pub struct ModelExecutor<'t> {
    tree: &'t Tree,
    /// Frame ids of this node's instances start here.
    frame_base: u64,
    /// Orphans run to the end and publish, as in real runs; `false`:
    /// aborted, their finished parts saved (the paper).
    keep_orphans: bool,
    result_bytes: usize,
    instances: HashMap<InstId, Instance>,
    next_inst: InstId,
    deque: VecDeque<InstId>,
    /// Jobs whose lookup missed: they go on where they were (on the
    /// worker that started them, as in the runtime), before the deque,
    /// and no thief can take them.
    resumed: VecDeque<InstId>,
    stolen_out: HashMap<u64, InstId>,
    running_stolen: HashMap<(NodeId, u64), InstId>,
    /// Jobs waiting for a table fetch; several copies of one job may wait.
    lookups: HashMap<JobKey, Vec<InstId>>,
    /// Keys of `lookups` whose answer is a round trip away (refreshed at
    /// every step from the core).
    short_waits: HashSet<JobKey>,
    /// Leaves running on the processors.
    busy: Vec<InstId>,
    slots: usize,
    /// Leaves started from now on take this many times their cost
    /// (`f64::INFINITY`: they never finish — a hung node).
    pub slowness: f64,
    /// Encoded size of the parameters of a job given to a thief.
    pub param_bytes: usize,
    /// Jobs stolen by this node fail at once with this probability.
    pub fail_rate: f64,
    rng: satin_proto::SplitMix64,
    /// Children whose value reached their parent, to catch a second one.
    delivered: std::collections::HashSet<(InstId, u32)>,
    /// Values that reached a parent that already had one for that child.
    pub completed_twice: u64,
    /// Leaves executed here and the time processors spent on leaves that
    /// ended (the executor's progress).
    leaves_done: u64,
    leaf_time: Nanos,
    /// Set after the first recovery: every job looks up the table.
    lookup_mode: bool,
    /// The current virtual time; the world sets it before every call.
    pub now: Nanos,
    /// What the processor reported since the world last took it.
    pub outputs: Vec<Output>,
    /// This node's replica of the shared values (a model incumbent).
    pub shared: super::shared::SharedModel,
}

/// Encodes a value as a result of `len` bytes (at least 8).
pub fn encode(value: u64, len: usize) -> Vec<u8> {
    let mut v = value.to_le_bytes().to_vec();
    v.resize(len.max(8), 0);
    v
}

/// The value of a result made by [`encode`].
pub fn decode(bytes: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&bytes[..8]);
    u64::from_le_bytes(b)
}

impl<'t> ModelExecutor<'t> {
    /// The processor of simulated node `node`.
    pub fn new(tree: &'t Tree, result_bytes: usize, node: u64, keep_orphans: bool) -> Self {
        Self::with_slots(tree, result_bytes, node, keep_orphans, 1)
    }

    /// A node with `slots` processors (0: it runs no leaves).
    pub fn with_slots(tree: &'t Tree, result_bytes: usize, node: u64, keep_orphans: bool, slots: usize) -> Self {
        ModelExecutor {
            tree,
            frame_base: (node + 1) << 40,
            keep_orphans,
            result_bytes,
            instances: HashMap::default(),
            next_inst: 1,
            deque: VecDeque::new(),
            resumed: VecDeque::new(),
            stolen_out: HashMap::default(),
            running_stolen: HashMap::default(),
            lookups: HashMap::default(),
            short_waits: HashSet::default(),
            busy: Vec::new(),
            slots,
            slowness: 1.0,
            param_bytes: 4,
            fail_rate: 0.0,
            rng: satin_proto::SplitMix64::new(node ^ 0xFA11),
            delivered: std::collections::HashSet::new(),
            completed_twice: 0,
            leaves_done: 0,
            leaf_time: 0,
            lookup_mode: false,
            now: 0,
            outputs: Vec::new(),
            shared: Default::default(),
        }
    }

    fn add(&mut self, job: u32, origin: Origin, redone: bool, epoch: u32, depth: u32, parent_frame: u64) -> InstId {
        let id = self.next_inst;
        self.next_inst += 1;
        let redone = redone || self.lookup_mode;
        self.instances.insert(
            id,
            Instance {
                job,
                started: 0,
                stamp: 0,
                origin,
                redone,
                epoch,
                depth,
                parent_frame,
                looked_up: false,
                state: State::Queued,
                pending: 0,
                acc: 0,
                finished_children: Vec::new(),
            },
        );
        self.deque.push_back(id);
        id
    }

    /// Jobs whose worker sits out a lookup's round trip (the homes'
    /// answer or a fetch; see `Node::lookup_in_flight`). A wait for a job
    /// that still runs elsewhere frees the worker.
    fn looking(&self) -> usize {
        self.short_waits
            .iter()
            .filter_map(|k| self.lookups.get(k))
            .flatten()
            .filter(|id| self.instances.contains_key(id))
            .count()
    }

    /// Whether some job waits for a table lookup's answer.
    pub fn waits_for_lookups(&self) -> bool {
        !self.lookups.is_empty()
    }

    /// A one-line summary of the job store, for debugging stuck runs.
    pub fn summary(&self) -> String {
        let mut counts: HashMap<String, usize> = HashMap::default();
        for i in self.instances.values() {
            *counts.entry(format!("{:?}/{:?}/e{}/j{}", i.state, i.origin, i.epoch, i.job)).or_default() += 1;
        }
        format!(
            "busy {:?}, deque {}, lookups {}, stolen_out {:?}, {:?}",
            self.busy,
            self.deque.len(),
            self.lookups.len(),
            self.stolen_out.keys().collect::<Vec<_>>(),
            counts
        )
    }

    /// Starts queued work until the processors are busy or nothing is left.
    pub fn step(&mut self, now: Nanos, core: &mut Node) {
        let lookups = &self.lookups;
        self.short_waits.retain(|k| lookups.contains_key(k) && core.lookup_in_flight(k));
        loop {
            if self.slots > 0 && self.busy.len() + self.looking() >= self.slots {
                return;
            }
            let Some(id) = self.resumed.pop_front().or_else(|| self.deque.pop_back()) else { return };
            let Some(inst) = self.instances.get(&id) else { continue };
            let (job, redone, looked_up, epoch) = (inst.job, inst.redone, inst.looked_up, inst.epoch);
            if self.slots == 0 && self.tree.is_leaf(job) {
                // A pure master only expands inner jobs; leaves wait for thieves.
                self.deque.push_back(id);
                return;
            }
            let key = key_of(job);
            if redone && !looked_up {
                match core.lookup(&key, epoch) {
                    Lookup::Hit(v) => {
                        self.complete(id, decode(&v));
                        continue;
                    }
                    Lookup::Pending => {
                        let inst = self.instances.get_mut(&id).expect("present");
                        inst.state = State::Lookup;
                        inst.started = now;
                        self.lookups.entry(key).or_default().push(id);
                        if core.lookup_in_flight(&key) {
                            self.short_waits.insert(key);
                        }
                        continue;
                    }
                    Lookup::Miss => self.outputs.push(Output::Missed { job, epoch, asked: now }),
                }
            }
            self.instances.get_mut(&id).expect("present").started = now;
            if self.tree.is_leaf(job) {
                self.instances.get_mut(&id).expect("present").state = State::Running;
                self.busy.push(id);
                if self.slowness.is_finite() {
                    let cost = (self.tree.leaf_cost(job) as f64 * self.slowness) as Nanos;
                    self.outputs.push(Output::LeafStarted { inst: id, done_at: now + cost });
                }
            } else {
                let kids = self.tree.children(job);
                let depth = {
                    let inst = self.instances.get_mut(&id).expect("present");
                    inst.state = State::Waiting;
                    inst.pending = kids.len() as u32;
                    inst.depth
                };
                let child_depth = if depth == DEPTH_UNKNOWN { DEPTH_UNKNOWN } else { depth + 1 };
                for &k in kids.iter().rev() {
                    self.add(k, Origin::Child(id), redone, epoch, child_depth, self.frame_base + id);
                }
            }
        }
    }

    /// The leaf `inst` finished at its scheduled time (ignored if aborted).
    pub fn leaf_done(&mut self, inst: InstId) {
        let Some(at) = self.busy.iter().position(|b| *b == inst) else { return };
        self.busy.swap_remove(at);
        let (job, started) = (self.instances[&inst].job, self.instances[&inst].started);
        self.leaves_done += 1;
        self.leaf_time += self.now.saturating_sub(started);
        self.outputs.push(Output::LeafExecuted(job, started));
        // The leaf's place in the tree: values that keep improving through
        // the run, so news keep flowing (leaf values repeat).
        self.shared.offer(job as u64 + 1);
        self.complete(inst, self.tree.leaf_value(job));
    }

    fn complete(&mut self, id: InstId, value: u64) {
        let Some(inst) = self.instances.remove(&id) else { return };
        let key = key_of(inst.job);
        match inst.origin {
            Origin::Root { start } => {
                self.outputs.push(Output::RootFinished { start, value: encode(value, self.result_bytes) })
            }
            Origin::Stolen { victim, stamp } => {
                self.running_stolen.remove(&(victim, stamp));
                let value = encode(value, self.result_bytes);
                self.outputs.push(Output::StolenFinished { victim, stamp, key, value });
            }
            Origin::Child(parent) => {
                if inst.state != State::StolenOut && inst.started > 0 {
                    let ran = self.now.saturating_sub(inst.started);
                    let meta = ResultMeta { depth: inst.depth, id: self.frame_base + id, parent: inst.parent_frame };
                    let value = encode(value, self.result_bytes);
                    self.outputs.push(Output::LocalFinished { ran, key, value, meta });
                }
                let Some(p) = self.instances.get_mut(&parent) else { return };
                if !self.delivered.insert((parent, inst.job)) {
                    self.completed_twice += 1;
                    return;
                }
                p.acc = p.acc.wrapping_add(value);
                p.finished_children.push((inst.job, value));
                p.pending -= 1;
                if p.pending == 0 {
                    let acc = p.acc;
                    self.complete(parent, acc);
                }
            }
        }
    }

    /// Instances in the subtree under `top` (itself included).
    fn subtree(&self, top: InstId) -> Vec<InstId> {
        let mut memo: HashMap<InstId, bool> = HashMap::default();
        memo.insert(top, true);
        let mut out = Vec::new();
        for &id in self.instances.keys() {
            let mut chain = Vec::new();
            let mut cur = id;
            let inside = loop {
                if let Some(&known) = memo.get(&cur) {
                    break known;
                }
                chain.push(cur);
                match self.instances.get(&cur).map(|i| i.origin) {
                    Some(Origin::Child(p)) => cur = p,
                    _ => break false,
                }
            };
            for c in chain {
                memo.insert(c, inside);
            }
            if inside {
                out.push(id);
            }
        }
        out.sort_unstable();
        out
    }

    fn remove_all(&mut self, ids: &[InstId]) -> Abandoned {
        let mut result = Abandoned::default();
        for id in ids {
            let Some(inst) = self.instances.remove(id) else { continue };
            let key = key_of(inst.job);
            for (job, v) in inst.finished_children {
                result.finished.push((key_of(job), encode(v, self.result_bytes)));
            }
            match inst.state {
                State::StolenOut => {
                    self.stolen_out.remove(&inst.stamp);
                    result.stolen_out.push(inst.stamp);
                }
                State::Lookup => {
                    if let Some(waiters) = self.lookups.get_mut(&key) {
                        waiters.retain(|w| w != id);
                        if waiters.is_empty() {
                            self.lookups.remove(&key);
                        }
                    }
                }
                State::Running => {
                    self.busy.retain(|b| b != id);
                    self.leaf_time += self.now.saturating_sub(inst.started);
                }
                _ => {}
            }
            if let Origin::Stolen { victim, stamp } = inst.origin {
                self.running_stolen.remove(&(victim, stamp));
            }
        }
        self.deque.retain(|id| self.instances.contains_key(id));
        self.resumed.retain(|id| self.instances.contains_key(id));
        result
    }
}

impl ModelExecutor<'_> {
    /// Every job stolen by this node fails now (its job service died and
    /// says so).
    pub fn fail_running(&mut self) {
        for (victim, stamp) in self.abort_stolen() {
            self.outputs.push(Output::StolenFailed { victim, stamp });
        }
    }

    /// Every job stolen by this node vanishes (its workers were killed;
    /// nobody tells the victims).
    pub fn lose_running(&mut self) {
        for (victim, stamp) in self.abort_stolen() {
            self.outputs.push(Output::StolenLost { victim, stamp });
        }
    }

    fn abort_stolen(&mut self) -> Vec<(NodeId, u64)> {
        let mut tops: Vec<((NodeId, u64), InstId)> = self.running_stolen.iter().map(|(k, v)| (*k, *v)).collect();
        tops.sort_unstable();
        for (_, top) in &tops {
            let ids = self.subtree(*top);
            self.remove_all(&ids);
        }
        tops.into_iter().map(|(k, _)| k).collect()
    }
}

impl Executor for ModelExecutor<'_> {
    fn take_for_thief(&mut self, stamp: u64, _holds: &[[u8; 32]]) -> Option<JobSpec> {
        while let Some(id) = self.deque.pop_front() {
            let Some(inst) = self.instances.get_mut(&id) else { continue };
            inst.state = State::StolenOut;
            inst.stamp = stamp;
            self.stolen_out.insert(stamp, id);
            let mut payload = inst.job.to_le_bytes().to_vec();
            payload.resize(self.param_bytes.max(payload.len()), 0);
            return Some(JobSpec {
                key: key_of(inst.job),
                stamp,
                payload: payload.into(),
                redone: inst.redone,
                duplicate: false,
                epoch: inst.epoch,
                depth: inst.depth,
                parent: inst.parent_frame,
            });
        }
        None
    }

    fn run_stolen(&mut self, job: JobSpec, victim: NodeId) {
        if self.fail_rate > 0.0 && self.rng.unit() < self.fail_rate {
            self.outputs.push(Output::StolenFailed { victim, stamp: job.stamp });
            return;
        }
        let origin = Origin::Stolen { victim, stamp: job.stamp };
        let id = self.add(node_of(&job.key), origin, job.redone, job.epoch, job.depth, job.parent);
        self.running_stolen.insert((victim, job.stamp), id);
    }

    fn run_root(&mut self, job: JobSpec) {
        self.add(node_of(&job.key), Origin::Root { start: job.stamp }, job.redone, job.epoch, 0, 0);
    }

    fn requeue(&mut self, job: JobSpec) {
        if let Some(id) = self.stolen_out.remove(&job.stamp) {
            if let Some(inst) = self.instances.get_mut(&id) {
                inst.state = State::Queued;
                inst.redone = true;
                self.deque.push_back(id);
            }
        }
    }

    fn deliver(&mut self, stamp: u64, value: satin_proto::Bytes) -> bool {
        match self.stolen_out.remove(&stamp) {
            Some(id) if self.instances.contains_key(&id) => {
                self.complete(id, decode(&value));
                true
            }
            _ => false,
        }
    }

    fn fail(&mut self, _stamp: u64, _reason: &str) -> bool {
        // Model jobs do not fail, so no thief reports a failure.
        false
    }

    fn abandon(&mut self, victim: NodeId, stamp: u64, run_on: bool) -> Abandoned {
        if self.keep_orphans && run_on {
            // Runs to the end; its result goes into the table then.
            return Abandoned { runs_on: self.running_stolen.contains_key(&(victim, stamp)), ..Abandoned::default() };
        }
        match self.running_stolen.get(&(victim, stamp)) {
            Some(&top) => {
                let ids = self.subtree(top);
                self.remove_all(&ids)
            }
            None => Abandoned::default(),
        }
    }

    fn abandon_all(&mut self) -> Abandoned {
        let mut ids: Vec<InstId> = self.instances.keys().copied().collect();
        ids.sort_unstable();
        self.remove_all(&ids)
    }

    fn lookup_done(&mut self, key: &JobKey, value: Option<satin_proto::Bytes>) {
        for id in self.lookups.remove(key).unwrap_or_default() {
            match &value {
                Some(v) => self.complete(id, decode(v)),
                None => {
                    if let Some(inst) = self.instances.get_mut(&id) {
                        self.outputs.push(Output::Missed { job: inst.job, epoch: inst.epoch, asked: inst.started });
                        inst.looked_up = true;
                        inst.state = State::Queued;
                        self.resumed.push_back(id);
                    }
                }
            }
        }
    }

    fn has_work(&self) -> bool {
        self.busy.len() + self.looking() >= self.slots || !self.deque.is_empty() || !self.resumed.is_empty()
    }

    fn progress(&self) -> (u64, u64) {
        let running: Nanos =
            self.busy.iter().filter_map(|b| self.instances.get(b)).map(|i| self.now.saturating_sub(i.started)).sum();
        (self.leaves_done, self.leaf_time + running)
    }

    fn runs_anything(&self) -> bool {
        !self.instances.is_empty()
    }

    fn take_shared(&mut self) -> Option<satin_proto::SharedValues> {
        self.shared.take()
    }

    fn all_shared(&self) -> Option<satin_proto::SharedValues> {
        self.shared.all()
    }

    fn merge_shared(&mut self, values: satin_proto::SharedValues) {
        self.shared.merge(values);
    }

    fn recovery_started(&mut self) {
        self.lookup_mode = true;
        for inst in self.instances.values_mut() {
            inst.redone = true;
        }
    }
}
