//! What the dashboard shows, as the master's driver keeps it: the nodes
//! and their state, each one's CPU and memory over time, the progress
//! estimate and jobs per second over time, the task stream and the run's
//! events. The driver writes it as things happen; the server
//! reads a copy per request.

use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant, SystemTime};

use serde::Serialize;

use satin_core::progress::Estimate;
use satin_proto::{NodeFigures, NodeId, NodeStats};

use super::stream::{unix_us, TaskStream};

/// Events kept (the oldest go first).
const EVENTS: usize = 200;
/// Samples of the job rate, of the estimate and of each node's use of
/// its machine kept: ten minutes at one a second.
const RATE_SAMPLES: usize = 600;

/// A node as the dashboard lists it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub(crate) struct NodeRow {
    /// Its short name: its number under a supervisor, SLURM or Kubernetes
    /// (as in the logs: `node 1`), else the address it listens on.
    pub(crate) name: String,
    /// Where it listens (`host:port`), if known.
    pub(crate) address: Option<String>,
    /// `alive`, `dropped` (failing or slow: the master sends it no work
    /// until its cool-down ends), `left` (a graceful leave) or `crashed`
    /// (removed by the majority, or dead as its supervisor saw).
    pub(crate) state: &'static str,
    /// Whether it is the master.
    pub(crate) master: bool,
    /// Jobs this master handed to it (its steals from the master), or for
    /// the master itself the jobs it stole and gave in all.
    pub(crate) jobs_stolen: u64,
    pub(crate) jobs_given: u64,
    /// What the node itself last reported (`None` before its first
    /// report): its calls, table, recoveries, traffic and CPU time.
    pub(crate) figures: Option<ReportedFigures>,
    /// Its use of its machine over time, one sample per report: (Unix
    /// ms, CPU cores busy since the last report, MB resident).
    pub(crate) usage: VecDeque<(u64, f64, f64)>,
}

/// A node's own figures as the dashboard shows them.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub(crate) struct ReportedFigures {
    pub(crate) cluster: String,
    pub(crate) spawns: u64,
    pub(crate) table_entries: u64,
    pub(crate) table_lookups: u64,
    pub(crate) table_hits: u64,
    pub(crate) recoveries: u64,
    pub(crate) bytes_sent: u64,
    pub(crate) cpu_s: f64,
    pub(crate) rss_bytes: u64,
}

#[derive(Debug, Clone, Serialize)]
struct Event {
    t_s: f64,
    text: String,
    /// Events of a kind that recurs (checkpoint writes) replace the
    /// previous one of their kind when it is the last listed.
    #[serde(skip)]
    kind: Option<&'static str>,
}

/// The dashboard's data.
#[derive(Debug)]
pub(crate) struct Board {
    app: String,
    started: Instant,
    started_unix_ms: u64,
    nodes: BTreeMap<NodeId, NodeRow>,
    /// Peers that said they leave: their removal is a leave, not a crash.
    leaving: std::collections::BTreeSet<NodeId>,
    events: VecDeque<Event>,
    /// (seconds since the start, jobs per second over the last second).
    rate: VecDeque<(f64, f64)>,
    last_sample: Option<(Instant, u64)>,
    estimate: Option<Estimate>,
    /// (Unix ms, progress, seconds left if known), once a second.
    progress_over_time: VecDeque<(u64, f64, Option<f64>)>,
    stream: TaskStream,
    /// Duplicates started and won, and drops, at the last look.
    stragglers_seen: (u64, u64, u64),
    trace: Option<String>,
    done: bool,
}

/// `/api/status`: the interface checks read (names kept as they are).
#[derive(Debug, Serialize)]
pub(crate) struct Status<'a> {
    app: &'a str,
    elapsed_s: f64,
    started_unix_ms: u64,
    progress: f64,
    eta_s: Option<f64>,
    done: bool,
    nodes: Vec<&'a NodeRow>,
    events: &'a VecDeque<Event>,
    jobs_per_s: &'a VecDeque<(f64, f64)>,
    progress_over_time: &'a VecDeque<(u64, f64, Option<f64>)>,
    task_stream: &'a TaskStream,
    trace: Option<&'a str>,
}

