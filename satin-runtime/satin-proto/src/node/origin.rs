//! Which node shows a run's answer: the one the user started.
//!
//! The answer belongs on the terminal (or in the log file) of the process
//! the user started — the `--listen` node, SLURM task 0, pod 0 — not on
//! whichever node happens to be master at the end: after the first master
//! dies, a user watching their own terminal would otherwise see nothing.
//! That node is the run's *origin*, its first master: the founding members
//! know it from the start, a joiner from its welcome.
//!
//! The master names the node that shows each answer in its log entry
//! (`Node::choose_shower`, see `answer.rs`): the origin if it can count on
//! it, else itself.
//!
//! A process that was the origin and is removed while cut off joins again
//! as a new node (`Action::Expelled`): it is still the process the user
//! started, so it claims the origin back ([`Node::claim_origin`]) — on its
//! welcome, if the run's origin is still its old self, it tells every
//! member (`Msg::OriginMoved`); members that joined later learn it from
//! their welcome. A member that missed the news counts the old origin as
//! gone, and shows the answer itself if it ends the run as master.
//!
//! An origin named and then lost before it showed the answer is replaced
//! by the master (`answer.rs`).

use super::{Node, NodeId, Time};

/// Beats of silence after which the master no longer counts on the
/// origin to show the answer.
const ORIGIN_SILENT_BEATS: u64 = 3;

impl Node {
    /// The node the user started (the run's first master), once known.
    pub fn origin(&self) -> Option<NodeId> {
        self.runs.origin
    }

    /// Whether this node is the run's origin.
    pub fn is_origin(&self) -> bool {
        self.runs.origin == Some(self.id)
    }

    /// This process was the run's origin as node `was` (an earlier
    /// incarnation the majority removed): a joiner, it claims it back.
    pub fn claim_origin(&mut self, was: NodeId) {
        self.runs.claimed_origin = Some(was);
    }

    /// The welcome named the run's origin; `was` this process's
    /// earlier incarnation, the origin moves here and every member is told.
    pub(super) fn origin_from_welcome(&mut self, origin: NodeId) {
        if self.runs.claimed_origin.take() == Some(origin) {
            self.runs.origin = Some(self.id);
            self.actions.push_back(super::Action::Broadcast { msg: crate::msg::Msg::OriginMoved { was: origin } });
        } else {
            self.runs.origin = Some(origin);
        }
    }

    /// `from` says it is the origin `was` joined again.
    pub(super) fn origin_moved(&mut self, now: Time, from: NodeId, was: NodeId) {
        if self.runs.origin == Some(was) {
            self.runs.origin = Some(from);
            self.runs.origin_heard = Some(now);
        }
    }

    /// A message from `from` arrived: the origin's are dated.
    pub(super) fn heard_from(&mut self, now: Time, from: NodeId) {
        if self.runs.origin == Some(from) {
            self.runs.origin_heard = Some(now);
        }
    }

    /// The node that shows an answer this node proposes as master: the
    /// origin if the master can count on it — a live member heard from
    /// within a few beats (a member cut off now may never learn the
    /// answer; a master new in office has no such news) — else itself.
    pub(super) fn choose_shower(&self) -> NodeId {
        let Some(origin) = self.runs.origin.filter(|&o| o != self.id) else { return self.id };
        let window = self.config.quorum.heartbeat * ORIGIN_SILENT_BEATS;
        let lately = self.runs.origin_heard.is_some_and(|t| t + window > self.quorum.now());
        if self.roster.is_alive(origin) && lately {
            origin
        } else {
            self.id
        }
    }
}
