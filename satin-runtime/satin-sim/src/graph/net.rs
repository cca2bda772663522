//! The simulated network of a task-graph run: latency with jitter, each
//! node's delay and loss (a lost packet costs a retransmission), and cut
//! links. A message on a cut link waits for the link to heal, as QUIC
//! retransmits it; a link cut for longer than the idle timeout loses its
//! connection for good, and both ends find the other gone. (A link cut in
//! one direction counts as cut both ways: without acknowledgements the
//! sender's connection times out too.)

use std::collections::{HashMap, HashSet};

use satin_dag::GraphMsg;
use satin_faults::Links;
use satin_proto::SplitMix64;

use crate::workload::Nanos;

/// What travels between two simulated nodes.
#[derive(Debug, Clone)]
pub(super) enum Packet {
    Msg(GraphMsg),
    /// The answer to a connection's handshake: the dialling end's
    /// connection is up.
    Linked,
}

/// What the network does with a packet.
pub(super) enum Fate {
    /// It arrives at this time.
    Arrives(Nanos, Packet),
    /// It waits for a cut link to heal.
    Held,
    /// Its connection is gone.
    Dropped,
}

/// Two nodes, the lower first.
type Pair = (usize, usize);

/// A packet the network holds: (from, to, what).
pub(super) type Held = (usize, usize, Packet);

fn pair(a: usize, b: usize) -> Pair {
    (a.min(b), a.max(b))
}

/// What a retransmission costs: about QUIC's probe timeout on a fast link.
const RETRANSMISSION: Nanos = 30_000_000;

#[derive(Default)]
pub(super) struct Network {
    pub(super) latency: Nanos,
    /// Directed cuts in force on each link (faults may overlap).
    cuts: HashMap<(usize, usize), u32>,
    /// Each pair's current cut: counted, so that a timeout of an earlier
    /// cut does not end a later one.
    episodes: HashMap<Pair, u64>,
    /// Pairs whose connection timed out: nothing passes any more.
    lost: HashSet<Pair>,
    held: HashMap<Pair, Vec<Held>>,
    /// Each node's outgoing delay (ms, jitter ms) and loss rate; `None`
    /// stands for the default of every node (`all_*`).
    delay: HashMap<usize, (f64, f64)>,
    loss: HashMap<usize, f64>,
    all_delay: (f64, f64),
    all_loss: f64,
}

impl Network {
    pub(super) fn new(latency: Nanos) -> Network {
        Network { latency, ..Network::default() }
    }

    fn is_cut(&self, (a, b): Pair) -> bool {
        self.cuts.get(&(a, b)).is_some_and(|&c| c > 0) || self.cuts.get(&(b, a)).is_some_and(|&c| c > 0)
    }

    pub(super) fn is_lost(&self, a: usize, b: usize) -> bool {
        self.lost.contains(&pair(a, b))
    }

    /// What becomes of a packet `from` sends to `to` at `now`.
    pub(super) fn send(&mut self, now: Nanos, from: usize, to: usize, packet: Packet, rng: &mut SplitMix64) -> Fate {
        let p = pair(from, to);
        if self.lost.contains(&p) {
            return Fate::Dropped;
        }
        if self.is_cut(p) {
            self.held.entry(p).or_default().push((from, to, packet));
            return Fate::Held;
        }
        Fate::Arrives(now + self.travel(from, rng), packet)
    }

    /// How long a packet from `from` takes: latency, jitter, the node's
    /// delay, a retransmission per loss.
    fn travel(&self, from: usize, rng: &mut SplitMix64) -> Nanos {
        let (ms, jitter) = self.delay.get(&from).copied().unwrap_or(self.all_delay);
        let loss = self.loss.get(&from).copied().unwrap_or(self.all_loss);
        let mut t = self.latency + rng.below(self.latency / 2 + 1);
        t += ((ms + jitter * rng.unit()) * 1e6) as Nanos;
        let mut tries = 0;
        while tries < 8 && loss > 0.0 && rng.unit() < loss {
            t += RETRANSMISSION;
            tries += 1;
        }
        t
    }

    /// A cut (`cut`) or heal of `links` among `nodes` nodes. Returns the
    /// pairs newly cut (with their episode, for the timeout) and the
    /// packets a healed link lets through.
    pub(super) fn change(&mut self, links: &Links, cut: bool, nodes: usize) -> (Vec<(Pair, u64)>, Vec<Held>) {
        let directed: Vec<(usize, usize)> = match links {
            Links::Node(n) => {
                let n = *n as usize;
                (0..nodes).filter(|&x| x != n).flat_map(|x| [(n, x), (x, n)]).collect()
            }
            Links::Link { from, to, both } => {
                let (a, b) = (*from as usize, *to as usize);
                if *both {
                    vec![(a, b), (b, a)]
                } else {
                    vec![(a, b)]
                }
            }
            Links::Split(side) => {
                let side: Vec<usize> = side.iter().map(|&n| n as usize).collect();
                let other: Vec<usize> = (0..nodes).filter(|x| !side.contains(x)).collect();
                side.iter().flat_map(|&a| other.iter().flat_map(move |&b| [(a, b), (b, a)])).collect()
            }
        };
        let pairs: HashSet<Pair> = directed.iter().map(|&(a, b)| pair(a, b)).collect();
        let before: HashMap<Pair, bool> = pairs.iter().map(|&p| (p, self.is_cut(p))).collect();
        for d in directed {
            let c = self.cuts.entry(d).or_default();
            *c = if cut { *c + 1 } else { c.saturating_sub(1) };
        }
        let mut newly_cut = Vec::new();
        let mut released = Vec::new();
        let mut pairs: Vec<Pair> = pairs.into_iter().collect();
        pairs.sort_unstable();
        for p in pairs {
            match (before[&p], self.is_cut(p)) {
                (false, true) => {
                    let e = self.episodes.entry(p).or_default();
                    *e += 1;
                    newly_cut.push((p, *e));
                }
                (true, false) => released.extend(self.held.remove(&p).unwrap_or_default()),
                _ => {}
            }
        }
        (newly_cut, released)
    }

    /// The cut of `p` that began as `episode` lasted the idle timeout:
    /// true if the connection is lost now (its packets with it).
    pub(super) fn time_out(&mut self, p: Pair, episode: u64) -> bool {
        if self.episodes.get(&p) != Some(&episode) || !self.is_cut(p) || self.lost.contains(&p) {
            return false;
        }
        self.lost.insert(p);
        self.held.remove(&p);
        true
    }

    /// `node`'s process is gone: what it sent and the network still holds
    /// is lost with it (what others sent it stays: they go on trying, and
    /// find it gone when the link heals).
    pub(super) fn forget(&mut self, node: usize, nodes: usize) {
        for x in (0..nodes).filter(|&x| x != node) {
            if let Some(held) = self.held.get_mut(&pair(node, x)) {
                held.retain(|(from, ..)| *from != node);
            }
        }
    }

    pub(super) fn set_delay(&mut self, node: Option<usize>, ms: f64, jitter: f64) {
        match node {
            Some(n) => {
                self.delay.insert(n, (ms, jitter));
            }
            None => {
                self.all_delay = (ms, jitter);
                self.delay.clear();
            }
        }
    }

    pub(super) fn set_loss(&mut self, node: Option<usize>, rate: f64) {
        match node {
            Some(n) => {
                self.loss.insert(n, rate);
            }
            None => {
                self.all_loss = rate;
                self.loss.clear();
            }
        }
    }
}
