//! The command line every satin program shares (`Launch`, its flags and
//! their checks): how it is parsed out of a program's own arguments, and
//! the values each flag takes. What the flags mean for a node is
//! `config_of.rs`'s.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};

use satin_proto::codec::DEFAULT_MAX_FRAME;

/// How long a joiner keeps knocking by default (milliseconds).
pub(crate) const DEFAULT_JOIN_WAIT_MS: u64 = 10_000;

fn parse_interval(s: &str) -> Result<Duration, String> {
    let d = match s.trim().parse::<f64>() {
        Ok(secs) if secs.is_finite() && secs > 0.0 => Duration::from_secs_f64(secs),
        Ok(_) => return Err(format!("{s:?} is not a positive duration")),
        Err(_) => humantime::parse_duration(s.trim()).map_err(|e| format!("{s:?}: {e} (e.g. 60s, 500ms, 2m)"))?,
    };
    if d.is_zero() {
        return Err("the checkpoint interval must be longer than zero".into());
    }
    Ok(d)
}

/// Load balancing between nodes (`--alg`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum AlgArg {
    /// Random stealing: an idle node asks a random peer.
    Rs,
    /// Cluster-aware random stealing: inside its own cluster first, with
    /// one wide-area request outstanding.
    #[default]
    Crs,
    /// Master–worker: idle nodes ask the master only; workers never steal
    /// from each other.
    Mw,
}

/// How the result table is spread over the nodes (`--table`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum TableArg {
    /// The broadcast table, or the home table when the run is known to
    /// start with 128 nodes or more (`--local-nodes`, `--slurm`, or the
    /// `SATIN_NODES` variable).
    #[default]
    Auto,
    /// Every entry to every node: lookups are local, traffic grows with
    /// the square of the nodes.
    Broadcast,
    /// Every entry to its `--table-replicas` homes (consistent hashing);
    /// lookups ask them.
    Home,
}

/// Fault tolerance of a distributed run (`--ft`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum FtArg {
    /// A crash fails the run.
    None,
    /// Work stolen by a crashed node is re-executed; orphans are discarded.
    Naive,
    /// Re-execution plus the replicated result table: orphans' finished
    /// results are reused.
    #[default]
    Table,
}

/// The satin flag `arg` (a long flag satin does not know) looks like a
/// misspelling of, if any: one edit away from a name of 4 letters or
/// more, two from one of 6 or more (`--lisen`, `--wokers`; not `--fast`
/// beside `--ft`, nor `--list` beside `--listen`). `own_flags` are the
/// program's.
fn misspelt<'f>(arg: &str, flags: &'f [(Option<String>, Option<char>, bool)], own_flags: &[&str]) -> Option<&'f str> {
    let given = arg.strip_prefix("--")?.split('=').next()?;
    if given.is_empty() || own_flags.iter().any(|f| f.strip_prefix("--").unwrap_or(f) == given) {
        return None;
    }
    flags.iter().filter_map(|(long, _, _)| long.as_deref()).find(|known| {
        let shorter = given.len().min(known.len());
        match edit_distance(given, known) {
            1 => shorter >= 4,
            2 => shorter >= 6,
            _ => false,
        }
    })
}

/// Levenshtein distance between two short strings.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substituted = diagonal + usize::from(ca != *cb);
            diagonal = row[j + 1];
            row[j + 1] = substituted.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}

impl Default for Launch {
    fn default() -> Launch {
        use clap::Parser;
        // The flags' own defaults (a derived `Default` would give zeros
        // where the command line gives, say, a soft timeout of 3).
        LaunchOnly::try_parse_from(["satin"]).map(|l| l.launch).unwrap_or_else(|e| {
            panic!("the command line without flags must parse (a SATIN_* variable may be malformed): {e}")
        })
    }
}

/// What [`Launch::from_args`] found on a command line.
#[derive(Debug)]
pub enum Split {
    /// This crate's flags, and the program's own arguments.
    Run(Box<Launch>, Vec<String>),
    /// `--satin-help`: the text to print.
    Help(String),
}

/// [`Launch`] as a whole command line, for [`Launch::from_args`].
#[derive(clap::Parser)]
#[command(about = "Flags of a satin program: where and how it runs")]
struct LaunchOnly {
    #[command(flatten)]
    launch: Launch,
}

