//! The protocol core alone, its messages routed by hand: a program's
//! successive calls as successive runs of one cluster (`Config::sequence`),
//! a stolen job its thief cannot run (`Executor::can_run`) going back
//! to its owner, and a joiner's way in: knocking again, giving up, being
//! removed before its welcome (`node/joining.rs`).

use std::collections::VecDeque;

use satin_proto::JobKey;
use satin_proto::{Abandoned, Action, Config, Executor, JobSpec, JoinFailure, Msg, Node, NodeId};

/// Records what the core asks of it; `jobs` are given to thieves.
#[derive(Default)]
struct Recorder {
    roots: Vec<JobSpec>,
    jobs: VecDeque<JobSpec>,
    requeued: Vec<JobSpec>,
    stolen: Vec<JobSpec>,
    refuses: bool,
    /// (work, busy time) so far, as status answers say it.
    progress: (u64, u64),
}

impl Executor for Recorder {
    fn take_for_thief(&mut self, stamp: u64, _holds: &[[u8; 32]]) -> Option<JobSpec> {
        self.jobs.pop_front().map(|j| JobSpec { stamp, ..j })
    }
    fn can_run(&self, _job: &JobSpec) -> bool {
        !self.refuses
    }
    fn run_stolen(&mut self, job: JobSpec, _victim: NodeId) {
        self.stolen.push(job);
    }
    fn run_root(&mut self, job: JobSpec) {
        self.roots.push(job);
    }
    fn requeue(&mut self, job: JobSpec) {
        self.requeued.push(job);
    }
    fn deliver(&mut self, _stamp: u64, _value: satin_proto::Bytes) -> bool {
        true
    }
    fn fail(&mut self, _stamp: u64, _reason: &str) -> bool {
        true
    }
    fn abandon(&mut self, _victim: NodeId, _stamp: u64, _run_on: bool) -> Abandoned {
        Abandoned::default()
    }
    fn abandon_all(&mut self) -> Abandoned {
        Abandoned::default()
    }
    fn lookup_done(&mut self, _key: &JobKey, _value: Option<satin_proto::Bytes>) {}
    fn has_work(&self) -> bool {
        !self.jobs.is_empty()
    }
    fn recovery_started(&mut self) {}
    fn progress(&self) -> (u64, u64) {
        self.progress
    }
}

fn root(n: u8) -> JobSpec {
    JobSpec { depth: 0, ..JobSpec::new(JobKey([n; 32]), 0, vec![n]) }
}

const MS: u64 = 1_000_000;

/// Nodes and their executors, with the messages between them delivered
/// in order; what else the nodes ask for is kept per node.
struct Cluster {
    nodes: Vec<Node>,
    execs: Vec<Recorder>,
    ends: Vec<Vec<Action>>,
    now: u64,
    /// Nodes that are gone: they neither send nor receive.
    dead: std::collections::HashSet<usize>,
    /// The largest message delivered, encoded.
    largest_message: usize,
    /// Messages of these kinds to these nodes are lost: (node, kind).
    withheld: Vec<(usize, &'static str)>,
    /// Nodes cut off from the rest: messages between the two sides are lost.
    cut_off: std::collections::HashSet<usize>,
    /// The kinds of the messages delivered, in order.
    delivered: Vec<&'static str>,
}

impl Cluster {
    /// The root node `i` runs now finishes with `value`.
    fn finish_root(&mut self, i: usize, value: impl Into<satin_proto::Bytes>) {
        let start = self.execs[i].roots.last().expect("node runs a root").stamp;
        self.nodes[i].handle_root_finished(self.now, start, value.into(), &mut self.execs[i]);
    }

    fn new(n: u64, sequence: bool) -> Cluster {
        Cluster::with(n, Config { sequence, ..Config::default() })
    }

    fn with(n: u64, config: Config) -> Cluster {
        let members: Vec<(NodeId, u32)> = (0..n).map(|id| (id, 0)).collect();
        let nodes = (0..n).map(|id| Node::member(id, 0, &members, 0, root(1), config.clone(), id)).collect();
        let mut c = Cluster {
            nodes,
            execs: (0..n).map(|_| Recorder::default()).collect(),
            ends: vec![],
            now: 0,
            dead: Default::default(),
            largest_message: 0,
            withheld: Vec::new(),
            cut_off: Default::default(),
            delivered: Vec::new(),
        };
        c.ends = (0..n).map(|_| Vec::new()).collect();
        for i in 0..n as usize {
            c.nodes[i].start(0, &mut c.execs[i]);
        }
        c.settle();
        c
    }

