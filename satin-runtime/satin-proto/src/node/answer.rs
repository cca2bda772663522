//! Each run's answer: decided by the log, shown by exactly one node, and
//! its value sent only where a program needs it.
//!
//! The master's finished root becomes an `Answer` entry of the log
//! (`Change::Answer`) that names two nodes: the *shower*, the one process
//! that hands the answer to its program's output (the run's origin when
//! the master can count on it, else the master itself; see `origin.rs`),
//! and the *holder*, the master that proposed it and keeps its value. A
//! large value never rides in the log — every entry a follower has not
//! confirmed is sent again each beat — and goes to the shower alone
//! (`Msg::AnswerValue`), once.
//!
//! Once the entry commits, every node knows how run `k` ended, and:
//! - the shower hands its program the answer as soon as it has the
//!   value, and tells everyone it showed it (`Msg::Shown`) once its
//!   program has gone on past it — its next call, or its end (in a real
//!   run, the end of its process: `satin-net`'s `shown_at_exit.rs`).
//!   Before that nobody knows whether the answer reached the output;
//!   a shower killed in between has the master show it again: twice at
//!   worst, never not at all (without a sequence, handing is showing);
//! - the master (the leader) hands its program the answer only once the
//!   shower has shown it — or shows it itself if the shower is out of the
//!   run first: one crash never leaves a run without an answer, and two
//!   nodes show one only if the shower showed it and died before its news
//!   arrived;
//! - every other node's program waits. Every node runs the same program,
//!   so a program that goes on is the same everywhere: the others need an
//!   answer only to take over as master, and then fetch it
//!   (`Msg::AskAnswer`; recomputed from the table if nobody has it any
//!   more). When the master's or the shower's program ends
//!   (`Msg::ProgramOver`), the waiting programs end without it.
//!
//! Without a sequence (`Config::sequence` off: one call, nothing after
//! it) the followers end when the answer is shown, and the master once
//! the shower showed it.
//!
//! Under a supervisor (`Config::supervised_output`), which sees every
//! node's output, showing is not yet being out: a shower killed between
//! the two would leave no answer. There the waiting programs end only when
//! the supervisor holds the answer's output ([`Node::output_out`]), and a
//! shower dead for certain before that (its process ended) has the master
//! show the answer again — fetched, or recomputed from the table. The
//! supervisor prints one output; a fault-free run sends no extra byte.
//!
//! A large answer whose value the master's own program holds (the call it
//! made ran from its value there) need not be encoded at all when that
//! program shows it: the driver gives the core a stand-in
//! ([`Node::handle_root_held`]), which the core passes around as the value
//! — but never as a small one — and the driver encodes the real value
//! only for a message that carries it (`Msg::AnswerValue`, to a shower
//! elsewhere or to a node that asks), while the program still holds it.

use super::{Action, Node, NodeId, Time};
use crate::msg::{JobSpec, Msg};
use crate::Executor;
use bytes::Bytes;

/// How a run ended, as this node knows it.
#[derive(Debug, Clone)]
pub(super) struct Ended {
    /// The answer's value, if this node has it.
    pub(super) value: Option<Bytes>,
    /// The node that shows it.
    pub(super) shower: NodeId,
    /// The node that holds its value.
    pub(super) holder: NodeId,
    /// Somebody showed it (this node, or one that said so).
    pub(super) shown: bool,
}

impl Ended {
    /// Everything but the value.
    fn clone_but_value(&self) -> Ended {
        Ended { value: None, shower: self.shower, holder: self.holder, shown: self.shown }
    }
}

/// A question for an answer's value, out since `sent`.
#[derive(Debug, Clone)]
pub(super) struct Asking {
    pub(super) run: u32,
    /// Who was asked last.
    pub(super) to: NodeId,
    pub(super) sent: Time,
    /// Nodes that said they have none.
    pub(super) refused: Vec<NodeId>,
}

impl Node {
    /// The master's root finished with `value`: it goes into the log
    /// (only if small), naming the shower.
    pub(super) fn propose_answer(&mut self, now: Time, value: Bytes, exec: &mut impl Executor) {
        if self.runs.answer_due {
            // The answer was committed already and its value lost with
            // every node that had it: this root ran again to recompute it.
            self.runs.answer_due = false;
            let run = self.runs.handed + 1;
            let me = self.id;
            if let Some(ended) = self.runs.ended.get_mut(run as usize - 1) {
                if ended.value.is_none() {
                    // Computed again here: this node holds it now.
                    ended.value = Some(value);
                    ended.holder = me;
                }
            }
            self.advance_answers(now, exec);
            return;
        }
        let small = self.small_answer(&value);
        let shower = self.choose_shower();
        self.runs.proposed = Some(value);
        if self.quorum.propose_answer(now, self.runs.done + 1, small, shower) {
            self.pump_quorum(now, exec);
        }
    }

