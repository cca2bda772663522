//! The per-node protocol state machine, one file per concern:
//!
//! | file | concern |
//! |---|---|
//! | `mod.rs` | the `Node` type, its configuration and outputs, message dispatch |
//! | `membership.rs` | static start, admission, graceful leave |
//! | `joining.rs` | a joiner's way in: asking its contact, asking again, giving up |
//! | `quorum.rs` | the run's log (`proto/quorum`) applied to the node: masters, members, removals, the answer, minorities |
//! | `stealing.rs` | steal requests and replies, victim choice, back-off |
//! | `results.rs` | results of stolen and local jobs, the table, lookups, adoption of running jobs |
//! | `recovery.rs` | a peer's death: new master, orphans, re-queued work, root restart |
//! | `checkpoint.rs` | the checkpoint coordinator: batches, writes, resume, suspend |
//! | `stragglers.rs` | late stolen jobs: estimates, soft and hard timeouts, duplicates, first result wins, retries |
//! | `root_copy.rs` | a stalled master: an idle node asks how it fares and runs a copy of the root |
//! | `adoptions.rs` | a stalled node whose running job a lookup waits for: an idle node asks how it fares and ends the wait |
//! | `pace.rs` | a peer's recent rate of work, from its status answers (for `root_copy.rs` and `adoptions.rs`) |
//! | `health.rs` | strikes against nodes whose jobs time out, get lost or fail; drops and re-admission |
//! | `sequence.rs` | a program's successive annotated calls as successive runs of one cluster |

mod adoptions;
mod answer;
mod checkpoint;
mod config;
mod figures;
mod health;
mod homes;
mod joining;
mod ledger;
mod membership;
mod origin;
mod pace;
mod quorum;
mod recovery;
mod results;
mod root;
mod root_copy;
mod sequence;
mod shared;
mod stats;
mod stealing;
mod stragglers;
mod timers;

pub use crate::msg::NodeFigures;
pub use config::{Config, FtMode, StealPolicy, Stragglers, PUBLISH_FRACTION, SHARED_NEWS_EVERY};
pub use health::HealthReport;
pub use homes::{TablePlacement, DEFAULT_REPLICAS, HOME_TABLE_FROM};
pub use joining::JoinFailure;
pub use stats::NodeStats;
pub use timers::Timer;

use bytes::Bytes;
use std::collections::{BTreeSet, VecDeque};

use super::msg::{ClusterId, JobSpec, Msg, NodeId};
use super::quorum::{Quorum, QuorumConfig};
use super::rng::SplitMix64;
use super::roster::{Members, Roster};
use super::table::{ResultTable, SharedTable};
use super::Executor;
use crate::JobKey;

/// Nanoseconds since the driver's epoch (virtual time in the simulator).
pub type Time = u64;

