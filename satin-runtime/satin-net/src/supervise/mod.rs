//! `--local-nodes N`: a one-machine cluster. This process starts N node
//! processes of the same binary on loopback (node 0 with `--listen`, the
//! others with `--join`), injects `--chaos` faults, forwards their logs
//! with a `[node i]` prefix, and prints the standard output of the node
//! that finishes the run as master — whichever node that is after crashes.
//!
//! It is also a failure detector: it sees a node's process end the moment
//! it does and writes `gone ADDR` to the standard input of every other
//! node, which then recovers at once instead of waiting for the idle
//! timeout (as a TCP reset told Satin's nodes of a dead process). Across
//! machines, or with `SATIN_DEATH_NOTICES=off`, the timeout remains.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::SocketAddr;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{channel, Sender};
use std::time::{Duration, Instant};

use super::chaos_net::NetChaos;
use super::contract::{Order, Report};
use super::ending::{RunError, SUSPENDED_STATUS};
use super::{init_pool, Launch};
use chaos::apply;
use cluster::{node_args, part_path, Cluster, Start};
use outputs::{put, wait_listening, wait_with_cpu, Outputs};
use satin_faults::{Crashed, Fault, When};
use schedule::Schedule;

mod chaos;
mod cluster;
mod outputs;
mod schedule;

/// How a supervised run ended.
enum ClusterEnd {
    /// The master's standard output.
    Answer(String),
    /// Every node stopped for a suspend.
    Suspended,
    /// Chaos killed every node.
    AllKilled,
}

/// How long a node may take to start listening.
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// After the answer is out, how long the other nodes get before SIGKILL:
/// the command returns with its answer, not when the slowest node (a slow,
/// hung or cut-off one) has wound down.
const WIND_DOWN: Duration = Duration::from_secs(1);
/// A calibration run shorter than this is run twice, the shorter counting.
const SHORT_CALIBRATION: Duration = Duration::from_secs(2);

enum Event {
    Listening {
        node: usize,
        addr: SocketAddr,
    },
    Master {
        node: usize,
    },
    /// The node the run started on showed the answer (another was master).
    OriginShows {
        node: usize,
    },
    Stdout {
        node: usize,
        text: String,
    },
    /// The node's log ended (everything it wrote is forwarded).
    LogClosed,
    Exited {
        node: usize,
        status: ExitStatus,
        cpu: Duration,
    },
}

/// A run of the cluster: the calibration run that places the percentages
/// of `--chaos` (no faults, no figures), or the run, whose nodes write
/// their figures to `stats` if given.
enum RunKind<'a> {
    Calibration,
    Run { stats: Option<&'a std::path::Path>, relay: Option<crate::dashboard::relay::Relay> },
}

