//! The status line: how far the run is (the estimate of
//! [`satin_core::progress`]) and how long it has left, and on a master
//! the nodes, jobs and table. Drawn only when stderr is a terminal, and
//! only for runs longer than a second.

use std::sync::mpsc::RecvTimeoutError;
use std::sync::Arc;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use satin_core::progress::Estimate;
use satin_core::Runtime;
use satin_proto::Node;

/// Runs shorter than this draw nothing (`SATIN_STATUS_AFTER_MS` changes
/// it: 0 draws from the start, as the tests do).
fn quiet_for() -> Duration {
    let ms = std::env::var(crate::contract::STATUS_AFTER_MS).ok().and_then(|v| v.parse().ok()).unwrap_or(1000);
    Duration::from_millis(ms)
}

/// Whether this process should draw a status line: stderr is a terminal,
/// `--no-progress` was not given, and no supervisor reads its stderr. A
/// program that runs on this machine's cores builds its runtime with
/// [`satin_core::Builder::track_progress`] set to this, and runs with
/// [`run_here`].
pub fn status_line_wanted(no_progress: bool) -> bool {
    !no_progress
        && std::io::IsTerminal::is_terminal(&std::io::stderr())
        && !crate::contract::ChildEnv::current().supervised
}

pub(crate) struct StatusLine {
    bar: ProgressBar,
}

/// "42 % done (estimate), about 3.1 s left", or what is known of it.
pub(crate) fn describe(e: &Estimate) -> String {
    let left = match e.eta {
        Some(left) => format!(", about {} left", human(left)),
        None => String::new(),
    };
    format!("{:.0} % done (estimate){left}", e.fraction * 100.0)
}

fn human(d: Duration) -> String {
    let s = d.as_secs_f64();
    match s {
        s if s < 60.0 => format!("{s:.1} s"),
        s if s < 3600.0 => format!("{} min {:02} s", (s / 60.0) as u64, (s % 60.0) as u64),
        s => format!("{} h {:02} min", (s / 3600.0) as u64, ((s % 3600.0) / 60.0) as u64),
    }
}

impl StatusLine {
    /// A master's line, which counts its time from now.
    pub(crate) fn new() -> StatusLine {
        StatusLine::with_template("{spinner} {elapsed_precise} {msg}")
    }

    fn with_template(template: &str) -> StatusLine {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(4));
        bar.set_style(ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_spinner()));
        bar.enable_steady_tick(Duration::from_millis(250));
        StatusLine { bar }
    }

    /// A master's line: the estimate, then the run's figures.
    pub(crate) fn update(&mut self, node: &Node, frames: u64, estimate: Option<Estimate>) {
        let s = node.stats();
        let how_far = estimate.map_or(String::new(), |e| format!("{} | ", describe(&e)));
        self.bar.set_message(format!(
            "{how_far}nodes alive {} | jobs given {} | stolen {} | redone {} | recoveries {} | table {} | checkpointed {} | frames sent {}",
            node.live_members().count(),
            s.jobs_given,
            s.jobs_stolen,
            s.redone,
            s.recoveries,
            node.table_len(),
            s.records_written + s.records_loaded,
            frames
        ));
    }

    pub(crate) fn finish(self) {
        self.bar.finish_and_clear();
    }
}

/// Runs `f` on `runtime` (this machine's cores), with a status line on
/// stderr if the runtime tracks progress and [`status_line_wanted`]: the
/// share done and the time left, from the second second of the run on.
pub fn run_here<R: Send>(runtime: &Arc<Runtime>, f: impl FnOnce() -> R + Send) -> R {
    if runtime.progress().is_some() && status_line_wanted(false) {
        run_with_status(runtime, f)
    } else {
        runtime.run(f)
    }
}

/// Runs `f` on `runtime` with a status line for the threads of one
/// process (the runtime tracks progress).
fn run_with_status<R: Send>(runtime: &Arc<Runtime>, f: impl FnOnce() -> R + Send) -> R {
    // Dropping the sender ends the drawer at once (no wait for its tick).
    let (over, ticks) = std::sync::mpsc::channel::<()>();
    // The drawer's first look comes before the run starts.
    let (looked, first_look) = std::sync::mpsc::channel::<()>();
    let drawer = {
        let runtime = Arc::clone(runtime);
        std::thread::Builder::new().name("satin-status".into()).spawn(move || {
            let mut line: Option<StatusLine> = None;
            let quiet = quiet_for();
            let mut tick = Duration::ZERO;
            while let Err(RecvTimeoutError::Timeout) = ticks.recv_timeout(tick) {
                tick = Duration::from_millis(250);
                let Some(e) = runtime.progress() else { break };
                if e.elapsed >= quiet && !e.done {
                    let line = line.get_or_insert_with(|| StatusLine::with_template("{spinner} {msg}"));
                    line.bar.set_message(format!("{} elapsed, {}", human(e.elapsed), describe(&e)));
                }
                let _ = looked.send(());
            }
            if let Some(line) = line {
                line.finish();
            }
        })
    };
    if drawer.is_ok() {
        let _ = first_look.recv();
    }
    let value = runtime.run(f);
    drop(over);
    if let Ok(drawer) = drawer {
        let _ = drawer.join();
    }
    value
}