/// What the driver must do.
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use]
pub enum Action {
    /// Send `msg` to node `to`.
    Send {
        /// The receiver.
        to: NodeId,
        /// The message.
        msg: Msg,
    },
    /// To every live member except this node.
    Broadcast {
        /// The message.
        msg: Msg,
    },
    /// The root job finished here (this node is the master): the answer.
    Done {
        /// The encoded answer.
        value: Bytes,
        /// This node shows it (see `origin.rs`): the run's origin is gone
        /// or may not get it.
        shows: bool,
    },
    /// The master ended the run; `value` is the root job's result if it
    /// was small enough to travel with the news.
    Finished {
        /// The encoded answer, if it travelled.
        value: Option<Bytes>,
        /// This node shows it: it is the run's origin (see `origin.rs`).
        shows: bool,
    },
    /// A node's figures reached this master (see `figures.rs`).
    PeerFigures {
        /// The node.
        from: NodeId,
        /// What it reported.
        figures: NodeFigures,
    },
    /// The master's board reached this node, which serves a dashboard
    /// (see `figures.rs`).
    MasterBoard {
        /// The master.
        from: NodeId,
        /// Its board (JSON).
        board: Bytes,
    },
    /// The run cannot go on (a crash with `FtMode::None`).
    Failed {
        /// Why.
        reason: String,
    },
    /// This node is finished (terminated or left): stop driving it.
    Stop,
    /// Open the checkpoint file (reading and repairing it) and answer with
    /// [`Node::handle_checkpoint_opened`].
    CheckpointOpen,
    /// Append `records` to the checkpoint file, make them durable, and
    /// answer with [`Node::handle_checkpoint_written`] (`seq` names the
    /// write).
    CheckpointWrite {
        /// Names the write in its answer.
        seq: u64,
        /// The records to append.
        records: Vec<crate::checkpoint::Record>,
    },
    /// The run is suspended: everything this node finished is with the
    /// coordinator (and, on the coordinator, in the file). Exit; the same
    /// command resumes.
    Suspended,
    /// `peer` is out of the run here (removed, or its process is gone):
    /// close every connection with it and take nothing more from it.
    Forget {
        /// The node to forget.
        peer: NodeId,
    },
    /// A majority removed this node (it was cut off, or deposed as
    /// master): it is out of the run. `carry` holds the results it
    /// finished, for the run to reuse if the process joins again as a new
    /// node — which it does if `rejoin` (fewer than
    /// [`Config::max_rejoins`] times so far).
    Expelled {
        /// The member that said so.
        by: NodeId,
        /// (key, encoded value, where in the tree) of each result finished here.
        carry: Vec<(crate::JobKey, Vec<u8>, crate::checkpoint::ResultMeta)>,
        /// Whether the process starts over as a new node.
        rejoin: bool,
        /// How many times a majority has removed this process, this time
        /// included (the count [`Config::max_rejoins`] bounds).
        removals: u32,
    },
    /// Hand this node's figures to [`Node::share_figures`] (see
    /// `figures.rs`; every [`Config::figures_every`]).
    ShareFigures,
    /// Calls that run at least `after` are published from now on: the
    /// threshold grows with the run, so a long run publishes only its
    /// longer calls and their number stays bounded
    /// ([`Config::publish_threshold`]).
    PublishAfter {
        /// Nanoseconds.
        after: Time,
    },
    /// This joiner gives up before it was admitted (see `joining.rs`): its
    /// contact refused it, closed, died, or never answered. The run goes
    /// on without it.
    CannotJoin {
        /// Why.
        why: JoinFailure,
    },
    /// This node has had no majority for the configured wait: the run goes
    /// on elsewhere, or nowhere. It never printed an answer.
    LostMajority {
        /// How long the node waited for a majority.
        waited: Time,
    },
    /// Who leads the run, or whether this member has a majority, changed
    /// (the moments a user watching a partition wants to see): said once
    /// per change, after the actions of the input that made it, and only
    /// by a member (a joiner not yet admitted says nothing).
    Leadership {
        /// The leader this member follows now, if any.
        leader: Option<NodeId>,
        /// This member hears from no majority of the voters: it takes no
        /// new work until it does.
        in_minority: bool,
        /// What was said before (`(None, false)` at first).
        before: (Option<NodeId>, bool),
    },
}

/// Result of a table lookup by a redone job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// The value was in the table: the job need not run.
    Hit(Bytes),
    /// Nothing known: run the job.
    Miss,
    /// Fetching from the holder, or waiting for a running job of an older
    /// epoch to finish; the answer comes through [`Executor::lookup_done`].
    Pending,
}

/// A lookup waiting for a value from another node.
#[derive(Clone, Copy, Debug)]
struct Fetching {
    /// The node asked: a pointer's holder, or where the job runs.
    holder: NodeId,
    /// For an adoption, the running job's epoch.
    adopt: Option<u32>,
    /// The epoch of the lookup that asked (to look again if the holder dies).
    epoch: u32,
    /// Whether the lookup has asked the homes again already (see
    /// `look_again`): once is enough, and bounds a loop between a stale
    /// pointer at a home and a holder that has no value.
    again: bool,
}

/// A lookup waiting for the homes of its key to answer.
#[derive(Clone, Debug)]
struct Asking {
    /// The lookup's epoch.
    epoch: u32,
    /// The homes yet to answer.
    homes: Vec<NodeId>,
    /// Whether this is the lookup's second question (see [`Fetching`]).
    again: bool,
}

