//! How a run is configured: fault tolerance, stealing, the table, the
//! publication threshold and the straggler policy.

use super::{QuorumConfig, TablePlacement, Time};

/// Drivers publish a job that ran at least this fraction of the run so far
/// (and never less than [`Config::publish_after`]): a long run publishes
/// only its longer jobs, so their number stays bounded — a few hundred per
/// worker and level of the tree — however long it runs.
pub const PUBLISH_FRACTION: u32 = 500;

/// How much fault tolerance a run has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FtMode {
    /// A crash fails the run.
    None,
    /// Orphans are discarded; work stolen by dead nodes is re-executed.
    Naive,
    /// The design's procedure: orphans' finished parts are saved in the
    /// replicated result table and reused.
    Table,
}

/// Victim selection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StealPolicy {
    /// Random stealing: one request at a time to a random live peer.
    Random,
    /// Cluster-aware random stealing: synchronous steals inside the own
    /// cluster, plus at most one asynchronous wide-area steal outstanding.
    ClusterAware,
    /// Master–worker: idle nodes ask the master (the current one, after a
    /// re-election too) and only the master hands out jobs; workers never
    /// steal from each other, and what a worker spawns stays with it.
    MasterWorker,
}

/// How a run goes: fault tolerance, stealing, the result table, timeouts,
/// the majority, checkpoints and stragglers. One per run, the same on every node.
#[derive(Clone, Debug)]
pub struct Config {
    /// What happens to the work of a node that is lost.
    pub ft: FtMode,
    /// How a thief chooses its victim.
    pub steal: StealPolicy,
    /// Results larger than this travel in the table as `(key, holder)` pointers.
    pub pointer_threshold: usize,
    /// Bound on a table replica's entries (oldest dropped first).
    pub table_capacity: Option<usize>,
    /// Pause after a full round of failed steal attempts.
    pub steal_backoff: Time,
    /// Write checkpoints at this interval (see `checkpoint.rs`); `None`: no
    /// checkpoint file.
    pub checkpoint_interval: Option<Time>,
    /// The first write this long after the start (default: one interval);
    /// experiments use it to place a crash inside an interval.
    pub checkpoint_first: Option<Time>,
    /// Give up on a steal request unanswered this long and ask another
    /// victim (a late reply's job still runs): a victim that died without
    /// being noticed yet does not starve its thieves for the whole
    /// detection delay. `None`: wait for the reply or the victim's death.
    pub steal_timeout: Option<Time>,
    /// Publish the result of any job that ran at least this long, not only
    /// results returned to victims, so that little finished work dies with
    /// a crashed node. `None`: only returned results (the paper's table).
    pub publish_after: Option<Time>,
    /// Late stolen jobs, failing jobs and the nodes that run them.
    pub stragglers: Stragglers,
    /// Every entry to every node, or to its homes (see `homes.rs`).
    pub table: TablePlacement,
    /// Failure detection and the majority rule (see `proto/quorum`).
    pub quorum: QuorumConfig,
    /// The program may make more annotated calls after the first: a run's
    /// end leaves the node in the cluster, every node gets the answer, and
    /// [`Node::next_root`](super::Node::next_root) starts the next run (see `sequence.rs`).
    pub sequence: bool,
    /// A supervisor sees every node's output and says when it holds the
    /// answer's ([`Node::output_out`](super::Node::output_out)): programs
    /// that wait end then, not when the answer is shown, and the shower's
    /// certain death before that has the master show it again — the
    /// answer is out even if the node that shows it dies between the show
    /// and its output (`--local-nodes`; see `answer.rs`).
    pub supervised_output: bool,
    /// How often a process the majority removed starts over as a new
    /// node (a link that stays cut would have it removed each time), and
    /// how often this process did already: [`Action::Expelled`] says
    /// whether it joins again.
    ///
    /// [`Action::Expelled`]: super::Action::Expelled
    pub max_rejoins: u32,
    /// See [`Config::max_rejoins`].
    pub rejoins: u32,
    /// How long a joiner keeps knocking at a contact where nobody answers
    /// (its process may not listen yet: the tasks of a batch job start in
    /// any order). It gives up at the first unanswered attempt after this
    /// ([`Action::CannotJoin`]).
    ///
    /// [`Action::CannotJoin`]: super::Action::CannotJoin
    pub join_wait: Time,
    /// How often the node asks its driver for its figures
    /// ([`Action::ShareFigures`]) and raises the publication threshold
    /// ([`Action::PublishAfter`]); `None`: never (the simulator's nodes
    /// report no figures).
    ///
    /// [`Action::ShareFigures`]: super::Action::ShareFigures
    /// [`Action::PublishAfter`]: super::Action::PublishAfter
    pub figures_every: Option<Time>,
    /// After [`Node::begin_leave`] (SIGTERM), how long the jobs running
    /// here may take to finish before the node leaves anyway, aborting
    /// them ([`Node::leave`]).
    ///
    /// [`Node::begin_leave`]: super::Node::begin_leave
    /// [`Node::leave`]: super::Node::leave
    pub leave_timeout: Time,
    /// How often a busy node sends what its jobs changed of the shared
    /// values (an incumbent found mid-run prunes other nodes' searches
    /// only once they hear of it); an idle one sends at each idle check.
    /// `None`: only at idle checks. Real runs, and simulated runs that
    /// model shared values, use [`SHARED_NEWS_EVERY`].
    pub shared_news_every: Option<Time>,
}

