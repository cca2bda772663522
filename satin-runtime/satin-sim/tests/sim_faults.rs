//! Random fault schedules in the simulator: crashes of up to N-1 nodes (the
//! master among them), graceful leaves, joins, message delay and reordering;
//! in a third of the runs a checkpoint file, and the loss of every node, a
//! suspend or bits flipped in the file, followed by new nodes resuming.
//! Every run must terminate with the fault-free answer, no job may run
//! while its result sits in the executing node's table replica, and no
//! lookup of a restarted root may compute a job a live node still runs.
//!
//! Each schedule keeps the broadcast table or a home table with 1 to 3
//! homes per key; one in eight runs on 8 to 64 nodes, the others on up to
//! 12.
//!
//! `SATIN_SIM_SEEDS=N` runs N seeds (default 10 000); `SATIN_SIM_SEED=S`
//! replays one seed and prints its report (`SATIN_SIM_HOMES=K` forces K
//! homes per key, 0 the broadcast table); with `SATIN_SIM_DEBUG=1` as well,
//! the simulator prints every violation and, if the run gets stuck, the
//! state of every node.

use satin_proto::quorum::QuorumConfig;
use satin_proto::{Config, FtMode, SplitMix64, StealPolicy, Stragglers, TablePlacement};
use satin_sim as sim;

mod common;
use satin_sim::faults::{Crashed, Fault, Kind, When};
use satin_sim::workload::{Cost, Shape};
use satin_sim::{SimCheckpoint, SimConfig};

const MS: u64 = 1_000_000;

fn random_config(seed: u64) -> SimConfig {
    let mut r = SplitMix64::new(seed);
    let clusters = 1 + r.below(3) as u32;
    let per = 1 + r.below(4) as u32;
    // One schedule in eight on a mid-size run (8 to 64 nodes), drawn from
    // a stream of its own so the small ones stay as they were.
    let mid = SplitMix64::new(seed ^ 0x5CA1_AB1E).below(8) == 0;
    let (clusters, per) = if mid { (clusters + 1, 4 * per) } else { (clusters, per) };
    let n = (clusters * per) as u64;
    let shape = match r.below(3) {
        0 => Shape::Uneven { leaves: 50 + r.below(350) as u32 },
        1 => Shape::Fib { n: 8 + r.below(6) as u32 },
        _ => Shape::Flat { leaves: 20 + r.below(80) as u32 },
    };
    let big_results = r.below(4) == 0;
    let protocol = Config {
        ft: FtMode::Table,
        steal: [StealPolicy::Random, StealPolicy::ClusterAware, StealPolicy::MasterWorker][r.below(3) as usize],
        pointer_threshold: 1024,
        table_capacity: (r.below(3) == 0).then(|| 5 + r.below(50) as usize),
        steal_backoff: (1 + r.below(5)) * MS,
        steal_timeout: None,
        checkpoint_interval: None,
        checkpoint_first: None,
        publish_after: (r.below(2) == 0).then(|| r.below(20) * MS),
        stragglers: Stragglers::default(),
        quorum: {
            // A stream of its own, like the table below.
            let mut q = SplitMix64::new(seed ^ 0x0B5E_55ED);
            let heartbeat = (10 + q.below(90)) * MS;
            QuorumConfig { heartbeat, suspect_after: heartbeat * (5 + q.below(10)), heal_wait: 5_000 * MS }
        },
        // Drawn from a stream of its own: the other draws stay as they were.
        table: match std::env::var("SATIN_SIM_HOMES").ok().and_then(|v| v.parse::<u64>().ok()) {
            Some(0) => TablePlacement::Broadcast,
            Some(k) => TablePlacement::Home { replicas: k as usize },
            None => match SplitMix64::new(seed ^ 0x7AB1_E5EE).below(3) {
                0 => TablePlacement::Broadcast,
                k => TablePlacement::Home { replicas: k as usize },
            },
        },
        sequence: false,
        supervised_output: false,
        ..Config::default()
    };
    // One original node survives; the others may crash or leave.
    let survivor = r.below(n);
    let mut faults = Vec::new();
    let mut victims: Vec<u64> = (0..n).filter(|&v| v != survivor).collect();
    let events = r.below(n);
    for _ in 0..events {
        if victims.is_empty() {
            break;
        }
        let v = victims.swap_remove(r.below(victims.len() as u64) as usize);
        let when = if r.below(2) == 0 { When::Share(r.unit() * 0.95) } else { When::After(r.below(300) * MS) };
        let kind = match r.below(6) {
            0 => Kind::Leave(v),
            1 => Kind::Drain(v),
            _ => Kind::crash(v),
        };
        faults.push(Fault { at: when, kind });
    }
    for _ in 0..r.below(3) {
        faults.push(Fault {
            at: When::After(r.below(300) * MS),
            kind: Kind::Join(Some(r.below(clusters as u64) as u32)),
        });
    }
    let mut cfg = SimConfig {
        clusters,
        nodes_per_cluster: per,
        nodes: None,
        shape,
        mean_leaf_cost: (1 + r.below(10)) * MS,
        cost: Cost::Exponential,
        local_latency: 50_000 + r.below(MS),
        wide_latency: MS + r.below(20 * MS),
        local_bandwidth: 100e6,
        wide_bandwidth: 10e6,
        jitter: r.below(5 * MS),
        fifo_links: r.below(2) == 0,
        detect_delay: 5 * MS + r.below(200 * MS),
        crash_notices: true,
        link_timeout: 3_000 * MS,
        run_to_end: false,
        rejoin_expelled: true,
        leave_timeout: r.below(500 * MS),
        // Half the runs model a shared incumbent; the seeds that once
        // failed keep the configuration they failed with.
        shared_values: seed.is_multiple_of(2) && !ONCE_FAILED.contains(&seed),
        protocol,
        result_bytes: if big_results { 2000 } else { 8 },
        param_bytes: 4,
        lanes: sim::Lanes::Unqueued,
        keep_orphans: r.below(4) != 0,
        faults,
        checkpoint: None,
        resume_after: None,
        slots: 1,
        master_slots: None,
        seed,
        time_limit: std::env::var("SATIN_SIM_LIMIT_S").ok().and_then(|v| v.parse::<u64>().ok()).unwrap_or(10_000)
            * 1_000
            * MS,
    };
    cfg.protocol.steal_timeout = (r.below(3) == 0).then(|| (1 + r.below(100)) * MS);
    // One schedule in six carries data: parameters and results of up to
    // a megabyte that occupy each link for tens to hundreds of
    // milliseconds, the quorum's messages on a lane of their own as in
    // real runs (drawn from a stream of its own).
    let mut d = SplitMix64::new(seed ^ 0xDA7A_0B1E);
    if d.below(6) == 0 {
        cfg.lanes = sim::Lanes::ControlApart;
        cfg.param_bytes = 4_096 + d.below(1 << 20) as usize;
        cfg.result_bytes = 4_096 + d.below(1 << 20) as usize;
        cfg.local_bandwidth = 20e6 + d.below(80) as f64 * 1e6;
        cfg.wide_bandwidth = cfg.local_bandwidth / 2.0;
    }
    // A third of the runs keep a checkpoint and may lose every node, be
    // suspended, or have their file damaged; they resume with new nodes.
    if r.below(3) == 0 {
        cfg.checkpoint = Some(SimCheckpoint {
            interval: (5 + r.below(100)) * MS,
            first: None,
            latency: r.below(5) * MS,
            bandwidth: 50e6,
        });
        cfg.resume_after = Some(r.below(50) * MS);
        let when = When::Share(0.05 + r.unit() * 0.9);
        match r.below(3) {
            0 => cfg.faults.push(Fault { at: when, kind: Kind::Crash(Crashed::All) }),
            1 => cfg.faults.push(Fault { at: when, kind: Kind::Suspend(None) }),
            _ => {}
        }
        for _ in 0..r.below(3) {
            cfg.faults.push(Fault { at: When::After(r.below(400) * MS), kind: Kind::Corrupt });
        }
    }
    cfg
}

