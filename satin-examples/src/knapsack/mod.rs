//! 0/1 knapsack by branch and bound, items in efficiency order, with the
//! best value found so far shared by every job or passed down as a
//! parameter (a branch learns only of its parent's bound), beside the
//! plain sequential search in the same order; all count the nodes they
//! expand ([`crate::expanded`]).
//!
//! Three searches: [`levels`] (the default: Martello and Toth's reduction
//! at the root, then every branch decided one item at a time from the
//! break item outwards as one front of (room, value) pairs, bounded as
//! Pisinger's minknap bounds — it solves every one of Pisinger's hard
//! families of 1,000 items in under a tenth of a second, and of 10,000 in
//! seconds), [`strong`] (Martello and Toth's bound U2 depth first, with
//! dominance between branches that reach an item with as much room and
//! value; `knapsack --bound martello-toth`) and the seeds' search with
//! Dantzig's bound and a greedy completion at every node
//! ([`shared::search`], [`best`]; `knapsack --bound dantzig`). [`pisinger`] generates
//! Pisinger's instance families, the hard ones among them.

pub mod levels;
pub mod pisinger;
pub mod shared;
pub mod strong;

/// Which search a run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Search {
    /// Reduction, then one item at a time for every branch ([`levels`]).
    #[default]
    Levels,
    /// Martello–Toth's U2, reduction and dominance, depth first ([`strong`]).
    MartelloToth,
    /// The seeds' search: Dantzig's bound, no reduction, no dominance.
    Dantzig,
}

impl std::str::FromStr for Search {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "martello-toth" => Ok(Search::MartelloToth),
            "dantzig" => Ok(Search::Dantzig),
            "levels" => Ok(Search::Levels),
            other => Err(format!("no bound `{other}` (levels, martello-toth or dantzig)")),
        }
    }
}

/// The optimum by the chosen search, in parallel (shared or per-branch
/// incumbent) or sequentially.
pub fn solve_by(instance: &Instance, search: Search, sharing: crate::Bound, sequential: bool) -> f64 {
    match (search, sequential) {
        (Search::MartelloToth, false) => strong::solve_with(instance, sharing),
        (Search::MartelloToth, true) => strong::solve_plain(instance),
        (Search::Dantzig, false) => solve_with(instance, sharing),
        (Search::Dantzig, true) => shared::solve_plain(instance),
        (Search::Levels, false) => levels::solve_with(instance, sharing),
        (Search::Levels, true) => levels::solve_plain(instance),
    }
}

use std::sync::Arc;

use satin::divide_and_conquer;
use serde::{Deserialize, Serialize};

/// Items sorted by profit per unit of weight, best first.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Items {
    pub profit: Vec<f64>,
    pub weight: Vec<f64>,
}

/// A parsed instance.
#[derive(Debug, Clone, PartialEq)]
pub struct Instance {
    pub items: Items,
    pub capacity: f64,
    /// Whether every profit is a whole number (the answer prints as one).
    pub integral: bool,
}

/// Parses the instance format of the bundled data: `n capacity`, then `n`
/// pairs `profit weight`. Anything after the pairs (the large-scale files'
/// solution vector) is ignored.
pub fn parse(text: &str) -> Result<Instance, String> {
    let mut tokens = text.split_whitespace();
    let mut number = |what: &str| -> Result<f64, String> {
        let t = tokens.next().ok_or_else(|| format!("unexpected end of input: expected {what}"))?;
        let v: f64 = t.parse().map_err(|_| format!("expected {what}, found `{t}`"))?;
        if v.is_finite() && v >= 0.0 {
            Ok(v)
        } else {
            Err(format!("{what} must be a finite number ≥ 0, found `{t}`"))
        }
    };
    let n = number("the item count")?;
    if n.fract() != 0.0 || n > 10_000.0 {
        return Err(format!("the item count must be a whole number up to 10000, found {n}"));
    }
    let capacity = number("the capacity")?;
    let mut pairs = Vec::with_capacity(n as usize);
    for i in 0..n as usize {
        let p = number(&format!("the profit of item {}", i + 1))?;
        let w = number(&format!("the weight of item {}", i + 1))?;
        pairs.push((p, w));
    }
    let integral = pairs.iter().all(|(p, _)| p.fract() == 0.0);
    // Highest density first; zero weights (free items) lead.
    pairs.sort_by(|a, b| (b.0 * a.1).total_cmp(&(a.0 * b.1)));
    let (profit, weight) = pairs.into_iter().unzip();
    Ok(Instance { items: Items { profit, weight }, capacity, integral })
}

