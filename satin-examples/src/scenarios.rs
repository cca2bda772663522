//! Named simulator scenarios: the paper reproductions.

use satin::policy::{FtMode, TablePlacement, DEFAULT_REPLICAS, HOME_TABLE_FROM};
use satin::sim::faults::{Crashed, Fault, Kind, When};
use satin::sim::{self, SimConfig};

fn row(name: &str, cfg: &SimConfig) -> String {
    let r = sim::run(cfg);
    eprintln!(
        "{name}: {:.1} s, redundancy {:.2} %, ok {}, stolen {}, table hits {}",
        r.virtual_seconds,
        100.0 * r.redundancy(),
        r.result_ok,
        r.jobs_stolen,
        r.table_hits
    );
    format!(
        "{{\"name\":\"{name}\",\"virtual_seconds\":{:.3},\"leaves_executed\":{},\"leaves_needed\":{},\"result_ok\":{}}}",
        r.virtual_seconds, r.leaves_executed, r.leaves_needed, r.result_ok
    )
}

/// Leaves and mean leaf cost of the Fig. 4 workload: 16 000 × 0.5 s of work,
/// 125 s on 64 nodes at perfect efficiency.
pub const FIG4_LEAVES: u32 = 16_000;
pub const FIG4_LEAF_COST: u64 = 500_000_000;

/// The Fig. 4 setup on `clusters` clusters of 16, with recovery `ft`, the
/// clusters in `crash` crashing once half of the leaves have run.
pub fn fig4_config(base: &SimConfig, clusters: u32, ft: FtMode, crash: &[u32]) -> SimConfig {
    let mut c = base.clone();
    // Calibrated: the fault-free run on 4 × 16 nodes takes ≈ 125 s.
    c.clusters = clusters;
    c.nodes_per_cluster = 16;
    c.shape = sim::workload::Shape::Uneven { leaves: FIG4_LEAVES };
    c.mean_leaf_cost = FIG4_LEAF_COST;
    c.protocol.ft = ft;
    c.faults = crash.iter().map(|&k| Fault { at: When::Share(0.5), kind: Kind::Crash(Crashed::Cluster(k)) }).collect();
    c
}

/// Seed paper Fig. 4: 4 clusters; crash 1 or 2 clusters at 50 %, with the
/// table and naive recovery, against fewer clusters from the start; and the
/// same with the master inside the crashed cluster.
pub fn fig4(base: &SimConfig) -> Vec<String> {
    let mut rows = Vec::new();
    let with = |clusters: u32, ft: FtMode, crash: &[u32]| fig4_config(base, clusters, ft, crash);
    rows.push(row("4 clusters, no crash", &with(4, FtMode::Table, &[])));
    // Cluster 0 holds the master (node 0): crash the last clusters first.
    rows.push(row("1 of 4 crashed, table", &with(4, FtMode::Table, &[3])));
    rows.push(row("1 of 4 crashed, naive", &with(4, FtMode::Naive, &[3])));
    rows.push(row("3 clusters from the start", &with(3, FtMode::Table, &[])));
    rows.push(row("2 of 4 crashed, table", &with(4, FtMode::Table, &[2, 3])));
    rows.push(row("2 of 4 crashed, naive", &with(4, FtMode::Naive, &[2, 3])));
    rows.push(row("2 clusters from the start", &with(2, FtMode::Table, &[])));
    rows.push(row("1 of 4 crashed with the master, table", &with(4, FtMode::Table, &[0])));
    rows.push(row("1 of 4 crashed with the master, naive", &with(4, FtMode::Naive, &[0])));
    rows.push(row("2 of 4 crashed with the master, table", &with(4, FtMode::Table, &[0, 1])));
    rows.push(row("2 of 4 crashed with the master, naive", &with(4, FtMode::Naive, &[0, 1])));
    println!("[\n  {}\n]", rows.join(",\n  "));
    rows
}

