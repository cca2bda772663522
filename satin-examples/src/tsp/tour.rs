//! The first incumbent: nearest-neighbour tours from several cities, each
//! improved by 2-opt and Or-opt until neither move shortens it. A short
//! first tour prunes from the start and sets the subgradient's step size
//! ([`super::one_tree::ascend`]); on the bundled instances it is within a
//! few per cent of the optimum, often on it.

use super::Matrix;

/// The shortest tour found, as its length and its cities in order.
pub fn good_tour(m: &Matrix) -> (u64, Vec<usize>) {
    if m.n <= 3 {
        let tour: Vec<usize> = (0..m.n).collect();
        return (length(m, &tour), tour);
    }
    // Each start costs about 20 passes of n² moves: about 2·10⁷ in all.
    let starts = (1_000_000 / (m.n * m.n)).clamp(1, m.n);
    (0..starts)
        .map(|k| {
            let mut tour = nearest_neighbour(m, k * m.n / starts);
            improve(m, &mut tour);
            (length(m, &tour), tour)
        })
        .min_by_key(|(len, _)| *len)
        .expect("at least one start")
}

/// The length of a closed tour.
pub fn length(m: &Matrix, tour: &[usize]) -> u64 {
    (0..tour.len()).map(|i| m.dist(tour[i], tour[(i + 1) % tour.len()])).sum()
}

/// Always on to the nearest city not yet visited, from `start`.
pub fn nearest_neighbour(m: &Matrix, start: usize) -> Vec<usize> {
    let mut visited = vec![false; m.n];
    let mut tour = Vec::with_capacity(m.n);
    let mut last = start;
    visited[start] = true;
    tour.push(start);
    while tour.len() < m.n {
        let next = (0..m.n).filter(|&c| !visited[c]).min_by_key(|&c| (m.dist(last, c), c)).expect("a city left");
        visited[next] = true;
        tour.push(next);
        last = next;
    }
    tour
}

/// 2-opt and Or-opt moves, first improvement, until neither finds one.
fn improve(m: &Matrix, tour: &mut Vec<usize>) {
    while two_opt(m, tour) || or_opt(m, tour) {}
}

fn d(m: &Matrix, a: usize, b: usize) -> i64 {
    m.dist(a, b) as i64
}

/// One pass of 2-opt: reverses `tour[i+1..=j]` wherever that shortens the
/// tour. Whether any move was made.
fn two_opt(m: &Matrix, tour: &mut [usize]) -> bool {
    let n = tour.len();
    let mut improved = false;
    for i in 0..n - 2 {
        for j in i + 2..n - usize::from(i == 0) {
            let (a, b, c, e) = (tour[i], tour[i + 1], tour[j], tour[(j + 1) % n]);
            if d(m, a, c) + d(m, b, e) < d(m, a, b) + d(m, c, e) {
                tour[i + 1..=j].reverse();
                improved = true;
            }
        }
    }
    improved
}

/// One pass of Or-opt: moves a run of one to three cities, either way
/// round, to the place between two other neighbours where that shortens
/// the tour. Whether any move was made.
fn or_opt(m: &Matrix, tour: &mut Vec<usize>) -> bool {
    let n = tour.len();
    let mut improved = false;
    for len in 1..=3.min(n - 3) {
        let mut i = 0;
        while i + len <= n {
            // The run tour[i..i+len], between prev and next.
            let (first, last) = (tour[i], tour[i + len - 1]);
            let prev = tour[(i + n - 1) % n];
            let next = tour[(i + len) % n];
            let removed = d(m, prev, first) + d(m, last, next) - d(m, prev, next);
            let mut best: Option<(i64, usize, bool)> = None;
            for p in 0..n {
                let q = (p + 1) % n;
                // Edges (tour[p], tour[q]) outside the run and not the one
                // the run's removal creates.
                let inside = |k: usize| (k + n - i) % n < len;
                if inside(p) || inside(q) || tour[p] == prev {
                    continue;
                }
                let (a, b) = (tour[p], tour[q]);
                let forward = d(m, a, first) + d(m, last, b) - d(m, a, b);
                let backward = d(m, a, last) + d(m, first, b) - d(m, a, b);
                let (added, reversed) = if backward < forward { (backward, true) } else { (forward, false) };
                if added < removed && best.is_none_or(|(g, _, _)| removed - added > g) {
                    best = Some((removed - added, p, reversed));
                }
            }
            if let Some((_, p, reversed)) = best {
                let after = tour[p];
                let mut run: Vec<usize> = tour.drain(i..i + len).collect();
                if reversed {
                    run.reverse();
                }
                let at = tour.iter().position(|&c| c == after).expect("still in the tour") + 1;
                tour.splice(at..at, run);
                improved = true;
            } else {
                i += 1;
            }
        }
    }
    improved
}
