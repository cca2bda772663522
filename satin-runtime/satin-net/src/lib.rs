//! Real distributed runs: the same binary on several machines (or several
//! processes on one) over QUIC. The only module that uses tokio.
//!
//! [`Launch`] is the command line every application shares; [`run`] runs
//! an application's top-level call as it says: on this machine's cores, as
//! one node of a distributed run (`--listen`, `--join`), or as the
//! supervisor of a one-machine cluster (`--local-nodes`).

#![warn(missing_docs)]

/// `eprintln!` for the supervisor's lines (its own, and its nodes' logs
/// it shows), which a closed log loses (`2>&1 | head`) rather than
/// panicking: the run goes on, and its answer still goes to the standard
/// output. (Defined before the modules, so that all of them see it.)
macro_rules! say {
    ($($line:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($line)*);
    }};
}

mod answer_file;
mod chaos;
mod chaos_net;
mod checkpointer;
mod config_of;
mod conn;
mod contract;
mod dashboard;
mod driver;
mod ending;
mod exit;
mod front;
mod k8s;
mod launch;
#[cfg(test)]
mod module_graph;
mod netfault;
mod node_io;
mod pool_check;
mod program;
mod rejoin;
mod report;
mod retry;
mod session;
mod shown_at_exit;
mod slurm;
mod status_line;
mod supervise;
mod throttle;
mod tls;
mod trace;
mod wire;
mod workflow;

pub use chaos::parse as parse_chaos;
pub use config_of::table_placement;
pub use contract::NODES as NODES_ENV;
pub use ending::{
    Ended, RunError, ALL_KILLED_STATUS, EXPELLED_STATUS, LOST_MAJORITY_STATUS, SUSPENDED_STATUS, USAGE_STATUS,
};
pub use exit::{init_pool_if_asked, run, run_workflow_with, send_answer_to_file};
pub use launch::{AlgArg, FtArg, Launch, Split, TableArg};
pub use program::try_run;
pub use report::write_local_stats;
pub use status_line::{run_here, status_line_wanted};
pub use tls::{init_pool, Pool, PoolError, POOL_FILE};
pub use workflow::{run_workflow, try_run_workflow, WorkflowOptions, WorkflowRun};

use config_of::{network_faults, node_spec, slurm_launch};

/// A node id for a joining process: unique with overwhelming probability,
/// never 0 (the first master's).
pub(crate) fn fresh_id() -> u64 {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let mut h = blake3::Hasher::new();
    h.update(&std::process::id().to_le_bytes());
    h.update(&now.as_nanos().to_le_bytes());
    let id = u64::from_le_bytes(h.finalize().as_bytes()[..8].try_into().expect("8 bytes")) >> 1;
    id.max(1)
}

/// `RUST_LOG` as a list of `target=level` (and a bare default level);
/// unset or unreadable, warnings only. (Targets, not `EnvFilter`: its span
/// and field filters need a regex engine, a minute of every build.)
fn init_logging() {
    use tracing_subscriber::filter::Targets;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let warn = || Targets::new().with_default(tracing::Level::WARN);
    let filter = std::env::var("RUST_LOG").ok().and_then(|v| v.parse::<Targets>().ok()).unwrap_or_else(warn);
    // Colours only for a terminal: a log file or a pipe gets plain text.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let fmt = tracing_subscriber::fmt::layer().with_writer(std::io::stderr).with_ansi(ansi);
    let _ = tracing_subscriber::registry().with(fmt).with(filter).try_init();
}