/// One run of the cluster; returns the master's output and how long it took.
fn run_cluster(
    app: &str,
    args: &Launch,
    n: u32,
    pool: &std::path::Path,
    chaos: &[(Duration, satin_faults::Kind)],
    run: RunKind<'_>,
    kind: Kind,
) -> Result<(ClusterEnd, Duration, Duration), RunError> {
    let (calibration, stats, relay) = match run {
        RunKind::Calibration => (true, None, None),
        RunKind::Run { stats, relay } => (false, stats, relay),
    };
    let (tx, rx) = channel();
    let mut cluster = Cluster {
        exe: std::env::current_exe().map_err(|e| RunError::Failed(format!("cannot find this program: {e}")))?,
        base: node_args(n, args, calibration),
        pool: pool.to_path_buf(),
        pids: Vec::new(),
        addrs: Vec::new(),
        stdins: Vec::new(),
        hung: Vec::new(),
        hung_or_killed: Vec::new(),
        death_notices: std::env::var(crate::contract::DEATH_NOTICES).map_or(true, |v| v != "off"),
        silent: Vec::new(),
        killed: Vec::new(),
        net: NetChaos::default(),
        events: tx,
        trace: args.trace.clone(),
        stats_json: stats.map(std::path::Path::to_path_buf),
        relay,
        status: super::status_line::SupervisorLine::new(super::status_line::status_line_wanted(args.no_progress)),
        size: n,
        joiners: Vec::new(),
    };
    let mut schedule = Schedule::new(chaos);
    for kind in schedule.take_network_from_start() {
        cluster.network(&kind);
    }
    let start = Instant::now();
    let mut deferred = std::collections::VecDeque::new();
    start_nodes(&mut cluster, &rx, n, kind, &mut deferred)?;
    let mut out = Outputs::default();
    let mut answered_at: Option<Instant> = None;
    // How long the run took: until its answer was out (a hung node may
    // take the wind-down to go).
    let mut took: Option<Duration> = None;
    let mut all_killed = false;
    loop {
        let live = cluster.pids.iter().filter(|p| p.is_some()).count();
        let all = cluster.pids.len();
        if live == 0 && out.stdout.iter().filter(|s| s.is_some()).count() >= all && out.logs_closed >= all {
            break;
        }
        let next_fault = schedule.next_at();
        let wait = match (next_fault, answered_at) {
            (_, Some(t)) => WIND_DOWN.saturating_sub(t.elapsed()),
            (Some(at), None) => at.saturating_sub(start.elapsed()),
            (None, None) => Duration::from_secs(3600),
        };
        let next = match deferred.pop_front() {
            Some(event) => Ok(event),
            None => rx.recv_timeout(wait),
        };
        match next {
            Ok(Event::Listening { node, addr }) => {
                let moved = cluster.addrs[node].is_some_and(|old| old != addr);
                cluster.addrs[node] = Some(addr);
                if moved {
                    // It started over as a new node (see `rejoin.rs`).
                    cluster.moved(node);
                }
            }
            Ok(Event::Master { node }) => out.master = Some(node),
            Ok(Event::OriginShows { node }) => out.origin_shown = Some(node),
            Ok(Event::LogClosed) => out.logs_closed += 1,
            Ok(Event::Stdout { node, text }) => {
                put(&mut out.stdout, node, text);
                if answered_at.is_none() && out.any_answer().is_some() {
                    answered_at = Some(Instant::now());
                    took.get_or_insert(start.elapsed());
                    cluster.answer_out();
                }
            }
            Ok(Event::Exited { node, status, cpu }) => {
                put(&mut out.exited, node, status);
                if answered_at.is_none() && out.any_answer().is_some() {
                    answered_at = Some(Instant::now());
                    took.get_or_insert(start.elapsed());
                    // (Before any news of this exit.)
                    cluster.answer_out();
                }
                cluster.exited(node, status);
                out.cpu += cpu;
            }
            Err(_) if answered_at.is_some() => {
                for node in 0..cluster.pids.len() {
                    if cluster.pids[node].is_some() {
                        cluster.hung_or_killed.push(node);
                    }
                    cluster.signal(node, libc::SIGKILL);
                }
                answered_at = None;
            }
            Err(_) => {
                if let Some(kind) = schedule.take_next() {
                    all_killed |= kind == satin_faults::Kind::Crash(Crashed::All);
                    apply(app, &mut cluster, &kind)?;
                }
            }
        }
    }
    let elapsed = took.unwrap_or_else(|| start.elapsed());
    for node in 0..cluster.pids.len() {
        cluster.signal(node, libc::SIGKILL);
    }
    cluster.status.finish();
    merge_parts(app, &cluster, args.trace.as_deref(), stats);
    if !calibration {
        say!("{app}: how the nodes ended: {}", out.exits(&cluster.hung_or_killed));
    }
    let outcome = match out.shown_answer().or_else(|| out.any_answer()) {
        Some(a) => ClusterEnd::Answer(a),
        None if out.all_suspended(&cluster.joiners) => ClusterEnd::Suspended,
        None if all_killed => ClusterEnd::AllKilled,
        None => return Err(RunError::Failed("no node finished the run (see the node logs above)".into())),
    };
    Ok((outcome, elapsed, out.cpu))
}

