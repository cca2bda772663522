//! `/metrics`: the dashboard's figures in the Prometheus text format,
//! made with the Prometheus project's client crate.

use prometheus_client::encoding::text::encode;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use super::board::Board;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct NodeLabels {
    node: String,
    state: String,
}

/// The metrics text of `board`.
pub(crate) fn render(board: &Board) -> String {
    let mut registry = Registry::with_prefix("satin");
    let up = Family::<NodeLabels, Gauge>::default();
    let stolen = Family::<NodeLabels, Gauge>::default();
    let given = Family::<NodeLabels, Gauge>::default();
    registry.register("node_up", "Whether the node is in the run (1) or left or crashed (0)", up.clone());
    registry.register(
        "node_jobs_stolen",
        "Jobs the node stole from others (as its master counts them)",
        stolen.clone(),
    );
    registry.register("node_jobs_given", "Jobs the node gave to thieves (as its master counts them)", given.clone());
    // What each node reports of itself. The registry is made afresh for
    // each scrape, so a counter raised by the node's total shows it.
    let counter = |registry: &mut Registry, name: &str, help: &str| {
        let family = Family::<NodeLabels, Counter>::default();
        registry.register(name, help, family.clone());
        family
    };
    let spawns = counter(&mut registry, "node_spawns", "Calls spawned on the node");
    let lookups = counter(&mut registry, "node_table_lookups", "Lookups of redone calls in the node's result table");
    let hits = counter(&mut registry, "node_table_hits", "Lookups that found a result");
    let recoveries = counter(&mut registry, "node_recoveries", "Recoveries the node ran for crashed nodes");
    let bytes = counter(&mut registry, "node_sent_bytes", "Bytes the node sent to other nodes");
    let entries = Family::<NodeLabels, Gauge>::default();
    registry.register("node_table_entries", "Entries in the node's result table", entries.clone());
    let memory = Family::<NodeLabels, Gauge>::default();
    registry.register("node_resident_bytes", "Memory the node's process holds (resident set)", memory.clone());
    let cpu = Family::<NodeLabels, Counter<f64, std::sync::atomic::AtomicU64>>::default();
    registry.register("node_cpu_seconds", "CPU time of the node's process", cpu.clone());
    for row in board.rows() {
        let labels = NodeLabels { node: row.name.clone(), state: row.state.to_string() };
        up.get_or_create(&labels).set(i64::from(row.state == "alive"));
        stolen.get_or_create(&labels).set(row.jobs_stolen as i64);
        given.get_or_create(&labels).set(row.jobs_given as i64);
        if let Some(f) = &row.figures {
            spawns.get_or_create(&labels).inc_by(f.spawns);
            lookups.get_or_create(&labels).inc_by(f.table_lookups);
            hits.get_or_create(&labels).inc_by(f.table_hits);
            recoveries.get_or_create(&labels).inc_by(f.recoveries);
            bytes.get_or_create(&labels).inc_by(f.bytes_sent);
            entries.get_or_create(&labels).set(f.table_entries as i64);
            cpu.get_or_create(&labels).inc_by(f.cpu_s);
            memory.get_or_create(&labels).set(f.rss_bytes as i64);
        }
    }
    let progress = Gauge::<f64, std::sync::atomic::AtomicU64>::default();
    progress.set(board.progress());
    registry.register("run_progress_ratio", "The estimated share of the run done, 0 to 1", progress);
    let mut text = String::new();
    // Writing into a String cannot fail.
    let _ = encode(&mut text, &registry);
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_and_progress_are_metrics_with_conventional_names() {
        let mut b = Board::new("app", None);
        b.alive(1, "127.0.0.1:7000".into(), None, true);
        b.update(1, 3, 5, None);
        let figures = satin_proto::NodeFigures {
            spawns: 40,
            bytes_sent: 900,
            cpu_ms: 1500,
            rss_bytes: 7_000_000,
            ..Default::default()
        };
        b.figures(1, &figures);
        let text = render(&b);
        assert!(text.contains(r#"satin_node_spawns_total{node="127.0.0.1:7000",state="alive"} 40"#), "{text}");
        assert!(text.contains(r#"satin_node_sent_bytes_total{node="127.0.0.1:7000",state="alive"} 900"#), "{text}");
        assert!(text.contains(r#"satin_node_cpu_seconds_total{node="127.0.0.1:7000",state="alive"} 1.5"#), "{text}");
        assert!(text.contains(r#"satin_node_up{node="127.0.0.1:7000",state="alive"} 1"#), "{text}");
        assert!(text.contains(r#"satin_node_resident_bytes{node="127.0.0.1:7000",state="alive"} 7000000"#), "{text}");
        // The node's own report replaced the master's count (0 given).
        assert!(text.contains(r#"satin_node_jobs_given{node="127.0.0.1:7000",state="alive"} 0"#), "{text}");
        assert!(text.contains("satin_run_progress_ratio 0"), "{text}");
        assert!(text.trim_end().ends_with("# EOF"), "{text}");
    }
}