fn check(seed: u64) -> Result<(), String> {
    let cfg = random_config(seed);
    let report = sim::run(&cfg);
    // Shared values move (a run of several nodes sends some), and no
    // improvement is lost to a member (see `sim::shared`).
    let shared_silent = cfg.shared_values && report.jobs_stolen > 0 && report.shared_messages == 0;
    // Exactly one node hands the answer to its output.
    if !report.result_ok
        || report.shown != 1
        || report.violations > 0
        || report.running_recomputed > 0
        || report.shared_missing > 0
        || shared_silent
    {
        return Err(format!(
            "seed {seed} failed; replay with SATIN_SIM_SEED={seed} cargo test --release -p satin-sim --test sim_faults\nfaults (as --chaos reads them): {}\nconfig: {cfg:?}\nreport: {}",
            sim::faults::to_spec(&cfg.faults),
            report.to_json()
        ));
    }
    Ok(())
}

/// Seeds beyond the usual range that once failed, run every time.
/// 39115: a lookup waiting for an old-epoch job on a node that died gave
/// up, though another node ran the same job of an older epoch still.
/// 92652: the checker missed that a node, its key's only home, dropped a
/// running job (no message to see). 176774: a lookup waiting for a job of
/// its own node that ended without a value gave up, though a home had
/// the value by then. 126848: a joiner, welcomed by a contact that had
/// not yet heard a member leave, put a running mark at the gone home (the
/// checker now counts from when the holder learns).
const ONCE_FAILED: &[u64] = &[39_115, 92_652, 126_848, 176_774];

