//! [`Incumbent`]: the best value found so far, shared by every job.
// The replication half (sending, merging) serves the network driver: a
// build without the `net` feature has only the local half.
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::replicas::{Activity, Replicas};

/// Which way an incumbent improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Direction {
    /// Smaller is better (a tour length, a cost).
    Minimize,
    /// Larger is better (a profit).
    Maximize,
}

#[derive(Debug)]
pub(super) struct Inner {
    name: String,
    direction: Direction,
    value: AtomicU64,
    improvements: AtomicU64,
    /// The node's, told of each improvement made here.
    activity: Arc<Activity>,
}

/// The best value found so far in a search, shared by every job of a run:
/// any job may read it (to prune) and offer a better one. Pass it to the
/// recursive function as a parameter (`&Incumbent`); it travels as its
/// name, and a job that runs elsewhere reads that node's replica of the
/// same name. See the [module documentation](super) for the consistency it
/// gives.
///
/// ```
/// use satin::shared::Incumbent;
/// let best = Incumbent::minimize("shortest tour", u64::MAX);
/// assert!(best.offer(120));
/// assert!(!best.offer(130), "worse: ignored");
/// assert_eq!(best.get(), 120);
/// ```
#[derive(Debug, Clone)]
pub struct Incumbent(Arc<Inner>);

impl Replicas {
    /// Every incumbent here: (name, direction, value).
    pub(super) fn incumbent_values(&self) -> Vec<(String, Direction, u64)> {
        let mut all: Vec<_> = self
            .incumbents()
            .values()
            .map(|i| (i.name.clone(), i.direction, i.value.load(Ordering::Acquire)))
            .collect();
        all.sort_by(|a, b| a.0.cmp(&b.0));
        all
    }

    /// A value another node's jobs found: kept where better, without
    /// counting as this node's own (it is not sent on again).
    pub(super) fn merge_incumbent(&self, name: &str, direction: Direction, value: u64) {
        let inc = self.incumbent(name, direction);
        match direction {
            Direction::Minimize => inc.0.value.fetch_min(value, Ordering::AcqRel),
            Direction::Maximize => inc.0.value.fetch_max(value, Ordering::AcqRel),
        };
    }

    /// A new incumbent `name` here, replacing any of that name.
    fn new_incumbent(&self, name: &str, direction: Direction, initial: u64) -> Incumbent {
        let inner = self.make(name, direction, initial);
        self.incumbents().insert(name.to_string(), Arc::clone(&inner));
        Incumbent(inner)
    }

    /// The replica of `name` here, made (with nothing found yet) if there
    /// is none.
    fn incumbent(&self, name: &str, direction: Direction) -> Incumbent {
        let mut all = self.incumbents();
        if let Some(inner) = all.get(name).filter(|i| i.direction == direction) {
            return Incumbent(Arc::clone(inner));
        }
        let initial = match direction {
            Direction::Minimize => u64::MAX,
            Direction::Maximize => 0,
        };
        let inner = self.make(name, direction, initial);
        all.insert(name.to_string(), Arc::clone(&inner));
        Incumbent(inner)
    }

    fn make(&self, name: &str, direction: Direction, initial: u64) -> Arc<Inner> {
        Arc::new(Inner {
            name: name.to_string(),
            direction,
            value: AtomicU64::new(initial),
            improvements: AtomicU64::new(0),
            activity: Arc::clone(&self.activity),
        })
    }
}

impl Incumbent {
    /// A new incumbent `name` that improves downwards, starting at
    /// `initial` (`u64::MAX`: nothing found yet). It replaces this node's
    /// replica of that name ([`Replicas::current`]): each run starts
    /// afresh.
    pub fn minimize(name: &str, initial: u64) -> Incumbent {
        Incumbent::new(name, Direction::Minimize, initial)
    }

    /// A new incumbent `name` that improves upwards, from `initial`.
    pub fn maximize(name: &str, initial: u64) -> Incumbent {
        Incumbent::new(name, Direction::Maximize, initial)
    }

    fn new(name: &str, direction: Direction, initial: u64) -> Incumbent {
        Replicas::current().new_incumbent(name, direction, initial)
    }

