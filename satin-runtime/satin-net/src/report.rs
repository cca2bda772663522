//! A node's figures at its end: the line that says them, and the JSON
//! file `--stats-json` writes (`{"nodes": [..]}`, one object per node).

use std::io;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use satin_proto::{NodeId, NodeStats};

/// Per-node figures for the final statistics block.
pub(crate) struct NodeReport {
    pub(crate) id: NodeId,
    /// How the node is named: its number under a supervisor, else the
    /// address it listens on.
    pub(crate) label: String,
    pub(crate) stats: NodeStats,
    pub(crate) table_hits: u64,
    pub(crate) table_lookups: u64,
    pub(crate) table_len: usize,
    /// Homes per table key (0: the broadcast table).
    pub(crate) table_replicas: usize,
    pub(crate) bytes_sent: u64,
    /// Of `bytes_sent`, those that went through shared memory to nodes
    /// of this host (`conn/same_host.rs`).
    pub(crate) bytes_sent_in_memory: u64,
    pub(crate) frames_sent: u64,
    /// Bytes of calls and results this node's process encoded, hashed
    /// for keys and decoded.
    pub(crate) values: satin_proto::values::ValueCounts,
    /// Frames and bytes sent per message kind.
    pub(crate) sent_by_kind: std::collections::BTreeMap<&'static str, (u64, u64)>,
    /// Packets this node's network faults dropped (`--chaos`).
    pub(crate) packets_dropped: u64,
    /// Checkpoint records and bytes this node wrote.
    pub(crate) records_written: u64,
    pub(crate) checkpoint_bytes: u64,
    /// The figures at the end of each run this node saw end (a node
    /// whose program waits for an answer sees runs end all the same).
    pub(crate) runs: Vec<Value>,
    /// This node's replicas of the shared incumbents (`satin::shared`):
    /// name and value.
    pub(crate) incumbents: Vec<(String, u64)>,
    /// The gaps between consecutive beats (the quorum's messages) from a
    /// peer, as this node's event loop read them: p50, p99, max (ms).
    pub(crate) beat_gaps_ms: [f64; 3],
}

/// The gaps between the quorum's messages each peer sends, as the event
/// loop reads them: what a failure detector sees (a beat read late looks
/// like silence). At most `KEEP` gaps are kept.
#[derive(Default)]
pub(crate) struct BeatGaps {
    last: std::collections::HashMap<NodeId, std::time::Instant>,
    gaps: Vec<u64>,
}

impl BeatGaps {
    const KEEP: usize = 1 << 20;

    /// A beat from `peer` was read at `at`.
    pub(crate) fn heard(&mut self, peer: NodeId, at: std::time::Instant) {
        if let Some(last) = self.last.insert(peer, at) {
            if self.gaps.len() < Self::KEEP {
                self.gaps.push(at.duration_since(last).as_nanos() as u64);
            }
        }
    }

    /// p50, p99 and the largest gap, in milliseconds (zeros if none).
    pub(crate) fn percentiles_ms(&self) -> [f64; 3] {
        let mut g = self.gaps.clone();
        g.sort_unstable();
        let at = |q: f64| g.get(((g.len() as f64 - 1.0) * q).round() as usize).map_or(0.0, |&n| n as f64 / 1e6);
        [at(0.5), at(0.99), at(1.0)]
    }
}

impl NodeReport {
    /// Every figure, as the one stderr line a node ends with (after
    /// `APP: node ID: `).
    pub(crate) fn stats_line(&self) -> String {
        let (r, s) = (self, &self.stats);
        format!(
            "jobs stolen {}, given {}, redone {}, recoveries {}, table entries {}, published {}, table lookups {}, \
             table hits {}, adopted {}, adoptions given up {}, table homes {}, homes asked {}, questions answered {}, orphans saved {}, \
             checkpoint records written {}, checkpoint bytes {}, records loaded {}, duplicates started {}, \
             duplicates won {}, duplicates aborted {}, loser time {:.3} s, status checks {}, jobs lost {}, \
             hard timeouts {}, hard timeouts waived {}, retried {}, refused {}, drops {}, dropped {}, frames sent {}, bytes sent {}, \
             packets dropped {}, elections {}, removals {}",
            s.jobs_stolen,
            s.jobs_given,
            s.redone,
            s.recoveries,
            r.table_len,
            s.published,
            r.table_lookups,
            r.table_hits,
            s.adopted,
            s.adoptions_given_up,
            r.table_replicas,
            s.homes_asked,
            s.home_questions,
            s.orphans_saved,
            r.records_written,
            r.checkpoint_bytes,
            s.records_loaded,
            s.duplicates_started,
            s.duplicates_won,
            s.duplicates_aborted,
            s.loser_time as f64 / 1e9,
            s.status_checks,
            s.jobs_lost,
            s.hard_timeouts,
            s.hard_timeouts_waived,
            s.retried,
            s.refused,
            s.drops,
            s.dropped,
            r.frames_sent,
            r.bytes_sent,
            r.packets_dropped,
            s.elections,
            s.removals
        )
    }
}

