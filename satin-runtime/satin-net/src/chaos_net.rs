//! The supervisor's side of network chaos: which node's socket gets which
//! order (`netfault.rs` carries them out) when a partition, a cut link,
//! loss or delay begins or ends, and what a node started later must be
//! told at its start.

use std::collections::BTreeMap;
use std::net::SocketAddr;

use satin_faults::{Kind, Links};

/// The network faults in force, as far as nodes started later need them.
#[derive(Debug, Default)]
pub(super) struct NetChaos {
    /// Loss and delay for every node (and per node, which wins).
    loss: f64,
    delay: (f64, f64),
    node_loss: BTreeMap<u64, f64>,
    node_delay: BTreeMap<u64, (f64, f64)>,
    /// Nodes cut off right now.
    isolated: Vec<u64>,
    /// Links cut right now: packets from the first node to the second.
    cuts: Vec<(u64, u64)>,
}

/// One order for one node's socket.
pub(super) type Order = (u64, String);

impl NetChaos {
    /// The orders that carry `kind` out, for nodes `0..count` whose
    /// addresses are `addrs` (`None`: not listening yet, or gone), and
    /// notes what later nodes need. Nodes not yet started get their part at
    /// their start ([`NetChaos::at_start`]).
    pub(super) fn orders(&mut self, kind: &Kind, addrs: &[Option<SocketAddr>]) -> Vec<Order> {
        let count = addrs.len() as u64;
        let addr = |n: u64| addrs.get(n as usize).copied().flatten();
        let mut out = Vec::new();
        match *kind {
            Kind::Net { links: Links::Node(node), cut } => {
                out.push((node, format!("isolate {}", if cut { "on" } else { "off" })));
                // The others stop sending to it, so that nothing it could
                // still receive gets through either way.
                if let Some(a) = addr(node) {
                    let verb = if cut { "block" } else { "unblock" };
                    out.extend((0..count).filter(|&n| n != node).map(|n| (n, format!("{verb} {a}"))));
                }
                self.isolated.retain(|&n| n != node);
                if cut {
                    self.isolated.push(node);
                }
            }
            Kind::Net { links: Links::Link { from, to, both }, cut } => {
                let verb = if cut { "block" } else { "unblock" };
                for link in [(from, to), (to, from)].into_iter().take(if both { 2 } else { 1 }) {
                    self.cuts.retain(|&l| l != link);
                    if cut {
                        self.cuts.push(link);
                    }
                }
                if let Some(a) = addr(to) {
                    out.push((from, format!("{verb} {a}")));
                }
                if let (true, Some(a)) = (both, addr(from)) {
                    out.push((to, format!("{verb} {a}")));
                }
            }
            Kind::Net { links: Links::Split(ref side), cut } => {
                for a in (0..count).filter(|a| side.contains(a)) {
                    for b in (0..count).filter(|b| !side.contains(b)) {
                        let link = Links::Link { from: a, to: b, both: true };
                        out.extend(self.orders(&Kind::Net { links: link, cut }, addrs));
                    }
                }
            }
            Kind::Loss { node: Some(n), rate } => {
                self.node_loss.insert(n, rate);
                out.push((n, format!("loss {rate}")));
            }
            Kind::Loss { node: None, rate } => {
                self.loss = rate;
                self.node_loss.clear();
                out.extend((0..count).map(|n| (n, format!("loss {rate}"))));
            }
            Kind::Delay { node: Some(n), ms, jitter } => {
                self.node_delay.insert(n, (ms, jitter));
                out.push((n, format!("delay {ms} {jitter}")));
            }
            Kind::Delay { node: None, ms, jitter } => {
                self.delay = (ms, jitter);
                self.node_delay.clear();
                out.extend((0..count).map(|n| (n, format!("delay {ms} {jitter}"))));
            }
            _ => {}
        }
        out
    }

