//! Connections: transport settings, the outgoing stream to each peer, and
//! the incoming side that checks the handshake and decodes frames into the
//! driver's inputs. Every node sends over a connection it opened itself and
//! receives on the ones its peers opened.

use std::collections::{HashMap, HashSet};
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::sync::Arc;
use std::time::{Duration, Instant};

use quinn::{Connection, ConnectionError, Endpoint, Incoming, TransportConfig, VarInt};
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};
use tracing::warn;

use super::driver::Input;
use super::tls::SERVER_NAME;
use super::wire::{close, Frame};
use crate::codec::{self, Hello};
use crate::proto::{Msg, NodeId};

/// How long a finishing node waits for its last frames to be read.
const FLUSH: Duration = Duration::from_secs(2);
const CLOSE_GRACE: Duration = Duration::from_millis(50);

pub(super) fn transport(idle: Duration) -> Arc<TransportConfig> {
    let mut t = TransportConfig::default();
    t.max_idle_timeout(Some(quinn::IdleTimeout::try_from(idle).unwrap_or(quinn::IdleTimeout::from(VarInt::MAX))));
    t.keep_alive_interval(Some(idle / 4));
    Arc::new(t)
}

/// The address others reach this node at: the bound one, with an
/// unspecified IP replaced by the one that routes towards `towards` (the
/// contact), or towards the default route for the first node. Choosing a
/// route sends nothing: it is a `connect` on an unbound UDP socket.
pub(super) fn advertised(bound: SocketAddr, towards: Option<SocketAddr>) -> SocketAddr {
    if !bound.ip().is_unspecified() {
        return bound;
    }
    // TEST-NET-1 (RFC 5737): stands for "anywhere beyond this host".
    let anywhere = SocketAddr::from(([192, 0, 2, 1], 9));
    let ip = Some(towards.unwrap_or(anywhere))
        .and_then(|t| {
            let s =
                UdpSocket::bind((if t.is_ipv4() { IpAddr::from([0, 0, 0, 0]) } else { IpAddr::from([0u16; 8]) }, 0))
                    .ok()?;
            s.connect(t).ok()?;
            s.local_addr().ok().map(|a| a.ip())
        })
        .unwrap_or(IpAddr::from([127, 0, 0, 1]));
    SocketAddr::new(ip, bound.port())
}

pub(super) struct Net {
    pub(super) endpoint: Endpoint,
    pub(super) me: NodeId,
    pub(super) hello_frame: Vec<u8>,
    pub(super) max_frame: usize,
    pub(super) addrs: HashMap<NodeId, SocketAddr>,
    /// Outgoing connections: the frame queue and the task that sends it.
    pub(super) peers: HashMap<NodeId, (UnboundedSender<Vec<u8>>, tokio::task::JoinHandle<()>)>,
    pub(super) dead: HashSet<NodeId>,
    pub(super) input: UnboundedSender<Input>,
    pub(super) bytes_sent: u64,
    pub(super) frames_sent: u64,
}

impl Net {
    fn frame(&self, f: &Frame) -> Option<Vec<u8>> {
        match codec::encode(f, self.max_frame) {
            Ok(bytes) => Some(bytes),
            Err(e) => {
                warn!("dropping an outgoing message: {e}");
                None
            }
        }
    }

    pub(super) fn send(&mut self, to: NodeId, msg: Msg) {
        if to == self.me || self.dead.contains(&to) {
            return;
        }
        // Tell the receiver where the nodes this message names listen.
        let named: Vec<NodeId> = match &msg {
            Msg::Welcome { members, .. } => members.iter().map(|(id, _)| *id).collect(),
            Msg::NewMember { id, .. } => vec![*id],
            _ => Vec::new(),
        };
        for id in named {
            if let Some(&addr) = self.addrs.get(&id) {
                if let Some(f) = self.frame(&Frame::Peer { id, addr }) {
                    self.push(to, f);
                }
            }
        }
        if let Some(f) = self.frame(&Frame::Proto(msg)) {
            self.push(to, f);
        }
    }