/// A job this node lost to a thief — or a copy of one, run by an idle
/// thief or by this node itself: enough to run it again.
#[derive(Clone, Debug)]
struct Stolen {
    thief: NodeId,
    /// `spec.stamp` names this copy; `orig` the steal the executor waits
    /// for (the same for the first copy).
    spec: JobSpec,
    orig: u64,
    since: Time,
    /// A status question is out since then (soft timeout).
    asked: Option<Time>,
    /// The thief last said it still runs the job then.
    confirmed: Option<Time>,
    /// Status answers "still running" so far (questions grow sparser).
    checks: u32,
    /// What the job's function asks for (its estimate, its retries).
    policy: super::JobPolicy,
    /// This node's own progress (work, busy time) when the job was lost:
    /// a node whose own workers stalled since cannot judge the thief's.
    ours_at: (u64, u64),
    /// What the hard timeout counts from: `since`, or the last time it
    /// was waived (this node's own workers had stalled).
    hard_from: Time,
}

/// A job this node runs for another node.
#[derive(Clone, Copy, Debug)]
struct Running {
    key: JobKey,
    epoch: u32,
    depth: u32,
    parent: u64,
    /// Its `Running` mark was broadcast (see `results.rs`).
    announced: bool,
}

/// The protocol state of one node. See the module docs for the contract.
pub struct Node {
    id: NodeId,
    cluster: ClusterId,
    config: Config,
    /// The members and which of them are alive (see `roster.rs`).
    roster: Roster,
    master: NodeId,
    /// The replicated root job; its `epoch` counts the restarts so far.
    root: Option<JobSpec>,
    /// The roots this node's executor was told to run (see `root.rs`).
    root_starts: root::Starts,
    rng: SplitMix64,
    /// Jobs between this node and others: stolen from it, run for others.
    ledger: ledger::Ledger,
    table: ResultTable,
    /// Homes per table key; 0: every entry goes to every node.
    table_replicas: usize,
    joined: bool,
    /// Nodes that asked this one to join and are no members yet: told if
    /// the run is suspended before they are admitted (`joining.rs`).
    knocking: BTreeSet<NodeId>,
    stopped: bool,
    /// Leaving once the jobs started here are finished (see `begin_leave`).
    draining: bool,
    actions: VecDeque<Action>,
    /// (leader, in minority) as last said in [`Action::Leadership`].
    leadership_said: (Option<NodeId>, bool),
    stats: NodeStats,
    checkpoint: Option<checkpoint::Checkpoint>,
    /// Leadership, membership and the answer, decided by a majority.
    quorum: Quorum,
    /// Masters this node saw replaced: their orphans run on, for the
    /// restarted root to adopt.
    deposed: BTreeSet<NodeId>,
    /// Every deadline of this node (see `timers.rs`).
    timers: timers::TimerTable,
    /// The publication threshold last given to the driver.
    published_after: Option<Time>,
    /// Nodes that serve a dashboard of this master's board (`figures.rs`).
    board_watchers: BTreeSet<NodeId>,
    /// Changes to the membership this node applied (the simulator watches).
    roster_changes: u64,
    /// This node as a thief.
    steal: stealing::Stealing,
    /// Lookups waiting for other nodes, and nodes waiting for jobs here.
    lookups: results::Lookups,
    /// Late, failing and slow work, and the health of other nodes.
    late: stragglers::LateJobs,
    /// The master's pace as this node sees it, and a copy of its root.
    root_copy: root_copy::RootCopy,
    holders: adoptions::Holders,
    /// The program's runs so far and the current answer.
    runs: sequence::Runs,
    /// A joiner's way in.
    join: joining::Joining,
}

