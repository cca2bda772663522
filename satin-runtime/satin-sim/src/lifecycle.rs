//! Nodes coming and going in a simulated run: the start (and restart) of
//! a full set of nodes, the faults of a schedule, crashes and the notice of
//! a departure, and the checkpoint file's writes reaching the disk.

use super::exec::ModelExecutor;

/// Results carried from a removed node to its next incarnation.
type Carry = Vec<(satin_proto::JobKey, Vec<u8>, satin_proto::checkpoint::ResultMeta)>;
use super::events::Ev;
use super::faults::{Crashed, Kind, Links};
use super::workload::key_of;
use super::{SimNode, World};
use satin_proto::Node;

impl World<'_> {
    /// Starts a full set of nodes: at the beginning, and again on resume
    /// (new ids after the old ones; the first is the master).
    pub(super) fn start_nodes(&mut self) {
        let cfg = self.cfg;
        let n = cfg.node_count() as usize;
        let base = self.nodes.len();
        let members: Vec<(u64, u32)> =
            (0..n).map(|i| ((base + i) as u64, i as u32 / cfg.nodes_per_cluster.max(1))).collect();
        let root = satin_proto::JobSpec::root(key_of(0), 0u32.to_le_bytes().to_vec());
        let mut protocol = super::shared::with_news_timer(cfg.protocol.clone(), cfg.shared_values);
        protocol.leave_timeout = cfg.leave_timeout;
        protocol.checkpoint_interval = cfg.checkpoint.map(|c| c.interval);
        // Only the first run places its first write; a resumed one starts over.
        protocol.checkpoint_first = cfg.checkpoint.and_then(|c| c.first).filter(|_| base == 0);
        // One member list for all: each node keeps only what changes.
        let shared = satin_proto::Members::new(&members);
        for &(id, cluster) in &members {
            self.machine.push(id as usize);
            let core = Node::member_of(
                id,
                cluster,
                &shared,
                base as u64,
                root.clone(),
                protocol.clone(),
                cfg.seed ^ base as u64,
            );
            // As real runs: only the table's runs keep orphans (`Config::keeps_orphans`).
            let exec = ModelExecutor::with_slots(
                self.tree,
                cfg.result_bytes,
                id,
                cfg.keep_orphans && cfg.protocol.keeps_orphans(),
                if id as usize == base { cfg.master_slots.unwrap_or(cfg.slots) } else { cfg.slots } as usize,
            );
            self.nodes.push(SimNode::new(core, exec, cluster));
        }
        let now = self.now;
        for i in base..base + n {
            let SimNode { core, exec, .. } = &mut self.nodes[i];
            exec.shared.enabled = cfg.shared_values;
            exec.param_bytes = cfg.param_bytes;
            exec.now = now;
            core.start(now, exec);
        }
        for i in base..base + n {
            self.pump(i);
        }
    }

    /// Every node gone and no answer: the run is lost, or resumes later.
    pub(super) fn resume_if_all_gone(&mut self) {
        if self.finished || self.resuming || self.nodes.iter().any(|n| !n.gone) {
            return;
        }
        let Some(after) = self.cfg.resume_after else { return };
        self.resuming = true;
        self.schedule(self.now + after, Ev::Resume);
    }

    /// A write reaches the disk: whole, or — its writer crashed meanwhile —
    /// cut at a random byte (a torn tail the next reader repairs).
    pub(super) fn disk_written(&mut self, node: usize, seq: u64, records: u64, frames: Vec<u8>) {
        let Some(disk) = &mut self.disk else { return };
        if self.nodes[node].crashed {
            let keep = self.rng.below(frames.len() as u64 + 1) as usize;
            disk.bytes.extend_from_slice(&frames[..keep]);
            return;
        }
        disk.append(&frames, records);
        if self.nodes[node].gone {
            return;
        }
        let now = self.now;
        let bytes = frames.len() as u64;
        let SimNode { core, .. } = &mut self.nodes[node];
        core.handle_checkpoint_written(now, seq, records, bytes);
        self.pump(node);
    }

    pub(super) fn fault(&mut self, i: usize) {
        let kind = self.cfg.faults[i].kind.clone();
        match kind {
            Kind::Crash(Crashed::Node(n)) => self.crash(n as usize),
            Kind::Vanish(n) => self.crash_told(n as usize, false),
            Kind::Net { links: Links::Node(node), cut } => self.set_isolated(node as usize, cut),
            Kind::Net { links: Links::Split(side), cut } => {
                let side: Vec<usize> = side.iter().map(|&n| n as usize).collect();
                for a in side.iter().copied() {
                    for b in (0..self.nodes.len()).filter(|b| !side.contains(b)) {
                        self.set_cut(a, b, cut);
                        self.set_cut(b, a, cut);
                    }
                }
            }
            Kind::Net { links: Links::Link { from, to, both }, cut } => {
                self.set_cut(from as usize, to as usize, cut);
                if both {
                    self.set_cut(to as usize, from as usize, cut);
                }
            }
            // (Of one node's packets: refused by `faults::check` before
            // the run starts.)
            Kind::Loss { node: _, rate } => self.net.loss = rate,
            Kind::Delay { node: _, ms, jitter } => {
                self.net.delay = ((ms * 1e6).round() as crate::Nanos, (jitter * 1e6).round() as crate::Nanos);
            }
            Kind::Crash(Crashed::Cluster(c)) => {
                let victims: Vec<usize> =
                    (0..self.nodes.len()).filter(|&j| self.nodes[j].cluster == c && !self.nodes[j].gone).collect();
                for v in victims {
                    self.crash(v);
                }
            }
            Kind::Crash(Crashed::Master) => {
                if let Some(view) = self.nodes.iter().find(|n| !n.gone) {
                    let m = view.core.master() as usize;
                    self.crash(m);
                }
            }
            Kind::Leave(n) => {
                let n = n as usize;
                if n < self.nodes.len() && !self.nodes[n].gone {
                    let now = self.now;
                    let SimNode { core, exec, .. } = &mut self.nodes[n];
                    core.leave(now, exec);
                    self.pump(n);
                    self.nodes[n].gone = true;
                }
            }
            Kind::Drain(n) => {
                let n = n as usize;
                if n < self.nodes.len() && !self.nodes[n].gone {
                    let now = self.now;
                    let SimNode { core, exec, .. } = &mut self.nodes[n];
                    core.begin_leave(now, exec);
                    self.pump(n);
                }
            }
            Kind::Crash(Crashed::All) => {
                for v in 0..self.nodes.len() {
                    self.crash(v);
                }
            }
            Kind::Suspend(_) => {
                if let Some(view) = self.nodes.iter().position(|n| !n.gone) {
                    let m = self.nodes[view].core.master() as usize;
                    let target = if m < self.nodes.len() && !self.nodes[m].gone { m } else { view };
                    let now = self.now;
                    self.nodes[target].core.suspend(now);
                    self.pump(target);
                }
            }
            Kind::Corrupt => {
                if let Some(d) = &mut self.disk {
                    if !d.bytes.is_empty() {
                        let at = self.rng.below(d.bytes.len() as u64) as usize;
                        d.bytes[at] ^= 1 << self.rng.below(8);
                    }
                }
            }
            Kind::Slow { node, factor } => self.on_exec(node, |x| x.slowness = factor),
            Kind::Fail { node, rate } => self.on_exec(node, |x| x.fail_rate = rate),
            Kind::FailRunning(node) => self.on_exec(node, |x| x.fail_running()),
            Kind::KillJobs(node) => self.on_exec(node, |x| x.lose_running()),
            Kind::Join(cluster) => {
                let cluster = cluster.unwrap_or(0);
                let Some(contact) = self.nodes.iter().position(|n| !n.gone && n.core.joined()) else { return };
                let id = self.nodes.len();
                self.join_node(cluster, contact, id, Vec::new(), None, 0);
            }
        }
    }

    /// Starts a node that joins through `contact`, on machine `machine`
    /// (a process that starts over as a new node keeps its machine, and
    /// the network's faults with it), with results a former incarnation
    /// finished.
    /// `rejoins`: how often the machine's process started over already.
    fn join_node(
        &mut self,
        cluster: u32,
        contact: usize,
        machine: usize,
        carry: Carry,
        was_origin: Option<u64>,
        rejoins: u32,
    ) {
        let id = self.nodes.len();
        // With the run's checkpoint interval, as the first nodes:
        // a suspend waits for every member's last batch.
        let mut protocol = super::shared::with_news_timer(self.cfg.protocol.clone(), self.cfg.shared_values);
        protocol.leave_timeout = self.cfg.leave_timeout;
        protocol.rejoins = rejoins;
        protocol.checkpoint_interval = self.cfg.checkpoint.map(|c| c.interval);
        // Every node runs the same program: a joiner made the first call
        // itself (its welcome leaves the root's payload out).
        let root = satin_proto::JobSpec::root(key_of(0), 0u32.to_le_bytes().to_vec());
        let mut core =
            Node::joining(id as u64, cluster, contact as u64, protocol, self.cfg.seed).with_program_root(root);
        core.carry_results(carry);
        if let Some(was) = was_origin {
            core.claim_origin(was);
        }
        let keep = self.cfg.keep_orphans && self.cfg.protocol.keeps_orphans();
        let mut exec =
            ModelExecutor::with_slots(self.tree, self.cfg.result_bytes, id as u64, keep, self.cfg.slots as usize);
        exec.shared.enabled = self.cfg.shared_values;
        exec.param_bytes = self.cfg.param_bytes;
        self.nodes.push(SimNode::new(core, exec, cluster));
        self.machine.push(machine);
        // The newcomer learns of crashes its contact may not have detected yet.
        let dead: Vec<usize> = (0..id).filter(|&j| self.nodes[j].crashed && !self.nodes[j].silent).collect();
        for d in dead {
            let at = self.now + self.cfg.detect_delay;
            self.schedule(at, Ev::PeerDead { node: id, peer: d });
        }
        let now = self.now;
        let SimNode { core, exec, .. } = &mut self.nodes[id];
        exec.now = now;
        core.start(now, exec);
        self.pump(id);
    }

    /// Node `n` was removed by the majority while cut off: as a real
    /// process does (`net/rejoin.rs`), it starts over as a new node on the
    /// same machine, joining through the member that told it, with what it
    /// had finished — as often as the core says (`Action::Expelled`).
    pub(super) fn rejoin(&mut self, n: usize, by: usize, carry: Carry) {
        let machine = self.machine[n];
        // Incarnations of this machine's process so far.
        let times = self.machine.iter().filter(|&&m| m == machine).count() as u32;
        if !self.cfg.rejoin_expelled || by >= self.nodes.len() {
            return;
        }
        self.report.rejoined += 1;
        let cluster = self.nodes[n].cluster;
        let was_origin = self.nodes[n].core.is_origin().then_some(n as u64);
        self.join_node(cluster, by, machine, carry, was_origin, times);
    }

    /// Changes node `n`'s processor (a fault), then lets it react.
    fn on_exec(&mut self, n: u64, change: impl FnOnce(&mut ModelExecutor<'_>)) {
        let n = n as usize;
        if n < self.nodes.len() && !self.nodes[n].gone {
            change(&mut self.nodes[n].exec);
            self.pump(n);
        }
    }

    /// A message from `from` found `to` gone (left, or crashed): as a real
    /// connection would, the sender notices after the detection delay —
    /// also when it never heard that `to` left (it joined meanwhile).
    pub(super) fn notice_gone(&mut self, from: usize, to: usize) {
        if from < self.nodes.len() && !self.nodes[from].gone && self.noticed.insert((from, to)) {
            // Not before what `to` sent to `from` has arrived: a closing
            // connection delivers its stream first.
            let last = self.link_clock.get(&(to, from)).map_or(0, |t| t + 1);
            let at = (self.now + self.cfg.detect_delay).max(last);
            // Told for certain where crashes are (a supervisor's notice);
            // else only the connection is lost.
            let ev = if self.cfg.crash_notices && !self.nodes[to].silent {
                Ev::PeerDead { node: from, peer: to }
            } else {
                Ev::LinkDown { node: from, peer: to }
            };
            self.schedule(at, ev);
        }
    }

    pub(super) fn crash(&mut self, n: usize) {
        self.crash_told(n, self.cfg.crash_notices);
    }

    /// Crashes node `n`; with `told`, every node learns of it for certain
    /// after the detection delay.
    pub(super) fn crash_told(&mut self, n: usize, told: bool) {
        if n >= self.nodes.len() || self.nodes[n].gone {
            return;
        }
        self.nodes[n].gone = true;
        self.nodes[n].crashed = true;
        if !told {
            self.nodes[n].silent = true;
            return;
        }
        for j in 0..self.nodes.len() {
            if !self.nodes[j].gone {
                let jitter = self.rng.below(self.cfg.detect_delay / 10 + 1);
                let at = self.now + self.cfg.detect_delay + jitter;
                self.schedule(at, Ev::PeerDead { node: j, peer: n });
            }
        }
    }
}
