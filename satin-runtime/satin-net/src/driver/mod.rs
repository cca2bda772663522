//! The QUIC driver of one node: carries the protocol core's actions out over
//! quinn and feeds it messages, peer deaths, timers and executor events.
//!
//! Topology: every node sends to a peer over a connection it opened itself
//! (one unidirectional stream, frames in order; beats as datagrams) and
//! receives on connections the peer opened. A connection that fails is a
//! suspicion, not a death: the core hears of it (`handle_link_down`) and the
//! connection is opened again; who is out of the run is the majority's
//! decision (`proto/quorum`), or a supervisor's notice of a process that
//! ended. Deadlines and joins are the core's too: the loop sleeps until
//! `Node::poll_timeout` and reports what connections did.

mod actions;
mod checkpoint;
mod dashboard;
mod gather;
mod inputs;

pub(crate) use gather::Gather;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tracing::{debug, info, warn};

use super::checkpointer::{CheckpointSpec, Checkpointer, Done};
use super::conn::Link;
use super::netfault::Faults;
use super::node_io::{Identity, NodeIo, CONTACT};
use super::status_line::StatusLine;
use super::tls::Pool;
use super::trace::Trace;
use satin_core::dist::{ExecEvent, LocalExecutor};
use satin_core::{JobKey, Runtime};
use satin_proto::{Action, ClusterId, Config, Executor, FtMode, JobSpec, Lookup, Msg, Node, NodeFigures, NodeId};

/// How soon a lost connection to a member is opened again.
const RECONNECT: Duration = Duration::from_millis(200);
/// How long a member of a first membership waits for its roster.
const ROSTER_WAIT: Duration = Duration::from_secs(120);

/// Who this node is, how it connects and how its run goes: what its
/// protocol core is made from ([`CoreStart`]) and what its I/O serves
/// beside the protocol ([`IoSpec`]).
pub(crate) struct NodeSpec {
    pub(crate) me: Identity,
    pub(crate) core: CoreStart,
    pub(crate) io: IoSpec,
}

/// What this node's protocol core (`satin_proto::Node`) starts from.
pub(crate) struct CoreStart {
    pub(crate) config: Config,
    /// How this node learns the run's first membership.
    pub(crate) first: FirstMembership,
    /// Results a former incarnation of this process finished (it was
    /// removed while cut off and joins again as a new node).
    pub(crate) carry: Vec<(JobKey, Vec<u8>, satin_core::checkpoint::ResultMeta)>,
    /// That former incarnation's id, if it was the run's origin: this one
    /// claims it back (it shows the answer; see `proto/node/origin.rs`).
    pub(crate) was_origin: Option<NodeId>,
}

/// What this node's I/O does beside the protocol: the user's screen and
/// pages, the supervisor's reports, the checkpoint file, the emulated
/// network.
pub(crate) struct IoSpec {
    /// Show a progress bar (on the master, when stderr is a terminal).
    pub(crate) progress: bool,
    /// Serve the dashboard here: the view the master of the moment feeds
    /// (`dashboard/relay.rs`).
    pub(crate) dashboard: Option<SocketAddr>,
    /// Report the estimate to the supervisor while master (it draws the
    /// status line).
    pub(crate) report_status: bool,
    /// Keep a board and report it to the supervisor while master (it
    /// serves the dashboard: `dashboard/relay.rs`).
    pub(crate) board_to_supervisor: bool,
    /// `--report FILE`: the board written as one HTML page at the end.
    pub(crate) report: Option<std::path::PathBuf>,
    /// The checkpoint file, if the run keeps one.
    pub(crate) checkpoint: Option<CheckpointSpec>,
    /// A run of this process alone (a local run that keeps a checkpoint):
    /// nothing to say about listening.
    pub(crate) lone: bool,
    /// Faults of this node's network (`--chaos` under `--local-nodes`).
    pub(crate) faults: Option<Arc<Faults>>,
}

/// How a node learns who the run's first members are.
#[derive(Clone, Copy, Debug)]
pub(crate) enum FirstMembership {
    /// It starts the run alone (no contact), or joins one under way.
    Open,
    /// Its supervisor says, once every member listens (`--local-nodes`).
    FromSupervisor,
    /// The nodes agree on it among themselves (`--expect-nodes`,
    /// `gather.rs`).
    Gathered(Gather),
}

