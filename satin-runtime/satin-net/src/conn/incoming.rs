//! The connections peers open to this node: the handshake, then the
//! frames of both streams and the datagrams, decoded here (on the
//! network's threads) into [`Link`] events. What came on the control
//! stream or as a datagram goes to the driver's urgent input, which it
//! reads first; the data stream's messages go to its ordinary input.

use bytes::{Bytes, BytesMut};
use quinn::{Connection, ConnectionError, Incoming, RecvStream, VarInt};
use tokio::sync::mpsc::UnboundedSender;
use tokio::sync::watch;
use tracing::warn;

use super::outgoing::close_bad;
use super::{declared_dead, describe, orderly, Inputs, Link, SameHost, SharedDictionary};
use crate::wire::{close, Frame, Message};
use satin_proto::codec::{self, Hello};
use satin_proto::NodeId;

/// What every incoming connection needs.
pub(crate) struct Accepting<I> {
    pub(crate) ours: Hello,
    pub(crate) max_frame: usize,
    pub(crate) inputs: Inputs<I>,
    pub(crate) dictionary: Option<SharedDictionary>,
    pub(crate) same_host: Option<std::sync::Arc<SameHost>>,
}

impl<I> Clone for Accepting<I> {
    fn clone(&self) -> Self {
        Accepting {
            ours: self.ours.clone(),
            max_frame: self.max_frame,
            inputs: self.inputs.clone(),
            dictionary: self.dictionary.clone(),
            same_host: self.same_host.clone(),
        }
    }
}

pub(crate) async fn accept_loop<M: Message, I: From<Link<M>> + Send + 'static>(
    endpoint: quinn::Endpoint,
    a: Accepting<I>,
) {
    while let Some(incoming) = endpoint.accept().await {
        tokio::spawn(incoming_conn::<M, I>(incoming, a.clone()));
    }
}

async fn incoming_conn<M: Message, I: From<Link<M>> + Send + 'static>(incoming: Incoming, a: Accepting<I>) {
    let remote = incoming.remote_address();
    let conn = match incoming.await {
        Ok(c) => c,
        Err(e) => {
            warn!("rejected a connection from {remote}: {e}");
            return;
        }
    };
    // The peer's id, once its handshake (on the control stream) passed:
    // the data stream's frames wait for it.
    let (peer_tx, peer_rx) = watch::channel::<Option<NodeId>>(None);
    let mut streams = Vec::new();
    let ended = loop {
        match conn.accept_uni().await {
            Ok(recv) => {
                let reader = Reader { conn: conn.clone(), a: a.clone(), peer: peer_tx.clone(), known: peer_rx.clone() };
                streams.push(tokio::spawn(reader.read::<M>(recv)));
            }
            Err(e) if orderly(&e) => break Ok(()),
            Err(e) => break Err(e),
        }
    };
    // Every frame that arrived is handed on before the loss is told.
    for s in streams {
        let _ = s.await;
    }
    let peer = *peer_rx.borrow();
    if let (Err(e), Some(id)) = (ended, peer) {
        let (reason, declared_dead) = (describe(&e), declared_dead(&e));
        let _ =
            a.inputs.ordinary.send(Link::PeerDown { id, reason, unanswered: false, ours: false, declared_dead }.into());
    }
}

/// One stream of an incoming connection.
struct Reader<I> {
    conn: Connection,
    a: Accepting<I>,
    peer: watch::Sender<Option<NodeId>>,
    known: watch::Receiver<Option<NodeId>>,
}

/// Which stream a reader reads, once its first frame said so.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stream {
    Unknown,
    Control,
    Data,
}

