//! How a run of a workflow went, as the node that reports it saw it.

use std::time::Duration;

/// How a run of a workflow went, as the node that reports it saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkflowRun {
    /// Every task's output this node holds: the workflow's results (its
    /// exit tasks') always, others where this node needed them.
    pub outputs: Vec<Option<Vec<u8>>>,
    /// Tasks with a finished copy.
    pub tasks_completed: usize,
    /// Tasks in the workflow.
    pub tasks_total: usize,
    /// From the start to the last task's end, as this node saw it.
    pub makespan: Duration,
    /// What the schedule planned.
    pub planned: Duration,
    /// Processors (nodes, or threads for a run on this machine).
    pub procs: usize,
    /// Duplicates that ran to their end (they do when their original's
    /// processor crashed, or when its abort came late).
    pub duplicates_completed: usize,
    /// The processors that crashed.
    pub crashed: Vec<usize>,
    /// After the crash the rest was replanned (it ended sooner than the
    /// duplicates would), rather than left to the duplicates.
    pub replanned: bool,
}
