//! A node's figures as they travel to the master (`node/figures.rs`
//! sends them).

use serde::{Deserialize, Serialize};

/// What a node reports of itself: counters since it started.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeFigures {
    /// The name of the cluster it belongs to (`--cluster`).
    pub cluster: String,
    /// Calls spawned on this node (each ran here or was stolen).
    pub spawns: u64,
    /// Jobs this node stole from others, and gave to thieves.
    pub jobs_stolen: u64,
    /// Jobs thieves took from this node.
    pub jobs_given: u64,
    /// Entries in its result table.
    pub table_entries: u64,
    /// Lookups of redone calls in the table, and the ones that hit.
    pub table_lookups: u64,
    /// Lookups that found a result.
    pub table_hits: u64,
    /// Recoveries it ran (crashes of others it handled).
    pub recoveries: u64,
    /// Bytes it sent to other nodes.
    pub bytes_sent: u64,
    /// CPU time of its process, in milliseconds.
    pub cpu_ms: u64,
    /// Memory its process holds now (resident set), in bytes.
    pub rss_bytes: u64,
    /// It serves a dashboard (`--dashboard` on a node that is not the
    /// first): the master sends it its board ([`crate::Msg::Board`]).
    pub watches: bool,
    /// Jobs that ended on it since its last report, for the dashboard's
    /// task stream (at most [`JOB_BARS_PER_REPORT`], the longest), then
    /// the ones running now (`running`, their duration so far).
    pub jobs: Vec<JobBar>,
}

/// The most job bars one report carries: a node that ended more keeps
/// the longest (the short ones would be a pixel wide anyway).
pub const JOB_BARS_PER_REPORT: usize = 400;

/// Keeps `bars` within `cap`: past it, only the `keep` longest stay, in
/// order of start (`true`); within it, nothing moves (`false`). A long run
/// ends far more jobs than a page can draw, and the long ones are its
/// shape: the task stream's records — `satin_core`'s spans, a report's
/// bars, a board's and a supervisor's — all keep their bars this way.
/// `took` and `start` read a bar's duration and start.
pub fn keep_longest<T, D: Ord, S: Ord>(
    bars: &mut Vec<T>,
    (cap, keep): (usize, usize),
    took: impl Fn(&T) -> D,
    start: impl Fn(&T) -> S,
) -> bool {
    if bars.len() <= cap {
        return false;
    }
    bars.sort_by_key(|b| std::cmp::Reverse(took(b)));
    bars.truncate(keep);
    bars.sort_by_key(start);
    true
}

/// One job as the task stream draws it: a bar on a worker's row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobBar {
    /// The worker thread that ran it (its index on the node).
    pub worker: u16,
    /// When it started: microseconds since the Unix epoch (wall clock, so
    /// that the bars of nodes on one machine line up).
    pub start_us: u64,
    /// How long it ran, in microseconds.
    pub took_us: u64,
    /// What kind of job it was.
    pub kind: JobKind,
    /// Still running when reported: `took_us` is its time so far.
    pub running: bool,
}

/// What kind of job a bar stands for (the task stream colours them apart).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum JobKind {
    /// The run's root call, in its first run.
    Root,
    /// A job taken from another worker or another node.
    Stolen,
    /// A job run again after the node that had it crashed (or a restarted
    /// root).
    Redone,
    /// A copy of a late job, raced against the original (stragglers).
    Duplicate,
    /// A job stopped before it ended (its result was no longer wanted).
    Aborted,
    /// A job that panicked or could not be decoded.
    Failed,
}

impl JobKind {
    /// Every kind, in the order of [`JobKind::name`]'s legend.
    pub const ALL: [JobKind; 6] =
        [JobKind::Root, JobKind::Stolen, JobKind::Redone, JobKind::Duplicate, JobKind::Aborted, JobKind::Failed];

    /// Its name on the dashboard.
    pub fn name(self) -> &'static str {
        match self {
            JobKind::Root => "root",
            JobKind::Stolen => "stolen",
            JobKind::Redone => "redone",
            JobKind::Duplicate => "duplicate",
            JobKind::Aborted => "aborted",
            JobKind::Failed => "failed",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::keep_longest;

    #[test]
    fn past_the_cap_the_longest_stay_in_order_of_start() {
        // (start, took)
        let mut bars: Vec<(u32, u32)> = vec![(5, 1), (1, 9), (3, 4), (2, 8), (4, 2)];
        assert!(!keep_longest(&mut bars, (5, 2), |b| b.1, |b| b.0), "within the cap");
        assert_eq!(bars[0], (5, 1), "nothing moves within the cap");
        bars.push((6, 7));
        assert!(keep_longest(&mut bars, (5, 3), |b| b.1, |b| b.0));
        assert_eq!(bars, vec![(1, 9), (2, 8), (6, 7)]);
    }
}
