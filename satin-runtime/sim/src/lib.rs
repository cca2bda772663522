//! Deterministic simulator: many nodes in one process, virtual time,
//! per-link latency and bandwidth, faults from a schedule — all from one
//! seed. Every simulated node is a real [`Node`] (the protocol core real
//! runs use) plus a [`ModelExecutor`] that plays its processor.
//!
//! Each step takes the earliest event (ties in scheduling order), hands it
//! to its node's core or executor, then pumps that node: start work, pass
//! finished jobs to the core, let an idle core steal, carry out its actions.

// Documented where not self-explanatory; the remaining public items are
// listed by removing this line.
#![allow(missing_docs)]

mod disk;
pub mod exec;
pub mod faults;
mod lifecycle;
mod network;
mod report;
pub mod workload;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};

pub use disk::SimCheckpoint;
pub use report::Report;

use exec::{decode, ModelExecutor, Output};
use faults::{Fault, Trigger};
use satin_proto::{Action, Config, Msg, Node, SplitMix64};
use workload::{Cost, Nanos, Shape, Tree};

/// Everything a simulated run depends on.
#[derive(Clone, Debug)]
pub struct SimConfig {
    pub clusters: u32,
    pub nodes_per_cluster: u32,
    /// All nodes at start, if not `clusters × nodes_per_cluster`: nodes
    /// fill clusters of `nodes_per_cluster` in order, the last one partly.
    pub nodes: Option<u32>,
    pub shape: Shape,
    pub mean_leaf_cost: Nanos,
    pub cost: Cost,
    pub local_latency: Nanos,
    pub wide_latency: Nanos,
    /// Bytes per second inside a cluster and between clusters.
    pub local_bandwidth: f64,
    pub wide_bandwidth: f64,
    /// Extra random delay per message, up to this much: messages reorder.
    pub jitter: Nanos,
    /// Keep each link's messages in sending order, as the real transport
    /// does (one QUIC stream per direction per peer), whatever the jitter.
    pub fifo_links: bool,
    /// Time from a crash until each live node declares the peer dead.
    pub detect_delay: Nanos,
    /// Crashes are told to every node after `detect_delay`, as the
    /// supervisor of `--local-nodes` tells its nodes (certain deaths; the
    /// papers' fail-stop model). `false`: nobody is told — the failure
    /// detector finds them, and a connection to a gone node only times out
    /// (as across machines).
    pub crash_notices: bool,
    /// How long a cut link's connection lives (QUIC's idle timeout): then
    /// what waited on it is lost and its ends learn it is down.
    pub link_timeout: Nanos,
    /// Go on after the answer until every node is gone (or the time
    /// limit): the report then counts every answer printed and the nodes
    /// that never ended.
    pub run_to_end: bool,
    /// A node the majority removed while it was cut off starts over as a
    /// new node when it learns so (as real processes do).
    pub rejoin_expelled: bool,
    /// A draining node still in the run this long after its `drain` fault
    /// leaves anyway, aborting what it runs (`--leave-timeout-ms`).
    pub leave_timeout: Nanos,
    pub protocol: Config,
    /// Encoded size of every job result.
    pub result_bytes: usize,
    /// Jobs run for a node that died run to the end and publish their
    /// result, as in real runs; `false`: they are aborted and only their
    /// finished parts saved (the paper's orphan saving).
    pub keep_orphans: bool,
    pub faults: Vec<Fault>,
    /// A checkpoint file and the storage it is on (`protocol.checkpoint_interval`
    /// follows its interval).
    pub checkpoint: Option<SimCheckpoint>,
    /// After every node is gone without an answer (all crashed, or the run
    /// suspended), start the same number of new nodes this much later: the
    /// same command run again. `None`: the run ends there.
    pub resume_after: Option<Nanos>,
    /// Processors per node (jobs a node runs at once), and of the first
    /// node, the master, if different (0: it only hands out work).
    pub slots: u32,
    pub master_slots: Option<u32>,
    pub seed: u64,
    /// A run still going at this virtual time is reported as not terminated.
    pub time_limit: Nanos,
}

