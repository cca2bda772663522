//! How a task-graph run's messages travel: `satin-dag`'s [`GraphMsg`],
//! framed as any other message.

use crate::wire::Message;
use satin_dag::GraphMsg;
use satin_proto::NodeId;

impl Message for GraphMsg {
    fn names(&self) -> Vec<NodeId> {
        match self {
            GraphMsg::Start { roster, .. } => roster.clone(),
            _ => Vec::new(),
        }
    }

    fn kind(&self) -> &'static str {
        GraphMsg::kind(self)
    }
}
