//! What the nodes of a task-graph run tell each other.

use serde::{Deserialize, Serialize};

use crate::wire::Message;
use satin_proto::NodeId;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) enum GraphMsg {
    /// A joiner to the master: count me in. (Before the start, to the
    /// others: nothing but opening the connection.)
    Join,
    /// The master to every node: the run is about to start; processor `i`
    /// is node `roster[i]`, and the plan every node made from the workflow
    /// and the roster has this digest (a node whose plan differs runs
    /// another program or another input, and stops).
    Start { roster: Vec<NodeId>, digest: [u8; 32] },
    /// A node to the master: it has a connection to every other node.
    Ready,
    /// The master to every node, once all are ready: the clocks start at
    /// `at` (microseconds since the Unix epoch, a moment away).
    Go { at: u64 },
    /// The master to a node that joined after the start: a static schedule
    /// has no place for it.
    Full,
    /// A copy of `task` finished on processor `proc`, `end` units after
    /// the start by the sender's clock, with its output — to every node, so
    /// that any node that heard of it can pass it on (after a crash, or
    /// when asked).
    Finished { task: u32, proc: u32, original: bool, end: f64, output: Option<Vec<u8>> },
    /// After a crash, the lowest live processor to every node: the rest of
    /// the run goes by this plan, `(task, processor, start, finish)` for
    /// every unfinished task, instead of the duplicates.
    Replan { placements: Vec<(u32, u32, f64, f64)> },
    /// Who has the output of `task`? (A node given a task whose input's
    /// data went elsewhere.)
    Need { task: u32 },
    /// The output of `task`, in answer to `Need`.
    Output { task: u32, output: Vec<u8> },
}

impl Message for GraphMsg {
    fn names(&self) -> Vec<NodeId> {
        match self {
            GraphMsg::Start { roster, .. } => roster.clone(),
            _ => Vec::new(),
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            GraphMsg::Join => "Join",
            GraphMsg::Start { .. } => "Start",
            GraphMsg::Ready => "Ready",
            GraphMsg::Go { .. } => "Go",
            GraphMsg::Full => "Full",
            GraphMsg::Finished { .. } => "Finished",
            GraphMsg::Replan { .. } => "Replan",
            GraphMsg::Need { .. } => "Need",
            GraphMsg::Output { .. } => "Output",
        }
    }
}