/// How a node's run ended.
pub(crate) enum RunEnd {
    /// The run is over; the answer, unless this node is not the master and
    /// the answer was too large to be sent around.
    Answer {
        value: Option<satin_proto::Bytes>,
        master: bool,
        /// This node shows the answer (see `proto/node/origin.rs`).
        shows: bool,
    },
    Left,
    Failed(String),
    /// The run was suspended: the same command resumes it.
    Suspended,
    /// This node had no majority for the configured wait.
    LostMajority {
        waited: Duration,
    },
    /// The majority removed this node while it was cut off (or deposed as
    /// master); `carry` is what it finished (see [`Action::Expelled`]),
    /// `by` names the member that said so, `again` whether and where the
    /// process joins again; `was_origin` this node's id if it was the
    /// run's origin.
    Expelled {
        by: String,
        again: Again,
        carry: Vec<(JobKey, Vec<u8>, satin_core::checkpoint::ResultMeta)>,
        was_origin: Option<NodeId>,
    },
}

/// Whether a removed node's process joins the run again.
#[derive(Debug)]
pub(crate) enum Again {
    /// Through the member that told it, listening here (`None`: not
    /// known — the majority cannot reach this node).
    Through(Option<SocketAddr>),
    /// No: it was removed this many times (`Config::max_rejoins`).
    No { removed: u32 },
}

pub(crate) use super::report::NodeReport;

pub(super) enum Input {
    /// A peer opened a connection and passed the handshake.
    Hello {
        id: NodeId,
        addr: SocketAddr,
        label: String,
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
        label: String,
    },
    Message {
        from: NodeId,
        msg: Msg,
    },
    /// A connection to or from `id` failed (see [`Link::PeerDown`]).
    PeerDown {
        id: NodeId,
        reason: String,
        unanswered: bool,
        ours: bool,
        declared_dead: bool,
    },
    Exec(ExecEvent),
    Checkpoint(Done),
    /// The supervisor saw the process of the node at `addr` end.
    ProcessEnded {
        addr: SocketAddr,
    },
    /// Chaos from the supervisor: run the workers `factor` times slower
    /// (infinite: hung).
    Slow {
        factor: f64,
    },
    /// Chaos from the supervisor: jobs stolen from now on fail with
    /// probability `rate`.
    FailRate {
        rate: f64,
    },
    /// The program's next annotated call: the next run (see `session.rs`).
    NextRoot {
        key: JobKey,
        payload: Vec<u8>,
    },
    /// The supervisor's roster of the run's first membership: (id,
    /// address), the master first.
    Roster {
        members: Vec<(NodeId, SocketAddr)>,
    },
    /// The supervisor holds the answer's output: the program is over.
    OutputOut,
    /// The supervisor's chaos says: leave the run now, handing over what
    /// is finished (`--chaos leave`).
    LeaveNow,
    /// The program is over: end the node. `returned`: it returned (else
    /// it unwound, its node's run having ended without an answer).
    Close {
        returned: bool,
    },
}

impl From<Link<Msg>> for Input {
    fn from(link: Link<Msg>) -> Input {
        match link {
            Link::Hello { id, addr, label, conn } => Input::Hello { id, addr, label, conn },
            Link::Linked { id, conn } => Input::Linked { id, conn },
            Link::Closed { id } => Input::Closed { id },
            Link::Addr { id, addr, label } => Input::Addr { id, addr, label },
            Link::Message { from, msg } => Input::Message { from, msg },
            Link::PeerDown { id, reason, unanswered, ours, declared_dead } => {
                Input::PeerDown { id, reason, unanswered, ours, declared_dead }
            }
        }
    }
}

/// Feeds what the supervisor tells this node to the event loop; changes
/// to the network's faults go straight to the socket.
fn read_supervisor(input: tokio::sync::mpsc::UnboundedSender<Input>, faults: Option<Arc<Faults>>) {
    use crate::contract::Order;
    crate::contract::read_orders(move |order| {
        let got = match order {
            Order::Gone(addr) => Input::ProcessEnded { addr },
            Order::Slow(factor) => Input::Slow { factor },
            Order::Fail(rate) => Input::FailRate { rate },
            Order::Roster(members) => Input::Roster { members },
            Order::Over => Input::OutputOut,
            Order::Leave => Input::LeaveNow,
            Order::Net(order) => {
                match faults.as_ref().map(|f| f.apply(&order)) {
                    Some(Err(e)) => warn!("{e}"),
                    None => warn!("network fault order {order:?}, but this node's socket takes none"),
                    Some(Ok(())) => {}
                }
                return true;
            }
        };
        input.send(got).is_ok()
    });
}

