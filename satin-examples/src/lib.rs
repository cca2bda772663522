//! Example applications of `#[divide_and_conquer]`, one module each, shared by
//! the binaries in `src/bin`, their tests and the benchmarks.
//!
//! Every module holds the annotated function and, where the benchmarks need
//! one, a plain sequential version of the same algorithm.

pub mod as_written;
pub mod barnes_hut;
pub mod campaign;
pub mod cli;
pub mod dag;
pub mod expanded;
pub mod fib;
pub mod forms;
pub mod kdtree;
pub mod kernels;
pub mod knapsack;
pub mod mergesort;
pub mod montecarlo;
pub mod natural;
pub mod nqueens;
pub mod pipeline;
pub mod quadrature;
pub mod raytracer;
pub mod sat;
pub mod scenarios;
pub mod tsp;
pub mod uts;

/// Directory of the bundled inputs (`satin-examples/data`).
pub fn data_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data")
}

/// How a branch-and-bound example shares the best solution found so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// One incumbent for every job (`satin::shared::Incumbent`).
    Shared,
    /// Passed down as a parameter: a branch learns only of the bound its
    /// parent had.
    PerBranch,
}
