//! Exact travelling salesman by branch and bound, with the best tour found
//! so far shared by every job ([`satin::shared::Incumbent`]): a tour one
//! branch finds prunes every other branch at once, on any worker. Beside
//! it, the same search with the incumbent passed down as a parameter (a
//! branch learns only of the bound its parent had), and the plain
//! sequential search; all count the nodes they expand.

use satin::divide_and_conquer;
use satin::shared::Incumbent;
use serde::{Deserialize, Serialize};

/// Symmetric distances between `n` cities (at most 64).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Matrix {
    pub n: usize,
    pub d: Vec<u32>,
}

impl Matrix {
    pub fn dist(&self, a: usize, b: usize) -> u64 {
        self.d[a * self.n + b] as u64
    }
}

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

pub use crate::Bound;

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

fn incumbent_name(m: &Matrix) -> String {
    format!("tsp {:x}", fingerprint(m))
}

/// The shortest tour this process knows for `m` (its replica of the shared
/// incumbent; `u64::MAX` if it has none): on every node of a run, the
/// optimum once the run is over.
pub fn known_best(m: &Matrix) -> u64 {
    Incumbent::named(&incumbent_name(m), satin::shared::Direction::Minimize).get()
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

fn fingerprint(m: &Matrix) -> u64 {
    let bytes: Vec<u8> = m.d.iter().flat_map(|x| x.to_le_bytes()).collect();
    u64::from_le_bytes(blake3::hash(&bytes).as_bytes()[..8].try_into().expect("8 bytes"))
}

/// Parses a TSPLIB file: `EDGE_WEIGHT_TYPE` `EUC_2D`, `CEIL_2D`, `ATT`,
/// `GEO` (with `NODE_COORD_SECTION`) or `EXPLICIT` (`FULL_MATRIX`,
/// `LOWER_DIAG_ROW`, `UPPER_ROW`, `UPPER_DIAG_ROW`, `LOWER_ROW`), distances
/// as TSPLIB defines them. At most 64 cities.
pub fn parse(text: &str) -> Result<Matrix, String> {
    let mut n = None;
    let mut kind = None;
    let mut format = None;
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l.trim()));
    let mut numbers: Vec<(usize, f64)> = Vec::new();
    let mut section = None;
    for (line, l) in lines.by_ref() {
        if l.is_empty() {
            continue;
        }
        if l == "EOF" {
            break;
        }
        if let Some((key, value)) = l.split_once(':') {
            let value = value.trim();
            match key.trim() {
                "DIMENSION" => {
                    n = Some(value.parse::<usize>().map_err(|_| format!("line {line}: DIMENSION `{value}`"))?)
                }
                "EDGE_WEIGHT_TYPE" => kind = Some(value.to_string()),
                "EDGE_WEIGHT_FORMAT" => format = Some(value.to_string()),
                _ => {}
            }
            section = None;
            continue;
        }
        match l {
            "NODE_COORD_SECTION" | "EDGE_WEIGHT_SECTION" | "DISPLAY_DATA_SECTION" => {
                section = Some(l.to_string());
                continue;
            }
            _ => {}
        }
        match section.as_deref() {
            Some("NODE_COORD_SECTION") | Some("EDGE_WEIGHT_SECTION") => {
                let sec = if section.as_deref() == Some("NODE_COORD_SECTION") { 0 } else { 1 };
                for t in l.split_whitespace() {
                    let v: f64 = t.parse().map_err(|_| format!("line {line}: `{t}` is not a number"))?;
                    if !v.is_finite() {
                        return Err(format!("line {line}: `{t}` is not a finite number"));
                    }
                    numbers.push((sec, v));
                }
            }
            Some(_) => {}
            None => return Err(format!("line {line}: unexpected `{l}`")),
        }
    }
    let n = n.ok_or("no DIMENSION")?;
    if !(1..=64).contains(&n) {
        return Err(format!("DIMENSION {n}: this solver takes 1 to 64 cities"));
    }
    let kind = kind.ok_or("no EDGE_WEIGHT_TYPE")?;
    let mut d = vec![0u32; n * n];
    let mut set = |a: usize, b: usize, v: f64| -> Result<(), String> {
        if v < 0.0 || v > u32::MAX as f64 {
            return Err(format!("distance {v} between {} and {} is out of range", a + 1, b + 1));
        }
        d[a * n + b] = v as u32;
        d[b * n + a] = v as u32;
        Ok(())
    };
    if kind == "EXPLICIT" {
        let w: Vec<f64> = numbers.iter().filter(|(s, _)| *s == 1).map(|(_, v)| *v).collect();
        let format = format.ok_or("EXPLICIT weights without EDGE_WEIGHT_FORMAT")?;
        let pairs: Vec<(usize, usize)> = match format.as_str() {
            "FULL_MATRIX" => (0..n).flat_map(|i| (0..n).map(move |j| (i, j))).collect(),
            "LOWER_DIAG_ROW" => (0..n).flat_map(|i| (0..=i).map(move |j| (i, j))).collect(),
            "LOWER_ROW" => (0..n).flat_map(|i| (0..i).map(move |j| (i, j))).collect(),
            "UPPER_ROW" => (0..n).flat_map(|i| (i + 1..n).map(move |j| (i, j))).collect(),
            "UPPER_DIAG_ROW" => (0..n).flat_map(|i| (i..n).map(move |j| (i, j))).collect(),
            other => return Err(format!("EDGE_WEIGHT_FORMAT {other} is not supported")),
        };
        if w.len() != pairs.len() {
            return Err(format!("{format} of {n} cities needs {} weights, found {}", pairs.len(), w.len()));
        }
        for ((i, j), v) in pairs.into_iter().zip(w) {
            if format == "FULL_MATRIX" && i > j {
                continue; // the upper triangle says it
            }
            set(i, j, v)?;
        }
        return Ok(Matrix { n, d });
    }
    let coords: Vec<f64> = numbers.iter().filter(|(s, _)| *s == 0).map(|(_, v)| *v).collect();
    if coords.len() != 3 * n {
        return Err(format!("NODE_COORD_SECTION: expected {n} lines `index x y`, found {} numbers", coords.len()));
    }
    let xy: Vec<(f64, f64)> = coords.chunks(3).map(|c| (c[1], c[2])).collect();
    for i in 0..n {
        for j in i + 1..n {
            let v = match kind.as_str() {
                "EUC_2D" => euclid(xy[i], xy[j]).round(),
                "CEIL_2D" => euclid(xy[i], xy[j]).ceil(),
                "ATT" => att(xy[i], xy[j]),
                "GEO" => geo(xy[i], xy[j]),
                other => return Err(format!("EDGE_WEIGHT_TYPE {other} is not supported")),
            };
            set(i, j, v)?;
        }
    }
    Ok(Matrix { n, d })
}