    /// The master, back in office after losing the majority for a while:
    /// an answer found meanwhile goes into the log now.
    pub(super) fn propose_again(&mut self, now: Time) {
        if let Some(value) = self.runs.proposed.clone() {
            let small = self.small_answer(&value);
            let shower = self.choose_shower();
            self.quorum.propose_answer(now, self.runs.done + 1, small, shower);
        }
    }

    /// What of an answer may ride in the log and in `Terminate`.
    fn small_answer(&self, value: &Bytes) -> Option<Bytes> {
        let stand_in = self.runs.held.as_ref().is_some_and(|h| h.as_ptr() == value.as_ptr() && h.len() == value.len());
        (value.len() <= self.config.pointer_threshold && !stand_in).then(|| value.clone())
    }

    /// The answer of run `run` is committed (from the log, or from the
    /// master's `Terminate`, whichever comes first).
    pub(super) fn answer_committed(
        &mut self,
        now: Time,
        run: u32,
        value: Option<Bytes>,
        shower: NodeId,
        holder: NodeId,
        exec: &mut impl Executor,
    ) {
        if run != self.runs.done + 1 {
            // Proposed twice (a master that lost and regained the
            // majority), or heard of through `Terminate` first.
            return;
        }
        let mine = holder == self.id;
        let value = if mine { self.runs.proposed.take().or(value) } else { value };
        if mine {
            let small = value.as_ref().and_then(|v| self.small_answer(v));
            self.actions
                .push_back(Action::Broadcast { msg: Msg::Terminate { run, value: small.clone(), shower, holder } });
            if let (false, None, Some(v)) = (shower == self.id, &small, &value) {
                self.actions
                    .push_back(Action::Send { to: shower, msg: Msg::AnswerValue { run, value: Some(v.clone()) } });
            }
        }
        let shown = self.runs.shown_early.remove(&run);
        let early = self.runs.values_early.remove(&run);
        let value = value.or(early);
        self.runs.ended.push(Ended { value, shower, holder, shown });
        self.runs.done = run;
        self.runs.last_epoch = self.root_epoch();
        self.runs.proposed = None;
        // The master's pace in this run says nothing of the next.
        self.forget_master_pace();
        if self.config.sequence {
            // Until the program's next call (its root stays in
            // `program_root`, for a recomputation).
            self.root = None;
        }
        self.advance_answers(now, exec);
    }

    /// Hands this node's program every answer it can have now, in order,
    /// and asks for a value it lacks and needs.
    pub(super) fn advance_answers(&mut self, now: Time, exec: &mut impl Executor) {
        while !self.stopped {
            let run = self.runs.handed + 1;
            // (Not a clone of the whole: the value may be megabytes.)
            let Some(ended) = self.runs.ended.get(run as usize - 1).map(Ended::clone_but_value) else {
                // The program ended elsewhere past this call before this
                // node heard how the run ended (the nodes that knew are
                // gone): it ends here too, where it waits — it would wait
                // for a majority that is no more.
                if self.config.sequence && self.runs.program_over.is_some_and(|over| over >= run) {
                    self.hand(run, None, false, false);
                }
                break;
            };
            let value = || self.runs.ended[run as usize - 1].value.clone();
            // The master in office (its `Lead` applied) stands in for a
            // shower that is out.
            let leader = self.quorum.is_leader() && self.is_master();
            let shower_out = ended.shower != self.id && !self.is_alive(ended.shower);
            let supervised = self.config.supervised_output;
            // Under a supervisor, a shower that died before its output was
            // out may have shown nothing that anyone will see.
            let shower_lost = supervised && shower_out && self.runs.gone.contains(&ended.shower);
            let shows = (!ended.shown || shower_lost) && (ended.shower == self.id || (shower_out && leader));
            let goes_on = shows || (leader && (ended.shown || shower_out));
            if goes_on {
                let needs_value = shows || self.config.sequence;
                match value() {
                    Some(value) => self.hand(run, Some(value), shows, ended.holder == self.id),
                    None if needs_value => {
                        self.ask_for_answer(now, run, exec);
                        break;
                    }
                    None => self.hand(run, None, false, false),
                }
            } else if leader {
                // The master waits until the shower has shown the answer.
                break;
            } else if supervised {
                // Waits for the supervisor's word (`output_out`).
                break;
            } else if !self.config.sequence && ended.shown {
                self.hand(run, value(), false, false);
            } else if self.config.sequence && self.runs.program_over.is_some() {
                // The program ended elsewhere: this one ends where it waits.
                self.hand(run, None, false, false);
            } else {
                break;
            }
        }
    }

