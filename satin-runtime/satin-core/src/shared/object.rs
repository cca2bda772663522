//! [`Shared`]: a value replicated on every node whose updates are joins
//! (a [`Lattice`]): a set that only grows, a least or greatest value.
// The replication half (sending, merging) serves the network driver: a
// build without the `net` feature has only the local half.
use std::any::Any;
use std::collections::BTreeSet;
use std::marker::PhantomData;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::replicas::{Activity, Replicas};

/// A value whose updates commute: `join` is the least upper bound
/// (associative, commutative, idempotent), and `Default` the bottom, the
/// value of a replica that has heard of nothing yet. Replicas that have
/// joined the same updates, in any order and any number of times, are
/// equal: that is why no update needs ordering.
pub trait Lattice: Clone + Default + Serialize + DeserializeOwned + Send + Sync + 'static {
    /// Joins `other` into `self`; true if `self` changed.
    fn join(&mut self, other: &Self) -> bool;
}

/// Set union.
impl<T: Ord + Clone + Serialize + DeserializeOwned + Send + Sync + 'static> Lattice for BTreeSet<T> {
    fn join(&mut self, other: &Self) -> bool {
        let before = self.len();
        self.extend(other.iter().cloned());
        self.len() != before
    }
}

/// The least value offered (`None`: none yet), e.g. the shortest tour
/// *with* the tour: `Least((length, cities))`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Least<T>(pub Option<T>);

/// The greatest value offered (`None`: none yet).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Greatest<T>(pub Option<T>);

impl<T> Default for Least<T> {
    fn default() -> Self {
        Least(None)
    }
}

impl<T> Default for Greatest<T> {
    fn default() -> Self {
        Greatest(None)
    }
}

impl<T: Ord + Clone + Serialize + DeserializeOwned + Send + Sync + 'static> Lattice for Least<T> {
    fn join(&mut self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (_, None) => false,
            (Some(mine), Some(theirs)) if mine <= theirs => false,
            (_, Some(theirs)) => {
                self.0 = Some(theirs.clone());
                true
            }
        }
    }
}

impl<T: Ord + Clone + Serialize + DeserializeOwned + Send + Sync + 'static> Lattice for Greatest<T> {
    fn join(&mut self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (_, None) => false,
            (Some(mine), Some(theirs)) if mine >= theirs => false,
            (_, Some(theirs)) => {
                self.0 = Some(theirs.clone());
                true
            }
        }
    }
}

struct State<T> {
    value: T,
    /// What this node's jobs added since the network driver last sent it
    /// (kept only while a driver sends: a local run has no peers).
    unsent: Option<T>,
}

struct Replica<T> {
    state: Mutex<State<T>>,
    changed: Condvar,
    /// The node's, told of each change made here.
    activity: Arc<Activity>,
}

impl<T> Replica<T> {
    fn lock(&self) -> MutexGuard<'_, State<T>> {
        super::lock(&self.state)
    }
}

/// A replica as the driver sees it: bytes in and out, whatever `T` is.
pub(super) trait Wire: Send + Sync {
    fn take_unsent(&self) -> Option<Vec<u8>>;
    fn encode_all(&self) -> Vec<u8>;
    fn merge_encoded(&self, bytes: &[u8]) -> Result<(), postcard::Error>;
}

impl<T: Lattice> Wire for Replica<T> {
    fn take_unsent(&self) -> Option<Vec<u8>> {
        let unsent = self.lock().unsent.take()?;
        postcard::to_allocvec(&unsent).ok()
    }

    fn encode_all(&self) -> Vec<u8> {
        postcard::to_allocvec(&self.lock().value).unwrap_or_default()
    }

    fn merge_encoded(&self, bytes: &[u8]) -> Result<(), postcard::Error> {
        let theirs: T = postcard::from_bytes(bytes)?;
        if self.lock().value.join(&theirs) {
            self.changed.notify_all();
        }
        Ok(())
    }
}

pub(super) enum Entry {
    Live {
        wire: Arc<dyn Wire>,
        typed: Arc<dyn Any + Send + Sync>,
    },
    /// Values a peer sent before any job here used the name: joined when
    /// one does (their type is known only then).
    Pending(Vec<Vec<u8>>),
}

