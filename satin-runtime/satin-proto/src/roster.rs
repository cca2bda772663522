//! Who is in the run, as one node sees it: the members, which of them are
//! alive, victims drawn at random, and the *homes* of each result-table key
//! (consistent hashing, see [`Roster::homes`]).
//!
//! The members known at start are a [`Members`] list that many nodes may
//! share (the simulator hands one to all of its nodes): a node's own view
//! is that list plus the members that joined since and the set of those
//! that died. So a node's memory grows with the changes it saw, not with
//! the size of the run, and a death costs no rebuild of any list.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::msg::{ClusterId, NodeId};
use super::rng::SplitMix64;
use crate::JobKey;

/// Points each member has on the hash ring: a few, so that the share of
/// keys a member is home for varies little from member to member.
const POINTS_PER_MEMBER: u64 = 8;

/// A member's `i`-th point on the ring (SplitMix64's finaliser: any fixed
/// mixing function does, as long as every node uses the same).
fn point(id: NodeId, i: u64) -> u64 {
    let mut z = id.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ i.wrapping_add(0x632B_E59B_D9B4_E019);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A key's place on the ring: its first eight bytes, mixed (keys are
/// blake3 hashes in real runs, but the simulator's are job numbers).
fn position(key: &JobKey) -> u64 {
    point(u64::from_le_bytes(key.0[..8].try_into().expect("a key has 32 bytes")), POINTS_PER_MEMBER)
}

/// The members of a run as known at its start, shareable between nodes.
#[derive(Clone, Debug)]
pub struct Members(Arc<Base>);

#[derive(Debug)]
struct Base {
    /// Sorted by id.
    by_id: Vec<(NodeId, ClusterId)>,
    /// Ids sorted by (cluster, id), and where each cluster's run starts.
    by_cluster: Vec<NodeId>,
    clusters: BTreeMap<ClusterId, (usize, usize)>,
    /// (point, member), sorted.
    ring: Vec<(u64, NodeId)>,
}

impl Members {
    /// The start list: (id, cluster) of each member.
    pub fn new(members: &[(NodeId, ClusterId)]) -> Members {
        let mut by_id = members.to_vec();
        by_id.sort_unstable();
        by_id.dedup_by_key(|m| m.0);
        let mut sorted: Vec<(ClusterId, NodeId)> = by_id.iter().map(|&(id, c)| (c, id)).collect();
        sorted.sort_unstable();
        let mut clusters = BTreeMap::new();
        for (i, &(c, _)) in sorted.iter().enumerate() {
            clusters.entry(c).or_insert((i, i)).1 = i + 1;
        }
        let mut ring: Vec<(u64, NodeId)> =
            by_id.iter().flat_map(|&(id, _)| (0..POINTS_PER_MEMBER).map(move |i| (point(id, i), id))).collect();
        ring.sort_unstable();
        let by_cluster = sorted.into_iter().map(|(_, id)| id).collect();
        Members(Arc::new(Base { by_id, by_cluster, clusters, ring }))
    }

    /// How many members the list holds.
    pub fn len(&self) -> usize {
        self.0.by_id.len()
    }

    /// Every member with its cluster, in id order.
    pub fn iter(&self) -> impl Iterator<Item = (NodeId, ClusterId)> + '_ {
        self.0.by_id.iter().copied()
    }

    /// The cluster of `id`, if it is a member.
    pub fn cluster_of(&self, id: NodeId) -> Option<ClusterId> {
        self.0.by_id.binary_search_by_key(&id, |m| m.0).ok().map(|i| self.0.by_id[i].1)
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.0.by_id.is_empty()
    }
}

/// One node's view of the membership.
#[derive(Clone, Debug)]
pub(crate) struct Roster {
    me: NodeId,
    cluster: ClusterId,
    base: Members,
    /// Members not in `base` (joined later), with their ring points.
    joined: BTreeMap<NodeId, ClusterId>,
    joined_ring: BTreeMap<u64, NodeId>,
    /// Members (of `base` or `joined`) that are gone.
    dead: BTreeSet<NodeId>,
    /// Live members other than this node, in its cluster and elsewhere.
    live_local: usize,
    live_wide: usize,
}

