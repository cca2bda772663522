//! What a simulated run reports.

/// Outcome and counters of one simulated run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Report {
    /// The seed the run was made from.
    pub seed: u64,
    /// How long each of the quorum's messages took from its sender to its
    /// receiver, nanoseconds, where links queue (`Lanes`; not in the JSON;
    /// see [`Report::beat_delay`]).
    pub beat_delays: Vec<u64>,
    /// Nodes that took part (those that joined or started over included).
    pub nodes: u64,
    /// Virtual time at which the answer (or the failure) appeared.
    pub virtual_seconds: f64,
    /// Leaf executions, duplicates included.
    pub leaves_executed: u64,
    /// Leaves in the tree: the executions a fault-free run needs.
    pub leaves_needed: u64,
    /// The run's answer, if it printed one.
    pub answer: Option<u64>,
    /// Terminated with the fault-free answer.
    pub result_ok: bool,
    /// Why the run ended without the right answer, if it did.
    pub failure: Option<String>,
    /// Jobs stolen (all nodes).
    pub jobs_stolen: u64,
    /// Largest table replica at the end.
    pub table_entries: u64,
    /// Entries of every node's replica together (the mean is this over `nodes`).
    pub table_entries_total: u64,
    /// Lookups that found the value in the table (all nodes).
    pub table_hits: u64,
    /// Jobs re-queued after their thief was lost (all nodes).
    pub redone: u64,
    /// Finished parts of orphan jobs kept in the table (all nodes).
    pub orphans_saved: u64,
    /// Messages sent (all nodes).
    pub messages: u64,
    /// Of `messages`: steal requests and replies, and table traffic
    /// (updates, questions to homes, fetches).
    pub steal_messages: u64,
    /// Table messages: updates, questions to homes, fetches.
    pub table_messages: u64,
    /// Bytes sent (all nodes).
    pub bytes: u64,
    /// Recomputations of a result that a live node had published long enough
    /// before to be in the recomputing node's table replica.
    pub violations: u64,
    /// Recomputations, by a lookup of a newer epoch, of a job that a live
    /// node had announced as running long enough before (it should have
    /// been waited for).
    pub running_recomputed: u64,
    /// Lookups answered by waiting for a job still running elsewhere.
    pub adopted: u64,
    /// Waits for a job on a node found stalled that were given up.
    pub adoptions_given_up: u64,
    /// Checkpoint records written and loaded (all nodes), the file's
    /// largest size, opens that repaired a damaged file.
    pub records_written: u64,
    /// Checkpoint records loaded when a coordinator opened the file.
    pub records_loaded: u64,
    /// The checkpoint file's largest size, bytes.
    pub checkpoint_file_bytes: u64,
    /// Opens that repaired a damaged file.
    pub checkpoint_repairs: u64,
    /// Nodes that stopped for a suspend, and how often the run started again.
    pub suspended: u64,
    /// How often the run started again after every node was gone.
    pub restarts: u64,
    /// Leaf executions done by nodes that later crashed (their unreturned
    /// results died with them).
    pub leaves_on_crashed: u64,
    /// Copies of late jobs started, won, aborted, and the time the aborted
    /// ones had run (all nodes, seconds).
    pub duplicates_started: u64,
    /// Copies that delivered their result first.
    pub duplicates_won: u64,
    /// Copies aborted because another finished first.
    pub duplicates_aborted: u64,
    /// Seconds the aborted copies had run.
    pub loser_seconds: f64,
    /// Soft-timeout status questions, jobs found lost, hard timeouts,
    /// retries of failed jobs, drops of nodes.
    pub status_checks: u64,
    /// Jobs found lost by a status question.
    pub jobs_lost: u64,
    /// Jobs aborted at their hard timeout.
    pub hard_timeouts: u64,
    /// Hard timeouts a node waived, its own workers stalled meanwhile.
    pub hard_timeouts_waived: u64,
    /// Failed jobs retried.
    pub retried: u64,
    /// Nodes dropped.
    pub drops: u64,
    /// Results that reached a waiting parent a second time (must stay 0).
    pub completed_twice: u64,
    /// Distinct answers decided and printed (log entries; must stay at
    /// most 1). A master that printed the answer and was cut off before
    /// anyone heard of it has its answer printed again by the next one:
    /// `answers` counts every print.
    pub decisions: u64,
    /// Answers printed, nodes removed by the
    /// majority while alive, nodes that gave up without a majority,
    /// elections started, members removed by leaders, and the messages of
    /// the membership protocol (beats, votes, log entries; in `messages`).
    pub answers: u64,
    /// Nodes the majority removed while they were alive.
    pub expelled: u64,
    /// Nodes that gave up without a majority.
    pub gave_up: u64,
    /// Joiners that gave up before they were admitted (their contact
    /// died, closed, refused or never answered).
    pub joins_given_up: u64,
    /// Elections started.
    pub elections: u64,
    /// Members removed by leaders.
    pub removals: u64,
    /// Messages of the membership protocol (beats, votes, log entries).
    pub quorum_messages: u64,
    /// Messages carrying shared values (the model incumbent; see
    /// `shared.rs`).
    pub shared_messages: u64,
    /// When the answer was decided: pairs of nodes in the run where the
    /// greatest value one node's jobs offered was neither at the other,
    /// on its way there, nor still news at the sender (must stay 0).
    pub shared_missing: u64,
    /// The greatest value of the model incumbent on the master when the
    /// answer was decided.
    pub shared_value: u64,
    /// With `run_to_end`: nodes still there at the end (they wait forever).
    pub stuck: u64,
    /// Removed nodes that started over as new ones.
    pub rejoined: u64,
    /// Answers shown: by the run's origin (its first master), or by a
    /// master that could not count on it (see `proto/node/origin.rs`).
    pub shown: u64,
    /// Of those, shown by a node that did not end the run as master (the
    /// origin, after the master changed).
    pub shown_by_others: u64,
    /// Per node, in id order.
    pub per_node: Vec<PerNode>,
}