    /// Gives the program answer `run`; `shows`: this node shows it;
    /// `decided`: this node decided it as master (else its program goes
    /// through a run that ended elsewhere).
    fn hand(&mut self, run: u32, value: Option<Bytes>, shows: bool, decided: bool) {
        self.runs.handed = run;
        self.runs.asking = None;
        if shows {
            if let Some(ended) = self.runs.ended.get_mut(run as usize - 1) {
                ended.shown = true;
            }
            // A program shows its answer after it has it: said once it
            // goes on — but under a supervisor, which sees the output and
            // has it shown again if need be, and without a sequence, where
            // handing is showing.
            if self.config.sequence && !self.config.supervised_output {
                self.runs.show_unannounced = Some(run);
            } else {
                self.actions.push_back(Action::Broadcast { msg: Msg::Shown { run } });
            }
        }
        let ends_here = !self.config.sequence || value.is_none();
        match value {
            Some(value) if decided => self.actions.push_back(Action::Done { value, shows }),
            value => self.actions.push_back(Action::Finished { value, shows }),
        }
        if ends_here {
            // Without a sequence the run was all; without the value, the
            // program ends where it waits.
            self.stop();
        } else {
            // The program goes on to its next call (or ends).
            self.runs.program_root = None;
        }
    }

    /// Asks a node that may have answer `run`'s value for it: its holder,
    /// its shower, the leader, then anyone; once all said no, the master
    /// computes it again (the table makes that quick).
    fn ask_for_answer(&mut self, now: Time, run: u32, exec: &mut impl Executor) {
        // A question out to a live node waits for its answer (`to` is
        // this node itself once the last one said no).
        if self.runs.asking.as_ref().is_some_and(|a| a.run == run && a.to != self.id && self.is_alive(a.to)) {
            return;
        }
        let Some(ended) = self.runs.ended.get(run as usize - 1) else { return };
        let refused = match self.runs.asking.take() {
            Some(a) if a.run == run => a.refused,
            _ => Vec::new(),
        };
        let first = [Some(ended.holder), Some(ended.shower), self.quorum.leader()];
        let candidates = first.into_iter().flatten().chain(self.live_members().collect::<Vec<_>>());
        let me = self.id;
        let mut next = None;
        for c in candidates {
            if c != me && self.is_alive(c) && !refused.contains(&c) {
                next = Some(c);
                break;
            }
        }
        match next {
            Some(to) => {
                self.actions.push_back(Action::Send { to, msg: Msg::AskAnswer { run } });
                self.runs.asking = Some(Asking { run, to, sent: now, refused });
            }
            None => self.recompute_answer(run, exec),
        }
    }

    /// Nobody has answer `run` any more: the master runs the root of that
    /// run again (its finished calls are in the table).
    fn recompute_answer(&mut self, run: u32, exec: &mut impl Executor) {
        self.runs.asking = None;
        if !self.is_master() || self.runs.answer_due {
            return;
        }
        let root = if self.config.sequence { self.runs.program_root.clone() } else { self.root.clone() };
        if let Some(root) = root.filter(|_| run == self.runs.handed + 1) {
            self.runs.answer_due = true;
            self.stats.redone += 1;
            self.start_root(JobSpec { redone: true, ..root }, exec);
        }
    }

    /// A question for answer `run`'s value from `from`.
    pub(super) fn answer_asked(&mut self, from: NodeId, run: u32, exec: &mut impl Executor) {
        let value = self.runs.ended.get(run.wrapping_sub(1) as usize).and_then(|e| e.value.clone());
        let missing = value.is_none();
        self.actions.push_back(Action::Send { to: from, msg: Msg::AnswerValue { run, value } });
        if missing && self.quorum.is_leader() {
            // The one who asks needs it, and nobody it asked had it.
            self.recompute_answer(run, exec);
        }
    }

    /// `from` sent answer `run`'s value, or said it has none.
    pub(super) fn answer_value(
        &mut self,
        now: Time,
        from: NodeId,
        run: u32,
        value: Option<Bytes>,
        exec: &mut impl Executor,
    ) {
        let Some(ended) = self.runs.ended.get_mut(run.wrapping_sub(1) as usize) else {
            // The value before the news of the end (the shower's): kept
            // for it.
            if let (Some(v), true) = (value, run > self.runs.done) {
                self.runs.values_early.insert(run, v);
            }
            return;
        };
        match value {
            Some(v) => {
                ended.value.get_or_insert(v);
                if self.runs.asking.as_ref().is_some_and(|a| a.run == run) {
                    self.runs.asking = None;
                }
            }
            None => match &mut self.runs.asking {
                Some(a) if a.run == run && a.to == from => {
                    a.refused.push(from);
                    a.to = self.id;
                    self.ask_for_answer(now, run, exec);
                    return;
                }
                _ => return,
            },
        }
        self.advance_answers(now, exec);
    }