impl Roster {
    pub(crate) fn new(me: NodeId, cluster: ClusterId, base: Members) -> Roster {
        let mut r = Roster {
            me,
            cluster,
            base,
            joined: BTreeMap::new(),
            joined_ring: BTreeMap::new(),
            dead: BTreeSet::new(),
            live_local: 0,
            live_wide: 0,
        };
        let base = r.base.clone();
        for &(id, c) in &base.0.by_id {
            if id != me {
                r.count(c, 1);
            }
        }
        r.insert(me, cluster);
        r
    }

    fn count(&mut self, cluster: ClusterId, delta: isize) {
        let n = if cluster == self.cluster { &mut self.live_local } else { &mut self.live_wide };
        *n = n.wrapping_add_signed(delta);
    }

    pub(crate) fn cluster_of(&self, id: NodeId) -> Option<ClusterId> {
        match self.base.0.by_id.binary_search_by_key(&id, |m| m.0) {
            Ok(i) => Some(self.base.0.by_id[i].1),
            Err(_) => self.joined.get(&id).copied(),
        }
    }

    pub(crate) fn is_alive(&self, id: NodeId) -> bool {
        self.cluster_of(id).is_some() && !self.dead.contains(&id)
    }

    /// Adds a member (a joiner). Returns whether it was new. A member that
    /// died stays dead: a restarted process is a new node.
    pub(crate) fn insert(&mut self, id: NodeId, cluster: ClusterId) -> bool {
        if self.cluster_of(id).is_some() {
            return false;
        }
        self.joined.insert(id, cluster);
        for i in 0..POINTS_PER_MEMBER {
            self.joined_ring.insert(point(id, i), id);
        }
        if id != self.me {
            self.count(cluster, 1);
        }
        true
    }

    /// Marks a member dead. Returns whether it was alive.
    pub(crate) fn remove(&mut self, id: NodeId) -> bool {
        let Some(cluster) = self.cluster_of(id) else { return false };
        if !self.dead.insert(id) {
            return false;
        }
        if id != self.me {
            self.count(cluster, -1);
        }
        true
    }

    /// Members known to be gone.
    pub(crate) fn dead(&self) -> Vec<NodeId> {
        self.dead.iter().copied().collect()
    }

    /// Live members other than this node.
    pub(crate) fn live_peers(&self) -> usize {
        self.live_local + self.live_wide
    }

    #[cfg(test)]
    fn live_local_peers(&self) -> usize {
        self.live_local
    }

    #[cfg(test)]
    fn live_wide_peers(&self) -> usize {
        self.live_wide
    }

