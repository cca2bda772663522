//! Every test of the examples, as one test binary: the whole runtime is
//! linked once instead of once per file (most of the suite's build time
//! was linking). Each file is a module; `cargo test -p satin-examples
//! --test examples checkpoint::` runs one file's tests.

mod common;

mod apps;
mod barnes_hut;
mod binaries;
mod campaign;
mod checkpoint;
mod dashboard;
mod data;
mod distributed;
mod forms;
mod knapsack;
mod network;
mod results_doc;
mod shared_data;
mod simulate;
mod stragglers;
mod task_graphs;
mod tsp;
mod units;
mod uts;