/// A value shared by every job of a run, on every node: reads are local,
/// updates are joins ([`Lattice`]) applied here at once and sent to every
/// other node. Pass it to the recursive function as a parameter
/// (`&Shared<T>`); it travels as its name. See the [module
/// documentation](super) for the consistency it gives.
///
/// ```
/// use std::collections::BTreeSet;
/// use satin::shared::Shared;
/// let seen: Shared<BTreeSet<u32>> = Shared::new("seen", BTreeSet::new());
/// assert!(seen.update(BTreeSet::from([3, 5])));
/// assert!(!seen.update(BTreeSet::from([5])), "nothing new");
/// assert_eq!(seen.read(|s| s.len()), 2);
/// ```
pub struct Shared<T: Lattice> {
    name: Arc<str>,
    replica: Arc<Replica<T>>,
    _type: PhantomData<T>,
}

impl<T: Lattice> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Shared { name: Arc::clone(&self.name), replica: Arc::clone(&self.replica), _type: PhantomData }
    }
}

impl<T: Lattice + std::fmt::Debug> std::fmt::Debug for Shared<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared").field("name", &self.name).field("value", &self.get()).finish()
    }
}

impl<T: Lattice> Shared<T> {
    /// A new shared value `name` starting at `initial`. It replaces this
    /// node's replica of that name ([`Replicas::current`]): each run
    /// starts afresh.
    pub fn new(name: &str, initial: T) -> Shared<T> {
        Replicas::current().new_object(name, initial)
    }

    /// This node's replica of `name` (see [`Replicas::current`]), made (at
    /// the bottom, joined with what peers already sent) if there is none:
    /// how a job that arrives from another node finds it.
    pub fn named(name: &str) -> Shared<T> {
        Replicas::current().object(name)
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Joins `delta` into the value here (and, in a run across machines,
    /// sends it to every other node). True if the value changed.
    pub fn update(&self, delta: T) -> bool {
        let mut state = self.replica.lock();
        if !state.value.join(&delta) {
            return false;
        }
        if self.replica.activity.syncing() {
            match &mut state.unsent {
                Some(unsent) => {
                    unsent.join(&delta);
                }
                None => state.unsent = Some(delta),
            }
        }
        drop(state);
        self.replica.activity.changed();
        self.replica.changed.notify_all();
        true
    }

    /// `f` of the value here. Never waits for the network; holds the
    /// replica's lock while `f` runs (keep it short).
    pub fn read<R>(&self, f: impl FnOnce(&T) -> R) -> R {
        f(&self.replica.lock().value)
    }

    /// A copy of the value here.
    pub fn get(&self) -> T {
        self.read(T::clone)
    }

    /// A guard (as Satin's): waits until `fresh` holds for the value here —
    /// an update this job depends on has arrived — or `timeout` passes.
    /// True if it holds. Use it where a job must not run on a replica
    /// older than something it knows of; most jobs never need one.
    pub fn guard(&self, fresh: impl Fn(&T) -> bool, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut state = self.replica.lock();
        loop {
            if fresh(&state.value) {
                return true;
            }
            let Some(left) = deadline.checked_duration_since(Instant::now()).filter(|d| !d.is_zero()) else {
                return false;
            };
            state = self.replica.changed.wait_timeout(state, left).unwrap_or_else(|e| e.into_inner()).0;
        }
    }
}

impl Replicas {
    fn new_object<T: Lattice>(&self, name: &str, initial: T) -> Shared<T> {
        // Across machines the initial value goes out too (the master's
        // bound before any job has run).
        let unsent = self.activity.syncing().then(|| initial.clone());
        let replica = self.replica(initial, unsent);
        self.activity.changed();
        let wire: Arc<dyn Wire> = replica.clone();
        self.objects().insert(name.to_string(), Entry::Live { wire, typed: replica.clone() });
        Shared { name: name.into(), replica, _type: PhantomData }
    }

    fn object<T: Lattice>(&self, name: &str) -> Shared<T> {
        let mut all = self.objects();
        if let Some(Entry::Live { typed, .. }) = all.get(name) {
            if let Ok(replica) = Arc::clone(typed).downcast::<Replica<T>>() {
                return Shared { name: name.into(), replica, _type: PhantomData };
            }
        }
        let mut value = T::default();
        if let Some(Entry::Pending(parts)) = all.get(name) {
            for bytes in parts {
                if let Ok(theirs) = postcard::from_bytes::<T>(bytes) {
                    value.join(&theirs);
                }
            }
        }
        let replica = self.replica(value, None);
        let wire: Arc<dyn Wire> = replica.clone();
        all.insert(name.to_string(), Entry::Live { wire, typed: replica.clone() });
        Shared { name: name.into(), replica, _type: PhantomData }
    }

    fn replica<T: Lattice>(&self, value: T, unsent: Option<T>) -> Arc<Replica<T>> {
        let state = Mutex::new(State { value, unsent });
        Arc::new(Replica { state, changed: Condvar::new(), activity: Arc::clone(&self.activity) })
    }

    /// Every shared object's update since the last call, encoded: (name,
    /// bytes).
    pub(super) fn take_unsent(&self) -> Vec<(String, Vec<u8>)> {
        let mut out: Vec<_> = self
            .objects()
            .iter()
            .filter_map(|(name, e)| match e {
                Entry::Live { wire, .. } => wire.take_unsent().map(|b| (name.clone(), b)),
                Entry::Pending(_) => None,
            })
            .collect();
        out.sort();
        out
    }

    /// Every shared object here, encoded, for a peer that connects (values
    /// only heard of, not yet used here, are passed on as they came).
    pub(super) fn encode_all(&self) -> Vec<(String, Vec<u8>)> {
        let mut out: Vec<_> = self
            .objects()
            .iter()
            .flat_map(|(name, e)| match e {
                Entry::Live { wire, .. } => vec![(name.clone(), wire.encode_all())],
                Entry::Pending(parts) => parts.iter().map(|b| (name.clone(), b.clone())).collect(),
            })
            .collect();
        out.sort();
        out
    }

    /// A peer's value (or update) of `name`, joined into the replica here,
    /// or kept until a job here uses the name. An error says why the bytes
    /// do not decode as the value of that name here.
    pub(super) fn merge_encoded(&self, name: &str, bytes: Vec<u8>) -> Result<(), String> {
        let mut all = self.objects();
        match all.get_mut(name) {
            Some(Entry::Live { wire, .. }) => {
                let wire = Arc::clone(wire);
                drop(all);
                return wire.merge_encoded(&bytes).map_err(|e| e.to_string());
            }
            Some(Entry::Pending(parts)) => parts.push(bytes),
            None => {
                all.insert(name.to_string(), Entry::Pending(vec![bytes]));
            }
        }
        Ok(())
    }
}

/// It travels as its name: a job on another node reads that node's
/// replica (and its key does not change as the value grows).
impl<T: Lattice> Serialize for Shared<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (*self.name).serialize(s)
    }
}