/// What one simulated node did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PerNode {
    /// Leaves executed, and when each started (virtual nanoseconds).
    pub leaves: u64,
    pub started_at: Vec<u64>,
    /// Strikes against it (timeouts, lost and failed jobs) and its drops.
    pub strikes: u64,
    pub drops: u32,
}

impl Report {
    /// Redundant leaf work: executions beyond the needed ones, as a fraction.
    pub fn redundancy(&self) -> f64 {
        self.leaves_executed as f64 / self.leaves_needed.max(1) as f64 - 1.0
    }

    /// One JSON object (no dependencies: the fields are numbers and one string).
    pub fn to_json(&self) -> String {
        let failure = match &self.failure {
            Some(f) => format!("\"{}\"", f.replace('\\', "\\\\").replace('"', "\\\"")),
            None => "null".into(),
        };
        format!(
            "{{\"seed\":{},\"nodes\":{},\"virtual_seconds\":{:.3},\"leaves_executed\":{},\"leaves_needed\":{},\"result_ok\":{},\"failure\":{},\"jobs_stolen\":{},\"table_entries\":{},\"table_entries_total\":{},\"table_hits\":{},\"redone\":{},\"orphans_saved\":{},\"messages\":{},\"steal_messages\":{},\"table_messages\":{},\"bytes\":{},\"violations\":{},\"running_recomputed\":{},\"adopted\":{},\"adoptions_given_up\":{},\"records_written\":{},\"records_loaded\":{},\"checkpoint_file_bytes\":{},\"checkpoint_repairs\":{},\"suspended\":{},\"restarts\":{},\"leaves_on_crashed\":{},\"duplicates_started\":{},\"duplicates_won\":{},\"duplicates_aborted\":{},\"loser_seconds\":{:.3},\"status_checks\":{},\"jobs_lost\":{},\"hard_timeouts\":{},\"hard_timeouts_waived\":{},\"retried\":{},\"drops\":{},\"completed_twice\":{},\"decisions\":{},\"answers\":{},\"expelled\":{},\"gave_up\":{},\"joins_given_up\":{},\"elections\":{},\"removals\":{},\"quorum_messages\":{},\"shared_messages\":{},\"shared_missing\":{},\"shared_value\":{},\"stuck\":{},\"rejoined\":{},\"shown\":{},\"shown_by_others\":{}}}",
            self.seed,
            self.nodes,
            self.virtual_seconds,
            self.leaves_executed,
            self.leaves_needed,
            self.result_ok,
            failure,
            self.jobs_stolen,
            self.table_entries,
            self.table_entries_total,
            self.table_hits,
            self.redone,
            self.orphans_saved,
            self.messages,
            self.steal_messages,
            self.table_messages,
            self.bytes,
            self.violations,
            self.running_recomputed,
            self.adopted,
            self.adoptions_given_up,
            self.records_written,
            self.records_loaded,
            self.checkpoint_file_bytes,
            self.checkpoint_repairs,
            self.suspended,
            self.restarts,
            self.leaves_on_crashed,
            self.duplicates_started,
            self.duplicates_won,
            self.duplicates_aborted,
            self.loser_seconds,
            self.status_checks,
            self.jobs_lost,
            self.hard_timeouts,
            self.hard_timeouts_waived,
            self.retried,
            self.drops,
            self.completed_twice,
            self.decisions,
            self.answers,
            self.expelled,
            self.gave_up,
            self.joins_given_up,
            self.elections,
            self.removals,
            self.quorum_messages,
            self.shared_messages,
            self.shared_missing,
            self.shared_value,
            self.stuck,
            self.rejoined,
            self.shown,
            self.shown_by_others
        )
    }
}

impl Report {
    /// The `q`-quantile (0 to 1) of the quorum's messages' delays, in
    /// nanoseconds (0 if none was sent).
    pub fn beat_delay(&self, q: f64) -> u64 {
        let mut d = self.beat_delays.clone();
        d.sort_unstable();
        d.get(((d.len() as f64 - 1.0) * q.clamp(0.0, 1.0)).round() as usize).copied().unwrap_or(0)
    }
}