impl Board {
    pub(crate) fn new(app: &str, trace: Option<String>) -> Board {
        Board {
            app: app.to_string(),
            started: Instant::now(),
            started_unix_ms: unix_us(SystemTime::now()) / 1000,
            nodes: BTreeMap::new(),
            leaving: Default::default(),
            events: VecDeque::new(),
            rate: VecDeque::new(),
            last_sample: None,
            estimate: None,
            progress_over_time: VecDeque::new(),
            stream: TaskStream::default(),
            stragglers_seen: (0, 0, 0),
            trace,
            done: false,
        }
    }

    fn since_start(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    /// Something happened worth listing.
    pub(crate) fn event(&mut self, text: impl Into<String>) {
        self.push_event(None, text.into());
    }

    /// Something of a recurring `kind` happened: it replaces the last
    /// event if that was of the same kind (a run that writes its
    /// checkpoint ten times a second lists one line for a stretch of
    /// writes, not two hundred).
    pub(crate) fn recurring(&mut self, kind: &'static str, text: impl Into<String>) {
        if self.events.back().is_some_and(|e| e.kind == Some(kind)) {
            self.events.pop_back();
        }
        self.push_event(Some(kind), text.into());
    }

    fn push_event(&mut self, kind: Option<&'static str>, text: String) {
        if self.events.len() == EVENTS {
            self.events.pop_front();
        }
        self.events.push_back(Event { t_s: self.since_start(), text, kind });
    }

    /// Node `id` is in the run (a peer that connected, or this node).
    pub(crate) fn alive(&mut self, id: NodeId, name: String, address: Option<String>, master: bool) {
        let row = self.nodes.entry(id).or_insert_with(|| NodeRow {
            name: name.clone(),
            address: address.clone(),
            state: "alive",
            master,
            jobs_stolen: 0,
            jobs_given: 0,
            figures: None,
            usage: VecDeque::new(),
        });
        if matches!(row.state, "alive" | "dropped") {
            row.name = name;
            row.address = address.or(row.address.take());
            row.master = master;
        }
    }

    /// The nodes the master keeps dropped now show as `dropped`; those
    /// whose cool-down ended, as `alive` again.
    pub(crate) fn set_dropped(&mut self, dropped: &[NodeId]) {
        for (id, row) in self.nodes.iter_mut() {
            match (row.state, dropped.contains(id)) {
                ("alive", true) => row.state = "dropped",
                ("dropped", false) => row.state = "alive",
                _ => {}
            }
        }
    }

    /// What the master's stragglers did since the last look: duplicates
    /// of late jobs started and won, nodes dropped for failing.
    pub(crate) fn straggler_news(&mut self, stats: &NodeStats) {
        let now = (stats.duplicates_started, stats.duplicates_won, stats.drops);
        let before = std::mem::replace(&mut self.stragglers_seen, now);
        if now.0 > before.0 || now.1 > before.1 {
            let text = format!("duplicates of late jobs: {} started, {} won", now.0, now.1);
            self.recurring("duplicates", text);
        }
        if now.2 > before.2 {
            self.event(format!("a failing node dropped ({} so far)", now.2));
        }
    }

    /// Node `id` reported its own figures: they replace the master's view
    /// of its jobs; its use of the machine is sampled and the jobs it
    /// ended go onto the task stream.
    pub(crate) fn figures(&mut self, id: NodeId, f: &NodeFigures) {
        self.figures_at(id, f, unix_us(SystemTime::now()) / 1000);
    }

    /// [`Board::figures`], received at `now_ms` (Unix ms).
    fn figures_at(&mut self, id: NodeId, f: &NodeFigures, now_ms: u64) {
        let Some(row) = self.nodes.get_mut(&id) else { return };
        let cpu_s = f.cpu_ms as f64 / 1e3;
        let rss_mb = f.rss_bytes as f64 / 1e6;
        // CPU cores busy since the last report (the first counts from
        // the board's start, or from the node's if it came later).
        let (since_ms, cpu_before) = match &row.figures {
            Some(before) => (row.usage.back().map_or(self.started_unix_ms, |u| u.0), before.cpu_s),
            None => (self.started_unix_ms, 0.0),
        };
        if now_ms > since_ms {
            let cores = ((cpu_s - cpu_before).max(0.0) / ((now_ms - since_ms) as f64 / 1e3) * 100.0).round() / 100.0;
            if row.usage.len() == RATE_SAMPLES {
                row.usage.pop_front();
            }
            row.usage.push_back((now_ms, cores, (rss_mb * 10.0).round() / 10.0));
        }
        self.stream.add(&row.name, &f.jobs);
        row.jobs_stolen = f.jobs_stolen;
        row.jobs_given = f.jobs_given;
        row.figures = Some(ReportedFigures {
            cluster: f.cluster.clone(),
            spawns: f.spawns,
            table_entries: f.table_entries,
            table_lookups: f.table_lookups,
            table_hits: f.table_hits,
            recoveries: f.recoveries,
            bytes_sent: f.bytes_sent,
            cpu_s,
            rss_bytes: f.rss_bytes,
        });
    }

    /// Whether node `id` has a row.
    pub(crate) fn knows(&self, id: NodeId) -> bool {
        self.nodes.contains_key(&id)
    }

    /// Marks `leader` (if known) as the master.
    pub(crate) fn set_master(&mut self, leader: Option<NodeId>) {
        if let Some(leader) = leader {
            for (id, row) in &mut self.nodes {
                row.master = *id == leader;
            }
        }
    }

    /// Peer `id` said it leaves.
    pub(crate) fn leaving(&mut self, id: NodeId) {
        if self.leaving.insert(id) {
            let name = self.nodes.get(&id).map_or_else(|| id.to_string(), |r| r.name.clone());
            self.event(format!("node {name} leaves"));
        }
    }

    /// Peer `id` is out of the run.
    pub(crate) fn gone(&mut self, id: NodeId) {
        let left = self.leaving.contains(&id);
        if let Some(row) = self.nodes.get_mut(&id) {
            if matches!(row.state, "alive" | "dropped") {
                row.state = if left { "left" } else { "crashed" };
            }
        }
    }

    /// This node's figures (jobs stolen and given) and the estimate; a
    /// sample of the job rate once a second.
    pub(crate) fn update(&mut self, me: NodeId, stolen: u64, given: u64, estimate: Option<Estimate>) {
        if let Some(row) = self.nodes.get_mut(&me) {
            row.jobs_stolen = stolen;
            row.jobs_given = given;
        }
        self.estimate = estimate;
        let now = Instant::now();
        // Steals by every node, as each last reported (the master's own
        // count for nodes that have not reported yet).
        let jobs: u64 = self.nodes.values().map(|r| r.jobs_stolen).sum();
        match self.last_sample {
            Some((at, before)) if now.duration_since(at) >= Duration::from_secs(1) => {
                let rate = jobs.saturating_sub(before) as f64 / now.duration_since(at).as_secs_f64();
                if self.rate.len() == RATE_SAMPLES {
                    self.rate.pop_front();
                }
                self.rate.push_back((self.since_start(), rate));
                self.last_sample = Some((now, jobs));
                self.sample_progress();
            }
            Some(_) => {}
            None => self.last_sample = Some((now, jobs)),
        }
    }

    /// The estimate now, onto its history.
    fn sample_progress(&mut self) {
        if self.progress_over_time.len() == RATE_SAMPLES {
            self.progress_over_time.pop_front();
        }
        let eta = self.eta_s().map(|s| (s * 10.0).round() / 10.0);
        let sample = (unix_us(SystemTime::now()) / 1000, (self.progress() * 1e4).round() / 1e4, eta);
        self.progress_over_time.push_back(sample);
    }

    /// The run is over.
    pub(crate) fn finished(&mut self) {
        self.done = true;
        self.sample_progress();
    }

    fn eta_s(&self) -> Option<f64> {
        if self.is_done() {
            Some(0.0)
        } else {
            self.estimate.and_then(|e| e.eta).map(|d| d.as_secs_f64())
        }
    }

    fn is_done(&self) -> bool {
        self.done || self.estimate.is_some_and(|e| e.done)
    }

    /// The JSON of `/api/status`.
    pub(crate) fn status(&self) -> Status<'_> {
        Status {
            app: &self.app,
            elapsed_s: self.since_start(),
            started_unix_ms: self.started_unix_ms,
            progress: self.progress(),
            eta_s: self.eta_s(),
            done: self.is_done(),
            nodes: self.nodes.values().collect(),
            events: &self.events,
            jobs_per_s: &self.rate,
            progress_over_time: &self.progress_over_time,
            task_stream: &self.stream,
            trace: self.trace.as_deref(),
        }
    }