impl Node {
    fn new(id: NodeId, cluster: ClusterId, config: Config, seed: u64) -> Node {
        let table = ResultTable::new(config.table_capacity);
        let quorum = Quorum::joining(id, config.quorum, seed);
        Node {
            id,
            cluster,
            roster: Roster::new(id, cluster, Members::new(&[])),
            master: id,
            root: None,
            rng: SplitMix64::new(seed ^ id.wrapping_mul(0x9E37_79B9_7F4A_7C15)),
            table,
            table_replicas: 0,
            joined: false,
            knocking: BTreeSet::new(),
            stopped: false,
            draining: false,
            actions: VecDeque::new(),
            leadership_said: (None, false),
            stats: NodeStats::default(),
            // Checkpoints save what the result table gets.
            checkpoint: config
                .checkpoint_interval
                .filter(|_| config.ft == FtMode::Table)
                .map(checkpoint::Checkpoint::new),
            config,
            ledger: Default::default(),
            steal: Default::default(),
            lookups: Default::default(),
            late: Default::default(),
            root_copy: Default::default(),
            root_starts: Default::default(),
            holders: Default::default(),
            runs: Default::default(),
            join: Default::default(),
            quorum,
            deposed: BTreeSet::new(),
            timers: Default::default(),
            published_after: None,
            board_watchers: BTreeSet::new(),
            roster_changes: 0,
        }
    }

    /// This node's id.
    pub fn id(&self) -> NodeId {
        self.id
    }

    /// The master as this node knows it.
    pub fn master(&self) -> NodeId {
        self.master
    }

    /// Whether this node is finished (it asked to stop being driven:
    /// [`Action::Stop`]).
    pub fn stopped(&self) -> bool {
        self.stopped
    }

    /// Whether this node is a member of the run yet (a joiner is not until
    /// its contact welcomes it).
    pub fn joined(&self) -> bool {
        self.joined
    }

    /// Whether this node is the master.
    pub fn is_master(&self) -> bool {
        self.master == self.id
    }

    /// This node's counters.
    pub fn stats(&self) -> &NodeStats {
        &self.stats
    }

    /// How many entries this node's replica of the result table holds.
    pub fn table_len(&self) -> usize {
        self.table.len()
    }

    /// The replicated root job, once this node knows it.
    pub fn root_job(&self) -> Option<&JobSpec> {
        self.root.as_ref()
    }

    /// How often the root job has been restarted (the current epoch).
    pub fn root_epoch(&self) -> u32 {
        // Between runs, or with a program behind the run: what the next
        // root will have at least.
        self.root.as_ref().map_or(self.runs.last_epoch, |r| r.epoch)
    }

    /// A read-only view of this replica, for threads that look up results
    /// while the driver owns the node (real runs' worker threads).
    pub fn shared_table(&mut self) -> SharedTable {
        self.table.share()
    }

    /// How often this node's membership changed (joins, removals, deaths).
    pub fn roster_changes(&self) -> u64 {
        self.roster_changes
    }

    /// A one-line summary of the protocol state, for debugging stuck runs.
    pub fn summary(&self) -> String {
        format!(
            "master {}, quorum {{{}}}, answer {:?}, stopped {}, stolen {:?}, running_for {:?}, orphans {}, fetching {:?}, asking {:?}, awaiting {}, local {:?}, wide {:?}, alive {:?}",
            self.master,
            self.quorum.summary(),
            self.runs.proposed.as_ref().map(Bytes::len),
            self.stopped,
            self.ledger.stolen.iter().map(|(s, e)| (*s, e.thief)).collect::<Vec<_>>(),
            self.ledger.running_for.keys().collect::<Vec<_>>(),
            self.ledger.orphans.len(),
            self.lookups.fetching.iter().map(|(k, f)| (*k, *f, self.table.get(k).cloned())).collect::<Vec<_>>(),
            self.lookups.asking,
            self.lookups.awaiting.len(),
            self.steal.local,
            self.steal.wide,
            self.live_members().collect::<Vec<_>>()
        )
    }

    /// What this replica knows of `key`, for debugging.
    pub fn debug_key(&self, key: &JobKey) -> String {
        format!(
            "table {:?}, fetching {:?}, runs {}, epoch {}",
            self.table.get(key),
            self.lookups.fetching.get(key),
            self.ledger.running_for.values().chain(self.ledger.orphans.values()).any(|r| r.key == *key),
            self.root_epoch()
        )
    }

    /// Live members, this node included.
    pub fn live_members(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.roster.live()
    }