/// A scale sweep: node counts, and the work per node (weak scaling) or
/// the base configuration's tree for every size (strong scaling).
#[derive(Clone, Debug)]
pub struct ScaleSweep {
    pub nodes: Vec<u32>,
    pub leaves_per_node: Option<u32>,
    pub nodes_per_cluster: u32,
}

impl Default for ScaleSweep {
    fn default() -> Self {
        ScaleSweep { nodes: vec![16, 32, 64, 128, 256, 512, 1024], leaves_per_node: None, nodes_per_cluster: 64 }
    }
}

/// Which table a run of `nodes` nodes under `cfg` keeps, and its homes per key.
fn table_of(cfg: &SimConfig, nodes: u32) -> (&'static str, usize) {
    match cfg.protocol.table {
        TablePlacement::Broadcast => ("broadcast", 0),
        TablePlacement::Home { replicas } => ("home", replicas.max(1)),
        TablePlacement::Auto if nodes as usize >= HOME_TABLE_FROM => ("home", DEFAULT_REPLICAS),
        TablePlacement::Auto => ("broadcast", 0),
    }
}

/// The process's peak resident memory since the last [`reset_peak_memory`],
/// in MB (Linux; 0 elsewhere).
fn peak_memory_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

fn reset_peak_memory() {
    // "5" resets the peak (Linux >= 4.0); without it rows show the peak so far.
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Efficiency, traffic and table size over a range of node counts, in
/// clusters of `nodes_per_cluster` (the last one partly filled).
pub fn scale(base: &SimConfig, sweep: &ScaleSweep) -> Vec<String> {
    let mut rows = Vec::new();
    let fixed = sweep
        .leaves_per_node
        .is_none()
        .then(|| sim::workload::Tree::build(&base.shape, base.mean_leaf_cost, base.cost, base.seed));
    for &nodes in &sweep.nodes {
        let nodes = nodes.max(1);
        let mut c = base.clone();
        c.nodes_per_cluster = sweep.nodes_per_cluster.clamp(1, nodes);
        c.clusters = nodes.div_ceil(c.nodes_per_cluster);
        c.nodes = Some(nodes);
        c.faults.clear();
        // The master beats to every member and every member back: sparser
        // on large runs (a beat per second at 1 000 members and more).
        let heartbeat = (nodes as u64 * 1_000_000).clamp(100_000_000, 1_000_000_000);
        c.protocol.quorum.heartbeat = heartbeat;
        c.protocol.quorum.suspect_after = 10 * heartbeat;
        reset_peak_memory();
        let start = std::time::Instant::now();
        let own;
        let tree = match (&fixed, sweep.leaves_per_node) {
            (Some(t), _) => t,
            (None, per) => {
                let leaves = (nodes as u64 * per.unwrap_or(1000).max(1) as u64).min(u32::MAX as u64) as u32;
                c.shape = sim::workload::Shape::Uneven { leaves };
                own = sim::workload::Tree::build(&c.shape, c.mean_leaf_cost, c.cost, c.seed);
                &own
            }
        };
        let t1 = tree.total_work() as f64 / 1e9;
        let r = sim::run_on(&c, tree);
        let real = start.elapsed().as_secs_f64();
        let eff = t1 / (r.virtual_seconds * nodes as f64);
        let jobs = tree.jobs() as f64;
        let (table, replicas) = table_of(&c, nodes);
        let peak = peak_memory_mb();
        // Per job: the messages of the work (membership beats apart).
        let work_messages = r.messages - r.quorum_messages;
        eprintln!(
            "{nodes} nodes, {table} table: {:.1} s virtual, efficiency {eff:.3}, {:.1} messages per job ({:.1} steal, {:.1} table), {:.0} membership messages per second, {:.0} table entries per node, {real:.1} s real, {peak:.0} MB",
            r.virtual_seconds,
            work_messages as f64 / jobs,
            r.steal_messages as f64 / jobs,
            r.table_messages as f64 / jobs,
            r.quorum_messages as f64 / r.virtual_seconds.max(1e-9),
            r.table_entries_total as f64 / nodes as f64,
        );
        rows.push(format!(
            "{{\"nodes\":{nodes},\"table\":\"{table}\",\"replicas\":{replicas},\"leaves\":{},\"jobs\":{},\"virtual_seconds\":{:.3},\"efficiency\":{eff:.4},\"result_ok\":{},\"jobs_stolen\":{},\"messages\":{},\"messages_per_job\":{:.3},\"steal_messages_per_job\":{:.3},\"table_messages_per_job\":{:.3},\"membership_messages_per_s\":{:.1},\"bytes\":{},\"bytes_per_job\":{:.1},\"table_entries_max\":{},\"table_entries_per_node\":{:.1},\"real_seconds\":{real:.2},\"peak_memory_mb\":{peak:.0}}}",
            tree.leaves(),
            tree.jobs(),
            r.virtual_seconds,
            r.result_ok,
            r.jobs_stolen,
            r.messages,
            work_messages as f64 / jobs,
            r.steal_messages as f64 / jobs,
            r.table_messages as f64 / jobs,
            r.quorum_messages as f64 / r.virtual_seconds.max(1e-9),
            r.bytes,
            r.bytes as f64 / jobs,
            r.table_entries,
            r.table_entries_total as f64 / nodes as f64,
        ));
    }
    println!("[\n  {}\n]", rows.join(",\n  "));
    rows
}

/// The two applications of seed 002, as job trees: TSP (compute-bound,
/// small results; 1106 s uninterrupted on 32 nodes in the paper) and the
/// raytracer (results are image parts that travel; 322 s).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seed002App {
    Tsp,
    Raytracer,
}

