//! A node's figures as they travel to the master (`node/figures.rs`
//! sends them).

use serde::{Deserialize, Serialize};

/// What a node reports of itself: counters since it started.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeFigures {
    /// The name of the cluster it belongs to (`--cluster`).
    pub cluster: String,
    /// Calls spawned on this node (each ran here or was stolen).
    pub spawns: u64,
    /// Jobs this node stole from others, and gave to thieves.
    pub jobs_stolen: u64,
    /// Jobs thieves took from this node.
    pub jobs_given: u64,
    /// Entries in its result table.
    pub table_entries: u64,
    /// Lookups of redone calls in the table, and the ones that hit.
    pub table_lookups: u64,
    /// Lookups that found a result.
    pub table_hits: u64,
    /// Recoveries it ran (crashes of others it handled).
    pub recoveries: u64,
    /// Bytes it sent to other nodes.
    pub bytes_sent: u64,
    /// CPU time of its process, in milliseconds.
    pub cpu_ms: u64,
}
