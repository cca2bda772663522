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
//!
//! **Where the replicas live.** Each node's replicas are a [`Replicas`]
//! handle: its runtime's worker threads use it, and a value that arrives
//! by name in a job lands in it. A process usually runs one node and
//! needs nothing more; tests and embedders that run several nodes in one
//! process give each runtime its own ([`crate::Builder::shared`]).

mod incumbent;
mod object;
mod replicas;
mod sync;

use std::sync::{Mutex, MutexGuard};

pub use incumbent::{Direction, Incumbent};
pub use object::{Greatest, Lattice, Least, Shared};
pub use replicas::Replicas;
#[doc(hidden)]
pub use sync::SharedSync;

/// A lock that a panicking job does not poison for the others.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
