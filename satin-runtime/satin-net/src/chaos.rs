//! `--chaos SPEC`: faults the supervisor of a local cluster injects.
//!
//! `SPEC` is in the fault language the simulator reads too (`satin_faults`:
//! a schedule a simulator seed prints runs here unchanged); this reader
//! refuses, in words, what only the simulator can do (`crash-cluster`,
//! `crash-master`, `corrupt`, `fail-running`, `kill-jobs`). `leave` and
//! `drain` both send SIGTERM. A `;`-separated list of events, each
//! `KIND:key=value,...`:
//! - `kill:node=N,at=T` (or `crash:`) — SIGKILL node process N (a crash);
//! - `leave:node=N,at=T` — SIGTERM node process N (a graceful leave);
//! - `join:at=T` — start one more node process that joins the run;
//! - `kill:node=all,at=T` — SIGKILL every node process (a total loss; with
//!   `--checkpoint` the same command resumes the run);
//! - `suspend:at=T` (or `suspend:node=N,at=T`) — SIGUSR1 to a node (the
//!   first live one by default): the whole run is suspended;
//! - `slow:node=N,factor=F,at=T[,for=D]` — node N's workers run F times
//!   slower (paused for part of the time), for D or to the end;
//! - `hang:node=N,at=T` — node N's workers stop; it still answers;
//! - `fail:node=N,rate=P[,at=T]` — jobs node N steals fail at once with
//!   probability P (as a panic would), from T (default: the start).
//!
//! Network faults, on the nodes' UDP sockets below QUIC (packets dropped or
//! delayed, never refused; see `netfault.rs`):
//! - `partition:node=N,at=T[,for=D]` — node N is cut off from every other
//!   node, for D or for good;
//! - `cut:A-B,at=T[,for=D]` — the link between nodes A and B is cut both
//!   ways; `cut:A>B,…` only A's packets to B are lost;
//! - `heal:node=N`, `heal:A-B`, `heal:nodes=A+B`, with `at=T` — a partition,
//!   cut or split ends;
//! - `split:nodes=A+B+…,at=T[,for=D]` — every link between those nodes and
//!   the others is cut: the membership split in two;
//! - `loss:P[,node=N][,at=T][,for=D]` — each packet sent is lost with
//!   probability P (every node's, or node N's; from the start by default);
//! - `delay:MS[,jitter=MS][,node=N][,at=T][,for=D]` — each packet waits MS
//!   milliseconds plus up to the jitter more (so packets reorder);
//! - `vanish:node=N,at=T` — node N's process is SIGKILLed and nobody is
//!   told: a machine that died silently, found only by the failure
//!   detector (a `kill` is seen by the supervisor, which tells the others).
//!
//! Nodes are numbered in start order: 0 is the first master, joiners get
//! the next numbers. `T` is a time since the start (`2s`, `500ms`) or a
//! percentage (`50%`) of how long the same run takes without faults, which
//! the supervisor measures first with a calibration run.

use std::time::Duration;

/// When a chaos event strikes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum At {
    /// This long after the start.
    After(Duration),
    /// At this share (in percent) of a fault-free run's time, which the supervisor measures first.
    Percent(f64),
    /// This long after a share (in percent) of it: the end of a lasting
    /// fault that starts at a share (`at=40%,for=200ms`).
    PercentThen(f64, Duration),
}

