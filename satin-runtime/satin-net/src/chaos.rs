//! `--chaos SPEC`: faults the supervisor of a local cluster injects.
//!
//! `SPEC` is a `;`-separated list of events, each `KIND:key=value,...`:
//! - `kill:node=N,at=T` — SIGKILL node process N (a crash);
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

/// Parses a chaos spec; the error says which part is wrong and why.
pub fn parse(spec: &str) -> Result<Vec<ChaosEvent>, String> {
    let mut out = Vec::new();
    for part in spec.split(';').map(str::trim).filter(|p| !p.is_empty()) {
        out.extend(parse_event(part)?);
    }
    Ok(out)
}

/// Kinds whose first argument is a bare value: `cut:1-2`, `loss:0.2`, `delay:100`.
const POSITIONAL: &[&str] = &["cut", "loss", "delay"];

fn parse_event(part: &str) -> Result<Vec<ChaosEvent>, String> {
    let (kind, args) = part.split_once(':').unwrap_or((part, ""));
    let kind = kind.trim();
    let mut node = None;
    let mut all = false;
    let mut at = None;
    let (mut factor, mut rate, mut lasting) = (None, None, None);
    let mut jitter = None;
    let mut side: Option<u64> = None;
    let mut items: Vec<&str> = args.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
    let positional = match items.first() {
        Some(first) if POSITIONAL.contains(&kind) && !first.contains('=') => Some(items.remove(0)),
        _ => None,
    };
    for kv in items {
        let (k, v) = kv.split_once('=').ok_or_else(|| format!("{part:?}: expected key=value, got {kv:?}"))?;
        let number = || v.parse::<f64>().ok().filter(|x| x.is_finite());
        match k {
            "node" if v == "all" => all = true,
            "node" => {
                node = Some(v.parse::<u32>().map_err(|_| format!("{part:?}: node must be a number or all, got {v:?}"))?)
            }
            "at" => at = Some(parse_at(v).map_err(|e| format!("{part:?}: {e}"))?),
            "factor" if kind == "slow" => {
                factor = Some(
                    number()
                        .filter(|f| *f >= 1.0)
                        .ok_or_else(|| format!("{part:?}: factor must be a number of at least 1, got {v:?}"))?,
                )
            }
            "rate" if kind == "fail" => {
                rate = Some(
                    number()
                        .filter(|r| (0.0..=1.0).contains(r))
                        .ok_or_else(|| format!("{part:?}: rate must be a probability (0 to 1), got {v:?}"))?,
                )
            }
            "nodes" if kind == "split" => {
                let mut bits = 0u64;
                for n in v.split('+') {
                    let n: u32 = n.trim().parse().ok().filter(|n| *n < 64).ok_or_else(|| {
                        format!("{part:?}: nodes are numbers below 64 joined by +, e.g. nodes=0+1, got {v:?}")
                    })?;
                    bits |= 1 << n;
                }
                side = Some(bits);
            }
            "jitter" if kind == "delay" => {
                jitter = Some(
                    number()
                        .filter(|j| *j >= 0.0)
                        .ok_or_else(|| format!("{part:?}: jitter is milliseconds, at least 0, got {v:?}"))?,
                )
            }
            "for" if matches!(kind, "slow" | "partition" | "cut" | "split" | "loss" | "delay") => {
                match parse_at(v).map_err(|e| format!("{part:?}: {e}"))? {
                    At::After(d) => lasting = Some(d),
                    At::Percent(_) => return Err(format!("{part:?}: for= is a duration (e.g. for=2s)")),
                }
            }
            _ => return Err(format!("{part:?}: unknown key {k:?} for {kind} (see --help for --chaos)")),
        }
    }
    let at = match at {
        Some(at) => at,
        None if matches!(kind, "fail" | "loss" | "delay") => At::After(Duration::ZERO),
        None => return Err(format!("{part:?}: missing at=TIME")),
    };
    let need_node = || node.ok_or_else(|| format!("{part:?}: missing node=N"));
    let kind = match kind {
        "kill" | "crash" if all => ChaosKind::KillAll,
        "kill" | "crash" => ChaosKind::Kill { node: need_node()? },
        _ if all => return Err(format!("{part:?}: node=all is for kill only")),
        "leave" => ChaosKind::Leave { node: need_node()? },
        "suspend" => ChaosKind::Suspend { node },
        "join" => {
            if node.is_some() {
                return Err(format!("{part:?}: a joining node gets the next number; drop node="));
            }
            ChaosKind::Join
        }
        "slow" => {
            ChaosKind::Slow { node: need_node()?, factor: factor.ok_or_else(|| format!("{part:?}: missing factor=F"))? }
        }
        "hang" => ChaosKind::Slow { node: need_node()?, factor: f64::INFINITY },
        "fail" => {
            ChaosKind::Fail { node: need_node()?, rate: rate.ok_or_else(|| format!("{part:?}: missing rate=P"))? }
        }
        "partition" => ChaosKind::Partition { node: need_node()?, cut: true },
        "split" => ChaosKind::Split {
            side: side.ok_or_else(|| format!("{part:?}: missing nodes=A+B (one side of the split)"))?,
            cut: true,
        },
        "vanish" => ChaosKind::Vanish { node: need_node()? },
        "cut" => {
            let link = positional.ok_or_else(|| format!("{part:?}: missing the link, e.g. cut:1-2 or cut:1>2"))?;
            let (both, (a, b)) = match (link.split_once('-'), link.split_once('>')) {
                (Some(ab), None) => (true, ab),
                (None, Some(ab)) => (false, ab),
                _ => return Err(format!("{part:?}: a link is A-B (both ways) or A>B (one way), got {link:?}")),
            };
            let number = |s: &str| {
                s.trim().parse::<u32>().map_err(|_| format!("{part:?}: {s:?} in the link is not a node number"))
            };
            let (from, to) = (number(a)?, number(b)?);
            if from == to {
                return Err(format!("{part:?}: a link joins two different nodes"));
            }
            ChaosKind::Cut { from, to, both, cut: true }
        }
        "loss" => {
            let p = positional.ok_or_else(|| format!("{part:?}: missing the loss rate, e.g. loss:0.2"))?;
            let rate = match p.strip_suffix('%') {
                Some(pct) => pct.parse::<f64>().map(|x| x / 100.0),
                None => p.parse::<f64>(),
            };
            let rate = rate
                .ok()
                .filter(|r| (0.0..=1.0).contains(r))
                .ok_or_else(|| format!("{part:?}: the loss rate is a probability (0 to 1, or 0% to 100%), got {p:?}"))?;
            ChaosKind::Loss { node, rate }
        }
        "delay" => {
            let ms = positional.ok_or_else(|| format!("{part:?}: missing the delay in milliseconds, e.g. delay:100"))?;
            let ms = ms
                .trim_end_matches("ms")
                .parse::<f64>()
                .ok()
                .filter(|m| m.is_finite() && *m >= 0.0)
                .ok_or_else(|| format!("{part:?}: the delay is milliseconds, at least 0, got {ms:?}"))?;
            ChaosKind::Delay { node, ms, jitter: jitter.unwrap_or(0.0) }
        }
        other => {
            return Err(format!(
                "{part:?}: unknown event {other:?} (expected kill, vanish, leave, join, suspend, slow, hang, fail, partition, cut, split, loss or delay)"
            ))
        }
    };
    let mut events = vec![ChaosEvent { kind, at }];
    if let Some(d) = lasting {
        let At::After(start) = at else {
            return Err(format!("{part:?}: for= needs at= a time, not a percentage"));
        };
        let undo = match kind {
            ChaosKind::Slow { node, .. } => ChaosKind::Slow { node, factor: 1.0 },
            ChaosKind::Partition { node, .. } => ChaosKind::Partition { node, cut: false },
            ChaosKind::Cut { from, to, both, .. } => ChaosKind::Cut { from, to, both, cut: false },
            ChaosKind::Split { side, .. } => ChaosKind::Split { side, cut: false },
            ChaosKind::Loss { node, .. } => ChaosKind::Loss { node, rate: 0.0 },
            ChaosKind::Delay { node, .. } => ChaosKind::Delay { node, ms: 0.0, jitter: 0.0 },
            _ => unreachable!("for= is parsed only for the kinds above"),
        };
        events.push(ChaosEvent { kind: undo, at: At::After(start + d) });
    }
    Ok(events)
}

