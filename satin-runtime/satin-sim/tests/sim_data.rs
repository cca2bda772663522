//! Jobs that carry data: parameters and results that occupy a link for
//! seconds. On a link that sends one message at a time, a beat queued
//! behind them arrives late and the majority removes a live node; with
//! the quorum's messages on a lane of their own — real runs' control
//! stream and datagrams — nobody is removed.

use satin_proto::quorum::QuorumConfig;
use satin_proto::Config;
use satin_sim as sim;
use satin_sim::workload::{Cost, Shape};
use satin_sim::{Lanes, SimConfig};

const MS: u64 = 1_000_000;

/// Three nodes sorting by merging: every stolen job carries 4 MB there
/// and 4 MB back over a 2 MB/s link (two seconds each way, twice the
/// silence that removes a member), nobody crashes, and only the detector
/// decides (no death notices).
fn data_heavy(lanes: Lanes, seed: u64) -> SimConfig {
    SimConfig {
        clusters: 1,
        nodes_per_cluster: 3,
        shape: Shape::Fib { n: 13 },
        mean_leaf_cost: 20 * MS,
        cost: Cost::Exponential,
        local_latency: 200_000,
        local_bandwidth: 2e6,
        param_bytes: 4 << 20,
        result_bytes: 4 << 20,
        lanes,
        fifo_links: true,
        crash_notices: false,
        protocol: Config {
            quorum: QuorumConfig { heartbeat: 100 * MS, suspect_after: 1_000 * MS, heal_wait: 30_000 * MS },
            ..Config::default()
        },
        seed,
        time_limit: 3_600_000 * MS,
        ..SimConfig::default()
    }
}

#[test]
fn beats_behind_data_remove_live_nodes_and_beats_apart_remove_none() {
    let mut removed_behind_data = 0;
    for seed in 0..6 {
        let one = sim::run(&data_heavy(Lanes::One, seed));
        removed_behind_data += one.removals;
        let apart = sim::run(&data_heavy(Lanes::ControlApart, seed));
        // The figures `docs/results.md` quotes ("Programs that move data").
        let ms = |r: &sim::Report, q: f64| r.beat_delay(q) as f64 / 1e6;
        println!(
            "seed {seed}: beat delay p50/p99/max (ms) one lane {:.1}/{:.1}/{:.1}, control apart {:.1}/{:.1}/{:.1}; \
             removals {} / {}",
            ms(&one, 0.5),
            ms(&one, 0.99),
            ms(&one, 1.0),
            ms(&apart, 0.5),
            ms(&apart, 0.99),
            ms(&apart, 1.0),
            one.removals,
            apart.removals
        );
        assert!(apart.beat_delay(1.0) < 100 * MS, "seed {seed}: a beat waited behind data");
        assert!(apart.result_ok, "seed {seed}: {}", apart.to_json());
        assert_eq!(apart.removals, 0, "seed {seed}: a live node removed: {}", apart.to_json());
        assert_eq!(apart.shown, 1, "seed {seed}: {}", apart.to_json());
    }
    assert!(removed_behind_data > 0, "beats queued behind data should have looked like deaths");
}