/// What a chaos event does.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ChaosKind {
    /// SIGKILL a node process (a crash the supervisor sees).
    Kill {
        /// The node.
        node: u32,
    },
    /// SIGKILL every node process (a total loss).
    KillAll,
    /// SIGTERM a node process (a graceful leave).
    Leave {
        /// The node.
        node: u32,
    },
    /// Start one more node that joins the run.
    Join,
    /// SIGUSR1 to a node: the whole run is suspended.
    Suspend {
        /// The node (`None`: the first live one).
        node: Option<u32>,
    },
    /// `factor` 1: full speed again; infinite: hung.
    Slow {
        /// The node.
        node: u32,
        /// How many times slower.
        factor: f64,
    },
    /// Jobs the node steals fail at once with probability `rate`.
    Fail {
        /// The node.
        node: u32,
        /// The probability.
        rate: f64,
    },
    /// `cut`: node `node` is cut off from all others (false: it is back).
    Partition {
        /// The node.
        node: u32,
        /// Cut off (`true`) or back.
        cut: bool,
    },
    /// Packets from `from` to `to` are lost (and back, with `both`), or —
    /// `cut` false — the link works again.
    Cut {
        /// The sending end.
        from: u32,
        /// The receiving end.
        to: u32,
        /// Both directions.
        both: bool,
        /// Cut (`true`) or working again.
        cut: bool,
    },
    /// Each packet sent is lost with probability `rate` (0: none again).
    Loss {
        /// The node whose packets (`None`: every node's).
        node: Option<u32>,
        /// The probability.
        rate: f64,
    },
    /// Each packet sent waits `ms` plus up to `jitter` more milliseconds.
    Delay {
        /// The node whose packets (`None`: every node's).
        node: Option<u32>,
        /// Milliseconds every packet waits.
        ms: f64,
        /// Up to this many more, at random.
        jitter: f64,
    },
    /// SIGKILL without a death notice: a silent machine death.
    Vanish {
        /// The node.
        node: u32,
    },
    /// Every link between the nodes of `side` (a bit set of node numbers
    /// below 64) and the others is cut (`cut` false: mended).
    Split {
        /// The nodes on one side, as bits.
        side: u64,
        /// Cut (`true`) or mended.
        cut: bool,
    },
}

impl ChaosKind {
    /// The nodes this fault names (checked against the cluster's size).
    pub fn nodes(&self) -> Vec<u32> {
        match *self {
            ChaosKind::Kill { node }
            | ChaosKind::Leave { node }
            | ChaosKind::Suspend { node: Some(node) }
            | ChaosKind::Slow { node, .. }
            | ChaosKind::Fail { node, .. }
            | ChaosKind::Partition { node, .. }
            | ChaosKind::Loss { node: Some(node), .. }
            | ChaosKind::Delay { node: Some(node), .. }
            | ChaosKind::Vanish { node } => vec![node],
            ChaosKind::Cut { from, to, .. } => vec![from, to],
            ChaosKind::Split { side, .. } => (0..64).filter(|n| side & (1 << n) != 0).collect(),
            _ => Vec::new(),
        }
    }

    /// Whether this is a fault of the network (applied on the sockets).
    pub fn is_network(&self) -> bool {
        matches!(
            self,
            ChaosKind::Partition { .. }
                | ChaosKind::Cut { .. }
                | ChaosKind::Split { .. }
                | ChaosKind::Loss { .. }
                | ChaosKind::Delay { .. }
        )
    }
}

/// One event of a `--chaos` list: what, and when.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChaosEvent {
    /// What it does.
    pub kind: ChaosKind,
    /// When.
    pub at: At,
}

/// Parses a chaos spec in the fault language the simulator reads too
/// (`satin_faults`); the error says which part is wrong and why, and what
/// only the simulator can do is refused in words.
pub fn parse(spec: &str) -> Result<Vec<ChaosEvent>, String> {
    satin_faults::parse(spec)?.into_iter().map(from_language).collect()
}

