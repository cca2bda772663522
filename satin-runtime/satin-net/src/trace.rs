//! `--trace FILE`: a Chrome trace (JSON array format; opens in Perfetto and
//! chrome://tracing) of one node: a span per job that arrived from outside
//! (stolen jobs and the root) on the worker that ran it, and markers for
//! crashes, recoveries, joins and leaves. Timestamps are wall-clock
//! microseconds, so traces of nodes on one machine line up when merged
//! (`--local-nodes` merges them into one file).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use satin_core::Ran;

pub(crate) struct Trace {
    path: PathBuf,
    pid: u64,
    /// Wall clock and monotonic clock read together, to convert instants.
    epoch: (SystemTime, Instant),
    events: Vec<Value>,
}

impl Trace {
    pub(crate) fn new(path: PathBuf, pid: u64, name: &str) -> Trace {
        let mut t = Trace { path, pid, epoch: (SystemTime::now(), Instant::now()), events: Vec::new() };
        t.process_name(pid, name);
        t
    }

    fn micros(&self, at: Instant) -> u64 {
        let wall =
            if at >= self.epoch.1 { self.epoch.0 + (at - self.epoch.1) } else { self.epoch.0 - (self.epoch.1 - at) };
        wall.duration_since(UNIX_EPOCH).unwrap_or_default().as_micros() as u64
    }

    /// A job's span on the worker that ran it.
    pub(crate) fn span(&mut self, name: &str, ran: Ran) {
        self.span_in(self.pid, ran.worker, "job", name, ran.start, ran.took);
    }

    /// A span on thread `tid` of process `pid` of the trace (another
    /// process than this node's: a plan drawn beside the run).
    pub(crate) fn span_in(&mut self, pid: u64, tid: usize, cat: &str, name: &str, start: Instant, took: Duration) {
        let ts = self.micros(start);
        let dur = took.as_micros() as u64;
        self.events.push(json!({"name": name, "cat": cat, "ph": "X", "ts": ts, "dur": dur, "pid": pid, "tid": tid}));
    }

    /// Names process `pid` of the trace.
    pub(crate) fn process_name(&mut self, pid: u64, name: &str) {
        self.events.push(json!({"name": "process_name", "ph": "M", "pid": pid, "args": {"name": name}}));
    }

    /// A marker across the whole trace (a crash, a recovery, a leave).
    pub(crate) fn marker(&mut self, name: &str) {
        let ts = self.micros(Instant::now());
        self.events.push(json!({"name": name, "ph": "i", "s": "g", "ts": ts, "pid": self.pid, "tid": 0}));
    }

    pub(crate) fn write(&self) -> std::io::Result<()> {
        write_events(&self.path, &self.events)
    }
}

/// `events` as one JSON array, one event per line.
fn write_events(path: &Path, events: &[Value]) -> std::io::Result<()> {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    writeln!(f, "[")?;
    for (i, e) in events.iter().enumerate() {
        writeln!(f, "{e}{}", if i + 1 < events.len() { "," } else { "" })?;
    }
    writeln!(f, "]")?;
    f.flush()
}

/// Merges the per-node traces `parts` into one file at `into`; a part that
/// is missing or not a JSON array (its node died while writing it) is
/// left out.
pub(crate) fn merge(parts: &[PathBuf], into: &Path) -> std::io::Result<usize> {
    let mut events: Vec<Value> = Vec::new();
    for p in parts {
        let Ok(text) = std::fs::read_to_string(p) else { continue };
        if let Ok(part) = serde_json::from_str::<Vec<Value>>(&text) {
            events.extend(part);
        }
        let _ = std::fs::remove_file(p);
    }
    write_events(into, &events)?;
    Ok(events.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_with_any_characters_make_valid_json_and_merge() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
        let mut t = Trace::new(a.clone(), 1, "node \"0\"\n\t\u{1}");
        t.marker("crash of node 2\\3");
        t.span_in(2, 0, "plan", "task\r\n7", Instant::now(), Duration::from_micros(5));
        t.write().unwrap();
        std::fs::write(&b, "[\n{\"name\":\"cut\"").unwrap();
        let into = dir.path().join("all.json");
        assert_eq!(merge(&[a, b], &into).unwrap(), 3, "the torn part is left out");
        let all: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(into).unwrap()).unwrap();
        assert_eq!(all[0]["args"]["name"], "node \"0\"\n\t\u{1}");
        assert_eq!(all[2]["name"], "task\r\n7");
    }
}
