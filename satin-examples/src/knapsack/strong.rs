//! The depth-first knapsack search for Pisinger's hard families (all but
//! circle instances; [`super::levels`] solves those too), and the core
//! and reduction both searches start from: items in efficiency order, Martello and Toth's bound U2 (the better of the
//! break item out and the break item in, each relaxed by its neighbour's
//! efficiency), a first packing from greedy or a core window decided by
//! dynamic programming, reduction at the root (items whose opposite
//! choice cannot beat the first packing are fixed), and dominance: a
//! branch that reaches an item with no more room and no more value than a
//! branch already explored there stops. Dominance is what the hard
//! families need — their bounds barely separate packings, yet far fewer
//! distinct (item, room) states than paths lie under the bound. Depth
//! first, a state reached again with more value is explored again: on
//! circle instances tens of times each.
//!
//! The explored pairs are the process's, kept per run in bands of items
//! each behind its own lock (workers at different depths rarely meet); a
//! pair seen only by another process is explored twice, never lost. A
//! pair is recorded by the branch that explores it, so cutting another
//! branch at it loses nothing: if that branch's node dies, the recovery
//! re-runs it, and what it finds reaches the shared incumbent.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use satin::divide_and_conquer;
use satin::shared::Incumbent;
use serde::{Deserialize, Serialize};

use super::Instance;

/// The items left after reduction, in efficiency order, with prefix sums
/// so a bound costs a binary search, not a scan.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Core {
    pub profit: Vec<f64>,
    pub weight: Vec<f64>,
    /// `prefix_profit[i]` = the profit of items `0..i` (one more entry
    /// than items); the same for weights.
    pub(super) prefix_profit: Vec<f64>,
    pub(super) prefix_weight: Vec<f64>,
    /// Whether every profit is whole (bounds round down).
    integral: bool,
}

impl Core {
    fn new(profit: Vec<f64>, weight: Vec<f64>, integral: bool) -> Core {
        let sums = |v: &[f64]| {
            std::iter::once(0.0).chain(v.iter().scan(0.0, |s, x| Some(*s + x).inspect(|t| *s = *t))).collect()
        };
        Core { prefix_profit: sums(&profit), prefix_weight: sums(&weight), profit, weight, integral }
    }

    pub(super) fn len(&self) -> usize {
        self.profit.len()
    }

    /// The first item from `next` on that does not fit when every item
    /// before it is packed into `room` (`len` if all fit).
    pub(super) fn break_item(&self, next: usize, room: f64) -> usize {
        let limit = self.prefix_weight[next] + room;
        // prefix_weight is non-decreasing: the last i with
        // prefix_weight[i] <= limit packs items next..i.
        let fits = self.prefix_weight.partition_point(|&w| w <= limit + 1e-9);
        (fits - 1).max(next).min(self.len())
    }

    /// Martello and Toth's U2 for items `next..` with `room` left and
    /// `value` packed.
    fn upper_bound(&self, next: usize, room: f64, value: f64) -> f64 {
        let b = self.break_item(next, room);
        let value = value + self.prefix_profit[b] - self.prefix_profit[next];
        let room = room - (self.prefix_weight[b] - self.prefix_weight[next]);
        if b == self.len() {
            return value;
        }
        // Without the break item: fill the room at the next one's rate.
        let without = match b + 1 < self.len() {
            true => value + room * self.profit[b + 1] / self.weight[b + 1],
            false => value,
        };
        // With it: make its excess room by taking out at the rate of the
        // item before it.
        let with = match b > next {
            true => value + self.profit[b] - (self.weight[b] - room) * self.profit[b - 1] / self.weight[b - 1],
            false => f64::NEG_INFINITY,
        };
        without.max(with)
    }

    /// Dantzig's bound for items `next..` with `room` left (the
    /// relaxation: items in order, the break item in part).
    fn dantzig(&self, next: usize, room: f64) -> f64 {
        let b = self.break_item(next, room);
        let value = self.prefix_profit[b] - self.prefix_profit[next];
        let left = room - (self.prefix_weight[b] - self.prefix_weight[next]);
        match b < self.len() {
            true => value + left * self.profit[b] / self.weight[b],
            false => value,
        }
    }

    /// Dantzig's bound of every item but `j`, with `room`.
    fn dantzig_without(&self, j: usize, room: f64) -> f64 {
        if self.break_item(0, room) < j {
            return self.dantzig(0, room); // the relaxation stops before j
        }
        self.prefix_profit[j] + self.dantzig(j + 1, room - self.prefix_weight[j])
    }

    /// Whether a bound leaves room for a packing better than `best`.
    pub(super) fn beats(&self, bound: f64, best: f64) -> bool {
        match self.integral {
            true => (bound + 1e-9).floor() > best,
            false => bound > best + 1e-9,
        }
    }

    /// The value of packing greedily, in order, every item from `next` on
    /// that still fits.
    fn greedy(&self, next: usize, mut room: f64, mut value: f64) -> f64 {
        for i in next..self.len() {
            if self.weight[i] <= room {
                room -= self.weight[i];
                value += self.profit[i];
            }
        }
        value
    }
}

