//! Values shared by every job of a run: the best solution found so far in
//! a branch-and-bound search ([`Incumbent`]).
//!
//! **Consistency.** An incumbent only ever improves (a minimum only goes
//! down, a maximum only up), so updates commute: applied in any order, any
//! number of times, every replica ends at the best value offered. A read
//! never blocks and returns a value at least as good as every offer made
//! before it on the same node, and one that some job really offered; it
//! may lag offers made elsewhere. That is what pruning needs: a stale bound
//! prunes less, never wrongly. On one machine every job sees one atomic
//! value (no messages). Across machines each node holds a replica of each
//! incumbent (by name); improvements made by a node's jobs go to every
//! other node (`Msg::Shared`), a joiner gets every value when it connects,
//! and a value survives the crash of the node that found it once it has
//! been sent.

mod incumbent;

pub(crate) use incumbent::{local_improvements, merge_from_peer, snapshot};
pub use incumbent::{Direction, Incumbent};
