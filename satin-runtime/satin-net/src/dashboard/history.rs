//! What a supervisor's dashboard keeps across masters: each master
//! reports the run as it knows it, and a new master knows only what
//! happened since it took over. The supervisor merges the time series —
//! the task stream's bars, each node's use of its machine, the estimate
//! over time — from every report, so the page shows the whole run; and
//! what each node was running when it last reported to any of them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use satin_proto::keep_longest;

use super::stream::KEPT;

/// Samples kept per series (as a board keeps them).
const SAMPLES: usize = 600;

/// A bar as a master's status writes it (`stream.rs`): node, worker,
/// start and duration (milliseconds), kind (an index into `kinds`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Bar(String, u16, f64, f64, usize);

impl Bar {
    /// Its start and duration in microseconds (what the bars are kept by).
    fn start_us(&self) -> u64 {
        (self.2 * 1000.0).round() as u64
    }

    fn took_us(&self) -> u64 {
        (self.3 * 1000.0).round() as u64
    }

    /// Node, worker and start name a bar: the same one comes in every
    /// report until the board lets it go.
    fn same(&self, other: &Bar) -> bool {
        (self.start_us(), &self.0, self.1) == (other.start_us(), &other.0, other.1)
    }
}

#[derive(Default)]
pub(crate) struct History {
    /// Every bar reported (once), oldest first.
    bars: Vec<Bar>,
    /// Per node: the jobs it ran at its last report any master passed on.
    running: BTreeMap<String, Value>,
    /// Per node name: its usage samples by time.
    usage: BTreeMap<String, BTreeMap<u64, Value>>,
    /// The estimate's samples by time.
    progress: BTreeMap<u64, Value>,
}

impl History {
    /// Takes in the series of a master's `status`.
    pub(crate) fn absorb(&mut self, status: &Value) {
        let reported: Vec<Bar> = serde_json::from_value(status["task_stream"]["bars"].clone()).unwrap_or_default();
        self.bars.extend(reported);
        self.bars.sort_by(|a, b| (a.start_us(), &a.0, a.1).cmp(&(b.start_us(), &b.0, b.1)));
        self.bars.dedup_by(|a, b| a.same(b));
        // (A bar let go here as short may come back while a board still
        // keeps it; it is let go again.)
        keep_longest(&mut self.bars, (KEPT, KEPT / 2), Bar::took_us, Bar::start_us);
        for (node, bars) in status["task_stream"]["running"].as_object().into_iter().flatten() {
            self.running.insert(node.clone(), bars.clone());
        }
        for node in status["nodes"].as_array().into_iter().flatten() {
            let Some(name) = node["name"].as_str() else { continue };
            let series = self.usage.entry(name.to_string()).or_default();
            absorb_series(series, &node["usage"]);
        }
        absorb_series(&mut self.progress, &status["progress_over_time"]);
    }

    /// Puts the merged series into `status` (the latest report).
    pub(crate) fn fill(&self, status: &mut Value) {
        if let Some(stream) = status.get_mut("task_stream") {
            stream["bars"] = serde_json::to_value(&self.bars).unwrap_or_default();
            stream["running"] = Value::Object(self.running.clone().into_iter().collect());
        }
        if let Some(nodes) = status["nodes"].as_array_mut() {
            for node in nodes {
                let Some(series) = node["name"].as_str().and_then(|n| self.usage.get(n)) else { continue };
                node["usage"] = Value::Array(series.values().cloned().collect());
            }
        }
        if status.get("progress_over_time").is_some() {
            status["progress_over_time"] = Value::Array(self.progress.values().cloned().collect());
        }
    }
}

/// Samples `[time, …]` of `new` into `series`, keeping the latest `SAMPLES`.
fn absorb_series(series: &mut BTreeMap<u64, Value>, new: &Value) {
    for sample in new.as_array().into_iter().flatten() {
        if let Some(t) = sample[0].as_u64() {
            series.insert(t, sample.clone());
        }
    }
    while series.len() > SAMPLES {
        series.pop_first();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_new_master_s_report_keeps_what_the_old_one_reported() {
        let mut h = History::default();
        let old = json!({
            "nodes": [{ "name": "0", "usage": [[1000, 1.0, 20.0]] }, { "name": "1", "usage": [[1000, 0.5, 10.0]] }],
            "progress_over_time": [[1000, 0.1, null]],
            "task_stream": {
                "kinds": ["root"],
                "bars": [["0", 0, 900.0, 50.0, 0], ["1", 0, 950.0, 20.0, 1]],
                "running": { "0": [["0", 1, 990.0, 10.0, 0]], "1": [] },
            },
        });
        h.absorb(&old);
        h.absorb(&old);
        let mut new = json!({
            "nodes": [{ "name": "0", "state": "crashed", "usage": [] }, { "name": "1", "usage": [[2000, 1.0, 11.0]] }],
            "progress_over_time": [[2000, 0.5, 3.0]],
            "task_stream": { "kinds": ["root"], "bars": [["1", 0, 1500.0, 30.0, 2]], "running": { "1": [] } },
        });
        h.absorb(&new);
        h.fill(&mut new);
        assert_eq!(new["task_stream"]["bars"].as_array().unwrap().len(), 3, "each bar once: {new}");
        assert_eq!(new["task_stream"]["bars"][2][4], 2);
        assert_eq!(new["task_stream"]["running"]["0"], json!([["0", 1, 990.0, 10.0, 0]]), "the dead master's work");
        assert_eq!(new["nodes"][0]["usage"], json!([[1000, 1.0, 20.0]]));
        assert_eq!(new["nodes"][1]["usage"].as_array().unwrap().len(), 2);
        assert_eq!(new["progress_over_time"], json!([[1000, 0.1, null], [2000, 0.5, 3.0]]));
    }

    #[test]
    fn a_long_run_keeps_the_longer_half_of_its_bars_and_nothing_else_grows() {
        let mut h = History::default();
        for report in 0..4u64 {
            let bars: Vec<Value> = (0..KEPT as u64)
                .map(|i| json!(["0", 0, (report * KEPT as u64 + i) as f64, if i % 2 == 0 { 5.0 } else { 0.5 }, 1]))
                .collect();
            h.absorb(&json!({ "task_stream": { "bars": bars, "running": {} } }));
            assert!(h.bars.len() <= KEPT, "{}", h.bars.len());
        }
        assert!(h.bars.windows(2).all(|w| w[0].start_us() < w[1].start_us()), "in order, each once");
        assert!(h.bars.iter().filter(|b| b.3 == 5.0).count() >= KEPT / 2 - 1, "the long ones stay");
    }
}