impl Seed002App {
    fn name(self) -> &'static str {
        match self {
            Seed002App::Tsp => "tsp",
            Seed002App::Raytracer => "raytracer",
        }
    }
}

/// Seed 002's setup for `app`: `clusters` × `per` nodes, the storage of a
/// shared file system (50 MB/s, 10 ms per sync), checkpoints every
/// `interval` (if any) with the first one placed so that `fault_at` falls in
/// the middle of an interval.
pub fn seed002_config(
    base: &SimConfig,
    app: Seed002App,
    per: u32,
    ft: FtMode,
    interval: Option<u64>,
    faults: Vec<Fault>,
    fault_at: u64,
) -> SimConfig {
    let mut c = base.clone();
    c.clusters = 2;
    c.nodes_per_cluster = per;
    (c.shape, c.mean_leaf_cost, c.result_bytes) = match app {
        // 35 000 leaves of 1 s on 32 nodes: about 1 100 s.
        Seed002App::Tsp => (sim::workload::Shape::Uneven { leaves: 35_000 }, 1_000_000_000, 64),
        // 10 000 leaves of 1 s, each result a 32 KiB image part: about 320 s.
        Seed002App::Raytracer => (sim::workload::Shape::Uneven { leaves: 10_000 }, 1_000_000_000, 32 << 10),
    };
    c.protocol.ft = ft;
    c.protocol.publish_after = Some(1_000_000_000);
    // As QUIC streams do: a large table sync is not overtaken by the small
    // steal replies sent after it.
    c.fifo_links = true;
    c.faults = faults;
    c.checkpoint = interval.map(|i| {
        let half = i / 2;
        let first = (fault_at + i - half % i) % i;
        sim::SimCheckpoint {
            interval: i,
            first: Some(if first == 0 { i } else { first }),
            latency: 10_000_000,
            bandwidth: 50e6,
        }
    });
    c
}

fn cluster_faults(kind: fn(u64) -> Kind, cluster: u32, per: u32, at: u64) -> Vec<Fault> {
    (0..per).map(|i| Fault { at: When::After(at), kind: kind((cluster * per + i) as u64) }).collect()
}