    /// Starts the run: the master starts the root job — once it has read
    /// the checkpoint file, if there is one (the run may be a resumed one).
    pub fn start(&mut self, now: Time, exec: &mut impl Executor) {
        self.start_checkpoints(now);
        if let Some(every) = self.config.figures_every {
            self.timers.set(Timer::Figures, now + every);
        }
        if let Some(every) = self.config.shared_news_every {
            self.timers.set(Timer::SharedNews, now + every);
        }
        if !self.joined {
            self.start_joining(now);
            return;
        }
        self.quorum.start(now);
        self.pump_quorum(now, exec);
        self.timers.set(Timer::Quorum, self.quorum.next_tick(now));
        if self.is_master() && !self.opens_checkpoint() {
            if let Some(root) = self.root.clone() {
                self.start_root(root, exec);
            }
        }
    }

    /// The next thing to do, if any.
    pub fn poll_action(&mut self) -> Option<Action> {
        if self.actions.is_empty() {
            self.note_leadership();
        }
        self.actions.pop_front()
    }

    /// [`Action::Leadership`] if who leads or whether this member has a
    /// majority changed since it was last said.
    fn note_leadership(&mut self) {
        let now = (self.leader(), self.in_minority());
        if now == self.leadership_said || !self.joined {
            return;
        }
        let before = std::mem::replace(&mut self.leadership_said, now);
        self.actions.push_back(Action::Leadership { leader: now.0, in_minority: now.1, before });
    }

    // ---- inputs -------------------------------------------------------

    /// A message from node `from`.
    pub fn handle_message(&mut self, now: Time, from: NodeId, msg: Msg, exec: &mut impl Executor) {
        if self.stopped {
            return;
        }
        self.quorum.heard(now, from);
        self.heard_from(now, from);
        match msg {
            // A node gathering a first membership that arrives once the
            // run is under way joins it as any other.
            Msg::Join { cluster } | Msg::Gather { cluster, .. } => {
                if self.knocked(from) {
                    self.quorum.join(now, from, cluster);
                    self.pump_quorum(now, exec);
                }
            }
            Msg::Welcome { members, master, origin, root, table_replicas, quorum } => {
                self.origin_from_welcome(origin);
                self.welcomed(now, members, master, root, table_replicas, quorum, exec);
            }
            Msg::Quorum(q) => {
                self.quorum.handle(now, from, q);
                self.pump_quorum(now, exec);
            }
            Msg::Leave => self.handle_peer_dead(now, from, exec),
            Msg::StealRequest { id, holds } => self.steal_request(now, from, id, &holds, exec),
            Msg::StealReply { id, job } => self.steal_reply(now, from, id, job, exec),
            Msg::JobResult { stamp, key, value } => self.job_result(now, from, stamp, key, value, exec),
            Msg::RootResult { run, epoch, key, value } => self.root_result(now, (run, epoch, key), value, exec),
            // The first membership this node started from, passed on again.
            Msg::Roster { .. } => {}
            Msg::TablePut { key, entry, meta } => self.table_put(from, key, entry, meta, exec),
            Msg::NotRunning { key, epoch } => self.table.not_running(&key, from, Some(epoch)),
            Msg::TableSync { entries } => {
                for (key, entry, meta) in entries {
                    self.table_put(from, key, entry, meta, exec);
                }
            }
            Msg::HandOver { results } => {
                for (key, value) in results {
                    let meta = self.table.meta(&key).unwrap_or(crate::checkpoint::ResultMeta::UNKNOWN);
                    self.table.put(key, super::Entry::Value(value.into()), meta);
                }
            }
            Msg::Fetch { key, running } => self.fetch(from, key, running),
            Msg::TableGet { key } => self.table_get(from, key),
            Msg::TableGot { key, entry, running } => self.table_got(from, key, entry, running, exec),
            Msg::FetchReply { key, value } => self.fetch_reply(key, value, exec),
            // Sent by the master once a majority holds the answer.
            Msg::Terminate { run, value, shower, holder } => {
                self.answer_committed(now, run, value, shower, holder, exec)
            }
            Msg::AskAnswer { run } => self.answer_asked(from, run, exec),
            Msg::AnswerValue { run, value } => self.answer_value(now, from, run, value, exec),
            Msg::Shown { run } => self.answer_shown(now, run, exec),
            Msg::ProgramOver { runs } => self.program_ended_elsewhere(now, runs, exec),
            Msg::OriginMoved { was } => self.origin_moved(now, from, was),
            Msg::Figures(figures) => self.figures_from(from, figures),
            Msg::Board(board) => self.board_from(from, board),
            Msg::JobFailed { stamp, reason } => self.job_failed(now, from, stamp, reason, exec),
            Msg::JobRefused { stamp } => self.job_refused(from, stamp, exec),
            Msg::RunFailed { reason } => {
                self.actions.push_back(Action::Failed { reason });
                self.stop();
            }
            Msg::CheckpointBatch { records, last } => self.checkpoint_batch(from, records, last),
            Msg::SuspendRequest => self.suspend(now),
            Msg::Suspend => self.suspend_ordered(from),
            Msg::Shared(values) => exec.merge_shared(values),
            Msg::JobStatus { stamp: root_copy::ROOT_STAMP } => self.answer_root_status(from, exec),
            Msg::JobStatus { stamp } => {
                let running = self.ledger.running_for.contains_key(&(from, stamp));
                let progress = exec.progress();
                self.actions
                    .push_back(Action::Send { to: from, msg: Msg::JobStatusReply { stamp, running, progress } });
            }
            Msg::JobStatusReply { stamp: root_copy::ROOT_STAMP, running, progress } => {
                self.root_status(now, from, running, progress)
            }
            Msg::JobStatusReply { stamp: adoptions::ADOPTION_STAMP, progress, .. } => {
                self.holder_status(now, from, progress, exec)
            }
            Msg::JobStatusReply { stamp, running, progress } => {
                self.record_progress(from, progress);
                self.status_reply(now, from, stamp, running, exec)
            }
            Msg::AbortJob { stamp } => self.abort_job(from, stamp, exec),
            Msg::NodeDropped { node, for_ns, drops } => self.node_dropped(now, node, for_ns, drops, exec),
            Msg::RootWanted { run } => self.root_wanted(from, run),
            Msg::RootGiven { run, root } => self.root_given(from, run, root),
        }
    }

