//! Connections: transport settings, the links to each peer ([`Net`]),
//! the sending side (`outgoing.rs`: a control stream and a data stream
//! per connection) and the receiving side (`incoming.rs`: the handshake,
//! frames decoded into [`Link`] events for the driver). Every node sends
//! over a connection it opened itself and receives on the ones its peers
//! opened. Generic over the protocol message: the divide-and-conquer
//! driver and the task-graph driver share it.

mod incoming;
mod outgoing;
mod same_host;
mod socket;

pub(crate) use incoming::{accept_loop, Accepting};
pub(crate) use same_host::{sweep_gone as sweep_shared_memory, SameHost};

use std::collections::{BTreeMap, HashMap, HashSet};
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use quinn::{Connection, ConnectionError, Endpoint, TransportConfig, VarInt};
use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};
use tracing::warn;

use super::netfault::{Faults, FaultySocket};
use super::wire::{close, Frame, Message};
use satin_proto::codec;
use satin_proto::dedup::Dictionary;
use satin_proto::NodeId;

/// What the connections tell their driver; the driver's own input type
/// converts from it.
pub(super) enum Link<M> {
    /// A peer opened a connection and passed the handshake.
    Hello { id: NodeId, addr: SocketAddr, label: String, conn: Connection },
    /// A connection this node opened to `id` is up.
    Linked { id: NodeId, conn: Connection },
    /// The connection this node opened to `id` ended in order: `id` is
    /// through with the run (it ended, or `id` left).
    Closed { id: NodeId },
    /// Where node `id` listens, and its short name (empty: unknown).
    Addr { id: NodeId, addr: SocketAddr, label: String },
    /// A protocol message from `from`.
    Message { from: NodeId, msg: M },
    /// A connection to or from `id` failed; `unanswered`: an outgoing one
    /// that never got an answer (nobody listening there, yet or at all);
    /// `ours`: the connection this node opened (it can open another);
    /// `declared_dead`: `id` closed it because it removed this node.
    PeerDown { id: NodeId, reason: String, unanswered: bool, ours: bool, declared_dead: bool },
}

/// How long a finishing node waits for its last frames to be read (peers
/// known to be cut off are not waited for at all, see
/// [`Net::stop_sending_except`]).
const FLUSH: Duration = Duration::from_millis(500);
const CLOSE_GRACE: Duration = Duration::from_millis(2);

pub(super) fn transport(idle: Duration) -> Arc<TransportConfig> {
    let mut t = TransportConfig::default();
    t.max_idle_timeout(Some(quinn::IdleTimeout::try_from(idle).unwrap_or(quinn::IdleTimeout::from(VarInt::MAX))));
    t.keep_alive_interval(Some(idle / 4));
    // Nodes mostly share a LAN: a first guess of 333 ms (QUIC's) makes a
    // handshake whose first packets are lost wait a second per try.
    t.initial_rtt(Duration::from_millis(50));
    // A frame's last packet would wait for the peer's delayed ACK (25 ms
    // by default), and the end of a run waits for its frames to be read:
    // peers are asked to acknowledge within 2 ms (QUIC's ACK frequency
    // extension; every other packet is still acknowledged at once).
    let mut ack = quinn::AckFrequencyConfig::default();
    ack.max_ack_delay(Some(Duration::from_millis(2)));
    t.ack_frequency_config(Some(ack));
    let mut mtu = quinn::MtuDiscoveryConfig::default();
    mtu.upper_bound(u16::MAX);
    t.mtu_discovery_config(Some(mtu));
    Arc::new(t)
}

/// This node's endpoint: listening on `listen` with the pool's server
/// credential, connecting with its client credential.
/// With `faults`, the endpoint's packets go through them (`--chaos`
/// network faults, see `netfault.rs`).
pub(super) fn endpoint(
    pool: &super::tls::Pool,
    listen: SocketAddr,
    idle: Duration,
    faults: Option<Arc<Faults>>,
) -> Result<Endpoint, String> {
    let socket = super::retry::retry(
        super::retry::LOCAL_OPERATIONS,
        || socket::bind(listen),
        |e| super::retry::transient(e.kind()),
        |e, wait| warn!("cannot listen on {listen} ({e}); trying again in {wait:?}"),
    )
    .map_err(|e| format!("cannot listen on {listen}: {e}"))?;
    endpoint_on(pool, socket, idle, faults)
}