/// Starts the cluster's nodes: for a tree, every node at once as one
/// first membership — from its first instant the run has n voters, and
/// any one of them, the master included, may die without stopping it;
/// for a task graph, node 0 and then the others joining it. Events that
/// come meanwhile and are not about listening wait in `deferred`.
fn start_nodes(
    cluster: &mut Cluster,
    rx: &std::sync::mpsc::Receiver<Event>,
    n: u32,
    kind: Kind,
    deferred: &mut std::collections::VecDeque<Event>,
) -> Result<(), RunError> {
    match kind {
        Kind::Tree => {
            for _ in 0..n {
                cluster.spawn(Start::Roster)?;
            }
            let mut roster = Vec::new();
            for node in 0..n as usize {
                // (Waiting for one node notes where the others listen.)
                let addr = match cluster.addrs[node] {
                    Some(addr) => Some(addr),
                    None => wait_listening(rx, cluster, node, deferred)?,
                };
                // (A node that ended without a distributed run is not
                // in it; it printed its own answer.)
                if let Some(addr) = addr {
                    roster.push((node as u64, addr));
                }
            }
            let order = Order::Roster(roster).line();
            for node in 0..n as usize {
                if cluster.addrs[node].is_some() {
                    cluster.tell(node, &order);
                }
            }
        }
        Kind::Graph => {
            cluster.spawn(Start::Listen)?;
            let master_addr = wait_listening(rx, cluster, 0, deferred)?
                .ok_or_else(|| RunError::Failed("node 0 ended before it listened".into()))?;
            for _ in 1..n {
                cluster.spawn(Start::Join(master_addr))?;
            }
        }
    }
    Ok(())
}

/// Merges the parts each node wrote of `--trace` and `--stats-json`.
fn merge_parts(app: &str, cluster: &Cluster, trace: Option<&std::path::Path>, stats: Option<&std::path::Path>) {
    if let Some(trace) = trace {
        let parts: Vec<_> = (0..cluster.pids.len()).map(|n| part_path(trace, n)).collect();
        match super::trace::merge(&parts, trace) {
            Ok(n) => say!("{app}: wrote {n} trace events to {}", trace.display()),
            Err(e) => say!("{app}: cannot write the trace {}: {e}", trace.display()),
        }
    }
    if let Some(stats) = stats {
        let parts: Vec<_> = (0..cluster.pids.len()).map(|n| part_path(stats, n)).collect();
        if let Err(e) = super::report::merge(&parts, stats) {
            say!("{app}: cannot write the statistics to {}: {e}", stats.display());
        }
    }
}

/// What kind of run the cluster makes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// Divide and conquer: the nodes start as one membership (a roster,
    /// see [`ROSTER_ORDER`]) and write their figures for the table the
    /// supervisor ends with.
    Tree,
    /// A task graph: the first node listens and the others join it.
    Graph,
}

/// What a task-graph run has no meaning for, refused in words (as the
/// simulator's task-graph runs refuse it).
fn refuse_for_graphs(events: &[Fault]) -> Result<(), RunError> {
    use satin_faults::Kind;
    for e in events {
        let none = |what: &str| Err(RunError::Usage(format!("--chaos: a task-graph run has no {what}")));
        match e.kind {
            Kind::Leave(_) | Kind::Drain(_) => return none("graceful leave (its schedule is static: kill the node)"),
            Kind::Suspend(_) => return none("checkpoint to suspend to"),
            Kind::Fail { .. } => return none("stolen jobs to fail"),
            _ => {}
        }
    }
    Ok(())
}