fn euclid(a: (f64, f64), b: (f64, f64)) -> f64 {
    ((a.0 - b.0).powi(2) + (a.1 - b.1).powi(2)).sqrt()
}

/// TSPLIB's pseudo-Euclidean distance.
fn att(a: (f64, f64), b: (f64, f64)) -> f64 {
    let r = (((a.0 - b.0).powi(2) + (a.1 - b.1).powi(2)) / 10.0).sqrt();
    let t = r.round();
    if t < r {
        t + 1.0
    } else {
        t
    }
}

/// TSPLIB's geographical distance (coordinates as DDD.MM).
fn geo(a: (f64, f64), b: (f64, f64)) -> f64 {
    // TSPLIB's own value, not `std::f64::consts::PI`: the distances (and
    // the published optima) depend on it.
    #[allow(clippy::approx_constant)]
    const PI: f64 = 3.141592;
    const RRR: f64 = 6378.388;
    let rad = |x: f64| {
        let deg = x.trunc();
        PI * (deg + 5.0 * (x - deg) / 3.0) / 180.0
    };
    let (lat_a, lon_a, lat_b, lon_b) = (rad(a.0), rad(a.1), rad(b.0), rad(b.1));
    let q1 = (lon_a - lon_b).cos();
    let q2 = (lat_a - lat_b).cos();
    let q3 = (lat_a + lat_b).cos();
    (RRR * (0.5 * ((1.0 + q1) * q2 - (1.0 - q1) * q3)).acos() + 1.0).trunc()
}