impl<'de, T: Lattice> Deserialize<'de> for Shared<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Shared<T>, D::Error> {
        let name = String::deserialize(d)?;
        Ok(Shared::named(&name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins_commute_and_repeat_harmlessly() {
        let mut a = BTreeSet::from([1, 2]);
        let mut b = BTreeSet::from([3]);
        assert!(a.join(&BTreeSet::from([3])) && b.join(&BTreeSet::from([1, 2])));
        assert_eq!(a, b);
        assert!(!a.join(&b), "idempotent");
        let tour = |len: u32, name: &str| Least(Some((len, name.to_string())));
        let mut least = Least::default();
        assert!(least.join(&tour(7, "x")));
        assert!(!least.join(&tour(9, "y")));
        assert!(least.join(&tour(7, "a")), "ties break by the rest");
        assert_eq!(least, tour(7, "a"));
        let mut most = Greatest(Some(4));
        assert!(!most.join(&Greatest(None)) && most.join(&Greatest(Some(5))));
    }

    #[test]
    fn a_peer_s_value_reaches_the_replica_before_or_after_a_job_uses_it() {
        let node = Replicas::new();
        node.merge_encoded("early", postcard::to_allocvec(&BTreeSet::from([1u8])).unwrap()).expect("decodes");
        let early: Shared<BTreeSet<u8>> = node.enter(|| Shared::named("early"));
        assert_eq!(early.get(), BTreeSet::from([1]), "sent before any job here used it");
        node.merge_encoded("early", postcard::to_allocvec(&BTreeSet::from([2u8])).unwrap()).expect("decodes");
        assert_eq!(early.get(), BTreeSet::from([1, 2]));
        let bytes = postcard::to_allocvec(&early).unwrap();
        let there: Shared<BTreeSet<u8>> = node.enter(|| postcard::from_bytes(&bytes).unwrap());
        assert_eq!(there.get(), early.get(), "travels as its name to the same replica");
    }

    #[test]
    fn a_guard_waits_for_the_update_it_needs_and_gives_up_at_its_timeout() {
        let node = Replicas::new();
        let best: Shared<Greatest<u32>> = node.enter(|| Shared::new("guarded", Greatest(None)));
        assert!(!best.guard(|v| v.0 >= Some(5), Duration::from_millis(20)), "nothing arrives");
        let waiter = {
            let best = best.clone();
            std::thread::spawn(move || best.guard(|v| v.0 >= Some(5), Duration::from_secs(60)))
        };
        node.merge_encoded("guarded", postcard::to_allocvec(&Greatest(Some(6u32))).unwrap()).expect("decodes");
        assert!(waiter.join().unwrap(), "woken by the peer's update");
    }
}