    /// Delivers messages and fires timers until nothing is left to do in
    /// the next 50 ms of virtual time.
    fn settle(&mut self) {
        let end = self.now + 50 * MS;
        loop {
            let mut moved = false;
            for i in 0..self.nodes.len() {
                if self.dead.contains(&i) {
                    continue;
                }
                while let Some(action) = self.nodes[i].poll_action() {
                    moved = true;
                    match action {
                        Action::Send { to, msg } => self.deliver(i, to as usize, msg),
                        Action::Broadcast { msg } => {
                            for to in (0..self.nodes.len()).filter(|&t| t != i) {
                                self.deliver(i, to, msg.clone());
                            }
                        }
                        other => self.ends[i].push(other),
                    }
                }
            }
            if moved {
                continue;
            }
            let due = (0..self.nodes.len())
                .filter(|i| !self.dead.contains(i))
                .filter_map(|i| self.nodes[i].poll_timeout().map(|at| (at, i)))
                .min()
                .filter(|(at, _)| *at <= end);
            match due {
                Some((at, i)) => {
                    self.now = self.now.max(at);
                    self.nodes[i].handle_timeout(self.now, &mut self.execs[i]);
                }
                None => break,
            }
        }
        self.now = end;
    }

    fn deliver(&mut self, from: usize, to: usize, msg: Msg) {
        if self.dead.contains(&from) || self.dead.contains(&to) || self.withheld.contains(&(to, msg.kind())) {
            return;
        }
        if self.cut_off.contains(&from) != self.cut_off.contains(&to) {
            return;
        }
        let size = satin_proto::codec::encode(&msg, usize::MAX).expect("encodes").len();
        self.largest_message = self.largest_message.max(size);
        self.delivered.push(msg.kind());
        self.nodes[to].handle_message(self.now, from as NodeId, msg, &mut self.execs[to]);
    }

    /// The answers node `i` was handed, in order (`Done` as master,
    /// `Finished` otherwise).
    fn answers(&self, i: usize) -> Vec<satin_proto::Bytes> {
        self.ends[i]
            .iter()
            .filter_map(|a| match a {
                Action::Done { value, .. } => Some(value.clone()),
                Action::Finished { value: Some(value), .. } => Some(value.clone()),
                _ => None,
            })
            .collect()
    }

    /// Whether node `i` showed an answer.
    fn shown(&self, i: usize) -> bool {
        self.ends[i]
            .iter()
            .any(|a| matches!(a, Action::Done { shows: true, .. } | Action::Finished { shows: true, .. }))
    }

    /// Node 0's process ends for certain (the others are told): the new
    /// master, once the rest have settled.
    fn lose_node_zero(&mut self) -> usize {
        self.dead.insert(0);
        for i in 1..self.nodes.len() {
            self.nodes[i].handle_peer_dead(self.now, 0, &mut self.execs[i]);
        }
        for _ in 0..40 {
            self.settle();
        }
        (1..self.nodes.len()).find(|&i| self.nodes[i].is_master()).expect("a new master")
    }

