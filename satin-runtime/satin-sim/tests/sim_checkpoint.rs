//! Checkpoints in the simulator: total loss, suspend and damaged files,
//! each followed by a run of new nodes from the file.

use satin_sim as sim;
use satin_sim::faults::{Crashed, Fault, Kind, When};
use satin_sim::workload::Shape;
use satin_sim::{SimCheckpoint, SimConfig};

const MS: u64 = 1_000_000;

fn base(faults: Vec<Fault>) -> SimConfig {
    let mut cfg = SimConfig {
        clusters: 2,
        nodes_per_cluster: 4,
        shape: Shape::Uneven { leaves: 2000 },
        mean_leaf_cost: 20 * MS,
        checkpoint: Some(SimCheckpoint { interval: 200 * MS, first: None, latency: 2 * MS, bandwidth: 100e6 }),
        resume_after: Some(1000 * MS),
        faults,
        seed: 3,
        ..SimConfig::default()
    };
    // As real runs: publish jobs that ran 10 ms or more.
    cfg.protocol.publish_after = Some(10 * MS);
    cfg
}

fn at_half(kind: Kind) -> Fault {
    Fault { at: When::Share(0.5), kind }
}

#[test]
fn a_run_that_loses_every_node_resumes_from_its_checkpoint() {
    let with = sim::run(&base(vec![at_half(Kind::Crash(Crashed::All))]));
    assert!(with.result_ok, "{}", with.to_json());
    assert_eq!(with.restarts, 1);
    assert!(with.records_loaded > 0, "{}", with.to_json());
    // Without a checkpoint the new nodes start from nothing.
    let mut cfg = base(vec![at_half(Kind::Crash(Crashed::All))]);
    cfg.checkpoint = None;
    let without = sim::run(&cfg);
    assert!(without.result_ok, "{}", without.to_json());
    assert!(without.redundancy() > 0.4, "{}", without.to_json());
    assert!(with.redundancy() < 0.1, "{}", with.to_json());
    assert!(with.virtual_seconds < without.virtual_seconds);
}

#[test]
fn a_suspended_run_resumes_where_it_stopped() {
    let r = sim::run(&base(vec![at_half(Kind::Suspend(None))]));
    assert!(r.result_ok, "{}", r.to_json());
    assert_eq!(r.suspended, 8, "every node stopped on purpose");
    assert_eq!((r.restarts, r.leaves_on_crashed), (1, 0));
    assert!(r.redundancy() < 0.05, "{}", r.to_json());
}

#[test]
fn a_damaged_checkpoint_still_gives_the_right_answer() {
    // Bits flip just before every node is lost (earlier damage would be
    // rewritten away by the coordinator's compactions).
    let mut faults: Vec<Fault> = (0..5).map(|_| at_half(Kind::Corrupt)).collect();
    faults.push(at_half(Kind::Crash(Crashed::All)));
    let r = sim::run(&base(faults));
    assert!(r.result_ok, "{}", r.to_json());
    assert!(r.checkpoint_repairs > 0, "the damage was seen and repaired: {}", r.to_json());
    assert!(r.records_loaded > 0);
}

#[test]
fn checkpointing_costs_a_fault_free_run_nothing_in_virtual_time() {
    let with = sim::run(&base(vec![]));
    let mut cfg = base(vec![]);
    cfg.checkpoint = None;
    let without = sim::run(&cfg);
    assert!(with.result_ok && without.result_ok);
    assert!(with.records_written > 0);
    // The coordinator's writes run beside the computation.
    assert!(with.virtual_seconds <= without.virtual_seconds * 1.01, "{} vs {}", with.to_json(), without.to_json());
}

/// A node dies without a word just before the suspend: the coordinator
/// waits for its last batch only so long (once the others have stopped,
/// no majority is left to agree that it is gone), writes what it has and
/// stops; the run resumes from the file. (Before, the coordinator waited
/// for ever: campaign seed 224.)
#[test]
fn a_suspend_just_after_a_silent_death_still_ends_and_resumes() {
    let faults = vec![
        Fault { at: When::Share(0.45), kind: Kind::Vanish(3) },
        Fault { at: When::Share(0.46), kind: Kind::Suspend(None) },
    ];
    let r = sim::run(&base(faults));
    assert!(r.result_ok, "{}", r.to_json());
    assert_eq!(r.suspended, 7, "every live node stopped on purpose: {}", r.to_json());
    assert_eq!(r.restarts, 1, "{}", r.to_json());
    assert!(r.records_loaded > 0, "{}", r.to_json());
}

/// A node knocks to join as the run is suspended, its knock arriving just
/// after the suspend went out (or its admission committed just after):
/// it is told, and stops as suspended with the others, instead of waiting
/// alone for a majority that has stopped (campaign seed 253).
#[test]
fn a_node_knocking_as_the_run_is_suspended_stops_with_it() {
    for join_ms in (100..200).step_by(7) {
        for after in [0, 2] {
            let mut cfg = base(vec![
                Fault { at: When::After(join_ms * MS), kind: Kind::Join(Some(0)) },
                Fault { at: When::After((join_ms + after) * MS), kind: Kind::Suspend(None) },
            ]);
            cfg.clusters = 1;
            cfg.nodes_per_cluster = 3;
            let r = sim::run(&cfg);
            assert!(r.result_ok, "{}", r.to_json());
            assert_eq!(r.suspended, 4, "joined at {join_ms} ms, suspended {after} ms later: {}", r.to_json());
        }
    }
}
