//! Reading a schedule: each part is checked against its kind's keys, and
//! every error names the part and says what was expected.

use super::{Crashed, Fault, Kind, Links, Nanos, When};

/// Every kind of fault, for the message about an unknown one.
const KINDS: &str = "crash (or kill), crash-all, crash-cluster, crash-master, vanish, leave, drain, join, suspend, \
                     corrupt, slow, hang, fail, fail-running, kill-jobs, partition, cut, split, heal, loss or delay";

/// Parses a schedule; a `for=` fault becomes two, its start and its end.
/// The error says which part is wrong and why.
pub fn parse(spec: &str) -> Result<Vec<Fault>, String> {
    let mut out = Vec::new();
    for part in spec.split(';').map(str::trim).filter(|p| !p.is_empty()) {
        out.extend(Part::read(part)?.faults()?);
    }
    Ok(out)
}

/// One part of a schedule, read into its words.
struct Part<'a> {
    text: &'a str,
    kind: &'a str,
    /// A bare first argument: `cut:1-2`, `loss:0.2`, `delay:100`, `heal:1-2`.
    positional: Option<&'a str>,
    keys: Vec<(&'a str, &'a str)>,
}

impl<'a> Part<'a> {
    fn read(text: &'a str) -> Result<Part<'a>, String> {
        let (kind, args) = text.split_once(':').unwrap_or((text, ""));
        let kind = kind.trim();
        let mut items: Vec<&str> = args.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
        let positional = match items.first() {
            Some(first) if matches!(kind, "cut" | "loss" | "delay" | "heal") && !first.contains('=') => {
                Some(items.remove(0))
            }
            _ => None,
        };
        let mut keys = Vec::new();
        for kv in items {
            let (k, v) = kv.split_once('=').ok_or_else(|| format!("{text:?}: expected key=value, got {kv:?}"))?;
            keys.push((k.trim(), v.trim()));
        }
        Ok(Part { text, kind, positional, keys })
    }

    fn error(&self, what: impl std::fmt::Display) -> String {
        format!("{:?}: {what}", self.text)
    }

    fn get(&self, key: &str) -> Option<&'a str> {
        self.keys.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }

    fn node(&self) -> Result<Option<u64>, String> {
        self.get("node")
            .map(|v| v.parse::<u64>().map_err(|_| self.error(format!("node must be a number, got {v:?}"))))
            .transpose()
    }

    fn need_node(&self) -> Result<u64, String> {
        self.node()?.ok_or_else(|| self.error("missing node=N"))
    }

