//! The Held–Karp lower bound: a minimum 1-tree (a spanning tree of cities
//! 1..n plus city 0's two cheapest edges) under edge costs
//! `d(i, j) + π(i) + π(j)`, less `2·Σπ`, is at most the shortest tour for
//! any multipliers π; subgradient ascent raises π where a city has more
//! than two tree edges and lowers it where it has one, until the tree is
//! nearly a tour. A branch's fixed edges constrain the tree: included
//! edges are in it, excluded ones never.

use serde::{Deserialize, Serialize};

use super::Matrix;

/// The edges a branch has fixed: every tour below it uses `included` and
/// none of `excluded`. Pairs are stored smaller city first.
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct Fixed {
    pub included: Vec<(u16, u16)>,
    pub excluded: Vec<(u16, u16)>,
}

const FREE: u8 = 1;
const INCLUDED: u8 = 0;
const EXCLUDED: u8 = 2;

/// Every edge's state for one branch (free, included or excluded), with
/// the exclusions the inclusions imply: a city with two included edges
/// has no other.
pub struct Edges {
    n: usize,
    state: Vec<u8>,
    included: usize,
}

impl Edges {
    /// The states of `fixed`'s edges; `None` if a city would have more
    /// than two included edges.
    pub fn new(n: usize, fixed: &Fixed) -> Option<Edges> {
        let mut state = vec![FREE; n * n];
        let mut degree = vec![0u8; n];
        for &(a, b) in &fixed.excluded {
            let (a, b) = (a as usize, b as usize);
            state[a * n + b] = EXCLUDED;
            state[b * n + a] = EXCLUDED;
        }
        for &(a, b) in &fixed.included {
            let (a, b) = (a as usize, b as usize);
            state[a * n + b] = INCLUDED;
            state[b * n + a] = INCLUDED;
            degree[a] += 1;
            degree[b] += 1;
        }
        if degree.iter().any(|&k| k > 2) {
            return None;
        }
        for c in (0..n).filter(|&c| degree[c] == 2) {
            for o in 0..n {
                if state[c * n + o] == FREE {
                    state[c * n + o] = EXCLUDED;
                    state[o * n + c] = EXCLUDED;
                }
            }
        }
        Some(Edges { n, state, included: fixed.included.len() })
    }

    fn get(&self, a: usize, b: usize) -> u8 {
        self.state[a * self.n + b]
    }

    /// Whether the edge may still go either way.
    pub fn is_free(&self, a: usize, b: usize) -> bool {
        self.get(a, b) == FREE
    }

    /// Whether every tour below must use the edge.
    pub fn is_included(&self, a: usize, b: usize) -> bool {
        self.get(a, b) == INCLUDED
    }
}

/// A minimum 1-tree: its edges, each city's degree, and its weight under
/// the multipliers (the lower bound they give).
#[derive(Clone, Debug)]
pub struct OneTree {
    pub edges: Vec<(usize, usize)>,
    pub degree: Vec<u32>,
    pub bound: f64,
}

impl OneTree {
    /// Whether the tree is a tour (every city of degree two).
    pub fn is_tour(&self) -> bool {
        self.degree.iter().all(|&k| k == 2)
    }

    /// Its length under the true distances.
    pub fn length(&self, m: &Matrix) -> u64 {
        self.edges.iter().map(|&(a, b)| m.dist(a, b)).sum()
    }
}

/// The minimum 1-tree under multipliers `pi` that uses every included edge
/// and no excluded one; `None` if there is none (the included edges close
/// a cycle, or the excluded ones cut a city off).
pub fn one_tree(m: &Matrix, edges: &Edges, pi: &[f64]) -> Option<OneTree> {
    let n = m.n;
    let cost = |a: usize, b: usize| m.d[a * n + b] as f64 + pi[a] + pi[b];
    // Prim over cities 1..n, keys ordered by (state, cost): included
    // edges before free ones, excluded ones only when nothing else joins
    // a city (and then there is no 1-tree).
    let mut in_tree = vec![false; n];
    let mut key = vec![(EXCLUDED + 1, f64::INFINITY); n];
    let mut parent = vec![usize::MAX; n];
    let mut tree = OneTree { edges: Vec::with_capacity(n), degree: vec![0; n], bound: 0.0 };
    let mut weight = 0.0;
    let mut included = 0;
    let mut at = 1;
    in_tree[1] = true;
    for _ in 2..n {
        for c in 2..n {
            if !in_tree[c] {
                let k = (edges.get(at, c), cost(at, c));
                if k.0 < key[c].0 || (k.0 == key[c].0 && k.1 < key[c].1) {
                    key[c] = k;
                    parent[c] = at;
                }
            }
        }
        let next = (2..n)
            .filter(|&c| !in_tree[c])
            .min_by(|&a, &b| key[a].0.cmp(&key[b].0).then(key[a].1.total_cmp(&key[b].1)))
            .expect("a city left");
        if key[next].0 == EXCLUDED {
            return None;
        }
        included += usize::from(key[next].0 == INCLUDED);
        in_tree[next] = true;
        weight += key[next].1;
        tree.edges.push((parent[next], next));
        at = next;
    }
    // City 0's two edges: included ones first, then the cheapest.
    let mut zero: Vec<usize> = (1..n).collect();
    zero.sort_by(|&a, &b| edges.get(0, a).cmp(&edges.get(0, b)).then(cost(0, a).total_cmp(&cost(0, b))));
    for &c in &zero[..2] {
        match edges.get(0, c) {
            EXCLUDED => return None,
            INCLUDED => included += 1,
            _ => {}
        }
        weight += cost(0, c);
        tree.edges.push((0, c));
    }
    if included < edges.included {
        return None; // an included edge left out: they close a cycle
    }
    for &(a, b) in &tree.edges {
        tree.degree[a] += 1;
        tree.degree[b] += 1;
    }
    tree.bound = weight - 2.0 * pi.iter().sum::<f64>();
    Some(tree)
}

