//! Messages between simulated nodes: latency and bandwidth of the link
//! (local or wide area), jitter, links kept in order, and the counts the
//! report gives. Cuts and loss are `network.rs`'s.

use super::config::Lanes;
use super::events::Ev;
use super::workload::Nanos;
use super::World;
use satin_proto::Msg;

/// The bytes `msg` takes encoded, counted without writing them (most of
/// a long simulation's messages are beats: sized, never sent anywhere).
pub(crate) fn wire_size(msg: &Msg) -> usize {
    postcard::serialize_with_flavor(msg, postcard::ser_flavors::Size::default()).unwrap_or(0)
}

impl World<'_> {
    pub(crate) fn delay(&self, from: usize, to: usize, bytes: usize) -> Nanos {
        let same = self.nodes[from].cluster == self.nodes.get(to).map_or(u32::MAX, |n| n.cluster);
        let (lat, bw) = if same {
            (self.cfg.local_latency, self.cfg.local_bandwidth)
        } else {
            (self.cfg.wide_latency, self.cfg.wide_bandwidth)
        };
        lat + (bytes as f64 / bw * 1e9) as Nanos
    }

    pub(crate) fn send(&mut self, from: usize, to: usize, msg: Msg) {
        let bytes = wire_size(&msg);
        self.send_sized(from, to, msg, bytes);
    }

    /// When a message of `bytes` sent now from `from` reaches `to`: its
    /// lane of the link sends one message at a time (`Lanes`), so a large
    /// one holds back what follows it on the same lane.
    pub(crate) fn arrival(&mut self, from: usize, to: usize, bytes: usize, msg: &Msg) -> Nanos {
        let delay = self.delay(from, to, bytes);
        if self.cfg.lanes == Lanes::Unqueued {
            return self.now + delay;
        }
        let same = self.nodes[from].cluster == self.nodes.get(to).map_or(u32::MAX, |n| n.cluster);
        let (latency, bw) = if same {
            (self.cfg.local_latency, self.cfg.local_bandwidth)
        } else {
            (self.cfg.wide_latency, self.cfg.wide_bandwidth)
        };
        let control = self.control_lane(msg);
        let busy = self.link_busy.entry((from, to, control)).or_insert(0);
        let start = (*busy).max(self.now);
        *busy = start + (bytes as f64 / bw * 1e9) as Nanos;
        *busy + latency
    }

    /// Whether `msg` takes the link's control lane (`Lanes::ControlApart`).
    fn control_lane(&self, msg: &Msg) -> bool {
        self.cfg.lanes == Lanes::ControlApart && msg.urgent()
    }

    pub(crate) fn send_sized(&mut self, from: usize, to: usize, msg: Msg, bytes: usize) {
        if to >= self.nodes.len() {
            return;
        }
        // (`trace_msgs` is the environment read once, at the start.)
        if self.trace_msgs && !matches!(msg, Msg::StealRequest { .. } | Msg::StealReply { job: None, .. }) {
            eprintln!("{} {from}->{to} {}", self.now, format!("{msg:?}").chars().take(200).collect::<String>());
        }
        self.report.messages += 1;
        self.count_kind(&msg, 1);
        self.report.bytes += bytes as u64;
        let Some((msg, retransmissions)) = self.through_network(from, to, msg) else { return };
        let jitter = if self.cfg.jitter > 0 { self.rng.below(self.cfg.jitter) } else { 0 };
        let arrival = self.arrival(from, to, bytes, &msg);
        let at = if self.control_lane(&msg) {
            // The control lane keeps its own order, apart from the data's.
            let last = self.control_clock.entry((from, to)).or_insert(0);
            let at = (arrival + jitter + retransmissions).max(if self.cfg.fifo_links { *last } else { 0 });
            *last = (*last).max(at);
            at
        } else {
            self.in_order(from, &[to], arrival + jitter + retransmissions)
        };
        // (Kept where links queue: large runs would keep millions.)
        if matches!(msg, Msg::Quorum(_)) && self.cfg.lanes != Lanes::Unqueued {
            self.report.beat_delays.push(at.saturating_sub(self.now));
        }
        self.schedule(at, Ev::Deliver { to, from, msg: Box::new(msg) });
    }

    /// With `fifo_links`, delays a delivery from `from` so that it does not
    /// overtake an earlier one on any of its links (equal times keep their
    /// scheduling order).
    pub(crate) fn in_order(&mut self, from: usize, to: &[usize], at: Nanos) -> Nanos {
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

    /// Counts steal and table messages apart (the rest: membership,
    /// checkpoints, stragglers, the end).
    pub(crate) fn count_kind(&mut self, msg: &Msg, n: u64) {
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
            Msg::Shared(_) => self.report.shared_messages += n,
            _ => {}
        }
    }
}
