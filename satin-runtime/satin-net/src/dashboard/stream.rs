//! The task stream: each node's workers as rows, the jobs that moved as
//! bars over time, coloured by kind (`satin_proto::JobKind`). A node's
//! runtime records the spans (`satin_core::Runtime::record_jobs`), its
//! driver sends them with its figures once a second, and the board of
//! the master of the moment keeps them here.
//!
//! A long run ends far more jobs than a page can draw: past [`KEPT`]
//! bars the shorter half goes, so the stream still covers the whole run
//! with the jobs that matter most to its shape.

use std::collections::BTreeMap;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde::ser::{Serialize, SerializeMap, SerializeSeq, SerializeStruct, Serializer};

use satin_core::JobSpan;
use satin_proto::{keep_longest, JobBar, JobKind, JOB_BARS_PER_REPORT};

/// Bars a board keeps.
pub(crate) const KEPT: usize = 8000;

/// The spans a node's runtime recorded since its last report (`ended`:
/// at most `JOB_BARS_PER_REPORT`, the longest) and the jobs it runs now,
/// as bars for its next report, at wall-clock times.
pub(crate) fn bars_of(mut ended: Vec<JobSpan>, running: Vec<JobSpan>) -> Vec<JobBar> {
    keep_longest(&mut ended, (JOB_BARS_PER_REPORT, JOB_BARS_PER_REPORT), |s| s.took, |s| s.start);
    // Read together: an instant's distance from `now` gives its wall time.
    let (wall, now) = (unix_us(SystemTime::now()), Instant::now());
    let bar = |s: JobSpan, running: bool| JobBar {
        worker: s.worker.min(u16::MAX as usize) as u16,
        start_us: wall.saturating_sub(now.saturating_duration_since(s.start).as_micros() as u64),
        took_us: s.took.as_micros() as u64,
        kind: s.kind,
        running,
    };
    let ended = ended.into_iter().map(|s| bar(s, false));
    ended.chain(running.into_iter().map(|s| bar(s, true))).collect()
}

/// Microseconds since the Unix epoch.
pub(crate) fn unix_us(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).unwrap_or_default().as_micros() as u64
}

/// One bar on the board: whose, and the bar.
#[derive(Debug, Clone, PartialEq)]
struct Placed {
    node: String,
    bar: JobBar,
}

/// The bars a board keeps: the jobs that ended, oldest first, and per
/// node the ones it ran at its last report (a node that died keeps them:
/// they are the work it lost).
#[derive(Debug, Default)]
pub(crate) struct TaskStream {
    bars: Vec<Placed>,
    running: BTreeMap<String, Vec<JobBar>>,
}

impl TaskStream {
    /// Node `node` reported `bars`: those that ended join the stream,
    /// those running replace the ones it reported last time.
    pub(crate) fn add(&mut self, node: &str, bars: &[JobBar]) {
        let (running, ended): (Vec<JobBar>, Vec<JobBar>) = bars.iter().partition(|b| b.running);
        self.running.insert(node.to_string(), running);
        if ended.is_empty() {
            return;
        }
        self.bars.extend(ended.into_iter().map(|bar| Placed { node: node.to_string(), bar }));
        if !keep_longest(&mut self.bars, (KEPT, KEPT / 2), |p| p.bar.took_us, |p| p.bar.start_us) {
            self.bars.sort_by_key(|p| p.bar.start_us);
        }
    }

    /// How many bars of each kind it holds.
    #[cfg(test)]
    pub(crate) fn count(&self, kind: JobKind) -> usize {
        self.bars.iter().filter(|p| p.bar.kind == kind).count()
    }
}

/// A bar as JSON: `[node, worker, start (Unix ms), duration (ms), kind
/// index]` — an array, not an object: a long run sends thousands.
fn bar_json<'a>(node: &'a str, bar: &JobBar) -> (&'a str, u16, f64, f64, usize) {
    let kind = JobKind::ALL.iter().position(|k| *k == bar.kind).unwrap_or(0);
    let ms = |us: u64| (us as f64 / 10.0).round() / 100.0;
    (node, bar.worker, ms(bar.start_us), ms(bar.took_us), kind)
}

