//! `--chaos SPEC`: faults the supervisor of a local cluster injects.
//!
//! `SPEC` is a `;`-separated list of events, each `KIND:key=value,...`:
//! - `kill:node=N,at=T` — SIGKILL node process N (a crash);
//! - `leave:node=N,at=T` — SIGTERM node process N (a graceful leave);
//! - `join:at=T` — start one more node process that joins the run;
//! - `kill:node=all,at=T` — SIGKILL every node process (a total loss; with
//!   `--checkpoint` the same command resumes the run);
//! - `suspend:at=T` (or `suspend:node=N,at=T`) — SIGUSR1 to a node (the
//!   first live one by default): the whole run is suspended.
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
    Kill { node: u32 },
    KillAll,
    Leave { node: u32 },
    Join,
    Suspend { node: Option<u32> },
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChaosEvent {
    pub kind: ChaosKind,
    pub at: At,
}

/// Parses a chaos spec; the error says which part is wrong and why.
pub fn parse(spec: &str) -> Result<Vec<ChaosEvent>, String> {
    spec.split(';').map(str::trim).filter(|p| !p.is_empty()).map(parse_event).collect()
}

fn parse_event(part: &str) -> Result<ChaosEvent, String> {
    let (kind, args) = part.split_once(':').unwrap_or((part, ""));
    let mut node = None;
    let mut all = false;
    let mut at = None;
    for kv in args.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (k, v) = kv.split_once('=').ok_or_else(|| format!("{part:?}: expected key=value, got {kv:?}"))?;
        match k {
            "node" if v == "all" => all = true,
            "node" => {
                node = Some(v.parse::<u32>().map_err(|_| format!("{part:?}: node must be a number or all, got {v:?}"))?)
            }
            "at" => at = Some(parse_at(v).map_err(|e| format!("{part:?}: {e}"))?),
            _ => return Err(format!("{part:?}: unknown key {k:?} (expected node or at)")),
        }
    }
    let at = at.ok_or_else(|| format!("{part:?}: missing at=TIME"))?;
    let need_node = || node.ok_or_else(|| format!("{part:?}: missing node=N"));
    let kind = match kind.trim() {
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
        other => return Err(format!("{part:?}: unknown event {other:?} (expected kill, leave, join or suspend)")),
    };
    Ok(ChaosEvent { kind, at })
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
            ("join:node=4,at=1s", "next number"),
            ("kill:node=1,at=1s,color=red", "unknown key"),
        ] {
            let e = parse(spec).unwrap_err();
            assert!(e.contains(needle), "{spec}: {e}");
        }
    }
}