/// Runs the supervised cluster; prints the master's standard output, or
/// says why there is none.
pub(super) fn run(app: &str, args: &Launch, n: u32, kind: Kind) -> Result<(), RunError> {
    let events: Vec<Fault> = match &args.chaos {
        Some(spec) => super::chaos::parse(spec).map_err(|e| RunError::Usage(format!("--chaos: {e}")))?,
        None => Vec::new(),
    };
    if kind == Kind::Graph {
        refuse_for_graphs(&events)?;
    }
    let joins = events.iter().filter(|e| matches!(e.kind, satin_faults::Kind::Join(_))).count() as u64;
    if let Some(node) = events.iter().flat_map(|e| e.kind.nodes()).find(|&node| node >= u64::from(n) + joins) {
        return Err(RunError::Usage(format!(
            "--chaos names node {node}, but the cluster has only {} nodes",
            u64::from(n) + joins
        )));
    }
    let temp_pool;
    let pool = match &args.pool {
        Some(p) => p.clone(),
        None => {
            let dir = std::env::temp_dir().join(format!("satin-pool-{}", std::process::id()));
            let _ = std::fs::create_dir_all(&dir);
            temp_pool = TempPool(dir);
            let file = temp_pool.0.join(super::POOL_FILE);
            let _ = std::fs::remove_file(&file);
            init_pool(&file).map_err(|e| RunError::Failed(e.to_string()))?;
            file
        }
    };
    let needs_calibration = events.iter().any(|e| matches!(e.at, When::Share(_) | When::ShareThen(..)));
    let reference = if needs_calibration {
        say!("{app}: chaos: calibration run without faults, to place the percentages");
        let (_, mut took, _) = run_cluster(app, args, n, &pool, &[], RunKind::Calibration, kind)?;
        // A short run's first start is mostly a cold start (the program
        // read from disk, a loaded machine): it took 0.86 s once, then
        // the run itself 0.08 s, and a kill at 50 % came after the end.
        if took < SHORT_CALIBRATION {
            let (_, again, _) = run_cluster(app, args, n, &pool, &[], RunKind::Calibration, kind)?;
            took = took.min(again);
        }
        say!("{app}: chaos: the run takes {:.3} s without faults", took.as_secs_f64());
        took
    } else {
        Duration::ZERO
    };
    let chaos: Vec<(Duration, satin_faults::Kind)> = events
        .into_iter()
        .map(|e| {
            let at = match e.at {
                When::After(ns) => Duration::from_nanos(ns),
                When::Share(s) => reference.mul_f64(s),
                When::ShareThen(s, then) => reference.mul_f64(s) + Duration::from_nanos(then),
            };
            (at, e.kind)
        })
        .collect();
    // The dashboard and the report are the supervisor's: they outlive any
    // node.
    let relay = match (args.dashboard, &args.report) {
        (Some(addr), _) => Some(
            crate::dashboard::relay::Relay::new(app, "supervisor")
                .serve(addr)
                .map_err(|e| RunError::Failed(format!("cannot serve the dashboard on {addr}: {e}")))?,
        ),
        (None, Some(_)) => Some(crate::dashboard::relay::Relay::new(app, "supervisor")),
        (None, None) => None,
    };
    // The nodes' figures: in the file asked for, or in a scratch one for
    // the table printed at the end.
    let mut _scratch = None; // removed with its file when the run is over
    let stats = match (kind, &args.stats_json) {
        (Kind::Graph, _) => None,
        (Kind::Tree, Some(file)) => Some(file.clone()),
        (Kind::Tree, None) => {
            let dir =
                tempfile::tempdir().map_err(|e| RunError::Failed(format!("cannot make a scratch directory: {e}")))?;
            let file = dir.path().join("stats.json");
            _scratch = Some(dir);
            Some(file)
        }
    };
    let (outcome, took, cpu) =
        run_cluster(app, args, n, &pool, &chaos, RunKind::Run { stats: stats.as_deref(), relay: relay.clone() }, kind)?;
    // Nodes killed on purpose left their frames' places in shared memory.
    crate::conn::sweep_shared_memory();
    if let (Some(path), Some(relay)) = (&args.report, &relay) {
        relay
            .write_report(path)
            .map_err(|e| RunError::Failed(format!("cannot write the report to {}: {e}", path.display())))?;
    }
    if let Some(Ok(merged)) = stats.map(|s| std::fs::read_to_string(s).map(|t| serde_json::from_str(&t))) {
        for line in super::report::table(&merged.unwrap_or_default()) {
            say!("{app}: {line}");
        }
    }
    say!("{app}: {n} local nodes, {:.3} s, cpu time of all nodes {:.3} s", took.as_secs_f64(), cpu.as_secs_f64());
    drop(pool);
    let resume = |what: &str| match &args.checkpoint {
        Some(file) => format!(
            "{what}; the run can be resumed from its checkpoint {}: run the same command again (without --chaos)",
            file.display()
        ),
        None => format!("{what}; without --checkpoint its work is lost"),
    };
    match outcome {
        ClusterEnd::Answer(answer) => match &args.answer_file {
            Some(file) => super::answer_file::write(file, &answer).map_err(|e| {
                RunError::Failed(format!("cannot write the answer to {}: {e}; it was:\n{answer}", file.display()))
            }),
            None => {
                print!("{answer}");
                use std::io::Write;
                let _ = std::io::stdout().flush();
                Ok(())
            }
        },
        ClusterEnd::Suspended => Err(RunError::Suspended(resume("the run is suspended"))),
        ClusterEnd::AllKilled => Err(RunError::AllKilled(resume("every node was killed"))),
    }
}

struct TempPool(std::path::PathBuf);

impl Drop for TempPool {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