/// The endpoint on a socket already bound (see [`bind_if_free`]).
pub(super) fn endpoint_on(
    pool: &super::tls::Pool,
    socket: UdpSocket,
    idle: Duration,
    faults: Option<Arc<Faults>>,
) -> Result<Endpoint, String> {
    let (mut server, mut client) = pool.quic_configs().map_err(|e| format!("pool credential: {e}"))?;
    server.transport_config(transport(idle));
    client.transport_config(transport(idle));
    let addr = socket.local_addr().map_err(|e| format!("a socket without an address: {e}"))?;
    let runtime: Arc<dyn quinn::Runtime> = Arc::new(quinn::TokioRuntime);
    let mut endpoint = match &faults {
        None => Endpoint::new(quinn::EndpointConfig::default(), Some(server), socket, runtime),
        Some(faults) => runtime.wrap_udp_socket(socket).and_then(|socket| {
            let socket = Arc::new(FaultySocket::new(socket, faults.clone()));
            Endpoint::new_with_abstract_socket(quinn::EndpointConfig::default(), Some(server), socket, runtime)
        }),
    }
    .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    endpoint.set_default_client_config(client);
    Ok(endpoint)
}

/// The socket bound to `addr` if nothing on this host holds that address
/// now; `Ok(None)` if something does; an error if this host cannot bind
/// it at all (another host's address).
pub(crate) fn bind_if_free(addr: SocketAddr) -> std::io::Result<Option<UdpSocket>> {
    match socket::bind(addr) {
        Ok(socket) => Ok(Some(socket)),
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => Ok(None),
        Err(e) => Err(e),
    }
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

/// Where the connections hand what they hear: `urgent` for the control
/// stream's messages, datagrams and handshakes (the driver reads it
/// first), `ordinary` for the rest.
pub(crate) struct Inputs<I> {
    pub(crate) urgent: UnboundedSender<I>,
    pub(crate) ordinary: UnboundedSender<I>,
}

impl<I> Clone for Inputs<I> {
    fn clone(&self) -> Self {
        Inputs { urgent: self.urgent.clone(), ordinary: self.ordinary.clone() }
    }
}

/// Frames and bytes sent: (frames, bytes, (frames, bytes) per kind).
pub(crate) type SentCounts = (u64, u64, BTreeMap<&'static str, (u64, u64)>);

/// What this node has sent: frames and bytes, in all and per message
/// kind (`Peer` frames under "Peer"), counted where frames are encoded.
#[derive(Default)]
pub(super) struct Sent {
    counts: Mutex<SentCounts>,
}

impl Sent {
    pub(super) fn count(&self, kind: &'static str, len: u64) {
        let mut c = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        c.0 += 1;
        c.1 += len;
        let k = c.2.entry(kind).or_default();
        k.0 += 1;
        k.1 += len;
    }

    pub(super) fn get(&self) -> SentCounts {
        self.counts.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// The bytes both ends of every connection hold (the root call's
/// encoding); the sender's index of them is made the first time a large
/// frame needs it.
#[derive(Clone)]
pub(crate) struct SharedDictionary(Arc<Dictionary>);

impl SharedDictionary {
    pub(crate) fn new(bytes: impl Into<satin_proto::Bytes>) -> SharedDictionary {
        SharedDictionary(Arc::new(Dictionary::new(bytes)))
    }

    fn get(&self) -> &Dictionary {
        &self.0
    }
}

/// The sending side of the connection to one peer: its two queues and
/// the task that drains them.
struct PeerLink<M> {
    control: UnboundedSender<(Frame<M>, &'static str)>,
    data: UnboundedSender<(Frame<M>, &'static str)>,
    task: tokio::task::JoinHandle<()>,
}

pub(super) struct Net<M, I> {
    pub(super) endpoint: Endpoint,
    pub(super) me: NodeId,
    pub(super) hello_frame: Vec<u8>,
    pub(super) max_frame: usize,
    pub(super) addrs: HashMap<NodeId, SocketAddr>,
    /// Short names of the peers that said theirs (see [`Net::name`]).
    pub(super) labels: HashMap<NodeId, String>,
    /// Outgoing connections: the frame queues and the task that sends them.
    peers: HashMap<NodeId, PeerLink<M>>,
    pub(super) dead: HashSet<NodeId>,
    /// When a lost connection may be opened again.
    pub(super) retry_at: HashMap<NodeId, Instant>,
    /// Every established connection with a peer, both ways, for cutting.
    pub(super) links: HashMap<NodeId, Vec<Connection>>,
    /// The connection this node opened to each peer, for datagrams.
    pub(super) outgoing: HashMap<NodeId, Connection>,
    /// Where connections report (the sending side reports on `ordinary`).
    pub(super) input: UnboundedSender<I>,
    sent: Arc<Sent>,
    /// The bytes large frames are packed against, if any.
    pub(super) dictionary: Option<SharedDictionary>,
    /// This node's place in shared memory, and its peers' on this host.
    pub(super) same_host: Option<Arc<SameHost>>,
}

impl<M: Message, I: From<Link<M>> + Send + 'static> Net<M, I> {
    /// No peer known yet; `hello_frame` opens every connection this node
    /// makes, events go to `input`.
    pub(super) fn new(
        endpoint: Endpoint,
        me: NodeId,
        hello_frame: Vec<u8>,
        max_frame: usize,
        input: UnboundedSender<I>,
        dictionary: Option<SharedDictionary>,
        same_host: Option<Arc<SameHost>>,
    ) -> Self {
        Net {
            endpoint,
            me,
            hello_frame,
            max_frame,
            addrs: HashMap::new(),
            labels: HashMap::new(),
            peers: HashMap::new(),
            dead: HashSet::new(),
            retry_at: HashMap::new(),
            links: HashMap::new(),
            outgoing: HashMap::new(),
            input,
            sent: Arc::default(),
            dictionary,
            same_host,
        }
    }

    /// Frames and bytes sent so far, in all and per message kind.
    pub(super) fn sent(&self) -> SentCounts {
        self.sent.get()
    }

    /// Of the bytes sent, those that went through shared memory.
    pub(super) fn sent_in_memory(&self) -> u64 {
        self.same_host.as_ref().map_or(0, |s| s.sent())
    }

    /// Learns where `id` listens and its short name (the first heard stays).
    pub(super) fn learn(&mut self, id: NodeId, addr: SocketAddr, label: String) {
        self.addrs.entry(id).or_insert(addr);
        if !label.is_empty() {
            self.labels.entry(id).or_insert(label);
        }
    }

    /// What logs and the dashboard call node `id`: its short name, else
    /// its address, else its id.
    pub(super) fn name(&self, id: NodeId) -> String {
        match (self.labels.get(&id), self.addrs.get(&id)) {
            (Some(label), _) => label.clone(),
            (None, Some(addr)) => addr.to_string(),
            (None, None) => id.to_string(),
        }
    }

    pub(super) fn send(&mut self, to: NodeId, msg: M) {
        if to == self.me || self.dead.contains(&to) {
            return;
        }
        if msg.unreliable() && self.send_datagram(to, &msg) {
            return;
        }
        if !self.peers.contains_key(&to) && !self.connect(to) {
            return;
        }
        let urgent = msg.urgent();
        let mut frames = Vec::new();
        // Tell the receiver where the nodes this message names listen.
        for id in msg.names() {
            if let Some(&addr) = self.addrs.get(&id) {
                let label = self.labels.get(&id).cloned().unwrap_or_default();
                frames.push((Frame::Peer { id, addr, label }, "Peer"));
            }
        }
        let kind = msg.kind();
        frames.push((Frame::Proto(msg), kind));
        if let Some(link) = self.peers.get(&to) {
            let queue = if urgent { &link.control } else { &link.data };
            for f in frames {
                let _ = queue.send(f);
            }
        }
    }

    /// Sends `msg` as one datagram on the connection this node opened to
    /// `to`, if there is one and the message fits.
    fn send_datagram(&mut self, to: NodeId, msg: &M) -> bool {
        let Some(conn) = self.outgoing.get(&to) else { return false };
        let Some(max) = conn.max_datagram_size() else { return false };
        let Ok(frame) = codec::encode(&Frame::Proto(msg), self.max_frame) else { return false };
        if frame.len() > max {
            return false;
        }
        let len = frame.len() as u64;
        if conn.send_datagram(bytes::Bytes::from(frame)).is_err() {
            return false;
        }
        self.sent.count(msg.kind(), len);
        true
    }

    /// Opens the outgoing connection to `to`. False if its address is unknown.
    pub(super) fn connect(&mut self, to: NodeId) -> bool {
        let Some(&addr) = self.addrs.get(&to) else {
            warn!("no address for node {to}; message dropped");
            return false;
        };
        let (control, control_rx) = unbounded_channel();
        let (data, data_rx) = unbounded_channel();
        let o = outgoing::Outgoing {
            endpoint: self.endpoint.clone(),
            to,
            addr,
            hello: self.hello_frame.clone(),
            max_frame: self.max_frame,
            input: self.input.clone(),
            sent: self.sent.clone(),
            dictionary: self.dictionary.clone(),
            same_host: self.same_host.clone(),
        };
        let task = tokio::spawn(outgoing::run::<M, I>(o, control_rx, data_rx));
        self.peers.insert(to, PeerLink { control, data, task });
        // Opened again: its wait is over (only live waits stay listed).
        self.retry_at.remove(&to);
        true
    }

    /// Whether a connection to `id` should be opened now: none is open or
    /// waiting to be opened again, `id` is not out, and its address is known.
    pub(super) fn may_connect(&self, id: NodeId) -> bool {
        !self.peers.contains_key(&id)
            && !self.dead.contains(&id)
            && self.addrs.contains_key(&id)
            && self.retry_at.get(&id).is_none_or(|t| Instant::now() >= *t)
    }

    /// When the soonest connection waiting to be opened again may be
    /// opened ([`Net::may_connect`] says yes from then on): the driver
    /// wakes for it as for the core's deadlines.
    pub(super) fn next_retry(&self) -> Option<Instant> {
        let now = Instant::now();
        // (A wait that is over but whose connection is not open yet —
        // its address unknown, the peer out — is no reason to wake.)
        self.retry_at.values().copied().filter(|at| *at > now).min()
    }

    /// The connection this node opened to `id` failed: open another one
    /// after `wait` (messages queued on the old one are lost; the protocol
    /// repeats what matters).
    pub(super) fn reconnect_later(&mut self, id: NodeId, wait: Duration) {
        if let Some(link) = self.peers.remove(&id) {
            link.task.abort();
        }
        self.outgoing.remove(&id);
        self.retry_at.insert(id, Instant::now() + wait);
    }

    /// Stops sending to `id` (the contact placeholder once the contact's
    /// real id is known, or a contact that does not answer yet).
    pub(super) fn drop_peer(&mut self, id: NodeId) {
        self.links.remove(&id);
        self.outgoing.remove(&id);
        if let Some(link) = self.peers.remove(&id) {
            link.task.abort();
        }
    }

    /// `id` opened a connection and passed the handshake, saying where it
    /// listens: what every driver does with a hello (an address already
    /// known — from a roster or a `Peer` frame — is kept).
    pub(super) fn hello(&mut self, id: NodeId, addr: SocketAddr, label: String, conn: Connection) {
        self.learn(id, addr, label);
        self.linked(id, conn);
    }

    /// A connection with `id` is up: keep it for [`cut`](Self::cut), or
    /// close it at once if `id` is dead here.
    pub(super) fn linked(&mut self, id: NodeId, conn: Connection) {
        if self.dead.contains(&id) {
            conn.close(VarInt::from_u32(close::DEAD), b"declared dead");
        } else {
            self.links.entry(id).or_default().push(conn);
        }
    }

    /// The connection this node opened to `id` is up: beats go out on it
    /// as datagrams from now on.
    pub(super) fn outgoing_up(&mut self, id: NodeId, conn: Connection) {
        if !self.dead.contains(&id) {
            self.outgoing.insert(id, conn.clone());
        }
        self.linked(id, conn);
    }

    /// `id` is dead here: close every connection with it, so that it sees
    /// this too (see [`close::DEAD`]), and send it nothing more.
    pub(super) fn cut(&mut self, id: NodeId) {
        self.dead.insert(id);
        self.outgoing.remove(&id);
        for conn in self.links.remove(&id).unwrap_or_default() {
            conn.close(VarInt::from_u32(close::DEAD), b"declared dead");
        }
        if let Some(link) = self.peers.remove(&id) {
            link.task.abort();
        }
    }

    /// Drops the outgoing streams to every peer but `keep`: a finishing
    /// node does not wait for peers that cannot read what it sent.
    pub(super) fn stop_sending_except(&mut self, keep: &[NodeId]) {
        let gone: Vec<NodeId> = self.peers.keys().copied().filter(|p| !keep.contains(p)).collect();
        for id in gone {
            if let Some(link) = self.peers.remove(&id) {
                link.task.abort();
            }
        }
    }

    /// Finishes every outgoing stream and waits (bounded) until peers read them.
    pub(super) async fn flush(mut self) {
        // Dropping the queues ends each sending task once it has sent
        // what they held.
        let tasks: Vec<_> = self.peers.drain().map(|(_, link)| link.task).collect();
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

/// Did the peer close the connection because it removed this node?
fn declared_dead(e: &ConnectionError) -> bool {
    matches!(e, ConnectionError::ApplicationClosed(c) if c.error_code == VarInt::from_u32(close::DEAD))
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

#[cfg(test)]
mod tests;
