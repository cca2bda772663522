//! The quorum alone, on an in-memory network with cuts and loss: who leads,
//! who is removed, and that a minority never decides anything.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};

use super::*;

const MS: Time = 1_000_000;

struct Net {
    nodes: Vec<Quorum>,
    now: Time,
    queue: BinaryHeap<Reverse<InFlight>>,
    seq: u64,
    cut: BTreeSet<(NodeId, NodeId)>,
    loss: f64,
    rng: SplitMix64,
    latency: Time,
    /// What each node was told to apply, in order.
    applied: BTreeMap<NodeId, Vec<Change>>,
    expelled: BTreeSet<NodeId>,
    gave_up: BTreeSet<NodeId>,
    admitted: Vec<NodeId>,
    dead: BTreeSet<NodeId>,
    /// Nodes whose event loop does not run: no ticks, and what reaches
    /// them is lost (the worst case for a stalled node).
    stalled: BTreeSet<NodeId>,
}

/// A message on its way: (arrival, sequence, from, to, message).
type InFlight = (Time, u64, NodeId, NodeId, Wire);

/// Messages in the queue (ordered by time, then sequence).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Wire(QMsg);
impl PartialOrd for Wire {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Wire {
    fn cmp(&self, _: &Self) -> std::cmp::Ordering {
        std::cmp::Ordering::Equal
    }
}

fn cfg() -> QuorumConfig {
    QuorumConfig { heartbeat: 100 * MS, suspect_after: 1000 * MS, heal_wait: 10_000 * MS }
}

impl Net {
    fn new(n: u64, seed: u64) -> Net {
        let base: Vec<(NodeId, ClusterId)> = (0..n).map(|i| (i, 0)).collect();
        let base = Members::new(&base);
        let mut nodes: Vec<Quorum> = (0..n).map(|i| Quorum::new(i, &base, 0, cfg(), seed)).collect();
        for q in &mut nodes {
            q.start(0);
        }
        let mut net = Net {
            nodes,
            now: 0,
            queue: BinaryHeap::new(),
            seq: 0,
            cut: BTreeSet::new(),
            loss: 0.0,
            rng: SplitMix64::new(seed),
            latency: MS,
            applied: BTreeMap::new(),
            expelled: BTreeSet::new(),
            gave_up: BTreeSet::new(),
            admitted: Vec::new(),
            dead: BTreeSet::new(),
            stalled: BTreeSet::new(),
        };
        for i in 0..n {
            net.drain(i);
        }
        net
    }

    fn send(&mut self, from: NodeId, to: NodeId, msg: QMsg) {
        if self.cut.contains(&(from, to)) || self.dead.contains(&to) {
            return;
        }
        if self.loss > 0.0 && msg.may_be_lost() && self.rng.unit() < self.loss {
            return;
        }
        // Reliable messages ride a stream: a lost packet only delays them.
        let mut at = self.now + self.latency;
        while self.loss > 0.0 && !msg.may_be_lost() && self.rng.unit() < self.loss {
            at += 30 * MS;
        }
        self.seq += 1;
        self.queue.push(Reverse((at, self.seq, from, to, Wire(msg))));
    }

    fn drain(&mut self, i: NodeId) {
        while let Some(o) = self.nodes[i as usize].poll() {
            match o {
                Output::Send { to, msg } => self.send(i, to, msg),
                Output::Broadcast { msg } => {
                    for to in 0..self.nodes.len() as NodeId {
                        if to != i && self.nodes[i as usize].is_member(to) {
                            self.send(i, to, msg.clone());
                        }
                    }
                }
                Output::Apply { change, .. } => self.applied.entry(i).or_default().push(change),
                Output::Admit { id } => self.admitted.push(id),
                Output::Expelled { .. } => {
                    self.expelled.insert(i);
                }
                Output::GiveUp { .. } => {
                    self.gave_up.insert(i);
                }
            }
        }
    }

    /// Runs until `until`, ticking every node each 10 ms.
    fn run(&mut self, until: Time) {
        let mut next_tick = self.now;
        while self.now < until {
            let next_msg = self.queue.peek().map(|Reverse(m)| m.0);
            if next_msg.is_some_and(|t| t <= next_tick) {
                let Reverse((at, _, from, to, Wire(msg))) = self.queue.pop().expect("peeked");
                self.now = at;
                if self.dead.contains(&to) || self.cut.contains(&(from, to)) || self.stalled.contains(&to) {
                    continue;
                }
                self.nodes[to as usize].handle(at, from, msg);
                self.drain(to);
            } else {
                self.now = next_tick;
                for i in 0..self.nodes.len() as NodeId {
                    if !self.dead.contains(&i) && !self.stalled.contains(&i) {
                        self.nodes[i as usize].tick(self.now);
                        self.drain(i);
                    }
                }
                next_tick += 10 * MS;
            }
        }
    }

