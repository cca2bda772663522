//! What the command line means for a node: the protocol core's
//! configuration, the node's identity and first membership, its faults
//! (`NodeSpec`), and what `--slurm` stands for in a task.

use std::net::SocketAddr;
use std::sync::Arc;

use super::checkpointer::CheckpointSpec;
use super::contract::{self, ChildEnv};
use super::driver::{self, CoreStart, FirstMembership, IoSpec, NodeSpec};
use super::launch::{AlgArg, FtArg, Launch, TableArg, DEFAULT_JOIN_WAIT_MS};
use super::node_io::Identity;
use super::{fresh_id, netfault, rejoin, slurm, RunError};
use satin_proto::codec::Hello;
use satin_proto::{Config, FtMode, StealPolicy, TablePlacement};

/// What `--slurm` stands for in this task: `--listen` on task 0, `--join`
/// elsewhere; and the task's number.
pub(crate) fn slurm_launch(args: &Launch) -> Result<(Launch, u32), String> {
    let task = slurm::SlurmTask::from_env(|k| std::env::var(k).ok())?;
    let master = task.master_addr(args.slurm_port)?;
    let mut launch = args.clone();
    launch.slurm = false;
    launch.workers = args.workers.or(task.cpus_per_task);
    if task.rank == 0 {
        // Listen on every interface, unless the master's host is this
        // machine's loopback (a one-machine test of the launch).
        let any = if master.is_ipv4() {
            SocketAddr::from(([0, 0, 0, 0], master.port()))
        } else {
            SocketAddr::from(([0u16; 8], master.port()))
        };
        launch.listen = Some(if master.ip().is_loopback() { master } else { any });
    } else {
        launch.join = Some(master);
        launch.join_wait_ms = Some(args.join_wait_ms.unwrap_or(60_000));
    }
    Ok((launch, task.rank))
}

/// The failure detector and the majority's wait as the flags say.
pub(crate) fn quorum_config(args: &Launch) -> satin_proto::quorum::QuorumConfig {
    let suspect = args.suspect_ms.min(args.idle_timeout_ms) * 1_000_000;
    satin_proto::quorum::QuorumConfig {
        heartbeat: suspect / 10,
        suspect_after: suspect,
        heal_wait: args.heal_wait_ms * 1_000_000,
    }
}

/// How many nodes the run starts with, where the launch says: a
/// supervisor's `--local-nodes`, `SATIN_NODES`, SLURM's task count.
pub(crate) fn expected_nodes(args: &Launch, env: &ChildEnv) -> Option<usize> {
    let var = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<usize>().ok());
    let expected = args.expect_nodes.map(|n| n as usize);
    let told = env.cluster_size;
    expected.or(told).or_else(|| var(contract::NODES)).or_else(|| if args.slurm { var("SLURM_NTASKS") } else { None })
}

/// The result table a run gets from `--table` and `--table-replicas`, for
/// a run expected to start with `expected` nodes (if known).
pub fn table_placement(table: TableArg, replicas: usize, expected: Option<usize>) -> TablePlacement {
    match table {
        TableArg::Broadcast => TablePlacement::Broadcast,
        TableArg::Home => TablePlacement::Home { replicas },
        TableArg::Auto => match expected {
            Some(n) if n >= satin_proto::HOME_TABLE_FROM => TablePlacement::Home { replicas },
            _ => TablePlacement::Broadcast,
        },
    }
}