/// How to run: on this machine, or as a node of a distributed run.
/// `Launch::default()` is the command line without flags (its defaults,
/// and what the `SATIN_*` variables say).
#[derive(Args, Debug, Clone)]
pub struct Launch {
    /// Worker threads of this process (default: all cores; with
    /// --local-nodes N, cores / N per node).
    #[arg(long, short = 'w', value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub workers: Option<u32>,
    /// Start a distributed run as its first node (the master), listening on
    /// ADDR, e.g. 0.0.0.0:7000. With --join: the address to listen on.
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<SocketAddr>,
    /// Join the distributed run that the node at ADDR belongs to.
    #[arg(long, value_name = "ADDR")]
    pub join: Option<SocketAddr>,
    /// How many nodes the run starts with, given to the --listen node and
    /// every --join node alike: nothing is decided until they are all in
    /// (or a majority, the others given half a second more), so any one
    /// of them may die from its first millisecond on. Whichever process
    /// holds the --listen address gathers them; if it dies first, a
    /// waiting node on the same host takes the address over. Without it a
    /// run starts with its first node alone, and that node's death before
    /// a second is admitted leaves no answer.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=256), conflicts_with = "local_nodes")]
    pub expect_nodes: Option<u32>,
    /// Run a one-machine cluster: start N node processes on loopback,
    /// supervise them and print the answer of the node that finishes as
    /// master.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=256), conflicts_with_all = ["listen", "join"])]
    pub local_nodes: Option<u32>,
    /// Launched by srun: every task runs the same command; task 0 (on the
    /// step's first host) is the master and listens on --slurm-port, the
    /// others join it. --workers defaults to SLURM_CPUS_PER_TASK.
    #[arg(long, conflicts_with_all = ["listen", "join", "local_nodes"])]
    pub slurm: bool,
    /// The port task 0 listens on under --slurm.
    #[arg(long, value_name = "PORT", default_value_t = 7411, requires = "slurm")]
    pub slurm_port: u16,
    /// Started as a pod of a StatefulSet (or an indexed Job) in
    /// Kubernetes: every pod runs the same command; pod 0 (its name ends in
    /// -0) is the master and listens on --k8s-port, the others join it at
    /// NAME-0.SERVICE. See deploy/k8s/satin.yaml.
    #[arg(long, conflicts_with_all = ["listen", "join", "local_nodes", "slurm"])]
    pub k8s: bool,
    /// The port pod 0 listens on under --k8s (UDP: QUIC).
    #[arg(long, value_name = "PORT", default_value_t = 7411, requires = "k8s")]
    pub k8s_port: u16,
    /// The headless Service that names the pods (default: the
    /// StatefulSet's name, the pod name without its ordinal).
    #[arg(long, value_name = "NAME", requires = "k8s")]
    pub k8s_service: Option<String>,
    /// How long a joining node keeps trying while its contact does not
    /// answer yet (or its join gets lost), in milliseconds (default
    /// 10000; 60000 with --slurm, whose tasks start in no particular
    /// order). In a task-graph run: how long its master waits for its
    /// --nodes nodes before it starts with those it has (default 60000).
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(0..=3_600_000))]
    pub join_wait_ms: Option<u64>,
    /// Name of this node's cluster: nodes steal inside their own cluster
    /// first and keep one wide-area steal outstanding.
    #[arg(long, value_name = "NAME", default_value = "default")]
    pub cluster: String,
    /// The pool credential (made by --init-pool). Only nodes holding it can
    /// join. Also read from the SATIN_POOL environment variable.
    #[arg(long, value_name = "FILE", env = crate::contract::POOL)]
    pub pool: Option<PathBuf>,
    /// Make a new pool credential at FILE (or DIR/pool.pem) and exit.
    #[arg(long, value_name = "FILE")]
    pub init_pool: Option<PathBuf>,
    /// Fault tolerance across nodes.
    #[arg(long, value_enum, default_value_t = FtArg::Table)]
    pub ft: FtArg,
    /// Load balancing between nodes.
    #[arg(long, value_enum, default_value_t = AlgArg::Crs)]
    pub alg: AlgArg,
    /// The result table: every entry on every node, or on its homes. The
    /// master's choice holds for the whole run (joiners take it).
    #[arg(long, value_enum, default_value_t = TableArg::Auto)]
    pub table: TableArg,
    /// Homes per key of the home table.
    #[arg(long, value_name = "K", default_value_t = satin_proto::DEFAULT_REPLICAS, value_parser = table_replicas)]
    pub table_replicas: usize,
    /// The longest silence a connection survives (milliseconds; QUIC
    /// keep-alives probe four times in that span). Failure detection is
    /// faster (--suspect-ms); this bounds it.
    #[arg(long, value_name = "MS", default_value_t = 3000, value_parser = clap::value_parser!(u64).range(100..=600_000))]
    pub idle_timeout_ms: u64,
    /// A member the master has not heard from for this long (milliseconds)
    /// is removed by the majority, and a master that has not heard from a
    /// majority for this long steps down; at most --idle-timeout-ms.
    /// Members beat every tenth of it.
    #[arg(long, value_name = "MS", default_value_t = 1000, value_parser = clap::value_parser!(u64).range(50..=600_000))]
    pub suspect_ms: u64,
    /// How long a node cut off from the majority of the run waits for the
    /// network to heal before it gives up (milliseconds; exit status 4).
    #[arg(long, value_name = "MS", default_value_t = 30_000, value_parser = clap::value_parser!(u64).range(100..=86_400_000))]
    pub heal_wait_ms: u64,
    /// After SIGTERM (a graceful leave), how long the jobs running on this
    /// node may take to finish before they are aborted and recomputed
    /// elsewhere (milliseconds).
    #[arg(long, value_name = "MS", default_value_t = 30_000)]
    pub leave_timeout_ms: u64,
    /// Faults to inject into a --local-nodes cluster, e.g.
    /// 'kill:node=2,at=50%;leave:node=3,at=2s;join:at=3s'. Processes: kill,
    /// vanish (killed, nobody told), leave, join, suspend, slow, hang,
    /// fail; the network, below QUIC: partition:node=N,at=T[,for=D],
    /// cut:A-B,at=T (A>B: one way), loss:P, delay:MS[,jitter=MS].
    #[arg(long, value_name = "SPEC", requires = "local_nodes")]
    pub chaos: Option<String>,
    /// Write a Chrome trace (open it in Perfetto) of this node's jobs,
    /// crashes and recoveries to FILE; with --local-nodes, of every node.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Write this node's figures (jobs stolen, table hits, checkpoint
    /// records, …) as JSON to FILE when each run ends; with
    /// --local-nodes, every node's, in one file: `{"nodes": [..]}`.
    #[arg(long, value_name = "FILE")]
    pub stats_json: Option<PathBuf>,
    /// Write the answer to FILE instead of standard output: what the
    /// program prints after its run, from the process that shows it — the
    /// node the run started on (or the master, if that one is gone); with
    /// --local-nodes, the supervisor.
    #[arg(long, value_name = "FILE")]
    pub answer_file: Option<PathBuf>,
    /// No status line (progress, time left) on a terminal.
    #[arg(long)]
    pub no_progress: bool,
    /// Serve a read-only dashboard of the run at ADDR (e.g.
    /// 127.0.0.1:8080; port 0 picks one): the page at `/`, JSON at
    /// `/api/status`, Prometheus metrics at `/metrics`. A run on one
    /// machine: this process serves it; with --local-nodes, the
    /// supervisor, whatever node dies; across machines, any node given
    /// it (the first its own board, any other the master of the moment's,
    /// sent to it once a second); it prints `dashboard: http://ADDR/`.
    #[arg(long, value_name = "ADDR")]
    pub dashboard: Option<SocketAddr>,
    /// After the run, write what the dashboard showed last as one
    /// self-contained HTML page to FILE (it opens offline, on any
    /// machine). Written by the process that would serve the dashboard:
    /// this one on one machine, the supervisor with --local-nodes, the
    /// first node across machines.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Largest frame this node accepts or sends, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_FRAME)]
    pub max_frame: usize,
    /// Keep finished results in FILE while the run goes on; the same
    /// command with the same FILE resumes after every node was lost (or
    /// after a suspend) and computes only what is missing. With several
    /// nodes, FILE must be reachable by every node under the same path.
    #[arg(long, value_name = "FILE")]
    pub checkpoint: Option<PathBuf>,
    /// How often results go to the checkpoint file: 60s, 10s, 500ms, 2m.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_interval, requires = "checkpoint")]
    pub checkpoint_interval: Duration,
    /// Discard an existing checkpoint in FILE and start over.
    #[arg(long, requires = "checkpoint")]
    pub checkpoint_fresh: bool,
    /// How long a job given to another node is expected to take (e.g. 2s,
    /// 1h); without it the estimate is learned per depth of the tree from
    /// the jobs that came back. Timeouts count from it.
    #[arg(long, value_name = "DURATION", value_parser = parse_interval)]
    pub expect: Option<Duration>,
    /// Past this many times its estimate, a node asks the thief whether a
    /// job still runs there (no answer, or no: the job runs again).
    #[arg(long, value_name = "FACTOR", default_value_t = 1.25)]
    pub soft_timeout: f64,
    /// Past this many times its estimate, a job given to another node is
    /// aborted there and runs again.
    #[arg(long, value_name = "FACTOR", default_value_t = 2.0)]
    pub hard_timeout: f64,
    /// Attempts after the first for a job that fails (panics) on another
    /// node, before the failure ends the run (for jobs that touch flaky
    /// resources; 0: a panic propagates at once, as in a local run).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub retries: u32,
    /// Never run copies of late jobs (straggler duplicates).
    #[arg(long)]
    pub no_duplicates: bool,
    /// A task-graph run's master (--listen) waits for this many nodes,
    /// itself included, before it starts: its schedule is made for them.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(2..=4096), conflicts_with_all = ["join", "local_nodes"])]
    pub nodes: Option<u32>,
}