fn from_language(f: satin_faults::Fault) -> Result<ChaosEvent, String> {
    use satin_faults::{Crashed, Kind, Links};
    let at = match f.at {
        satin_faults::When::After(ns) => At::After(Duration::from_nanos(ns)),
        satin_faults::When::Share(s) => At::Percent(s * 100.0),
        satin_faults::When::ShareThen(s, ns) => At::PercentThen(s * 100.0, Duration::from_nanos(ns)),
    };
    let number = |n: u64| u32::try_from(n).map_err(|_| format!("{f}: no node has the number {n}"));
    let simulator_only = |what: &str| Err(format!("{f}: {what} is the simulator's only (a real run cannot do it)"));
    let kind = match &f.kind {
        Kind::Crash(Crashed::Node(n)) => ChaosKind::Kill { node: number(*n)? },
        Kind::Crash(Crashed::All) => ChaosKind::KillAll,
        Kind::Crash(Crashed::Cluster(_)) => return simulator_only("crashing a cluster by its number"),
        Kind::Crash(Crashed::Master) => return simulator_only("crashing whichever node leads"),
        Kind::Vanish(n) => ChaosKind::Vanish { node: number(*n)? },
        // SIGTERM: a real node always finishes what it runs before it
        // leaves (within --leave-timeout-ms), as the simulator's `drain`.
        Kind::Leave(n) | Kind::Drain(n) => ChaosKind::Leave { node: number(*n)? },
        Kind::Join(None | Some(0)) => ChaosKind::Join,
        Kind::Join(Some(_)) => return Err(format!("{f}: nodes under --local-nodes are all of cluster 0")),
        Kind::Suspend(node) => ChaosKind::Suspend { node: node.map(number).transpose()? },
        Kind::Corrupt => return simulator_only("flipping a bit of the checkpoint file"),
        Kind::Slow { node, factor } => ChaosKind::Slow { node: number(*node)?, factor: *factor },
        Kind::Fail { node, rate } => ChaosKind::Fail { node: number(*node)?, rate: *rate },
        Kind::FailRunning(_) | Kind::KillJobs(_) => return simulator_only("failing the jobs a node runs"),
        Kind::Net { links: Links::Node(node), cut } => ChaosKind::Partition { node: number(*node)?, cut: *cut },
        Kind::Net { links: Links::Link { from, to, both }, cut } => {
            ChaosKind::Cut { from: number(*from)?, to: number(*to)?, both: *both, cut: *cut }
        }
        Kind::Net { links: Links::Split(side), cut } => {
            let mut bits = 0u64;
            for &n in side {
                if n >= 64 {
                    return Err(format!("{f}: a split names nodes below 64"));
                }
                bits |= 1 << n;
            }
            ChaosKind::Split { side: bits, cut: *cut }
        }
        Kind::Loss { node, rate } => ChaosKind::Loss { node: node.map(number).transpose()?, rate: *rate },
        Kind::Delay { node, ms, jitter } => {
            ChaosKind::Delay { node: node.map(number).transpose()?, ms: *ms, jitter: *jitter }
        }
    };
    Ok(ChaosEvent { kind, at })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_kind() {
        let ev = parse("kill:node=2,at=50%; leave:node=3,at=2s;join:at=300ms").unwrap();
        assert_eq!(ev.len(), 3);
        assert_eq!(ev[0], ChaosEvent { kind: ChaosKind::Kill { node: 2 }, at: At::Percent(50.0) });
        assert_eq!(ev[1], ChaosEvent { kind: ChaosKind::Leave { node: 3 }, at: At::After(Duration::from_secs(2)) });
        assert_eq!(ev[2], ChaosEvent { kind: ChaosKind::Join, at: At::After(Duration::from_millis(300)) });
        let ev = parse("kill:node=all,at=50%;suspend:at=1s;suspend:node=2,at=2s").unwrap();
        assert_eq!(ev[0].kind, ChaosKind::KillAll);
        assert_eq!(ev[1].kind, ChaosKind::Suspend { node: None });
        assert_eq!(ev[2].kind, ChaosKind::Suspend { node: Some(2) });
        let ev = parse(
            "slow:node=1,factor=5,at=20%;hang:node=2,at=1s;fail:node=3,rate=0.5;slow:node=1,factor=3,at=1s,for=2s",
        )
        .unwrap();
        assert_eq!(ev[0], ChaosEvent { kind: ChaosKind::Slow { node: 1, factor: 5.0 }, at: At::Percent(20.0) });
        assert_eq!(ev[1].kind, ChaosKind::Slow { node: 2, factor: f64::INFINITY });
        assert_eq!(ev[2], ChaosEvent { kind: ChaosKind::Fail { node: 3, rate: 0.5 }, at: At::After(Duration::ZERO) });
        assert_eq!(
            ev[4],
            ChaosEvent { kind: ChaosKind::Slow { node: 1, factor: 1.0 }, at: At::After(Duration::from_secs(3)) }
        );
    }

    /// A lasting fault that starts at a share of the run ends that long
    /// after the share (the supervisor adds it to the share's time).
    #[test]
    fn a_lasting_fault_may_start_at_a_percentage() {
        let ev = parse("cut:1-0,at=40%,for=200ms").unwrap();
        assert_eq!(
            ev[0],
            ChaosEvent { kind: ChaosKind::Cut { from: 1, to: 0, both: true, cut: true }, at: At::Percent(40.0) }
        );
        assert_eq!(ev[1].at, At::PercentThen(40.0, Duration::from_millis(200)));
        assert_eq!(ev[1].kind, ChaosKind::Cut { from: 1, to: 0, both: true, cut: false });
    }

    #[test]
    fn parses_network_faults() {
        let ev = parse("partition:node=2,at=50%;cut:0-1,at=1s,for=2s;cut:2>0,at=3s;loss:0.2;delay:100,jitter=50,at=1s")
            .unwrap();
        assert_eq!(ev[0], ChaosEvent { kind: ChaosKind::Partition { node: 2, cut: true }, at: At::Percent(50.0) });
        assert_eq!(ev[1].kind, ChaosKind::Cut { from: 0, to: 1, both: true, cut: true });
        assert_eq!(
            ev[2],
            ChaosEvent {
                kind: ChaosKind::Cut { from: 0, to: 1, both: true, cut: false },
                at: At::After(Duration::from_secs(3))
            }
        );
        assert_eq!(ev[3].kind, ChaosKind::Cut { from: 2, to: 0, both: false, cut: true });
        assert_eq!(
            ev[4],
            ChaosEvent { kind: ChaosKind::Loss { node: None, rate: 0.2 }, at: At::After(Duration::ZERO) }
        );
        assert_eq!(ev[5].kind, ChaosKind::Delay { node: None, ms: 100.0, jitter: 50.0 });
        let ev = parse("split:nodes=0+2,at=1s,for=1s").unwrap();
        assert_eq!(ev[0].kind, ChaosKind::Split { side: 0b101, cut: true });
        assert_eq!(ev[1].kind, ChaosKind::Split { side: 0b101, cut: false });
        assert_eq!(ev[0].kind.nodes(), vec![0, 2]);
        assert!(parse("split:nodes=0+x,at=1s").unwrap_err().contains("nodes are numbers"));
        let ev = parse("partition:node=1,at=1s,for=5s;loss:30%,node=2;vanish:node=0,at=2s").unwrap();
        assert_eq!(ev[1].kind, ChaosKind::Partition { node: 1, cut: false });
        assert_eq!(ev[1].at, At::After(Duration::from_secs(6)));
        assert_eq!(ev[2].kind, ChaosKind::Loss { node: Some(2), rate: 0.3 });
        assert_eq!(ev[3].kind, ChaosKind::Vanish { node: 0 });
        assert!(ev[0].kind.is_network() && !ev[3].kind.is_network());
        assert_eq!(ChaosKind::Cut { from: 3, to: 1, both: true, cut: true }.nodes(), vec![3, 1]);
    }

    #[test]
    fn rejects_bad_specs_with_reasons() {
        // The grammar's own errors are `satin_faults`' (tested there);
        // here, that they come through, and what a real run refuses.
        for (spec, needle) in [
            ("explode:node=1,at=1s", "unknown fault"),
            ("crash-master:at=1s", "simulator's only"),
            ("corrupt:at=1s", "simulator's only"),
            ("kill-jobs:node=1,at=1s", "simulator's only"),
            ("join:cluster=2,at=1s", "cluster 0"),
            ("split:nodes=0+64,at=1s", "below 64"),
        ] {
            let e = parse(spec).unwrap_err();
            assert!(e.contains(needle), "{spec}: {e}");
        }
    }
}
