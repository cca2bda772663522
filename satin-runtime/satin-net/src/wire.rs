//! What travels on a connection: one unidirectional stream per direction,
//! opened by the sender, carrying length-prefixed frames in order.
//!
//! The first frame is `Hello` (who the sender is and whether it runs the
//! same program); `Peer` frames tell the receiver where a node it is about
//! to hear of listens, and precede the protocol message that names it.
//! The protocol message is the divide-and-conquer core's [`Msg`] by
//! default, or a task-graph run's message: both share the transport.

use std::net::SocketAddr;

use serde::{Deserialize, Serialize};

use satin_proto::codec::Hello;
use satin_proto::{ClusterId, Msg, NodeId};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Frame<M = Msg> {
    /// `label`: the sender's short name (its number under a supervisor,
    /// SLURM or Kubernetes; else its address).
    Hello {
        hello: Hello,
        id: NodeId,
        cluster: ClusterId,
        addr: SocketAddr,
        label: String,
    },
    /// Where node `id` listens, and its short name (empty: unknown).
    Peer {
        id: NodeId,
        addr: SocketAddr,
        label: String,
    },
    Proto(M),
    /// The first frame of the data stream (the control stream's first is
    /// `Hello`; see `conn/outgoing.rs`).
    Bulk,
    /// A frame's bytes packed against the bytes both ends hold (see
    /// `satin_proto::dedup`): unpacked, one `Proto` frame.
    Packed(satin_proto::dedup::Packed),
    /// Where the sender keeps the frames written to it through shared
    /// memory, and the token there that proves a peer sees the place (see
    /// `conn/same_host.rs`). After `Hello`, on the control stream.
    Place {
        dir: String,
        token: [u8; 16],
    },
    /// This frame's bytes lie in the receiver's own place, in the file
    /// `name` of `len` bytes: read, one `Proto` or `Packed` frame.
    Placed {
        name: String,
        len: u64,
    },
}

/// A protocol message that travels in [`Frame::Proto`].
pub(crate) trait Message: Serialize + serde::de::DeserializeOwned + std::fmt::Debug + Send + 'static {
    /// Nodes this message names: their addresses go out before it.
    fn names(&self) -> Vec<NodeId> {
        Vec::new()
    }

    /// Whether the message may travel unreliably (a QUIC datagram): small,
    /// repeated anyway, and worth more on time than in order — beats and
    /// repeated entries, which a packet lost in the stream would hold up.
    fn unreliable(&self) -> bool {
        false
    }

    /// Whether the message takes the control stream, which never waits
    /// behind data: beats, votes and the log's entries.
    fn urgent(&self) -> bool {
        false
    }

    /// The message's kind, as statistics name it (`bytes_by_kind`).
    fn kind(&self) -> &'static str;
}

impl Message for Msg {
    fn names(&self) -> Vec<NodeId> {
        match self {
            Msg::Welcome { members, .. } | Msg::Roster { members } => members.iter().map(|(id, _)| *id).collect(),
            Msg::Quorum(q) => q.names(),
            _ => Vec::new(),
        }
    }

    fn unreliable(&self) -> bool {
        matches!(self, Msg::Quorum(q) if q.may_be_lost())
    }

    fn urgent(&self) -> bool {
        Msg::urgent(self)
    }

    fn kind(&self) -> &'static str {
        Msg::kind(self)
    }
}

/// Application close codes: how a connection ended on purpose.
pub(crate) mod close {
    /// The run is over, or the node left: not a crash.
    pub(crate) const DONE: u32 = 0;
    /// The handshake failed (different program or protocol version).
    pub(crate) const HANDSHAKE: u32 = 1;
    /// A frame did not decode.
    pub(crate) const BAD_FRAME: u32 = 2;
    /// The closing node has declared the peer dead. A crash is noticed on
    /// each connection on its own; after a short outage one may time out
    /// and another survive. This code makes the peer see it too, so that no
    /// node waits for a result from one that has given it up.
    pub(crate) const DEAD: u32 = 3;
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::Frame;
    use satin_proto::codec::{decode, encode, Hello};
    use satin_proto::Msg;

    fn arb_frame() -> impl Strategy<Value = Frame> {
        let addr = (any::<[u8; 4]>(), any::<u16>()).prop_map(|(ip, port)| std::net::SocketAddr::from((ip, port)));
        prop_oneof![
            (any::<u64>(), any::<u32>(), addr.clone(), "[a-z]{0,12}").prop_map(|(id, cluster, addr, app)| {
                Frame::Hello { hello: Hello::new(app, &["f"]), id, cluster, addr, label: "3".into() }
            }),
            (any::<u64>(), addr, "[0-9]{0,3}").prop_map(|(id, addr, label)| Frame::Peer { id, addr, label }),
            any::<u64>().prop_map(|id| Frame::Proto(Msg::StealRequest { id, holds: vec![[id as u8; 32]] })),
            proptest::collection::vec(any::<u8>(), 0..200).prop_map(|value| Frame::Proto(Msg::Terminate {
                run: 1,
                value: Some(value.into()),
                shower: 2,
                holder: 3
            })),
            Just(Frame::Bulk),
            ("/dev/shm/satin-[0-9]{1,7}-[0-9a-f]{12}", any::<[u8; 16]>())
                .prop_map(|(dir, token)| Frame::Place { dir, token }),
            ("[0-9]{1,7}-[0-9]{1,4}", any::<u64>()).prop_map(|(name, len)| Frame::Placed { name, len }),
            (any::<u64>(), ".{0,40}").prop_map(|(stamp, reason)| Frame::Proto(Msg::JobFailed { stamp, reason })),
            any::<u64>().prop_map(|stamp| Frame::Proto(Msg::JobRefused { stamp })),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

        #[test]
        fn frames_round_trip_and_truncations_wait(frame in arb_frame()) {
            let bytes = encode(&frame, 1 << 16).unwrap();
            let (back, used) = decode::<Frame>(&bytes, 1 << 16).unwrap().unwrap();
            prop_assert_eq!(back, frame);
            prop_assert_eq!(used, bytes.len());
            for cut in 0..bytes.len() {
                prop_assert_eq!(decode::<Frame>(&bytes[..cut], 1 << 16).unwrap(), None);
            }
        }

        #[test]
        fn garbage_and_bit_flips_never_panic(
            frame in arb_frame(),
            garbage in proptest::collection::vec(any::<u8>(), 0..400),
            at in any::<usize>(),
            flip in 1u8..,
        ) {
            let _ = decode::<Frame>(&garbage, 1 << 16);
            let mut bytes = encode(&frame, 1 << 16).unwrap();
            let i = at % bytes.len();
            bytes[i] ^= flip;
            let _ = decode::<Frame>(&bytes, 1 << 16);
        }
    }
}
