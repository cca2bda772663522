//! The report's figures that sum up the nodes at the end of a run.

use super::report::{self, Report};
use super::World;
use satin_proto::NodeStats;

impl World<'_> {
    /// Adds the nodes' own counts to the report.
    pub(crate) fn sum_up(&self, report: &mut Report) {
        if let Some(d) = &self.disk {
            report.checkpoint_file_bytes = d.max_bytes.max(d.bytes.len()) as u64;
            report.checkpoint_repairs = d.repairs;
        }
        let total: NodeStats = self.nodes.iter().map(|n| n.core.stats()).sum();
        report.records_written += total.records_written;
        report.records_loaded += total.records_loaded;
        report.jobs_stolen += total.jobs_stolen;
        report.table_hits += total.table_hits;
        report.redone += total.redone;
        report.orphans_saved += total.orphans_saved;
        report.adopted += total.adopted;
        report.adoptions_given_up += total.adoptions_given_up;
        report.duplicates_started += total.duplicates_started;
        report.duplicates_won += total.duplicates_won;
        report.duplicates_aborted += total.duplicates_aborted;
        report.loser_seconds += total.loser_time as f64 / 1e9;
        report.status_checks += total.status_checks;
        report.jobs_lost += total.jobs_lost;
        report.hard_timeouts += total.hard_timeouts;
        report.hard_timeouts_waived += total.hard_timeouts_waived;
        report.retried += total.retried;
        report.drops += total.drops;
        report.elections += total.elections;
        report.removals += total.removals;
        for node in &self.nodes {
            report.completed_twice += node.exec.completed_twice;
            report.table_entries = report.table_entries.max(node.core.table_len() as u64);
            report.table_entries_total += node.core.table_len() as u64;
        }
        report.nodes = self.nodes.len() as u64;
        report.per_node = (0..self.nodes.len())
            .map(|i| {
                let judged = self.nodes.iter().flat_map(|n| n.core.health_report()).filter(|h| h.node == i as u64);
                let (strikes, drops) = judged.fold((0, 0), |(s, d), h| (s + h.strikes, d.max(h.drops)));
                report::PerNode {
                    leaves: self.nodes[i].leaves,
                    started_at: self.nodes[i].started_at.clone(),
                    strikes,
                    drops,
                }
            })
            .collect();
        report.leaves_on_crashed = self.nodes.iter().filter(|n| n.crashed).map(|n| n.leaves).sum();
    }
}
