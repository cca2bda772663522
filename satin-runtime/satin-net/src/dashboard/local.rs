//! The dashboard of a run on this machine's cores alone (no node, no
//! network): one row, this machine, with its counters and the progress
//! estimate sampled four times a second, its board served as it is.

use std::net::SocketAddr;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use satin_core::Runtime;
use satin_proto::NodeFigures;

use super::{lock, Board, Shared};

/// This machine's row.
const ME: u64 = 0;

/// A dashboard that samples a runtime until it is closed.
pub(crate) struct LocalDashboard {
    board: Shared,
    stop: mpsc::Sender<()>,
    sampler: JoinHandle<()>,
    served: Option<super::Served>,
}

impl LocalDashboard {
    /// Serves the dashboard of `runtime`'s run on `addr` (if given; a
    /// `--report` alone only samples); says where on standard error (as
    /// nodes do), or why not.
    pub(crate) fn open(app: &str, addr: Option<SocketAddr>, runtime: Arc<Runtime>) -> std::io::Result<LocalDashboard> {
        let board: Shared = Arc::new(Mutex::new(Board::new(app, None)));
        runtime.record_jobs(true);
        lock(&board).alive(ME, "this machine".into(), None, true);
        lock(&board).event(format!("the run starts on {} workers", runtime.workers()));
        let served = addr.map(|addr| super::serve(addr, Arc::clone(&board))).transpose()?;
        let (stop, stopped) = mpsc::channel::<()>();
        let shared = Arc::clone(&board);
        let sampler = std::thread::Builder::new().name("satin-dashboard-sampler".into()).spawn(move || loop {
            sample(&shared, &runtime);
            match stopped.recv_timeout(Duration::from_millis(250)) {
                Err(RecvTimeoutError::Timeout) => {}
                _ => return sample(&shared, &runtime),
            }
        })?;
        Ok(LocalDashboard { board, stop, sampler, served })
    }

    /// The run is over: the page says so, the server stops, and the
    /// report, if asked for, is written.
    pub(crate) fn close(self, report: Option<&std::path::Path>) -> std::io::Result<()> {
        lock(&self.board).finished();
        lock(&self.board).event("the run is over");
        drop(self.stop);
        let _ = self.sampler.join();
        if let Some(served) = self.served {
            served.stop();
        }
        let Some(path) = report else { return Ok(()) };
        let status = serde_json::to_value(lock(&self.board).status()).unwrap_or_default();
        super::report::write(path, &status)?;
        eprintln!("report: {}", path.display());
        Ok(())
    }
}

/// The runtime's counters and estimate, onto the board.
fn sample(board: &Shared, runtime: &Runtime) {
    let stats = runtime.stats();
    let figures = NodeFigures {
        cluster: String::new(),
        spawns: stats.spawns,
        jobs_stolen: stats.steals,
        jobs_given: 0,
        table_entries: 0,
        table_lookups: 0,
        table_hits: 0,
        recoveries: 0,
        bytes_sent: 0,
        cpu_ms: super::process::cpu().as_millis() as u64,
        rss_bytes: super::process::resident_bytes(),
        watches: false,
        jobs: super::stream::bars_of(runtime.take_job_spans(), runtime.running_job_spans()),
    };
    let mut b = lock(board);
    b.update(ME, stats.steals, 0, runtime.progress());
    b.figures(ME, &figures);
}
