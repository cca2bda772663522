//! A fault campaign of real runs: workloads, node counts and faults drawn
//! at random from a seed (`draw.rs`), run as real processes on loopback
//! (`exec.rs`) — under a supervisor with `--chaos`, or by hand (one
//! `--listen`, the others `--join`, joiners killed from outside) — and
//! each classified: the right answer printed once, a wrong one, printed
//! twice, none, a hang, a crash. The `campaign` binary runs it.

pub mod draw;
pub mod exec;

pub use draw::{draw, Layout, Run, Workload};
pub use exec::{Bench, Outcome};
