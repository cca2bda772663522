//! Values shared by every job of a run: the best solution found so far in
//! a branch-and-bound search ([`Incumbent`], a lock-free number), and any
//! value whose updates are joins ([`Shared`] over a [`Lattice`]: a set
//! that only grows, the least or greatest value with what it belongs to).
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
//! been sent. [`Shared`] values behave the same way: updates are joins, so
//! they commute; each node sends what its jobs added (not the whole value)
//! and a joiner gets whole values. A read never waits for the network; a
//! job that must not run on a replica older than something it knows of
//! waits for it with [`Shared::guard`] (Satin's guards). Updates that do
//! not commute (an ordered log, a counter that is not a maximum) are not
//! offered: they would need a total order of broadcasts.

mod incumbent;
mod object;
mod sync;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

#[doc(hidden)]
pub use incumbent::{merge_from_peer, snapshot};
pub use incumbent::{Direction, Incumbent};
#[doc(hidden)]
pub use object::{encode_all, merge_encoded, take_unsent};
pub use object::{Greatest, Lattice, Least, Shared};
#[doc(hidden)]
pub use sync::SharedSync;

/// Bumped by every change a job of this process makes to a shared value:
/// what the network driver watches to send this node's updates.
static LOCAL_CHANGES: AtomicU64 = AtomicU64::new(0);
/// A network driver sends this process's updates (a local run has no one
/// to send them to, and keeps no copy of them).
static SYNCING: AtomicBool = AtomicBool::new(false);

fn changed_here() {
    LOCAL_CHANGES.fetch_add(1, Ordering::Release);
}

/// How many changes jobs of this process have made so far.
#[doc(hidden)]
pub fn local_changes() -> u64 {
    LOCAL_CHANGES.load(Ordering::Acquire)
}

fn syncing() -> bool {
    SYNCING.load(Ordering::Acquire)
}

/// From now on, updates made here are kept until the driver sends them.
#[doc(hidden)]
pub fn start_syncing() {
    SYNCING.store(true, Ordering::Release);
}
