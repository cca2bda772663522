//! The QUIC driver of one node: carries the protocol core's actions out over
//! quinn and feeds it messages, peer deaths, timers and executor events.
//!
//! Topology: every node sends to a peer over a connection it opened itself
//! (one unidirectional stream, frames in order) and receives on connections
//! the peer opened. A peer is declared dead when either connection fails
//! other than by an orderly close: QUIC keep-alives probe a silent peer and
//! the idle timeout bounds how long a crash goes unnoticed.

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use quinn::Endpoint;
use tokio::sync::mpsc::unbounded_channel;
use tracing::{info, warn};

use super::conn::{accept_loop, advertised, transport, Net};
use super::progress::Progress;
use super::tls::Pool;
use super::trace::Trace;
use super::wire::Frame;
use crate::codec::{self, Hello};
use crate::dist::{ExecEvent, LocalExecutor};
use crate::proto::{Action, ClusterId, Config, JobSpec, Msg, Node, NodeId, NodeStats};
use crate::{JobKey, Runtime};

/// Stands for the contact node until its real id is known.
pub(crate) const CONTACT: NodeId = u64::MAX;
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
    /// How long a joiner keeps trying while its contact does not answer.
    pub(crate) join_wait: Duration,
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

pub(super) enum Input {
    /// A peer opened a connection and passed the handshake.
    Hello {
        id: NodeId,
        addr: SocketAddr,
        conn: quinn::Connection,
    },
    /// A connection this node opened to `id` is up.
    Linked {
        id: NodeId,
        conn: quinn::Connection,
    },
    /// The connection this node opened to `id` ended in order: `id` is
    /// through with the run (it ended, or `id` left).
    Closed {
        id: NodeId,
    },
    Addr {
        id: NodeId,
        addr: SocketAddr,
    },
    Message {
        from: NodeId,
        msg: Msg,
    },
    /// A connection to or from `id` failed; `unanswered`: an outgoing one
    /// that never got an answer (nobody listening there, yet or at all).
    PeerDown {
        id: NodeId,
        reason: String,
        unanswered: bool,
    },
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
        links: HashMap::new(),
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
    let join_until = Instant::now() + spec.join_wait;
    let mut join_request: Option<Msg> = None;
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
                Action::Send { to, msg } => {
                    if to == CONTACT && matches!(msg, Msg::Join { .. }) {
                        join_request = Some(msg.clone());
                    }
                    net.send(to, msg)
                }
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
                    Input::Hello { id, addr, conn } => {
                        net.addrs.entry(id).or_insert(addr);
                        net.linked(id, conn);
                    }
                    Input::Linked { id, conn } => net.linked(id, conn),
                    Input::Closed { id } => {
                        if id == CONTACT && !joined {
                            let at = spec.contact.map_or(String::new(), |c| c.to_string());
                            end = Some(RunEnd::Failed(format!(
                                "cannot join the run at {at}: the node there closed the connection before admitting this one (its run is over, or it left)"
                            )));
                        }
                    }
                    Input::Addr { id, addr } => {
                        net.addrs.entry(id).or_insert(addr);
                    }
                    Input::Message { from, msg } => {
                        if matches!(msg, Msg::Welcome { .. }) {
                            joined = true;
                            net.drop_peer(CONTACT);
                        }
                        node.handle_message(now(), from, msg, &mut exec);
                    }
                    Input::PeerDown { id, reason, unanswered } => {
                        if id == CONTACT && !joined && unanswered && Instant::now() < join_until {
                            // The contact may not be listening yet (tasks of
                            // a batch job start in any order): knock again.
                            info!("no answer from the contact yet; trying again");
                            net.drop_peer(CONTACT);
                            if let Some(join) = &join_request {
                                net.send(CONTACT, join.clone());
                            }
                        } else if id == CONTACT && !joined {
                            end = Some(RunEnd::Failed(format!("cannot join the run at {}: {reason}", spec.contact.map_or(String::new(), |c| c.to_string()))));
                        } else if !net.dead.contains(&id) {
                            warn!("node {id} is gone: {reason}");
                            if let Some(t) = &mut trace {
                                t.marker(&format!("node {id} gone; recovery"));
                            }
                            net.cut(id);
                            node.handle_peer_dead(now(), id, &mut exec);
                        }
                    }
                    Input::Exec(event) => {
                        match event {
                            ExecEvent::StolenDone { victim, stamp, key, value, ran } => {
                                if let Some(t) = &mut trace {
                                    t.span(&format!("job stolen from {victim}"), ran);
                                }
                                exec.stolen_done(victim, stamp);
                                node.handle_job_finished(now(), victim, stamp, key, value);
                            }
                            ExecEvent::RootDone { value, ran } => {
                                if let Some(t) = &mut trace {
                                    t.span("root job", ran);
                                }
                                node.handle_root_finished(now(), value)
                            }
                            ExecEvent::Aborted { ran } => {
                                if let Some(t) = &mut trace {
                                    t.span("aborted job", ran);
                                }
                            }
                            ExecEvent::StolenFailed { victim, stamp, reason, ran } => {
                                if let Some(t) = &mut trace {
                                    t.span(&format!("job stolen from {victim} (failed)"), ran);
                                }
                                warn!("a job stolen from node {victim} failed: {reason}");
                                exec.stolen_done(victim, stamp);
                                node.handle_job_failed(now(), victim, stamp, reason);
                            }
                            ExecEvent::RootFailed { reason, ran } => {
                                if let Some(t) = &mut trace {
                                    t.span("root job (failed)", ran);
                                }
                                node.handle_root_failed(now(), reason);
                            }
                        }
                        if exec.entry_ended() {
                            node.handle_idle(now(), &mut exec);
                        }
                    }
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