/// A master's report to its supervisor (`contract::Report::Status`): the
/// estimate and the nodes alive, one line of JSON.
pub(crate) fn report(e: &Estimate, alive: usize, totals: Totals) -> String {
    let eta = e.eta.map(|d| d.as_secs_f64());
    let json = serde_json::json!({
        "fraction": e.fraction, "elapsed_s": e.elapsed.as_secs_f64(), "eta_s": eta, "alive": alive,
        "jobs_stolen": totals.jobs_stolen, "cpu_s": totals.cpu_s,
    });
    json.to_string()
}

/// What the master sums over every node's last figures for the
/// supervisor's line.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Totals {
    /// Jobs stolen by all nodes.
    pub(crate) jobs_stolen: u64,
    /// CPU time of all node processes, in seconds.
    pub(crate) cpu_s: f64,
}

/// A supervisor's status line: its nodes' log lines go above it, and the
/// master's reports change it (they are not shown as log lines).
#[derive(Clone)]
pub(crate) struct SupervisorLine {
    /// `None`: no line drawn (stderr is no terminal, or `--no-progress`).
    bar: Option<ProgressBar>,
}

impl SupervisorLine {
    /// A line if `wanted`; the nodes are told to report (in their
    /// environment) only then.
    pub(crate) fn new(wanted: bool) -> SupervisorLine {
        SupervisorLine { bar: wanted.then(|| StatusLine::new().bar) }
    }

    /// Whether the nodes should report.
    pub(crate) fn drawn(&self) -> bool {
        self.bar.is_some()
    }

    /// A line node `node` wrote on stderr.
    /// The master `node` reported its estimate (`report`): onto the line.
    pub(crate) fn report(&self, node: usize, json: &str) {
        if let (Some(bar), Ok(v)) = (&self.bar, serde_json::from_str::<serde_json::Value>(json)) {
            let e = Estimate {
                fraction: v["fraction"].as_f64().unwrap_or(0.0),
                elapsed: Duration::from_secs_f64(v["elapsed_s"].as_f64().unwrap_or(0.0).max(0.0)),
                eta: v["eta_s"].as_f64().map(|s| Duration::from_secs_f64(s.max(0.0))),
                tracked: 0,
                done: false,
            };
            let alive = v["alive"].as_u64().unwrap_or(0);
            let (stolen, cpu) = (v["jobs_stolen"].as_u64().unwrap_or(0), v["cpu_s"].as_f64().unwrap_or(0.0));
            bar.set_message(format!(
                "{} | nodes alive {alive} (master: node {node}) | {stolen} jobs stolen, CPU {cpu:.1} s",
                describe(&e)
            ));
        }
    }

    /// A line of node `node`'s log: shown, above the line. A log nobody
    /// reads any more (`2>&1 | head`) loses the line: the run goes on
    /// (`eprintln!` would panic the thread that reads the node's log, and
    /// the supervisor would wait for that log's end for ever).
    pub(crate) fn log_line(&self, node: usize, line: &str) {
        let show = || say!("[node {node}] {line}");
        match &self.bar {
            Some(bar) => bar.suspend(show),
            None => show(),
        }
    }

    /// The run is over: the line goes.
    pub(crate) fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_estimate_reads_as_a_share_and_the_time_left() {
        let e = Estimate {
            fraction: 0.421,
            elapsed: Duration::from_secs(3),
            eta: Some(Duration::from_secs(125)),
            tracked: 10,
            done: false,
        };
        assert_eq!(describe(&e), "42 % done (estimate), about 2 min 05 s left");
        assert_eq!(describe(&Estimate { eta: None, ..e }), "42 % done (estimate)");
        assert_eq!(human(Duration::from_secs(7300)), "2 h 01 min");
    }

    #[test]
    fn a_master_s_report_is_one_line_of_json() {
        let e = Estimate { fraction: 0.5, elapsed: Duration::from_secs(2), eta: None, tracked: 3, done: false };
        let line = report(&e, 3, Totals { jobs_stolen: 12, cpu_s: 4.5 });
        assert!(!line.contains('\n'), "{line}");
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!((v["fraction"].as_f64(), v["alive"].as_u64()), (Some(0.5), Some(3)));
        assert!(v["eta_s"].is_null());
        assert_eq!((v["jobs_stolen"].as_u64(), v["cpu_s"].as_f64()), (Some(12), Some(4.5)));
    }
}