/// How often a busy node's news of the shared values go out in a real
/// run (and in a simulated one that models them): an incumbent found
/// mid-run reaches the others within 2 ms, busy or not.
pub const SHARED_NEWS_EVERY: Time = 2_000_000;

/// How a victim treats the jobs it lost to thieves when they are late or
/// fail (see `stragglers.rs` and `health.rs`). The defaults are GRID
/// superscalar's: soft timeout 1.25 × the estimate, hard 2 ×, a node
/// dropped after 3 strikes.
#[derive(Clone, Debug)]
pub struct Stragglers {
    /// An idle node runs a copy of a late job it lost to a thief (or gives
    /// one to an idle thief); the first result wins, the other copy is
    /// aborted.
    pub duplicates: bool,
    /// A job is worth a copy once it ran this long at least, and past its
    /// soft timeout: tiny jobs are never copied.
    pub duplicate_after: Time,
    /// The expected duration of a stolen job, if the user knows it; else
    /// it is learned per depth of the tree from the jobs that came back.
    pub expect: Option<Time>,
    /// Past `soft × estimate` the victim asks the thief whether the job
    /// still runs; no answer, or "no", and it runs again.
    pub soft: f64,
    /// Past `hard × estimate` the copy is aborted and the job runs again
    /// (with a learned estimate, only if the jobs it comes from took
    /// similar times).
    pub hard: f64,
    /// How long a status question may go unanswered.
    pub answer_timeout: Time,
    /// Attempts after the first for a job that fails (panics) on a thief;
    /// 0: a failure propagates at once, as a panic does locally.
    pub retries: u32,
    /// Strikes (timeouts, lost or failed jobs) within `strike_window` that
    /// drop a node: it gets no work for `cool_down` (doubled at each drop).
    pub drop_after: u32,
    /// How long a strike against a node counts.
    pub strike_window: Time,
    /// How long a dropped node gets no work before it is tried again.
    pub cool_down: Time,
    /// A node dropped this often leaves the run.
    pub max_drops: u32,
}

impl Default for Stragglers {
    fn default() -> Self {
        Stragglers {
            duplicates: true,
            duplicate_after: 50_000_000,
            expect: None,
            soft: 1.25,
            hard: 2.0,
            answer_timeout: 1_000_000_000,
            retries: 0,
            drop_after: 3,
            strike_window: 60_000_000_000,
            cool_down: 10_000_000_000,
            max_drops: 8,
        }
    }
}

impl Stragglers {
    /// Refuses factors that make no sense: a soft timeout must come after
    /// the estimate, and the hard one after the soft one.
    pub fn check(&self) -> Result<(), String> {
        if !(self.soft > 1.0 && self.soft.is_finite()) {
            return Err(format!("the soft timeout factor must be above 1 (got {})", self.soft));
        }
        if !(self.hard > self.soft && self.hard.is_finite()) {
            return Err(format!(
                "the hard timeout factor must be above the soft one, {} (got {})",
                self.soft, self.hard
            ));
        }
        if self.drop_after == 0 {
            return Err("a node must be dropped after at least one strike".into());
        }
        Ok(())
    }
}

impl Config {
    /// The shortest job worth publishing `elapsed` into the run: at least
    /// [`Config::publish_after`], and a [`PUBLISH_FRACTION`]-th of the run
    /// so far (none: publish nothing). The core applies it to each local
    /// job that finished; a driver's executor may apply it first, so as
    /// not to hand the core results it would not publish.
    pub fn publish_threshold(&self, elapsed: Time) -> Option<Time> {
        self.publish_after.map(|min| min.max(elapsed / Time::from(PUBLISH_FRACTION)))
    }

    /// Whether executors keep the results of orphan jobs (whose parent's
    /// node died) for the table: only the table's runs do.
    pub fn keeps_orphans(&self) -> bool {
        self.ft == FtMode::Table
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            ft: FtMode::Table,
            steal: StealPolicy::ClusterAware,
            pointer_threshold: 1024,
            table_capacity: None,
            steal_backoff: 5_000_000,
            steal_timeout: None,
            checkpoint_interval: None,
            checkpoint_first: None,
            publish_after: Some(1_000_000_000),
            stragglers: Stragglers::default(),
            table: TablePlacement::Auto,
            quorum: QuorumConfig::default(),
            sequence: false,
            supervised_output: false,
            max_rejoins: 3,
            rejoins: 0,
            join_wait: 10_000_000_000,
            figures_every: None,
            leave_timeout: 30_000_000_000,
            shared_news_every: None,
        }
    }
}
