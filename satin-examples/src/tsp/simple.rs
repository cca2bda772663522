//! The seeds' simple bound: a tour grows city by city from city 0, and a
//! path is cut when its length plus the cheapest way to leave the last
//! city and every unvisited one reaches the best tour known. Kept for the
//! comparisons the papers make (`tsp --bound simple`); at most 64 cities
//! (the visited set is a bit mask).

use satin::divide_and_conquer;
use satin::shared::Incumbent;

use super::{incumbent_name, Bound, Matrix};

/// The most cities this search takes.
pub const MAX_CITIES: usize = 64;

/// A lower bound on completing a tour that has visited `visited` and stands
/// at `last`: leave `last` for an unvisited city, and leave every unvisited
/// city for another unvisited city or the start, each by its cheapest edge.
fn lower_bound(m: &Matrix, visited: u64, last: usize) -> u64 {
    let open = unvisited(m, visited);
    let leave = |from: usize| {
        open.clone().chain(std::iter::once(0)).filter(|&c| c != from).map(|c| m.dist(from, c)).min().unwrap_or(0)
    };
    let out_of_last = open.clone().map(|c| m.dist(last, c)).min().unwrap_or(0);
    out_of_last + open.clone().map(leave).sum::<u64>()
}

/// The cities not in `visited`, in increasing order, without allocating
/// (the bound is computed at every node).
fn unvisited(m: &Matrix, visited: u64) -> impl Iterator<Item = usize> + Clone {
    let all = if m.n >= 64 { u64::MAX } else { (1u64 << m.n) - 1 };
    let mut left = all & !visited;
    std::iter::from_fn(move || {
        (left != 0).then(|| {
            let c = left.trailing_zeros() as usize;
            left &= left - 1;
            c
        })
    })
}

/// The unvisited cities, nearest to `last` first.
fn children(m: &Matrix, visited: u64, last: usize) -> Vec<u8> {
    let mut open: Vec<u8> = (0..m.n as u8).filter(|&c| visited & (1 << c) == 0).collect();
    open.sort_by_key(|&c| (m.dist(last, c as usize), c));
    open
}

/// The shortest tour through the cities not in `visited`, from `last` back
/// to city 0, plus `len` (the path so far); `u64::MAX` where the shared
/// incumbent prunes it. Complete tours are offered to `best`.
#[divide_and_conquer]
pub fn search(m: &Matrix, best: &Incumbent, visited: u64, last: u8, len: u64) -> u64 {
    crate::expanded::one();
    let last = last as usize;
    if visited.count_ones() as usize == m.n {
        let tour = len + m.dist(last, 0);
        best.offer(tour);
        return tour;
    }
    if len + lower_bound(m, visited, last) >= best.get() {
        return u64::MAX;
    }
    children(m, visited, last)
        .into_iter()
        .map(|c| search(m, best, visited | (1 << c), c, len + m.dist(last, c as usize)))
        .min()
        .unwrap_or(u64::MAX)
}

/// [`search`] with the incumbent passed down as a parameter (as the
/// knapsack example does): every child starts with the bound its parent
/// had, so a tour found in one branch prunes only below it.
#[divide_and_conquer]
pub fn search_local(m: &Matrix, visited: u64, last: u8, len: u64, incumbent: u64) -> u64 {
    crate::expanded::one();
    let last = last as usize;
    if visited.count_ones() as usize == m.n {
        return (len + m.dist(last, 0)).min(incumbent);
    }
    if len + lower_bound(m, visited, last) >= incumbent {
        return incumbent;
    }
    children(m, visited, last)
        .into_iter()
        .map(|c| search_local(m, visited | (1 << c), c, len + m.dist(last, c as usize), incumbent))
        .min()
        .unwrap_or(incumbent)
}

/// The sequential search: depth first, nearest city first, the incumbent
/// improved as tours are found.
pub fn search_plain(m: &Matrix, visited: u64, last: usize, len: u64, best: &mut u64) {
    crate::expanded::one();
    if visited.count_ones() as usize == m.n {
        *best = (*best).min(len + m.dist(last, 0));
        return;
    }
    if len + lower_bound(m, visited, last) >= *best {
        return;
    }
    for c in children(m, visited, last) {
        search_plain(m, visited | (1 << c), c as usize, len + m.dist(last, c as usize), best);
    }
}

/// A tour by nearest neighbour from city 0: the first incumbent.
pub fn nearest_neighbour(m: &Matrix) -> u64 {
    let (mut visited, mut last, mut len) = (1u64, 0usize, 0u64);
    while visited.count_ones() as usize != m.n {
        let next = children(m, visited, last)[0] as usize;
        len += m.dist(last, next);
        visited |= 1 << next;
        last = next;
    }
    len + m.dist(last, 0)
}

/// The optimal tour length, searched in parallel (inside a runtime) with
/// the incumbent shared or per branch; starts from the nearest-neighbour
/// tour.
pub fn solve(m: &Matrix, bound: Bound) -> u64 {
    let start = nearest_neighbour(m);
    if m.n <= 1 {
        return 0;
    }
    let found = match bound {
        Bound::Shared => {
            let best = Incumbent::minimize(&incumbent_name(m), start);
            search(m, &best, 1, 0, 0).min(best.get())
        }
        Bound::PerBranch => search_local(m, 1, 0, 0, start),
    };
    found.min(start)
}

/// [`search`] with rayon (for the benchmark): the children go to
/// `par_iter`, the incumbent is the same atomic.
pub fn search_rayon(m: &Matrix, best: &Incumbent, visited: u64, last: u8, len: u64) -> u64 {
    use rayon::prelude::*;
    crate::expanded::one();
    let last = last as usize;
    if visited.count_ones() as usize == m.n {
        let tour = len + m.dist(last, 0);
        best.offer(tour);
        return tour;
    }
    if len + lower_bound(m, visited, last) >= best.get() {
        return u64::MAX;
    }
    children(m, visited, last)
        .into_par_iter()
        .map(|c| search_rayon(m, best, visited | (1 << c), c, len + m.dist(last, c as usize)))
        .min()
        .unwrap_or(u64::MAX)
}

/// The optimal tour length by [`search_rayon`] (inside a rayon pool).
pub fn solve_rayon(m: &Matrix) -> u64 {
    let start = nearest_neighbour(m);
    if m.n <= 1 {
        return 0;
    }
    let best = Incumbent::minimize(&format!("{} rayon", incumbent_name(m)), start);
    search_rayon(m, &best, 1, 0, 0).min(best.get()).min(start)
}

/// The optimal tour length, searched sequentially.
pub fn solve_plain(m: &Matrix) -> u64 {
    let mut best = nearest_neighbour(m);
    if m.n > 1 {
        search_plain(m, 1, 0, 0, &mut best);
    }
    best
}
