//! Branch and bound with the Held–Karp bound, branching on edges
//! (Volgenant and Jonker's scheme): each branch runs a short subgradient
//! ascent from its parent's multipliers; when its best 1-tree is a tour,
//! that tour is the branch's optimum; otherwise a city with more than two
//! tree edges splits it into branches that exclude one of them, or
//! include it and exclude another, or include both. Branching on edges
//! rather than on the next city keeps every branch a whole-graph problem
//! the 1-tree bounds tightly, and each split removes the defect the bound
//! stopped at.

use satin::divide_and_conquer;
use satin::shared::Incumbent;
use serde::{Deserialize, Serialize};

use super::one_tree::{ascend, Ascent, Edges, Fixed, Schedule};
use super::{incumbent_name, tour, Bound, Matrix};

/// A branch of the search: the edges fixed on the way to it and the
/// multipliers its parent's ascent ended with (where its own starts).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Branch {
    pub fixed: Fixed,
    pub pi: Vec<f64>,
}

/// What expanding a branch found.
enum Expanded {
    /// No tour below beats `upper` (or there is no tour below).
    Pruned,
    /// The branch's shortest tour.
    Tour(u64),
    /// The branches to search instead.
    Split(Vec<Branch>),
}

fn expand(m: &Matrix, branch: &Branch, upper: u64) -> Expanded {
    crate::expanded::one_at_once();
    if m.n <= 3 {
        return Expanded::Pruned; // one tour only: the first
    }
    let Some(edges) = Edges::new(m.n, &branch.fixed) else { return Expanded::Pruned };
    let Some(ascent) = ascend(m, &edges, branch.pi.clone(), upper, Schedule::branch(m.n)) else {
        return Expanded::Pruned;
    };
    if ascent.whole_bound() >= upper {
        return Expanded::Pruned;
    }
    if ascent.tree.is_tour() {
        return Expanded::Tour(ascent.tree.length(m));
    }
    Expanded::Split(split(m, &edges, branch, &ascent))
}

/// Volgenant and Jonker's split at the city with the most tree edges: of
/// its free tree edges, the two longest `e1`, `e2` give the branches
/// "without e1", "with e1, without e2" and "with both" (the last two one
/// branch, "with e1", when the city already has an included edge).
/// Branches whose included edges close a cycle short of a tour are left
/// out.
fn split(m: &Matrix, edges: &Edges, branch: &Branch, ascent: &Ascent) -> Vec<Branch> {
    let tree = &ascent.tree;
    let city = (0..m.n).max_by_key(|&c| (tree.degree[c], std::cmp::Reverse(c))).expect("cities");
    let at_city = tree.edges.iter().filter_map(|&(a, b)| match (a == city, b == city) {
        (true, _) => Some(b),
        (_, true) => Some(a),
        _ => None,
    });
    let has_included = at_city.clone().any(|o| edges.is_included(city, o));
    let mut free: Vec<usize> = at_city.filter(|&o| edges.is_free(city, o)).collect();
    free.sort_by_key(|&o| (std::cmp::Reverse(m.dist(city, o)), o));
    let edge = |o: usize| (city.min(o) as u16, city.max(o) as u16);
    let child = |include: &[usize], exclude: &[usize]| {
        let mut fixed = branch.fixed.clone();
        fixed.included.extend(include.iter().map(|&o| edge(o)));
        fixed.excluded.extend(exclude.iter().map(|&o| edge(o)));
        (!closes_short_cycle(m.n, &fixed.included)).then(|| Branch { fixed, pi: ascent.pi.clone() })
    };
    let e1 = free[0];
    let mut children = vec![child(&[], &[e1])];
    if has_included || free.len() < 2 {
        children.push(child(&[e1], &[]));
    } else {
        let e2 = free[1];
        children.push(child(&[e1], &[e2]));
        children.push(child(&[e1, e2], &[]));
    }
    children.into_iter().flatten().collect()
}

/// Whether `included` holds a cycle through fewer than `n` cities (no
/// tour contains it).
fn closes_short_cycle(n: usize, included: &[(u16, u16)]) -> bool {
    let mut parent: Vec<usize> = (0..n).collect();
    let mut size = vec![1usize; n];
    fn root(parent: &mut [usize], mut c: usize) -> usize {
        while parent[c] != c {
            parent[c] = parent[parent[c]];
            c = parent[c];
        }
        c
    }
    for &(a, b) in included {
        let (ra, rb) = (root(&mut parent, a as usize), root(&mut parent, b as usize));
        if ra == rb {
            return size[ra] < n;
        }
        parent[ra] = rb;
        size[rb] += size[ra];
    }
    false
}

