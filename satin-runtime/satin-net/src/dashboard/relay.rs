//! The master's view: what a node with `--dashboard` and a supervisor
//! (`--local-nodes`) serve. Every node keeps a board; whichever is master
//! reports it once a second — into its own node's view, to the nodes that
//! serve one (`Msg::Board`, see `proto/node/figures.rs`), and on its log
//! for its supervisor (a line the supervisor takes off it, as it takes
//! the status line's reports). So a page shows the run as the master of
//! the moment knows it — with the time series of every master's reports
//! merged (`history.rs`) — follows it when the master changes, and under
//! a supervisor outlives any node, the first included.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::{json, Value};

use super::{metrics, Board};

/// A master's report of its board: its status and metrics, as JSON.
pub(crate) fn board_report(board: &Board) -> String {
    json!({ "status": board.status(), "metrics": metrics::render(board) }).to_string()
}

/// What the supervisor serves: the latest report, and from which node.
struct Latest {
    app: String,
    started: Instant,
    status: Option<Value>,
    history: super::history::History,
    metrics: String,
    /// Who reported the latest (a node's short name).
    from: Option<String>,
    /// Who serves it: `supervisor`, or a node's short name.
    served_by: String,
}

/// The supervisor's side, shared by its log readers and its server.
#[derive(Clone)]
pub(crate) struct Relay(Arc<Mutex<Latest>>);

impl Relay {
    /// A relay that keeps what the masters report (for `--report`),
    /// served by `served_by`.
    pub(crate) fn new(app: &str, served_by: &str) -> Relay {
        Relay(Arc::new(Mutex::new(Latest {
            app: app.to_string(),
            started: Instant::now(),
            status: None,
            history: Default::default(),
            metrics: String::new(),
            from: None,
            served_by: served_by.to_string(),
        })))
    }

    /// Serves the relay on `addr` until the process ends; says where.
    pub(crate) fn serve(self, addr: SocketAddr) -> std::io::Result<Relay> {
        super::serve(addr, self.clone())?.detach();
        Ok(self)
    }

    /// Takes a report (`board_report`) of node `from`, the master of the
    /// moment; one that does not parse is dropped (the next replaces it).
    pub(crate) fn take_report(&self, from: &str, text: &str) {
        if let Ok(mut report) = serde_json::from_str::<Value>(text) {
            let mut latest = self.0.lock().unwrap_or_else(|e| e.into_inner());
            latest.metrics = report["metrics"].as_str().unwrap_or_default().to_string();
            let mut status = report["status"].take();
            latest.history.absorb(&status);
            latest.history.fill(&mut status);
            latest.status = Some(status);
            latest.from = Some(from.to_string());
        }
    }

    /// `--report FILE`: the latest status as one page.
    pub(crate) fn write_report(&self, path: &std::path::Path) -> std::io::Result<()> {
        super::report::write(path, &self.status())?;
        eprintln!("report: {}", path.display());
        Ok(())
    }

    /// The latest status, with who reported it; an empty one before the
    /// first report.
    fn status(&self) -> Value {
        let latest = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let mut status = latest.status.clone().unwrap_or_else(|| {
            json!({
                "app": latest.app, "elapsed_s": latest.started.elapsed().as_secs_f64(), "progress": 0.0,
                "started_unix_ms": super::stream::unix_us(std::time::SystemTime::now()) / 1000
                    - latest.started.elapsed().as_millis() as u64,
                "eta_s": null, "done": false, "nodes": [], "events": [], "jobs_per_s": [], "trace": null,
                "progress_over_time": [], "task_stream": { "kinds": [], "bars": [], "running": {} },
            })
        });
        status["served_by"] = json!(latest.served_by);
        status["reported_by"] = json!(latest.from);
        status
    }
}

impl super::View for Relay {
    fn status(&self) -> Value {
        Relay::status(self)
    }

    fn metrics(&self) -> String {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).metrics.clone()
    }
}
