//! What a simulated run depends on: the tree, the machines and links, the
//! protocol's configuration and the faults, all from one seed.

use super::disk::SimCheckpoint;
use super::faults::Fault;
use super::workload::{Cost, Nanos, Shape};
use satin_proto::Config;

/// Everything a simulated run depends on.
#[derive(Clone, Debug)]
pub struct SimConfig {
    /// Clusters (sites) of nodes.
    pub clusters: u32,
    /// Nodes in each cluster.
    pub nodes_per_cluster: u32,
    /// All nodes at start, if not `clusters × nodes_per_cluster`: nodes
    /// fill clusters of `nodes_per_cluster` in order, the last one partly.
    pub nodes: Option<u32>,
    /// The job tree's shape.
    pub shape: Shape,
    /// Mean cost of a leaf, nanoseconds.
    pub mean_leaf_cost: Nanos,
    /// How leaf costs spread around the mean.
    pub cost: Cost,
    /// One-way latency inside a cluster.
    pub local_latency: Nanos,
    /// One-way latency between clusters.
    pub wide_latency: Nanos,
    /// Bytes per second inside a cluster and between clusters.
    pub local_bandwidth: f64,
    /// Bytes per second between clusters.
    pub wide_bandwidth: f64,
    /// Extra random delay per message, up to this much: messages reorder.
    pub jitter: Nanos,
    /// Keep each link's messages in sending order, as the real transport
    /// does (one QUIC stream per direction per peer), whatever the jitter.
    pub fifo_links: bool,
    /// Time from a crash until each live node declares the peer dead.
    pub detect_delay: Nanos,
    /// Crashes are told to every node after `detect_delay`, as the
    /// supervisor of `--local-nodes` tells its nodes (certain deaths; the
    /// papers' fail-stop model). `false`: nobody is told — the failure
    /// detector finds them, and a connection to a gone node only times out
    /// (as across machines).
    pub crash_notices: bool,
    /// How long a cut link's connection lives (QUIC's idle timeout): then
    /// what waited on it is lost and its ends learn it is down.
    pub link_timeout: Nanos,
    /// Go on after the answer until every node is gone (or the time
    /// limit): the report then counts every answer printed and the nodes
    /// that never ended.
    pub run_to_end: bool,
    /// A node the majority removed while it was cut off starts over as a
    /// new node when it learns so (as real processes do).
    pub rejoin_expelled: bool,
    /// A draining node still in the run this long after its `drain` fault
    /// leaves anyway, aborting what it runs (`--leave-timeout-ms`; the
    /// nodes' `Config::leave_timeout`, whose timer their cores keep).
    pub leave_timeout: Nanos,
    /// Model a shared incumbent (`satin::shared`): every node's jobs offer
    /// the leaves they run, and the protocol core moves the values between
    /// nodes as in a real run — news at most every [`SHARED_NEWS_EVERY`]
    /// (the core's own timer, set here unless `protocol` sets one), even
    /// while busy, as the real driver's periodic check sends them. Off in
    /// the scenarios that reproduce the papers (its messages would change
    /// their figures); on in property tests.
    ///
    /// [`SHARED_NEWS_EVERY`]: satin_proto::SHARED_NEWS_EVERY
    pub shared_values: bool,
    /// The protocol's configuration, as a real run's.
    pub protocol: Config,
    /// Encoded size of every job result.
    pub result_bytes: usize,
    /// Encoded size of every job's parameters (a stolen job carries them).
    pub param_bytes: usize,
    /// How messages share a link's bandwidth (see [`Lanes`]).
    pub lanes: Lanes,
    /// Jobs run for a node that died run to the end and publish their
    /// result, as in real runs; `false`: they are aborted and only their
    /// finished parts saved (the paper's orphan saving).
    pub keep_orphans: bool,
    /// The faults to inject, each at a time or a share of the leaves done.
    pub faults: Vec<Fault>,
    /// A checkpoint file and the storage it is on (`protocol.checkpoint_interval`
    /// follows its interval).
    pub checkpoint: Option<SimCheckpoint>,
    /// After every node is gone without an answer (all crashed, or the run
    /// suspended), start the same number of new nodes this much later: the
    /// same command run again. `None`: the run ends there.
    pub resume_after: Option<Nanos>,
    /// Processors per node (jobs a node runs at once), and of the first
    /// node, the master, if different (0: it only hands out work).
    pub slots: u32,
    /// Processors of the first node, if not `slots`.
    pub master_slots: Option<u32>,
    /// Drives every random choice: the same seed, the same run.
    pub seed: u64,
    /// A run still going at this virtual time is reported as not terminated.
    pub time_limit: Nanos,
}

/// How messages share a link's bandwidth.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lanes {
    /// Each message takes the link's latency plus its own size over the
    /// bandwidth, as if alone on it (the papers' scenarios).
    Unqueued,
    /// A link sends one message at a time, in order: a large one holds
    /// back whatever follows it, beats included (one stream per link).
    One,
    /// As `One`, but urgent messages (`Msg::urgent`: the quorum's beats,
    /// votes and entries) have a lane of their own, as real runs' control
    /// stream and datagrams do: they never wait behind data.
    ControlApart,
}

impl SimConfig {
    /// Nodes at start.
    pub fn node_count(&self) -> u32 {
        self.nodes.unwrap_or(self.clusters * self.nodes_per_cluster)
    }
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            clusters: 4,
            nodes_per_cluster: 16,
            nodes: None,
            shape: Shape::Uneven { leaves: 10_000 },
            mean_leaf_cost: 10_000_000,
            cost: Cost::Exponential,
            local_latency: 100_000,
            wide_latency: 10_000_000,
            local_bandwidth: 100e6,
            wide_bandwidth: 10e6,
            jitter: 0,
            fifo_links: false,
            detect_delay: 1_000_000_000,
            crash_notices: true,
            link_timeout: 3_000_000_000,
            run_to_end: false,
            rejoin_expelled: true,
            leave_timeout: 30_000_000_000,
            shared_values: false,
            protocol: Config::default(),
            result_bytes: 8,
            param_bytes: 4,
            lanes: Lanes::Unqueued,
            keep_orphans: true,
            faults: Vec::new(),
            checkpoint: None,
            resume_after: None,
            slots: 1,
            master_slots: None,
            seed: 1,
            time_limit: 100_000 * 1_000_000_000,
        }
    }
}
