//! Named simulator scenarios: the paper reproductions.

use satin::proto::FtMode;
use satin::sim::faults::{Fault, FaultKind, Trigger};
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
    c.faults =
        crash.iter().map(|&k| Fault { when: Trigger::Progress(0.5), kind: FaultKind::CrashCluster(k) }).collect();
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

/// Efficiency from 16 to 1024 nodes (one cluster of 16 per step up).
pub fn scale(base: &SimConfig) -> Vec<String> {
    let mut rows = Vec::new();
    let mut one = base.clone();
    one.clusters = 1;
    one.nodes_per_cluster = 1;
    one.faults.clear();
    let tree = sim::workload::Tree::build(&base.shape, base.mean_leaf_cost, base.cost, base.seed);
    let t1 = tree.total_work() as f64 / 1e9;
    for nodes in [16u32, 32, 64, 128, 256, 512, 1024] {
        let mut c = base.clone();
        c.clusters = (nodes / 16).max(1);
        c.nodes_per_cluster = 16;
        c.faults.clear();
        let start = std::time::Instant::now();
        let r = sim::run_on(&c, &tree);
        let eff = t1 / (r.virtual_seconds * nodes as f64);
        eprintln!(
            "{nodes} nodes: {:.1} s virtual, efficiency {:.3}, {:.1} s real",
            r.virtual_seconds,
            eff,
            start.elapsed().as_secs_f64()
        );
        rows.push(format!(
            "{{\"nodes\":{nodes},\"virtual_seconds\":{:.3},\"efficiency\":{eff:.4},\"result_ok\":{},\"jobs_stolen\":{},\"messages\":{},\"real_seconds\":{:.2}}}",
            r.virtual_seconds,
            r.result_ok,
            r.jobs_stolen,
            r.messages,
            start.elapsed().as_secs_f64()
        ));
    }
    println!("[\n  {}\n]", rows.join(",\n  "));
    rows
}