/// Seed 002, Fig. 2, Fig. 3 and Table 2, in the simulator: for each
/// application, the fault-free run with and without checkpoints (1, 2,
/// 5 min), one of the two clusters removed half-way (its crash: naive,
/// orphan saving, checkpoints; its graceful leave; the master inside it in
/// half the runs, the rows average both), 1.5 clusters from the start, and
/// a suspend half-way resumed on the same nodes.
pub fn checkpoint(base: &SimConfig) -> Vec<String> {
    let mut rows = Vec::new();
    const S: u64 = 1_000_000_000;
    for app in [Seed002App::Tsp, Seed002App::Raytracer] {
        let cfg = |ft, interval, faults, at| seed002_config(base, app, 16, ft, interval, faults, at);
        let t0 = sim::run(&cfg(FtMode::Table, None, vec![], 0));
        let half = (t0.virtual_seconds * 0.5 * 1e9) as u64;
        let mut out = |name: String, reports: &[sim::Report]| {
            let n = reports.len() as f64;
            let secs = reports.iter().map(|r| r.virtual_seconds).sum::<f64>() / n;
            let redundancy = reports.iter().map(|r| r.redundancy()).sum::<f64>() / n;
            let bytes = reports.iter().map(|r| r.checkpoint_file_bytes).max().unwrap_or(0);
            let ok = reports.iter().all(|r| r.result_ok);
            eprintln!("{name}: {secs:.1} s, redundancy {:.2} %, file {bytes} B, ok {ok}", 100.0 * redundancy);
            rows.push(format!(
                "{{\"app\":\"{}\",\"name\":\"{name}\",\"virtual_seconds\":{secs:.3},\"redundancy\":{redundancy:.5},\"checkpoint_file_bytes\":{bytes},\"result_ok\":{ok}}}",
                app.name()
            ));
        };
        out("uninterrupted, no checkpoints".into(), std::slice::from_ref(&t0));
        for mins in [1, 2, 5] {
            let r = sim::run(&cfg(FtMode::Table, Some(mins * 60 * S), vec![], 0));
            out(format!("uninterrupted, checkpoint every {mins} min"), &[r]);
        }
        // One cluster removed at half the fault-free time; the master (node
        // 0) is in cluster 0.
        let crashed = |ft, interval| -> Vec<sim::Report> {
            [1u32, 0]
                .iter()
                .map(|&k| {
                    let faults = vec![Fault { at: When::After(half), kind: Kind::Crash(Crashed::Cluster(k)) }];
                    sim::run(&cfg(ft, interval, faults, half))
                })
                .collect()
        };
        out("1 of 2 crashed, naive".into(), &crashed(FtMode::Naive, None));
        out("1 of 2 crashed, orphan saving".into(), &crashed(FtMode::Table, None));
        for mins in [1, 2, 5] {
            out(format!("1 of 2 crashed, checkpoint every {mins} min"), &crashed(FtMode::Table, Some(mins * 60 * S)));
        }
        let left: Vec<sim::Report> = [1u32, 0]
            .iter()
            .map(|&k| sim::run(&cfg(FtMode::Table, None, cluster_faults(Kind::Leave, k, 16, half), half)))
            .collect();
        out("1 of 2 leaves gracefully".into(), &left);
        let mut smaller = seed002_config(base, app, 12, FtMode::Table, None, vec![], 0);
        smaller.nodes_per_cluster = 12;
        out("1.5 clusters from the start".into(), &[sim::run(&smaller)]);
        let mut suspended =
            cfg(FtMode::Table, Some(60 * S), vec![Fault { at: When::After(half), kind: Kind::Suspend(None) }], half);
        suspended.resume_after = Some(0);
        out("suspend half-way, resume on the same nodes (1 min checkpoints)".into(), &[sim::run(&suspended)]);
    }
    println!("[\n  {}\n]", rows.join(",\n  "));
    rows
}

const HOUR: u64 = 3_600_000_000_000;
/// Day 3's degraded tasks take this much longer: past the narrow hard
/// timeout (1.10), within the default one (2).
const SLOW_FACTOR: f64 = 1.5;

