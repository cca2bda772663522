//! `simulate`: the deterministic simulator of the distributed protocol.
//! Every simulated node runs the real protocol core.

use clap::{Parser, ValueEnum};

// Large runs hold one table replica per simulated node: an allocator that
// reuses freed memory instead of returning it to the system saves much of
// the time spent in page faults.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
use satin::policy::{Config, FtMode, StealPolicy, TablePlacement};
use satin::sim::{self, faults, workload, SimConfig};

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Ft {
    /// A crash fails the run.
    None,
    /// Orphans discarded, stolen work re-executed, no table.
    Naive,
    /// Orphans' finished results saved in the replicated table (default).
    Table,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Steal {
    /// Random stealing.
    Rs,
    /// Cluster-aware random stealing.
    Crs,
    /// Master–worker: only the master hands out jobs.
    Mw,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum TableArg {
    /// The broadcast table below 128 nodes, the home table from there.
    Auto,
    /// Every table entry to every node.
    Broadcast,
    /// Every entry to its --replicas homes (consistent hashing).
    Home,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum ShapeArg {
    Fib,
    Knapsack,
    Flat,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Scenario {
    /// Seed paper Fig. 4: crash 1 or 2 of 4 clusters at 50 %, vs fewer clusters from the start.
    SatinFig4,
    /// Efficiency, messages and table entries per job and node from 16 to 1024 nodes (or --nodes),
    /// fixed total work (--size) or fixed work per node (--leaves-per-node); leaves of 20 ms unless
    /// --leaf-ms.
    Scale,
    /// Seed 002 (Satin checkpointing): 2 clusters of 16, one removed half-way; naive, orphan saving,
    /// checkpoints every 1, 2, 5 min, graceful leave, 1.5 clusters; fault-free overhead; suspend/resume.
    SatinCheckpoint,
    /// Seed 003 (GRID superscalar), Tables II–III: 4 machines x 2 slots, 960 tasks of 1 h, four kinds of
    /// failure on days 1–4; narrow and default timeouts (prints one JSON object).
    Gridsuperscalar,
    /// A straggler in the Fig. 4 setup: one of 64 nodes 10 x slower or hung, with and without duplicates.
    Stragglers,
    /// Random stealing, cluster-aware random stealing and master-worker on the Fig. 4 setup and on a flat
    /// tree of the same leaves, without and with a cluster crash.
    LoadBalancing,
}

#[derive(Parser, Debug)]
#[command(about = "Simulates a fault-tolerant divide-and-conquer run on many nodes, deterministically from a seed")]
struct Args {
    /// Run a named scenario (prints a JSON array, one object per row).
    #[arg(long)]
    scenario: Option<Scenario>,
    #[arg(long, default_value_t = 4)]
    clusters: u32,
    /// Nodes per cluster (default 16; 64 in the scale scenario).
    #[arg(long)]
    nodes_per_cluster: Option<u32>,
    /// Nodes in all (clusters filled in order, the last one partly); for the scale scenario a
    /// comma-separated list of sizes.
    #[arg(long, value_delimiter = ',')]
    nodes: Vec<u32>,
    /// Scale scenario: this many leaves per node (weak scaling) instead of a fixed tree.
    #[arg(long)]
    leaves_per_node: Option<u32>,
    /// The result table: every entry to every node, or to each key's homes.
    #[arg(long, value_enum, default_value_t = TableArg::Auto)]
    table: TableArg,
    /// Homes per key of the home table.
    #[arg(long, default_value_t = satin::policy::DEFAULT_REPLICAS)]
    replicas: usize,
    /// Tree shape: fib (size = n), knapsack (uneven, size = leaves), flat (master-worker, size = leaves).
    #[arg(long, value_enum, default_value_t = ShapeArg::Knapsack)]
    shape: ShapeArg,
    #[arg(long, default_value_t = 20_000)]
    size: u32,
    /// Mean leaf cost in milliseconds (default 10; 20 in the scale scenario).
    #[arg(long)]
    leaf_ms: Option<f64>,
    /// Leaf costs all equal instead of exponentially distributed.
    #[arg(long)]
    constant_cost: bool,
    /// One-way latency inside a cluster, milliseconds.
    #[arg(long, default_value_t = 0.1)]
    local_latency_ms: f64,
    /// One-way latency between clusters, milliseconds.
    #[arg(long, default_value_t = 10.0)]
    wide_latency_ms: f64,
    /// Bandwidth inside a cluster and between clusters, MB/s.
    #[arg(long, default_value_t = 100.0)]
    local_mbps: f64,
    #[arg(long, default_value_t = 10.0)]
    wide_mbps: f64,
    /// Crash detection delay, milliseconds.
    #[arg(long, default_value_t = 1000.0)]
    detect_ms: f64,
    /// Nobody is told of a crash: the failure detector finds it and the
    /// majority decides (as across machines).
    #[arg(long)]
    silent_crashes: bool,
    /// Go on after the answer until every node has ended: the report counts
    /// every answer printed and the nodes that never ended.
    #[arg(long)]
    run_to_end: bool,
    #[arg(long, value_enum, default_value_t = Ft::Table)]
    ft: Ft,
    /// Load balancing (also `--alg`): random stealing, cluster-aware
    /// random stealing, or master–worker.
    #[arg(long, alias = "alg", value_enum, default_value_t = Steal::Crs)]
    steal: Steal,
    /// Faults, e.g. 'crash-cluster:cluster=1,at=50%;crash-master:at=30s;leave:node=3,at=2s;drain:node=4,at=2s;join:cluster=0,at=3s';
    /// with --checkpoint-interval-s also crash-all, suspend, corrupt (one bit of the file); the
    /// network: 'partition:node=2,at=1s,for=5s;split:nodes=0+1,at=50%;cut:0-3,at=2s;loss:0.2;vanish:node=4,at=3s'.
    #[arg(long, default_value = "")]
    faults: String,
    /// Size of every job result in bytes; results above --pointer-threshold travel as pointers.
    #[arg(long, default_value_t = 8)]
    result_bytes: usize,
    #[arg(long, default_value_t = 1024)]
    pointer_threshold: usize,
    /// Publish results of jobs that ran at least this long (seconds; 0: only
    /// results returned to victims, as in the paper).
    #[arg(long, default_value_t = 1.0)]
    publish_after_s: f64,
    /// Bound on each table replica (entries).
    #[arg(long)]
    table_capacity: Option<usize>,
    /// Seed of everything random (default: generated and printed).
    #[arg(long)]
    seed: Option<u64>,
    /// Give up (and report no answer) at this virtual time, in seconds.
    #[arg(long, default_value_t = 100_000.0)]
    time_limit_s: f64,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
    /// Keep a checkpoint file, written every this many seconds.
    #[arg(long)]
    checkpoint_interval_s: Option<f64>,
    /// Bandwidth (MB/s) and latency (ms) of the checkpoint file's storage.
    #[arg(long, default_value_t = 50.0)]
    checkpoint_mbps: f64,
    #[arg(long, default_value_t = 10.0)]
    checkpoint_latency_ms: f64,
    /// After every node is gone without an answer (crash-all, suspend), start
    /// as many new nodes this many seconds later (the same command again).
    #[arg(long)]
    resume_after_s: Option<f64>,
    /// What happens to jobs run for a node that died: they run to the end and
    /// publish their result (as real runs do), or are aborted with their
    /// finished parts saved (the paper).
    #[arg(long, value_enum, default_value_t = Orphans::Run)]
    orphans: Orphans,
    /// Never run copies of late jobs (straggler duplicates).
    #[arg(long)]
    no_duplicates: bool,
    /// Soft and hard timeouts, as factors of a stolen job's estimate.
    #[arg(long, default_value_t = 1.25)]
    soft_timeout: f64,
    #[arg(long, default_value_t = 2.0)]
    hard_timeout: f64,
    /// The expected duration of a stolen job in seconds (default: learned per depth).
    #[arg(long)]
    expect_s: Option<f64>,
    /// Attempts after the first for a job that fails on a thief.
    #[arg(long, default_value_t = 0)]
    retries: u32,
    /// Jobs each node runs at once (processors per node).
    #[arg(long, default_value_t = 1)]
    slots: u32,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Orphans {
    Run,
    Abort,
}

fn config(a: &Args) -> Result<SimConfig, String> {
    let scale = matches!(a.scenario, Some(Scenario::Scale));
    let per_cluster = a.nodes_per_cluster.unwrap_or(if scale { 64 } else { 16 });
    if a.clusters == 0 || per_cluster == 0 {
        return Err("--clusters and --nodes-per-cluster must be at least 1".into());
    }
    if a.nodes.contains(&0) {
        return Err("--nodes must be at least 1".into());
    }
    if a.nodes.len() > 1 && !scale {
        return Err("a list of --nodes is for --scenario scale; a single run takes one number".into());
    }
    if a.replicas == 0 {
        return Err("--replicas must be at least 1".into());
    }
    let leaf_ms = a.leaf_ms.unwrap_or(if scale { 20.0 } else { 10.0 });
    if !(leaf_ms > 0.0 && leaf_ms.is_finite()) {
        return Err("--leaf-ms must be a positive number".into());
    }
    // One size given: that many nodes in clusters of `per_cluster`.
    let (clusters, nodes) = match a.nodes.as_slice() {
        [n] if !scale => (n.div_ceil(per_cluster.min(*n)), Some(*n)),
        _ => (a.clusters, None),
    };
    let ms = |x: f64| (x * 1e6) as u64;
    let seed = a.seed.unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64)
    });
    Ok(SimConfig {
        clusters,
        nodes_per_cluster: nodes.map_or(per_cluster, |n| per_cluster.min(n)),
        nodes,
        shape: match a.shape {
            ShapeArg::Fib => workload::Shape::Fib { n: a.size.min(40) },
            ShapeArg::Knapsack => workload::Shape::Uneven { leaves: a.size.max(1) },
            ShapeArg::Flat => workload::Shape::Flat { leaves: a.size.max(1) },
        },
        mean_leaf_cost: ms(leaf_ms).max(1),
        cost: if a.constant_cost { workload::Cost::Constant } else { workload::Cost::Exponential },
        local_latency: ms(a.local_latency_ms),
        wide_latency: ms(a.wide_latency_ms),
        local_bandwidth: a.local_mbps * 1e6,
        wide_bandwidth: a.wide_mbps * 1e6,
        detect_delay: ms(a.detect_ms),
        crash_notices: !a.silent_crashes,
        run_to_end: a.run_to_end,
        protocol: Config {
            ft: match a.ft {
                Ft::None => FtMode::None,
                Ft::Naive => FtMode::Naive,
                Ft::Table => FtMode::Table,
            },
            steal: match a.steal {
                Steal::Rs => StealPolicy::Random,
                Steal::Crs => StealPolicy::ClusterAware,
                Steal::Mw => StealPolicy::MasterWorker,
            },
            pointer_threshold: a.pointer_threshold,
            table_capacity: a.table_capacity,
            publish_after: (a.publish_after_s > 0.0).then_some((a.publish_after_s * 1e9) as u64),
            table: match a.table {
                TableArg::Auto => TablePlacement::Auto,
                TableArg::Broadcast => TablePlacement::Broadcast,
                TableArg::Home => TablePlacement::Home { replicas: a.replicas },
            },
            stragglers: {
                let s = satin::policy::Stragglers {
                    duplicates: !a.no_duplicates,
                    soft: a.soft_timeout,
                    hard: a.hard_timeout,
                    expect: a.expect_s.map(|e| (e.max(0.0) * 1e9) as u64),
                    retries: a.retries,
                    ..satin::policy::Stragglers::default()
                };
                s.check()?;
                s
            },
            ..Config::default()
        },
        slots: a.slots.max(1),
        result_bytes: a.result_bytes,
        keep_orphans: matches!(a.orphans, Orphans::Run),
        checkpoint: match a.checkpoint_interval_s {
            Some(i) if i > 0.0 && i.is_finite() => Some(sim::SimCheckpoint {
                interval: (i * 1e9) as u64,
                first: None,
                latency: ms(a.checkpoint_latency_ms),
                bandwidth: a.checkpoint_mbps.max(0.001) * 1e6,
            }),
            Some(_) => return Err("--checkpoint-interval-s must be a positive number".into()),
            None => None,
        },
        resume_after: a.resume_after_s.map(|s| (s.max(0.0) * 1e9) as u64),
        faults: faults::parse(&a.faults)?,
        seed,
        time_limit: (a.time_limit_s.max(0.0) * 1e9) as u64,
        ..SimConfig::default()
    })
}

fn main() {
    let args = Args::parse();
    let cfg = config(&args).unwrap_or_else(|e| {
        eprintln!("simulate: error: {e}");
        std::process::exit(2)
    });
    eprintln!("simulate: seed {}", cfg.seed);
    match args.scenario {
        Some(Scenario::SatinFig4) => drop(satin_examples::scenarios::fig4(&cfg)),
        Some(Scenario::Scale) => {
            let mut sweep = satin_examples::scenarios::ScaleSweep {
                leaves_per_node: args.leaves_per_node,
                nodes_per_cluster: args.nodes_per_cluster.unwrap_or(64),
                ..Default::default()
            };
            if !args.nodes.is_empty() {
                sweep.nodes = args.nodes.clone();
            }
            drop(satin_examples::scenarios::scale(&cfg, &sweep))
        }
        Some(Scenario::SatinCheckpoint) => drop(satin_examples::scenarios::checkpoint(&cfg)),
        Some(Scenario::Gridsuperscalar) => drop(satin_examples::scenarios::gridsuperscalar(&cfg)),
        Some(Scenario::Stragglers) => drop(satin_examples::scenarios::stragglers(&cfg)),
        Some(Scenario::LoadBalancing) => drop(satin_examples::scenarios::load_balancing(&cfg)),
        None => {
            let r = sim::run(&cfg);
            if args.json {
                println!("{}", r.to_json());
            } else {
                println!(
                    "{} in {:.2} virtual s; {} of {} leaves executed (redundancy {:.2} %), {} jobs stolen, {} messages",
                    if r.result_ok { "right answer" } else { "WRONG OR NO ANSWER" },
                    r.virtual_seconds,
                    r.leaves_executed,
                    r.leaves_needed,
                    100.0 * r.redundancy(),
                    r.jobs_stolen,
                    r.messages
                );
                if let Some(f) = &r.failure {
                    println!("failure: {f}");
                }
            }
            if !r.result_ok {
                std::process::exit(1);
            }
        }
    }
}
