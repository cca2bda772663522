//! [`Replicas`]: one node's replicas of the shared values, by name. A
//! handle, not a global: each [`crate::Runtime`] has one (the process's
//! own unless [`crate::Builder::shared`] gives another), its worker
//! threads find it when a job that names a value arrives, and so several
//! nodes can live in one process — each with its own replicas, as if on
//! machines of their own.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use super::incumbent::Inner;
use super::object::Entry;

/// One node's replicas of the shared values: the incumbents and the other
/// shared objects its jobs use, and what they changed.
///
/// ```
/// use satin::shared::{Incumbent, Replicas};
/// let (a, b) = (Replicas::new(), Replicas::new());
/// let best_a = a.enter(|| Incumbent::minimize("best", 100));
/// let best_b = b.enter(|| Incumbent::minimize("best", 100));
/// best_a.offer(7);
/// assert_eq!((best_a.get(), best_b.get()), (7, 100), "two nodes, two replicas");
/// ```
#[derive(Default)]
pub struct Replicas {
    pub(super) incumbents: Mutex<HashMap<String, Arc<Inner>>>,
    pub(super) objects: Mutex<HashMap<String, Entry>>,
    pub(super) activity: Arc<Activity>,
}

/// What every replica of a node reports to it: changes made by its jobs,
/// and whether a network driver wants them kept until sent.
#[derive(Debug, Default)]
pub(super) struct Activity {
    /// Bumped by every change a job of this node makes.
    changes: AtomicU64,
    /// A network driver sends this node's updates (a local run has no one
    /// to send them to, and keeps no copy of them).
    syncing: AtomicBool,
}

impl Activity {
    pub(super) fn changed(&self) {
        self.changes.fetch_add(1, Ordering::Release);
    }

    pub(super) fn changes(&self) -> u64 {
        self.changes.load(Ordering::Acquire)
    }

    pub(super) fn syncing(&self) -> bool {
        self.syncing.load(Ordering::Acquire)
    }
}

thread_local! {
    /// The replicas of the node this thread works for, if not the process's.
    static CURRENT: RefCell<Option<Arc<Replicas>>> = const { RefCell::new(None) };
}

impl std::fmt::Debug for Replicas {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let incumbents = super::lock(&self.incumbents).len();
        let objects = super::lock(&self.objects).len();
        f.debug_struct("Replicas").field("incumbents", &incumbents).field("objects", &objects).finish()
    }
}

impl Replicas {
    /// Empty replicas, for a node of their own.
    pub fn new() -> Arc<Replicas> {
        Arc::default()
    }

    /// The process's replicas: those of every runtime not given others,
    /// and of every thread outside one.
    pub fn process() -> &'static Arc<Replicas> {
        static PROCESS: OnceLock<Arc<Replicas>> = OnceLock::new();
        PROCESS.get_or_init(Replicas::new)
    }

    /// The replicas of the node this thread works for: its runtime's on a
    /// worker thread, those of an enclosing [`Replicas::enter`], or else
    /// the process's.
    pub fn current() -> Arc<Replicas> {
        CURRENT.with(|c| c.borrow().clone()).unwrap_or_else(|| Arc::clone(Replicas::process()))
    }

    /// Runs `f` with these as this thread's replicas: shared values made
    /// or decoded in `f` are these replicas' values.
    pub fn enter<R>(self: &Arc<Self>, f: impl FnOnce() -> R) -> R {
        struct Restore(Option<Arc<Replicas>>);
        impl Drop for Restore {
            fn drop(&mut self) {
                let before = self.0.take();
                CURRENT.with(|c| *c.borrow_mut() = before);
            }
        }
        let _restore = Restore(CURRENT.with(|c| c.borrow_mut().replace(Arc::clone(self))));
        f()
    }

    /// Makes these this thread's replicas for the rest of its life (a
    /// runtime's worker threads).
    pub(crate) fn adopt_for_thread(self: Arc<Self>) {
        CURRENT.with(|c| *c.borrow_mut() = Some(self));
    }

    /// How many changes jobs of this node have made so far.
    pub(super) fn local_changes(&self) -> u64 {
        self.activity.changes()
    }

    /// From now on, updates made here are kept until a driver sends them.
    pub(super) fn start_syncing(&self) {
        self.activity.syncing.store(true, Ordering::Release);
    }

    pub(super) fn incumbents(&self) -> MutexGuard<'_, HashMap<String, Arc<Inner>>> {
        super::lock(&self.incumbents)
    }

    pub(super) fn objects(&self) -> MutexGuard<'_, HashMap<String, Entry>> {
        super::lock(&self.objects)
    }
}