impl SimConfig {
    /// Nodes at start.
    pub fn node_count(&self) -> u32 {
        self.nodes.unwrap_or(self.clusters * self.nodes_per_cluster)
    }
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            clusters: 4,
            nodes_per_cluster: 16,
            nodes: None,
            shape: Shape::Uneven { leaves: 10_000 },
            mean_leaf_cost: 10_000_000,
            cost: Cost::Exponential,
            local_latency: 100_000,
            wide_latency: 10_000_000,
            local_bandwidth: 100e6,
            wide_bandwidth: 10e6,
            jitter: 0,
            fifo_links: false,
            detect_delay: 1_000_000_000,
            crash_notices: true,
            link_timeout: 3_000_000_000,
            run_to_end: false,
            rejoin_expelled: true,
            leave_timeout: 30_000_000_000,
            protocol: Config::default(),
            result_bytes: 8,
            keep_orphans: true,
            faults: Vec::new(),
            checkpoint: None,
            resume_after: None,
            slots: 1,
            master_slots: None,
            seed: 1,
            time_limit: 100_000 * 1_000_000_000,
        }
    }
}

enum Ev {
    Deliver {
        to: usize,
        from: usize,
        msg: Box<Msg>,
    },
    /// One broadcast to every node of a latency class, delivered together.
    Fanout {
        to: Vec<usize>,
        from: usize,
        msg: Box<Msg>,
    },
    LeafDone {
        node: usize,
        inst: u64,
    },
    Timer {
        node: usize,
    },
    PeerDead {
        node: usize,
        peer: usize,
    },
    /// A draining node's time is up.
    LeaveDeadline {
        node: usize,
    },
    Fault(usize),
    /// The checkpoint file has been read for `node`.
    DiskOpened {
        node: usize,
    },
    /// A write of `node` reached the disk (or, if `node` crashed, part of it).
    DiskWritten {
        node: usize,
        seq: u64,
        records: u64,
        frames: Vec<u8>,
    },
    /// New nodes start the run again (from the checkpoint).
    Resume,
    /// A cut link's connection may time out now (see `network.rs`).
    LinkTimeout {
        from: usize,
        to: usize,
        episode: u64,
    },
    /// `node` finds its connection with `peer` lost (a suspicion).
    LinkDown {
        node: usize,
        peer: usize,
    },
}

struct Scheduled {
    at: Nanos,
    seq: u64,
    ev: Ev,
}

impl PartialEq for Scheduled {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl Eq for Scheduled {}
impl PartialOrd for Scheduled {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Scheduled {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.at, self.seq).cmp(&(o.at, o.seq))
    }
}

struct SimNode<'t> {
    core: Node,
    exec: ModelExecutor<'t>,
    cluster: u32,
    /// Crashed, left, or terminated: receives nothing any more.
    gone: bool,
    crashed: bool,
    /// Crashed without anyone being told.
    silent: bool,
    leaves: u64,
    /// When each leaf executed here started.
    started_at: Vec<Nanos>,
}

struct World<'t> {
    cfg: &'t SimConfig,
    tree: &'t Tree,
    nodes: Vec<SimNode<'t>>,
    queue: BinaryHeap<Reverse<Scheduled>>,
    seq: u64,
    now: Nanos,
    rng: SplitMix64,
    distinct_leaves: HashSet<u32>,
    /// First time each job's value was broadcast, and by whom.
    published: HashMap<u32, (Nanos, usize)>,
    /// Jobs announced as running (for newer-epoch lookups to wait for):
    /// since when, by whom, of which epoch.
    running: HashMap<u32, (Nanos, usize, u32)>,
    /// (sender, gone node) pairs whose departure the sender will notice.
    noticed: HashSet<(usize, usize)>,
    initial_nodes: usize,
    progress_faults: Vec<usize>,
    /// Latest delivery time per link (kept in order with `fifo_links`;
    /// otherwise only deliveries later than a crash's detection).
    link_clock: HashMap<(usize, usize), Nanos>,
    /// When a node last learned of a membership change (a death, a
    /// leave, a join): a home table moves entries then.
    membership_changed: Nanos,
    /// `SATIN_SIM_TRACE_MSGS`: print every message but failed steals.
    trace_msgs: bool,
    disk: Option<disk::Disk>,
    /// Cut links, cut-off nodes, loss.
    net: network::Network,
    /// The answers printed, as log entries (term, index).
    decisions: HashSet<(u32, u64)>,
    /// The machine each node runs on (a process that starts over as a new
    /// node keeps its machine, and its network faults).
    machine: Vec<usize>,
    resuming: bool,
    report: Report,
    finished: bool,
}