impl Launch {
    /// [`Launch::from_env`] on a given command line (program name first),
    /// without exiting.
    pub fn from_args(app: &str, args: impl IntoIterator<Item = String>) -> Result<Split, String> {
        Launch::from_args_with(app, args, &[])
    }

    /// [`Launch::from_args`] for a program with flags of its own that look
    /// like satin's (`--list` beside `--listen`): `own_flags` (`"--list"`)
    /// are the program's, never taken for a misspelt satin flag.
    pub fn from_args_with(
        app: &str,
        args: impl IntoIterator<Item = String>,
        own_flags: &[&str],
    ) -> Result<Split, String> {
        use clap::{CommandFactory, FromArgMatches};
        // Once per process: the name shows in help and error messages.
        let name: &'static str = Box::leak(app.to_string().into_boxed_str());
        let cmd = LaunchOnly::command().name(name).no_binary_name(true);
        let flags: Vec<(Option<String>, Option<char>, bool)> = cmd
            .get_arguments()
            .map(|a| (a.get_long().map(str::to_string), a.get_short(), a.get_action().takes_values()))
            .collect();
        let takes = |arg: &str| -> Option<bool> {
            if let Some(long) = arg.strip_prefix("--") {
                let name = long.split('=').next().unwrap_or_default();
                let f = flags.iter().find(|(l, _, _)| l.as_deref() == Some(name))?;
                return Some(f.2 && !long.contains('='));
            }
            let mut chars = arg.strip_prefix('-')?.chars();
            let short = chars.next()?;
            let f = flags.iter().find(|(_, s, _)| *s == Some(short))?;
            Some(f.2 && chars.next().is_none())
        };
        let (mut ours, mut own) = (Vec::new(), Vec::new());
        let mut args = args.into_iter();
        own.extend(args.next());
        while let Some(arg) = args.next() {
            if arg == "--" {
                own.push(arg);
                own.extend(args.by_ref());
                break;
            }
            if arg == "--satin-help" {
                return Ok(Split::Help(cmd.clone().render_help().to_string()));
            }
            match takes(&arg) {
                Some(value) => {
                    ours.push(arg);
                    if value {
                        ours.extend(args.next());
                    }
                }
                None => {
                    if let Some(known) = misspelt(&arg, &flags, own_flags) {
                        let given = arg.split('=').next().unwrap_or_default();
                        return Err(format!(
                            "unknown flag '{given}': did you mean '--{known}'? (a flag of the program's own that \
                             looks like one of satin's goes after `--`)"
                        ));
                    }
                    own.push(arg)
                }
            }
        }
        let matches = cmd.try_get_matches_from(ours).map_err(|e| {
            let text = e.render().to_string();
            let text = text.strip_prefix("error: ").unwrap_or(&text);
            text.replace("'--help'", "'--satin-help'").trim_end().to_string()
        })?;
        let launch = LaunchOnly::from_arg_matches(&matches).map_err(|e| e.to_string())?.launch;
        launch.check()?;
        Ok(Split::Run(Box::new(launch), own))
    }