/// A node's inputs before its event loop runs: what arrives on them
/// meanwhile, but for what the node waits for, is kept in `early`.
pub(super) struct Inbox<'a> {
    input: &'a mut tokio::sync::mpsc::UnboundedReceiver<Input>,
    urgent: &'a mut tokio::sync::mpsc::UnboundedReceiver<Input>,
    early: &'a mut Vec<Input>,
}

/// Waits for the roster of a first membership (`Input::Roster`); `None`
/// if it never comes (the supervisor is gone).
async fn await_roster(inbox: Inbox<'_>) -> Option<Vec<(NodeId, SocketAddr)>> {
    let Inbox { input, urgent, early } = inbox;
    let wait = async {
        loop {
            tokio::select! {
                Some(got) = urgent.recv() => early.push(got),
                got = input.recv() => match got? {
                    Input::Roster { members } => return Some(members),
                    other => early.push(other),
                },
            }
        }
    };
    tokio::time::timeout(ROSTER_WAIT, wait).await.ok().flatten()
}

/// How one run of a node ended, and its figures.
pub(crate) type RunOver = (RunEnd, Option<NodeReport>);

/// Everything one node's event loop owns.
struct Driver {
    spec: NodeSpec,
    start: Instant,
    node: Node,
    exec: LocalExecutor,
    io: NodeIo<Msg, Input>,
    /// What the link layer said when the connection to a joiner's
    /// contact last failed: the words of a give-up.
    contact_said: Option<String>,
    end: Option<RunEnd>,
    trace: Option<Trace>,
    status: Option<StatusLine>,
    /// The dashboard's data, if this node serves one.
    board: Option<crate::dashboard::Shared>,
    /// The master's view this node serves, if it serves one (`dashboard`).
    view: Option<crate::dashboard::relay::Relay>,
    /// When this node last reported its estimate to its supervisor.
    reported: Option<Instant>,
    /// On a master that reports to its supervisor: every peer's last figures.
    peer_figures: std::collections::BTreeMap<NodeId, NodeFigures>,
    /// The checkpoint file's thread, once this node writes the file.
    checkpointer: Option<Checkpointer>,
    /// Records and bytes the checkpoint file's thread confirmed so far.
    checkpoint_written: (u64, u64),
    /// Whether the last run that ended here was only heard of: neither
    /// decided nor shown by this node (its last frames matter to nobody;
    /// a shower's `Shown` and `ProgramOver` do).
    answered_as_master: Option<bool>,
    /// The stand-in for a large answer this node's program holds
    /// unencoded (see `encode_held_answer`).
    held: Option<satin_proto::Bytes>,
    /// The program is over (`Input::Close`).
    closing: bool,
    /// Where the end of each run goes (the program's thread waits).
    ends: std::sync::mpsc::Sender<RunOver>,
    /// The program's first call (function id, key): what its checkpoint
    /// file belongs to.
    first_root: (String, JobKey),
    /// This node's figures at the end of each run so far.
    run_figures: Vec<serde_json::Value>,
    /// The gaps between the quorum's messages from each peer.
    beats: super::report::BeatGaps,
    /// Chaos: pauses the workers (`--chaos slow`, `hang`).
    throttle: Option<super::throttle::Throttle>,
    input: tokio::sync::mpsc::UnboundedSender<Input>,
}

