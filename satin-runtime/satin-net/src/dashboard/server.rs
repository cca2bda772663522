//! One server for every dashboard: the page, `/api/status` and `/metrics`
//! of a [`View`], from a thread of its own (a small tokio runtime of its
//! own: the page answers however busy the node's event loop or workers
//! are). A run on this machine's cores serves its board; a node and a
//! supervisor serve the master's view, which the master of the moment
//! feeds (`relay.rs`) — its own node's included.

use std::net::SocketAddr;
use std::thread::JoinHandle;

use axum::extract::State;
use axum::http::header;
use axum::response::{Html, IntoResponse};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::Value;

/// What a dashboard shows.
pub(crate) trait View: Clone + Send + Sync + 'static {
    /// `/api/status`: the run as JSON (see `mod.rs`).
    fn status(&self) -> Value;
    /// `/metrics`: the Prometheus text format.
    fn metrics(&self) -> String;
}

/// A dashboard being served.
pub(crate) struct Served {
    /// Where it listens (a port 0 got one from the system).
    pub(crate) addr: SocketAddr,
    stop: tokio::sync::oneshot::Sender<()>,
    thread: JoinHandle<()>,
}

impl Served {
    /// Stops the server and waits for its thread.
    pub(crate) fn stop(self) {
        let _ = self.stop.send(());
        let _ = self.thread.join();
    }

    /// Lets it serve until the process ends.
    pub(crate) fn detach(self) -> SocketAddr {
        // (A stop sender dropped unsent never stops the server.)
        self.addr
    }
}

/// Serves `view` on `addr`; says where on standard error (the line a
/// supervisor and the tests read), or why not.
pub(crate) fn serve<V: View>(addr: SocketAddr, view: V) -> std::io::Result<Served> {
    let (bound, bound_rx) = std::sync::mpsc::channel::<std::io::Result<SocketAddr>>();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::Builder::new().name("satin-dashboard".into()).spawn(move || {
        let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
            Ok(rt) => rt,
            Err(e) => return drop(bound.send(Err(e))),
        };
        rt.block_on(async move {
            let listener = match tokio::net::TcpListener::bind(addr).await {
                Ok(l) => l,
                Err(e) => return drop(bound.send(Err(e))),
            };
            let _ = bound.send(listener.local_addr());
            let app = Router::new()
                .route("/", get(page))
                .route("/api/status", get(status::<V>))
                .route("/metrics", get(metrics::<V>))
                .with_state(view);
            let until_stopped = async {
                if stopped.await.is_err() {
                    std::future::pending::<()>().await;
                }
            };
            if let Err(e) = axum::serve(listener, app).with_graceful_shutdown(until_stopped).await {
                tracing::warn!("dashboard: {e}");
            }
        });
    })?;
    let addr = bound_rx.recv().unwrap_or_else(|_| Err(std::io::Error::other("the dashboard's thread ended")))?;
    eprintln!("dashboard: http://{addr}/");
    Ok(Served { addr, stop, thread })
}

/// The page (one static file: no CDN, it works offline).
pub(crate) const PAGE: &str = include_str!("page.html");

async fn page() -> Html<&'static str> {
    Html(PAGE)
}

async fn status<V: View>(State(view): State<V>) -> impl IntoResponse {
    Json(view.status())
}

async fn metrics<V: View>(State(view): State<V>) -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "application/openmetrics-text; version=1.0.0; charset=utf-8")], view.metrics())
}