    /// Timeouts, retries and duplicates as the flags say.
    pub(crate) fn stragglers(&self) -> satin_proto::Stragglers {
        satin_proto::Stragglers {
            duplicates: !self.no_duplicates,
            expect: self.expect.map(|d| d.as_nanos() as u64),
            soft: self.soft_timeout,
            hard: self.hard_timeout,
            answer_timeout: self.idle_timeout_ms * 1_000_000,
            retries: self.retries,
            ..satin_proto::Stragglers::default()
        }
    }

    /// Refuses flag values that make no sense together (the timeout
    /// factors); [`run`](crate::run) calls it too.
    pub fn check(&self) -> Result<(), String> {
        self.stragglers().check().map_err(|e| format!("--soft-timeout/--hard-timeout: {e}"))
    }

    pub(crate) fn is_distributed(&self) -> bool {
        self.listen.is_some() || self.join.is_some()
    }

    /// Does [`run`](crate::run) do more than run on this machine's cores: a node, a
    /// supervisor, a launch under srun, a run that keeps a checkpoint,
    /// serves a dashboard or writes a report, or making a pool credential?
    pub fn goes_beyond_this_process(&self) -> bool {
        self.is_distributed()
            || self.local_nodes.is_some()
            || self.init_pool.is_some()
            || self.slurm
            || self.k8s
            || self.checkpoint.is_some()
            || self.dashboard.is_some()
            || self.report.is_some()
    }
}

/// `--table-replicas`: from 1 to 16 homes.
fn table_replicas(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(k) if (1..=16).contains(&k) => Ok(k),
        _ => Err(format!("{s} is not a number of homes from 1 to 16")),
    }
}
