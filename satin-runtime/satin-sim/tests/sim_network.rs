//! Random network faults in the simulator: nodes cut off, links cut one way
//! or both, splits of the membership, lossy links, machines that die
//! silently — for a while or for good. Nobody is told of a crash (as across
//! machines): the failure detector and the majority decide.
//!
//! Every schedule must keep the three promises of the majority rule:
//! - **at most one answer** (one decision: a master cut off right after
//!   printing has it printed again by the next one), the right one;
//! - **no node waits forever**: each one ends — with the answer, removed by
//!   the majority, or giving up after `heal_wait` without one;
//! - **an answer whenever a majority survives**: in the families of
//!   schedules where the majority side is known (below), the run ends
//!   with the answer.
//!
//! The families: (A) only faults that heal, well within `heal_wait`; (B)
//! one node lost for good (cut off or dead) in a run of at least three;
//! (C) a split for good that leaves one side a majority; (D) an even split
//! for good: the half with the master answers, the other gives up; (E)
//! anything at all (several nodes lost, splits without a majority): only
//! safety and termination.
//!
//! `SATIN_SIM_NET_SEEDS=N` runs N seeds (default 5 000); `SATIN_SIM_NET_SEED=S`
//! replays one and prints its configuration and report.

use satin_proto::quorum::QuorumConfig;
use satin_proto::{Config, FtMode, SplitMix64, StealPolicy, TablePlacement};
use satin_sim as sim;

mod common;
use satin_sim::faults::{Fault, Kind, Links, When};
use satin_sim::workload::{Cost, Shape};
use satin_sim::SimConfig;

const MS: u64 = 1_000_000;

/// What a schedule must end with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    Answer,
    /// An even split: the answer, and the half without the master gives up.
    HalfWithMaster,
    /// Only safety and termination.
    Anything,
}

