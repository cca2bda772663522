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
//! Nodes are numbered in start order: 0 is the first master, joiners get
//! the next numbers. `T` is a time since the start (`2s`, `500ms`) or a
//! percentage (`50%`) of how long the same run takes without faults, which
//! the supervisor measures first with a calibration run.

use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum At {
    After(Duration),
    Percent(f64),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ChaosKind {
    Kill {
        node: u32,
    },
    KillAll,
    Leave {
        node: u32,
    },
    Join,
    Suspend {
        node: Option<u32>,
    },
    /// `factor` 1: full speed again; infinite: hung.
    Slow {
        node: u32,
        factor: f64,
    },
    Fail {
        node: u32,
        rate: f64,
    },
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChaosEvent {
    pub kind: ChaosKind,
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

fn parse_event(part: &str) -> Result<Vec<ChaosEvent>, String> {
    let (kind, args) = part.split_once(':').unwrap_or((part, ""));
    let kind = kind.trim();
    let mut node = None;
    let mut all = false;
    let mut at = None;
    let (mut factor, mut rate, mut lasting) = (None, None, None);
    for kv in args.split(',').map(str::trim).filter(|s| !s.is_empty()) {
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
            "for" if kind == "slow" => match parse_at(v).map_err(|e| format!("{part:?}: {e}"))? {
                At::After(d) => lasting = Some(d),
                At::Percent(_) => return Err(format!("{part:?}: for= is a duration (e.g. for=2s)")),
            },
            _ => return Err(format!("{part:?}: unknown key {k:?} for {kind} (see --help for --chaos)")),
        }
    }
    let at = match at {
        Some(at) => at,
        None if kind == "fail" => At::After(Duration::ZERO),
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
        other => {
            return Err(format!(
                "{part:?}: unknown event {other:?} (expected kill, leave, join, suspend, slow, hang or fail)"
            ))
        }
    };
    let mut events = vec![ChaosEvent { kind, at }];
    if let (Some(d), ChaosKind::Slow { node, .. }) = (lasting, kind) {
        let At::After(start) = at else {
            return Err(format!("{part:?}: for= needs at= a time, not a percentage"));
        };
        events.push(ChaosEvent { kind: ChaosKind::Slow { node, factor: 1.0 }, at: At::After(start + d) });
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
        ] {
            let e = parse(spec).unwrap_err();
            assert!(e.contains(needle), "{spec}: {e}");
        }
    }
}