    fn isolate(&mut self, a: NodeId, on: bool) {
        for b in 0..self.nodes.len() as NodeId {
            if a != b {
                for link in [(a, b), (b, a)] {
                    if on {
                        self.cut.insert(link);
                    } else {
                        self.cut.remove(&link);
                    }
                }
            }
        }
    }

    fn leaders(&self) -> Vec<NodeId> {
        (0..self.nodes.len() as NodeId)
            .filter(|i| {
                !self.dead.contains(i) && self.nodes[*i as usize].is_leader() && !self.nodes[*i as usize].is_out()
            })
            .collect()
    }

    fn answers(&self) -> usize {
        let mut nodes_with = 0;
        for changes in self.applied.values() {
            if changes.iter().any(|c| matches!(c, Change::Answer { .. })) {
                nodes_with += 1;
            }
        }
        nodes_with
    }
}

#[test]
fn a_healthy_run_keeps_its_leader_and_changes_nothing() {
    let mut net = Net::new(3, 1);
    net.run(20_000 * MS);
    assert_eq!(net.leaders(), vec![0]);
    assert!(net.nodes.iter().all(|q| q.term() == 0 && q.elections == 0));
    assert!(net.applied.values().all(|a| a.is_empty()), "{:?}", net.applied);
}

#[test]
fn thirty_percent_loss_declares_no_one_dead_and_elects_no_one() {
    for seed in 0..5 {
        let mut net = Net::new(3, seed);
        net.loss = 0.3;
        net.run(120_000 * MS);
        assert_eq!(net.leaders(), vec![0], "seed {seed}");
        let removed: Vec<_> = net.nodes.iter().map(|q| q.removals).collect();
        assert_eq!(removed, vec![0, 0, 0], "seed {seed}");
        assert!(net.expelled.is_empty() && net.gave_up.is_empty(), "seed {seed}");
    }
}

#[test]
fn a_cut_off_leader_steps_down_the_majority_elects_another_and_the_old_one_is_told_on_return() {
    let mut net = Net::new(3, 2);
    net.run(500 * MS);
    net.isolate(0, true);
    net.run(3_000 * MS);
    let leaders = net.leaders();
    assert_eq!(leaders.len(), 1, "{leaders:?}");
    let new = leaders[0];
    assert_ne!(new, 0);
    assert!(!net.nodes[0].is_leader(), "check quorum: the cut-off master stepped down");
    assert!(net.nodes[0].in_minority());
    let at_new = &net.applied[&new];
    assert!(at_new.contains(&Change::Lead { leader: new }) && at_new.contains(&Change::Remove { id: 0 }), "{at_new:?}");
    // Healed: the old master hears that it was removed.
    net.isolate(0, false);
    net.run(6_000 * MS);
    assert!(net.expelled.contains(&0), "the old master was not told");
    assert_eq!(net.leaders(), vec![new]);
}

#[test]
fn a_node_cut_off_for_good_gives_up_and_decides_nothing() {
    let mut net = Net::new(3, 3);
    net.run(500 * MS);
    net.isolate(2, true);
    net.run(15_000 * MS);
    assert!(net.gave_up.contains(&2), "the minority never gave up");
    assert!(!net.nodes[2].is_leader());
    assert_eq!(net.leaders(), vec![0]);
    assert!(net.applied[&0].contains(&Change::Remove { id: 2 }));
}

#[test]
fn an_asymmetric_cut_does_not_let_one_node_depose_the_leader() {
    let mut net = Net::new(3, 4);
    net.run(500 * MS);
    net.cut.insert((0, 2));
    net.cut.insert((2, 0));
    net.run(10_000 * MS);
    assert_eq!(net.leaders(), vec![0], "node 2 alone deposed the leader");
    assert!(net.nodes.iter().all(|q| q.term() == 0), "a real election happened");
    // The leader no longer hears node 2: it is removed, and told (via 1).
    assert!(net.applied[&0].contains(&Change::Remove { id: 2 }));
    assert!(net.expelled.contains(&2));
}

#[test]
fn the_answer_commits_with_a_majority_and_never_without() {
    let mut net = Net::new(3, 5);
    net.run(500 * MS);
    net.cut.insert((0, 1));
    net.cut.insert((0, 2));
    assert!(net.nodes[0].propose_answer(net.now, 1, Some(vec![7].into()), 1));
    net.drain(0);
    net.run(900 * MS);
    assert_eq!(net.answers(), 0, "an answer without a majority");
    net.cut.clear();
    net.run(1_500 * MS);
    assert_eq!(net.answers(), 3);
}

#[test]
fn a_dead_leader_is_replaced_quickly_when_its_death_is_certain() {
    let mut net = Net::new(5, 6);
    net.run(500 * MS);
    net.dead.insert(0);
    for i in 1..5 {
        net.nodes[i].certain_dead(net.now, 0);
        net.drain(i as NodeId);
    }
    net.run(800 * MS);
    assert_eq!(net.leaders(), vec![1], "the lowest live id stands first");
    net.run(1_000 * MS);
    assert!(net.applied[&2].contains(&Change::Remove { id: 0 }));
    // Three more certain deaths: the last one carries on alone.
    for d in [1, 2, 3] {
        net.dead.insert(d);
        for i in (d + 1)..5 {
            net.nodes[i as usize].certain_dead(net.now, d);
            net.drain(i);
        }
        net.run(net.now + 1_500 * MS);
    }
    assert_eq!(net.leaders(), vec![4]);
}

/// The notice of the leader's death reaches the members one after the
/// other: the first to hear it asks the others for their votes before
/// they know, and their refusal (the dead leader's lease) is taken back as
/// soon as they hear it too. Before, the candidate waited out its round
/// and then some (1.9 s with these timers; early in a process's life, when
/// its clock was below `suspect_after`, longer).
#[test]
fn a_vote_refused_for_a_dead_leaders_lease_is_granted_once_the_death_is_known() {
    for start in [50 * MS, 500 * MS, 5_000 * MS] {
        let mut net = Net::new(3, 11);
        net.run(start);
        net.dead.insert(0);
        net.nodes[1].certain_dead(net.now, 0);
        net.drain(1);
        // Node 1's pre-vote reaches node 2 before node 2's own notice.
        net.run(net.now + 5 * MS);
        assert_eq!(net.leaders(), Vec::<NodeId>::new(), "node 2 still follows the leader it heard lately");
        net.nodes[2].certain_dead(net.now, 0);
        net.drain(2);
        net.run(net.now + 20 * MS);
        assert_eq!(net.leaders(), vec![1], "elected at once once node 2 knows (started at {start})");
    }
}

#[test]
fn an_even_split_goes_on_in_the_half_with_the_leader() {
    let mut net = Net::new(4, 7);
    net.run(500 * MS);
    for a in [0, 1] {
        for b in [2, 3] {
            net.cut.insert((a, b));
            net.cut.insert((b, a));
        }
    }
    net.run(14_000 * MS);
    assert_eq!(net.leaders(), vec![0]);
    assert_eq!(net.nodes[0].voters(), vec![0, 1], "the other half was removed, one at a time");
    assert_eq!(net.gave_up, BTreeSet::from([2, 3]));
    assert!(net.nodes[0].propose_answer(net.now, 1, Some(vec![1].into()), 1));
    net.drain(0);
    net.run(15_000 * MS);
    assert_eq!(net.answers(), 2, "the answer commits in the half with the leader");
}

#[test]
fn an_even_split_while_no_one_leads_leaves_both_halves_without_a_leader() {
    let mut net = Net::new(4, 9);
    net.run(500 * MS);
    net.dead.insert(0);
    net.run(600 * MS);
    // The old leader is gone and the others are still electing: split.
    for a in [1] {
        for b in [2, 3] {
            net.cut.insert((a, b));
            net.cut.insert((b, a));
        }
    }
    net.run(14_000 * MS);
    assert!(net.leaders().is_empty(), "{:?}", net.leaders());
    assert_eq!(net.gave_up, BTreeSet::from([1, 2, 3]));
}

/// Node `id` joins through node 0 and is welcomed.
fn join_through_zero(net: &mut Net, id: NodeId) {
    net.nodes.push(Quorum::joining(id, cfg(), 8));
    net.nodes[0].join(net.now, id, 0);
    net.drain(0);
    net.run(net.now + 50 * MS);
    assert!(net.admitted.contains(&id));
    let s = net.nodes[0].snapshot();
    net.nodes[id as usize].welcomed(net.now, s);
}

#[test]
fn a_joiner_is_added_as_a_learner_and_promoted_with_a_second_one() {
    let mut net = Net::new(1, 8);
    join_through_zero(&mut net, 1);
    net.run(2_000 * MS);
    // Two voters would survive no death at all: the first joiner waits
    // as a learner (if it dies, the leader goes on alone).
    assert_eq!(net.nodes[0].voters(), vec![0]);
    join_through_zero(&mut net, 2);
    net.run(4_000 * MS);
    for i in 0..3 {
        assert_eq!(net.nodes[i].voters(), vec![0, 1, 2], "node {i}");
    }
    assert!(net.leaders() == vec![0]);
}

#[test]
fn the_first_joiner_dying_as_the_second_joins_leaves_the_leader_deciding() {
    // Node 1 joins and catches up; node 2 asks to join, and node 1 dies
    // at that moment. Had node 1 been made a voter alone, admitting node
    // 2 would need node 1's word, and so would removing it: nothing could
    // be decided again. A learner's death holds up nothing.
    let mut net = Net::new(1, 8);
    join_through_zero(&mut net, 1);
    net.run(net.now + 2_000 * MS);
    net.nodes.push(Quorum::joining(2, cfg(), 8));
    net.nodes[0].join(net.now, 2, 0);
    net.drain(0);
    // (What it sent and has not arrived is lost with it.)
    net.dead.insert(1);
    net.cut.extend([(1, 0), (1, 2)]);
    net.run(net.now + 50 * MS);
    assert!(net.admitted.contains(&2), "node 2 was not admitted");
    let s = net.nodes[0].snapshot();
    net.nodes[2].welcomed(net.now, s);
    net.run(net.now + 10_000 * MS);
    let applied = net.applied.get(&0).cloned().unwrap_or_default();
    assert!(applied.contains(&Change::Remove { id: 1 }), "node 1 was never removed: {applied:?}");
    assert!(net.leaders() == vec![0]);
    // A third process would make three voters of them.
    join_through_zero(&mut net, 3);
    net.run(net.now + 4_000 * MS);
    assert_eq!(net.nodes[0].voters(), vec![0, 2, 3]);
}

#[test]
fn a_leader_that_stalls_counts_its_stall_as_no_ones_silence() {
    let mut net = Net::new(3, 3);
    net.run(500 * MS);
    // The leader's event loop stops for 0.9 s (the others do not miss it
    // for long enough to elect another), and what reached it meanwhile is
    // lost: when it runs again, every member looks silent for 0.9 s.
    net.stalled.insert(0);
    net.run(1_400 * MS);
    net.stalled.clear();
    net.run(6_000 * MS);
    assert_eq!(net.leaders(), vec![0]);
    assert_eq!(net.nodes[0].removals, 0, "{:?}", net.applied);
    assert!(net.nodes[0].stalls >= 1);
    assert!(net.nodes.iter().all(|q| q.elections == 0));
}

#[test]
fn a_member_the_leader_cannot_hear_but_others_reach_is_probed_before_it_goes() {
    let mut net = Net::new(3, 4);
    net.run(500 * MS);
    // The leader's link with member 2 is cut both ways; member 1 still
    // reaches it. Indirect probes win it a few more windows, not forever:
    // a member the leader never hears cannot follow the log.
    net.cut.insert((0, 2));
    net.cut.insert((2, 0));
    net.run(2_600 * MS);
    assert!(net.nodes[0].is_member(2), "removed before others were asked to reach it");
    assert!(net.nodes[0].rescues >= 1);
    net.run(15_000 * MS);
    assert!(!net.nodes[0].is_member(2), "rescued forever");
    assert!(net.nodes[0].rescues <= 3);
}

#[test]
fn a_dead_member_is_not_rescued_by_probes() {
    let mut net = Net::new(3, 5);
    net.run(500 * MS);
    net.dead.insert(2);
    net.run(2_600 * MS);
    assert!(!net.nodes[0].is_member(2), "a silent dead member goes after the probes' wait");
    assert_eq!(net.nodes[0].rescues, 0);
}

/// Both ends of the link between followers 1 and 2 lose their connection
/// at 1 s; `back` says whether they connect again 300 ms later (a
/// connection that timed out on a working link) or the link stays cut.
fn lost_link_between_followers(back: bool) -> Net {
    let mut net = Net::new(3, 7);
    net.run(1_000 * MS);
    if !back {
        net.cut.extend([(1, 2), (2, 1)]);
    }
    for (a, b) in [(1, 2), (2, 1)] {
        net.nodes[a as usize].link_down(net.now, b);
    }
    net.run(1_300 * MS);
    if back {
        for (a, b) in [(1, 2), (2, 1)] {
            net.nodes[a as usize].link_works(b);
        }
    }
    net.run(10_000 * MS);
    net
}

#[test]
fn a_connection_between_members_lost_and_made_again_at_once_removes_no_one() {
    let net = lost_link_between_followers(true);
    assert_eq!(net.leaders(), vec![0]);
    assert!(net.applied.values().all(|a| a.is_empty()), "{:?}", net.applied);
}

#[test]
fn a_link_between_members_that_stays_lost_is_reported_and_one_end_goes() {
    let net = lost_link_between_followers(false);
    assert_eq!(net.leaders(), vec![0]);
    assert_eq!(net.nodes[0].removals, 1);
    assert!(net.applied[&0].contains(&Change::Remove { id: 2 }), "{:?}", net.applied);
    assert!(net.expelled.contains(&2));
}
