//! What the nodes of a task-graph run tell each other.

use serde::{Deserialize, Serialize};

use super::{NodeId, Time};

/// A message between the nodes of a task-graph run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum GraphMsg {
    /// A joiner to the master: count me in. (Before the start, to the
    /// others: nothing but opening the connection.)
    Join,
    /// The master to every node: the run is about to start; processor `i`
    /// is node `roster[i]`, and the plan every node made from the workflow
    /// and the roster has this digest (a node whose plan differs runs
    /// another program or another input, and stops).
    Start {
        /// The nodes, in processor order (the master first).
        roster: Vec<NodeId>,
        /// The plan's digest.
        digest: [u8; 32],
    },
    /// A node to the master: it has a connection to every other node.
    Ready,
    /// The master to every node, once all are ready: the clocks start at
    /// `at` (on the shared clock: wall-clock nanoseconds in real runs,
    /// virtual time in the simulator).
    Go {
        /// When the clocks start.
        at: Time,
    },
    /// The master to a node that joined after the start: a static schedule
    /// has no place for it.
    Full,
    /// A copy of `task` finished on processor `proc`, `end` units after
    /// the start by the sender's clock, with its output — to every node, so
    /// that any node that heard of it can pass it on (after a crash, or
    /// when asked).
    Finished {
        /// The task.
        task: u32,
        /// The processor it finished on.
        proc: u32,
        /// Its original (not its duplicate).
        original: bool,
        /// When it ended, in units since the start.
        end: f64,
        /// Its output.
        output: Option<Vec<u8>>,
    },
    /// After a crash, the lowest live processor to every node: the rest of
    /// the run goes by this plan, `(task, processor, start, finish)` for
    /// every unfinished task, instead of the duplicates. `epoch` counts the
    /// processors down when it was made: a plan made knowing fewer crashes
    /// than one already followed comes late and is ignored.
    Replan {
        /// Processors down when the plan was made.
        epoch: u32,
        /// The new plan of every unfinished task.
        placements: Vec<(u32, u32, f64, f64)>,
    },
    /// The sender has the results: it stays, answering `Need`, until
    /// every live node has said so too (or a while has passed).
    Ended,
    /// Send me the news of `task` with its output, now or once you have
    /// it: a node whose input's data went elsewhere, or that waits for a
    /// task whose processor it takes for dead (while others may not).
    /// Answered with `Finished`.
    Need {
        /// The task.
        task: u32,
    },
}

impl GraphMsg {
    /// The message's kind, for traces and logs.
    pub fn kind(&self) -> &'static str {
        match self {
            GraphMsg::Join => "Join",
            GraphMsg::Start { .. } => "Start",
            GraphMsg::Ready => "Ready",
            GraphMsg::Go { .. } => "Go",
            GraphMsg::Full => "Full",
            GraphMsg::Finished { .. } => "Finished",
            GraphMsg::Replan { .. } => "Replan",
            GraphMsg::Ended => "Ended",
            GraphMsg::Need { .. } => "Need",
        }
    }
}