pub(super) async fn drive(
    mut spec: NodeSpec,
    pool: &Pool,
    runtime: Arc<Runtime>,
    root: (JobKey, Vec<u8>),
    (input_tx, mut input): (tokio::sync::mpsc::UnboundedSender<Input>, tokio::sync::mpsc::UnboundedReceiver<Input>),
    ends: std::sync::mpsc::Sender<RunOver>,
) -> RunOver {
    // Signals are this node's from before it says where it listens: a
    // SIGTERM that follows the announcement is a leave, never a kill.
    let mut suspend = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::user_defined1()).ok();
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    let first_root = (satin_core::call_fn_id(&root.1).unwrap_or("?").to_string(), root.0);
    // (Held once: the dictionary and the root job share the bytes.)
    let root = (root.0, satin_proto::Bytes::from(root.1));
    // Every node holds the first call's parameters: large frames are
    // packed against them (`satin_proto::dedup`).
    let dictionary = crate::conn::SharedDictionary::new(root.1.clone());
    // Peers check each other's root call too: another problem is refused.
    spec.me.hello = spec.me.hello.clone().with_root(root.0 .0);
    // Beats, votes and handshakes come on their own input, read first.
    let (urgent_tx, mut urgent) = tokio::sync::mpsc::unbounded_channel();
    let inputs = crate::conn::Inputs { urgent: urgent_tx, ordinary: input_tx.clone() };
    let rendezvous = match spec.core.first {
        FirstMembership::Gathered(g) => match gather::take_rendezvous(&g, &mut spec.me) {
            Ok(socket) => socket,
            Err(e) => return (RunEnd::Failed(e), None),
        },
        _ => None,
    };
    let holds_rendezvous = rendezvous.is_some() || spec.me.contact.is_none();
    let mut io = match NodeIo::open_on(
        pool,
        &mut spec.me,
        rendezvous,
        spec.io.faults.clone(),
        !spec.io.lone,
        inputs,
        Some(dictionary),
    ) {
        Ok(io) => io,
        Err(e) => return (RunEnd::Failed(e), None),
    };
    if spec.me.supervised {
        read_supervisor(input_tx.clone(), spec.io.faults.clone());
    }
    // A member of a first membership hears it from its supervisor, or
    // gathers it with the others; what arrives before (peers faster to
    // start) is handled after.
    let mut early = Vec::new();
    let inbox = Inbox { input: &mut input, urgent: &mut urgent, early: &mut early };
    let roster: Option<Vec<(NodeId, ClusterId)>> = match spec.core.first {
        FirstMembership::Open => None,
        FirstMembership::FromSupervisor => match await_roster(inbox).await {
            Some(roster) => {
                for (id, addr) in &roster {
                    io.net.learn(*id, *addr, id.to_string());
                }
                Some(roster.iter().map(|&(id, _)| (id, spec.me.cluster)).collect())
            }
            None => return (RunEnd::Failed("the supervisor never said who the run's members are".into()), None),
        },
        FirstMembership::Gathered(g) => {
            let wait = Duration::from_nanos(spec.core.config.join_wait);
            match gather::gather(g, holds_rendezvous, pool, &spec.me, &mut io, inbox, wait).await {
                Ok(gather::Gathered::Members(members)) => Some(members),
                Ok(gather::Gathered::Late) => None,
                Err(e) => return (RunEnd::Failed(e), None),
            }
        }
    };
    let root = JobSpec::root(root.0, root.1);
    // The node that leads at the start draws the status line.
    let mut leads = spec.me.contact.is_none();
    let node = match roster {
        Some(members) => {
            // A member from the start, whatever address it was given.
            spec.me.contact = None;
            leads = members[0].0 == spec.me.id;
            let master = members[0].0;
            Node::member(spec.me.id, spec.me.cluster, &members, master, root, spec.core.config.clone(), spec.me.id)
        }
        None if spec.me.contact.is_none() => {
            Node::member(spec.me.id, spec.me.cluster, &[], spec.me.id, root, spec.core.config.clone(), spec.me.id)
        }
        None => {
            let mut node = Node::joining(spec.me.id, spec.me.cluster, CONTACT, spec.core.config.clone(), spec.me.id)
                .with_program_root(root);
            node.carry_results(std::mem::take(&mut spec.core.carry));
            if let Some(was) = spec.core.was_origin {
                node.claim_origin(was);
            }
            node
        }
    };
    let mut node = node;
    let exec_tx = input_tx.clone();
    let publish_after =
        spec.core.config.publish_after.filter(|_| spec.core.config.ft == FtMode::Table).map(Duration::from_nanos);
    let mut exec = match LocalExecutor::new(runtime, node.shared_table(), publish_after, move |e| {
        let _ = exec_tx.send(Input::Exec(e));
    }) {
        Ok(x) => x,
        Err(e) => return (RunEnd::Failed(e.to_string()), None),
    };
    exec.keep_orphans(spec.core.config.keeps_orphans());
    let pid = spec.me.label.parse().unwrap_or(spec.me.id & 0xffff_ffff);
    let trace = spec.me.trace.clone().map(|p| Trace::new(p, pid, &format!("node {}", spec.me.label)));
    let status = (spec.io.progress && leads).then(StatusLine::new);
    let mut d = Driver {
        spec,
        start: Instant::now(),
        node,
        exec,
        io,
        contact_said: None,
        end: None,
        trace,
        status,
        board: None,
        view: None,
        reported: None,
        peer_figures: Default::default(),
        checkpointer: None,
        checkpoint_written: (0, 0),
        answered_as_master: None,
        held: None,
        closing: false,
        ends,
        first_root,
        throttle: None,
        run_figures: Vec::new(),
        beats: Default::default(),
        input: input_tx,
    };
    let mut leaving = false;

    d.open_dashboard();
    let now = d.now();
    d.node.start(now, &mut d.exec);
    if d.spec.me.contact.is_none() {
        d.node.handle_idle(now, &mut d.exec);
    }
    for got in early {
        d.on_input(got);
    }
    loop {
        d.carry_out_actions();
        if d.end.is_some() {
            break;
        }
        d.connect_to_members();
        // The core's earliest deadline (`proto/node/timers.rs`), or the
        // moment a lost connection may be opened again, if sooner.
        let core_wake = d.node.poll_timeout().map(|t| Duration::from_nanos(t.saturating_sub(d.now())));
        let retry_wake = d.io.net.next_retry().map(|at| at.saturating_duration_since(Instant::now()));
        let sleep_for = core_wake.into_iter().chain(retry_wake).min();
        tokio::select! {
            biased;
            Some(got) = urgent.recv() => d.on_input(got),
            got = input.recv() => {
                let Some(got) = got else { break };
                d.on_input(got);
            }
            _ = tokio::time::sleep(sleep_for.unwrap_or(Duration::ZERO)), if sleep_for.is_some() => {
                let now = d.now();
                // (A wake for a retry alone leaves the core be: the loop
                // connects at its top.)
                if d.node.poll_timeout().is_some_and(|t| t <= now) {
                    d.node.handle_timeout(now, &mut d.exec);
                }
            }
            _ = async { suspend.as_mut().expect("guarded").recv().await }, if suspend.is_some() => {
                warn!("SIGUSR1: suspending the run");
                let now = d.now();
                d.node.suspend(now);
            }
            _ = async { terminate.as_mut().expect("guarded").recv().await }, if terminate.is_some() => {
                let now = d.now();
                if leaving {
                    // A second SIGTERM: leave now, handing over what is
                    // finished; what still runs here is recomputed elsewhere.
                    warn!("SIGTERM again: leaving the run now");
                    d.node.leave(now, &mut d.exec);
                    continue;
                }
                let wait = Duration::from_nanos(d.spec.core.config.leave_timeout);
                warn!(
                    "SIGTERM: leaving the run once the jobs running here are finished (at most {wait:?}; \
                     a second SIGTERM leaves at once)"
                );
                leaving = true;
                d.marker(&format!("node {} leaving", d.spec.me.label));
                d.node.begin_leave(now, &mut d.exec);
            }
        }
    }
    d.finish().await
}