    fn push(&mut self, to: NodeId, frame: Vec<u8>) {
        if !self.peers.contains_key(&to) && !self.connect(to) {
            return;
        }
        self.bytes_sent += frame.len() as u64;
        self.frames_sent += 1;
        if let Some((tx, _)) = self.peers.get(&to) {
            let _ = tx.send(frame);
        }
    }

    /// Opens the outgoing connection to `to`. False if its address is unknown.
    pub(super) fn connect(&mut self, to: NodeId) -> bool {
        let Some(&addr) = self.addrs.get(&to) else {
            warn!("no address for node {to}; message dropped");
            return false;
        };
        let (tx, rx) = unbounded_channel();
        let task =
            tokio::spawn(outgoing(self.endpoint.clone(), to, addr, self.hello_frame.clone(), rx, self.input.clone()));
        self.peers.insert(to, (tx, task));
        true
    }

    /// Stops sending to `id` (dead, or the contact placeholder once the
    /// contact's real id is known).
    pub(super) fn drop_peer(&mut self, id: NodeId) {
        if let Some((_, task)) = self.peers.remove(&id) {
            task.abort();
        }
    }

    /// Finishes every outgoing stream and waits (bounded) until peers read them.
    pub(super) async fn flush(mut self) {
        let tasks: Vec<_> = self.peers.drain().map(|(_, (_, task))| task).collect();
        let _ = tokio::time::timeout(FLUSH, async {
            for t in tasks {
                let _ = t.await;
            }
        })
        .await;
        self.endpoint.close(VarInt::from_u32(close::DONE), b"run over");
        // Long enough for the close frames to leave; peers treat a missing
        // one as a lost connection, which after the run is harmless.
        let _ = tokio::time::timeout(CLOSE_GRACE, self.endpoint.wait_idle()).await;
    }
}

/// Was the connection closed on purpose (run over, node left), not lost?
fn orderly(e: &ConnectionError) -> bool {
    matches!(e, ConnectionError::ApplicationClosed(c) if c.error_code == VarInt::from_u32(close::DONE))
        || matches!(e, ConnectionError::LocallyClosed)
}

async fn outgoing(
    endpoint: Endpoint,
    to: NodeId,
    addr: SocketAddr,
    hello: Vec<u8>,
    frames: UnboundedReceiver<Vec<u8>>,
    input: UnboundedSender<Input>,
) {
    if let Err(Lost { reason, unanswered }) = send_frames(endpoint, addr, hello, frames).await {
        let _ = input.send(Input::PeerDown { id: to, reason, unanswered });
    }
}

/// A connection that failed other than by an orderly close.
struct Lost {
    reason: String,
    /// It never got an answer: nobody listens at the address (yet).
    unanswered: bool,
}

impl Lost {
    fn new(reason: impl ToString) -> Lost {
        Lost { reason: reason.to_string(), unanswered: false }
    }
}

impl From<ConnectionError> for Lost {
    fn from(e: ConnectionError) -> Lost {
        Lost::new(describe(&e))
    }
}

fn write_failed(e: quinn::WriteError) -> Result<(), Lost> {
    match e {
        quinn::WriteError::ConnectionLost(c) if orderly(&c) => Ok(()),
        quinn::WriteError::ConnectionLost(c) => Err(c.into()),
        other => Err(Lost::new(other)),
    }
}

