//! Connections: transport settings, the outgoing stream to each peer, and
//! the incoming side that checks the handshake and decodes frames into
//! [`Link`] events for the driver. Every node sends over a connection it
//! opened itself and receives on the ones its peers opened. Generic over
//! the protocol message: the divide-and-conquer driver and the task-graph
//! driver share it.

use std::collections::{HashMap, HashSet};
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::sync::Arc;
use std::time::{Duration, Instant};

use quinn::{Connection, ConnectionError, Endpoint, Incoming, TransportConfig, VarInt};
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};
use tracing::warn;

use super::netfault::{Faults, FaultySocket};
use super::tls::SERVER_NAME;
use super::wire::{close, Frame, Message};
use satin_proto::codec::{self, Hello};
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
const CLOSE_GRACE: Duration = Duration::from_millis(50);

pub(super) fn transport(idle: Duration) -> Arc<TransportConfig> {
    let mut t = TransportConfig::default();
    t.max_idle_timeout(Some(quinn::IdleTimeout::try_from(idle).unwrap_or(quinn::IdleTimeout::from(VarInt::MAX))));
    t.keep_alive_interval(Some(idle / 4));
    // Nodes mostly share a LAN: a first guess of 333 ms (QUIC's) makes a
    // handshake whose first packets are lost wait a second per try.
    t.initial_rtt(Duration::from_millis(50));
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
    let (mut server, mut client) = pool.quic_configs().map_err(|e| format!("pool credential: {e}"))?;
    server.transport_config(transport(idle));
    client.transport_config(transport(idle));
    let bind = || -> std::io::Result<Endpoint> {
        let Some(faults) = &faults else { return Endpoint::server(server.clone(), listen) };
        let runtime: Arc<dyn quinn::Runtime> = Arc::new(quinn::TokioRuntime);
        let socket = runtime.wrap_udp_socket(UdpSocket::bind(listen)?)?;
        let socket = Arc::new(FaultySocket::new(socket, faults.clone()));
        Endpoint::new_with_abstract_socket(quinn::EndpointConfig::default(), Some(server.clone()), socket, runtime)
    };
    let mut endpoint = super::retry::retry(
        super::retry::LOCAL_OPERATIONS,
        bind,
        |e| super::retry::transient(e.kind()),
        |e, wait| warn!("cannot listen on {listen} ({e}); trying again in {wait:?}"),
    )
    .map_err(|e| format!("cannot listen on {listen}: {e}"))?;
    endpoint.set_default_client_config(client);
    Ok(endpoint)
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

pub(super) struct Net<M, I> {
    pub(super) endpoint: Endpoint,
    pub(super) me: NodeId,
    pub(super) hello_frame: Vec<u8>,
    pub(super) max_frame: usize,
    pub(super) addrs: HashMap<NodeId, SocketAddr>,
    /// Short names of the peers that said theirs (see [`Net::name`]).
    pub(super) labels: HashMap<NodeId, String>,
    /// Outgoing connections: the frame queue and the task that sends it.
    pub(super) peers: HashMap<NodeId, (UnboundedSender<Vec<u8>>, tokio::task::JoinHandle<()>)>,
    pub(super) dead: HashSet<NodeId>,
    /// When a lost connection may be opened again.
    pub(super) retry_at: HashMap<NodeId, Instant>,
    /// Every established connection with a peer, both ways, for cutting.
    pub(super) links: HashMap<NodeId, Vec<Connection>>,
    /// The connection this node opened to each peer, for datagrams.
    pub(super) outgoing: HashMap<NodeId, Connection>,
    pub(super) input: UnboundedSender<I>,
    pub(super) bytes_sent: u64,
    pub(super) frames_sent: u64,
    pub(super) message: std::marker::PhantomData<M>,
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
            bytes_sent: 0,
            frames_sent: 0,
            message: std::marker::PhantomData,
        }
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

    fn frame(&self, f: &Frame<M>) -> Option<Vec<u8>> {
        match codec::encode(f, self.max_frame) {
            Ok(bytes) => Some(bytes),
            Err(e) => {
                warn!("dropping an outgoing message: {e}");
                None
            }
        }
    }

    pub(super) fn send(&mut self, to: NodeId, msg: M) {
        if to == self.me || self.dead.contains(&to) {
            return;
        }
        if msg.unreliable() && self.send_datagram(to, &msg) {
            return;
        }
        // Tell the receiver where the nodes this message names listen.
        for id in msg.names() {
            if let Some(&addr) = self.addrs.get(&id) {
                let label = self.labels.get(&id).cloned().unwrap_or_default();
                if let Some(f) = self.frame(&Frame::Peer { id, addr, label }) {
                    self.push(to, f);
                }
            }
        }
        if let Some(f) = self.frame(&Frame::Proto(msg)) {
            self.push(to, f);
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
        self.bytes_sent += len;
        self.frames_sent += 1;
        true
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
        let task = tokio::spawn(outgoing::<M, I>(
            self.endpoint.clone(),
            to,
            addr,
            self.hello_frame.clone(),
            rx,
            self.input.clone(),
        ));
        self.peers.insert(to, (tx, task));
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

    /// The connection this node opened to `id` failed: open another one
    /// after `wait` (messages queued on the old one are lost; the protocol
    /// repeats what matters).
    pub(super) fn reconnect_later(&mut self, id: NodeId, wait: Duration) {
        if let Some((_, task)) = self.peers.remove(&id) {
            task.abort();
        }
        self.outgoing.remove(&id);
        self.retry_at.insert(id, Instant::now() + wait);
    }

    /// Stops sending to `id` (the contact placeholder once the contact's
    /// real id is known, or a contact that does not answer yet).
    pub(super) fn drop_peer(&mut self, id: NodeId) {
        self.links.remove(&id);
        self.outgoing.remove(&id);
        if let Some((_, task)) = self.peers.remove(&id) {
            task.abort();
        }
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
        if let Some((_, task)) = self.peers.remove(&id) {
            task.abort();
        }
    }

    /// Drops the outgoing streams to every peer but `keep`: a finishing
    /// node does not wait for peers that cannot read what it sent.
    pub(super) fn stop_sending_except(&mut self, keep: &[NodeId]) {
        let gone: Vec<NodeId> = self.peers.keys().copied().filter(|p| !keep.contains(p)).collect();
        for id in gone {
            if let Some((_, task)) = self.peers.remove(&id) {
                task.abort();
            }
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

async fn outgoing<M, I: From<Link<M>>>(
    endpoint: Endpoint,
    to: NodeId,
    addr: SocketAddr,
    hello: Vec<u8>,
    frames: UnboundedReceiver<Vec<u8>>,
    input: UnboundedSender<I>,
) {
    let _ = match send_frames(endpoint, addr, hello, frames, |conn| {
        let _ = input.send(Link::Linked { id: to, conn }.into());
    })
    .await
    {
        Err(Lost { reason, unanswered, declared_dead }) => {
            input.send(Link::PeerDown { id: to, reason, unanswered, ours: true, declared_dead }.into())
        }
        Ok(()) => input.send(Link::Closed { id: to }.into()),
    };
}

/// A connection that failed other than by an orderly close.
struct Lost {
    reason: String,
    /// It never got an answer: nobody listens at the address (yet).
    unanswered: bool,
    /// The peer closed it because it removed this node from the run.
    declared_dead: bool,
}

impl Lost {
    fn new(reason: impl ToString) -> Lost {
        Lost { reason: reason.to_string(), unanswered: false, declared_dead: false }
    }
}

impl From<ConnectionError> for Lost {
    fn from(e: ConnectionError) -> Lost {
        Lost { declared_dead: declared_dead(&e), ..Lost::new(describe(&e)) }
    }
}

/// Did the peer close the connection because it removed this node?
fn declared_dead(e: &ConnectionError) -> bool {
    matches!(e, ConnectionError::ApplicationClosed(c) if c.error_code == VarInt::from_u32(close::DEAD))
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
    linked: impl FnOnce(Connection),
) -> Result<(), Lost> {
    let connecting = endpoint.connect(addr, SERVER_NAME).map_err(Lost::new)?;
    let conn = match connecting.await {
        Ok(c) => c,
        Err(e) if orderly(&e) => return Ok(()),
        Err(e @ ConnectionError::TimedOut) => {
            return Err(Lost { unanswered: true, ..Lost::new(describe(&e)) });
        }
        Err(e) => return Err(e.into()),
    };
    linked(conn.clone());
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

pub(super) async fn accept_loop<M: Message, I: From<Link<M>> + Send + 'static>(
    endpoint: Endpoint,
    ours: Hello,
    max_frame: usize,
    input: UnboundedSender<I>,
) {
    while let Some(incoming) = endpoint.accept().await {
        tokio::spawn(incoming_conn::<M, I>(incoming, ours.clone(), max_frame, input.clone()));
    }
}

async fn incoming_conn<M: Message, I: From<Link<M>> + Send + 'static>(
    incoming: Incoming,
    ours: Hello,
    max_frame: usize,
    input: UnboundedSender<I>,
) {
    let remote = incoming.remote_address();
    let conn = match incoming.await {
        Ok(c) => c,
        Err(e) => {
            warn!("rejected a connection from {remote}: {e}");
            return;
        }
    };
    let mut peer: Option<NodeId> = None;
    let result = read_frames::<M, I>(&conn, &ours, max_frame, &input, &mut peer).await;
    if let (Err((reason, declared_dead)), Some(id)) = (result, peer) {
        let _ = input.send(Link::PeerDown { id, reason, unanswered: false, ours: false, declared_dead }.into());
    }
}

async fn read_frames<M: Message, I: From<Link<M>> + Send + 'static>(
    conn: &Connection,
    ours: &Hello,
    max_frame: usize,
    input: &UnboundedSender<I>,
    peer: &mut Option<NodeId>,
) -> Result<(), (String, bool)> {
    let lost = |e: &ConnectionError| (describe(e), declared_dead(e));
    let mut recv = match conn.accept_uni().await {
        Ok(r) => r,
        Err(e) if orderly(&e) => return Ok(()),
        Err(e) => return Err(lost(&e)),
    };
    let mut buf: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        loop {
            match codec::decode::<Frame<M>>(&buf, max_frame) {
                Ok(Some((frame, used))) => {
                    buf.drain(..used);
                    handle_frame(conn, ours, max_frame, frame, input, peer).map_err(|e| (e, false))?;
                }
                Ok(None) => break,
                Err(e) => {
                    warn!("closing the connection from {}: {e}", conn.remote_address());
                    conn.close(VarInt::from_u32(close::BAD_FRAME), e.to_string().as_bytes());
                    return Err((e.to_string(), false));
                }
            }
        }
        match recv.read(&mut chunk).await {
            Ok(Some(n)) => buf.extend_from_slice(&chunk[..n]),
            Ok(None) => return Ok(()),
            Err(quinn::ReadError::ConnectionLost(e)) if orderly(&e) => return Ok(()),
            Err(quinn::ReadError::ConnectionLost(e)) => return Err(lost(&e)),
            Err(e) => return Err((e.to_string(), false)),
        }
    }
}

/// Messages the peer sends as datagrams on the connection it opened (beats).
async fn read_datagrams<M: Message, I: From<Link<M>> + Send + 'static>(
    conn: Connection,
    from: NodeId,
    max_frame: usize,
    input: UnboundedSender<I>,
) {
    while let Ok(bytes) = conn.read_datagram().await {
        match codec::decode::<Frame<M>>(&bytes, max_frame) {
            Ok(Some((Frame::Proto(msg), _))) => {
                if input.send(Link::Message { from, msg }.into()).is_err() {
                    return;
                }
            }
            other => warn!("dropping a datagram from node {from} that is not one message: {other:?}"),
        }
    }
}

fn handle_frame<M: Message, I: From<Link<M>> + Send + 'static>(
    conn: &Connection,
    ours: &Hello,
    max_frame: usize,
    frame: Frame<M>,
    input: &UnboundedSender<I>,
    peer: &mut Option<NodeId>,
) -> Result<(), String> {
    match (frame, *peer) {
        (Frame::Hello { hello, id, addr, label, .. }, None) => {
            if let Err(e) = ours.check(&hello) {
                let why = format!("handshake with the node at {addr} failed: {e}");
                tracing::error!("{why}");
                conn.close(VarInt::from_u32(close::HANDSHAKE), why.as_bytes());
                return Ok(());
            }
            *peer = Some(id);
            let _ = input.send(Link::Hello { id, addr, label, conn: conn.clone() }.into());
            tokio::spawn(read_datagrams::<M, I>(conn.clone(), id, max_frame, input.clone()));
        }
        (Frame::Peer { id, addr, label }, Some(_)) => {
            let _ = input.send(Link::Addr { id, addr, label }.into());
        }
        (Frame::Proto(msg), Some(from)) => {
            let _ = input.send(Link::Message { from, msg }.into());
        }
        (f, _) => {
            let why = format!("unexpected frame {f:?}");
            conn.close(VarInt::from_u32(close::BAD_FRAME), why.as_bytes());
            return Err(why);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tls::{init_pool, Pool};
    use satin_proto::Msg;

    const MAX: usize = 1 << 20;

    fn endpoint(pool: &Pool) -> Endpoint {
        let (mut server, mut client) = pool.quic_configs().expect("configs");
        server.transport_config(transport(Duration::from_secs(30)));
        client.transport_config(transport(Duration::from_secs(30)));
        let mut e = Endpoint::server(server, SocketAddr::from(([127, 0, 0, 1], 0))).expect("an endpoint");
        e.set_default_client_config(client);
        e
    }

    fn net(endpoint: Endpoint, me: NodeId, hello: &Hello, input: UnboundedSender<Link<Msg>>) -> Net<Msg, Link<Msg>> {
        let addr = endpoint.local_addr().expect("bound");
        let hello_frame = codec::encode(
            &Frame::<Msg>::Hello { hello: hello.clone(), id: me, cluster: 0, addr, label: me.to_string() },
            MAX,
        )
        .expect("small");
        Net::new(endpoint, me, hello_frame, MAX, input)
    }

    /// After a short outage one connection may time out and the other
    /// survive: the node that gives its peer up must make the peer see it,
    /// or the peer may wait forever for a result that will not come.
    #[tokio::test]
    async fn a_node_declared_dead_hears_of_it_on_its_own_connection() {
        let dir = std::env::temp_dir().join(format!("satin-conn-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temp dir");
        let file = init_pool(&dir.join("pool.pem")).expect("a pool");
        let pool = Pool::load(&file).expect("the pool loads");
        let _ = std::fs::remove_dir_all(&dir);
        let hello = Hello::new("test", &[]);
        let (a_in, mut a_rx) = unbounded_channel();
        let (b_in, mut b_rx) = unbounded_channel();
        let mut a = net(endpoint(&pool), 1, &hello, a_in);
        let mut b = net(endpoint(&pool), 2, &hello, b_in.clone());
        tokio::spawn(accept_loop::<Msg, _>(b.endpoint.clone(), hello.clone(), MAX, b_in));
        a.addrs.insert(2, b.endpoint.local_addr().expect("bound"));

        let outcome = tokio::time::timeout(Duration::from_secs(20), async move {
            a.send(2, Msg::Leave);
            let Some(Link::Hello { id: 1, conn, .. }) = b_rx.recv().await else { panic!("expected A's hello") };
            assert!(matches!(b_rx.recv().await, Some(Link::Message { from: 1, msg: Msg::Leave })));
            b.linked(1, conn);
            b.cut(1);
            assert!(b.dead.contains(&1) && b.links.is_empty());
            loop {
                match a_rx.recv().await {
                    Some(Link::Linked { id: 2, .. }) => continue,
                    Some(Link::PeerDown { id: 2, reason, unanswered, declared_dead, .. }) => {
                        assert!(declared_dead);
                        return (reason, unanswered);
                    }
                    _ => panic!("expected B to be reported down"),
                }
            }
        })
        .await;
        let (reason, unanswered) = outcome.expect("A hears of it long before its idle timeout");
        assert!(reason.contains("declared dead"), "{reason}");
        assert!(!unanswered);
    }
}
