//! Fault schedules: what goes wrong, and when.

use super::workload::Nanos;

/// When a fault strikes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Trigger {
    /// At a virtual time.
    At(Nanos),
    /// Once this fraction of the distinct leaves has been executed.
    Progress(f64),
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

/// Parses `kind:key=value,...` faults separated by `;`, e.g.
/// `crash:node=3,at=50%;crash-cluster:cluster=1,at=20s;crash-master:at=60%;leave:node=2,at=10s;join:cluster=0,at=5s`,
/// `slow:node=2,factor=10,at=5s,for=20s;hang:node=3,at=1s;fail:node=1,rate=0.5,at=0s;fail-running:node=1,at=3s;kill-jobs:node=2,at=4s`.
/// A `for=` duration ends a slow-down or a failure rate (it needs `at=` a time).
pub fn parse(spec: &str) -> Result<Vec<Fault>, String> {
    let mut out = Vec::new();
    for part in spec.split(';').map(str::trim).filter(|p| !p.is_empty()) {
        let (kind, args) = part.split_once(':').unwrap_or((part, ""));
        let mut when = None;
        let (mut node, mut cluster) = (None, None);
        let (mut factor, mut rate, mut lasting) = (None, None, None);
        let mut side: Option<Vec<u64>> = None;
        let mut items: Vec<&str> = args.split(',').map(str::trim).filter(|a| !a.is_empty()).collect();
        // `cut:1-2` and `loss:0.2` name their link or rate first.
        let positional = match items.first() {
            Some(first) if matches!(kind, "cut" | "loss" | "delay") && !first.contains('=') => Some(items.remove(0)),
            _ => None,
        };
        let mut jitter = None;
        for kv in items {
            let (k, v) = kv.split_once('=').ok_or_else(|| format!("`{kv}` in `{part}`: expected key=value"))?;
            let number = |what: &str| {
                v.parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite())
                    .ok_or_else(|| format!("`{part}`: {what} must be a number"))
            };
            match k {
                "at" => when = Some(parse_when(v).map_err(|e| format!("`{part}`: {e}"))?),
                "node" => node = Some(v.parse::<u64>().map_err(|_| format!("`{part}`: node must be a number"))?),
                "cluster" => {
                    cluster = Some(v.parse::<u32>().map_err(|_| format!("`{part}`: cluster must be a number"))?)
                }
                "jitter" => {
                    let ms = v.parse::<f64>().ok().filter(|m| m.is_finite() && *m >= 0.0);
                    jitter = Some((ms.ok_or_else(|| format!("`{part}`: jitter is milliseconds"))? * 1e6) as Nanos);
                }
                "nodes" => {
                    let ids: Result<Vec<u64>, _> = v.split('+').map(|n| n.trim().parse::<u64>()).collect();
                    side = Some(ids.map_err(|_| format!("`{part}`: nodes are numbers joined by +, e.g. nodes=0+1"))?);
                }
                "factor" => factor = Some(number("factor")?).filter(|f| *f >= 1.0),
                "rate" => rate = Some(number("rate")?).filter(|r| (0.0..=1.0).contains(r)),
                "for" => match parse_when(v).map_err(|e| format!("`{part}`: {e}"))? {
                    Trigger::At(d) => lasting = Some(d),
                    Trigger::Progress(_) => return Err(format!("`{part}`: for= is a duration (e.g. for=20s)")),
                },
                _ => {
                    return Err(format!(
                        "`{part}`: unknown key `{k}` (expected at, node, nodes, cluster, factor, rate, for)"
                    ))
                }
            }
        }
        let when = match when {
            Some(w) => w,
            None if matches!(kind, "loss" | "delay") => Trigger::At(0),
            None => return Err(format!("`{part}`: missing at=TIME (e.g. at=12s, at=500ms, at=50%)")),
        };
        let need_node = || node.ok_or_else(|| format!("`{part}`: missing node=N"));
        let need_cluster = || cluster.ok_or_else(|| format!("`{part}`: missing cluster=C"));
        let kind = match kind {
            "crash" => FaultKind::Crash(need_node()?),
            "crash-cluster" => FaultKind::CrashCluster(need_cluster()?),
            "crash-master" => FaultKind::CrashMaster,
            "leave" => FaultKind::Leave(need_node()?),
            "drain" => FaultKind::Drain(need_node()?),
            "join" => FaultKind::Join(need_cluster()?),
            "crash-all" => FaultKind::CrashAll,
            "suspend" => FaultKind::Suspend,
            "corrupt" => FaultKind::Corrupt,
            "slow" => FaultKind::Slow {
                node: need_node()?,
                factor: factor.ok_or_else(|| format!("`{part}`: missing factor=F (at least 1)"))?,
            },
            "hang" => FaultKind::Hang(need_node()?),
            "fail" => FaultKind::FailRate {
                node: need_node()?,
                rate: rate.ok_or_else(|| format!("`{part}`: missing rate=P (0 to 1)"))?,
            },
            "fail-running" => FaultKind::FailRunning(need_node()?),
            "kill-jobs" => FaultKind::LoseRunning(need_node()?),
            "vanish" => FaultKind::Vanish(need_node()?),
            "partition" => FaultKind::Isolate { node: need_node()?, cut: true },
            "split" => FaultKind::Split {
                side: side.ok_or_else(|| format!("`{part}`: missing nodes=A+B+… (one side of the split)"))?,
                cut: true,
            },
            "cut" => {
                let link = positional.ok_or_else(|| format!("`{part}`: missing the link, e.g. cut:1-2 or cut:1>2"))?;
                let (both, (a, b)) = match (link.split_once('-'), link.split_once('>')) {
                    (Some(ab), None) => (true, ab),
                    (None, Some(ab)) => (false, ab),
                    _ => return Err(format!("`{part}`: a link is A-B (both ways) or A>B (one way)")),
                };
                let n = |x: &str| x.trim().parse::<u64>().map_err(|_| format!("`{part}`: `{x}` is not a node"));
                FaultKind::CutLink { from: n(a)?, to: n(b)?, both, cut: true }
            }
            "loss" => {
                let p = positional.ok_or_else(|| format!("`{part}`: missing the loss rate, e.g. loss:0.2"))?;
                let p = p.parse::<f64>().ok().filter(|p| (0.0..=1.0).contains(p));
                FaultKind::Loss(p.ok_or_else(|| format!("`{part}`: the loss rate is a probability (0 to 1)"))?)
            }
            "delay" => {
                let ms = positional.ok_or_else(|| format!("`{part}`: missing the delay, e.g. delay:100"))?;
                let ms = ms.parse::<f64>().ok().filter(|m| m.is_finite() && *m >= 0.0);
                let extra = (ms.ok_or_else(|| format!("`{part}`: the delay is milliseconds"))? * 1e6) as Nanos;
                FaultKind::Delay { extra, jitter: jitter.unwrap_or(0) }
            }
            k => {
                return Err(format!(
                    "unknown fault `{k}` (expected crash, crash-cluster, crash-master, crash-all, vanish, leave, drain, join, suspend, corrupt, slow, hang, fail, fail-running, kill-jobs, partition, split, cut, loss, delay)"
                ))
            }
        };
        if let Some(d) = lasting {
            let Trigger::At(at) = when else {
                return Err(format!("`{part}`: for= needs at= a time, not a percentage"));
            };
            let end = match &kind {
                FaultKind::Slow { node, .. } => FaultKind::Slow { node: *node, factor: 1.0 },
                FaultKind::FailRate { node, .. } => FaultKind::FailRate { node: *node, rate: 0.0 },
                FaultKind::Isolate { node, .. } => FaultKind::Isolate { node: *node, cut: false },
                FaultKind::Split { side, .. } => FaultKind::Split { side: side.clone(), cut: false },
                FaultKind::CutLink { from, to, both, .. } => {
                    FaultKind::CutLink { from: *from, to: *to, both: *both, cut: false }
                }
                FaultKind::Loss(_) => FaultKind::Loss(0.0),
                FaultKind::Delay { .. } => FaultKind::Delay { extra: 0, jitter: 0 },
                _ => return Err(format!("`{part}`: for= is for slow, fail and network faults only")),
            };
            out.push(Fault { when, kind });
            out.push(Fault { when: Trigger::At(at + d), kind: end });
            continue;
        }
        out.push(Fault { when, kind });
    }
    Ok(out)
}