/// `task_stream` in `/api/status`: `kinds` names the kinds by index,
/// `bars` are the jobs that ended and `running`, per node, the ones it
/// ran at its last report (their duration so far), both as [`bar_json`].
impl Serialize for TaskStream {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        struct Bars<'a>(&'a [Placed]);
        impl Serialize for Bars<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut seq = s.serialize_seq(Some(self.0.len()))?;
                for p in self.0 {
                    seq.serialize_element(&bar_json(&p.node, &p.bar))?;
                }
                seq.end()
            }
        }
        struct Running<'a>(&'a BTreeMap<String, Vec<JobBar>>);
        impl Serialize for Running<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut map = s.serialize_map(Some(self.0.len()))?;
                for (node, bars) in self.0 {
                    let bars: Vec<_> = bars.iter().map(|b| bar_json(node, b)).collect();
                    map.serialize_entry(node, &bars)?;
                }
                map.end()
            }
        }
        let kinds: Vec<&str> = JobKind::ALL.iter().map(|k| k.name()).collect();
        let mut st = s.serialize_struct("TaskStream", 3)?;
        st.serialize_field("kinds", &kinds)?;
        st.serialize_field("bars", &Bars(&self.bars))?;
        st.serialize_field("running", &Running(&self.running))?;
        st.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn span(start: Instant, took_us: u64, kind: JobKind) -> JobSpan {
        JobSpan { worker: 1, start, took: Duration::from_micros(took_us), kind }
    }

    #[test]
    fn a_report_carries_the_longest_spans_at_their_wall_time() {
        let t0 = Instant::now();
        let before = unix_us(SystemTime::now());
        let spans: Vec<_> = (0..JOB_BARS_PER_REPORT as u64 + 10).map(|i| span(t0, i, JobKind::Stolen)).collect();
        let bars = bars_of(spans, vec![span(t0, 7, JobKind::Root)]);
        assert_eq!(bars.len(), JOB_BARS_PER_REPORT + 1);
        assert!(bars[..JOB_BARS_PER_REPORT].iter().all(|b| b.took_us >= 10 && !b.running), "the shortest went");
        assert!(bars[JOB_BARS_PER_REPORT].running, "the running one comes last");
        let start = bars[0].start_us;
        assert!(start.abs_diff(before) < 50_000, "{start} vs {before}");
    }

    #[test]
    fn a_full_stream_keeps_the_longer_half_and_serializes_as_arrays() {
        let mut s = TaskStream::default();
        let bar =
            |i: u64, kind| JobBar { worker: 0, start_us: 1_000_000 + i, took_us: i % 2 * 1500, kind, running: false };
        let bars: Vec<_> = (0..KEPT as u64).map(|i| bar(i, JobKind::Stolen)).collect();
        s.add("0", &bars);
        // (Longer than any of node 0's: past the cap, the longest stay.)
        let redone = JobBar { took_us: 2000, ..bar(7, JobKind::Redone) };
        s.add("1", &[redone, JobBar { running: true, ..bar(3, JobKind::Root) }]);
        s.add("2", &[JobBar { running: true, ..bar(5, JobKind::Stolen) }]);
        s.add("2", &[]);
        assert_eq!(s.bars.len(), KEPT / 2);
        assert_eq!(s.count(JobKind::Redone), 1);
        assert!(s.bars.iter().all(|p| p.bar.took_us >= 1500));
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(json["kinds"][2], "redone");
        assert_eq!(json["bars"][0], serde_json::json!(["0", 0, 1000.0, 1.5, 1]));
        let redone = json["bars"].as_array().unwrap().iter().find(|b| b[0] == "1").unwrap();
        assert_eq!(redone[4], 2);
        assert_eq!(json["running"]["1"], serde_json::json!([["1", 0, 1000.0, 1.5, 0]]));
        assert_eq!(json["running"]["2"], serde_json::json!([]), "a later report replaces what ran");
    }
}
