//! The QUIC driver of one node: carries the protocol core's actions out over
//! quinn and feeds it messages, peer deaths, timers and executor events.
//!
//! Topology: every node sends to a peer over a connection it opened itself
//! (one unidirectional stream, frames in order) and receives on connections
//! the peer opened. A peer is declared dead when either connection fails
//! other than by an orderly close: QUIC keep-alives probe a silent peer and
//! the idle timeout bounds how long a crash goes unnoticed.

use std::collections::{HashMap, HashSet};
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::sync::Arc;
use std::time::{Duration, Instant};

use quinn::{Connection, ConnectionError, Endpoint, Incoming, TransportConfig, VarInt};
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};
use tracing::{info, warn};

use super::progress::Progress;
use super::tls::{Pool, SERVER_NAME};
use super::trace::Trace;
use super::wire::{close, Frame};
use crate::codec::{self, Hello};
use crate::dist::{ExecEvent, LocalExecutor};
use crate::proto::{Action, ClusterId, Config, JobSpec, Msg, Node, NodeId, NodeStats};
use crate::{JobKey, Runtime};

/// Stands for the contact node until its real id is known.
pub(crate) const CONTACT: NodeId = u64::MAX;
/// How long a finishing node waits for its last frames to be read.
const FLUSH: Duration = Duration::from_secs(2);
const CLOSE_GRACE: Duration = Duration::from_millis(50);
/// How often the driver checks for idle workers while jobs run.
const IDLE_CHECK: Duration = Duration::from_millis(2);

/// Who this node is and how it connects.
pub(crate) struct NodeSpec {
    pub(crate) id: NodeId,
    pub(crate) cluster: ClusterId,
    pub(crate) listen: SocketAddr,
    /// `None`: this node starts the run as its master.
    pub(crate) contact: Option<SocketAddr>,
    pub(crate) idle_timeout: Duration,
    /// After SIGTERM, how long the jobs running here may take to finish
    /// before they are aborted and the node leaves anyway.
    pub(crate) leave_timeout: Duration,
    pub(crate) config: Config,
    pub(crate) max_frame: usize,
    pub(crate) hello: Hello,
    /// How logs and traces name this node (its number under a supervisor).
    pub(crate) label: String,
    pub(crate) trace: Option<std::path::PathBuf>,
    /// Show a progress bar (on the master, when stderr is a terminal).
    pub(crate) progress: bool,
}

/// How a node's run ended.
pub(crate) enum RunEnd {
    /// The run is over; the answer, unless this node is not the master and
    /// the answer was too large to be sent around.
    Answer {
        value: Option<Vec<u8>>,
        master: bool,
    },
    Left,
    Failed(String),
}

/// Per-node figures for the final statistics block.
pub(crate) struct Report {
    pub(crate) id: NodeId,
    pub(crate) stats: NodeStats,
    pub(crate) table_hits: u64,
    pub(crate) table_lookups: u64,
    pub(crate) table_len: usize,
    pub(crate) bytes_sent: u64,
    pub(crate) frames_sent: u64,
}

enum Input {
    Hello { id: NodeId, addr: SocketAddr },
    Addr { id: NodeId, addr: SocketAddr },
    Message { from: NodeId, msg: Msg },
    PeerDown { id: NodeId, reason: String },
    Exec(ExecEvent),
}

/// Runs one node to the end of the run. Blocks the calling thread.
pub(crate) fn run_node(
    spec: NodeSpec,
    pool: &Pool,
    runtime: Arc<Runtime>,
    root: (JobKey, Vec<u8>),
) -> (RunEnd, Option<Report>) {
    let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => return (RunEnd::Failed(format!("cannot start the network runtime: {e}")), None),
    };
    rt.block_on(drive(spec, pool, runtime, root))
}