/// How long an ascent goes on.
#[derive(Debug, Clone, Copy)]
pub struct Schedule {
    /// The most 1-trees it computes.
    pub iterations: usize,
    /// The first step's scale (Polyak's λ, at most 2).
    pub lambda: f64,
    /// Iterations without a better bound before λ is halved.
    pub patience: usize,
}

impl Schedule {
    /// At the root: long, from multipliers of zero.
    pub fn root(n: usize) -> Schedule {
        Schedule { iterations: 100 * n.max(10), lambda: 2.0, patience: (n / 2).max(10) }
    }

    /// Below the root: short, from the parent's multipliers.
    pub fn branch(n: usize) -> Schedule {
        Schedule { iterations: (n / 2).max(20), lambda: 0.5, patience: 5 }
    }
}

/// What an ascent ends with: the best bound found, the multipliers and
/// 1-tree that gave it.
#[derive(Clone, Debug)]
pub struct Ascent {
    pub bound: f64,
    pub pi: Vec<f64>,
    pub tree: OneTree,
}

impl Ascent {
    /// The bound as a whole tour length: distances are integers, so no
    /// tour below is shorter than the bound rounded up.
    pub fn whole_bound(&self) -> u64 {
        (self.bound - 1e-6).ceil().max(0.0) as u64
    }
}

/// Subgradient ascent from `pi` (Polyak steps towards `upper`, the best
/// tour known, in a direction that keeps 30 % of the last one): stops
/// early when the tree is a tour or the bound reaches `upper` (nothing
/// below beats it). `None` if the branch has no 1-tree.
pub fn ascend(m: &Matrix, edges: &Edges, pi: Vec<f64>, upper: u64, schedule: Schedule) -> Option<Ascent> {
    let n = m.n;
    let mut pi = pi;
    let mut best: Option<Ascent> = None;
    let mut lambda = schedule.lambda;
    let mut since_better = 0;
    let mut direction = vec![0.0f64; n];
    for _ in 0..schedule.iterations {
        let tree = one_tree(m, edges, &pi)?;
        let bound = tree.bound;
        // A tree that is a tour is that branch's shortest tour (its
        // length equals its bound): kept even when it only ties.
        let tour = tree.is_tour();
        if tour || best.as_ref().is_none_or(|b| bound > b.bound + 1e-9) {
            best = Some(Ascent { bound, pi: pi.clone(), tree: tree.clone() });
            since_better = 0;
        } else {
            since_better += 1;
            if since_better >= schedule.patience {
                // Back to the best multipliers, with shorter steps.
                lambda /= 2.0;
                since_better = 0;
                pi.clone_from(&best.as_ref().expect("set on the first tree").pi);
                direction.fill(0.0);
                if lambda < 1e-4 {
                    break;
                }
                continue;
            }
        }
        if tour || best.as_ref().expect("set above").whole_bound() >= upper {
            break;
        }
        let mut norm = 0.0;
        for (d, &k) in direction.iter_mut().zip(&tree.degree) {
            *d = 0.7 * (k as f64 - 2.0) + 0.3 * *d;
            norm += *d * *d;
        }
        if norm == 0.0 {
            break;
        }
        // Polyak's step needs the bound's distance to the optimum; the
        // best tour known stands in for it (a little above, when none is).
        let target = if upper == u64::MAX { bound.abs() * 1.05 + 1.0 } else { upper as f64 };
        let step = lambda * (target - bound).max(1e-3 * bound.abs().max(1.0)) / norm;
        for (p, d) in pi.iter_mut().zip(&direction) {
            *p += step * d;
        }
    }
    best
}