impl NodeReport {
    /// The figures of each run so far, as `--stats-json` lists them: one
    /// per run that ended here, and the node's figures now after the last.
    pub(crate) fn per_run(&self) -> Vec<Value> {
        if self.runs.is_empty() {
            vec![self.figures()]
        } else {
            self.runs.clone()
        }
    }

    /// The figures as one JSON object (the protocol's counters under
    /// `stats`).
    pub(crate) fn figures(&self) -> Value {
        json!({
            "table_entries": self.table_len,
            "table_lookups": self.table_lookups,
            "table_hits": self.table_hits,
            "table_homes": self.table_replicas,
            "frames_sent": self.frames_sent,
            "bytes_sent": self.bytes_sent,
            "bytes_sent_in_memory": self.bytes_sent_in_memory,
            "bytes_encoded": self.values.encoded,
            "bytes_hashed": self.values.hashed,
            "bytes_decoded": self.values.decoded,
            "sent_by_kind": self
                .sent_by_kind
                .iter()
                .map(|(k, (frames, bytes))| (k.to_string(), json!({ "frames": frames, "bytes": bytes })))
                .collect::<serde_json::Map<_, _>>(),
            "packets_dropped": self.packets_dropped,
            "records_written": self.records_written,
            "checkpoint_bytes": self.checkpoint_bytes,
            "incumbents": self.incumbents.iter().map(|(n, v)| (n.clone(), json!(v))).collect::<serde_json::Map<_, _>>(),
            "beat_gaps_ms": { "p50": self.beat_gaps_ms[0], "p99": self.beat_gaps_ms[1], "max": self.beat_gaps_ms[2] },
            "stats": self.stats,
        })
    }
}

/// One node's entry in the `--stats-json` file: its name (its number
/// under a supervisor), its id (a string: it does not fit a JSON reader's
/// doubles), its figures so far, and under `runs` its figures at the end
/// of each of the program's runs (the counters add up from run to run).
pub(crate) fn node_json(label: &str, id: NodeId, runs: &[Value]) -> Value {
    let mut node = runs.last().cloned().unwrap_or_else(|| json!({}));
    node["node"] = json!(label);
    node["id"] = json!(id.to_string());
    node["runs"] = Value::Array(runs.to_vec());
    node
}

/// The columns of [`table`]: a heading, and where the figure is.
const COLUMNS: [(&str, &str); 9] = [
    ("runs", ""),
    ("stolen", "jobs_stolen"),
    ("given", "jobs_given"),
    ("redone", "redone"),
    ("recoveries", "recoveries"),
    ("published", "published"),
    ("table hits", "table_hits"),
    ("orphans saved", "orphans_saved"),
    ("bytes sent", "bytes_sent"),
];

/// The nodes' main figures as a table for people, a line per node (the
/// `--stats-json` file has them all): what a supervisor prints at the end.
pub(crate) fn table(nodes: &Value) -> Vec<String> {
    let Some(nodes) = nodes["nodes"].as_array() else { return Vec::new() };
    let figure = |node: &Value, key: &str| -> String {
        match key {
            "" => node["runs"].as_array().map_or(0, Vec::len).to_string(),
            _ => node[key].as_u64().or_else(|| node["stats"][key].as_u64()).map_or("-".into(), |v| v.to_string()),
        }
    };
    let mut rows: Vec<Vec<String>> = vec![std::iter::once("node".to_string())
        .chain(COLUMNS.iter().map(|(heading, _)| heading.to_string()))
        .collect()];
    for node in nodes {
        let name = node["node"].as_str().unwrap_or("?").to_string();
        rows.push(std::iter::once(name).chain(COLUMNS.iter().map(|(_, key)| figure(node, key))).collect());
    }
    let widths: Vec<usize> = (0..rows[0].len()).map(|c| rows.iter().map(|r| r[c].len()).max().unwrap_or(0)).collect();
    rows.iter()
        .map(|r| r.iter().zip(&widths).map(|(cell, w)| format!("{cell:>w$}")).collect::<Vec<_>>().join("  "))
        .collect()
}

