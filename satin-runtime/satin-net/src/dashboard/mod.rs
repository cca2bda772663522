//! The dashboard (`--dashboard ADDR`): a read-only page in the browser, a
//! JSON endpoint and Prometheus metrics, served by the run's first node
//! (the master unless it changed) with axum on the driver's runtime — or,
//! for a run on this machine's cores alone, from a thread of its own
//! (`local.rs`); under `--local-nodes` the supervisor serves what the
//! master of the moment reports (`relay.rs`), so the page outlives any
//! node.
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
pub(crate) mod stream;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::header;
use axum::response::{Html, IntoResponse};
use axum::routing::get;
use axum::{Json, Router};

pub(crate) use board::Board;

/// The board as the driver and the server share it.
pub(crate) type Shared = Arc<Mutex<Board>>;

fn lock(board: &Shared) -> std::sync::MutexGuard<'_, Board> {
    board.lock().unwrap_or_else(|e| e.into_inner())
}

/// Serves `board` on `addr` from the current tokio runtime; returns the
/// address it listens on (a port 0 gets one from the system).
pub(crate) async fn serve(addr: SocketAddr, board: Shared) -> std::io::Result<SocketAddr> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    let app = Router::new()
        .route("/", get(page))
        .route("/api/status", get(status))
        .route("/metrics", get(metrics_text))
        .with_state(board);
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::warn!("dashboard: {e}");
        }
    });
    Ok(local)
}

/// The page (one static file: no CDN, it works offline).
pub(crate) const PAGE: &str = include_str!("page.html");

async fn page() -> Html<&'static str> {
    Html(PAGE)
}

async fn status(State(board): State<Shared>) -> impl IntoResponse {
    let json = serde_json::to_value(lock(&board).status()).unwrap_or_default();
    Json(json)
}

async fn metrics_text(State(board): State<Shared>) -> impl IntoResponse {
    let text = metrics::render(&lock(&board));
    ([(header::CONTENT_TYPE, "application/openmetrics-text; version=1.0.0; charset=utf-8")], text)
}
