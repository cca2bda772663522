//! The home table against the broadcast table in the simulator: the same
//! answers and recoveries, a fraction of the traffic and of the entries
//! per node.

use satin_proto::{FtMode, TablePlacement};
use satin_sim as sim;
use satin_sim::faults::{Crashed, Fault, Kind, When};
use satin_sim::workload::Shape;
use satin_sim::SimConfig;

fn cluster_run(nodes: u32, table: TablePlacement, crash: &[Kind]) -> sim::Report {
    let mut c = SimConfig {
        clusters: nodes.div_ceil(16),
        nodes_per_cluster: 16,
        nodes: Some(nodes),
        shape: Shape::Uneven { leaves: 60 * nodes },
        mean_leaf_cost: 20_000_000,
        seed: 11,
        ..SimConfig::default()
    };
    c.protocol.table = table;
    c.faults = crash.iter().map(|k| Fault { at: When::Share(0.5), kind: k.clone() }).collect();
    sim::run(&c)
}

#[test]
fn the_home_table_sends_and_holds_a_fraction_of_what_the_broadcast_table_does() {
    let broadcast = cluster_run(128, TablePlacement::Broadcast, &[]);
    let home = cluster_run(128, TablePlacement::Home { replicas: 2 }, &[]);
    assert!(broadcast.result_ok && home.result_ok);
    assert!(
        home.table_messages * 10 < broadcast.table_messages,
        "table messages: home {}, broadcast {}",
        home.table_messages,
        broadcast.table_messages
    );
    assert!(
        home.table_entries_total * 10 < broadcast.table_entries_total,
        "entries on all nodes: home {}, broadcast {}",
        home.table_entries_total,
        broadcast.table_entries_total
    );
}

#[test]
fn after_a_whole_cluster_and_the_master_crash_the_homes_still_answer() {
    for table in [TablePlacement::Home { replicas: 1 }, TablePlacement::Home { replicas: 2 }] {
        for crash in [
            vec![Kind::Crash(Crashed::Cluster(3))],
            vec![Kind::Crash(Crashed::Cluster(0))],
            vec![Kind::Crash(Crashed::Master)],
        ] {
            let r = cluster_run(64, table, &crash);
            let what = format!("{table:?}, {crash:?}: {}", r.to_json());
            assert!(r.result_ok, "{what}");
            assert_eq!(r.violations + r.running_recomputed + r.completed_twice, 0, "{what}");
            assert!(r.table_hits > 0, "nothing was found again: {what}");
        }
    }
}

/// Seed 000's Fig. 4 setup (4 clusters of 16, leaves of 0.5 s, a cluster
/// crashing half-way, the master's among them): the home table recovers
/// with as little redundant work as the broadcast table.
#[test]
fn fig4_crash_rows_redo_as_little_with_homes() {
    for crash in [3, 0] {
        let mut c = SimConfig {
            clusters: 4,
            nodes_per_cluster: 16,
            shape: Shape::Uneven { leaves: 16_000 },
            mean_leaf_cost: 500_000_000,
            seed: 1,
            ..SimConfig::default()
        };
        c.protocol.ft = FtMode::Table;
        c.faults = vec![Fault { at: When::Share(0.5), kind: Kind::Crash(Crashed::Cluster(crash)) }];
        c.protocol.table = TablePlacement::Home { replicas: 2 };
        let home = sim::run(&c);
        assert!(home.result_ok, "{}", home.to_json());
        assert!(home.redundancy() <= 0.01, "cluster {crash}: redundant leaf work {}", home.redundancy());
        assert_eq!(home.violations + home.running_recomputed, 0, "{}", home.to_json());
    }
}