/// An instance after reduction: the items still undecided, the room they
/// share and the value of the items fixed in.
#[derive(Debug, Clone)]
pub struct Reduced {
    pub core: Core,
    pub room: f64,
    pub fixed_value: f64,
    /// The first packing's value (greedy, or the window's exact packing).
    pub first: f64,
}

/// How many items around the break item the first packing decides by
/// dynamic programming.
const WINDOW: usize = 100;

/// The most table cells that dynamic programming may fill for it.
const WINDOW_CELLS: f64 = 5e7;

/// A packing better than greedy, as Pisinger's core algorithms start:
/// the items before a window of [`WINDOW`] items around the break item
/// packed, those after it left out, and the window decided exactly by
/// dynamic programming over the room left. `None` when weights are not
/// whole numbers or the table would be too large.
fn window_packing(all: &Core, capacity: f64) -> Option<f64> {
    let b = all.break_item(0, capacity);
    let (lo, hi) = (b.saturating_sub(WINDOW / 2), (b + WINDOW / 2).min(all.len()));
    let room = capacity - all.prefix_weight[lo];
    let whole = |x: f64| x.fract() == 0.0;
    if room < 0.0 || !whole(room) || !all.weight[lo..hi].iter().copied().all(whole) {
        return None;
    }
    if room * (hi - lo) as f64 > WINDOW_CELLS {
        return None;
    }
    let room = room as usize;
    let mut best = vec![0.0f64; room + 1];
    for i in lo..hi {
        let w = all.weight[i] as usize;
        for r in (w..=room).rev() {
            best[r] = best[r].max(best[r - w] + all.profit[i]);
        }
    }
    Some(all.prefix_profit[lo] + best[room])
}

/// Martello and Toth's reduction: fixes every item whose opposite choice
/// (out if the relaxation packs it, in if not), relaxed by Dantzig's
/// bound, cannot beat the first packing (the better of greedy and
/// the core window's packing); the rest form the core.
pub fn reduce(instance: &Instance) -> Reduced {
    let items = &instance.items;
    let all = Core::new(items.profit.clone(), items.weight.clone(), instance.integral);
    let capacity = instance.capacity;
    let first = all.greedy(0, capacity, 0.0).max(window_packing(&all, capacity).unwrap_or(0.0));
    let b = all.break_item(0, capacity);
    let (mut profit, mut weight) = (Vec::new(), Vec::new());
    let (mut room, mut fixed_value) = (capacity, 0.0);
    for j in 0..all.len() {
        let flipped = if j < b {
            all.dantzig_without(j, capacity)
        } else if items.weight[j] <= capacity {
            items.profit[j] + all.dantzig_without(j, capacity - items.weight[j])
        } else {
            f64::NEG_INFINITY
        };
        if all.beats(flipped, first) {
            profit.push(items.profit[j]);
            weight.push(items.weight[j]);
        } else if j < b {
            room -= items.weight[j];
            fixed_value += items.profit[j];
        }
    }
    Reduced { core: Core::new(profit, weight, instance.integral), room, fixed_value, first }
}

/// Martello and Toth's bound U2 for the whole instance, before any
/// branch: how far above the optimum the search starts.
pub fn root_bound(instance: &Instance) -> f64 {
    let items = &instance.items;
    let all = Core::new(items.profit.clone(), items.weight.clone(), instance.integral);
    all.upper_bound(0, instance.capacity, 0.0)
}

/// The branches explored in one run, for a band of items: for each
/// item, the (room, value) pairs no other explored pair beats in both —
/// ordered by room, so their values fall as room grows.
#[derive(Default)]
struct Fronts {
    run: u64,
    pairs: usize,
    by_item: HashMap<usize, BTreeMap<u64, f64>>,
}

/// The process's explored branches, in bands of items (item mod BANDS),
/// each behind its own lock: workers at different depths rarely meet.
const BANDS: usize = 64;

/// Beyond this many pairs a band forgets them all (forgetting only
/// costs repeated work).
const MAX_PAIRS: usize = 1 << 16;

static SEEN: [Mutex<Option<Fronts>>; BANDS] = [const { Mutex::new(None) }; BANDS];

/// Whether a branch at `next` with `room` left and `value` packed is
/// dominated by one explored in run `run` (as much room or more, as much
/// value or more); if not, records it and forgets the pairs it
/// dominates. Room is ≥ 0, whose f64 bits order as it does.
fn dominated(run: u64, next: usize, room: f64, value: f64) -> bool {
    let mut band = SEEN[next % BANDS].lock().unwrap_or_else(|e| e.into_inner());
    let fronts = band.get_or_insert_with(Fronts::default);
    if fronts.run != run || fronts.pairs >= MAX_PAIRS {
        *fronts = Fronts { run, ..Fronts::default() };
    }
    let key = room.max(0.0).to_bits();
    let front = fronts.by_item.entry(next).or_default();
    // The pair with the least room of those with as much room or more has
    // the most value among them.
    if front.range(key..).next().is_some_and(|(_, &v)| v >= value) {
        return true;
    }
    // Forget the pairs with less room and less value: just below `key`.
    let beaten: Vec<u64> = front.range(..=key).rev().take_while(|(_, &v)| v <= value).map(|(&k, _)| k).collect();
    let removed = beaten.len();
    for k in beaten {
        front.remove(&k);
    }
    front.insert(key, value);
    fronts.pairs = (fronts.pairs + 1).saturating_sub(removed);
    false
}