    /// Every member ever known, in id order.
    fn all(&self) -> impl Iterator<Item = (NodeId, ClusterId)> + '_ {
        let mut joined = self.joined.iter().map(|(&id, &c)| (id, c)).peekable();
        let mut base = self.base.0.by_id.iter().copied().peekable();
        std::iter::from_fn(move || match (base.peek(), joined.peek()) {
            (Some(b), Some(j)) if j.0 < b.0 => joined.next(),
            (Some(_), _) => base.next(),
            (None, _) => joined.next(),
        })
    }

    /// Live members, this node included, in id order.
    pub(crate) fn live(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.all().map(|(id, _)| id).filter(|id| !self.dead.contains(id))
    }

    /// Live members with their clusters, in id order.
    pub(crate) fn live_with_clusters(&self) -> impl Iterator<Item = (NodeId, ClusterId)> + '_ {
        self.all().filter(|(id, _)| !self.dead.contains(id))
    }

    /// A live peer, uniformly at random among those `want` accepts
    /// (`count` of them): a few draws from the whole list, then a walk
    /// over it if most are unsuitable.
    fn draw(
        &self,
        rng: &mut SplitMix64,
        count: usize,
        pool: &[NodeId],
        extra: &[NodeId],
        want: impl Fn(NodeId) -> bool,
    ) -> Option<NodeId> {
        if count == 0 {
            return None;
        }
        let total = pool.len() + extra.len();
        let pick = |i: usize| if i < pool.len() { pool[i] } else { extra[i - pool.len()] };
        for _ in 0..16 {
            let id = pick(rng.below(total as u64) as usize);
            if want(id) {
                return Some(id);
            }
        }
        let fits: Vec<NodeId> = (0..total).map(pick).filter(|&id| want(id)).collect();
        (!fits.is_empty()).then(|| fits[rng.below(fits.len() as u64) as usize])
    }

    fn usable(&self, id: NodeId) -> bool {
        id != self.me && !self.dead.contains(&id)
    }

    /// A random live peer in this node's cluster.
    pub(crate) fn random_local(&self, rng: &mut SplitMix64) -> Option<NodeId> {
        let b = &self.base.0;
        let pool = b.clusters.get(&self.cluster).map_or(&[][..], |&(s, e)| &b.by_cluster[s..e]);
        let extra: Vec<NodeId> = self.joined.iter().filter(|(_, &c)| c == self.cluster).map(|(&id, _)| id).collect();
        self.draw(rng, self.live_local, pool, &extra, |id| self.usable(id))
    }

    /// A random live peer in another cluster.
    pub(crate) fn random_wide(&self, rng: &mut SplitMix64) -> Option<NodeId> {
        let extra: Vec<NodeId> = self.joined.keys().copied().collect();
        let mine = self.cluster;
        self.draw(rng, self.live_wide, &self.base.0.by_cluster, &extra, |id| {
            self.usable(id) && self.cluster_of(id) != Some(mine)
        })
    }

    /// A random live peer anywhere.
    pub(crate) fn random_any(&self, rng: &mut SplitMix64) -> Option<NodeId> {
        let extra: Vec<NodeId> = self.joined.keys().copied().collect();
        self.draw(rng, self.live_peers(), &self.base.0.by_cluster, &extra, |id| self.usable(id))
    }

    /// The `k` live members that keep `key`'s table entry: walking the
    /// ring clockwise from the key, the first members of clusters not yet
    /// chosen — so that a cluster that crashes as a whole takes at most
    /// one replica — then, if there are fewer clusters than `k`, the first
    /// members not yet chosen. Every node with the same view computes the
    /// same homes; a death or a join changes the homes of about `k / n` of
    /// the keys.
    pub(crate) fn homes(&self, key: &JobKey, k: usize) -> Vec<NodeId> {
        let pos = position(key);
        let ring = &self.base.0.ring;
        let start = ring.partition_point(|p| p.0 < pos);
        let mut base = ring[start..].iter().chain(&ring[..start]).copied().peekable();
        let mut joined =
            self.joined_ring.range(pos..).chain(self.joined_ring.range(..pos)).map(|(&p, &id)| (p, id)).peekable();
        let dist = |p: u64| p.wrapping_sub(pos);
        let mut walk = std::iter::from_fn(move || match (base.peek(), joined.peek()) {
            (Some(b), Some(j)) if dist(j.0) < dist(b.0) => joined.next(),
            (Some(_), _) => base.next(),
            (None, _) => joined.next(),
        });
        let mut homes: Vec<NodeId> = Vec::with_capacity(k);
        let mut spare: Vec<NodeId> = Vec::new();
        let mut clusters: Vec<ClusterId> = Vec::with_capacity(k);
        // Far enough to meet k clusters in any realistic layout; the rest
        // of the ring only when most members are gone.
        let mut budget = 32 * k as u64 * POINTS_PER_MEMBER;
        while homes.len() < k {
            let Some((_, id)) = walk.next() else { break };
            budget = budget.saturating_sub(1);
            if self.dead.contains(&id) || homes.contains(&id) || spare.contains(&id) {
                continue;
            }
            let cluster = self.cluster_of(id).expect("ring points belong to members");
            if clusters.contains(&cluster) {
                spare.push(id);
                if budget == 0 && homes.len() + spare.len() >= k {
                    break;
                }
            } else {
                clusters.push(cluster);
                homes.push(id);
            }
        }
        let missing = k.saturating_sub(homes.len());
        homes.extend(spare.into_iter().take(missing));
        homes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roster(me: NodeId, n: u64, per_cluster: u64) -> Roster {
        let members: Vec<(NodeId, ClusterId)> = (0..n).map(|i| (i, (i / per_cluster) as ClusterId)).collect();
        Roster::new(me, (me / per_cluster) as ClusterId, Members::new(&members))
    }

    fn key(i: u64) -> JobKey {
        JobKey(*blake3::hash(&i.to_le_bytes()).as_bytes())
    }

    #[test]
    fn homes_are_distinct_live_and_in_distinct_clusters() {
        let r = roster(0, 64, 16);
        for i in 0..500 {
            let h = r.homes(&key(i), 3);
            assert_eq!(h.len(), 3);
            let mut clusters: Vec<_> = h.iter().map(|&id| r.cluster_of(id)).collect();
            clusters.sort();
            clusters.dedup();
            assert_eq!(clusters.len(), 3, "homes {h:?} share a cluster");
        }
    }

    #[test]
    fn every_view_agrees_and_a_death_moves_only_the_dead_members_keys() {
        let (a, mut b) = (roster(1, 200, 64), roster(150, 200, 64));
        let before: Vec<Vec<NodeId>> = (0..2000).map(|i| b.homes(&key(i), 2)).collect();
        for i in 0..2000 {
            assert_eq!(a.homes(&key(i), 2), before[i as usize]);
        }
        b.remove(77);
        let mut moved = 0;
        for i in 0..2000 {
            let after = b.homes(&key(i), 2);
            assert!(!after.contains(&77));
            if after != before[i as usize] {
                assert!(before[i as usize].contains(&77), "key {i} moved without losing a home");
                moved += 1;
            }
        }
        assert!(moved > 0 && moved < 100, "{moved} of 2000 keys moved");
    }

    #[test]
    fn a_joiner_takes_some_keys_and_one_cluster_still_gives_k_homes() {
        let mut r = roster(0, 10, 10);
        let before: Vec<Vec<NodeId>> = (0..1000).map(|i| r.homes(&key(i), 2)).collect();
        assert!(r.insert(500, 0));
        assert!(r.is_alive(500));
        let mut taken = 0;
        for i in 0..1000 {
            let after = r.homes(&key(i), 2);
            assert_eq!(after.len(), 2);
            assert_ne!(after[0], after[1]);
            if after != before[i as usize] {
                assert!(after.contains(&500));
                taken += 1;
            }
        }
        assert!(taken > 50, "the joiner is home for {taken} of 1000 keys");
    }

    #[test]
    fn random_peers_are_live_and_where_asked() {
        let mut r = roster(5, 64, 16);
        for id in [1, 2, 3, 20, 40] {
            r.remove(id);
        }
        r.insert(99, 0);
        assert_eq!(r.live_local_peers(), 16 - 1 - 3 + 1);
        assert_eq!(r.live_wide_peers(), 48 - 2);
        let mut rng = SplitMix64::new(7);
        let mut saw_joiner = false;
        for _ in 0..2000 {
            let l = r.random_local(&mut rng).unwrap();
            assert!(r.is_alive(l) && l != 5 && r.cluster_of(l) == Some(0));
            saw_joiner |= l == 99;
            let w = r.random_wide(&mut rng).unwrap();
            assert!(r.is_alive(w) && r.cluster_of(w) != Some(0));
            let a = r.random_any(&mut rng).unwrap();
            assert!(r.is_alive(a) && a != 5);
        }
        assert!(saw_joiner);
        assert_eq!(r.live().count(), 64 - 5 + 1);
        assert!(r.live().collect::<Vec<_>>().windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn everyone_dead_but_me_means_no_peer() {
        let mut r = roster(0, 4, 4);
        for id in 1..4 {
            r.remove(id);
        }
        let mut rng = SplitMix64::new(1);
        assert_eq!(r.random_local(&mut rng), None);
        assert_eq!(r.random_any(&mut rng), None);
        assert_eq!(r.homes(&key(1), 2), vec![0]);
    }
}
