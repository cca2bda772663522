//! The supervised cluster: its node processes — how each is started
//! (arguments, environment, parent-death signal), signalled, told of
//! deaths and orders, and reaped — and what the supervisor knows of them.

use super::*;

pub(super) struct Cluster {
    pub(super) exe: std::path::PathBuf,
    pub(super) base: Vec<String>,
    pub(super) pool: std::path::PathBuf,
    pub(super) pids: Vec<Option<u32>>,
    pub(super) addrs: Vec<Option<SocketAddr>>,
    /// Where death notices go; `None` once the node exited.
    pub(super) stdins: Vec<Option<ChildStdin>>,
    /// Nodes chaos hung: they cannot end by themselves once the run is over.
    pub(super) hung: Vec<usize>,
    /// Nodes killed once the answer was out (hung, or too slow to end).
    pub(super) hung_or_killed: Vec<usize>,
    pub(super) death_notices: bool,
    /// Nodes that died silently (`vanish`): nobody is told.
    pub(super) silent: Vec<usize>,
    /// Nodes chaos sent SIGKILL (until reaped they still have a pid, but a
    /// signal sent to them is lost).
    pub(super) killed: Vec<usize>,
    /// Network faults in force (`partition`, `cut`, `loss`, `delay`).
    pub(super) net: NetChaos,
    pub(super) events: Sender<Event>,
    pub(super) trace: Option<std::path::PathBuf>,
    /// `--stats-json`: each node writes its part beside it.
    pub(super) stats_json: Option<std::path::PathBuf>,
    /// `--dashboard`: the supervisor serves what the master of the moment
    /// reports (not in the calibration run).
    pub(super) relay: Option<crate::dashboard::relay::Relay>,
    /// The status line, drawn from the master's reports.
    pub(super) status: crate::status_line::SupervisorLine,
    /// How many nodes the cluster starts with.
    pub(super) size: u32,
    /// Nodes `--chaos join` started while the run went on.
    pub(super) joiners: Vec<usize>,
}

pub(super) fn part_path(trace: &std::path::Path, node: usize) -> std::path::PathBuf {
    let mut name = trace.as_os_str().to_owned();
    name.push(format!(".node{node}"));
    name.into()
}

/// How a node starts.
#[derive(Clone, Copy)]
pub(super) enum Start {
    /// The run's first node, which others join.
    Listen,
    /// A member of the run's first membership: it listens and waits for
    /// the roster of every member ([`ROSTER_ORDER`]).
    Roster,
    /// A node that joins the run through the node at this address.
    Join(SocketAddr),
}