    /// When the driver must call [`Node::handle_timeout`]: the earliest
    /// deadline of the node's timers ([`Timer`]); `None`: no timer is set
    /// (or the node stopped).
    pub fn poll_timeout(&self) -> Option<Time> {
        if self.stopped {
            return None;
        }
        self.timers.next()
    }

    /// The deadline [`Node::poll_timeout`] gave is due (or past): every
    /// timer due at `now` goes off. A call with nothing due does nothing.
    pub fn handle_timeout(&mut self, now: Time, exec: &mut impl Executor) {
        let mut idle = false;
        for (timer, at) in self.timers.take_due(now) {
            if self.stopped {
                return;
            }
            match timer {
                Timer::Quorum => {
                    self.quorum.tick(now);
                    self.pump_quorum(now, exec);
                    self.timers.set(Timer::Quorum, self.quorum.next_tick(now));
                    self.answers_tick(now, exec);
                }
                Timer::JoinRetry => self.retry_join(now),
                Timer::StealBackoff | Timer::Dropped => idle = true,
                Timer::StealReply => idle |= self.steal_replies_late(now),
                Timer::Checkpoint => self.checkpoint_tick(now, at),
                Timer::LateJobs => self.check_late_jobs(now, exec),
                Timer::Figures => self.figures_due(now),
                Timer::Leave => self.leave(now, exec),
                Timer::SharedNews => self.shared_news_due(now, exec),
            }
        }
        if idle && !self.stopped {
            self.handle_idle(now, exec);
        }
    }

    // ---- internals ----------------------------------------------------

    fn stop(&mut self) {
        if !self.stopped {
            self.stopped = true;
            self.timers.clear();
            self.actions.push_back(Action::Stop);
        }
    }

    fn is_alive(&self, id: NodeId) -> bool {
        self.roster.is_alive(id)
    }
}
