//! `/metrics`: the dashboard's figures in the Prometheus text format,
//! made with the Prometheus project's client crate.

use prometheus_client::encoding::text::encode;
use prometheus_client::encoding::EncodeLabelSet;
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
    for row in board.rows() {
        let labels = NodeLabels { node: row.name.clone(), state: row.state.to_string() };
        up.get_or_create(&labels).set(i64::from(row.state == "alive"));
        stolen.get_or_create(&labels).set(row.jobs_stolen as i64);
        given.get_or_create(&labels).set(row.jobs_given as i64);
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
        let text = render(&b);
        assert!(text.contains(r#"satin_node_up{node="127.0.0.1:7000",state="alive"} 1"#), "{text}");
        assert!(text.contains(r#"satin_node_jobs_given{node="127.0.0.1:7000",state="alive"} 5"#), "{text}");
        assert!(text.contains("satin_run_progress_ratio 0"), "{text}");
        assert!(text.trim_end().ends_with("# EOF"), "{text}");
    }
}