impl Cluster {
    pub(super) fn spawn(&mut self, start: Start) -> Result<usize, RunError> {
        let node = self.pids.len();
        let mut cmd = Command::new(&self.exe);
        cmd.args(&self.base);
        // What the node is told (`contract.rs`): a node of the run's first
        // membership (`Start::Roster`) waits for the roster on its standard
        // input (`ROSTER_ORDER`), its id its number.
        crate::contract::ChildEnv {
            pool: Some(self.pool.clone()),
            supervised: true,
            node_index: Some(node as u64),
            cluster_size: Some(self.size as usize),
            roster: matches!(start, Start::Roster),
            status_to_supervisor: self.status.drawn(),
            board_to_supervisor: self.relay.is_some(),
            net_faults: Some(self.net.at_start(node as u64, &self.addrs)),
            ..Default::default()
        }
        .apply(&mut cmd);
        if let Some(trace) = &self.trace {
            cmd.arg("--trace").arg(part_path(trace, node));
        }
        if let Some(stats) = &self.stats_json {
            cmd.arg("--stats-json").arg(part_path(stats, node));
        }
        match start {
            Start::Listen | Start::Roster => cmd.args(["--listen", "127.0.0.1:0"]),
            Start::Join(a) => cmd.args(["--join", &a.to_string(), "--listen", "127.0.0.1:0"]),
        };
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).stdin(Stdio::piped());
        end_with_supervisor(&mut cmd);
        let mut child: Child = cmd.spawn().map_err(|e| RunError::Failed(format!("cannot start node {node}: {e}")))?;
        self.pids.push(Some(child.id()));
        self.addrs.push(None);
        self.stdins.push(child.stdin.take());
        let (stdout, stderr) = (child.stdout.take().expect("piped"), child.stderr.take().expect("piped"));
        let tx = self.events.clone();
        let status = self.status.clone();
        let relay = self.relay.clone();
        let log = std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                // What the node reports (`contract/reports.rs`) is taken
                // off its log; the rest is shown.
                match Report::parse(&line) {
                    None => status.log_line(node, &line),
                    Some(Report::Listening(addr)) => drop(tx.send(Event::Listening { node, addr })),
                    Some(Report::Master) => drop(tx.send(Event::Master { node })),
                    Some(Report::OriginShows) => drop(tx.send(Event::OriginShows { node })),
                    Some(Report::Status(json)) => status.report(node, &json),
                    Some(Report::Board(json)) => {
                        if let Some(r) = &relay {
                            r.take_report(&node.to_string(), &json);
                        }
                    }
                }
            }
            let _ = tx.send(Event::LogClosed);
        });
        let tx = self.events.clone();
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = BufReader::new(stdout).read_to_string(&mut text);
            let _ = tx.send(Event::Stdout { node, text });
        });
        let tx = self.events.clone();
        std::thread::spawn(move || {
            let (status, cpu) = wait_with_cpu(child);
            // Its log first: a node that listens and ends at once (a
            // checkpoint that holds the answer) has listened all the same.
            let _ = log.join();
            let _ = tx.send(Event::Exited { node, status, cpu });
        });
        Ok(node)
    }

    /// Whether `node` runs and was not sent SIGKILL.
    pub(super) fn alive(&self, node: usize) -> bool {
        matches!(self.pids.get(node), Some(Some(_))) && !self.killed.contains(&node)
    }

    pub(super) fn signal(&mut self, node: usize, sig: libc::c_int) {
        if sig == libc::SIGKILL {
            self.killed.push(node);
        }
        if let Some(Some(pid)) = self.pids.get(node) {
            // SAFETY: kill(2) on a child's pid has no memory-safety
            // preconditions; the child is not reaped before its waiter
            // thread reports it, so the pid is still ours.
            unsafe { libc::kill(*pid as libc::pid_t, sig) };
        }
    }

    /// `node` exited: unless it ended as planned (its run over, a leave,
    /// a suspend), tell every other live node that it is gone.
    pub(super) fn exited(&mut self, node: usize, status: ExitStatus) {
        self.pids[node] = None;
        self.stdins[node] = None;
        let planned = status.success() || status.code() == Some(SUSPENDED_STATUS);
        let silent = self.silent.contains(&node);
        let Some(addr) = self.addrs[node].filter(|_| self.death_notices && !planned && !silent) else { return };
        for stdin in self.stdins.iter_mut().flatten() {
            // A node that is ending closes its end: nothing to tell it.
            let _ = writeln!(stdin, "{}", Order::Gone(addr).line()).and_then(|()| stdin.flush());
        }
    }

    /// The answer's output is here: the nodes still running end (their
    /// programs wait for this, see `Config::supervised_output`), and nodes
    /// chaos hung, which would only go at the wind-down, are stopped.
    pub(super) fn answer_out(&mut self) {
        for node in 0..self.stdins.len() {
            self.tell(node, &Order::Over.line());
        }
        self.kill_hung();
    }

    /// The run is over: nodes chaos hung would only go at the wind-down.
    pub(super) fn kill_hung(&mut self) {
        for node in std::mem::take(&mut self.hung) {
            if self.pids[node].is_some() {
                self.hung_or_killed.push(node);
            }
            self.signal(node, libc::SIGKILL);
        }
    }

    /// Writes one line to node `node`'s standard input.
    pub(super) fn tell(&mut self, node: usize, line: &str) {
        if let Some(Some(stdin)) = self.stdins.get_mut(node) {
            let _ = writeln!(stdin, "{line}").and_then(|()| stdin.flush());
        }
    }

    /// Carries a network fault out: orders to the sockets of the nodes
    /// it concerns (nodes started later get their part at their start).
    pub(super) fn network(&mut self, kind: &satin_faults::Kind) {
        let live: Vec<Option<SocketAddr>> = self.addrs.iter().zip(&self.pids).map(|(a, p)| p.and(*a)).collect();
        for (node, order) in self.net.orders(kind, &live) {
            self.tell(node as usize, &Order::Net(order).line());
        }
    }

    /// Node `node` listens somewhere new: the network faults in force
    /// hold for its new address too.
    pub(super) fn moved(&mut self, node: usize) {
        let live: Vec<Option<SocketAddr>> = self.addrs.iter().zip(&self.pids).map(|(a, p)| p.and(*a)).collect();
        for (n, order) in self.net.moved(node as u64, &live) {
            self.tell(n as usize, &Order::Net(order).line());
        }
    }

    pub(super) fn live_addr(&self) -> Option<SocketAddr> {
        self.pids.iter().zip(&self.addrs).find_map(|(p, a)| p.and(*a))
    }
}

/// Filters this process's arguments for its nodes: everything but the
/// supervisor's own flags — and, for a calibration run, the checkpoint (it
/// must neither read nor fill the run's file).
pub(super) fn node_args(n: u32, args: &Launch, calibration: bool) -> Vec<String> {
    let mut own =
        vec!["--local-nodes", "--chaos", "--trace", "--stats-json", "--dashboard", "--report", "--answer-file"];
    if calibration {
        own.extend(["--checkpoint", "--checkpoint-interval"]);
    }
    let mut out = Vec::new();
    let mut skip = false;
    for a in std::env::args().skip(1) {
        if skip {
            skip = false;
            continue;
        }
        if own.contains(&a.as_str()) {
            skip = true;
            continue;
        }
        if own.iter().any(|o| a.starts_with(&format!("{o}="))) || (calibration && a == "--checkpoint-fresh") {
            continue;
        }
        out.push(a);
    }
    if args.workers.is_none() {
        let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
        out.push(format!("--workers={}", (cores / n as usize).max(1)));
    }
    out
}

/// A run that ends early (a node that cannot start) leaves no node behind.
impl Drop for Cluster {
    fn drop(&mut self) {
        for node in 0..self.pids.len() {
            self.signal(node, libc::SIGKILL);
        }
    }
}

/// A node dies with its supervisor (killed, say, by `kill -9`): nobody
/// would read its output, and an orphan would run on for nothing. The
/// kernel sends it SIGKILL when the supervisor's thread that started it
/// ends — the supervisor's own, which lives until the run is over.
fn end_with_supervisor(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    let supervisor = std::process::id() as libc::pid_t;
    // SAFETY: between fork and exec the closure calls only `prctl` and
    // `getppid`, both async-signal-safe, and allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The supervisor may have died before the line above.
            if libc::getppid() != supervisor {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
}
