//! The knapsack search with one incumbent for every job, and the same
//! search sequentially.

use satin::divide_and_conquer;
use satin::shared::Incumbent;

use super::{greedy, incumbent_name, upper_bound, Instance, Items};

/// The best value reachable from item `next` on, with `room` left and
/// `value` packed. Every packing it completes is offered to `best`, which
/// prunes every job at once. Profits are ≥ 0, and non-negative floats
/// order as their bit patterns do, so the incumbent holds `f64` bits.
#[divide_and_conquer]
pub fn search(items: &Items, best: &Incumbent, next: usize, room: f64, value: f64) -> f64 {
    crate::expanded::one();
    let packed = greedy(items, next, room, value);
    best.offer(packed.to_bits());
    if next == items.profit.len() || upper_bound(items, next, room, value) <= f64::from_bits(best.get()) {
        return packed;
    }
    let (p, w) = (items.profit[next], items.weight[next]);
    if w > room {
        return search(items, best, next + 1, room, value);
    }
    // The last call spawned is the first its worker runs (a thief takes
    // the first): written in this order, packing the item is explored
    // first, as the sequential search does — on strongly correlated
    // instances the other order expands many times the nodes.
    let without = search(items, best, next + 1, room, value);
    let with = search(items, best, next + 1, room - w, value + p);
    with.max(without)
}

/// The optimum, searched in parallel (inside a runtime) with a shared
/// incumbent.
pub fn solve(instance: &Instance) -> f64 {
    let best = Incumbent::maximize(&incumbent_name(instance), 0f64.to_bits());
    let found = search(&instance.items, &best, 0, instance.capacity, 0.0);
    found.max(f64::from_bits(best.get()))
}

/// The same search, sequentially, the incumbent in a local variable.
pub fn solve_plain(instance: &Instance) -> f64 {
    fn go(items: &Items, best: &mut f64, next: usize, room: f64, value: f64) {
        crate::expanded::one();
        *best = best.max(greedy(items, next, room, value));
        if next == items.profit.len() || upper_bound(items, next, room, value) <= *best {
            return;
        }
        let (p, w) = (items.profit[next], items.weight[next]);
        if w <= room {
            go(items, best, next + 1, room - w, value + p);
        }
        go(items, best, next + 1, room, value);
    }
    let mut best = 0.0;
    go(&instance.items, &mut best, 0, instance.capacity, 0.0);
    best
}