    /// What node `node` starts with (the form of `contract::NET_FAULTS`),
    /// given the addresses of the nodes started before it.
    pub(super) fn at_start(&self, node: u64, addrs: &[Option<SocketAddr>]) -> String {
        let loss = self.node_loss.get(&node).copied().unwrap_or(self.loss);
        let (ms, jitter) = self.node_delay.get(&node).copied().unwrap_or(self.delay);
        let mut orders = vec![format!("loss {loss}"), format!("delay {ms} {jitter}")];
        // A cut-off node stays unreachable for newcomers too.
        for &n in &self.isolated {
            if let Some(Some(a)) = addrs.get(n as usize) {
                orders.push(format!("block {a}"));
            }
        }
        for &(_, to) in self.cuts.iter().filter(|(from, _)| *from == node) {
            if let Some(Some(a)) = addrs.get(to as usize) {
                orders.push(format!("block {a}"));
            }
        }
        if self.isolated.contains(&node) {
            orders.push("isolate on".into());
        }
        orders.join(";")
    }

    /// Node `node` listens at a new address (it started over as a new
    /// node): the faults in force hold for it as they did — orders to it,
    /// and to the nodes that must not reach it.
    pub(super) fn moved(&self, node: u64, addrs: &[Option<SocketAddr>]) -> Vec<Order> {
        let Some(Some(new)) = addrs.get(node as usize).copied() else { return Vec::new() };
        let mut out: Vec<Order> = self.at_start(node, addrs).split(';').map(|o| (node, o.to_string())).collect();
        let cut_off = self.isolated.contains(&node);
        for other in (0..addrs.len() as u64).filter(|&n| n != node) {
            if cut_off || self.cuts.contains(&(other, node)) {
                out.push((other, format!("block {new}")));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addrs(n: u16) -> Vec<Option<SocketAddr>> {
        (0..n).map(|i| Some(SocketAddr::from(([127, 0, 0, 1], 7000 + i)))).collect()
    }

    #[test]
    fn a_partition_isolates_the_node_and_the_others_stop_sending_to_it() {
        let mut c = NetChaos::default();
        let a = addrs(3);
        let on = c.orders(&Kind::Net { links: Links::Node(1), cut: true }, &a);
        assert_eq!(
            on,
            vec![(1, "isolate on".into()), (0, "block 127.0.0.1:7001".into()), (2, "block 127.0.0.1:7001".into())]
        );
        let joiner = c.at_start(3, &a);
        assert!(joiner.contains("block 127.0.0.1:7001") && !joiner.contains("isolate"), "{joiner}");
        let off = c.orders(&Kind::Net { links: Links::Node(1), cut: false }, &a);
        assert_eq!(off[0], (1, "isolate off".into()));
        assert!(off[1..].iter().all(|(_, o)| o == "unblock 127.0.0.1:7001"));
        assert!(!c.at_start(3, &a).contains("block"));
    }

    #[test]
    fn cuts_block_one_or_both_ends_and_loss_and_delay_reach_newcomers() {
        let mut c = NetChaos::default();
        let a = addrs(3);
        assert_eq!(
            c.orders(&Kind::Net { links: Links::Link { from: 0, to: 2, both: true }, cut: true }, &a),
            vec![(0, "block 127.0.0.1:7002".into()), (2, "block 127.0.0.1:7000".into())]
        );
        assert_eq!(
            c.orders(&Kind::Net { links: Links::Link { from: 2, to: 1, both: false }, cut: false }, &a),
            vec![(2, "unblock 127.0.0.1:7001".into())]
        );
        assert_eq!(c.orders(&Kind::Loss { node: None, rate: 0.2 }, &a).len(), 3);
        c.orders(&Kind::Delay { node: Some(4), ms: 100.0, jitter: 50.0 }, &a);
        assert_eq!(c.at_start(3, &a), "loss 0.2;delay 0 0");
        assert_eq!(c.at_start(4, &a), "loss 0.2;delay 100 50");
        // Node 2 starts over on a new port: the cut 0-2 still holds.
        let mut moved = a.clone();
        moved[2] = Some(SocketAddr::from(([127, 0, 0, 1], 9000)));
        let orders = c.moved(2, &moved);
        assert!(orders.contains(&(2, "block 127.0.0.1:7000".into())), "{orders:?}");
        assert!(orders.contains(&(0, "block 127.0.0.1:9000".into())), "{orders:?}");
        assert!(!orders.iter().any(|(n, _)| *n == 1), "{orders:?}");
    }
}
