//! Shared values in the simulator: each node's executor keeps a model of
//! one incumbent — the greatest leaf (by its place in the tree) its jobs
//! have run — and the protocol core moves it between nodes exactly as it
//! moves a real run's (news at each idle check and, while busy, on the
//! core's own `SharedNews` timer, every [`SHARED_NEWS_EVERY`] as in a
//! real run; everything to joiners and to peers whose link comes back,
//! merges of what arrives). The world checks
//! that no improvement a node made is lost to a member that stays in the
//! run (`World::check_shared`; the report's `shared_missing`).

use satin_proto::{Config, Msg, SharedValues, SHARED_NEWS_EVERY};

use super::events::Ev;
use super::World;

/// The model incumbent's name on the wire.
const NAME: &str = "greatest leaf";

/// The protocol's configuration for a run that `models` shared values:
/// the core's own news timer set as a real run sets it (unless the
/// scenario set one). A run without them keeps the configuration as it
/// is: no timer wakes a node for news that cannot come.
pub(super) fn with_news_timer(mut protocol: Config, models: bool) -> Config {
    if models && protocol.shared_news_every.is_none() {
        protocol.shared_news_every = Some(SHARED_NEWS_EVERY);
    }
    protocol
}

/// One node's replica of the model incumbent.
#[derive(Debug, Default)]
pub struct SharedModel {
    /// The run models shared values (`SimConfig::shared_values`): without,
    /// nothing is offered and no message is sent.
    pub enabled: bool,
    /// The greatest value known here (0: none yet).
    value: u64,
    /// The greatest value this node's own jobs made it reach (an offer
    /// that improved the value here: news the core must spread).
    improved: u64,
    /// Jobs here improved it since the core last took the news.
    news: bool,
}

impl SharedModel {
    /// A job here offers `v`.
    pub(super) fn offer(&mut self, v: u64) {
        if !self.enabled {
            return;
        }
        if v > self.value {
            self.value = v;
            self.improved = v;
            self.news = true;
        }
    }

    /// The greatest value known here.
    pub fn value(&self) -> u64 {
        self.value
    }

    /// The news for every peer, once.
    pub(super) fn take(&mut self) -> Option<SharedValues> {
        std::mem::take(&mut self.news).then(|| values(self.value))
    }

    /// Everything, for a joiner or a peer whose link came back.
    pub(super) fn all(&self) -> Option<SharedValues> {
        (self.value > 0).then(|| values(self.value))
    }

    /// A peer's values, joined in (not news: they are not sent on).
    pub(super) fn merge(&mut self, values: SharedValues) {
        for (name, _, v) in values.incumbents {
            if name == NAME {
                self.value = self.value.max(v);
            }
        }
    }

    /// The value in flight in `msg`, if it carries the model's.
    fn carried(msg: &Msg) -> Option<u64> {
        match msg {
            Msg::Shared(values) => values.incumbents.iter().filter(|(n, ..)| n == NAME).map(|&(_, _, v)| v).max(),
            _ => None,
        }
    }
}

fn values(v: u64) -> SharedValues {
    SharedValues { incumbents: vec![(NAME.to_string(), true, v)], objects: Vec::new() }
}

impl World<'_> {
    /// Counts the pairs of nodes in the run where an improvement one made
    /// is lost to the other — the core's promise: what a node's jobs
    /// improve goes to every member it knows. For every node `s` and every
    /// receiver `r` that `s` counts as a live member (both still in the
    /// run, the link from `s` not down), `r` must have a value at least as
    /// great as the greatest that `s`'s own jobs made `s` reach, or one
    /// must be on its way to `r`: sent, waiting on a cut link, or news at
    /// a node that knows `r` (sent at its next check). A link that is down
    /// is skipped: when it comes back the peer gets everything. Not
    /// promised, and not checked: values merged from a peer are not sent
    /// on, so what a node that then left the run (crashed, or removed with
    /// a stale view) sent to only some members stays with those.
    pub(super) fn check_shared(&mut self) {
        let mut in_flight: std::collections::HashMap<usize, u64> = Default::default();
        let mut note = |to: usize, msg: &Msg| {
            if let Some(v) = SharedModel::carried(msg) {
                let e = in_flight.entry(to).or_default();
                *e = (*e).max(v);
            }
        };
        for ev in self.queue.events() {
            match ev {
                Ev::Deliver { to, msg, .. } => note(*to, msg),
                Ev::Fanout { to, msg, .. } => to.iter().for_each(|t| note(*t, msg)),
                _ => {}
            }
        }
        for (&(_, to), msgs) in self.net.held_messages() {
            msgs.iter().for_each(|m| note(to, m));
        }
        let in_run = |w: &World<'_>, i: usize| !w.nodes[i].gone && !w.nodes[i].crashed && w.nodes[i].core.joined();
        // News not yet sent count as on their way to every member the
        // node knows of.
        for s in (0..self.nodes.len()).filter(|&s| in_run(self, s)) {
            let model = &self.nodes[s].exec.shared;
            if model.news {
                for r in self.nodes[s].core.live_members() {
                    let e = in_flight.entry(r as usize).or_default();
                    *e = (*e).max(model.value);
                }
            }
        }
        for s in 0..self.nodes.len() {
            if !in_run(self, s) {
                continue;
            }
            let own = self.nodes[s].exec.shared.improved;
            for r in self.nodes[s].core.live_members().map(|r| r as usize) {
                if r == s || r >= self.nodes.len() || !in_run(self, r) || self.net.is_down(s, r) {
                    continue;
                }
                let seen = self.nodes[r].exec.shared.value.max(in_flight.get(&r).copied().unwrap_or(0));
                if seen < own {
                    if std::env::var_os("SATIN_SIM_DEBUG").is_some() {
                        eprintln!(
                            "shared: node {s} improved to {own}, node {r} has {seen} (in flight or news included)"
                        );
                    }
                    self.report.shared_missing += 1;
                }
            }
        }
    }
}