    /// This node's replica of `name` (see [`Replicas::current`]), made
    /// (with nothing found yet) if there is none: how a job that arrives
    /// from another node finds it.
    pub fn named(name: &str, direction: Direction) -> Incumbent {
        Replicas::current().incumbent(name, direction)
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.0.name
    }

    /// Which way it improves.
    pub fn direction(&self) -> Direction {
        self.0.direction
    }

    /// The best value known here. Never blocks.
    pub fn get(&self) -> u64 {
        self.0.value.load(Ordering::Acquire)
    }

    /// Offers `value`: kept if better than the best known here. True if it
    /// was.
    pub fn offer(&self, value: u64) -> bool {
        // Most offers lose: a read keeps the line shared between cores,
        // where a read-modify-write would bounce it on every offer.
        if !self.is_better(value, self.get()) {
            return false;
        }
        let before = match self.0.direction {
            Direction::Minimize => self.0.value.fetch_min(value, Ordering::AcqRel),
            Direction::Maximize => self.0.value.fetch_max(value, Ordering::AcqRel),
        };
        let better = self.is_better(value, before);
        if better {
            self.0.improvements.fetch_add(1, Ordering::Relaxed);
            self.0.activity.changed();
        }
        better
    }

    /// Is `a` strictly better than `b`?
    pub fn is_better(&self, a: u64, b: u64) -> bool {
        match self.0.direction {
            Direction::Minimize => a < b,
            Direction::Maximize => a > b,
        }
    }

    /// How many offers improved it here.
    pub fn improvements(&self) -> u64 {
        self.0.improvements.load(Ordering::Relaxed)
    }
}

/// An incumbent travels as its name and direction: its value is the
/// replica's, wherever the job runs (and the job's key does not change as
/// the value does).
impl Serialize for Incumbent {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (&self.0.name, self.0.direction).serialize(s)
    }
}

impl<'de> Deserialize<'de> for Incumbent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Incumbent, D::Error> {
        let (name, direction) = <(String, Direction)>::deserialize(d)?;
        Ok(Incumbent::named(&name, direction))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offers_only_improve_and_commute() {
        let min = Incumbent::minimize("test min", u64::MAX);
        for v in [50, 70, 20, 20, 90] {
            min.offer(v);
        }
        assert_eq!((min.get(), min.improvements()), (20, 2));
        let max = Incumbent::maximize("test max", 0);
        for v in [5, 3, 9, 9] {
            max.offer(v);
        }
        assert_eq!((max.get(), max.improvements()), (9, 2));
    }

    #[test]
    fn it_travels_as_its_name_and_lands_on_the_local_replica() {
        let here = Incumbent::minimize("travels", 1000);
        here.offer(40);
        let bytes = postcard::to_allocvec(&here).unwrap();
        let there: Incumbent = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(there.get(), 40, "the same process: the same replica");
        there.offer(30);
        assert_eq!(here.get(), 30);
        assert_eq!(postcard::to_allocvec(&there).unwrap(), bytes, "its encoding does not follow its value");
    }

    #[test]
    fn a_peer_s_value_is_merged_but_not_counted_as_this_node_s() {
        let node = Replicas::new();
        let here = node.enter(|| Incumbent::maximize("merged", 5));
        node.merge_incumbent("merged", Direction::Maximize, 9);
        node.merge_incumbent("merged", Direction::Maximize, 7);
        assert_eq!(here.get(), 9);
        assert_eq!(here.improvements(), 0, "not counted as this node's own");
        assert_eq!(node.local_changes(), 0, "nothing to send on");
        assert_eq!(node.incumbent_values(), [("merged".to_string(), Direction::Maximize, 9)]);
    }

    #[test]
    fn offers_from_many_threads_keep_the_best() {
        let best = Incumbent::minimize("threads", u64::MAX);
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let best = best.clone();
                s.spawn(move || {
                    for v in (0..1000u64).rev() {
                        best.offer(v * 4 + t + 7);
                    }
                });
            }
        });
        assert_eq!(best.get(), 7);
    }
}