    fn number(&self, key: &str, ok: impl Fn(f64) -> bool, what: &str) -> Result<Option<f64>, String> {
        self.get(key)
            .map(|v| {
                v.parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && ok(*x))
                    .ok_or_else(|| self.error(format!("{key} must be {what}, got {v:?}")))
            })
            .transpose()
    }

    fn nodes(&self) -> Result<Vec<u64>, String> {
        let v = self.get("nodes").ok_or_else(|| self.error("missing nodes=A+B+… (one side of the split)"))?;
        v.split('+')
            .map(|n| n.trim().parse::<u64>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| self.error(format!("nodes are numbers joined by +, e.g. nodes=0+1, got {v:?}")))
    }

    fn link(&self) -> Result<Links, String> {
        let link = self.positional.ok_or_else(|| self.error("missing the link, e.g. cut:1-2 or cut:1>2"))?;
        let (both, (a, b)) = match (link.split_once('-'), link.split_once('>')) {
            (Some(ab), None) => (true, ab),
            (None, Some(ab)) => (false, ab),
            _ => return Err(self.error(format!("a link is A-B (both ways) or A>B (one way), got {link:?}"))),
        };
        let number = |s: &str| {
            s.trim().parse::<u64>().map_err(|_| self.error(format!("{s:?} in the link is not a node number")))
        };
        let (from, to) = (number(a)?, number(b)?);
        if from == to {
            return Err(self.error("a link joins two different nodes"));
        }
        Ok(Links::Link { from, to, both })
    }

    /// The keys each kind takes besides `at` (and `for`, for lasting ones).
    fn allowed(&self) -> &'static [&'static str] {
        match self.kind {
            "crash" | "kill" | "vanish" | "leave" | "drain" | "hang" | "fail-running" | "kill-jobs" | "partition" => {
                &["node"]
            }
            "crash-cluster" | "join" => &["cluster", "node"],
            "suspend" => &["node"],
            "slow" => &["node", "factor"],
            "fail" => &["node", "rate"],
            "split" => &["nodes"],
            "heal" => &["node", "nodes"],
            "loss" => &["node"],
            "delay" => &["node", "jitter"],
            _ => &[],
        }
    }

    fn faults(&self) -> Result<Vec<Fault>, String> {
        let kind = self.kind()?;
        for (k, _) in &self.keys {
            if !matches!(*k, "at" | "for") && !self.allowed().contains(k) {
                return Err(self.error(format!("unknown key {k:?} for {}", self.kind)));
            }
        }
        let at = match self.get("at") {
            Some(v) => when(v).map_err(|e| self.error(e))?,
            None if matches!(kind, Kind::Fail { .. } | Kind::Loss { .. } | Kind::Delay { .. }) => When::After(0),
            None => return Err(self.error("missing at=TIME (e.g. at=2s, at=500ms, at=50%)")),
        };
        let Some(lasting) = self.get("for") else { return Ok(vec![Fault { at, kind }]) };
        let lasting = match when(lasting).map_err(|e| self.error(e))? {
            When::After(d) => d,
            When::Share(_) | When::ShareThen(..) => return Err(self.error("for= is a duration (e.g. for=2s)")),
        };
        let undo = match (&kind, self.kind) {
            (_, "heal") | (Kind::Crash(_) | Kind::Vanish(_), _) => None,
            _ => kind.undo(),
        };
        let undo = undo.ok_or_else(|| self.error("for= is for slow, fail and network faults only"))?;
        let end = match at {
            When::After(start) => When::After(start + lasting),
            When::Share(share) => When::ShareThen(share, lasting),
            When::ShareThen(share, then) => When::ShareThen(share, then + lasting),
        };
        Ok(vec![Fault { at, kind }, Fault { at: end, kind: undo }])
    }

    fn kind(&self) -> Result<Kind, String> {
        let all = self.get("node") == Some("all");
        if all && !matches!(self.kind, "crash" | "kill") {
            return Err(self.error("node=all is for crash (kill) only"));
        }
        let cluster = || {
            self.get("cluster")
                .map(|v| v.parse::<u32>().map_err(|_| self.error(format!("cluster must be a number, got {v:?}"))))
                .transpose()
        };
        Ok(match self.kind {
            "crash" | "kill" if all => Kind::Crash(Crashed::All),
            "crash" | "kill" => Kind::Crash(Crashed::Node(self.need_node()?)),
            "crash-all" => Kind::Crash(Crashed::All),
            "crash-cluster" => {
                Kind::Crash(Crashed::Cluster(cluster()?.ok_or_else(|| self.error("missing cluster=C"))?))
            }
            "crash-master" => Kind::Crash(Crashed::Master),
            "vanish" => Kind::Vanish(self.need_node()?),
            "leave" => Kind::Leave(self.need_node()?),
            "drain" => Kind::Drain(self.need_node()?),
            "join" => {
                if self.get("node").is_some() {
                    return Err(self.error("a joining node gets the next number; drop node="));
                }
                Kind::Join(cluster()?)
            }
            "suspend" => Kind::Suspend(self.node()?),
            "corrupt" => Kind::Corrupt,
            "slow" => Kind::Slow {
                node: self.need_node()?,
                factor: self
                    .number("factor", |f| f >= 1.0, "a number of at least 1")?
                    .ok_or_else(|| self.error("missing factor=F (at least 1)"))?,
            },
            "hang" => Kind::Slow { node: self.need_node()?, factor: f64::INFINITY },
            "fail" => Kind::Fail {
                node: self.need_node()?,
                rate: self
                    .number("rate", |r| (0.0..=1.0).contains(&r), "a probability (0 to 1)")?
                    .ok_or_else(|| self.error("missing rate=P (0 to 1)"))?,
            },
            "fail-running" => Kind::FailRunning(self.need_node()?),
            "kill-jobs" => Kind::KillJobs(self.need_node()?),
            "partition" => Kind::Net { links: Links::Node(self.need_node()?), cut: true },
            "cut" => Kind::Net { links: self.link()?, cut: true },
            "split" => Kind::Net { links: Links::Split(self.nodes()?), cut: true },
            "heal" => {
                let links = match (self.positional, self.node()?) {
                    (Some(_), None) => self.link()?,
                    (None, Some(n)) => Links::Node(n),
                    (None, None) if self.get("nodes").is_some() => Links::Split(self.nodes()?),
                    _ => return Err(self.error("heal names one of: node=N, a link A-B, or nodes=A+B")),
                };
                Kind::Net { links, cut: false }
            }
            "loss" => {
                let p = self.positional.ok_or_else(|| self.error("missing the loss rate, e.g. loss:0.2"))?;
                let rate = match p.strip_suffix('%') {
                    Some(pct) => pct.parse::<f64>().map(|x| x / 100.0),
                    None => p.parse::<f64>(),
                };
                let rate = rate.ok().filter(|r| (0.0..=1.0).contains(r)).ok_or_else(|| {
                    self.error(format!("the loss rate is a probability (0 to 1, or 0% to 100%), got {p:?}"))
                })?;
                Kind::Loss { node: self.node()?, rate }
            }
            "delay" => {
                let ms =
                    self.positional.ok_or_else(|| self.error("missing the delay in milliseconds, e.g. delay:100"))?;
                let ms = ms
                    .trim_end_matches("ms")
                    .parse::<f64>()
                    .ok()
                    .filter(|m| m.is_finite() && *m >= 0.0)
                    .ok_or_else(|| self.error(format!("the delay is milliseconds, at least 0, got {ms:?}")))?;
                let jitter = self
                    .get("jitter")
                    .map(|v| {
                        v.trim_end_matches("ms")
                            .parse::<f64>()
                            .ok()
                            .filter(|j| j.is_finite() && *j >= 0.0)
                            .ok_or_else(|| self.error(format!("jitter is milliseconds, at least 0, got {v:?}")))
                    })
                    .transpose()?;
                Kind::Delay { node: self.node()?, ms, jitter: jitter.unwrap_or(0.0) }
            }
            other => return Err(self.error(format!("unknown fault {other:?} (expected {KINDS})"))),
        })
    }
}

/// `2s`, `500ms`, `1.5s` or `50%`.
fn when(v: &str) -> Result<When, String> {
    let bad = || format!("bad time {v:?} (expected e.g. 2s, 500ms, 50% or 50%+200ms)");
    if let Some((share, then)) = v.split_once("%+") {
        let (When::Share(share), When::After(then)) = (when(&format!("{share}%"))?, when(then)?) else {
            return Err(bad());
        };
        return Ok(When::ShareThen(share, then));
    }
    if let Some(p) = v.strip_suffix('%') {
        let p: f64 = p.parse().map_err(|_| bad())?;
        if !(0.0..=100.0).contains(&p) {
            return Err(format!("percentage {p} is not within 0..=100"));
        }
        return Ok(When::Share(p / 100.0));
    }
    let (num, scale) = match (v.strip_suffix("ms"), v.strip_suffix('s')) {
        (Some(n), _) => (n, 1e6),
        (None, Some(n)) => (n, 1e9),
        _ => return Err(bad()),
    };
    let n: f64 = num.parse().map_err(|_| bad())?;
    if !n.is_finite() || n < 0.0 {
        return Err(bad());
    }
    Ok(When::After((n * scale).round() as Nanos))
}
