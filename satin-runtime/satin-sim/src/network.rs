//! The simulated network's faults: nodes cut off, links cut (one way or
//! both), loss — modelled on what the real transport does with them.
//!
//! - A message on a cut link waits, as QUIC keeps a stream's data until the
//!   path works again; if the cut outlasts `link_timeout` (the connection's
//!   idle timeout) the connection is lost: what waited is dropped, both
//!   ends are told the link is down (a suspicion, never a death), and the
//!   link drops what it is given until it heals.
//! - Beats and the leader's repeated entries (`QMsg::may_be_lost`, sent
//!   as QUIC datagrams in real runs) are lost on a cut link, and each with
//!   the loss rate on a lossy one; every other message is delayed by retransmissions instead — a geometric number of
//!   round trips, as a reliable stream recovers a lost packet.

use std::collections::{HashMap, HashSet};

use super::events::Ev;
use super::workload::Nanos;
use super::World;
use satin_proto::Msg;

#[derive(Debug, Default)]
pub(super) struct Network {
    /// Nodes cut off from every other.
    isolated: HashSet<usize>,
    /// Directed links that deliver nothing: (from, to).
    cut: HashSet<(usize, usize)>,
    /// Probability that a packet is lost.
    pub(super) loss: f64,
    /// Extra delay of every message, and up to how much more (jitter).
    pub(super) delay: (Nanos, Nanos),
    /// Messages waiting on a cut link, in sending order, per (from, to).
    held: HashMap<(usize, usize), Vec<Msg>>,
    /// Links whose connection timed out while cut: they drop everything.
    down: HashSet<(usize, usize)>,
    /// Bumped at every change of a link, so a stale timeout does nothing.
    episode: HashMap<(usize, usize), u64>,
    /// Links whose sender will be told again that they are down (a
    /// message it sent since was lost: a new connection failed too).
    retold: HashSet<(usize, usize)>,
}

/// What happens to a message sent now.
pub(super) enum Fate {
    Deliver,
    Drop,
    /// Waits on its cut link.
    Hold,
}

impl Network {
    pub(super) fn blocked(&self, from: usize, to: usize) -> bool {
        self.isolated.contains(&from) || self.isolated.contains(&to) || self.cut.contains(&(from, to))
    }

    /// Messages waiting on cut links, by (from, to).
    pub(super) fn held_messages(&self) -> impl Iterator<Item = (&(usize, usize), &Vec<Msg>)> {
        self.held.iter()
    }

    /// Whether the connection `from → to` timed out while cut.
    pub(super) fn is_down(&self, from: usize, to: usize) -> bool {
        self.down.contains(&(from, to))
    }

    /// Whether any fault is in force (the fast path skips the rest).
    pub(super) fn faulty(&self) -> bool {
        self.loss > 0.0 || self.delay != (0, 0) || !self.isolated.is_empty() || !self.cut.is_empty()
    }

    /// `link` is a pair of nodes, `machines` the machines they run on (see
    /// `World::machine`): cuts are between machines.
    pub(super) fn fate(&self, link: (usize, usize), machines: (usize, usize), msg: &Msg) -> Fate {
        if !self.blocked(machines.0, machines.1) {
            return Fate::Deliver;
        }
        let beat = matches!(msg, Msg::Quorum(q) if q.may_be_lost());
        if beat || self.down.contains(&link) {
            Fate::Drop
        } else {
            Fate::Hold
        }
    }
}