fn random_config(seed: u64) -> (SimConfig, Expect, char) {
    let mut r = SplitMix64::new(seed);
    let n = 3 + r.below(5);
    let clusters = 1 + r.below(2) as u32;
    let heartbeat = (10 + r.below(30)) * MS;
    let suspect_after = heartbeat * (6 + r.below(6));
    let heal_wait = 3_000 * MS;
    let shape = match r.below(3) {
        0 => Shape::Uneven { leaves: 100 + r.below(400) as u32 },
        1 => Shape::Fib { n: 9 + r.below(4) as u32 },
        _ => Shape::Flat { leaves: 40 + r.below(120) as u32 },
    };
    let protocol = Config {
        ft: FtMode::Table,
        steal: [StealPolicy::Random, StealPolicy::ClusterAware, StealPolicy::MasterWorker][r.below(3) as usize],
        steal_backoff: (1 + r.below(5)) * MS,
        steal_timeout: (r.below(2) == 0).then(|| (5 + r.below(50)) * MS),
        publish_after: Some(r.below(20) * MS),
        table: match r.below(3) {
            0 => TablePlacement::Broadcast,
            k => TablePlacement::Home { replicas: k as usize },
        },
        quorum: QuorumConfig { heartbeat, suspect_after, heal_wait },
        ..Config::default()
    };
    let mut faults = Vec::new();
    let at = |r: &mut SplitMix64| When::After((20 + r.below(300)) * MS);
    // Faults for good strike mid-run, never after the answer.
    let midway = |r: &mut SplitMix64| When::Share(0.1 + 0.6 * r.unit());
    // Heals well within `heal_wait`: the minority's clock never runs out.
    let lasting = |r: &mut SplitMix64| (50 + r.below(500)) * MS;
    let node = |r: &mut SplitMix64| r.below(n);
    let temporary = |r: &mut SplitMix64, faults: &mut Vec<Fault>| {
        let (start, d) = (at(r), lasting(r));
        let When::After(t) = start else { unreachable!() };
        let (on, off) = match r.below(3) {
            0 => {
                let v = node(r);
                (Kind::Net { links: Links::Node(v), cut: true }, Kind::Net { links: Links::Node(v), cut: false })
            }
            1 => {
                let (a, b) = (node(r), node(r));
                let both = r.below(2) == 0;
                if a == b {
                    return;
                }
                (
                    Kind::Net { links: Links::Link { from: a, to: b, both }, cut: true },
                    Kind::Net { links: Links::Link { from: a, to: b, both }, cut: false },
                )
            }
            _ => {
                let side: Vec<u64> = (0..n).filter(|_| r.below(2) == 0).collect();
                (
                    Kind::Net { links: Links::Split(side.clone()), cut: true },
                    Kind::Net { links: Links::Split(side), cut: false },
                )
            }
        };
        faults.push(Fault { at: start, kind: on });
        faults.push(Fault { at: When::After(t + d), kind: off });
    };
    let family = ['A', 'B', 'C', 'D', 'E'][r.below(5) as usize];
    let expect = match family {
        'A' => {
            for _ in 0..1 + r.below(3) {
                temporary(&mut r, &mut faults);
            }
            Expect::Answer
        }
        'B' => {
            let v = node(&mut r);
            let kind = if r.below(2) == 0 { Kind::Vanish(v) } else { Kind::Net { links: Links::Node(v), cut: true } };
            faults.push(Fault { at: midway(&mut r), kind });
            Expect::Answer
        }
        'C' => {
            // A side of more than half the nodes; the rest is cut off.
            let mut ids: Vec<u64> = (0..n).collect();
            for i in (1..ids.len()).rev() {
                ids.swap(i, r.below(i as u64 + 1) as usize);
            }
            let minority = r.below(n.div_ceil(2)) as usize;
            let side = ids[..minority].to_vec();
            faults.push(Fault { at: midway(&mut r), kind: Kind::Net { links: Links::Split(side), cut: true } });
            Expect::Answer
        }
        'D' if n.is_multiple_of(2) => {
            // The half with the master (node 0) goes on; the other gives up.
            let side: Vec<u64> = (0..n / 2).collect();
            faults.push(Fault { at: midway(&mut r), kind: Kind::Net { links: Links::Split(side), cut: true } });
            Expect::HalfWithMaster
        }
        _ => {
            for _ in 0..1 + r.below(4) {
                match r.below(3) {
                    0 => temporary(&mut r, &mut faults),
                    1 => faults.push(Fault { at: at(&mut r), kind: Kind::Vanish(node(&mut r)) }),
                    _ => faults.push(Fault {
                        at: at(&mut r),
                        kind: Kind::Net { links: Links::Node(node(&mut r)), cut: true },
                    }),
                }
            }
            Expect::Anything
        }
    };
    // Loss everywhere but in even splits (whose outcome rests on who is
    // master at the split, which loss should not change, and does not).
    if r.below(2) == 0 && expect != Expect::HalfWithMaster {
        faults.push(Fault {
            at: When::After(0),
            kind: Kind::Loss { node: None, rate: [0.05, 0.2, 0.3][r.below(3) as usize] },
        });
    }
    let mut cfg = SimConfig {
        clusters,
        nodes_per_cluster: n.div_ceil(clusters as u64) as u32,
        nodes: Some(n as u32),
        shape,
        mean_leaf_cost: (2 + r.below(8)) * MS,
        cost: Cost::Exponential,
        local_latency: 100_000 + r.below(MS),
        wide_latency: MS + r.below(5 * MS),
        jitter: r.below(3 * MS),
        fifo_links: r.below(2) == 0,
        detect_delay: suspect_after,
        crash_notices: false,
        link_timeout: suspect_after * (2 + r.below(3)),
        run_to_end: true,
        shared_values: seed.is_multiple_of(2),
        protocol,
        faults,
        seed,
        time_limit: 120_000 * MS,
        ..SimConfig::default()
    };
    // One schedule in six carries data (up to a megabyte each way per
    // job, links of 20 to 100 MB/s), urgent messages on a lane of their
    // own as in real runs; drawn from a stream of its own.
    let mut d = SplitMix64::new(seed ^ 0xDA7A_0B1E);
    if d.below(6) == 0 {
        cfg.lanes = sim::Lanes::ControlApart;
        cfg.param_bytes = 4_096 + d.below(1 << 20) as usize;
        cfg.result_bytes = 4_096 + d.below(1 << 20) as usize;
        cfg.local_bandwidth = 20e6 + d.below(80) as f64 * 1e6;
        cfg.wide_bandwidth = cfg.local_bandwidth / 2.0;
    }
    (cfg, expect, family)
}

