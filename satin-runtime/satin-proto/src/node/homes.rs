//! Where table entries go: to every replica (the broadcast table), or to
//! the key's `k` *homes* (the home table, for large runs).
//!
//! The broadcast table sends every entry to every node: a lookup is local
//! and free, but each result costs a message per node, so traffic grows
//! with the square of the nodes and every node holds every entry. The home
//! table sends an entry to the `k` live members that consistent hashing
//! names for its key ([`Roster::homes`](crate::roster::Roster::homes),
//! each in another cluster where there are enough) — and the publisher
//! keeps it too. A redone job that finds nothing in its own replica asks
//! the homes ([`Msg::TableGet`]) and goes on with their answers exactly as
//! with a local entry: a value is used, a pointer fetched, a running job
//! of an older epoch waited for, nothing computed.
//!
//! Membership changes move homes: on a death or a join every node sends
//! the entries it holds (values, pointers, running marks) to the members
//! that became homes of their keys, so an entry a live node holds is found
//! again once the change is known everywhere. Only about `k / n` of the keys
//! move at each change.

use std::collections::BTreeMap;

use super::{Action, Asking, Lookup, Node};
use crate::checkpoint::ResultMeta;
use crate::msg::{Entry, Msg, NodeId};
use crate::Executor;
use crate::JobKey;

/// From this many members at start, [`TablePlacement::Auto`] chooses the
/// home table: below it the broadcast table's traffic is small and its
/// lookups cost nothing.
pub const HOME_TABLE_FROM: usize = 128;

/// Homes per key when nothing else is asked for.
pub const DEFAULT_REPLICAS: usize = 2;

/// How the result table is spread over the nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TablePlacement {
    /// The broadcast table from [`HOME_TABLE_FROM`] members at start, the
    /// home table with [`DEFAULT_REPLICAS`] homes above.
    Auto,
    /// Every entry to every node.
    Broadcast,
    /// Every entry to its `replicas` homes (and kept by its publisher).
    Home {
        /// How many homes each key has.
        replicas: usize,
    },
}

/// Entries this node holds, with their homes before a membership change.
pub(super) struct HomesBefore(Vec<(JobKey, Vec<NodeId>)>);

impl Node {
    /// Fixes the table's placement from the members at start; a joiner
    /// takes its contact's (in `Welcome`).
    pub(super) fn choose_table(&mut self, members: usize) {
        self.table_replicas = match self.config.table {
            TablePlacement::Broadcast => 0,
            TablePlacement::Home { replicas } => replicas.max(1),
            TablePlacement::Auto if members >= HOME_TABLE_FROM => DEFAULT_REPLICAS,
            TablePlacement::Auto => 0,
        };
        self.table.set_asks_homes(self.table_replicas > 0);
    }

    /// Homes per key (0: the broadcast table).
    pub fn table_replicas(&self) -> usize {
        self.table_replicas
    }

    fn homes(&self, key: &JobKey) -> Vec<NodeId> {
        self.roster.homes(key, self.table_replicas)
    }

    /// Sends a table update about `key` where the table keeps it: to every
    /// node, or to its homes — and to the checkpoint coordinator, which
    /// writes every result.
    pub(super) fn spread(&mut self, key: &JobKey, msg: Msg) {
        if self.table_replicas == 0 {
            self.actions.push_back(Action::Broadcast { msg });
            return;
        }
        let mut to = self.homes(key);
        if self.checkpoint.is_some() && !to.contains(&self.master) {
            to.push(self.master);
        }
        for home in to.into_iter().filter(|&h| h != self.id) {
            self.actions.push_back(Action::Send { to: home, msg: msg.clone() });
        }
    }

    /// Sends many entries where the table keeps them: one message to every
    /// node, or one to each home with its share.
    pub(super) fn spread_entries(&mut self, entries: Vec<(JobKey, Entry, ResultMeta)>) {
        if entries.is_empty() || !self.live_members().any(|m| m != self.id) {
            return;
        }
        if self.table_replicas == 0 {
            self.actions.push_back(Action::Broadcast { msg: Msg::TableSync { entries } });
            return;
        }
        let mut by_home: BTreeMap<NodeId, Vec<(JobKey, Entry, ResultMeta)>> = BTreeMap::new();
        for e in entries {
            for home in self.homes(&e.0).into_iter().filter(|&h| h != self.id) {
                by_home.entry(home).or_default().push(e.clone());
            }
        }
        for (home, entries) in by_home {
            self.actions.push_back(Action::Send { to: home, msg: Msg::TableSync { entries } });
        }
    }

    /// Before a membership change: the homes of every key held here.
    pub(super) fn homes_before_change(&self) -> HomesBefore {
        if self.table_replicas == 0 {
            return HomesBefore(Vec::new());
        }
        HomesBefore(self.table.keys().map(|k| (k, self.homes(&k))).collect())
    }

