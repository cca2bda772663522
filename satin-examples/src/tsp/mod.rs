//! Exact travelling salesman by branch and bound, with the best tour found
//! so far shared by every job ([`satin::shared::Incumbent`]): a tour one
//! branch finds prunes every other branch at once, on any worker.
//!
//! Two lower bounds: the Held–Karp bound ([`held_karp`], the default) —
//! minimum 1-trees under Lagrangian multipliers found by subgradient
//! ascent, branching on edges — and the seeds' simple bound ([`simple`]:
//! a tour grown city by city, each city left by its cheapest edge). Each
//! search also runs with the incumbent passed down as a parameter (a
//! branch learns only of the bound its parent had) and sequentially; all
//! count the nodes they expand ([`crate::expanded`]). The first incumbent
//! is a nearest-neighbour tour improved by 2-opt and Or-opt ([`tour`]).

pub mod held_karp;
pub mod one_tree;
mod parse;
pub mod simple;
pub mod tour;

use satin::shared::Incumbent;
use serde::{Deserialize, Serialize};

pub use crate::Bound;
pub use parse::parse;

/// The most cities an instance may have (the Held–Karp search keeps an
/// n × n matrix per node it expands).
pub const MAX_CITIES: usize = 1000;

/// Symmetric distances between `n` cities (at most [`MAX_CITIES`]).
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

/// Which lower bound a search prunes with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LowerBound {
    /// Held–Karp: 1-trees under subgradient-optimised multipliers.
    #[default]
    HeldKarp,
    /// The seeds' bound on a tour grown city by city (at most 64 cities).
    Simple,
}

impl std::str::FromStr for LowerBound {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "held-karp" => Ok(LowerBound::HeldKarp),
            "simple" => Ok(LowerBound::Simple),
            other => Err(format!("no bound `{other}` (held-karp or simple)")),
        }
    }
}

/// Whether `bound` can search `m` (the simple bound's visited set is a
/// 64-bit mask).
pub fn check(m: &Matrix, bound: LowerBound) -> Result<(), String> {
    if bound == LowerBound::Simple && m.n > simple::MAX_CITIES {
        return Err(format!("--bound simple takes at most {} cities, this instance has {}", simple::MAX_CITIES, m.n));
    }
    Ok(())
}

/// The optimal tour length by the Held–Karp search, in parallel (inside a
/// runtime) with the incumbent shared or per branch.
pub fn solve(m: &Matrix, sharing: Bound) -> u64 {
    held_karp::solve(m, sharing)
}

/// The optimal tour length by the Held–Karp search, sequentially.
pub fn solve_plain(m: &Matrix) -> u64 {
    held_karp::solve_plain(m)
}

/// The optimal tour length with the given bound, in parallel or not.
pub fn solve_with(m: &Matrix, bound: LowerBound, sharing: Bound, sequential: bool) -> u64 {
    match (bound, sequential) {
        (LowerBound::HeldKarp, false) => held_karp::solve(m, sharing),
        (LowerBound::HeldKarp, true) => held_karp::solve_plain(m),
        (LowerBound::Simple, false) => simple::solve(m, sharing),
        (LowerBound::Simple, true) => simple::solve_plain(m),
    }
}

pub(crate) fn incumbent_name(m: &Matrix) -> String {
    format!("tsp {:x}", fingerprint(m))
}

/// The shortest tour this process knows for `m` (its replica of the shared
/// incumbent; `u64::MAX` if it has none): on every node of a run, the
/// optimum once the run is over.
pub fn known_best(m: &Matrix) -> u64 {
    Incumbent::named(&incumbent_name(m), satin::shared::Direction::Minimize).get()
}

fn fingerprint(m: &Matrix) -> u64 {
    let bytes: Vec<u8> = m.d.iter().flat_map(|x| x.to_le_bytes()).collect();
    u64::from_le_bytes(blake3::hash(&bytes).as_bytes()[..8].try_into().expect("8 bytes"))
}