    /// Every node's row (for the metrics).
    pub(crate) fn rows(&self) -> impl Iterator<Item = &NodeRow> {
        self.nodes.values()
    }

    /// The estimate's share done (1 once the run is over).
    pub(crate) fn progress(&self) -> f64 {
        if self.is_done() {
            1.0
        } else {
            self.estimate.map_or(0.0, |e| e.fraction)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_removed_node_is_crashed_unless_it_said_it_leaves() {
        let mut b = Board::new("app", None);
        b.alive(1, "1".into(), Some("127.0.0.1:1".into()), true);
        b.alive(2, "2".into(), Some("127.0.0.1:2".into()), false);
        b.alive(3, "3".into(), Some("127.0.0.1:3".into()), false);
        b.leaving(3);
        b.gone(2);
        b.gone(3);
        let states: Vec<_> = b.rows().map(|r| (r.name.as_str(), r.state)).collect();
        assert_eq!(states, [("1", "alive"), ("2", "crashed"), ("3", "left")]);
        let json = serde_json::to_value(b.status()).unwrap();
        assert_eq!(json["nodes"][1]["address"], "127.0.0.1:2");
        assert_eq!(json["nodes"][1]["state"], "crashed");
        assert_eq!(json["progress"], 0.0);
        assert!(json["eta_s"].is_null(), "unknown before any estimate");
    }

    #[test]
    fn each_report_samples_the_node_s_cores_busy_and_memory_and_feeds_the_stream() {
        let mut b = Board::new("app", None);
        b.alive(1, "1".into(), None, true);
        let t0 = b.started_unix_ms;
        let bar = satin_proto::JobBar {
            worker: 0,
            start_us: t0 * 1000,
            took_us: 700_000,
            kind: satin_proto::JobKind::Redone,
            running: false,
        };
        let report = |cpu_ms, rss_bytes, jobs| NodeFigures { cpu_ms, rss_bytes, jobs, ..Default::default() };
        b.figures_at(1, &report(500, 20_000_000, vec![bar]), t0 + 1000);
        b.figures_at(1, &report(2_500, 30_000_000, vec![]), t0 + 2000);
        b.figures_at(9, &report(1, 1, vec![bar]), t0 + 2000);
        let json = serde_json::to_value(b.status()).unwrap();
        let usage = &json["nodes"][0]["usage"];
        assert_eq!(usage[0], serde_json::json!([t0 + 1000, 0.5, 20.0]), "half a core in the first second");
        assert_eq!(usage[1], serde_json::json!([t0 + 2000, 2.0, 30.0]), "two cores in the next");
        assert_eq!(json["nodes"][0]["figures"]["rss_bytes"], 30_000_000);
        assert_eq!(json["task_stream"]["bars"].as_array().unwrap().len(), 1, "an unknown node's bars are dropped");
        assert_eq!(json["task_stream"]["bars"][0][4], 2, "the redone bar");
        b.finished();
        let json = serde_json::to_value(b.status()).unwrap();
        assert_eq!(json["progress_over_time"].as_array().unwrap().last().unwrap()[1], 1.0);
    }

    #[test]
    fn recurring_events_replace_their_last_line_and_straggler_news_is_listed() {
        let mut b = Board::new("app", None);
        b.recurring("checkpoint", "checkpoint: 3 records");
        b.recurring("checkpoint", "checkpoint: 9 records");
        b.event("node 1 connected");
        b.recurring("checkpoint", "checkpoint: 12 records");
        b.alive(4, "4".into(), None, false);
        b.set_dropped(&[4]);
        assert_eq!(b.rows().next().map(|r| r.state), Some("dropped"));
        b.set_dropped(&[]);
        assert_eq!(b.rows().next().map(|r| r.state), Some("alive"));
        let stats = NodeStats { duplicates_started: 2, duplicates_won: 1, drops: 1, ..Default::default() };
        b.straggler_news(&stats);
        b.straggler_news(&stats);
        let json = serde_json::to_value(b.status()).unwrap();
        let texts: Vec<&str> = json["events"].as_array().unwrap().iter().map(|e| e["text"].as_str().unwrap()).collect();
        assert_eq!(
            texts,
            [
                "checkpoint: 9 records",
                "node 1 connected",
                "checkpoint: 12 records",
                "duplicates of late jobs: 2 started, 1 won",
                "a failing node dropped (1 so far)"
            ]
        );
    }
}