fn parse_when(v: &str) -> Result<Trigger, String> {
    if let Some(p) = v.strip_suffix('%') {
        let f: f64 = p.parse().map_err(|_| format!("bad percentage `{v}`"))?;
        if !(0.0..=100.0).contains(&f) {
            return Err(format!("percentage `{v}` outside 0..100"));
        }
        return Ok(Trigger::Progress(f / 100.0));
    }
    let (num, scale) = if let Some(n) = v.strip_suffix("ms") {
        (n, 1e6)
    } else if let Some(n) = v.strip_suffix('s') {
        (n, 1e9)
    } else {
        return Err(format!("bad time `{v}` (use 12s, 500ms or 50%)"));
    };
    let x: f64 = num.parse().map_err(|_| format!("bad time `{v}`"))?;
    if !(x >= 0.0 && x.is_finite()) {
        return Err(format!("bad time `{v}`"));
    }
    Ok(Trigger::At((x * scale) as Nanos))
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
        assert!(parse("crash:node=1,at=150%").unwrap_err().contains("outside"));
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
        assert!(parse("slow:node=1,factor=0.5,at=1s").unwrap_err().contains("missing factor"));
        assert!(parse("fail:node=1,rate=2,at=1s").unwrap_err().contains("missing rate"));
        assert!(parse("slow:node=1,factor=2,at=50%,for=1s").unwrap_err().contains("needs at= a time"));
        assert!(parse("hang:node=1,at=1s,for=1s").unwrap_err().contains("slow, fail and network"));
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
    }
}
