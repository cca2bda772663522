//! How a program's part on this process ends, as values: [`super::try_run`]
//! and [`super::try_run_workflow`] return them, and the helpers for
//! binaries ([`super::run`], [`super::run_workflow_with`],
//! [`super::Launch::from_env`], all in `exit.rs`) turn them into the
//! messages and exit statuses that scripts and the supervisor read.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

/// Exit status of a node (and of a supervisor) whose run was suspended:
/// the same command resumes it (EX_TEMPFAIL).
pub const SUSPENDED_STATUS: i32 = 75;
/// Exit status of a supervisor whose nodes were all killed (`--chaos
/// 'kill:node=all,…'`): the run is lost, or resumable from its checkpoint.
pub const ALL_KILLED_STATUS: i32 = 3;
/// Exit status of a node that had no majority of the run for the wait of
/// `--heal-wait-ms`: it printed no answer (a partition's minority side).
pub const LOST_MAJORITY_STATUS: i32 = 4;
/// Exit status of a node the majority removed from the run while it was
/// cut off (it learned so when the network healed).
pub const EXPELLED_STATUS: i32 = 5;
/// Exit status for flags that make no sense.
pub const USAGE_STATUS: i32 = 2;

/// How a program's part on this process ended, when nothing went wrong.
#[derive(Debug)]
pub enum Ended<R> {
    /// The program's function returned `value` here. `shows`: this node
    /// is the one whose output counts (always, on this machine's cores):
    /// in a distributed run, the node the run started on (the `--listen`
    /// node, SLURM task 0, pod 0) — or, if it is gone, the master of the
    /// last run. Every node gets each answer, so the others return it too.
    Returned {
        /// What the function returned.
        value: R,
        /// Whether this node is the one to show it.
        shows: bool,
    },
    /// This node left before the end; the run goes on elsewhere, and the
    /// answer is another node's to show.
    Left,
    /// `--init-pool FILE`: a new pool credential is in this file.
    PoolWritten(PathBuf),
    /// `--local-nodes N`: this process ran the nodes as their supervisor
    /// and printed the master's standard output.
    Supervised,
}

/// Why a program's part on this process ended without its answer.
#[derive(Debug, Clone, PartialEq)]
pub enum RunError {
    /// Flags or a setup that make no sense (exit status 2).
    Usage(String),
    /// The run failed: a panic that reached the top, a node that could
    /// not start, … (exit status 1).
    Failed(String),
    /// The run was suspended; the same command resumes it from its
    /// checkpoint ([`SUSPENDED_STATUS`]).
    Suspended(String),
    /// Every node of a supervised cluster was killed
    /// ([`ALL_KILLED_STATUS`]).
    AllKilled(String),
    /// This node was cut off from the majority for longer than it waits
    /// ([`LOST_MAJORITY_STATUS`]); the run goes on without it.
    LostMajority {
        /// How long it waited.
        waited: Duration,
    },
    /// The majority removed this node while it was cut off
    /// ([`EXPELLED_STATUS`]).
    Expelled(String),
}

impl RunError {
    /// The exit status a binary ends with.
    pub fn exit_status(&self) -> i32 {
        match self {
            RunError::Usage(_) => USAGE_STATUS,
            RunError::Failed(_) => 1,
            RunError::Suspended(_) => SUSPENDED_STATUS,
            RunError::AllKilled(_) => ALL_KILLED_STATUS,
            RunError::LostMajority { .. } => LOST_MAJORITY_STATUS,
            RunError::Expelled(_) => EXPELLED_STATUS,
        }
    }

    /// A suspend or a cluster killed by plan are not errors of the
    /// program: said as news, not as an error.
    pub fn is_error(&self) -> bool {
        !matches!(self, RunError::Suspended(_) | RunError::AllKilled(_))
    }
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Usage(s)
            | RunError::Failed(s)
            | RunError::Suspended(s)
            | RunError::AllKilled(s)
            | RunError::Expelled(s) => f.write_str(s),
            RunError::LostMajority { waited } => write!(
                f,
                "this node lost the majority of the run and waited {:.1} s for it in vain; the run goes on \
                 without it if a majority is left (no answer is printed here)",
                waited.as_secs_f64()
            ),
        }
    }
}

impl std::error::Error for RunError {}

/// Ends the program's function early, from inside an annotated call,
/// when this node's part ended without an answer: unwinds to
/// [`super::try_run`], which returns the error it carries ([`Ended::Left`]
/// for none).
pub(super) struct NodeEnded(pub(super) Option<RunError>);

impl NodeEnded {
    /// Unwinds (without running the panic hook: this is no panic of the
    /// program).
    pub(super) fn unwind(error: Option<RunError>) -> ! {
        std::panic::resume_unwind(Box::new(NodeEnded(error)))
    }
}
