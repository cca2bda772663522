//! The knapsack search that decides one item at a time for every branch
//! at once, as Nemhauser and Ullmann's lists and Pisinger's minknap do:
//! the branches are kept as one front of (room, value) pairs, none beaten
//! in both by another, and each item turns the front into the next one.
//!
//! As in minknap, the items are decided from the break item outwards
//! (the *expanding core*): a branch starts with every item before the
//! break item packed and every other left out, and deciding item `j`
//! after the break means packing it or not, before the break keeping it
//! or taking it out. A branch may overfill the knapsack for a while
//! (negative room), to be repaired by taking out an earlier item. With
//! the items `s..=t` decided, a branch with room `r ≥ 0` can at best fill
//! it at item `t + 1`'s efficiency, and one with `r < 0` must free it at
//! item `s − 1`'s. Those bounds cost a multiplication, and the search
//! ends as soon as no branch is left, whatever items are still undecided:
//! no packing then beats the best one found.
//!
//! Depth first, a pair reached again with more value must be explored
//! again (on Pisinger's circle instances tens of times each); here every
//! pair is met once, with its best value. The parallelism is within an
//! item: [`expand`] halves the front until the pieces are small, and the
//! halves' fronts merge back. Every job of an item reads and raises the
//! shared incumbent, or, per branch, learns only the best value known
//! when the item began.

use satin::divide_and_conquer;
use satin::shared::Incumbent;
use serde::{Deserialize, Serialize};

use super::strong::{reduce, Core};
use super::Instance;

/// A branch: the room it has left (negative: overfilled) and the value
/// it has packed.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq)]
pub struct Pair {
    pub room: f64,
    pub value: f64,
}

/// A front after an item: its pairs (by room, values falling as it
/// rises) and the best packing found on the way.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Default)]
pub struct Front {
    pub pairs: Vec<Pair>,
    pub found: f64,
}

/// One item to decide, and which items are left after it.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq)]
pub struct Step {
    /// Before the break item: every branch has it packed, and the choice
    /// is to take it out (the item is `before`); after: to pack it (the
    /// item is `after - 1`).
    pub packed: bool,
    /// Once it is decided, the items `before..after` are: those before
    /// are packed in every branch, those after left out.
    pub before: usize,
    pub after: usize,
}

impl Step {
    /// The item this step decides.
    fn item(&self) -> usize {
        if self.packed {
            self.before
        } else {
            self.after - 1
        }
    }

    /// The most a branch with `room` and `value` can reach: room filled
    /// at the efficiency of the first item after the decided ones (no
    /// later item has more), overfilled room freed at that of the last
    /// item before them (no earlier one has less) — minknap's bounds: a
    /// multiplication each. Dantzig's bound over the items left costs a
    /// binary search; on the hard families of 10,000 items it cut 2–57 %
    /// of the pairs yet took as long or up to 4 times longer.
    fn bound(&self, core: &Core, room: f64, value: f64) -> f64 {
        let rate = |i: usize| core.profit[i] / core.weight[i];
        match room >= 0.0 {
            true if self.after < core.len() => value + room * rate(self.after),
            true => value,
            false if self.before > 0 => value + room * rate(self.before - 1),
            false => f64::NEG_INFINITY, // overfilled, nothing left to take out
        }
    }
}

/// Fronts of at most this many pairs are expanded by one job.
const PIECE: usize = 2048;

