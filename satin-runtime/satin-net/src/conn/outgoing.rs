//! The connection a node opens to a peer, and what it sends on it: two
//! unidirectional streams — *control* (the handshake, then the quorum's
//! messages: beats, votes, entries), at a higher priority, and *data*
//! (everything else, in order) — plus datagrams for what may be lost.
//! Beats and votes never wait behind a job's parameters or a result: QUIC
//! sends a higher-priority stream's data first, and each stream has its
//! own flow control.
//!
//! Frames are encoded here, on the network's threads, not by the driver:
//! a large message costs the event loop nothing. A frame goes to QUIC in
//! segments (`codec::encode_segments`): a job's parameters or a result
//! is handed over as the very buffer the message holds. A large frame is
//! packed against the root both ends hold (`satin_proto::dedup`); one
//! still large for a peer on this host is written to its place in shared
//! memory, and only its name goes on the stream (`same_host.rs`).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use quinn::{Connection, ConnectionError, Endpoint, SendStream};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

use super::same_host::{self, SameHost};
use super::{describe, orderly, Link, Sent, SharedDictionary, FLUSH};
use crate::tls::SERVER_NAME;
use crate::wire::{close, Frame, Message};
use satin_proto::codec;
use satin_proto::NodeId;

/// What the sending side of one connection needs.
pub(super) struct Outgoing<I> {
    pub(super) endpoint: Endpoint,
    pub(super) to: NodeId,
    pub(super) addr: SocketAddr,
    pub(super) hello: Vec<u8>,
    pub(super) max_frame: usize,
    pub(super) input: UnboundedSender<I>,
    pub(super) sent: Arc<Sent>,
    pub(super) dictionary: Option<SharedDictionary>,
    pub(super) same_host: Option<Arc<SameHost>>,
}