impl World<'_> {
    /// Sends `msg` over a network with faults: held, dropped, or delivered
    /// later by retransmissions. Returns the message if it goes out now
    /// (with the extra delay of its retransmissions).
    pub(super) fn through_network(&mut self, from: usize, to: usize, msg: Msg) -> Option<(Msg, Nanos)> {
        if !self.net.faulty() {
            return Some((msg, 0));
        }
        let machines = (self.machine_of(from), self.machine_of(to));
        match self.net.fate((from, to), machines, &msg) {
            Fate::Drop => {
                // On a link that is down, a new connection is tried and
                // fails: the sender hears of it again, once at a time —
                // and so does the receiver, whose own connection to the
                // sender loses its acknowledgements the same way (QUIC
                // needs both directions).
                let beat = matches!(&msg, Msg::Quorum(q) if q.may_be_lost());
                if !beat && self.net.down.contains(&(from, to)) {
                    for (node, peer) in [(from, to), (to, from)] {
                        if self.net.retold.insert((node, peer)) {
                            self.schedule(self.now + self.cfg.link_timeout, Ev::LinkDown { node, peer });
                        }
                    }
                }
                None
            }
            Fate::Hold => {
                let link = (from, to);
                let first = !self.net.held.contains_key(&link);
                self.net.held.entry(link).or_default().push(msg);
                if first {
                    let episode = *self.net.episode.entry(link).or_insert(0);
                    self.schedule(self.now + self.cfg.link_timeout, Ev::LinkTimeout { from, to, episode });
                }
                None
            }
            Fate::Deliver => {
                let beat = matches!(&msg, Msg::Quorum(q) if q.may_be_lost());
                let (delay, jitter) = self.net.delay;
                let rto = 2 * (self.delay(from, to, 64) + delay).max(1_000_000);
                let mut extra = delay + if jitter > 0 { self.rng.below(jitter) } else { 0 };
                if beat {
                    if self.rng.unit() < self.net.loss {
                        return None;
                    }
                } else {
                    while self.rng.unit() < self.net.loss {
                        extra += rto;
                    }
                }
                Some((msg, extra))
            }
        }
    }

    /// Cuts the link `from → to` (or mends it).
    pub(super) fn set_cut(&mut self, from: usize, to: usize, cut: bool) {
        if cut {
            self.net.cut.insert((from, to));
        } else {
            self.net.cut.remove(&(from, to));
            self.mended(from, to);
        }
    }

    /// Cuts node `n` off from every other (or lets it back).
    pub(super) fn set_isolated(&mut self, n: usize, cut: bool) {
        if cut {
            self.net.isolated.insert(n);
            return;
        }
        self.net.isolated.remove(&n);
        for other in 0..self.nodes.len() {
            if other != n {
                self.mended(n, other);
                self.mended(other, n);
            }
        }
    }

    fn machine_of(&self, node: usize) -> usize {
        self.machine.get(node).copied().unwrap_or(node)
    }

    /// The link between machines `from` and `to` may work again: what
    /// waited on it (between any of their nodes) goes out, in order.
    fn mended(&mut self, from: usize, to: usize) {
        if self.net.blocked(from, to) {
            return;
        }
        let links: Vec<(usize, usize)> = self
            .net
            .held
            .keys()
            .chain(self.net.down.iter())
            .copied()
            .filter(|&(a, b)| self.machine_of(a) == from && self.machine_of(b) == to)
            .collect();
        for link in links {
            *self.net.episode.entry(link).or_insert(0) += 1;
            let was_down = self.net.down.remove(&link);
            for msg in self.net.held.remove(&link).unwrap_or_default() {
                self.send(link.0, link.1, msg);
            }
            if was_down {
                // Its connections (both ways: QUIC needs both directions)
                // are opened again, and each end hears the other's hello.
                self.link_up(link.1, link.0);
                self.link_up(link.0, link.1);
            }
        }
    }

    /// A connection from `peer` reached `node` again after one was lost.
    fn link_up(&mut self, node: usize, peer: usize) {
        if node >= self.nodes.len() || self.nodes[node].gone || !self.nodes[node].core.joined() {
            return;
        }
        let now = self.now;
        let super::SimNode { core, exec, .. } = &mut self.nodes[node];
        core.handle_link_up(now, peer as u64, exec);
        self.pump(node);
    }

    /// A cut outlasted the connection's idle timeout: its data is lost and
    /// both ends learn that the link is down.
    pub(super) fn link_timeout(&mut self, from: usize, to: usize, episode: u64) {
        let link = (from, to);
        let blocked = self.net.blocked(self.machine_of(from), self.machine_of(to));
        if self.net.episode.get(&link).copied().unwrap_or(0) != episode || !blocked {
            return;
        }
        self.net.held.remove(&link);
        self.net.down.insert(link);
        self.link_down(from, to);
        self.link_down(to, from);
    }

    /// Node `node` finds its connection with `peer` lost.
    pub(super) fn link_down(&mut self, node: usize, peer: usize) {
        self.net.retold.remove(&(node, peer));
        if node >= self.nodes.len() || self.nodes[node].gone {
            return;
        }
        let now = self.now;
        let super::SimNode { core, exec, .. } = &mut self.nodes[node];
        core.handle_link_down(now, peer as u64, exec);
        self.pump(node);
    }
}