async fn send_frames(
    endpoint: Endpoint,
    addr: SocketAddr,
    hello: Vec<u8>,
    mut frames: UnboundedReceiver<Vec<u8>>,
) -> Result<(), Lost> {
    let connecting = endpoint.connect(addr, SERVER_NAME).map_err(Lost::new)?;
    let conn = match connecting.await {
        Ok(c) => c,
        Err(e) if orderly(&e) => return Ok(()),
        Err(e @ ConnectionError::TimedOut) => return Err(Lost { reason: describe(&e), unanswered: true }),
        Err(e) => return Err(e.into()),
    };
    let mut send = match conn.open_uni().await {
        Ok(s) => s,
        Err(e) if orderly(&e) => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    if let Err(e) = send.write_all(&hello).await {
        return write_failed(e);
    }
    loop {
        tokio::select! {
            frame = frames.recv() => match frame {
                Some(f) => {
                    if let Err(e) = send.write_all(&f).await {
                        return write_failed(e);
                    }
                }
                None => break,
            },
            e = conn.closed() => return if orderly(&e) { Ok(()) } else { Err(e.into()) },
        }
    }
    let _ = send.finish();
    let t = Instant::now();
    let r = tokio::time::timeout(FLUSH, send.stopped()).await;
    tracing::debug!("stream to {addr} finished in {:?}: {r:?}", t.elapsed());
    Ok(())
}

fn describe(e: &ConnectionError) -> String {
    match e {
        ConnectionError::ApplicationClosed(c) => {
            format!("closed by peer: {}", String::from_utf8_lossy(&c.reason))
        }
        ConnectionError::TimedOut => "no answer within the idle timeout".to_string(),
        other => other.to_string(),
    }
}

pub(super) async fn accept_loop(endpoint: Endpoint, ours: Hello, max_frame: usize, input: UnboundedSender<Input>) {
    while let Some(incoming) = endpoint.accept().await {
        tokio::spawn(incoming_conn(incoming, ours.clone(), max_frame, input.clone()));
    }
}

async fn incoming_conn(incoming: Incoming, ours: Hello, max_frame: usize, input: UnboundedSender<Input>) {
    let remote = incoming.remote_address();
    let conn = match incoming.await {
        Ok(c) => c,
        Err(e) => {
            warn!("rejected a connection from {remote}: {e}");
            return;
        }
    };
    let mut peer: Option<NodeId> = None;
    let result = read_frames(&conn, &ours, max_frame, &input, &mut peer).await;
    if let (Err(reason), Some(id)) = (result, peer) {
        let _ = input.send(Input::PeerDown { id, reason, unanswered: false });
    }
}

async fn read_frames(
    conn: &Connection,
    ours: &Hello,
    max_frame: usize,
    input: &UnboundedSender<Input>,
    peer: &mut Option<NodeId>,
) -> Result<(), String> {
    let mut recv = match conn.accept_uni().await {
        Ok(r) => r,
        Err(e) if orderly(&e) => return Ok(()),
        Err(e) => return Err(describe(&e)),
    };
    let mut buf: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        loop {
            match codec::decode::<Frame>(&buf, max_frame) {
                Ok(Some((frame, used))) => {
                    buf.drain(..used);
                    handle_frame(conn, ours, frame, input, peer)?;
                }
                Ok(None) => break,
                Err(e) => {
                    warn!("closing the connection from {}: {e}", conn.remote_address());
                    conn.close(VarInt::from_u32(close::BAD_FRAME), e.to_string().as_bytes());
                    return Err(e.to_string());
                }
            }
        }
        match recv.read(&mut chunk).await {
            Ok(Some(n)) => buf.extend_from_slice(&chunk[..n]),
            Ok(None) => return Ok(()),
            Err(quinn::ReadError::ConnectionLost(e)) if orderly(&e) => return Ok(()),
            Err(quinn::ReadError::ConnectionLost(e)) => return Err(describe(&e)),
            Err(e) => return Err(e.to_string()),
        }
    }
}

fn handle_frame(
    conn: &Connection,
    ours: &Hello,
    frame: Frame,
    input: &UnboundedSender<Input>,
    peer: &mut Option<NodeId>,
) -> Result<(), String> {
    match (frame, *peer) {
        (Frame::Hello { hello, id, addr, .. }, None) => {
            if let Err(e) = ours.check(&hello) {
                let why = format!("handshake with the node at {addr} failed: {e}");
                tracing::error!("{why}");
                conn.close(VarInt::from_u32(close::HANDSHAKE), why.as_bytes());
                return Ok(());
            }
            *peer = Some(id);
            let _ = input.send(Input::Hello { id, addr });
        }
        (Frame::Peer { id, addr }, Some(_)) => {
            let _ = input.send(Input::Addr { id, addr });
        }
        (Frame::Proto(msg), Some(from)) => {
            let _ = input.send(Input::Message { from, msg });
        }
        (f, _) => {
            let why = format!("unexpected frame {f:?}");
            conn.close(VarInt::from_u32(close::BAD_FRAME), why.as_bytes());
            return Err(why);
        }
    }
    Ok(())
}
