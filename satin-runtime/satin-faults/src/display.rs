//! Writing a schedule back in the language `parse` reads.

use std::fmt;

use super::{Crashed, Fault, Kind, Links, Nanos, When};

/// A whole schedule, `;`-separated. A fault followed later by its own end
/// at a time (`Kind::undo`) is written once, with `for=`.
pub fn to_spec(faults: &[Fault]) -> String {
    let mut folded = vec![false; faults.len()];
    let mut parts = Vec::new();
    for (i, f) in faults.iter().enumerate() {
        if folded[i] {
            continue;
        }
        // How long after `f` starts a later fault `g` strikes, if that
        // can be said (both at times, or both after the same share).
        let lasting = |g: &Fault| match (f.at, g.at) {
            (When::After(start), When::After(stop)) => stop.checked_sub(start),
            (When::Share(a), When::ShareThen(b, then)) if a == b => Some(then),
            (When::ShareThen(a, start), When::ShareThen(b, stop)) if a == b => stop.checked_sub(start),
            _ => None,
        };
        let end = match f.kind.undo() {
            Some(undo) if !is_end(&f.kind) => faults
                .iter()
                .enumerate()
                .skip(i + 1)
                .find_map(|(j, g)| (!folded[j] && g.kind == undo).then(|| lasting(g).map(|d| (j, d))).flatten()),
            _ => None,
        };
        match end {
            Some((j, d)) => {
                folded[j] = true;
                parts.push(format!("{f},for={}", time(d)));
            }
            None => parts.push(f.to_string()),
        }
    }
    parts.join(";")
}

/// Whether `kind` is itself the end of a lasting fault.
fn is_end(kind: &Kind) -> bool {
    kind.undo().as_ref() == Some(kind)
}

fn time(ns: Nanos) -> String {
    if ns.is_multiple_of(1_000_000_000) {
        format!("{}s", ns / 1_000_000_000)
    } else if ns.is_multiple_of(1_000_000) {
        format!("{}ms", ns / 1_000_000)
    } else {
        format!("{}ms", ns as f64 / 1e6)
    }
}

impl fmt::Display for When {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            When::After(ns) => f.write_str(&time(*ns)),
            // (Rounded: a share read from `30%` is written `30%`, not
            // `30.000000000000004%`.)
            When::Share(s) => write!(f, "{}%", (s * 100.0 * 1e6).round() / 1e6),
            When::ShareThen(s, then) => write!(f, "{}%+{}", (s * 100.0 * 1e6).round() / 1e6, time(*then)),
        }
    }
}

impl fmt::Display for Links {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Links::Node(n) => write!(f, "node={n}"),
            Links::Link { from, to, both: true } => write!(f, "{from}-{to}"),
            Links::Link { from, to, both: false } => write!(f, "{from}>{to}"),
            Links::Split(side) => {
                let side: Vec<String> = side.iter().map(u64::to_string).collect();
                write!(f, "nodes={}", side.join("+"))
            }
        }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = &self.at;
        match &self.kind {
            Kind::Crash(Crashed::Node(n)) => write!(f, "crash:node={n},at={at}"),
            Kind::Crash(Crashed::All) => write!(f, "crash-all:at={at}"),
            Kind::Crash(Crashed::Cluster(c)) => write!(f, "crash-cluster:cluster={c},at={at}"),
            Kind::Crash(Crashed::Master) => write!(f, "crash-master:at={at}"),
            Kind::Vanish(n) => write!(f, "vanish:node={n},at={at}"),
            Kind::Leave(n) => write!(f, "leave:node={n},at={at}"),
            Kind::Drain(n) => write!(f, "drain:node={n},at={at}"),
            Kind::Join(None) => write!(f, "join:at={at}"),
            Kind::Join(Some(c)) => write!(f, "join:cluster={c},at={at}"),
            Kind::Suspend(None) => write!(f, "suspend:at={at}"),
            Kind::Suspend(Some(n)) => write!(f, "suspend:node={n},at={at}"),
            Kind::Corrupt => write!(f, "corrupt:at={at}"),
            Kind::Slow { node, factor } if factor.is_infinite() => write!(f, "hang:node={node},at={at}"),
            Kind::Slow { node, factor } => write!(f, "slow:node={node},factor={factor},at={at}"),
            Kind::Fail { node, rate } => write!(f, "fail:node={node},rate={rate},at={at}"),
            Kind::FailRunning(n) => write!(f, "fail-running:node={n},at={at}"),
            Kind::KillJobs(n) => write!(f, "kill-jobs:node={n},at={at}"),
            Kind::Net { links: links @ Links::Node(_), cut: true } => write!(f, "partition:{links},at={at}"),
            Kind::Net { links: links @ Links::Link { .. }, cut: true } => write!(f, "cut:{links},at={at}"),
            Kind::Net { links: links @ Links::Split(_), cut: true } => write!(f, "split:{links},at={at}"),
            Kind::Net { links, cut: false } => write!(f, "heal:{links},at={at}"),
            Kind::Loss { node, rate } => {
                write!(f, "loss:{rate}")?;
                node.map_or(Ok(()), |n| write!(f, ",node={n}"))?;
                write!(f, ",at={at}")
            }
            Kind::Delay { node, ms, jitter } => {
                write!(f, "delay:{ms}")?;
                if *jitter > 0.0 {
                    write!(f, ",jitter={jitter}")?;
                }
                node.map_or(Ok(()), |n| write!(f, ",node={n}"))?;
                write!(f, ",at={at}")
            }
        }
    }
}
