//! What a node process is told at its start, through its environment.
//! Every variable is named here and nowhere else; the node reads them all
//! at once ([`ChildEnv::current`]) and a starter writes them all at once
//! ([`ChildEnv::apply`], which also clears what it does not set, so that
//! nothing leaks from the starter's own environment into its child's).
//!
//! The variables a user may set are named here too ([`POOL`], [`NODES`],
//! [`STATUS_AFTER_MS`], [`DEATH_NOTICES`], [`SAME_HOST`]); SLURM's and Kubernetes' own
//! are their launchers' (`slurm.rs`, `k8s.rs`).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

/// The pool credential (`--pool`); a supervisor passes its own on.
pub(crate) const POOL: &str = "SATIN_POOL";
/// How many nodes the run starts with, where no launcher can tell (pods
/// of a StatefulSet, hosts started by hand), for `--table auto`.
pub const NODES: &str = "SATIN_NODES";
/// Runs shorter than this many milliseconds draw no status line.
pub(crate) const STATUS_AFTER_MS: &str = "SATIN_STATUS_AFTER_MS";
/// `off`: a supervisor tells its nodes of no death (as across machines,
/// only the failure detector finds one).
pub(crate) const DEATH_NOTICES: &str = "SATIN_DEATH_NOTICES";
/// `off`: large frames to nodes of this host go through QUIC too, not
/// through shared memory (`conn/same_host.rs`); an absolute path: the
/// directory to keep them in instead of `/dev/shm`.
pub(crate) const SAME_HOST: &str = "SATIN_SAME_HOST";

/// Started by a supervisor: its output is the supervisor's to show.
const SUPERVISED: &str = "SATIN_SUPERVISED";
/// Its number in the supervisor's cluster (start order), its short name.
const NODE_INDEX: &str = "SATIN_NODE_INDEX";
/// How many nodes the supervisor starts in all (a task graph's size).
const CLUSTER_SIZE: &str = "SATIN_CLUSTER_SIZE";
/// The first node of a supervised run whose first membership the
/// supervisor sends once every node listens (`Order::Roster`).
const ROSTER: &str = "SATIN_ROSTER";
/// Report the run's estimate for the supervisor's status line.
const STATUS_TO_SUPERVISOR: &str = "SATIN_SUPERVISOR_STATUS";
/// Keep a board and report it while master, for the supervisor's
/// dashboard.
const BOARD_TO_SUPERVISOR: &str = "SATIN_BOARD_TO_SUPERVISOR";
/// The faults of the node's network from its start (`netfault.rs`).
pub(crate) const NET_FAULTS: &str = "SATIN_NET_FAULTS";
/// Where a rejoining process joins (a member's address).
const REJOIN: &str = "SATIN_REJOIN";
/// The file holding the results a rejoining process carries over.
const CARRY: &str = "SATIN_CARRY";
/// The id it had as the run's origin, if it was (it claims the origin
/// back: the answer is shown where the user started the run).
const WAS_ORIGIN: &str = "SATIN_REJOIN_ORIGIN";
/// How often this process joined again already.
const REJOINS: &str = "SATIN_REJOINS";

/// Every variable of the contract (for [`ChildEnv::apply`]'s clearing).
const ALL: &[&str] = &[
    POOL,
    SUPERVISED,
    NODE_INDEX,
    CLUSTER_SIZE,
    ROSTER,
    STATUS_TO_SUPERVISOR,
    BOARD_TO_SUPERVISOR,
    NET_FAULTS,
    REJOIN,
    CARRY,
    WAS_ORIGIN,
    REJOINS,
];

/// What a node process was told at its start.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct ChildEnv {
    /// The pool credential, as a supervisor passes it on.
    pub(crate) pool: Option<PathBuf>,
    /// Started by a supervisor.
    pub(crate) supervised: bool,
    /// Its number in the supervisor's cluster.
    pub(crate) node_index: Option<u64>,
    /// How many nodes the supervisor starts in all.
    pub(crate) cluster_size: Option<usize>,
    /// Wait for the supervisor's roster (the first node).
    pub(crate) roster: bool,
    /// Report the estimate for the supervisor's status line.
    pub(crate) status_to_supervisor: bool,
    /// Report the board for the supervisor's dashboard.
    pub(crate) board_to_supervisor: bool,
    /// Network faults from the start, as `netfault.rs` reads them.
    pub(crate) net_faults: Option<String>,
    /// Join again through this member (a process started over).
    pub(crate) rejoin: Option<SocketAddr>,
    /// The results carried over, in this file.
    pub(crate) carry: Option<PathBuf>,
    /// The id it had as the run's origin.
    pub(crate) was_origin: Option<u64>,
    /// How often it joined again already.
    pub(crate) rejoins: u32,
}