/// Writes the counters of a run on this machine's cores to `path`, as
/// `--stats-json` does: `{"nodes": [{"node": "local", "workers": N,
/// "pool": {..}}]}` ([`satin_core::RunStats`]).
pub fn write_local_stats(path: &Path, runtime: &satin_core::Runtime) -> io::Result<()> {
    let values = satin_proto::values::counts();
    let local = json!({
        "node": "local",
        "workers": runtime.workers(),
        "pool": runtime.stats(),
        "bytes_encoded": values.encoded,
        "bytes_hashed": values.hashed,
        "bytes_decoded": values.decoded,
    });
    write_nodes(path, vec![local])
}

/// Writes `nodes` as `{"nodes": [..]}` to `path`, through a file beside
/// it, so that a reader never sees half of it.
pub(crate) fn write_nodes(path: &Path, nodes: Vec<Value>) -> io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".part");
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, serde_json::to_vec_pretty(&json!({ "nodes": nodes }))?)?;
    std::fs::rename(&tmp, path)
}

/// Merges the nodes' files into `into` (a node that never wrote one, or
/// was killed first, is left out) and removes them; returns how many
/// nodes it holds.
pub(crate) fn merge(parts: &[PathBuf], into: &Path) -> io::Result<usize> {
    let mut nodes = Vec::new();
    for p in parts {
        let Ok(text) = std::fs::read_to_string(p) else { continue };
        if let Ok(mut part) = serde_json::from_str::<Value>(&text) {
            if let Some(Value::Array(ns)) = part.get_mut("nodes").map(Value::take) {
                nodes.extend(ns);
            }
        }
        let _ = std::fs::remove_file(p);
    }
    let n = nodes.len();
    write_nodes(into, nodes)?;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_merge_into_one_file_of_nodes() {
        let dir = tempfile::tempdir().unwrap();
        let report = NodeReport {
            id: u64::MAX - 1,
            label: "0".into(),
            stats: NodeStats { jobs_stolen: 7, ..NodeStats::default() },
            table_hits: 3,
            table_lookups: 4,
            table_len: 5,
            table_replicas: 0,
            bytes_sent: 6,
            bytes_sent_in_memory: 0,
            frames_sent: 1,
            values: satin_proto::values::ValueCounts { encoded: 8, hashed: 9, decoded: 10 },
            sent_by_kind: [("JobResult", (1, 6))].into(),
            packets_dropped: 0,
            records_written: 0,
            checkpoint_bytes: 0,
            runs: Vec::new(),
            incumbents: vec![("best".into(), 42)],
            beat_gaps_ms: [100.0, 140.0, 180.0],
        };
        let (a, b, torn) = (dir.path().join("a"), dir.path().join("b"), dir.path().join("c"));
        write_nodes(&a, vec![node_json("0", report.id, &[report.figures()])]).unwrap();
        write_nodes(&b, vec![node_json("1", report.id, &[report.figures(), report.figures()])]).unwrap();
        std::fs::write(&torn, "{\"nodes\": [").unwrap();
        let into = dir.path().join("all.json");
        assert_eq!(merge(&[a.clone(), b, torn, dir.path().join("never")], &into).unwrap(), 2);
        let all: Value = serde_json::from_str(&std::fs::read_to_string(&into).unwrap()).unwrap();
        assert_eq!(all["nodes"][1]["node"], "1");
        assert_eq!(all["nodes"][1]["runs"].as_array().map(Vec::len), Some(2));
        assert_eq!(all["nodes"][1]["runs"][1]["stats"]["jobs_stolen"], 7);
        assert_eq!(all["nodes"][0]["id"], (u64::MAX - 1).to_string());
        assert_eq!(all["nodes"][0]["stats"]["jobs_stolen"], 7);
        assert_eq!(all["nodes"][0]["incumbents"]["best"], 42);
        assert_eq!([&all["nodes"][0]["bytes_encoded"], &all["nodes"][0]["bytes_hashed"]], [8, 9]);
        assert_eq!(all["nodes"][0]["bytes_decoded"], 10);
        assert!(!a.exists(), "the parts are removed");
        let table = table(&all);
        assert_eq!(table.len(), 3, "a heading and a line per node: {table:?}");
        assert!(table[0].starts_with("node  runs  stolen"), "{}", table[0]);
        assert!(table[2].split_whitespace().eq(["1", "2", "7", "0", "0", "0", "0", "3", "0", "6"]), "{}", table[2]);
    }
}