impl Driver {
    fn now(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }

    /// How logs name a peer: the address it listens on (its random id
    /// only while that is unknown).
    fn peer_name(&self, id: NodeId) -> String {
        if id == CONTACT {
            return "the contact".to_string();
        }
        self.io.net.name(id)
    }

    /// A run's answer (`RunEnd::Answer`): in a sequence it goes to the
    /// program at once and the node stays for the next run (a joiner
    /// catching up gets several in a row); else the node ends with it.
    fn answered(&mut self, end: RunEnd) {
        // A hung node's workers (`--chaos hang`) may hold the program's
        // lent values (`core/job/typed_root.rs`): the program cannot take
        // its answer before they let go of them. The run is over, so the
        // fault is.
        self.release_workers();
        if !self.spec.core.config.sequence {
            self.end = Some(end);
            return;
        }
        if let RunEnd::Answer { master, shows, .. } = end {
            self.answered_as_master = Some(master || shows);
        }
        // The program writes its figures as soon as it has the answer:
        // this run's are among them.
        self.note_run_figures();
        let _ = self.ends.send((end, Some(self.report())));
    }

    /// Ends `--chaos slow` and `hang` on this node's workers.
    fn release_workers(&self) {
        if let Some(throttle) = &self.throttle {
            throttle.set(1.0);
        }
    }