/// The front after deciding `step`'s item for the branches `pairs` (a
/// front: by room, values falling), keeping the pairs whose bound beats
/// the best packing known: `incumbent`, raised by `shared` if the run
/// shares one.
#[divide_and_conquer]
pub fn expand(core: &Core, shared: &Option<Incumbent>, incumbent: f64, step: Step, pairs: &[Pair]) -> Front {
    if pairs.len() > PIECE {
        let mid = pairs.len() / 2;
        let low = expand(core, shared, incumbent, step, &pairs[..mid]);
        let high = expand(core, shared, incumbent, step, &pairs[mid..]);
        return Front { pairs: merge(&low.pairs, &high.pairs), found: low.found.max(high.found) };
    }
    let best = shared.as_ref().map_or(incumbent, |s| f64::from_bits(s.get()).max(incumbent));
    let mut found = 0.0f64;
    let mut keep = |room: f64, value: f64, into: &mut Vec<Pair>| {
        if core.beats(step.bound(core, room, value), best) {
            if room >= 0.0 {
                found = found.max(value);
            }
            into.push(Pair { room, value });
        }
    };
    let (mut same, mut changed) = (Vec::with_capacity(pairs.len()), Vec::with_capacity(pairs.len()));
    let (p, w) = (core.profit[step.item()], core.weight[step.item()]);
    let (dw, dp) = if step.packed { (w, -p) } else { (-w, p) };
    for pair in pairs {
        crate::expanded::one();
        keep(pair.room, pair.value, &mut same);
        keep(pair.room + dw, pair.value + dp, &mut changed);
    }
    if let Some(s) = shared.as_ref() {
        s.offer(found.to_bits());
    }
    Front { pairs: merge(&same, &changed), found }
}

/// The front of two fronts' pairs, in one pass from the most room down:
/// a pair stays if it has more value than every pair with more room (or
/// the same room and more value).
pub fn merge(a: &[Pair], b: &[Pair]) -> Vec<Pair> {
    let mut front = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (a.len(), b.len());
    let mut most = f64::NEG_INFINITY;
    while i > 0 || j > 0 {
        let from_a = j == 0 || (i > 0 && (a[i - 1].room, a[i - 1].value) >= (b[j - 1].room, b[j - 1].value));
        let pair = if from_a {
            i -= 1;
            a[i]
        } else {
            j -= 1;
            b[j]
        };
        if pair.value > most {
            most = pair.value;
            front.push(pair);
        }
    }
    front.reverse();
    front
}

/// The order in which the core's items are decided: from the break item
/// `b` outwards, alternately after and before it.
fn steps(n: usize, b: usize) -> Vec<Step> {
    let (mut before, mut after) = (b, b); // decided: before..after
    let mut order = Vec::with_capacity(n);
    while before > 0 || after < n {
        if after < n && (before == 0 || after - b <= b - before) {
            after += 1;
            order.push(Step { packed: false, before, after });
        } else {
            before -= 1;
            order.push(Step { packed: true, before, after });
        }
    }
    order
}

/// The best core value for `room`, deciding the core's items one after
/// another from a single branch: one job, so that a run across nodes is
/// one run whose items' fronts are its children, not a run per item.
#[divide_and_conquer]
pub fn search(core: &Core, shared: &Option<Incumbent>, incumbent: f64, room: f64) -> f64 {
    // Every item before the break item packed.
    let b = core.break_item(0, room);
    let start = Pair { room: room - core.prefix_weight[b], value: core.prefix_profit[b] };
    let mut best = incumbent.max(start.value);
    let mut pairs = vec![start];
    for step in steps(core.len(), b) {
        if pairs.is_empty() {
            break;
        }
        let front = expand(core, shared, best, step, &pairs);
        best = best.max(front.found);
        pairs = front.pairs;
    }
    if let Some(s) = shared {
        best = best.max(f64::from_bits(s.get()));
    }
    pairs.iter().filter(|p| p.room >= 0.0).map(|p| p.value).fold(best, f64::max)
}

/// The optimum, searched in parallel (inside a runtime): the incumbent
/// shared by every job, or passed to each item's jobs.
pub fn solve_with(instance: &Instance, sharing: crate::Bound) -> f64 {
    let reduced = reduce(instance);
    let first = (reduced.first - reduced.fixed_value).max(0.0);
    let name = format!("{} levels", super::incumbent_name(instance));
    let shared = match sharing {
        crate::Bound::Shared => Some(Incumbent::maximize(&name, first.to_bits())),
        crate::Bound::PerBranch => None,
    };
    let found = search(&reduced.core, &shared, first, reduced.room);
    (found + reduced.fixed_value).max(reduced.first)
}

/// The optimum, searched in parallel with one incumbent for every job.
pub fn solve(instance: &Instance) -> f64 {
    solve_with(instance, crate::Bound::Shared)
}

/// The same search sequentially.
pub fn solve_plain(instance: &Instance) -> f64 {
    solve_with(instance, crate::Bound::PerBranch)
}