    fn stopped(&self, i: usize) -> bool {
        self.ends[i].iter().any(|a| matches!(a, Action::Stop))
    }
}

#[test]
fn successive_calls_are_successive_runs_and_a_large_answer_goes_nowhere_it_is_not_needed() {
    let mut c = Cluster::new(3, true);
    assert_eq!(c.execs[0].roots.len(), 1, "the master runs the first root");
    // A large answer: the master shows it (it is the origin), and no node
    // is sent its value — the others' programs wait with it.
    let first = satin_proto::Bytes::from(vec![7u8; 5_000]);
    c.finish_root(0, first.clone());
    c.settle();
    assert_eq!(c.answers(0), vec![first.clone()]);
    assert!(c.shown(0));
    assert!(c.largest_message < 1_000, "a message of {} bytes", c.largest_message);
    for i in 0..3 {
        assert!(!c.stopped(i), "node {i} stays for the next call");
        assert_eq!(c.nodes[i].runs_done(), 1);
    }
    for i in 1..3 {
        assert!(c.answers(i).is_empty(), "node {i}'s program waits");
    }
    // Node 0's program goes on: the second run.
    c.nodes[0].next_root(c.now, root(2), &mut c.execs[0]);
    assert_eq!(c.execs[0].roots.last().map(|r| r.key), Some(JobKey([2; 32])));
    c.finish_root(0, vec![9]);
    c.settle();
    assert_eq!(c.answers(0), vec![first.clone(), vec![9].into()]);
    // Its program ends: the waiting ones end too, without the value.
    c.nodes[0].program_over(c.now);
    c.settle();
    for i in 1..3 {
        assert_eq!(c.ends[i].iter().filter(|a| matches!(a, Action::Finished { value: None, .. })).count(), 1);
        assert!(c.stopped(i), "node {i} ends with the program");
        assert!(!c.shown(i));
    }
}

/// A master whose own root finishes after a copy's answer ended the run
/// (it was stalled, then let go) reports an outcome that is too late —
/// before its program's next call or after it. Taken, it would be the
/// next run's answer (in real runs: the stand-in of a held answer,
/// decoded as the next run's value). Dropped, the next run answers
/// with its own root.
#[test]
fn a_root_that_finishes_after_its_run_ended_does_not_answer_the_next_run() {
    let mut c = Cluster::new(3, true);
    let first = c.execs[0].roots.last().expect("the first root").clone();
    let copy = satin_proto::Bytes::from(vec![5u8; 100]);
    let msg = Msg::RootResult { run: 1, epoch: first.epoch, key: first.key, value: copy.clone() };
    c.nodes[0].handle_message(c.now, 1, msg, &mut c.execs[0]);
    c.settle();
    assert_eq!(c.answers(0), vec![copy.clone()], "the copy's answer ends run 1");
    // Too late, before the next call: a held answer's stand-in.
    let stand_in = satin_proto::Bytes::from(b"an answer held unencoded".to_vec());
    c.nodes[0].handle_root_held(c.now, first.stamp, stand_in, &mut c.execs[0]);
    c.settle();
    assert_eq!(c.answers(0), vec![copy.clone()], "a late outcome of run 1 answered nothing");
    c.nodes[0].next_root(c.now, root(2), &mut c.execs[0]);
    let second = c.execs[0].roots.last().expect("the second root").clone();
    assert_eq!(second.key, JobKey([2; 32]));
    assert_ne!(second.stamp, first.stamp, "each start has its own number");
    // Too late, after the next call.
    c.nodes[0].handle_root_finished(c.now, first.stamp, vec![6u8; 100].into(), &mut c.execs[0]);
    c.settle();
    assert_eq!(c.answers(0), vec![copy.clone()], "run 2 waits for its own root");
    assert_eq!(c.nodes[0].stale_root_outcomes(), 2);
    c.finish_root(0, vec![9]);
    c.settle();
    assert_eq!(c.answers(0), vec![copy, vec![9].into()]);
}

/// In a program of several calls every node but the master's (and the
/// shower's) waits at an earlier call and holds no root of the run under
/// way. When the master's workers hang in such a run, an idle node finds
/// it stalled all the same, asks it for its root (`RootWanted`, answered
/// by `RootGiven`) and runs a copy; the copy's value is the run's answer.
/// (Before, nobody could copy it: the run waited for ever.)
#[test]
fn a_node_behind_the_run_copies_a_stalled_master_with_the_root_it_asks_for() {
    let mut c = Cluster::new(3, true);
    c.finish_root(0, vec![1u8; 10]);
    c.settle();
    c.nodes[0].next_root(c.now, root(2), &mut c.execs[0]);
    c.settle();
    // Node 0's workers hang: busy, and no work done; the others work.
    let copier = (0..100).find_map(|_| {
        let t = c.now;
        c.execs[0].progress = (1_000, t);
        for i in 1..3 {
            // Idle: nothing to run (as a parked worker tells the driver).
            c.execs[i].progress = (t, t);
            c.nodes[i].handle_idle(c.now, &mut c.execs[i]);
        }
        c.settle();
        (1..3).find(|&i| c.execs[i].roots.last().is_some_and(|r| r.key == JobKey([2; 32])))
    });
    let copier = copier.expect("a node behind the run copied the stalled master's root");
    let copy = c.execs[copier].roots.last().expect("the copy").clone();
    assert!(copy.redone && copy.duplicate, "a copy looks its calls up in the table");
    assert_eq!(copy.payload, root(2).payload, "the master's root, as the master gave it");
    assert!(c.delivered.contains(&"RootWanted") && c.delivered.contains(&"RootGiven"));
    c.finish_root(copier, vec![9]);
    c.settle();
    let answers: Vec<satin_proto::Bytes> = vec![vec![1u8; 10].into(), vec![9].into()];
    assert_eq!(c.answers(0), answers, "the copy's value answers run 2");
}

#[test]
fn a_master_lost_with_the_only_copy_of_the_answer_leaves_it_to_be_computed_again() {
    let mut c = Cluster::new(3, true);
    let first = satin_proto::Bytes::from(vec![3u8; 4_000]);
    c.finish_root(0, first.clone());
    c.settle();
    assert!(c.shown(0), "node 0's program has the answer to show");
    // Node 0 (master, origin, holder) dies before its program went on:
    // whether the answer reached its output is unknown.
    let master = c.lose_node_zero();
    // It runs the first root again (redone: its calls are in the table)
    // and shows the answer: twice at worst, never not at all.
    let again = c.execs[master].roots.last().cloned().expect("the root again");
    assert_eq!(again.key, JobKey([1; 32]));
    assert!(again.redone);
    c.finish_root(master, first.clone());
    c.settle();
    assert_eq!(c.answers(master), vec![first]);
    assert!(c.shown(master), "the new master shows the answer the dead one may not have");
    let other = 3 - master;
    assert!(c.answers(other).is_empty() && !c.shown(other));
}

#[test]
fn a_program_ended_elsewhere_ends_a_node_that_never_heard_how_its_run_ended() {
    // Node 2 ended the run as master, showed it and its program ended —
    // and it is gone before node 1 heard of the answer: node 1 ends where
    // its program waits, rather than wait for a majority that is no more.
    let mut c = Cluster::new(3, true);
    let mut exec = Recorder::default();
    c.nodes[1].handle_message(c.now, 2, Msg::ProgramOver { runs: 1 }, &mut exec);
    c.ends[1].extend(std::iter::from_fn(|| c.nodes[1].poll_action()));
    assert!(c.stopped(1), "node 1 waits on: {:?}", c.ends[1]);
    assert!(c.answers(1).is_empty() && !c.shown(1));
    // A program that ended after an earlier call ends none later.
    let mut c = Cluster::new(3, true);
    c.nodes[1].handle_message(c.now, 2, Msg::ProgramOver { runs: 0 }, &mut exec);
    c.ends[1].extend(std::iter::from_fn(|| c.nodes[1].poll_action()));
    assert!(!c.stopped(1));
}

#[test]
fn a_shower_says_it_showed_the_answer_only_once_its_program_went_on() {
    let mut c = Cluster::new(3, true);
    let answer = satin_proto::Bytes::from(vec![8u8; 4_000]);
    c.finish_root(0, answer.clone());
    c.settle();
    assert!(c.shown(0));
    let said = |c: &Cluster| c.delivered.contains(&Msg::Shown { run: 1 }.kind());
    assert!(!said(&c), "`Shown` went out before the program went on");
    // Its program ends (after printing): the others hear both, and end.
    c.nodes[0].program_over(c.now);
    c.settle();
    assert!(said(&c), "the shower's program ended without a word that it showed the answer");
    for i in 1..3 {
        assert!(c.stopped(i), "node {i} waits on after the shower's program ended");
    }
    // Node 0 dies now: its answer was out; nobody shows it again.
    let mut c2 = Cluster::new(3, true);
    c2.finish_root(0, answer.clone());
    c2.settle();
    c2.nodes[0].next_root(c2.now, root(2), &mut c2.execs[0]);
    c2.settle();
    let master = c2.lose_node_zero();
    assert!(!c2.shown(master), "shown again although node 0's program had gone on past it");
}

#[test]
fn under_a_supervisor_the_waiting_programs_end_when_it_holds_the_output() {
    let mut c = Cluster::with(3, Config { sequence: true, supervised_output: true, ..Config::default() });
    let answer = satin_proto::Bytes::from(vec![4u8; 5_000]);
    c.finish_root(0, answer.clone());
    c.settle();
    assert!(c.shown(0));
    assert!(c.largest_message < 1_000, "the value went somewhere: a message of {} bytes", c.largest_message);
    // The shower's program ends: showing is not yet being out, so the
    // others wait on.
    c.nodes[0].program_over(c.now);
    c.settle();
    for i in 1..3 {
        assert!(!c.stopped(i), "node {i} ended before the output was out");
    }
    // The supervisor has the output: they end, without the answer.
    for i in 1..3 {
        c.nodes[i].output_out(c.now);
    }
    c.settle();
    for i in 1..3 {
        assert!(c.stopped(i), "node {i} goes on after the output is out");
        assert!(c.answers(i).is_empty() && !c.shown(i), "node {i}");
    }
}

#[test]
fn under_a_supervisor_nodes_cut_off_from_the_majority_end_as_having_lost_it_when_the_output_is_out() {
    // An even split, the master's half goes on; the other half has noticed
    // it has no majority but its wait is not over when the answer is out.
    let mut c = Cluster::with(4, Config { sequence: true, supervised_output: true, ..Config::default() });
    c.cut_off.extend([2, 3]);
    for _ in 0..60 {
        c.settle();
    }
    let answer = satin_proto::Bytes::from(vec![5u8; 100]);
    c.finish_root(0, answer.clone());
    c.settle();
    assert_eq!(c.answers(0), vec![answer], "the master's half decides the answer");
    for i in 1..4 {
        c.nodes[i].output_out(c.now);
    }
    c.settle();
    let lost = |i: usize| c.ends[i].iter().any(|a| matches!(a, Action::LostMajority { .. }));
    assert!(!lost(1) && c.stopped(1), "node 1, in the majority, ends as any node");
    for i in [2, 3] {
        assert!(lost(i), "node {i} ended as if it had taken part: {:?}", c.ends[i]);
        assert!(c.stopped(i) && c.answers(i).is_empty(), "node {i}");
    }
}

#[test]
fn under_a_supervisor_a_shower_dead_before_its_output_has_the_new_master_show_the_answer() {
    let mut c = Cluster::with(3, Config { sequence: true, supervised_output: true, ..Config::default() });
    let answer = satin_proto::Bytes::from(vec![6u8; 4_000]);
    c.finish_root(0, answer.clone());
    c.settle();
    assert!(c.shown(0));
    // Its process ends before its output is out (the supervisor says so).
    let master = c.lose_node_zero();
    // Nobody else has the value: computed again, then shown again.
    let again = c.execs[master].roots.last().cloned().expect("the root again");
    assert!(again.redone);
    c.finish_root(master, answer.clone());
    c.settle();
    assert_eq!(c.answers(master), vec![answer]);
    assert!(c.shown(master), "the answer is shown again");
    let other = 3 - master;
    assert!(!c.shown(other) && !c.stopped(other), "the other waits for the supervisor");
}

#[test]
fn under_a_supervisor_a_master_told_the_output_is_out_before_the_shower_said_so_ends_with_the_answer() {
    // Node 0, the origin, is lost; its process joins again as node 3 and
    // claims the origin back, so the new master names it to show the
    // answer. The supervisor's word that the output is out reaches the
    // master before node 3's `Shown` does: the master's program ends with
    // the answer all the same (it decided it), and nobody else shows it.
    let mut c = Cluster::with(3, Config { sequence: true, supervised_output: true, ..Config::default() });
    let master = c.lose_node_zero();
    let config = Config { sequence: true, supervised_output: true, ..Config::default() };
    let mut rejoined = Node::joining(3, 0, master as NodeId, config, 3).with_program_root(root(1));
    rejoined.claim_origin(0);
    c.nodes.push(rejoined);
    c.execs.push(Recorder::default());
    c.ends.push(Vec::new());
    c.nodes[3].start(c.now, &mut c.execs[3]);
    for _ in 0..10 {
        c.settle();
    }
    assert!(c.nodes[3].is_origin(), "node 3 claimed the origin back");
    c.withheld.push((master, "Shown"));
    let answer = satin_proto::Bytes::from(vec![9u8; 5_000]);
    let again = c.execs[master].roots.last().cloned().expect("the root again");
    c.finish_root(master, answer.clone());
    c.settle();
    assert!(c.shown(3), "the origin shows the answer");
    assert!(c.answers(master).is_empty(), "the master waits for the shower's word");
    c.nodes[master].output_out(c.now);
    c.settle();
    assert_eq!(c.answers(master), vec![answer], "the master's program ends without its answer");
    assert!(
        c.ends[master].iter().any(|a| matches!(a, Action::Done { shows: false, .. })),
        "handed as the master's own answer, not shown again"
    );
    assert!(!c.shown(master));
    assert!(
        !c.ends[master].iter().any(|a| matches!(a, Action::Finished { .. })),
        "its program was also told to end without the answer"
    );
    assert_eq!(again.key, JobKey([1; 32]));
}

#[test]
fn without_a_sequence_a_run_ends_the_nodes_as_before() {
    let mut c = Cluster::new(3, false);
    c.finish_root(0, vec![1, 2, 3]);
    c.settle();
    for i in 0..3 {
        assert_eq!(c.answers(i), vec![vec![1, 2, 3]], "node {i}");
        assert!(c.stopped(i), "node {i} ends with the run");
    }
}

#[test]
fn a_job_its_thief_cannot_run_goes_back_to_its_owner() {
    let mut c = Cluster::new(2, true);
    c.execs[0].jobs.push_back(JobSpec { depth: 1, ..JobSpec::new(JobKey([5; 32]), 0, vec![5]) });
    c.execs[1].refuses = true;
    c.nodes[1].handle_idle(c.now, &mut c.execs[1]);
    c.settle();
    assert!(c.execs[1].stolen.is_empty(), "the thief ran what it cannot run");
    assert_eq!(c.nodes[1].stats().refused, 1);
    assert_eq!(c.execs[0].requeued.iter().map(|j| j.key).collect::<Vec<_>>(), vec![JobKey([5; 32])]);
    assert_eq!(c.nodes[0].stats().retried, 0, "a refusal is not a failure");
}

#[test]
fn a_node_that_joins_later_waits_at_its_first_call_and_ends_with_the_program() {
    let mut c = Cluster::new(3, true);
    c.finish_root(0, vec![1]);
    c.settle();
    c.nodes[0].next_root(c.now, root(2), &mut c.execs[0]);
    // Node 3 starts its program from the beginning while run 2 goes on:
    // its welcome leaves the first call out (it made it itself).
    let config = Config { sequence: true, ..Config::default() };
    c.nodes.push(Node::joining(3, 0, 0, config, 3).with_program_root(root(1)));
    c.execs.push(Recorder::default());
    c.ends.push(Vec::new());
    c.nodes[3].start(c.now, &mut c.execs[3]);
    for _ in 0..10 {
        c.settle();
    }
    assert!(c.nodes[3].joined());
    assert_eq!(c.nodes[3].runs_done(), 1, "the log ended the first run");
    assert!(c.answers(3).is_empty(), "its program waits");
    c.finish_root(0, vec![2]);
    c.settle();
    assert_eq!(c.nodes[3].runs_done(), 2);
    c.nodes[0].program_over(c.now);
    c.settle();
    assert!(c.stopped(3));
    assert_eq!(c.answers(0), vec![vec![1], vec![2]]);
}

#[test]
fn a_held_answer_is_handed_to_its_program_and_never_travels_as_a_small_one() {
    // One call, nothing after it: the followers end once the answer is
    // shown, with its value if it was small enough to ride in the log.
    let small = satin_proto::Bytes::from(vec![5u8; 40]);
    let mut c = Cluster::new(3, false);
    c.finish_root(0, small.clone());
    c.settle();
    assert_eq!(c.answers(0), vec![small.clone()]);
    for i in 1..3 {
        assert_eq!(c.answers(i), vec![small.clone()], "node {i} had the small answer from the log");
    }
    // The same bytes as a stand-in for an answer the master's program
    // holds: its program gets the stand-in back (and takes its own value
    // for it); no other node ever receives it.
    let stand_in = satin_proto::Bytes::from(vec![5u8; 40]);
    let mut c = Cluster::new(3, false);
    let start = c.execs[0].roots.last().expect("the root").stamp;
    c.nodes[0].handle_root_held(c.now, start, stand_in.clone(), &mut c.execs[0]);
    c.settle();
    let handed = c.answers(0);
    assert_eq!(handed.len(), 1);
    assert_eq!(handed[0].as_ptr(), stand_in.as_ptr(), "the master's program gets the stand-in itself");
    assert!(c.shown(0));
    for i in 1..3 {
        assert!(c.answers(i).is_empty(), "node {i} received the stand-in");
        assert!(c.stopped(i), "node {i} ends once the answer is shown");
    }
}

/// A joiner on its own, started: what it asked for so far.
fn joiner(config: Config) -> (Node, Recorder) {
    let (mut node, mut exec) = (Node::joining(7, 0, 1, config, 7), Recorder::default());
    node.start(0, &mut exec);
    (node, exec)
}

fn drain(node: &mut Node) -> Vec<Action> {
    std::iter::from_fn(|| node.poll_action()).collect()
}

fn joins_sent(actions: &[Action]) -> usize {
    actions.iter().filter(|a| matches!(a, Action::Send { to: 1, msg: Msg::Join { .. } })).count()
}

#[test]
fn a_joiner_knocks_again_where_nobody_answers_until_the_join_wait_is_over() {
    let (mut node, mut exec) = joiner(Config { join_wait: 1_000 * MS, ..Config::default() });
    assert_eq!(joins_sent(&drain(&mut node)), 1);
    node.handle_unanswered(300 * MS, 1, &mut exec);
    assert_eq!(joins_sent(&drain(&mut node)), 1, "knocks again at once");
    node.handle_unanswered(1_100 * MS, 1, &mut exec);
    let actions = drain(&mut node);
    assert!(actions.contains(&Action::CannotJoin { why: JoinFailure::NoAnswer }), "{actions:?}");
    assert!(actions.contains(&Action::Stop));
    // Stopped: nothing more, whatever else arrives.
    node.handle_timeout(5_000 * MS, &mut exec);
    assert!(drain(&mut node).is_empty());
}

#[test]
fn a_joiner_whose_contact_refuses_closes_or_dies_gives_up_at_once() {
    type Lose = fn(&mut Node, &mut Recorder);
    let cases: [(Lose, JoinFailure); 3] = [
        (|n, e| n.handle_link_down(10 * MS, 1, e), JoinFailure::Refused),
        (|n, _| n.handle_closed(10 * MS, 1), JoinFailure::Closed),
        (|n, e| n.handle_peer_dead(10 * MS, 1, e), JoinFailure::ContactGone),
    ];
    for (lose, why) in cases {
        let (mut node, mut exec) = joiner(Config::default());
        drain(&mut node);
        // Another node's lost link or death is no reason to give up.
        node.handle_link_down(5 * MS, 2, &mut exec);
        node.handle_peer_dead(5 * MS, 3, &mut exec);
        assert!(!drain(&mut node).iter().any(|a| matches!(a, Action::CannotJoin { .. } | Action::Stop)));
        lose(&mut node, &mut exec);
        let actions = drain(&mut node);
        assert_eq!(actions, vec![Action::CannotJoin { why }, Action::Stop], "{why:?}");
    }
}

#[test]
fn a_joiner_its_contact_removes_is_expelled_and_joins_again_as_often_as_the_config_allows() {
    for (rejoins, again) in [(0, true), (2, true), (3, false)] {
        let (mut node, mut exec) = joiner(Config { rejoins, max_rejoins: 3, ..Config::default() });
        node.carry_results(vec![(JobKey([4; 32]), vec![4], satin_proto::checkpoint::ResultMeta::UNKNOWN)]);
        drain(&mut node);
        node.handle_declared_dead(10 * MS, 1, &mut exec);
        match drain(&mut node).as_slice() {
            [Action::Expelled { by: 1, carry, rejoin, removals }, Action::Stop] => {
                assert_eq!(*rejoin, again, "after {rejoins} rejoins");
                assert_eq!(*removals, rejoins + 1, "the count a process refused again is told");
                assert_eq!(carry.len(), 1, "what a former incarnation finished goes on with it");
            }
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn a_welcomed_node_treats_its_former_contact_as_any_member() {
    let mut c = Cluster::new(2, true);
    let config = Config { sequence: true, ..Config::default() };
    c.nodes.push(Node::joining(2, 0, 0, config, 2).with_program_root(root(1)));
    c.execs.push(Recorder::default());
    c.ends.push(Vec::new());
    c.nodes[2].start(c.now, &mut c.execs[2]);
    c.settle();
    assert!(c.nodes[2].joined());
    c.nodes[2].handle_link_down(c.now, 0, &mut c.execs[2]);
    c.nodes[2].handle_closed(c.now, 0);
    assert!(!drain(&mut c.nodes[2]).iter().any(|a| matches!(a, Action::CannotJoin { .. } | Action::Stop)));
}

/// The boards node `i` was handed (`Action::MasterBoard`), with their sender.
fn boards(c: &Cluster, i: usize) -> Vec<(NodeId, Vec<u8>)> {
    c.ends[i]
        .iter()
        .filter_map(|a| match a {
            Action::MasterBoard { from, board } => Some((*from, board.to_vec())),
            _ => None,
        })
        .collect()
}

#[test]
fn the_master_s_board_goes_to_the_nodes_that_say_they_serve_a_page_and_the_next_master_s_after_it() {
    let mut c = Cluster::new(3, false);
    let watching = satin_proto::NodeFigures { watches: true, ..Default::default() };
    c.nodes[2].share_figures(watching.clone());
    c.nodes[1].share_figures(satin_proto::NodeFigures::default());
    c.settle();
    assert!(c.nodes[0].board_watched());
    c.nodes[1].share_board(b"not the master's".to_vec().into());
    c.nodes[0].share_board(b"{\"board\":0}".to_vec().into());
    c.settle();
    assert_eq!(boards(&c, 2), [(0, b"{\"board\":0}".to_vec())]);
    assert!(boards(&c, 1).is_empty(), "node 1 serves no page");
    assert!(boards(&c, 0).is_empty());
    let master = c.lose_node_zero();
    let watcher = 3 - master;
    c.nodes[watcher].share_figures(watching);
    c.settle();
    c.nodes[master].share_board(b"{\"board\":1}".to_vec().into());
    c.settle();
    assert_eq!(boards(&c, watcher).last(), Some(&(master as NodeId, b"{\"board\":1}".to_vec())));
}

/// Who leads, and whether a member has a majority, comes out of the core
/// once per change (`Action::Leadership`): what a real node logs for its
/// user, decided where the quorum is.
#[test]
fn a_member_cut_off_says_once_that_it_lost_the_majority_and_once_that_it_has_it_again() {
    let mut c = Cluster::with(3, Config::default());
    let said = |c: &Cluster, i: usize| -> Vec<(Option<NodeId>, bool)> {
        c.ends[i]
            .iter()
            .filter_map(|a| match a {
                Action::Leadership { leader, in_minority, .. } => Some((*leader, *in_minority)),
                _ => None,
            })
            .collect()
    };
    let leader = c.nodes[0].leader();
    assert!(leader.is_some(), "a leader at the start");
    for i in 0..3 {
        assert_eq!(said(&c, i), vec![(leader, false)], "node {i} says who leads, once");
    }
    c.cut_off.insert(2);
    for _ in 0..60 {
        c.settle();
    }
    assert!(c.nodes[2].in_minority(), "node 2 hears from no majority");
    let cut = said(&c, 2);
    assert_eq!(cut.len(), 2, "node 2 says it lost the majority, once: {cut:?}");
    assert!(cut[1].1, "{cut:?}");
    assert_eq!(said(&c, 0).len(), 1, "the majority's side has nothing new to say");
    c.cut_off.clear();
    for _ in 0..60 {
        c.settle();
    }
    let healed = said(&c, 2);
    assert!(!c.nodes[2].in_minority(), "node 2 hears from the majority again");
    assert_eq!(healed.len(), 3, "and says so, once: {healed:?}");
    assert_eq!(healed[2], (c.nodes[0].leader(), false));
}