/// Runs one simulation to completion.
pub fn run(cfg: &SimConfig) -> Report {
    let tree = Tree::build(&cfg.shape, cfg.mean_leaf_cost, cfg.cost, cfg.seed);
    run_on(cfg, &tree)
}

/// Runs one simulation on a tree built beforehand (sweeps reuse trees).
pub fn run_on(cfg: &SimConfig, tree: &Tree) -> Report {
    let mut w = World {
        cfg,
        tree,
        nodes: Vec::new(),
        queue: BinaryHeap::new(),
        seq: 0,
        now: 0,
        rng: SplitMix64::new(cfg.seed),
        distinct_leaves: HashSet::new(),
        published: HashMap::new(),
        running: HashMap::new(),
        noticed: HashSet::new(),
        initial_nodes: cfg.node_count() as usize,
        progress_faults: Vec::new(),
        link_clock: HashMap::new(),
        membership_changed: 0,
        trace_msgs: std::env::var_os("SATIN_SIM_TRACE_MSGS").is_some(),
        disk: cfg.checkpoint.map(disk::Disk::new),
        net: network::Network::default(),
        decisions: HashSet::new(),
        machine: Vec::new(),
        resuming: false,
        report: Report { leaves_needed: tree.leaves(), seed: cfg.seed, ..Report::default() },
        finished: false,
    };
    for (i, f) in cfg.faults.iter().enumerate() {
        match f.when {
            Trigger::At(t) => w.schedule(t, Ev::Fault(i)),
            Trigger::Progress(_) => w.progress_faults.push(i),
        }
    }
    w.start_nodes();
    while let Some(Reverse(s)) = w.queue.pop() {
        if w.finished {
            break;
        }
        if s.at > cfg.time_limit {
            if w.report.answer.is_none() {
                w.report.failure = Some("time limit reached".into());
            }
            break;
        }
        w.now = s.at;
        w.dispatch(s.ev);
        w.resume_if_all_gone();
    }
    if !w.finished && std::env::var_os("SATIN_SIM_DEBUG").is_some() {
        for (i, n) in w.nodes.iter().enumerate() {
            eprintln!("node {i} gone {} crashed {}: {}\n    {}", n.gone, n.crashed, n.core.summary(), n.exec.summary());
        }
    }
    if w.report.answer.is_none() && w.report.failure.is_none() {
        w.report.failure = Some("no events left and no answer: the run is stuck".into());
    }
    if cfg.run_to_end {
        w.report.stuck = w.nodes.iter().filter(|n| !n.gone).count() as u64;
    }
    if let Some(d) = &w.disk {
        w.report.checkpoint_file_bytes = d.max_bytes.max(d.bytes.len()) as u64;
        w.report.checkpoint_repairs = d.repairs;
    }
    for node in &w.nodes {
        let s = node.core.stats();
        w.report.records_written += s.records_written;
        w.report.records_loaded += s.records_loaded;
        w.report.jobs_stolen += s.jobs_stolen;
        w.report.table_hits += s.table_hits;
        w.report.redone += s.redone;
        w.report.orphans_saved += s.orphans_saved;
        w.report.adopted += s.adopted;
        w.report.duplicates_started += s.duplicates_started;
        w.report.duplicates_won += s.duplicates_won;
        w.report.duplicates_aborted += s.duplicates_aborted;
        w.report.loser_seconds += s.loser_time as f64 / 1e9;
        w.report.status_checks += s.status_checks;
        w.report.jobs_lost += s.jobs_lost;
        w.report.hard_timeouts += s.hard_timeouts;
        w.report.retried += s.retried;
        w.report.drops += s.drops;
        w.report.elections += s.elections;
        w.report.removals += s.removals;
        w.report.completed_twice += node.exec.completed_twice;
        w.report.table_entries = w.report.table_entries.max(node.core.table_len() as u64);
        w.report.table_entries_total += node.core.table_len() as u64;
    }
    w.report.nodes = w.nodes.len() as u64;
    w.report.per_node = (0..w.nodes.len())
        .map(|i| {
            let judged = w.nodes.iter().flat_map(|n| n.core.health_report()).filter(|h| h.node == i as u64);
            let (strikes, drops) = judged.fold((0, 0), |(s, d), h| (s + h.strikes, d.max(h.drops)));
            report::PerNode { leaves: w.nodes[i].leaves, started_at: w.nodes[i].started_at.clone(), strikes, drops }
        })
        .collect();
    w.report.leaves_on_crashed = w.nodes.iter().filter(|n| n.crashed).map(|n| n.leaves).sum();
    w.report.result_ok = w.report.failure.is_none() && w.report.answer == Some(tree.answer());
    w.report
}

