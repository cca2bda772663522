//! `--trace FILE`: a Chrome trace (JSON array format; opens in Perfetto and
//! chrome://tracing) of one node: a span per job that arrived from outside
//! (stolen jobs and the root) on the worker that ran it, and markers for
//! crashes, recoveries, joins and leaves. Timestamps are wall-clock
//! microseconds, so traces of nodes on one machine line up when merged
//! (`--local-nodes` merges them into one file).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::Ran;

pub(crate) struct Trace {
    path: PathBuf,
    pid: u64,
    /// Wall clock and monotonic clock read together, to convert instants.
    epoch: (SystemTime, Instant),
    events: Vec<String>,
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

impl Trace {
    pub(crate) fn new(path: PathBuf, pid: u64, name: &str) -> Trace {
        let mut t = Trace { path, pid, epoch: (SystemTime::now(), Instant::now()), events: Vec::new() };
        t.process_name(pid, name);
        t
    }

    fn micros(&self, at: Instant) -> u128 {
        let wall =
            if at >= self.epoch.1 { self.epoch.0 + (at - self.epoch.1) } else { self.epoch.0 - (self.epoch.1 - at) };
        wall.duration_since(UNIX_EPOCH).unwrap_or_default().as_micros()
    }

    /// A job's span on the worker that ran it.
    pub(crate) fn span(&mut self, name: &str, ran: Ran) {
        self.span_in(self.pid, ran.worker, "job", name, ran.start, ran.took);
    }

    /// A span on thread `tid` of process `pid` of the trace (another
    /// process than this node's: a plan drawn beside the run).
    pub(crate) fn span_in(&mut self, pid: u64, tid: usize, cat: &str, name: &str, start: Instant, took: Duration) {
        let ts = self.micros(start);
        self.events.push(format!(
            r#"{{"name":"{}","cat":"{}","ph":"X","ts":{ts},"dur":{},"pid":{pid},"tid":{tid}}}"#,
            escape(name),
            escape(cat),
            took.as_micros(),
        ));
    }

    /// Names process `pid` of the trace.
    pub(crate) fn process_name(&mut self, pid: u64, name: &str) {
        self.events
            .push(format!(r#"{{"name":"process_name","ph":"M","pid":{pid},"args":{{"name":"{}"}}}}"#, escape(name)));
    }

    /// A marker across the whole trace (a crash, a recovery, a leave).
    pub(crate) fn marker(&mut self, name: &str) {
        let ts = self.micros(Instant::now());
        self.events.push(format!(
            r#"{{"name":"{}","ph":"i","s":"g","ts":{ts},"pid":{},"tid":0}}"#,
            escape(name),
            self.pid
        ));
    }

    pub(crate) fn write(&self) -> std::io::Result<()> {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&self.path)?);
        writeln!(f, "[")?;
        for (i, e) in self.events.iter().enumerate() {
            writeln!(f, "{e}{}", if i + 1 < self.events.len() { "," } else { "" })?;
        }
        writeln!(f, "]")?;
        f.flush()
    }
}

/// Merges the per-node traces `parts` into one file at `into`.
pub(crate) fn merge(parts: &[PathBuf], into: &Path) -> std::io::Result<usize> {
    let mut events: Vec<String> = Vec::new();
    for p in parts {
        let Ok(text) = std::fs::read_to_string(p) else { continue };
        for line in text.lines() {
            let line = line.trim().trim_end_matches(',');
            if line.starts_with('{') {
                events.push(line.to_string());
            }
        }
        let _ = std::fs::remove_file(p);
    }
    let mut f = std::io::BufWriter::new(std::fs::File::create(into)?);
    writeln!(f, "[")?;
    for (i, e) in events.iter().enumerate() {
        writeln!(f, "{e}{}", if i + 1 < events.len() { "," } else { "" })?;
    }
    writeln!(f, "]")?;
    f.flush()?;
    Ok(events.len())
}