#[test]
fn random_fault_schedules_terminate_with_the_fault_free_answer() {
    if let Ok(seed) = std::env::var("SATIN_SIM_SEED") {
        let seed: u64 = seed.parse().expect("SATIN_SIM_SEED is a number");
        let cfg = random_config(seed);
        println!("{cfg:?}\n{}", sim::run(&cfg).to_json());
        check(seed).unwrap();
        return;
    }
    let seeds: u64 = std::env::var("SATIN_SIM_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(10_000);
    let failures = common::failures((0..seeds).chain(ONCE_FAILED.iter().copied()), check);
    let seeds_failed: Vec<&str> = failures.iter().filter_map(|f| f.split(" failed").next()).collect();
    assert!(
        failures.is_empty(),
        "{} of {seeds} seeds failed ({}); first:\n{}",
        failures.len(),
        seeds_failed.join(", "),
        failures[0]
    );
}

/// A draining leave (SIGTERM) hands everything back: with links that keep
/// their order, as the real transport's do, no job is redone and no leaf
/// runs twice, however many nodes drain away and whenever they do.
#[test]
fn draining_nodes_leave_without_any_job_redone() {
    let seeds: u64 = std::env::var("SATIN_SIM_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(10_000) / 4;
    let drained = std::sync::atomic::AtomicUsize::new(0);
    let only: Option<u64> = std::env::var("SATIN_SIM_DRAIN_SEED").ok().and_then(|s| s.parse().ok());
    let check = |seed: u64| -> Result<(), String> {
        let mut cfg = random_config(seed);
        let n = (cfg.clusters * cfg.nodes_per_cluster) as u64;
        let mut r = SplitMix64::new(seed ^ 0xd4a1);
        // Never the master (node 0): its root job would only end at the
        // deadline, aborting work.
        cfg.faults.clear();
        for v in 1..n {
            if r.below(2) == 0 {
                continue;
            }
            let when = if r.below(2) == 0 { When::Share(r.unit() * 0.95) } else { When::After(r.below(300) * MS) };
            cfg.faults.push(Fault { at: when, kind: Kind::Drain(v) });
        }
        cfg.fifo_links = true;
        cfg.leave_timeout = 1_000_000 * MS;
        // Small messages: a status question queued behind a large job
        // outlasts its answer timeout and reruns the job (the straggler
        // rules, not drains).
        (cfg.lanes, cfg.param_bytes, cfg.result_bytes) = (sim::Lanes::Unqueued, 4, cfg.result_bytes.min(2000));
        // Copies of late jobs run leaves twice by design (under
        // master–worker an idle worker asks only the master, which has
        // nothing but copies to give); this test is about drains.
        cfg.protocol.stragglers.duplicates = false;
        drained.fetch_add(cfg.faults.len(), std::sync::atomic::Ordering::Relaxed);
        let report = sim::run(&cfg);
        match report.result_ok && report.redone == 0 && report.leaves_executed == report.leaves_needed {
            true => Ok(()),
            false => Err(format!("seed {seed}: {}\nconfig: {cfg:?}", report.to_json())),
        }
    };
    let failures = common::failures((0..seeds).filter(|s| only.is_none_or(|o| o == *s)), check);
    assert!(failures.is_empty(), "{} of {seeds} seeds failed; first:\n{}", failures.len(), failures[0]);
    assert!(drained.into_inner() > 0);
}

#[test]
fn the_same_seed_gives_the_same_run() {
    for seed in [3, 17, 99] {
        let cfg = random_config(seed);
        assert_eq!(sim::run(&cfg).to_json(), sim::run(&cfg).to_json(), "seed {seed}");
    }
}

#[test]
fn without_fault_tolerance_a_crash_fails_the_run_and_says_so() {
    let mut cfg = SimConfig {
        clusters: 2,
        nodes_per_cluster: 4,
        shape: Shape::Uneven { leaves: 400 },
        faults: vec![Fault { at: When::Share(0.3), kind: Kind::crash(5) }],
        ..SimConfig::default()
    };
    cfg.protocol.ft = FtMode::None;
    let r = sim::run(&cfg);
    assert!(!r.result_ok);
    assert!(r.failure.as_deref().unwrap_or("").contains("node 5 died"), "{:?}", r.failure);
}

#[test]
fn the_table_saves_orphans_that_naive_recovery_recomputes() {
    let base = SimConfig {
        clusters: 4,
        nodes_per_cluster: 4,
        shape: Shape::Uneven { leaves: 3000 },
        mean_leaf_cost: 20 * MS,
        faults: vec![Fault { at: When::Share(0.5), kind: Kind::Crash(Crashed::Cluster(0)) }],
        seed: 7,
        ..SimConfig::default()
    };
    let table = sim::run(&base);
    let mut naive_cfg = base.clone();
    naive_cfg.protocol.ft = FtMode::Naive;
    let naive = sim::run(&naive_cfg);
    assert!(table.result_ok && naive.result_ok);
    assert!(table.orphans_saved > 0 && table.table_hits > 0, "{}", table.to_json());
    assert!(table.leaves_executed < naive.leaves_executed, "{} vs {}", table.to_json(), naive.to_json());
    assert!(table.virtual_seconds < naive.virtual_seconds);
}
