//! A node's counters, and how the counters of several nodes add up (the
//! simulator's report and a cluster's totals use the same sum).

use super::Time;

/// Counters of one node.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NodeStats {
    /// Steal requests this node sent.
    pub steal_requests: u64,
    /// Jobs this node stole from others.
    pub jobs_stolen: u64,
    /// Jobs others stole from this node.
    pub jobs_given: u64,
    /// Jobs re-queued here because the node that stole them was lost.
    pub redone: u64,
    /// Finished results of orphan jobs (their owner was lost) kept in the
    /// result table.
    pub orphans_saved: u64,
    /// Lookups in the result table that found the value.
    pub table_hits: u64,
    /// Lookups that found nothing (the job ran).
    pub table_misses: u64,
    /// Recoveries this node carried out after a peer was out of the run.
    pub recoveries: u64,
    /// Results put into the table by this node.
    pub published: u64,
    /// Lookups answered by waiting for a job that was still running
    /// elsewhere (instead of computing it again).
    pub adopted: u64,
    /// Waits for a job running on a node found stalled that this node
    /// gave up (the call ran here instead, see `node/adoptions.rs`).
    pub adoptions_given_up: u64,
    /// Questions this node sent to the homes of keys it lacked (a home
    /// table).
    pub homes_asked: u64,
    /// Questions this node answered as a home.
    pub home_questions: u64,
    /// Checkpoint records this node wrote (as coordinator).
    pub records_written: u64,
    /// The bytes of those records.
    pub checkpoint_bytes: u64,
    /// Records this node loaded from the checkpoint file when it opened it.
    pub records_loaded: u64,
    /// Copies of late jobs this node started (here or on idle thieves).
    pub duplicates_started: u64,
    /// Copies that delivered the result first.
    pub duplicates_won: u64,
    /// Copies aborted because another finished first.
    pub duplicates_aborted: u64,
    /// The time those aborted copies had run.
    pub loser_time: Time,
    /// Status questions asked (soft timeouts).
    pub status_checks: u64,
    /// Jobs found lost by a status question.
    pub jobs_lost: u64,
    /// Jobs aborted at their hard timeout.
    pub hard_timeouts: u64,
    /// Hard timeouts not carried out: this node's own workers had stalled
    /// meanwhile, so the thief's lateness said nothing.
    pub hard_timeouts_waived: u64,
    /// Failed jobs retried.
    pub retried: u64,
    /// Stolen jobs this node could not run (see
    /// [`Executor::can_run`](crate::Executor::can_run)) and gave back to
    /// their owner.
    pub refused: u64,
    /// Nodes this node dropped.
    pub drops: u64,
    /// How often this node was dropped.
    pub dropped: u64,
    /// Elections this node started (after a majority agreed that the
    /// master was gone).
    pub elections: u64,
    /// Members this node removed as leader.
    pub removals: u64,
    /// Stalls of this node's own (its event loop late by several beats)
    /// that it did not count as silence of others.
    pub stalls: u64,
    /// Silence windows won for members by indirect probes.
    pub rescues: u64,
}

impl std::ops::AddAssign<&NodeStats> for NodeStats {
    fn add_assign(&mut self, other: &NodeStats) {
        // Destructured without `..`: a new counter must say how it adds up.
        let NodeStats {
            steal_requests,
            jobs_stolen,
            jobs_given,
            redone,
            orphans_saved,
            table_hits,
            table_misses,
            recoveries,
            published,
            adopted,
            adoptions_given_up,
            homes_asked,
            home_questions,
            records_written,
            checkpoint_bytes,
            records_loaded,
            duplicates_started,
            duplicates_won,
            duplicates_aborted,
            loser_time,
            status_checks,
            jobs_lost,
            hard_timeouts,
            hard_timeouts_waived,
            retried,
            refused,
            drops,
            dropped,
            elections,
            removals,
            stalls,
            rescues,
        } = other;
        self.steal_requests += steal_requests;
        self.jobs_stolen += jobs_stolen;
        self.jobs_given += jobs_given;
        self.redone += redone;
        self.orphans_saved += orphans_saved;
        self.table_hits += table_hits;
        self.table_misses += table_misses;
        self.recoveries += recoveries;
        self.published += published;
        self.adopted += adopted;
        self.adoptions_given_up += adoptions_given_up;
        self.homes_asked += homes_asked;
        self.home_questions += home_questions;
        self.records_written += records_written;
        self.checkpoint_bytes += checkpoint_bytes;
        self.records_loaded += records_loaded;
        self.duplicates_started += duplicates_started;
        self.duplicates_won += duplicates_won;
        self.duplicates_aborted += duplicates_aborted;
        self.loser_time += loser_time;
        self.status_checks += status_checks;
        self.jobs_lost += jobs_lost;
        self.hard_timeouts += hard_timeouts;
        self.hard_timeouts_waived += hard_timeouts_waived;
        self.retried += retried;
        self.refused += refused;
        self.drops += drops;
        self.dropped += dropped;
        self.elections += elections;
        self.removals += removals;
        self.stalls += stalls;
        self.rescues += rescues;
    }
}

impl<'a> std::iter::Sum<&'a NodeStats> for NodeStats {
    fn sum<I: Iterator<Item = &'a NodeStats>>(iter: I) -> NodeStats {
        iter.fold(NodeStats::default(), |mut total, s| {
            total += s;
            total
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_add_up_field_by_field() {
        let a = NodeStats { jobs_stolen: 2, loser_time: 5, removals: 1, ..NodeStats::default() };
        let b = NodeStats { jobs_stolen: 3, refused: 4, removals: 1, ..NodeStats::default() };
        let total: NodeStats = [a, b].iter().sum();
        assert_eq!(total, NodeStats { jobs_stolen: 5, loser_time: 5, refused: 4, removals: 2, ..NodeStats::default() });
    }
}