    /// A run ended here (whether this node's program hears of it now or
    /// later): its figures as they stand.
    fn note_run_figures(&mut self) {
        while self.run_figures.len() < self.node.runs_done() as usize {
            let figures = self.report().figures();
            self.run_figures.push(figures);
        }
    }

    /// This node's figures so far.
    fn report(&self) -> NodeReport {
        let sent = self.io.net.sent();
        NodeReport {
            id: self.spec.me.id,
            label: self.spec.me.label.clone(),
            stats: self.node.stats().clone(),
            table_hits: self.exec.table_hits(),
            table_lookups: self.exec.table_lookups(),
            table_len: self.node.table_len(),
            table_replicas: self.node.table_replicas(),
            bytes_sent: sent.1,
            bytes_sent_in_memory: self.io.net.sent_in_memory(),
            frames_sent: sent.0,
            values: satin_proto::values::counts(),
            sent_by_kind: sent.2,
            packets_dropped: self.spec.io.faults.as_ref().map_or(0, |f| f.dropped()),
            records_written: self.checkpoint_written.0,
            checkpoint_bytes: self.checkpoint_written.1,
            runs: self.run_figures.clone(),
            beat_gaps_ms: self.beats.percentiles_ms(),
            incumbents: self
                .exec
                .shared()
                .everything()
                .map(|v| v.incumbents.into_iter().map(|(name, _, value)| (name, value)).collect())
                .unwrap_or_default(),
        }
    }

    /// A notable moment: in the trace and on the dashboard.
    fn marker(&mut self, text: &str) {
        if let Some(t) = &mut self.trace {
            t.marker(text);
        }
        self.on_board(|b| b.event(text));
    }

    /// Ends the node: trace, figures, and the last frames out.
    async fn finish(mut self) -> (RunEnd, Option<NodeReport>) {
        // However the node ends (suspended, expelled, its run over), its
        // hung workers go: see `answered`.
        self.release_workers();
        if let Some(s) = self.status.take() {
            s.finish();
        }
        self.exec.run_ended();
        self.last_figures();
        self.on_board(crate::dashboard::Board::finished);
        let label = self.spec.me.label.clone();
        self.marker(&format!("node {label} done"));
        self.report_board();
        self.write_report();
        if let Some(t) = &mut self.trace {
            if let Err(e) = t.write() {
                warn!("cannot write the trace: {e}");
            }
        }
        let mut report = self.report();
        // Whatever still runs here is not needed any more: abort it, so the
        // pool winds down at once.
        let _ = satin_proto::Executor::abandon_all(&mut self.exec);
        // The last frames (the answer to every node) are worth waiting for
        // where they can arrive: not at peers this node has not heard from
        // lately (cut off, or gone).
        match (&self.end, self.node.heard_lately()) {
            // A node that only heard of the end has nothing left worth
            // waiting for.
            (Some(RunEnd::Answer { master: false, shows: false, .. }), _) => self.io.net.stop_sending_except(&[]),
            // Nor does one whose program ended after such an end.
            (Some(RunEnd::Left), _) if self.closing && self.answered_as_master == Some(false) => {
                self.io.net.stop_sending_except(&[])
            }
            (_, Some(reachable)) => self.io.net.stop_sending_except(&reachable),
            _ => {}
        }
        let Driver { exec, io, end, checkpointer, .. } = self;
        drop(exec);
        // The last writes (the answer, a suspend's batch) must be on disk.
        if let Some(c) = checkpointer {
            (report.records_written, report.checkpoint_bytes) = c.close();
        }
        let flushing = Instant::now();
        io.close().await;
        info!("flushed in {:?}", flushing.elapsed());
        (end.unwrap_or(RunEnd::Left), Some(report))
    }
}
