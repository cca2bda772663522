//! Fault schedules: what goes wrong, and when.

use super::workload::Nanos;

/// When a fault strikes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Trigger {
    /// At a virtual time.
    At(Nanos),
    /// Once this fraction of the distinct leaves has been executed.
    Progress(f64),
    /// This long after that fraction (the end of a lasting fault that
    /// starts at a share of the run).
    ProgressThen(f64, Nanos),
}

/// What happens.
#[derive(Clone, Debug, PartialEq)]
pub enum FaultKind {
    /// Crash one node (by index in start order; later joiners count on).
    Crash(u64),
    /// Crash every node of a cluster.
    CrashCluster(u32),
    /// Crash whichever node is master at that moment.
    CrashMaster,
    /// Immediate graceful leave of one node: it hands its finished results
    /// over and aborts what still runs.
    Leave(u64),
    /// Draining leave (SIGTERM in real runs): the node steals no more,
    /// finishes what it runs, returns the results, then leaves.
    Drain(u64),
    /// A new node joins the given cluster.
    Join(u32),
    /// Every node crashes at once (total loss).
    CrashAll,
    /// The run is suspended (as SIGUSR1 does).
    Suspend,
    /// One random bit of the checkpoint file flips.
    Corrupt,
    /// Leaves that start on the node from now on take `factor` times as
    /// long (1: normal again).
    Slow {
        /// The node.
        node: u64,
        /// How many times as long.
        factor: f64,
    },
    /// The node's jobs stop progressing; it still answers messages.
    Hang(u64),
    /// Jobs the node steals from now on fail at once with probability
    /// `rate` (0: never again).
    FailRate {
        /// The node.
        node: u64,
        /// The probability that a stolen job fails.
        rate: f64,
    },
    /// The jobs the node runs for others fail now (its job service died
    /// and says so).
    FailRunning(u64),
    /// The jobs the node runs for others vanish now, without a word to
    /// their victims (its workers were killed).
    LoseRunning(u64),
    /// The node crashes and nobody is told: only the failure detector
    /// finds out (a machine that died silently).
    Vanish(u64),
    /// The node is cut off from every other (`false`: reachable again).
    Isolate {
        /// The node.
        node: u64,
        /// Cut off (`true`) or reachable again.
        cut: bool,
    },
    /// Every link between `side` and the other nodes is cut (or mended).
    Split {
        /// The nodes on one side.
        side: Vec<u64>,
        /// Cut (`true`) or mended.
        cut: bool,
    },
    /// The link from `from` to `to` is cut (and back, with `both`), or mended.
    CutLink {
        /// The sending end.
        from: u64,
        /// The receiving end.
        to: u64,
        /// Both directions.
        both: bool,
        /// Cut (`true`) or mended.
        cut: bool,
    },
    /// Each packet is lost with this probability from now on (0: none).
    Loss(f64),
    /// Every message waits this much longer from now on, plus up to
    /// `jitter` more (so messages reorder; 0 and 0: none).
    Delay {
        /// The delay every message gets.
        extra: Nanos,
        /// Up to this much more, at random.
        jitter: Nanos,
    },
}

/// One fault of a schedule: when, and what.
#[derive(Clone, Debug, PartialEq)]
pub struct Fault {
    /// When it strikes.
    pub when: Trigger,
    /// What it does.
    pub kind: FaultKind,
}

/// Reads a schedule in the fault language `--chaos` reads too
/// (`satin_faults`, which lists every fault), e.g.
/// `crash:node=3,at=50%;crash-cluster:cluster=1,at=20s;crash-master:at=60%;leave:node=2,at=10s;join:cluster=0,at=5s`,
/// `slow:node=2,factor=10,at=5s,for=20s;hang:node=3,at=1s;fail:node=1,rate=0.5,at=0s;fail-running:node=1,at=3s;kill-jobs:node=2,at=4s`.
/// `at=50%` strikes once half the distinct leaves have run. What only
/// real processes do (a loss or delay of one node's packets) is refused.
pub fn parse(spec: &str) -> Result<Vec<Fault>, String> {
    satin_faults::parse(spec)?.into_iter().map(from_language).collect()
}

/// A schedule in the fault language: what a failing seed prints, for
/// `--chaos` or the simulator to run again.
pub fn to_spec(faults: &[Fault]) -> String {
    satin_faults::to_spec(&faults.iter().map(to_language).collect::<Vec<_>>())
}

