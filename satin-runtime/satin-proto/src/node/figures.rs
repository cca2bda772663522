//! Each node's figures, for the master's dashboard.
//!
//! The master sees only what passes through it (the jobs it hands out);
//! what every node ran, looked up and sent is known only there. A node's
//! driver hands the core its figures now and then ([`Node::share_figures`]);
//! the core sends them to the master of the moment, whose driver gets
//! them as [`Action::PeerFigures`]. Figures are news, not state: one lost
//! (the master changed, a link went down) is replaced by the next.

use serde::{Deserialize, Serialize};

use super::{Action, Node, NodeId};
use crate::msg::Msg;

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

impl Node {
    /// This node's figures, for the master (dropped on the master itself,
    /// before a welcome and after the end).
    pub fn share_figures(&mut self, figures: NodeFigures) {
        if self.stopped || !self.joined || self.is_master() {
            return;
        }
        self.actions.push_back(Action::Send { to: self.master, msg: Msg::Figures(figures) });
    }

    /// Figures from `from`: for the driver, if this node is the master.
    pub(super) fn figures_from(&mut self, from: NodeId, figures: NodeFigures) {
        if self.is_master() {
            self.actions.push_back(Action::PeerFigures { from, figures });
        }
    }
}