impl<I: Send + 'static> Reader<I> {
    async fn read<M: Message>(mut self, mut recv: RecvStream) -> Result<(), ConnectionError>
    where
        I: From<Link<M>>,
    {
        let mut stream = Stream::Unknown;
        // A whole frame is split off as `Bytes`, and what it carries is
        // decoded as slices of it (`codec::decode_shared`): a job's
        // parameters or a result are not copied again. A frame that lies
        // whole in one chunk of the stream is that chunk's slice; a
        // longer one is gathered into room of its size, taking from each
        // chunk only what it lacks (what follows waits in `rest`, so the
        // room never grows and moves megabytes).
        let mut buf = BytesMut::new();
        let mut rest = Bytes::new();
        loop {
            let whole = if buf.is_empty() {
                match codec::frame_len(&rest, self.a.max_frame) {
                    Some(whole) if whole <= rest.len() => Some(rest.split_to(whole)),
                    _ => None,
                }
            } else {
                codec::frame_len(&buf, self.a.max_frame)
                    .filter(|&w| w == buf.len())
                    .map(|_| std::mem::take(&mut buf).freeze())
            };
            if let Some(frame) = whole {
                match codec::decode_shared::<Frame<M>>(&frame, self.a.max_frame) {
                    Ok(Some((frame, _))) => {
                        if let Err(why) = self.handle(frame, &mut stream).await {
                            close_bad(&self.conn, &why);
                            return Ok(());
                        }
                    }
                    Ok(None) => return self.bad("a frame shorter than its length"),
                    Err(e) => return self.bad(&e.to_string()),
                }
                continue;
            }
            if rest.is_empty() {
                match recv.read_chunk(usize::MAX, true).await {
                    Ok(Some(chunk)) => rest = chunk.bytes,
                    Ok(None) => return Ok(()),
                    Err(quinn::ReadError::ConnectionLost(e)) => return Err(e),
                    Err(_) => return Ok(()),
                }
                continue;
            }
            // Move into `buf` what the frame begun there lacks: its length
            // first, then its body, into room of its size.
            let take = match codec::frame_len(&buf, self.a.max_frame) {
                Some(whole) => {
                    buf.reserve(whole - buf.len());
                    whole - buf.len()
                }
                None if buf.len() >= codec::LEN_BYTES => {
                    // A length beyond the cap.
                    let e = codec::decode::<Frame<M>>(&buf, self.a.max_frame).err();
                    return self.bad(&e.map_or_else(|| "a frame beyond the cap".to_string(), |e| e.to_string()));
                }
                None => codec::LEN_BYTES - buf.len(),
            };
            let take = take.min(rest.len());
            buf.extend_from_slice(&rest.split_to(take));
        }
    }

    fn bad(&self, why: &str) -> Result<(), ConnectionError> {
        warn!("closing the connection from {}: {why}", self.conn.remote_address());
        close_bad(&self.conn, why);
        Ok(())
    }

    /// One frame of this stream (one placed in shared memory is read, a
    /// packed one unpacked, first).
    async fn handle<M: Message>(&mut self, frame: Frame<M>, stream: &mut Stream) -> Result<(), String>
    where
        I: From<Link<M>>,
    {
        let frame = match frame {
            Frame::Placed { name, len } if *stream != Stream::Unknown => {
                let same_host = self.a.same_host.as_ref().ok_or("a frame in shared memory, but none here")?;
                let bytes = same_host.take(&name, len)?;
                match codec::decode_shared::<Frame<M>>(&bytes, usize::MAX) {
                    Ok(Some((inner @ (Frame::Proto(_) | Frame::Packed(_)), used))) if used == bytes.len() => inner,
                    _ => return Err("a frame in shared memory that is not one message".into()),
                }
            }
            other => other,
        };
        let frame = match frame {
            Frame::Packed(packed) => {
                let dictionary = self.a.dictionary.as_ref().ok_or("a packed frame, but no dictionary here")?;
                let bytes = bytes::Bytes::from(dictionary.get().unpack(&packed).map_err(|e| e.to_string())?);
                match codec::decode_shared::<Frame<M>>(&bytes, self.a.max_frame) {
                    Ok(Some((inner @ Frame::Proto(_), used))) if used == bytes.len() => inner,
                    _ => return Err("a packed frame that is not one message".into()),
                }
            }
            other => other,
        };
        let from = *self.known.borrow();
        match (frame, *stream) {
            (Frame::Hello { hello, id, addr, label, .. }, Stream::Unknown) => {
                if let Err(e) = self.a.ours.check(&hello) {
                    let why = format!("handshake with the node at {addr} failed: {e}");
                    tracing::error!("{why}");
                    self.conn.close(VarInt::from_u32(close::HANDSHAKE), why.as_bytes());
                    return Ok(());
                }
                *stream = Stream::Control;
                let _ = self.a.inputs.urgent.send(Link::Hello { id, addr, label, conn: self.conn.clone() }.into());
                let _ = self.peer.send(Some(id));
                tokio::spawn(read_datagrams::<M, I>(self.conn.clone(), id, self.a.clone()));
            }
            (Frame::Bulk, Stream::Unknown) => {
                *stream = Stream::Data;
                // Nothing of the data stream counts before the handshake.
                if self.known.wait_for(Option::is_some).await.is_err() {
                    return Err("the connection ended before its handshake".into());
                }
            }
            (Frame::Place { dir, token }, Stream::Control) => {
                if let (Some(same_host), Some(id)) = (&self.a.same_host, from) {
                    let seen = same_host.learn(id, &dir, token);
                    tracing::debug!(
                        "node {id} keeps frames in {dir}: {}",
                        if seen { "this host" } else { "not seen here" }
                    );
                }
            }
            (Frame::Peer { id, addr, label }, s) if s != Stream::Unknown => {
                let _ = self.input(s).send(Link::Addr { id, addr, label }.into());
            }
            (Frame::Proto(msg), s) if s != Stream::Unknown => {
                let Some(from) = from.or(*self.known.borrow()) else {
                    return Err("a message before the handshake".into());
                };
                let _ = self.input(s).send(Link::Message { from, msg }.into());
            }
            (f, _) => return Err(format!("unexpected frame {f:?}")),
        }
        Ok(())
    }

    fn input(&self, stream: Stream) -> &UnboundedSender<I> {
        if stream == Stream::Control {
            &self.a.inputs.urgent
        } else {
            &self.a.inputs.ordinary
        }
    }
}

/// Messages the peer sends as datagrams on the connection it opened
/// (beats): urgent.
async fn read_datagrams<M: Message, I: From<Link<M>> + Send + 'static>(
    conn: Connection,
    from: NodeId,
    a: Accepting<I>,
) {
    while let Ok(bytes) = conn.read_datagram().await {
        match codec::decode::<Frame<M>>(&bytes, a.max_frame) {
            Ok(Some((Frame::Proto(msg), _))) => {
                if a.inputs.urgent.send(Link::Message { from, msg }.into()).is_err() {
                    return;
                }
            }
            other => warn!("dropping a datagram from node {from} that is not one message: {other:?}"),
        }
    }
}