/// Seed 003's Monte Carlo experiment: 4 machines × 2 job slots (nodes 1–4;
/// node 0 is the master and runs no task), 960 independent tasks of one
/// hour, the failures of its Table II — day 1 machine 2's workers killed
/// every 4 h (the tasks vanish without a word); day 2 machine 3's job
/// service killed every 4 h (its tasks fail and say so); day 3 machine 4
/// runs new tasks 1.5 times as long for 2 h of every 4; day 4 machine 1
/// refuses new tasks for 2 h of every 4 — with the user's estimate of one
/// hour and timeouts `soft` and `hard` × that.
pub fn gridsuperscalar_config(base: &SimConfig, soft: f64, hard: f64) -> SimConfig {
    let mut c = base.clone();
    c.clusters = 1;
    c.nodes_per_cluster = 5;
    c.slots = 2;
    c.master_slots = Some(0);
    c.shape = sim::workload::Shape::Flat { leaves: 960 };
    c.cost = sim::workload::Cost::Constant;
    c.mean_leaf_cost = HOUR;
    c.local_latency = 1_000_000;
    c.local_bandwidth = 10e6;
    c.detect_delay = 60_000_000_000;
    c.time_limit = 400 * HOUR;
    c.protocol.steal = satin::policy::StealPolicy::Random;
    c.protocol.publish_after = None;
    // An idle slot asks again every 10 s (GRID superscalar polls every 30 s).
    c.protocol.steal_backoff = 10_000_000_000;
    // Beats on the grid's scale too: every 10 s, a silent minute suspected
    // (as the simulated detector's delay). No machine of the experiment
    // dies: at the LAN's 100 ms the beats were 99 % of the events of a
    // run of 126 virtual hours, for the same hours and the same tables.
    c.protocol.quorum = satin::policy::QuorumConfig {
        heartbeat: 10_000_000_000,
        suspect_after: 60_000_000_000,
        heal_wait: 600_000_000_000,
    };
    c.protocol.stragglers = satin::policy::Stragglers {
        expect: Some(HOUR),
        soft,
        hard,
        answer_timeout: 60_000_000_000,
        retries: 1000,
        strike_window: 4 * HOUR,
        cool_down: HOUR / 6,
        max_drops: 1000,
        duplicate_after: 0,
        ..satin::policy::Stragglers::default()
    };
    let at = |h: f64| When::After((h * HOUR as f64) as u64);
    // The kills of days 1 and 2 strike once in every 4 hours, at a moment
    // drawn from the seed (so they hit tasks at any point of their hour).
    let mut rng = satin::sim::SplitMix64::new(base.seed ^ 0x6515);
    let mut moment = |k: u32| 4.0 * k as f64 + 4.0 * rng.below(1 << 20) as f64 / (1 << 20) as f64;
    let mut f = Vec::new();
    for k in 0..6 {
        f.push(Fault { at: at(moment(k)), kind: Kind::KillJobs(2) });
        f.push(Fault { at: at(24.0 + moment(k)), kind: Kind::FailRunning(3) });
    }
    // Days 3 and 4 follow a fixed pattern from a moment of the day drawn
    // from the seed: 2 hours on, then 2 off.
    let phase = moment(0);
    for k in 0..4 {
        let h = 48.0 + phase + 4.0 * k as f64;
        f.push(Fault { at: at(h), kind: Kind::Slow { node: 4, factor: SLOW_FACTOR } });
        f.push(Fault { at: at(h + 2.0), kind: Kind::Slow { node: 4, factor: 1.0 } });
    }
    let phase = moment(0);
    for k in 0..6 {
        let h = 72.0 + phase + 4.0 * k as f64;
        f.push(Fault { at: at(h), kind: Kind::Fail { node: 1, rate: 1.0 } });
        f.push(Fault { at: at(h + 2.0), kind: Kind::Fail { node: 1, rate: 0.0 } });
    }
    c.faults = f;
    c
}

/// The published figures of seed 003 (Table III, total time).
const GS_PUBLISHED_HOURS: f64 = 135.0 + 47.0 / 60.0 + 39.0 / 3600.0;
const GS_EXPECTED_HOURS: f64 = 125.25;

