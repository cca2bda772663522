//! The jobs between this node and others: those stolen from it (it waits
//! for their results) and those it runs for others (for live victims, and
//! orphans whose victims are gone).

use std::collections::BTreeMap;

use super::{Running, Stolen};
use crate::msg::NodeId;

/// See the module docs. Ordered maps: recovery walks them, and the
/// simulator must replay the same walk from the same seed.
#[derive(Debug, Default)]
pub(super) struct Ledger {
    /// Jobs stolen from this node, by stamp.
    pub(super) stolen: BTreeMap<u64, Stolen>,
    /// The stamp of the next steal from this node.
    pub(super) next_stamp: u64,
    /// Jobs this node runs for live victims, by (victim, stamp).
    pub(super) running_for: BTreeMap<(NodeId, u64), Running>,
    /// Jobs this node runs for victims that died: their results go into
    /// the table when they finish.
    pub(super) orphans: BTreeMap<(NodeId, u64), Running>,
}