fn check(seed: u64) -> Result<(), String> {
    let (cfg, expect, family) = random_config(seed);
    let r = sim::run(&cfg);
    let replay = format!(
        "seed {seed} (family {family}, expected {expect:?}) failed; replay with SATIN_SIM_NET_SEED={seed} cargo test --release -p satin-sim --test sim_network\nfaults (as --chaos reads them): {}\nconfig: {cfg:?}\nreport: {}",
            sim::faults::to_spec(&cfg.faults),
        r.to_json()
    );
    let right = r.answer.is_none() || r.result_ok;
    // Someone shows the answer. Exactly one does, unless the node that
    // showed it was cut off before its news got out: the next master
    // cannot tell that from a node cut off before it could show it, and
    // shows it too (see `proto/node/answer.rs`; `sim_faults.rs`, with
    // crashes and no cuts, checks exactly one).
    let shown = r.answer.is_none() || r.shown >= 1;
    let ok = r.decisions <= 1
        && r.shared_missing == 0
        && (!cfg.shared_values || r.shared_messages > 0)
        && right
        && shown
        && r.stuck == 0
        && match expect {
            Expect::Answer => r.result_ok,
            Expect::HalfWithMaster => r.result_ok && r.gave_up == r.nodes / 2,
            Expect::Anything => true,
        };
    if ok {
        Ok(())
    } else {
        Err(replay)
    }
}

/// Seeds beyond the usual range that once ended stuck, run every time.
/// 10105 and 23261: under loss the majority's side removed two of its own
/// members (a link report from a moment after a split) while cut-off
/// voters stayed voters. 12982, 46807, 61662, 66283: a master that found
/// the answer while cut off, elected again after another's term, never
/// proposed it.
const ONCE_STUCK: &[u64] = &[10_105, 12_982, 23_261, 46_807, 61_662, 66_283];