fn from_language(f: satin_faults::Fault) -> Result<Fault, String> {
    use satin_faults::{Crashed, Kind, Links};
    let when = match f.at {
        satin_faults::When::After(ns) => Trigger::At(ns),
        satin_faults::When::Share(s) => Trigger::Progress(s),
        satin_faults::When::ShareThen(s, ns) => Trigger::ProgressThen(s, ns),
    };
    let only_every_link = || format!("{f}: the simulator's loss and delay are every link's; drop node=");
    let kind = match f.kind {
        Kind::Crash(Crashed::Node(n)) => FaultKind::Crash(n),
        Kind::Crash(Crashed::All) => FaultKind::CrashAll,
        Kind::Crash(Crashed::Cluster(c)) => FaultKind::CrashCluster(c),
        Kind::Crash(Crashed::Master) => FaultKind::CrashMaster,
        Kind::Vanish(n) => FaultKind::Vanish(n),
        Kind::Leave(n) => FaultKind::Leave(n),
        Kind::Drain(n) => FaultKind::Drain(n),
        Kind::Join(cluster) => FaultKind::Join(cluster.unwrap_or(0)),
        // Any node's signal suspends the whole run.
        Kind::Suspend(_) => FaultKind::Suspend,
        Kind::Corrupt => FaultKind::Corrupt,
        Kind::Slow { node, factor } if factor.is_infinite() => FaultKind::Hang(node),
        Kind::Slow { node, factor } => FaultKind::Slow { node, factor },
        Kind::Fail { node, rate } => FaultKind::FailRate { node, rate },
        Kind::FailRunning(n) => FaultKind::FailRunning(n),
        Kind::KillJobs(n) => FaultKind::LoseRunning(n),
        Kind::Net { links: Links::Node(node), cut } => FaultKind::Isolate { node, cut },
        Kind::Net { links: Links::Split(side), cut } => FaultKind::Split { side, cut },
        Kind::Net { links: Links::Link { from, to, both }, cut } => FaultKind::CutLink { from, to, both, cut },
        Kind::Loss { node: None, rate } => FaultKind::Loss(rate),
        Kind::Delay { node: None, ms, jitter } => {
            FaultKind::Delay { extra: (ms * 1e6).round() as Nanos, jitter: (jitter * 1e6).round() as Nanos }
        }
        Kind::Loss { node: Some(_), .. } | Kind::Delay { node: Some(_), .. } => return Err(only_every_link()),
    };
    Ok(Fault { when, kind })
}

