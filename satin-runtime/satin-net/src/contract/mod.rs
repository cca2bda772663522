//! The contract between a node process and whoever started it — a
//! supervisor (`--local-nodes`, `supervise/`) for each node it starts, or
//! a removed node that starts itself over (`rejoin.rs`): what the starter
//! tells the node at its start (`env.rs`, its environment), what it
//! orders it while it runs (`orders.rs`, its standard input), and what
//! the node reports back (`reports.rs`, lines on its standard error).
//! Every name and marker of the three is here and nowhere else.

mod env;
mod orders;
mod reports;

pub use env::NODES;
pub(crate) use env::{ChildEnv, DEATH_NOTICES, NET_FAULTS, POOL, SAME_HOST, STATUS_AFTER_MS};
pub(crate) use orders::{read_orders, Order};
pub(crate) use reports::Report;