/// Frames waiting for a stream: (frame, kind for the statistics).
pub(super) type Queue<M> = UnboundedReceiver<(Frame<M>, &'static str)>;

/// A task that ends with its owner.
struct AbortOnDrop(tokio::task::JoinHandle<Result<(), Lost>>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Opens the connection to `o.to` and sends what the two queues bring
/// until they close (the node is done with the peer) or the connection
/// ends; tells the driver how it ended.
pub(super) async fn run<M: Message, I: From<Link<M>>>(o: Outgoing<I>, control: Queue<M>, data: Queue<M>) {
    let (to, input) = (o.to, o.input.clone());
    let linked = {
        let input = input.clone();
        move |conn| {
            let _ = input.send(Link::Linked { id: to, conn }.into());
        }
    };
    let _ = match send_frames(o, control, data, linked).await {
        Err(Lost { reason, unanswered, declared_dead }) => {
            input.send(Link::PeerDown { id: to, reason, unanswered, ours: true, declared_dead }.into())
        }
        Ok(()) => input.send(Link::Closed { id: to }.into()),
    };
}

/// A connection that failed other than by an orderly close.
pub(super) struct Lost {
    pub(super) reason: String,
    /// It never got an answer: nobody listens at the address (yet).
    pub(super) unanswered: bool,
    /// The peer closed it because it removed this node from the run.
    pub(super) declared_dead: bool,
}

impl Lost {
    pub(super) fn new(reason: impl ToString) -> Lost {
        Lost { reason: reason.to_string(), unanswered: false, declared_dead: false }
    }
}

impl From<ConnectionError> for Lost {
    fn from(e: ConnectionError) -> Lost {
        Lost { declared_dead: super::declared_dead(&e), ..Lost::new(describe(&e)) }
    }
}

fn write_failed(e: quinn::WriteError) -> Result<(), Lost> {
    match e {
        quinn::WriteError::ConnectionLost(c) if orderly(&c) => Ok(()),
        quinn::WriteError::ConnectionLost(c) => Err(c.into()),
        other => Err(Lost::new(other)),
    }
}

async fn send_frames<M: Message, I>(
    o: Outgoing<I>,
    control: Queue<M>,
    data: Queue<M>,
    linked: impl FnOnce(Connection),
) -> Result<(), Lost> {
    let connecting = o.endpoint.connect(o.addr, SERVER_NAME).map_err(Lost::new)?;
    let conn = match connecting.await {
        Ok(c) => c,
        Err(e) if orderly(&e) => return Ok(()),
        Err(e @ ConnectionError::TimedOut) => {
            return Err(Lost { unanswered: true, ..Lost::new(describe(&e)) });
        }
        Err(e) => return Err(e.into()),
    };
    linked(conn.clone());
    let open = |conn: &Connection| {
        let conn = conn.clone();
        async move {
            match conn.open_uni().await {
                Ok(s) => Ok(Some(s)),
                Err(e) if orderly(&e) => Ok(None),
                Err(e) => Err(Lost::from(e)),
            }
        }
    };
    let Some(mut control_stream) = open(&conn).await? else { return Ok(()) };
    // The control stream's data goes out first (quinn's default is 0).
    let _ = control_stream.set_priority(1);
    if let Err(e) = control_stream.write_all(&o.hello).await {
        return write_failed(e);
    }
    if let Some(same_host) = &o.same_host {
        let (dir, token) = same_host.place();
        let place = codec::encode(&Frame::<M>::Place { dir, token }, o.max_frame).map_err(Lost::new)?;
        if let Err(e) = control_stream.write_all(&place).await {
            return write_failed(e);
        }
    }
    let Some(mut data_stream) = open(&conn).await? else { return Ok(()) };
    let marker = codec::encode(&Frame::<M>::Bulk, o.max_frame).map_err(Lost::new)?;
    if let Err(e) = data_stream.write_all(&marker).await {
        return write_failed(e);
    }
    let writer = Writer {
        to: o.to,
        max_frame: o.max_frame,
        sent: o.sent.clone(),
        dictionary: o.dictionary.clone(),
        same_host: o.same_host.clone(),
    };
    let data_task = {
        let writer = writer.clone();
        AbortOnDrop(tokio::spawn(async move { writer.write_all(data_stream, data).await }))
    };
    let outcome = tokio::select! {
        r = writer.write_all(control_stream, control) => r,
        e = conn.closed() => return if orderly(&e) { Ok(()) } else { Err(e.into()) },
    };
    outcome?;
    // The control queue closed: the node is done with this peer. The data
    // stream finishes its queue (the last results) too.
    let mut data_task = data_task;
    match tokio::time::timeout(FLUSH, &mut data_task.0).await {
        Ok(Ok(r)) => r,
        _ => Ok(()),
    }
}

/// Encodes, packs and writes frames on one stream.
#[derive(Clone)]
struct Writer {
    to: NodeId,
    max_frame: usize,
    sent: Arc<Sent>,
    dictionary: Option<SharedDictionary>,
    same_host: Option<Arc<SameHost>>,
}

impl Writer {
    async fn write_all<M: Message>(&self, mut stream: SendStream, mut frames: Queue<M>) -> Result<(), Lost> {
        while let Some((frame, kind)) = frames.recv().await {
            let Some(segments) = self.encode(&frame) else { continue };
            let len: usize = segments.iter().map(Bytes::len).sum();
            self.sent.count(kind, len as u64);
            tracing::trace!(kind, bytes = len, "sending");
            let segments = self.in_memory::<M>(segments, len).await;
            // Handed to QUIC as they are, not copied into its send buffer.
            for segment in segments {
                if let Err(e) = stream.write_chunk(segment).await {
                    return write_failed(e);
                }
            }
        }
        let _ = stream.finish();
        let t = Instant::now();
        let r = tokio::time::timeout(FLUSH, stream.stopped()).await;
        tracing::debug!("stream finished in {:?}: {r:?}", t.elapsed());
        Ok(())
    }

    /// A large frame for a peer on this host, written to the peer's place
    /// in shared memory: what goes on the stream instead (its name). Any
    /// other frame, or one that cannot be written there, as it is.
    async fn in_memory<M: Message>(&self, segments: Vec<Bytes>, len: usize) -> Vec<Bytes> {
        let Some(same_host) = self.same_host.clone().filter(|_| len >= same_host::FROM) else { return segments };
        let Some(dir) = same_host.place_of(self.to) else { return segments };
        let (to, writer, parts) = (self.to, same_host.clone(), segments.clone());
        // A file of megabytes is written off the network's threads (the
        // segments are shared buffers: cloning them copies no bytes).
        let written = tokio::task::spawn_blocking(move || writer.write(&dir, &parts)).await;
        let name = match written {
            Ok(Ok(name)) => name,
            Err(_) => return segments,
            Ok(Err(e)) => {
                // The peer ended (its place is gone): the stream from now on.
                tracing::debug!("cannot write a frame for node {to} to shared memory: {e}");
                same_host.forget(to);
                return segments;
            }
        };
        match codec::encode(&Frame::<M>::Placed { name, len: len as u64 }, self.max_frame) {
            Ok(frame) => vec![Bytes::from(frame)],
            Err(_) => segments,
        }
    }

    /// The frame's bytes on the wire, in segments (a large field is its
    /// own, not a copy): packed against the dictionary when that saves
    /// bytes.
    fn encode<M: Message>(&self, frame: &Frame<M>) -> Option<Vec<Bytes>> {
        let segments = match codec::encode_segments(frame, self.max_frame) {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!("dropping an outgoing message: {e}");
                return None;
            }
        };
        let Some(dictionary) = self.dictionary.as_ref().map(|d| d.get()) else { return Some(segments) };
        let len: usize = segments.iter().map(Bytes::len).sum();
        match dictionary.pack(&segments).map(|p| codec::encode_segments(&Frame::<M>::Packed(p), usize::MAX)) {
            Some(Ok(packed)) if packed.iter().map(Bytes::len).sum::<usize>() < len => Some(packed),
            _ => Some(segments),
        }
    }
}

/// Closes a connection with the reason code for a bad frame.
pub(super) fn close_bad(conn: &Connection, why: &str) {
    conn.close(quinn::VarInt::from_u32(close::BAD_FRAME), why.as_bytes());
}
