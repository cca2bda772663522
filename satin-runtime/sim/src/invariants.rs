//! What the simulator checks while a run goes on: no job computed again
//! that was published (or announced as running) long enough ago for the
//! asker to have found it. The report counts each breach.

use super::workload::{self, Nanos};
use super::World;
use satin_proto::Msg;

impl World<'_> {
    /// Notes what the invariants need of a table update node `i` sends.
    pub(crate) fn observe(&mut self, i: usize, msg: &Msg) {
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
    pub(crate) fn check_miss(&mut self, node: usize, job: u32, epoch: u32, asked: Nanos) {
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
}