    /// After a membership change: the entries held here go to the members
    /// that became homes of their keys.
    pub(super) fn rehome(&mut self, before: HomesBefore) {
        let mut moved: BTreeMap<NodeId, Vec<(JobKey, Entry, ResultMeta)>> = BTreeMap::new();
        let threshold = self.config.pointer_threshold;
        for (key, old) in before.0 {
            let new = self.homes(&key);
            if new.iter().all(|h| old.contains(h) || *h == self.id) {
                continue;
            }
            for entry in self.table.held(&key, self.id, threshold) {
                for &home in new.iter().filter(|h| !old.contains(h) && **h != self.id) {
                    moved.entry(home).or_default().push(entry.clone());
                }
            }
        }
        for (home, entries) in moved {
            self.actions.push_back(Action::Send { to: home, msg: Msg::TableSync { entries } });
        }
    }

    /// A redone job's lookup found nothing here: ask the key's homes, if
    /// the table has homes and this node is not the only one. `again`:
    /// the lookup asked them before.
    pub(super) fn ask_homes(&mut self, key: &JobKey, epoch: u32, again: bool) -> Lookup {
        if self.table_replicas == 0 {
            return Lookup::Miss;
        }
        let homes: Vec<NodeId> = self.homes(key).into_iter().filter(|&h| h != self.id).collect();
        if homes.is_empty() {
            return Lookup::Miss;
        }
        for &home in &homes {
            self.stats.homes_asked += 1;
            self.actions.push_back(Action::Send { to: home, msg: Msg::TableGet { key: *key } });
        }
        self.lookups.asking.insert(*key, Asking { epoch, homes, again });
        Lookup::Pending
    }

    /// Whether the lookup of `key` waits for a round trip (the homes'
    /// answer, or a value fetched from a pointer) rather than for a job
    /// that still runs somewhere: a short wait its worker sits out, where
    /// a long one lets the worker run other work.
    pub fn lookup_in_flight(&self, key: &JobKey) -> bool {
        self.lookups.asking.contains_key(key) || self.lookups.fetching.get(key).is_some_and(|f| f.adopt.is_none())
    }

    /// A peer asks this node, a home of `key`, what it knows.
    pub(super) fn table_get(&mut self, from: NodeId, key: JobKey) {
        self.stats.home_questions += 1;
        let entry = self.table.get(&key).cloned().map(|e| (e, self.table.meta(&key).unwrap_or(ResultMeta::UNKNOWN)));
        let running = self.table.running(&key).to_vec();
        self.actions.push_back(Action::Send { to: from, msg: Msg::TableGot { key, entry, running } });
    }

    /// A home's answer: kept here, and the waiting lookup decided by it.
    ///
    /// The first answer decides, "nothing" included: every home of a key
    /// gets each of its updates, and a membership change moves the entries
    /// to new homes, so once an update has had time to arrive any home
    /// holds it. Waiting for the slowest home (in another cluster) would
    /// only help in the moments after a change, and would cost every
    /// redone job a wide round trip.
    pub(super) fn table_got(
        &mut self,
        from: NodeId,
        key: JobKey,
        entry: Option<(Entry, ResultMeta)>,
        running: Vec<(NodeId, u32)>,
        exec: &mut impl Executor,
    ) {
        if let Some((entry, meta)) = entry {
            // A pointer to this node is stale (it would hold the value).
            if entry != Entry::Pointer(self.id) {
                self.table.put(key, entry, meta);
            }
        }
        for (holder, epoch) in running {
            if self.is_alive(holder) {
                let meta = self.table.meta(&key).unwrap_or(ResultMeta::UNKNOWN);
                self.table.put(key, Entry::Running { holder, epoch }, meta);
            }
        }
        if !self.lookups.asking.get(&key).is_some_and(|a| a.homes.contains(&from)) {
            return;
        }
        let asked = self.lookups.asking.remove(&key).expect("checked above");
        self.decide_asked(key, asked, exec);
    }

    /// A home asked about `key` has answered (or all have died): look
    /// again, with what it said.
    fn decide_asked(&mut self, key: JobKey, asked: Asking, exec: &mut impl Executor) {
        match self.lookup_here(&key, asked.epoch, asked.again) {
            Some(Lookup::Hit(v)) => {
                // `lookup_here` counted the hit.
                exec.lookup_done(&key, Some(v));
            }
            Some(Lookup::Pending) => {}
            // `lookup_here` counted this miss.
            Some(Lookup::Miss) => exec.lookup_done(&key, None),
            None => {
                self.stats.table_misses += 1;
                exec.lookup_done(&key, None);
            }
        }
    }

    /// Homes that died will not answer: the lookups asking them go on
    /// without them.
    pub(super) fn asks_lost_with(&mut self, peer: NodeId, exec: &mut impl Executor) {
        let mut done = Vec::new();
        for (key, asked) in &mut self.lookups.asking {
            if asked.homes.contains(&peer) {
                asked.homes.retain(|&h| h != peer);
                if asked.homes.is_empty() {
                    done.push(*key);
                }
            }
        }
        for key in done {
            let asked = self.lookups.asking.remove(&key).expect("listed above");
            self.decide_asked(key, asked, exec);
        }
    }
}