#[test]
fn random_network_faults_never_give_two_answers_never_hang_and_answer_with_a_majority() {
    if let Ok(seed) = std::env::var("SATIN_SIM_NET_SEED") {
        let seed: u64 = seed.parse().expect("SATIN_SIM_NET_SEED is a number");
        let (cfg, expect, family) = random_config(seed);
        println!("family {family}, expected {expect:?}\n{cfg:?}\n{}", sim::run(&cfg).to_json());
        check(seed).unwrap();
        return;
    }
    let seeds: u64 = std::env::var("SATIN_SIM_NET_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(5_000);
    let failures = common::failures((0..seeds).chain(ONCE_STUCK.iter().copied()), check);
    let which: Vec<&str> = failures.iter().filter_map(|f| f.split(" (family").next()).collect();
    assert!(
        failures.is_empty(),
        "{} of {seeds} seeds failed ({}); first:\n{}",
        failures.len(),
        which.join(", "),
        failures[0]
    );
    // The families all ran (the schedules are not all of one kind).
    let families: std::collections::BTreeSet<char> = (0..seeds.min(200)).map(|s| random_config(s).2).collect();
    assert_eq!(families.len(), 5, "{families:?}");
}

/// The cases the issue names, one by one, on five nodes (a run of about
/// ten seconds without faults).
fn five(faults: &str) -> sim::Report {
    sim::run(&five_config(faults))
}

fn five_config(faults: &str) -> SimConfig {
    SimConfig {
        clusters: 1,
        nodes_per_cluster: 5,
        shape: Shape::Uneven { leaves: 10_000 },
        mean_leaf_cost: 5 * MS,
        crash_notices: false,
        run_to_end: true,
        link_timeout: 3_000 * MS,
        faults: sim::faults::parse(faults).expect("a fault spec"),
        time_limit: 600_000 * MS,
        protocol: Config {
            quorum: QuorumConfig { heartbeat: 100 * MS, suspect_after: 1_000 * MS, heal_wait: 10_000 * MS },
            ..Config::default()
        },
        ..SimConfig::default()
    }
}

#[test]
fn the_master_cut_off_for_good_gives_one_answer_from_the_majority() {
    let r = five("partition:node=0,at=30%");
    assert!(r.result_ok && r.answers == 1 && r.stuck == 0, "{}", r.to_json());
    // The node the run started on is cut off: the new master shows it.
    assert_eq!(r.shown, 1, "{}", r.to_json());
    assert!(r.elections >= 1, "no new master was elected: {}", r.to_json());
    assert_eq!(r.gave_up, 1, "the cut-off master gives up: {}", r.to_json());
}

#[test]
fn a_minority_of_two_cut_off_for_good_gives_up_and_the_rest_answers() {
    let r = five("split:nodes=3+4,at=30%");
    assert!(r.result_ok && r.answers == 1 && r.stuck == 0, "{}", r.to_json());
    assert_eq!(r.gave_up, 2, "{}", r.to_json());
}

#[test]
fn a_short_partition_heals_and_the_node_comes_back_as_a_new_one() {
    let r = five("partition:node=2,at=2s,for=5s");
    assert!(r.result_ok && r.answers == 1 && r.stuck == 0, "{}", r.to_json());
    assert_eq!(r.expelled, 1, "the majority removed the cut-off node and told it: {}", r.to_json());
    assert_eq!(r.gave_up, 0, "{}", r.to_json());
    assert!(r.rejoined >= 1, "it joined again as a new node: {}", r.to_json());
}

#[test]
fn the_core_decides_how_often_a_removed_node_joins_again() {
    // The same short partition with no rejoins allowed: the node is
    // removed and stays out; the run answers without it.
    let mut cfg = five_config("partition:node=2,at=2s,for=5s");
    cfg.protocol.max_rejoins = 0;
    let r = sim::run(&cfg);
    assert!(r.result_ok && r.answers == 1 && r.stuck == 0, "{}", r.to_json());
    assert_eq!((r.expelled, r.rejoined), (1, 0), "{}", r.to_json());
}

#[test]
fn a_joiner_gives_up_when_its_contact_dies_and_only_then() {
    // Node 0, the first live member, is every joiner's contact. Dead as
    // node 5 knocks: the joiner's core gives up; the run answers.
    let mut cfg = five_config("join:cluster=0,at=2s;crash:node=0,at=2s");
    cfg.crash_notices = true;
    let r = sim::run(&cfg);
    assert!(r.result_ok && r.answers == 1 && r.stuck == 0, "{}", r.to_json());
    assert_eq!(r.joins_given_up, 1, "{}", r.to_json());
    // Another member's death while it waits is no reason to give up.
    let mut cfg = five_config("join:cluster=0,at=2s;crash:node=3,at=2s");
    cfg.crash_notices = true;
    let r = sim::run(&cfg);
    assert!(r.result_ok && r.answers == 1 && r.stuck == 0, "{}", r.to_json());
    assert_eq!(r.joins_given_up, 0, "{}", r.to_json());
    assert!(r.per_node[5].leaves > 0, "the joiner was admitted and worked: {}", r.to_json());
}

#[test]
fn the_node_the_run_started_on_shows_the_answer_after_it_was_cut_off_and_came_back() {
    // Node 0, the first master, cut off: a new master ends the run, and
    // node 0 — removed, then joined again as a new node — shows it.
    let r = five("partition:node=0,at=2s,for=3s");
    assert!(r.result_ok && r.answers == 1 && r.stuck == 0, "{}", r.to_json());
    assert!(r.elections >= 1 && r.rejoined >= 1, "{}", r.to_json());
    assert_eq!((r.shown, r.shown_by_others), (1, 1), "{}", r.to_json());
}

#[test]
fn a_cut_between_the_master_and_one_node_does_not_depose_the_master() {
    let r = five("cut:0-3,at=2s");
    assert!(r.result_ok && r.answers == 1 && r.stuck == 0, "{}", r.to_json());
    assert_eq!(r.elections, 0, "one node alone deposed the master: {}", r.to_json());
}

#[test]
fn a_connection_between_two_members_that_times_out_and_comes_back_at_once_removes_no_one() {
    // Cut just past the connection's idle timeout (3 s), as a run of lost
    // packets can end a connection on a link that works: both ends dial
    // again and the link is reported to no one.
    let r = five("cut:2-3,at=2s,for=3.5s");
    assert!(r.result_ok && r.answers == 1 && r.stuck == 0, "{}", r.to_json());
    assert_eq!((r.removals, r.elections, r.expelled, r.gave_up), (0, 0, 0, 0), "{}", r.to_json());
}

#[test]
fn a_link_between_two_members_cut_for_good_removes_one_of_them() {
    // (The one removed joins again as a new node on the same machine,
    // still cut from the other end, and goes again.)
    let r = five("cut:2-3,at=2s");
    assert!(r.result_ok && r.answers == 1 && r.stuck == 0, "{}", r.to_json());
    assert!(r.removals >= 1 && r.expelled >= 1 && r.rejoined >= 1, "{}", r.to_json());
    assert_eq!(r.elections, 0, "{}", r.to_json());
}

#[test]
fn thirty_percent_loss_removes_no_one() {
    let r = five("loss:0.3");
    assert!(r.result_ok && r.answers == 1 && r.stuck == 0, "{}", r.to_json());
    // Shown once, by the node the run started on (its master throughout).
    assert_eq!(r.shown, 1, "{}", r.to_json());
    assert_eq!((r.removals, r.elections, r.expelled, r.gave_up), (0, 0, 0, 0), "{}", r.to_json());
}

#[test]
fn a_hundred_milliseconds_of_jitter_with_loss_removes_no_one() {
    let r = five("delay:50,jitter=100;loss:0.2");
    assert!(r.result_ok && r.answers == 1 && r.stuck == 0, "{}", r.to_json());
    assert_eq!((r.removals, r.elections, r.expelled, r.gave_up), (0, 0, 0, 0), "{}", r.to_json());
}

#[test]
fn a_silent_death_is_found_by_the_detector() {
    let r = five("vanish:node=3,at=2s");
    assert!(r.result_ok && r.answers == 1 && r.stuck == 0, "{}", r.to_json());
    assert_eq!(r.removals, 1, "{}", r.to_json());
}

#[test]
fn an_even_split_goes_on_in_the_half_with_the_master() {
    let cfg = SimConfig {
        clusters: 1,
        nodes_per_cluster: 4,
        shape: Shape::Uneven { leaves: 2_000 },
        mean_leaf_cost: 5 * MS,
        crash_notices: false,
        run_to_end: true,
        faults: sim::faults::parse("split:nodes=0+1,at=20%").expect("a fault spec"),
        time_limit: 600_000 * MS,
        protocol: Config {
            quorum: QuorumConfig { heartbeat: 100 * MS, suspect_after: 1_000 * MS, heal_wait: 10_000 * MS },
            ..Config::default()
        },
        ..SimConfig::default()
    };
    let r = sim::run(&cfg);
    assert!(r.result_ok && r.answers == 1 && r.stuck == 0, "{}", r.to_json());
    assert_eq!((r.gave_up, r.elections), (2, 0), "{}", r.to_json());
}