impl ChildEnv {
    /// What this process was told, read from its environment once.
    pub(crate) fn current() -> &'static ChildEnv {
        static READ: OnceLock<ChildEnv> = OnceLock::new();
        READ.get_or_init(|| ChildEnv::read(|k| std::env::var(k).ok()))
    }

    /// What `var` says (a variable's value by name).
    pub(crate) fn read(var: impl Fn(&str) -> Option<String>) -> ChildEnv {
        let number = |k: &str| var(k).and_then(|v| v.parse().ok());
        ChildEnv {
            pool: var(POOL).map(PathBuf::from),
            supervised: var(SUPERVISED).is_some(),
            node_index: number(NODE_INDEX),
            cluster_size: var(CLUSTER_SIZE).and_then(|v| v.parse().ok()),
            roster: var(ROSTER).is_some(),
            status_to_supervisor: var(STATUS_TO_SUPERVISOR).is_some(),
            board_to_supervisor: var(BOARD_TO_SUPERVISOR).is_some(),
            net_faults: var(NET_FAULTS),
            rejoin: var(REJOIN).and_then(|v| v.parse().ok()),
            carry: var(CARRY).map(PathBuf::from),
            was_origin: number(WAS_ORIGIN),
            rejoins: var(REJOINS).and_then(|v| v.parse().ok()).unwrap_or(0),
        }
    }

    /// The variables as a child's environment: name and value, for what
    /// is set.
    fn vars(&self) -> Vec<(&'static str, String)> {
        let flag = |on: bool, k: &'static str| on.then(|| (k, "1".to_string()));
        let value = |v: Option<String>, k: &'static str| v.map(|v| (k, v));
        [
            value(self.pool.as_ref().map(|p| p.display().to_string()), POOL),
            flag(self.supervised, SUPERVISED),
            value(self.node_index.map(|n| n.to_string()), NODE_INDEX),
            value(self.cluster_size.map(|n| n.to_string()), CLUSTER_SIZE),
            flag(self.roster, ROSTER),
            flag(self.status_to_supervisor, STATUS_TO_SUPERVISOR),
            flag(self.board_to_supervisor, BOARD_TO_SUPERVISOR),
            value(self.net_faults.clone(), NET_FAULTS),
            value(self.rejoin.map(|a| a.to_string()), REJOIN),
            value(self.carry.as_ref().map(|p| p.display().to_string()), CARRY),
            value(self.was_origin.map(|n| n.to_string()), WAS_ORIGIN),
            value((self.rejoins > 0).then(|| self.rejoins.to_string()), REJOINS),
        ]
        .into_iter()
        .flatten()
        .collect()
    }

    /// Tells the process `cmd` starts all of this, and nothing else of
    /// the contract.
    pub(crate) fn apply(&self, cmd: &mut Command) {
        for k in ALL {
            cmd.env_remove(k);
        }
        for (k, v) in self.vars() {
            cmd.env(k, v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_starter_writes_its_child_reads_back() {
        let told = ChildEnv {
            pool: Some(PathBuf::from("/tmp/pool.pem")),
            supervised: true,
            node_index: Some(3),
            cluster_size: Some(5),
            roster: false,
            status_to_supervisor: true,
            board_to_supervisor: true,
            net_faults: Some("loss 0.2;delay 10 5".into()),
            rejoin: Some("127.0.0.1:7000".parse().unwrap()),
            carry: Some(PathBuf::from("/tmp/carry")),
            was_origin: Some(42),
            rejoins: 2,
        };
        let vars = told.vars();
        let read = ChildEnv::read(|k| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| v.clone()));
        assert_eq!(read, told);
        assert!(vars.iter().all(|(k, _)| ALL.contains(k)), "every variable is one of the contract's");
        assert_eq!(ChildEnv::read(|_| None), ChildEnv::default(), "nothing said, nothing read");
        let mut cmd = Command::new("true");
        ChildEnv::default().apply(&mut cmd);
        assert_eq!(cmd.get_envs().count(), ALL.len(), "every variable cleared");
        assert!(cmd.get_envs().all(|(_, v)| v.is_none()));
    }
}
