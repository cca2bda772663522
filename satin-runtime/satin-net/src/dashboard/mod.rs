//! The dashboard (`--dashboard ADDR`): a read-only page in the browser, a
//! JSON endpoint and Prometheus metrics, all served the same way
//! (`server.rs`: one thread, one router, over a [`View`]). A run on this
//! machine's cores alone serves its own board (`local.rs`); a node with
//! `--dashboard` — the first one too — and a supervisor (`--local-nodes`)
//! serve the view the master of the moment feeds them (`relay.rs`: the
//! master's own node from its board, the others by `Msg::Board`, the
//! supervisor from the master's log), so the page follows the run across
//! a change of master and outlives any node.
//!
//! - `/`: the page (`page.html`, one static file): the nodes, progress
//!   and the estimate, the task stream (`stream.rs`), each node's CPU and
//!   memory over time, the estimate and jobs per second over time, the
//!   run's events.
//! - `/api/status`: JSON — `elapsed_s`, `started_unix_ms`, `progress` (0
//!   to 1), `eta_s` (`null` when unknown), `done`, `nodes` (`name`,
//!   `state`, …, `usage`: `[Unix ms, CPU cores busy, MB resident]` over
//!   time), `events`, `jobs_per_s`, `progress_over_time` (`[Unix ms,
//!   progress, eta_s]`), `task_stream`, `trace`.
//! - `/metrics`: the Prometheus text format.

pub(crate) mod board;
mod history;
pub(crate) mod local;
mod metrics;
pub(crate) mod process;
pub(crate) mod relay;
pub(crate) mod report;
mod server;
pub(crate) mod stream;

use std::sync::{Arc, Mutex};

pub(crate) use board::Board;
pub(crate) use server::{serve, Served, View, PAGE};

/// The board as the driver and the server share it.
pub(crate) type Shared = Arc<Mutex<Board>>;

fn lock(board: &Shared) -> std::sync::MutexGuard<'_, Board> {
    board.lock().unwrap_or_else(|e| e.into_inner())
}

/// A board, served as it is now.
impl View for Shared {
    fn status(&self) -> serde_json::Value {
        serde_json::to_value(lock(self).status()).unwrap_or_default()
    }

    fn metrics(&self) -> String {
        metrics::render(&lock(self))
    }
}
