//! What travels on a connection: one unidirectional stream per direction,
//! opened by the sender, carrying length-prefixed frames in order.
//!
//! The first frame is `Hello` (who the sender is and whether it runs the
//! same program); `Peer` frames tell the receiver where a node it is about
//! to hear of listens, and precede the protocol message that names it.

use std::net::SocketAddr;

use serde::{Deserialize, Serialize};

use crate::codec::Hello;
use crate::proto::{ClusterId, Msg, NodeId};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Frame {
    Hello { hello: Hello, id: NodeId, cluster: ClusterId, addr: SocketAddr },
    Peer { id: NodeId, addr: SocketAddr },
    Proto(Msg),
}

/// Application close codes: how a connection ended on purpose.
pub(crate) mod close {
    /// The run is over, or the node left: not a crash.
    pub(crate) const DONE: u32 = 0;
    /// The handshake failed (different program or protocol version).
    pub(crate) const HANDSHAKE: u32 = 1;
    /// A frame did not decode.
    pub(crate) const BAD_FRAME: u32 = 2;
}