fn to_language(f: &Fault) -> satin_faults::Fault {
    use satin_faults::{Crashed, Kind, Links};
    let at = match f.when {
        Trigger::At(ns) => satin_faults::When::After(ns),
        Trigger::Progress(s) => satin_faults::When::Share(s),
        Trigger::ProgressThen(s, ns) => satin_faults::When::ShareThen(s, ns),
    };
    let kind = match &f.kind {
        FaultKind::Crash(n) => Kind::Crash(Crashed::Node(*n)),
        FaultKind::CrashCluster(c) => Kind::Crash(Crashed::Cluster(*c)),
        FaultKind::CrashMaster => Kind::Crash(Crashed::Master),
        FaultKind::CrashAll => Kind::Crash(Crashed::All),
        FaultKind::Leave(n) => Kind::Leave(*n),
        FaultKind::Drain(n) => Kind::Drain(*n),
        FaultKind::Join(c) => Kind::Join(Some(*c)),
        FaultKind::Suspend => Kind::Suspend(None),
        FaultKind::Corrupt => Kind::Corrupt,
        FaultKind::Slow { node, factor } => Kind::Slow { node: *node, factor: *factor },
        FaultKind::Hang(n) => Kind::Slow { node: *n, factor: f64::INFINITY },
        FaultKind::FailRate { node, rate } => Kind::Fail { node: *node, rate: *rate },
        FaultKind::FailRunning(n) => Kind::FailRunning(*n),
        FaultKind::LoseRunning(n) => Kind::KillJobs(*n),
        FaultKind::Vanish(n) => Kind::Vanish(*n),
        FaultKind::Isolate { node, cut } => Kind::Net { links: Links::Node(*node), cut: *cut },
        FaultKind::Split { side, cut } => Kind::Net { links: Links::Split(side.clone()), cut: *cut },
        FaultKind::CutLink { from, to, both, cut } => {
            Kind::Net { links: Links::Link { from: *from, to: *to, both: *both }, cut: *cut }
        }
        FaultKind::Loss(rate) => Kind::Loss { node: None, rate: *rate },
        FaultKind::Delay { extra, jitter } => {
            Kind::Delay { node: None, ms: *extra as f64 / 1e6, jitter: *jitter as f64 / 1e6 }
        }
    };
    satin_faults::Fault { at, kind }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_kind_and_rejects_nonsense() {
        let f = parse("crash:node=3,at=50%; crash-cluster:cluster=1,at=2s;crash-master:at=1.5s;leave:node=2,at=10ms;join:cluster=0,at=5s")
            .unwrap();
        assert_eq!(f.len(), 5);
        assert_eq!(f[0], Fault { when: Trigger::Progress(0.5), kind: FaultKind::Crash(3) });
        assert_eq!(f[2].when, Trigger::At(1_500_000_000));
        assert_eq!(f[3].when, Trigger::At(10_000_000));
        assert!(parse("crash:at=5s").unwrap_err().contains("missing node"));
        assert!(parse("explode:at=5s").unwrap_err().contains("unknown fault"));
        assert!(parse("crash:node=1,at=150%").unwrap_err().contains("not within"));
        assert!(parse("crash:node=1,at=soon").unwrap_err().contains("bad time"));
    }

    #[test]
    fn parses_slow_hang_and_failing_nodes() {
        let f = parse("slow:node=2,factor=10,at=5s,for=20s;hang:node=3,at=1s;fail:node=1,rate=0.5,at=0s").unwrap();
        assert_eq!(f.len(), 4);
        assert_eq!(f[0].kind, FaultKind::Slow { node: 2, factor: 10.0 });
        assert_eq!(f[1], Fault { when: Trigger::At(25_000_000_000), kind: FaultKind::Slow { node: 2, factor: 1.0 } });
        assert_eq!(f[2].kind, FaultKind::Hang(3));
        assert_eq!(f[3].kind, FaultKind::FailRate { node: 1, rate: 0.5 });
        assert!(parse("slow:node=1,at=1s").unwrap_err().contains("missing factor"));
        assert!(parse("slow:node=1,factor=0.5,at=1s").unwrap_err().contains("at least 1"));
        assert!(parse("fail:node=1,rate=2,at=1s").unwrap_err().contains("probability"));
        let f = parse("slow:node=1,factor=2,at=50%,for=1s").unwrap();
        assert_eq!(
            f[1],
            Fault { when: Trigger::ProgressThen(0.5, 1_000_000_000), kind: FaultKind::Slow { node: 1, factor: 1.0 } }
        );
        assert!(parse("crash:node=1,at=1s,for=1s").unwrap_err().contains("slow, fail and network"));
    }

    #[test]
    fn parses_network_faults() {
        let f = parse("partition:node=2,at=1s,for=2s;split:nodes=0+1,at=5s;cut:1>3,at=2s;loss:0.3;vanish:node=4,at=3s")
            .unwrap();
        assert_eq!(f[0].kind, FaultKind::Isolate { node: 2, cut: true });
        assert_eq!(f[1], Fault { when: Trigger::At(3_000_000_000), kind: FaultKind::Isolate { node: 2, cut: false } });
        assert_eq!(f[2].kind, FaultKind::Split { side: vec![0, 1], cut: true });
        assert_eq!(f[3].kind, FaultKind::CutLink { from: 1, to: 3, both: false, cut: true });
        assert_eq!(f[4], Fault { when: Trigger::At(0), kind: FaultKind::Loss(0.3) });
        assert_eq!(f[5].kind, FaultKind::Vanish(4));
        assert!(parse("cut:1~2,at=1s").unwrap_err().contains("A-B"));
        assert!(parse("split:at=1s").unwrap_err().contains("missing nodes"));
        assert!(parse("loss:2").unwrap_err().contains("probability"));
        let f = parse("delay:100,jitter=50,at=1s,for=1s").unwrap();
        assert_eq!(f[0].kind, FaultKind::Delay { extra: 100_000_000, jitter: 50_000_000 });
        assert_eq!(f[1], Fault { when: Trigger::At(2_000_000_000), kind: FaultKind::Delay { extra: 0, jitter: 0 } });
        assert!(parse("loss:0.2,node=1").unwrap_err().contains("every link's"));
    }

    #[test]
    fn a_schedule_is_printed_in_the_language_chaos_reads() {
        let spec = "crash:node=3,at=50%;crash-all:at=2s;hang:node=1,at=1s;partition:node=2,at=1s,for=2s;delay:100,jitter=50,at=1s";
        let faults = parse(spec).unwrap();
        assert_eq!(to_spec(&faults), spec);
        assert_eq!(parse(&to_spec(&faults)).unwrap(), faults);
    }
}
