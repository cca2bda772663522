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

    /// Node `node` computes tree node `job` (root epoch `epoch`) after its
    /// lookup at `asked` found nothing. Two properties must hold:
    ///
    /// - the table's: a result that a live node published long enough ago
    ///   to have reached every replica is never recomputed
    ///   (`Report::violations`);
    /// - adoption's: a job that a live node announced as running long
    ///   enough ago is not recomputed by a lookup of a newer epoch, which
    ///   waits for it instead (`Report::running_recomputed`).
    ///
    /// "Long enough ago" is [`World::settled_by`]; the cases where neither
    /// property is promised are [`World::unpromised`].
    pub(crate) fn check_miss(&mut self, node: usize, job: u32, epoch: u32, asked: Nanos) {
        if self.unpromised(node) {
            return;
        }
        let homes = self.nodes[node].core.table_replicas() > 0;
        if let Some(&(since, holder, e)) = self.running.get(&job) {
            // The holder may have dropped the job without a message the
            // simulator sees (when it is the key's only home itself).
            let computes = !self.nodes[holder].gone && self.nodes[holder].core.runs_at(&workload::key_of(job), e);
            // (A holder found stalled is not waited for: `adoptions.rs`.)
            let stalled = self.nodes[node].core.found_stalled(self.nodes[holder].core.id());
            if computes
                && e < epoch
                && !stalled
                && self.settled_by(since, homes) < asked
                && !self.stale_view(holder, homes)
            {
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
        if !self.nodes[publisher].gone && self.settled_by(at, homes) < asked && !self.stale_view(publisher, homes) {
            if std::env::var_os("SATIN_SIM_DEBUG").is_some() {
                eprintln!(
                    "violation: node {node} recomputes job {job}, published by {publisher} at {at}, now {}",
                    self.now
                );
            }
            self.report.violations += 1;
        }
    }

    /// No promise for a bounded table (it may evict) or a node that joined
    /// during the run (it starts with an empty replica).
    fn unpromised(&self, node: usize) -> bool {
        self.cfg.protocol.table_capacity.is_some() || node >= self.initial_nodes
    }

    /// When news of something done at `since` has surely reached every
    /// replica: two of the slowest messages later. With a home table,
    /// counted from the last membership change anyone learned of if that
    /// is later, since entries move to new homes then.
    fn settled_by(&self, since: Nanos, homes: bool) -> Nanos {
        let c = self.cfg;
        let slowest = c.wide_latency.max(c.local_latency)
            + c.jitter
            + ((c.result_bytes + 128) as f64 / c.wide_bandwidth.min(c.local_bandwidth) * 1e9) as Nanos;
        let since = if homes { since.max(self.membership_changed) } else { since };
        since + 2 * slowest
    }

    /// Whether node `i`, with a home table, still counts a member that is
    /// gone: what it placed may sit at a home that no longer exists (a
    /// joiner whose contact welcomed it before hearing of a departure), so
    /// it is not counted until it learns.
    fn stale_view(&self, i: usize, homes: bool) -> bool {
        homes && self.nodes[i].core.live_members().any(|m| self.nodes.get(m as usize).is_some_and(|n| n.gone))
    }
}