/// The shortest tour below `branch`, offering every tour it finds to
/// `best`, whose value prunes every job at once; `u64::MAX` where pruned.
#[divide_and_conquer]
pub fn search(m: &Matrix, best: &Incumbent, branch: Branch) -> u64 {
    let children = match expand(m, &branch, best.get()) {
        Expanded::Pruned => return u64::MAX,
        Expanded::Tour(length) => {
            best.offer(length);
            return length;
        }
        Expanded::Split(children) => children,
    };
    children.into_iter().map(|c| search(m, best, c)).min().unwrap_or(u64::MAX)
}

/// [`search`] with the best tour passed down as a parameter: a branch
/// prunes only with the bound its parent had.
#[divide_and_conquer]
pub fn search_local(m: &Matrix, branch: Branch, incumbent: u64) -> u64 {
    let children = match expand(m, &branch, incumbent) {
        Expanded::Pruned => return incumbent,
        Expanded::Tour(length) => return length.min(incumbent),
        Expanded::Split(children) => children,
    };
    children.into_iter().map(|c| search_local(m, c, incumbent)).min().unwrap_or(incumbent)
}

/// The same search sequentially, the incumbent in a local variable.
pub fn search_plain(m: &Matrix, branch: Branch, best: &mut u64) {
    match expand(m, &branch, *best) {
        Expanded::Pruned => {}
        Expanded::Tour(length) => *best = (*best).min(length),
        Expanded::Split(children) => {
            for c in children {
                search_plain(m, c, best);
            }
        }
    }
}

/// Where every search starts: the first tour ([`tour::good_tour`]) and
/// the root's long ascent, whose bound is the root gap's.
#[derive(Debug, Clone)]
pub struct Root {
    pub tour: u64,
    pub ascent: Option<Ascent>,
}

impl Root {
    /// The first tour and the root's ascent towards it.
    pub fn new(m: &Matrix) -> Root {
        let (tour, _) = tour::good_tour(m);
        let ascent = (m.n > 3)
            .then(|| {
                let edges = Edges::new(m.n, &Fixed::default()).expect("nothing fixed");
                ascend(m, &edges, vec![0.0; m.n], tour, Schedule::root(m.n))
            })
            .flatten();
        Root { tour, ascent }
    }

    /// The root bound's gap to `optimum`, in per cent of it.
    pub fn gap(&self, optimum: u64) -> f64 {
        let bound = self.ascent.as_ref().map_or(optimum as f64, |a| a.bound);
        100.0 * (optimum as f64 - bound) / optimum as f64
    }

    /// The search's first branch: nothing fixed, from the root's
    /// multipliers. (When the root settled the instance — the first tour
    /// meets the bound, or the root's tree is a tour — the search still
    /// runs, and ends at this branch: every node of a distributed run
    /// takes part in a run, which starts with the call.)
    fn branch(&self, n: usize) -> Branch {
        let pi = self.ascent.as_ref().map_or_else(|| vec![0.0; n], |a| a.pi.clone());
        Branch { fixed: Fixed::default(), pi }
    }

    /// The root's own tour when its 1-tree is one (shorter than the first).
    fn tree_tour(&self, m: &Matrix) -> u64 {
        self.ascent.as_ref().filter(|a| a.tree.is_tour()).map_or(u64::MAX, |a| a.tree.length(m))
    }
}

/// The optimal tour length, searched in parallel (inside a runtime) with
/// the incumbent shared or per branch.
pub fn solve(m: &Matrix, sharing: Bound) -> u64 {
    solve_from(m, &Root::new(m), sharing)
}

/// [`solve`] from a root already computed (a program that prints the
/// root's figures computes it once).
pub fn solve_from(m: &Matrix, root: &Root, sharing: Bound) -> u64 {
    let first = root.tour.min(root.tree_tour(m));
    let branch = root.branch(m.n);
    match sharing {
        Bound::Shared => {
            // Every node's replica starts at the first tour, also when
            // the root settles the instance.
            let best = Incumbent::minimize(&incumbent_name(m), first);
            search(m, &best, branch).min(best.get())
        }
        Bound::PerBranch => search_local(m, branch, first),
    }
}

/// The optimal tour length, searched sequentially.
pub fn solve_plain(m: &Matrix) -> u64 {
    solve_plain_from(m, &Root::new(m))
}

/// [`solve_plain`] from a root already computed.
pub fn solve_plain_from(m: &Matrix, root: &Root) -> u64 {
    let mut best = root.tour.min(root.tree_tour(m));
    search_plain(m, root.branch(m.n), &mut best);
    best
}