/// Best total value reachable from item `next` on, with `room` capacity
/// left and `value` already packed, or `incumbent` if that is not beaten.
#[divide_and_conquer]
pub fn best(items: Arc<Items>, next: usize, room: f64, value: f64, incumbent: f64) -> f64 {
    crate::expanded::one();
    let incumbent = incumbent.max(greedy(&items, next, room, value));
    if next == items.profit.len() || upper_bound(&items, next, room, value) <= incumbent {
        return incumbent;
    }
    let (p, w) = (items.profit[next], items.weight[next]);
    if w > room {
        return best(items, next + 1, room, value, incumbent);
    }
    // Last spawned, first run here: packing the item is explored first.
    let without = best(Arc::clone(&items), next + 1, room, value, incumbent);
    let with = best(items, next + 1, room - w, value + p, incumbent);
    with.max(without)
}

/// The optimum of an instance, with the incumbent shared.
pub fn solve(instance: &Instance) -> f64 {
    solve_with(instance, crate::Bound::Shared)
}

/// The optimum of an instance, with the incumbent shared or per branch.
pub fn solve_with(instance: &Instance, bound: crate::Bound) -> f64 {
    match bound {
        crate::Bound::Shared => shared::solve(instance),
        crate::Bound::PerBranch => best(Arc::new(instance.items.clone()), 0, instance.capacity, 0.0, 0.0),
    }
}

/// Value of packing greedily by density from `next` on.
pub(crate) fn greedy(items: &Items, next: usize, mut room: f64, mut value: f64) -> f64 {
    for i in next..items.profit.len() {
        if items.weight[i] <= room {
            room -= items.weight[i];
            value += items.profit[i];
        }
    }
    value
}

/// Dantzig's bound: the fractional relaxation from `next` on.
pub(crate) fn upper_bound(items: &Items, next: usize, mut room: f64, mut value: f64) -> f64 {
    for i in next..items.profit.len() {
        if items.weight[i] <= room {
            room -= items.weight[i];
            value += items.profit[i];
        } else {
            return value + items.profit[i] * room / items.weight[i];
        }
    }
    value
}

/// Exact optimum by dynamic programming over integer weights, for tests.
pub fn dp_optimum(instance: &Instance) -> Option<f64> {
    let items = &instance.items;
    if items.weight.iter().any(|w| w.fract() != 0.0) || instance.capacity.fract() != 0.0 {
        return None;
    }
    let cap = instance.capacity as usize;
    let mut table = vec![0.0f64; cap + 1];
    for (p, w) in items.profit.iter().zip(&items.weight) {
        let w = *w as usize;
        for c in (w..=cap).rev() {
            table[c] = table[c].max(table[c - w] + p);
        }
    }
    Some(table[cap])
}

/// Prints a value as the instance's answer: whole, or to four decimals.
pub fn format_value(value: f64, integral: bool) -> String {
    if integral {
        format!("{}", value.round() as i64)
    } else {
        format!("{value:.4}")
    }
}

/// One name per instance, the same on every node.
pub(crate) fn incumbent_name(instance: &Instance) -> String {
    let items = &instance.items;
    let bits = items.profit.iter().chain(&items.weight).chain([&instance.capacity]);
    let bytes: Vec<u8> = bits.flat_map(|x| x.to_bits().to_le_bytes()).collect();
    format!("knapsack {}", &blake3::hash(&bytes).to_hex()[..16])
}