/// One run of [`gridsuperscalar_config`] as a JSON object: the total time
/// beside the published one, Table III's columns per machine.
fn gridsuperscalar_run(base: &SimConfig, soft: f64, hard: f64) -> (String, sim::Report) {
    let r = sim::run(&gridsuperscalar_config(base, soft, hard));
    let hours = r.virtual_seconds * 1e9 / HOUR as f64;
    let machines: Vec<String> = (1..r.per_node.len())
        .map(|i| {
            let n = &r.per_node[i];
            let days = (hours / 24.0).ceil().max(1.0) as usize;
            let mut per_day = vec![0u64; days];
            for t in &n.started_at {
                per_day[((*t / (24 * HOUR)) as usize).min(days - 1)] += 1;
            }
            let per_day: Vec<String> = per_day.iter().map(u64::to_string).collect();
            format!(
                "{{\"name\":\"bscgrid0{i}\",\"completed\":{},\"failed\":{},\"jobs_per_day\":[{}],\"drops\":{}}}",
                n.leaves,
                n.strikes,
                per_day.join(","),
                n.drops
            )
        })
        .collect();
    let json = format!(
        "{{\"soft\":{soft},\"hard\":{hard},\"total_hours\":{hours:.3},\"ideal_hours\":120,\"expected_hours\":{GS_EXPECTED_HOURS},\"published_hours\":{GS_PUBLISHED_HOURS:.3},\"result_ok\":{},\"tasks_completed_twice\":{},\"tasks_executed\":{},\"tasks\":{},\"duplicates_started\":{},\"duplicates_won\":{},\"duplicates_aborted\":{},\"status_checks\":{},\"jobs_lost\":{},\"hard_timeouts\":{},\"retried\":{},\"drops\":{},\"machines\":[{}]}}",
        r.result_ok,
        r.completed_twice,
        r.leaves_executed,
        r.leaves_needed,
        r.duplicates_started,
        r.duplicates_won,
        r.duplicates_aborted,
        r.status_checks,
        r.jobs_lost,
        r.hard_timeouts,
        r.retried,
        r.drops,
        machines.join(",")
    );
    (json, r)
}

/// Seed 003, Tables II and III: the narrow timeouts of the experiment
/// (soft 1.05, hard 1.10) and the defaults (1.25, 2). Prints one JSON
/// object: the narrow run, with the default run under `default_timeouts`.
pub fn gridsuperscalar(base: &SimConfig) -> String {
    let (narrow, r) = gridsuperscalar_run(base, 1.05, 1.10);
    let (default, d) = gridsuperscalar_run(base, 1.25, 2.0);
    for (name, r) in [("narrow timeouts (1.05, 1.10)", &r), ("default timeouts (1.25, 2)", &d)] {
        eprintln!(
            "gridsuperscalar, {name}: {:.2} h (ideal 120, expected 125.25, published {GS_PUBLISHED_HOURS:.2}), ok {}, completed twice {}",
            r.virtual_seconds * 1e9 / HOUR as f64,
            r.result_ok,
            r.completed_twice
        );
    }
    let json = format!("{},\"default_timeouts\":{default}}}", narrow.trim_end_matches('}'));
    println!("{json}");
    json
}