    /// `from` showed answer `run`.
    pub(super) fn answer_shown(&mut self, now: Time, run: u32, exec: &mut impl Executor) {
        match self.runs.ended.get_mut(run.wrapping_sub(1) as usize) {
            Some(ended) => ended.shown = true,
            // News of the show before news of the answer: kept for it.
            None if run > self.runs.done => {
                self.runs.shown_early.insert(run);
            }
            None => {}
        }
        self.advance_answers(now, exec);
    }

    /// The supervisor holds the answer's output (`Config::supervised_output`):
    /// the program is over everywhere, and this node's ends where it
    /// waits, without an answer — but for the master that decided the
    /// last run and holds its value: it may hear this before the shower's
    /// `Shown` (the two come by different ways), and its program ends
    /// with the answer, as with `Shown`, not shown again. A node cut off
    /// from the majority ends as at the end of its wait for it
    /// (`LostMajority`): the answer came from the others.
    pub fn output_out(&mut self, now: Time) {
        if self.stopped {
            return;
        }
        let run = self.runs.handed + 1;
        let leader = self.quorum.is_leader() && self.is_master();
        if run == self.runs.done && leader {
            let me = self.id;
            let held = self.runs.ended.get_mut(run as usize - 1).and_then(|ended| {
                ended.shown = true;
                ended.value.clone().filter(|_| ended.holder == me)
            });
            if let Some(value) = held {
                // From here as after `Shown`: the program ends, or goes
                // on to a call the others make too.
                self.hand(run, Some(value), false, true);
                return;
            }
        }
        if let Some(since) = self.quorum.minority_since() {
            // Cut off from the majority that printed it: this node ends as
            // it would at the end of its wait, not as one that took part.
            self.actions.push_back(Action::LostMajority { waited: now.saturating_sub(since) });
            self.stop();
            return;
        }
        self.runs.handed = self.runs.done;
        self.runs.asking = None;
        self.actions.push_back(Action::Finished { value: None, shows: false });
        self.stop();
    }

    /// The program ended elsewhere after `runs` calls.
    pub(super) fn program_ended_elsewhere(&mut self, now: Time, runs: u32, exec: &mut impl Executor) {
        self.runs.program_over = Some(self.runs.program_over.map_or(runs, |r| r.max(runs)));
        self.advance_answers(now, exec);
    }

    /// This node's program is over, after the answers it was handed: the
    /// programs that wait for one elsewhere end too.
    pub fn program_over(&mut self, _now: Time) {
        self.announce_shown();
        if self.runs.handed > 0 && self.runs.handed == self.runs.done {
            self.actions.push_back(Action::Broadcast { msg: Msg::ProgramOver { runs: self.runs.handed } });
        }
    }

    /// Something changed that may let an answer go on (a new leader, a
    /// member out): look again, and ask again after a silence.
    pub(super) fn answers_tick(&mut self, now: Time, exec: &mut impl Executor) {
        if let Some(a) = &self.runs.asking {
            if now >= a.sent + 2 * self.config.quorum.suspect_after || !self.is_alive(a.to) {
                let run = a.run;
                self.runs.asking.as_mut().expect("checked").to = self.id;
                self.ask_for_answer(now, run, exec);
            }
        }
        if self.runs.handed < self.runs.done {
            self.advance_answers(now, exec);
        }
    }

    /// This node's program went on past the answer it was handed to
    /// show: everyone hears that it showed it.
    pub(super) fn announce_shown(&mut self) {
        if let Some(run) = self.runs.show_unannounced.take() {
            self.actions.push_back(Action::Broadcast { msg: Msg::Shown { run } });
        }
    }

    /// A new leader: the answers this node showed are news to it.
    pub(super) fn tell_new_leader(&mut self, leader: NodeId) {
        if leader == self.id {
            return;
        }
        for (i, ended) in self.runs.ended.iter().enumerate() {
            let announced = self.runs.show_unannounced != Some(i as u32 + 1);
            if ended.shown && ended.shower == self.id && announced {
                self.actions.push_back(Action::Send { to: leader, msg: Msg::Shown { run: i as u32 + 1 } });
            }
        }
    }
}