fn parse_at(v: &str) -> Result<At, String> {
    let bad = || format!("bad time {v:?} (expected e.g. 2s, 500ms or 50%)");
    if let Some(p) = v.strip_suffix('%') {
        let p: f64 = p.parse().map_err(|_| bad())?;
        if !(0.0..=100.0).contains(&p) {
            return Err(format!("percentage {p} is not within 0..=100"));
        }
        return Ok(At::Percent(p));
    }
    let (num, scale) = if let Some(n) = v.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = v.strip_suffix('s') {
        (n, 1.0)
    } else {
        return Err(bad());
    };
    let n: f64 = num.parse().map_err(|_| bad())?;
    if !n.is_finite() || n < 0.0 {
        return Err(bad());
    }
    Ok(At::After(Duration::from_secs_f64(n * scale)))
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
        for (spec, needle) in [
            ("kill:at=1s", "missing node"),
            ("kill:node=1", "missing at"),
            ("explode:node=1,at=1s", "unknown event"),
            ("kill:node=x,at=1s", "node must be a number"),
            ("leave:node=all,at=1s", "for kill only"),
            ("kill:node=1,at=150%", "not within"),
            ("kill:node=1,at=soon", "bad time"),
            ("slow:node=1,at=1s", "missing factor"),
            ("slow:node=1,factor=0.5,at=1s", "at least 1"),
            ("fail:node=1,rate=1.5", "probability"),
            ("slow:node=1,factor=2,at=50%,for=1s", "needs at= a time"),
            ("hang:node=1,at=1s,factor=2", "unknown key"),
            ("join:node=4,at=1s", "next number"),
            ("kill:node=1,at=1s,color=red", "unknown key"),
            ("partition:at=1s", "missing node"),
            ("partition:node=1", "missing at"),
            ("cut:at=1s", "missing the link"),
            ("cut:1~2,at=1s", "A-B (both ways)"),
            ("cut:1-1,at=1s", "two different nodes"),
            ("cut:a-2,at=1s", "not a node number"),
            ("loss:1.5", "probability"),
            ("loss:", "missing the loss rate"),
            ("delay:-3", "at least 0"),
            ("delay:10,jitter=x", "jitter is milliseconds"),
            ("partition:node=1,at=50%,for=1s", "needs at= a time"),
            ("vanish:at=1s", "missing node"),
        ] {
            let e = parse(spec).unwrap_err();
            assert!(e.contains(needle), "{spec}: {e}");
        }
    }
}