/// Stragglers in the Fig. 4 setup (4 × 16 nodes): one node 10 × slower
/// from the start, or hung from the start, with and without duplicates,
/// against the run without that node and the fault-free run.
pub fn stragglers(base: &SimConfig) -> Vec<String> {
    let mut rows = Vec::new();
    let at0 = When::After(0);
    let slow = vec![Fault { at: at0, kind: Kind::Slow { node: 37, factor: 10.0 } }];
    let hang = vec![Fault { at: at0, kind: Kind::hang(37) }];
    let absent = vec![Fault { at: at0, kind: Kind::Leave(37) }];
    let with = |faults: &[Fault], duplicates: bool| {
        let mut c = fig4_config(base, 4, FtMode::Table, &[]);
        c.faults = faults.to_vec();
        c.protocol.stragglers.duplicates = duplicates;
        // A hung node without duplicates may never let the run end.
        c.time_limit = 600_000_000_000;
        c
    };
    let run = |name: &str, cfg: &SimConfig| {
        let r = sim::run(cfg);
        eprintln!(
            "{name}: {:.1} s, redundancy {:.2} %, ok {}, duplicates {} (won {}), hard timeouts {}, drops {}",
            r.virtual_seconds,
            100.0 * r.redundancy(),
            r.result_ok,
            r.duplicates_started,
            r.duplicates_won,
            r.hard_timeouts,
            r.drops
        );
        let row = format!(
            "{{\"name\":\"{name}\",\"virtual_seconds\":{:.3},\"leaves_executed\":{},\"leaves_needed\":{},\"result_ok\":{},\"duplicates_started\":{},\"duplicates_won\":{},\"loser_seconds\":{:.3},\"hard_timeouts\":{},\"drops\":{},\"completed_twice\":{}}}",
            r.virtual_seconds,
            r.leaves_executed,
            r.leaves_needed,
            r.result_ok,
            r.duplicates_started,
            r.duplicates_won,
            r.loser_seconds,
            r.hard_timeouts,
            r.drops,
            r.completed_twice
        );
        (row, r.virtual_seconds)
    };
    let (row, _) = run("64 nodes, no faults", &with(&[], true));
    rows.push(row);
    let (row, _) = run("no faults, duplicates off", &with(&[], false));
    rows.push(row);
    let (row, _) = run("node 37 absent (left at the start)", &with(&absent, true));
    rows.push(row);
    for (what, faults) in [("10 x slower", &slow), ("hung", &hang)] {
        let (row, _) = run(&format!("node 37 {what}, duplicates"), &with(faults, true));
        rows.push(row);
        let (row, _) = run(&format!("node 37 {what}, no duplicates"), &with(faults, false));
        rows.push(row);
    }
    println!("[\n  {}\n]", rows.join(",\n  "));
    rows
}

/// The three load-balancing algorithms (random stealing, cluster-aware
/// random stealing, master–worker) on the Fig. 4 setup — its uneven tree,
/// and a flat tree of the same leaves (a Monte Carlo run's shape) — fault
/// free and with one of the four clusters crashing at 50 %.
pub fn load_balancing(base: &SimConfig) -> Vec<String> {
    use satin::policy::StealPolicy;
    let mut rows = Vec::new();
    for (shape_name, flat) in [("Fig. 4 tree", false), ("flat", true)] {
        for crash in [&[][..], &[3]] {
            for (alg, policy) in
                [("rs", StealPolicy::Random), ("crs", StealPolicy::ClusterAware), ("mw", StealPolicy::MasterWorker)]
            {
                let mut c = fig4_config(base, 4, FtMode::Table, crash);
                c.protocol.steal = policy;
                if flat {
                    c.shape = sim::workload::Shape::Flat { leaves: FIG4_LEAVES };
                }
                let r = sim::run(&c);
                let ideal = sim::workload::Tree::build(&c.shape, c.mean_leaf_cost, c.cost, c.seed).total_work() as f64
                    / 1e9
                    / 64.0;
                let faults = if crash.is_empty() { "no crash" } else { "1 of 4 clusters crashed at 50 %" };
                eprintln!(
                    "{shape_name}, {faults}, {alg}: {:.1} s (ideal on 64 nodes {ideal:.1} s), stolen {}, messages {}, ok {}",
                    r.virtual_seconds, r.jobs_stolen, r.messages, r.result_ok
                );
                rows.push(format!(
                    "{{\"shape\":\"{shape_name}\",\"faults\":\"{faults}\",\"alg\":\"{alg}\",\"virtual_seconds\":{:.3},\"ideal_seconds\":{ideal:.3},\"jobs_stolen\":{},\"messages\":{},\"leaves_executed\":{},\"leaves_needed\":{},\"result_ok\":{}}}",
                    r.virtual_seconds, r.jobs_stolen, r.messages, r.leaves_executed, r.leaves_needed, r.result_ok
                ));
            }
        }
    }
    println!("[\n  {}\n]", rows.join(",\n  "));
    rows
}