/// What a branch does after its checks: stop, or split on item `next`.
enum Step {
    Stop,
    Split,
}

/// The checks every branch makes: dominance, the bound against the best
/// value known, and the greedy packing offered as a new best.
fn check(core: &Core, run: u64, best: f64, next: usize, room: f64, value: f64) -> (Step, f64) {
    crate::expanded::one();
    if dominated(run, next, room, value) || next == core.len() {
        return (Step::Stop, value);
    }
    if !core.beats(core.upper_bound(next, room, value), best) {
        return (Step::Stop, value);
    }
    (Step::Split, core.greedy(next, room, value))
}

/// The best value reachable from core item `next` on with `room` left and
/// `value` packed (the core's value only; `run` names the run's states).
/// Every packing it completes is offered to `best` (f64 bits: values are
/// ≥ 0, whose bits order as they do).
#[divide_and_conquer]
pub fn search(core: &Core, best: &Incumbent, run: u64, next: usize, room: f64, value: f64) -> f64 {
    let (step, packed) = check(core, run, f64::from_bits(best.get()), next, room, value);
    best.offer(packed.to_bits());
    if let Step::Stop = step {
        return packed;
    }
    let (p, w) = (core.profit[next], core.weight[next]);
    if w > room {
        return search(core, best, run, next + 1, room, value);
    }
    // Spawned last, run first: packing the item is explored first.
    let without = search(core, best, run, next + 1, room, value);
    let with = search(core, best, run, next + 1, room - w, value + p);
    with.max(without)
}

/// [`search`] with the best value passed down as a parameter: a branch
/// prunes only with the bound its parent had.
#[divide_and_conquer]
pub fn search_local(core: &Core, run: u64, next: usize, room: f64, value: f64, incumbent: f64) -> f64 {
    let (step, packed) = check(core, run, incumbent, next, room, value);
    let incumbent = incumbent.max(packed);
    if let Step::Stop = step {
        return incumbent;
    }
    let (p, w) = (core.profit[next], core.weight[next]);
    if w > room {
        return search_local(core, run, next + 1, room, value, incumbent);
    }
    let without = search_local(core, run, next + 1, room, value, incumbent);
    let with = search_local(core, run, next + 1, room - w, value + p, incumbent);
    with.max(without)
}

/// The optimum of an instance, searched in parallel (inside a runtime)
/// with the incumbent shared by every job or passed down per branch.
pub fn solve_with(instance: &Instance, sharing: crate::Bound) -> f64 {
    match sharing {
        crate::Bound::Shared => solve(instance),
        crate::Bound::PerBranch => {
            let reduced = reduce(instance);
            let first = (reduced.first - reduced.fixed_value).max(0.0);
            let run = run_number(instance);
            let found = search_local(&reduced.core, run, 0, reduced.room, 0.0, first);
            (found + reduced.fixed_value).max(reduced.first)
        }
    }
}

/// The optimum of an instance, searched in parallel (inside a runtime)
/// with one incumbent for every job.
pub fn solve(instance: &Instance) -> f64 {
    let reduced = reduce(instance);
    let base = reduced.fixed_value;
    let name = format!("{} strong", super::incumbent_name(instance));
    let best = Incumbent::maximize(&name, (reduced.first - base).max(0.0).to_bits());
    let run = run_number(instance);
    let found = search(&reduced.core, &best, run, 0, reduced.room, 0.0);
    (found.max(f64::from_bits(best.get())) + base).max(reduced.first)
}

/// The same search sequentially.
pub fn solve_plain(instance: &Instance) -> f64 {
    fn go(core: &Core, run: u64, best: &mut f64, next: usize, room: f64, value: f64) {
        let (step, packed) = check(core, run, *best, next, room, value);
        *best = best.max(packed);
        if let Step::Stop = step {
            return;
        }
        let (p, w) = (core.profit[next], core.weight[next]);
        if w <= room {
            go(core, run, best, next + 1, room - w, value + p);
        }
        go(core, run, best, next + 1, room, value);
    }
    let reduced = reduce(instance);
    let mut best = (reduced.first - reduced.fixed_value).max(0.0);
    go(&reduced.core, run_number(instance), &mut best, 0, reduced.room, 0.0);
    (best + reduced.fixed_value).max(reduced.first)
}

/// A number no earlier search of this process used (one search's states
/// must not cut the next one's branches), the same on every node: the
/// instance's name and how many searches of it this process began.
fn run_number(instance: &Instance) -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static SEARCHES: AtomicU64 = AtomicU64::new(0);
    let k = SEARCHES.fetch_add(1, Ordering::Relaxed);
    let name = super::incumbent_name(instance);
    u64::from_le_bytes(blake3::hash(format!("{name} {k}").as_bytes()).as_bytes()[..8].try_into().expect("8 bytes"))
}