impl World<'_> {
    fn schedule(&mut self, at: Nanos, ev: Ev) {
        self.seq += 1;
        self.queue.push(Reverse(Scheduled { at, seq: self.seq, ev }));
    }

    fn dispatch(&mut self, ev: Ev) {
        let now = self.now;
        // The executors that may run now learn the time: the event's node,
        // or every node for the rare events that may touch any (a loop over
        // 10 000 nodes per event would be most of a large run's time).
        match &ev {
            Ev::Deliver { to: n, .. }
            | Ev::LeafDone { node: n, .. }
            | Ev::Timer { node: n }
            | Ev::PeerDead { node: n, .. }
            | Ev::LeaveDeadline { node: n }
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
                let SimNode { core, exec, .. } = &mut self.nodes[node];
                core.handle_timeout(now, exec);
                self.pump(node);
            }
            Ev::PeerDead { node, peer } => {
                if self.nodes[node].gone {
                    return;
                }
                if !self.nodes[node].core.joined() {
                    // Its contact is gone before admitting it: the joiner
                    // gives up, as a real one does.
                    self.nodes[node].gone = true;
                    return;
                }
                self.membership_changed = now;
                let SimNode { core, exec, .. } = &mut self.nodes[node];
                core.handle_peer_dead(now, peer as u64, exec);
                self.pump(node);
            }
            Ev::LeaveDeadline { node } => {
                if self.nodes[node].gone {
                    return;
                }
                let SimNode { core, exec, .. } = &mut self.nodes[node];
                core.leave(now, exec);
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

    fn delay(&self, from: usize, to: usize, bytes: usize) -> Nanos {
        let same = self.nodes[from].cluster == self.nodes.get(to).map_or(u32::MAX, |n| n.cluster);
        let (lat, bw) = if same {
            (self.cfg.local_latency, self.cfg.local_bandwidth)
        } else {
            (self.cfg.wide_latency, self.cfg.wide_bandwidth)
        };
        lat + (bytes as f64 / bw * 1e9) as Nanos
    }

    fn send(&mut self, from: usize, to: usize, msg: Msg) {
        let bytes = postcard::to_stdvec(&msg).map_or(0, |v| v.len());
        self.send_sized(from, to, msg, bytes);
    }

    fn send_sized(&mut self, from: usize, to: usize, msg: Msg, bytes: usize) {
        if to >= self.nodes.len() {
            return;
        }
        if std::env::var_os("SATIN_SIM_TRACE_MSGS").is_some()
            && !matches!(msg, Msg::StealRequest { .. } | Msg::StealReply { job: None, .. })
        {
            eprintln!("{} {from}->{to} {}", self.now, format!("{msg:?}").chars().take(200).collect::<String>());
        }
        self.report.messages += 1;
        self.count_kind(&msg, 1);
        self.report.bytes += bytes as u64;
        let Some((msg, retransmissions)) = self.through_network(from, to, msg) else { return };
        let jitter = if self.cfg.jitter > 0 { self.rng.below(self.cfg.jitter) } else { 0 };
        let at = self.in_order(from, &[to], self.now + self.delay(from, to, bytes) + jitter + retransmissions);
        self.schedule(at, Ev::Deliver { to, from, msg: Box::new(msg) });
    }

    /// With `fifo_links`, delays a delivery from `from` so that it does not
    /// overtake an earlier one on any of its links (equal times keep their
    /// scheduling order).
    fn in_order(&mut self, from: usize, to: &[usize], at: Nanos) -> Nanos {
        let at = if self.cfg.fifo_links {
            to.iter().map(|&t| self.link_clock.get(&(from, t)).copied().unwrap_or(0)).fold(at, Nanos::max)
        } else {
            at
        };
        // A crash's detection waits for what was sent before it (see
        // `notice_gone`): only deliveries later than that need a record.
        if self.cfg.fifo_links || at > self.now + self.cfg.detect_delay {
            for &t in to {
                let last = self.link_clock.entry((from, t)).or_insert(0);
                *last = (*last).max(at);
            }
        }
        at
    }

    /// Runs node `i` until it has nothing more to do at this instant.
    fn pump(&mut self, i: usize) {
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
                        core.handle_job_finished(now, victim, stamp, key, value, exec)
                    }
                    Output::RootFinished(v) => {
                        let SimNode { core, exec, .. } = &mut self.nodes[i];
                        core.handle_root_finished(now, v, exec)
                    }
                    // The core publishes only jobs long against the run so far.
                    Output::LocalFinished { ran, key, value, meta } => {
                        let SimNode { core, exec, .. } = &mut self.nodes[i];
                        core.handle_local_job_finished(now, ran, key, value, meta, exec)
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
                let SimNode { core, exec, gone, .. } = &mut self.nodes[i];
                if !*gone && !exec_has_work(exec) {
                    core.handle_idle(now, exec);
                }
            }
            while let Some(a) = self.nodes[i].core.poll_action() {
                progressed = true;
                self.act(i, a);
            }
            if !progressed {
                return;
            }
        }
    }

    /// Counts steal and table messages apart (the rest: membership,
    /// checkpoints, stragglers, the end).
    fn count_kind(&mut self, msg: &Msg, n: u64) {
        match msg {
            Msg::StealRequest { .. } | Msg::StealReply { .. } => self.report.steal_messages += n,
            Msg::TablePut { .. }
            | Msg::TableSync { .. }
            | Msg::TableGet { .. }
            | Msg::TableGot { .. }
            | Msg::NotRunning { .. }
            | Msg::Fetch { .. }
            | Msg::FetchReply { .. } => self.report.table_messages += n,
            Msg::Quorum(_) => self.report.quorum_messages += n,
            _ => {}
        }
    }

    /// Notes what the invariants need of a table update node `i` sends.
    fn observe(&mut self, i: usize, msg: &Msg) {
        match msg {
            Msg::TablePut { key, entry: satin_proto::Entry::Value(_), .. } => {
                self.published.entry(workload::node_of(key)).or_insert((self.now, i));
                self.running.remove(&workload::node_of(key));
            }
            Msg::NotRunning { key, .. } => {
                self.running.remove(&workload::node_of(key));
            }
            Msg::TablePut { key, entry: satin_proto::Entry::Running { epoch, .. }, .. } => {
                self.running.insert(workload::node_of(key), (self.now, i, *epoch));
            }
            _ => {}
        }
    }

    fn act(&mut self, i: usize, a: Action) {
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
                if self.net.faulty() {
                    // Each copy meets the network on its own link.
                    let n = self.nodes.len();
                    let to: Vec<usize> =
                        self.nodes[i].core.live_members().map(|t| t as usize).filter(|&t| t != i && t < n).collect();
                    for t in to {
                        self.send(i, t, msg.clone());
                    }
                    return;
                }
                let bytes = postcard::to_stdvec(&msg).map_or(0, |v| v.len());
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
            Action::SetTimer { at } => self.schedule(at, Ev::Timer { node: i }),
            Action::Done { value } => {
                self.report.answers += 1;
                if let Some(d) = self.nodes[i].core.decision() {
                    self.decisions.insert(d);
                    self.report.decisions = self.decisions.len() as u64;
                }
                if self.report.answer.is_none() {
                    self.report.answer = Some(decode(&value));
                    self.report.virtual_seconds = self.now as f64 / 1e9;
                }
                self.finished = !self.cfg.run_to_end;
            }
            Action::Failed { reason } => {
                self.report.failure = Some(reason);
                self.report.virtual_seconds = self.now as f64 / 1e9;
                self.finished = true;
            }
            Action::Finished { .. } => {}
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
            Action::Expelled { by, carry } => {
                self.report.expelled += 1;
                self.rejoin(i, by as usize, carry);
            }
            Action::LostMajority { .. } => self.report.gave_up += 1,
        }
    }

    /// The property the table exists for: a result that a live node
    /// published long enough ago to have reached every replica is never
    /// recomputed. (Bounded tables may evict; joiners start empty.)
    ///
    /// And the property adoption exists for: a job that a live node
    /// announced as running long enough ago is not recomputed by a lookup
    /// of a newer epoch (it waits for the result instead).
    ///
    /// With a home table "long enough ago" also counts from the last
    /// membership change anyone learned of: entries move to new homes then.
    /// And a node that has not yet learned of a departure (a joiner whose
    /// contact welcomed it before hearing of it) places entries at homes
    /// that are gone: until it learns, what it placed is not counted.
    fn check_miss(&mut self, node: usize, job: u32, epoch: u32, asked: Nanos) {
        if self.cfg.protocol.table_capacity.is_some() || node >= self.initial_nodes {
            return;
        }
        let slowest = self.cfg.wide_latency.max(self.cfg.local_latency)
            + self.cfg.jitter
            + ((self.cfg.result_bytes + 128) as f64 / self.cfg.wide_bandwidth.min(self.cfg.local_bandwidth) * 1e9)
                as Nanos;
        let homes = self.nodes[node].core.table_replicas() > 0;
        let settled = |since: Nanos| if homes { since.max(self.membership_changed) } else { since };
        if let Some(&(since, holder, e)) = self.running.get(&job) {
            // The holder may have dropped the job without a message the
            // simulator sees (when it is the key's only home itself).
            let computes = !self.nodes[holder].gone && self.nodes[holder].core.runs_at(&workload::key_of(job), e);
            if computes && e < epoch && settled(since) + 2 * slowest < asked && !self.stale_view(holder, homes) {
                if std::env::var_os("SATIN_SIM_DEBUG").is_some() {
                    eprintln!(
                        "violation: node {node} recomputes job {job} (epoch {epoch}), running on {holder} (epoch {e}) since {since}, now {}: {}",
                        self.now,
                        self.nodes[node].core.debug_key(&workload::key_of(job))
                    );
                }
                self.report.running_recomputed += 1;
            }
        }
        let Some(&(at, publisher)) = self.published.get(&job) else { return };
        if !self.nodes[publisher].gone && settled(at) + 2 * slowest < asked && !self.stale_view(publisher, homes) {
            if std::env::var_os("SATIN_SIM_DEBUG").is_some() {
                eprintln!(
                    "violation: node {node} recomputes job {job}, published by {publisher} at {at}, now {}",
                    self.now
                );
            }
            self.report.violations += 1;
        }
    }

    /// Whether node `i`, with a home table, still counts a member that is
    /// gone (its entries may sit at a home that no longer exists).
    fn stale_view(&self, i: usize, homes: bool) -> bool {
        homes && self.nodes[i].core.live_members().any(|m| self.nodes.get(m as usize).is_some_and(|n| n.gone))
    }

    fn check_progress(&mut self) {
        let done = self.distinct_leaves.len() as f64 / self.tree.leaves().max(1) as f64;
        let due: Vec<usize> = self
            .progress_faults
            .iter()
            .copied()
            .filter(|&f| matches!(self.cfg.faults[f].when, Trigger::Progress(p) if done >= p))
            .collect();
        if due.is_empty() {
            return;
        }
        self.progress_faults.retain(|f| !due.contains(f));
        for f in due {
            // At this instant, after the current node's step.
            self.schedule(self.now, Ev::Fault(f));
        }
    }
}

fn exec_has_work(exec: &ModelExecutor<'_>) -> bool {
    satin_proto::Executor::has_work(exec)
}
