//! A node's figures at its end, and the line that says them.

use crate::proto::{NodeId, NodeStats};

/// Per-node figures for the final statistics block.
pub(crate) struct Report {
    pub(crate) id: NodeId,
    pub(crate) stats: NodeStats,
    pub(crate) table_hits: u64,
    pub(crate) table_lookups: u64,
    pub(crate) table_len: usize,
    /// Homes per table key (0: the broadcast table).
    pub(crate) table_replicas: usize,
    pub(crate) bytes_sent: u64,
    pub(crate) frames_sent: u64,
    /// Packets this node's network faults dropped (`--chaos`).
    pub(crate) packets_dropped: u64,
    /// Checkpoint records and bytes this node wrote.
    pub(crate) records_written: u64,
    pub(crate) checkpoint_bytes: u64,
}

impl Report {
    /// Every figure, as the one stderr line a node ends with (after
    /// `APP: node ID: `).
    pub(crate) fn stats_line(&self) -> String {
        let (r, s) = (self, &self.stats);
        format!(
            "jobs stolen {}, given {}, redone {}, recoveries {}, table entries {}, published {}, table lookups {}, \
             table hits {}, adopted {}, table homes {}, homes asked {}, questions answered {}, orphans saved {}, \
             checkpoint records written {}, checkpoint bytes {}, records loaded {}, duplicates started {}, \
             duplicates won {}, duplicates aborted {}, loser time {:.3} s, status checks {}, jobs lost {}, \
             hard timeouts {}, retried {}, refused {}, drops {}, dropped {}, frames sent {}, bytes sent {}, \
             packets dropped {}, elections {}, removals {}",
            s.jobs_stolen,
            s.jobs_given,
            s.redone,
            s.recoveries,
            r.table_len,
            s.published,
            r.table_lookups,
            r.table_hits,
            s.adopted,
            r.table_replicas,
            s.homes_asked,
            s.home_questions,
            s.orphans_saved,
            r.records_written,
            r.checkpoint_bytes,
            s.records_loaded,
            s.duplicates_started,
            s.duplicates_won,
            s.duplicates_aborted,
            s.loser_time as f64 / 1e9,
            s.status_checks,
            s.jobs_lost,
            s.hard_timeouts,
            s.retried,
            s.refused,
            s.drops,
            s.dropped,
            r.frames_sent,
            r.bytes_sent,
            r.packets_dropped,
            s.elections,
            s.removals
        )
    }
}