fn transport(idle: Duration) -> Arc<TransportConfig> {
    let mut t = TransportConfig::default();
    t.max_idle_timeout(Some(quinn::IdleTimeout::try_from(idle).unwrap_or(quinn::IdleTimeout::from(VarInt::MAX))));
    t.keep_alive_interval(Some(idle / 4));
    Arc::new(t)
}

/// The address others reach this node at: the bound one, with an
/// unspecified IP replaced by the one that routes towards `towards` (the
/// contact), or towards the default route for the first node. Choosing a
/// route sends nothing: it is a `connect` on an unbound UDP socket.
fn advertised(bound: SocketAddr, towards: Option<SocketAddr>) -> SocketAddr {
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

struct Net {
    endpoint: Endpoint,
    me: NodeId,
    hello_frame: Vec<u8>,
    max_frame: usize,
    addrs: HashMap<NodeId, SocketAddr>,
    /// Outgoing connections: the frame queue and the task that sends it.
    peers: HashMap<NodeId, (UnboundedSender<Vec<u8>>, tokio::task::JoinHandle<()>)>,
    dead: HashSet<NodeId>,
    input: UnboundedSender<Input>,
    bytes_sent: u64,
    frames_sent: u64,
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

    fn send(&mut self, to: NodeId, msg: Msg) {
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
    fn connect(&mut self, to: NodeId) -> bool {
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
    fn drop_peer(&mut self, id: NodeId) {
        if let Some((_, task)) = self.peers.remove(&id) {
            task.abort();
        }
    }

    /// Finishes every outgoing stream and waits (bounded) until peers read them.
    async fn flush(mut self) {
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
    if let Err(Lost(reason)) = send_frames(endpoint, addr, hello, frames).await {
        let _ = input.send(Input::PeerDown { id: to, reason });
    }
}

/// A connection that failed other than by an orderly close.
struct Lost(String);

impl From<ConnectionError> for Lost {
    fn from(e: ConnectionError) -> Lost {
        Lost(describe(&e))
    }
}

fn write_failed(e: quinn::WriteError) -> Result<(), Lost> {
    match e {
        quinn::WriteError::ConnectionLost(c) if orderly(&c) => Ok(()),
        quinn::WriteError::ConnectionLost(c) => Err(c.into()),
        other => Err(Lost(other.to_string())),
    }
}

async fn send_frames(
    endpoint: Endpoint,
    addr: SocketAddr,
    hello: Vec<u8>,
    mut frames: UnboundedReceiver<Vec<u8>>,
) -> Result<(), Lost> {
    let connecting = endpoint.connect(addr, SERVER_NAME).map_err(|e| Lost(e.to_string()))?;
    let conn = match connecting.await {
        Ok(c) => c,
        Err(e) if orderly(&e) => return Ok(()),
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

async fn accept_loop(endpoint: Endpoint, ours: Hello, max_frame: usize, input: UnboundedSender<Input>) {
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
        let _ = input.send(Input::PeerDown { id, reason });
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

async fn drive(
    spec: NodeSpec,
    pool: &Pool,
    runtime: Arc<Runtime>,
    root: (JobKey, Vec<u8>),
) -> (RunEnd, Option<Report>) {
    let start = Instant::now();
    let now = || start.elapsed().as_nanos() as u64;
    let (mut server, mut client) = match pool.quic_configs() {
        Ok(c) => c,
        Err(e) => return (RunEnd::Failed(format!("pool credential: {e}")), None),
    };
    server.transport_config(transport(spec.idle_timeout));
    client.transport_config(transport(spec.idle_timeout));
    let mut endpoint = match Endpoint::server(server, spec.listen) {
        Ok(e) => e,
        Err(e) => return (RunEnd::Failed(format!("cannot listen on {}: {e}", spec.listen)), None),
    };
    endpoint.set_default_client_config(client);
    let bound = endpoint.local_addr().unwrap_or(spec.listen);
    let addr = advertised(bound, spec.contact);
    eprintln!("satin: node {} listening on {addr}", spec.id);

    let (input_tx, mut input) = unbounded_channel::<Input>();
    let mut node = match spec.contact {
        None => {
            let root = JobSpec { key: root.0, stamp: 0, payload: root.1, redone: false };
            Node::member(spec.id, spec.cluster, &[], spec.id, root, spec.config.clone(), spec.id)
        }
        Some(_) => Node::joining(spec.id, spec.cluster, CONTACT, spec.config.clone(), spec.id),
    };
    let exec_tx = input_tx.clone();
    let mut exec = match LocalExecutor::new(runtime, node.shared_values(), move |e| {
        let _ = exec_tx.send(Input::Exec(e));
    }) {
        Ok(x) => x,
        Err(e) => return (RunEnd::Failed(e.to_string()), None),
    };
    exec.keep_orphans(spec.config.ft == crate::proto::FtMode::Table);
    let hello_frame = codec::encode(
        &Frame::Hello { hello: spec.hello.clone(), id: spec.id, cluster: spec.cluster, addr },
        spec.max_frame,
    )
    .expect("a hello frame is small");
    let accept = tokio::spawn(accept_loop(endpoint.clone(), spec.hello.clone(), spec.max_frame, input_tx.clone()));
    let mut net = Net {
        endpoint,
        me: spec.id,
        hello_frame,
        max_frame: spec.max_frame,
        addrs: HashMap::new(),
        peers: HashMap::new(),
        dead: HashSet::new(),
        input: input_tx,
        bytes_sent: 0,
        frames_sent: 0,
    };
    if let Some(contact) = spec.contact {
        net.addrs.insert(CONTACT, contact);
    }
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    let mut timer: Option<u64> = None;
    let mut leave_deadline: Option<Instant> = None;
    let mut idle_check = tokio::time::interval(IDLE_CHECK);
    idle_check.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut joined = spec.contact.is_none();
    let mut end: Option<RunEnd> = None;
    let pid = spec.label.parse().unwrap_or(spec.id & 0xffff_ffff);
    let mut trace = spec.trace.clone().map(|p| Trace::new(p, pid, &format!("node {}", spec.label)));
    let mut progress = (spec.progress && spec.contact.is_none()).then(Progress::new);

    node.start(now(), &mut exec);
    if spec.contact.is_none() {
        node.handle_idle(now(), &mut exec);
    }
    loop {
        // Carry out what the core asked for.
        while let Some(action) = node.poll_action() {
            match action {
                Action::Send { to, msg } => net.send(to, msg),
                Action::Broadcast { msg } => {
                    let peers: Vec<NodeId> = node.live_members().filter(|m| *m != spec.id).collect();
                    for p in peers {
                        net.send(p, msg.clone());
                    }
                }
                Action::SetTimer { at } => timer = Some(timer.map_or(at, |t| t.min(at))),
                Action::Done { value } => end = Some(RunEnd::Answer { value: Some(value), master: true }),
                Action::Finished { value } => end = Some(RunEnd::Answer { value, master: false }),
                Action::Failed { reason } => end = Some(RunEnd::Failed(reason)),
                Action::Stop => {
                    end.get_or_insert(RunEnd::Left);
                }
            }
        }
        if let Some(p) = &mut progress {
            p.update(&node, net.frames_sent);
        }
        if end.is_some() {
            break;
        }
        // Connect to every member early, so keep-alives watch them all.
        let members: Vec<NodeId> = node.live_members().filter(|m| *m != spec.id).collect();
        for m in members {
            if !net.peers.contains_key(&m) && !net.dead.contains(&m) && net.addrs.contains_key(&m) {
                net.connect(m);
            }
        }
        let sleep_for = timer.map(|t| Duration::from_nanos(t.saturating_sub(now())));
        tokio::select! {
            // Workers that run out of work while entry jobs still run (a
            // sync waiting for another node, a subtree with little
            // parallelism left) make the node steal: look every few ms.
            _ = idle_check.tick() => node.handle_idle(now(), &mut exec),
            got = input.recv() => {
                let Some(got) = got else { break };
                match got {
                    Input::Hello { id, addr } | Input::Addr { id, addr } => {
                        net.addrs.entry(id).or_insert(addr);
                    }
                    Input::Message { from, msg } => {
                        if matches!(msg, Msg::Welcome { .. }) {
                            joined = true;
                            net.drop_peer(CONTACT);
                        }
                        node.handle_message(now(), from, msg, &mut exec);
                    }
                    Input::PeerDown { id, reason } => {
                        if id == CONTACT && !joined {
                            end = Some(RunEnd::Failed(format!("cannot join the run at {}: {reason}", spec.contact.map_or(String::new(), |c| c.to_string()))));
                        } else if !net.dead.contains(&id) {
                            warn!("node {id} is gone: {reason}");
                            if let Some(t) = &mut trace {
                                t.marker(&format!("node {id} gone; recovery"));
                            }
                            net.dead.insert(id);
                            net.drop_peer(id);
                            node.handle_peer_dead(now(), id, &mut exec);
                        }
                    }
                    Input::Exec(ExecEvent::StolenDone { victim, stamp, key, value, ran }) => {
                        if let Some(t) = &mut trace {
                            t.span(&format!("job stolen from {victim}"), ran);
                        }
                        exec.stolen_done(victim, stamp);
                        node.handle_job_finished(now(), victim, stamp, key, value);
                    }
                    Input::Exec(ExecEvent::RootDone { value, ran }) => {
                        if let Some(t) = &mut trace {
                            t.span("root job", ran);
                        }
                        node.handle_root_finished(now(), value)
                    }
                    Input::Exec(ExecEvent::Aborted { ran }) => {
                        if let Some(t) = &mut trace {
                            t.span("aborted job", ran);
                        }
                    }
                    Input::Exec(ExecEvent::Idle) => node.handle_idle(now(), &mut exec),
                    Input::Exec(ExecEvent::Failed(reason)) => end = Some(RunEnd::Failed(reason)),
                }
            }
            _ = tokio::time::sleep(sleep_for.unwrap_or(Duration::ZERO)), if sleep_for.is_some() => {
                timer = None;
                node.handle_timeout(now(), &mut exec);
            }
            _ = async { terminate.as_mut().expect("guarded").recv().await }, if terminate.is_some() && leave_deadline.is_none() => {
                warn!("SIGTERM: leaving the run once the jobs running here are finished (at most {:?})", spec.leave_timeout);
                leave_deadline = Some(Instant::now() + spec.leave_timeout);
                if let Some(t) = &mut trace {
                    t.marker(&format!("node {} leaving", spec.label));
                }
                node.begin_leave(now(), &mut exec);
            }
            _ = tokio::time::sleep_until(leave_deadline.map_or_else(tokio::time::Instant::now, tokio::time::Instant::from_std)), if leave_deadline.is_some() => {
                warn!("leave deadline reached: aborting the jobs still running here");
                leave_deadline = None;
                terminate = None;
                node.leave(now(), &mut exec);
            }
        }
    }
    if let Some(p) = progress.take() {
        p.finish();
    }
    if let Some(t) = &mut trace {
        t.marker(&format!("node {} done", spec.label));
        if let Err(e) = t.write() {
            warn!("cannot write the trace: {e}");
        }
    }
    let report = Report {
        id: spec.id,
        stats: node.stats().clone(),
        table_hits: exec.table_hits(),
        table_lookups: exec.table_lookups(),
        table_len: node.table_len(),
        bytes_sent: net.bytes_sent,
        frames_sent: net.frames_sent,
    };
    // Whatever still runs here is not needed any more: abort it, so the
    // pool winds down at once.
    let _ = crate::proto::Executor::abandon_all(&mut exec);
    drop(exec);
    accept.abort();
    let flushing = Instant::now();
    net.flush().await;
    info!("flushed in {:?}", flushing.elapsed());
    (end.unwrap_or(RunEnd::Left), Some(report))
}