/// The node that `args` and what its starter told it (`env`) make.
pub(crate) fn node_spec(app: &str, args: &Launch, label: Option<String>, env: &ChildEnv) -> Result<NodeSpec, RunError> {
    // A process the majority removed starts over as a joiner (`rejoin.rs`).
    let contact = env.rejoin.or(args.join);
    // A member of a supervised first membership is numbered by its
    // supervisor (`ChildEnv::roster`).
    let roster = contact.is_none() && env.roster;
    // A process that starts over after its removal joins the run under way.
    let first = match (args.expect_nodes, args.join.or(args.listen)) {
        _ if roster => FirstMembership::FromSupervisor,
        (Some(expect), Some(rendezvous)) if env.rejoin.is_none() => {
            FirstMembership::Gathered(driver::Gather { expect: expect as usize, rendezvous })
        }
        (Some(_), None) => {
            return Err(RunError::Usage("--expect-nodes needs the run's address: --listen ADDR or --join ADDR".into()))
        }
        _ => FirstMembership::Open,
    };
    let index = env.node_index;
    let id = match (contact, roster, index) {
        (None, true, Some(index)) => index,
        (None, _, _) => 0,
        (Some(_), _, _) => fresh_id(),
    };
    let ft = match args.ft {
        FtArg::None => FtMode::None,
        FtArg::Naive => FtMode::Naive,
        FtArg::Table => FtMode::Table,
    };
    // Calls that ran 10 ms or more are published (the threshold then grows
    // with the run, see `Config::publish_threshold`): a crash loses little
    // finished work, the master's own included.
    // A steal request unanswered for an eighth of the idle timeout goes to
    // another victim: a dead victim does not starve its thieves until it
    // is declared dead.
    let steal = match args.alg {
        AlgArg::Rs => StealPolicy::Random,
        AlgArg::Crs => StealPolicy::ClusterAware,
        AlgArg::Mw => StealPolicy::MasterWorker,
    };
    let table = table_placement(args.table, args.table_replicas, expected_nodes(args, env));
    let config = Config {
        ft,
        steal,
        table,
        pointer_threshold: 64 << 10,
        publish_after: Some(10_000_000),
        steal_timeout: Some(args.idle_timeout_ms * 1_000_000 / 8),
        quorum: quorum_config(args),
        sequence: true,
        // A supervisor sees every node's output and says when the answer's
        // is out: nodes wait for that, in case the one that shows it dies
        // before its output is.
        supervised_output: env.supervised,
        checkpoint_interval: args.checkpoint.as_ref().map(|_| args.checkpoint_interval.as_nanos() as u64),
        stragglers: args.stragglers(),
        rejoins: env.rejoins,
        join_wait: args.join_wait_ms.unwrap_or(DEFAULT_JOIN_WAIT_MS) * 1_000_000,
        leave_timeout: args.leave_timeout_ms * 1_000_000,
        shared_news_every: Some(satin_proto::SHARED_NEWS_EVERY),
        // Figures for the master's dashboard and status line.
        figures_every: Some(1_000_000_000),
        ..Config::default()
    };
    let hello = Hello::new(app, &satin_core::function_ids()).with_functions(satin_core::function_digest());
    Ok(NodeSpec {
        me: Identity::from_launch(args, id, contact, hello, label),
        core: CoreStart { config, first, carry: rejoin::take_carry(env), was_origin: env.was_origin },
        io: IoSpec {
            progress: !args.no_progress && !env.supervised,
            dashboard: args.dashboard,
            report: args.report.clone().filter(|_| args.join.is_none()),
            report_status: env.status_to_supervisor,
            board_to_supervisor: env.board_to_supervisor,
            checkpoint: args.checkpoint.clone().map(|path| CheckpointSpec { path, fresh: args.checkpoint_fresh }),
            lone: false,
            faults: network_faults(id, env).map_err(|e| RunError::Failed(format!("{}: {e}", contract::NET_FAULTS)))?,
        },
    })
}

/// The faults of this node's network: under a supervisor (whose `--chaos`
/// may cut it off later), or when its starter named some (`contract::NET_FAULTS`).
pub(crate) fn network_faults(id: u64, env: &ChildEnv) -> Result<Option<Arc<netfault::Faults>>, String> {
    let from_start = env.net_faults.clone();
    if from_start.is_none() && !env.supervised {
        return Ok(None);
    }
    let faults = netfault::Faults::new(id ^ u64::from(std::process::id()));
    faults.apply_all(from_start.as_deref().unwrap_or_default())?;
    Ok(Some(faults))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(flags: &[&str]) -> Launch {
        let line = std::iter::once("node").chain(flags.iter().copied()).map(String::from);
        match Launch::from_args("node", line).expect("the flags parse") {
            crate::launch::Split::Run(launch, _) => *launch,
            crate::launch::Split::Help(_) => panic!("no help asked for"),
        }
    }

    /// What a supervisor tells its node, carried in as a value: the node
    /// is the supervisor's numbered member, says nothing on the screen,
    /// reports to it, and waits for it to say the answer is out.
    #[test]
    fn a_supervised_member_is_made_from_what_it_was_told() {
        let told = ChildEnv {
            supervised: true,
            node_index: Some(2),
            cluster_size: Some(3),
            roster: true,
            status_to_supervisor: true,
            board_to_supervisor: true,
            ..ChildEnv::default()
        };
        let spec = node_spec("t", &launch(&["--listen", "127.0.0.1:0"]), None, &told).expect("a spec");
        assert_eq!(spec.me.id, 2, "numbered by its supervisor");
        assert!(matches!(spec.core.first, FirstMembership::FromSupervisor));
        assert!(spec.core.config.supervised_output && spec.core.carry.is_empty() && spec.core.was_origin.is_none());
        assert!(!spec.io.progress && spec.io.report_status && spec.io.board_to_supervisor);
        assert!(spec.io.faults.is_some(), "a supervised node's network can be cut later");
    }

    /// A process that starts over after its removal joins through the
    /// member that told it, claims its origin back and counts the time.
    #[test]
    fn a_rejoining_process_joins_through_its_contact() {
        let told = ChildEnv {
            rejoin: Some("127.0.0.1:7000".parse().expect("an address")),
            was_origin: Some(0),
            rejoins: 1,
            node_index: Some(2),
            roster: true,
            ..ChildEnv::default()
        };
        let spec = node_spec("t", &launch(&["--listen", "127.0.0.1:0"]), None, &told).expect("a spec");
        assert_eq!(spec.me.contact, told.rejoin);
        assert!(matches!(spec.core.first, FirstMembership::Open), "it joins the run under way");
        assert_eq!((spec.core.was_origin, spec.core.config.rejoins), (Some(0), 1));
        assert!(spec.io.progress && spec.io.faults.is_none(), "alone, it draws its own status");
    }
}
