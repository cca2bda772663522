//! A joiner's way in: it asks its contact, asks again while no welcome
//! comes, and gives up when the contact cannot admit it — all decided
//! here; drivers only report what their connections did.

use std::fmt;

use super::{Action, Node, Time, Timer};
use crate::checkpoint::ResultMeta;
use crate::msg::{ClusterId, Msg, NodeId};
use crate::{Config, JobKey};

/// A joiner asks again this long after its join went unanswered (doubling
/// up to [`JOIN_RETRY_MAX`]): a lost packet, or a contact without a
/// leader for the moment, does not lose the join.
const JOIN_RETRY: Time = 500_000_000;
const JOIN_RETRY_MAX: Time = 4_000_000_000;

/// A joiner's way in: its contact, when it asks again, and what a former
/// incarnation of its process finished.
#[derive(Debug, Default)]
pub(super) struct Joining {
    /// The contact, until the node is welcomed.
    pub(super) contact: Option<NodeId>,
    /// How long after the last join it is asked again (it may be lost;
    /// [`Timer::JoinRetry`]).
    pub(super) retry_wait: Time,
    /// Until when a contact where nobody answers is tried again
    /// ([`Config::join_wait`] after the start).
    pub(super) knock_until: Time,
    /// Results of a former incarnation, published once welcomed.
    pub(super) carried: Vec<(JobKey, Vec<u8>, ResultMeta)>,
}

/// Why a joiner gave up before it was admitted ([`Action::CannotJoin`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JoinFailure {
    /// Nobody answered at the contact's address for
    /// [`Config::join_wait`].
    NoAnswer,
    /// The contact answered, then refused the connection or lost it
    /// before admitting this node (another pool, another problem, a link
    /// that failed).
    Refused,
    /// The contact closed the connection in order: its run is over, or it
    /// left.
    Closed,
    /// The contact's process ended.
    ContactGone,
}

impl fmt::Display for JoinFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            JoinFailure::NoAnswer => "nobody answered there within the join wait (--join-wait-ms)",
            JoinFailure::Refused => "the node there refused or lost the connection before admitting this one",
            JoinFailure::Closed => {
                "the node there closed the connection before admitting this one (its run is over, or it left)"
            }
            JoinFailure::ContactGone => "the node there ended before admitting this one",
        })
    }
}

impl Node {
    /// A node joining a running computation through `contact`; it asks
    /// again until it is welcomed (after half a second, then doubling).
    pub fn joining(id: NodeId, cluster: ClusterId, contact: NodeId, config: Config, seed: u64) -> Node {
        let mut n = Node::new(id, cluster, config, seed);
        n.join.contact = Some(contact);
        n.actions.push_back(Action::Send { to: contact, msg: Msg::Join { cluster } });
        n
    }

    pub(super) fn start_joining(&mut self, now: Time) {
        self.join.retry_wait = JOIN_RETRY;
        self.join.knock_until = now + self.config.join_wait;
        self.timers.set(Timer::JoinRetry, now + JOIN_RETRY);
    }

    /// No welcome yet: ask again, a little later each time.
    pub(super) fn retry_join(&mut self, now: Time) {
        let Some(contact) = self.join.contact.filter(|_| !self.joined) else { return };
        let wait = (self.join.retry_wait * 2).min(JOIN_RETRY_MAX);
        self.join.retry_wait = wait;
        self.actions.push_back(Action::Send { to: contact, msg: Msg::Join { cluster: self.cluster } });
        self.timers.set(Timer::JoinRetry, now + wait);
    }

    /// A connection to `peer` could not be opened: nobody answered at its
    /// address (yet, or at all). A joiner knocks at its contact again
    /// until [`Config::join_wait`] is over (the contact may not listen
    /// yet); for anyone else it is a lost link like any other.
    pub fn handle_unanswered(&mut self, now: Time, peer: NodeId, exec: &mut impl crate::Executor) {
        if self.stopped {
            return;
        }
        if !self.is_contact(peer) {
            return self.handle_link_down(now, peer, exec);
        }
        if now < self.join.knock_until {
            self.actions.push_back(Action::Send { to: peer, msg: Msg::Join { cluster: self.cluster } });
        } else {
            self.cannot_join(JoinFailure::NoAnswer);
        }
    }

    /// `peer` ended its connection with this node in order: it is through
    /// with the run. A joiner whose contact does so gives up; members
    /// hear of a peer's leave from its `Leave`.
    pub fn handle_closed(&mut self, _now: Time, peer: NodeId) {
        if !self.stopped && self.is_contact(peer) {
            self.cannot_join(JoinFailure::Closed);
        }
    }

    /// Whether `peer` is the contact of this node, not admitted yet.
    fn is_contact(&self, peer: NodeId) -> bool {
        !self.joined && self.join.contact == Some(peer)
    }

    /// What the contact's lost link or death means to a joiner: it gives
    /// up (`true`); `false` for any other peer or a member.
    pub(super) fn contact_lost(&mut self, peer: NodeId, why: JoinFailure) -> bool {
        if !self.is_contact(peer) {
            return false;
        }
        self.cannot_join(why);
        true
    }

    /// The contact removed this joiner just after admitting it (the
    /// majority cannot reach it, a link that stays cut): out, as any
    /// removed member, with what a former incarnation carried.
    pub(super) fn expelled_before_admitted(&mut self, by: NodeId) -> bool {
        if !self.is_contact(by) {
            return false;
        }
        let carry = std::mem::take(&mut self.join.carried);
        self.expel(by, carry);
        true
    }

    fn cannot_join(&mut self, why: JoinFailure) {
        self.actions.push_back(Action::CannotJoin { why });
        self.stop();
    }
}

impl Node {
    /// `from` asked this node to join the run (a `Join`, or a `Gather`
    /// that came late). `false`: the run is being suspended, and the
    /// knocking node was told so instead.
    pub(super) fn knocked(&mut self, from: NodeId) -> bool {
        if self.joined && self.roster.cluster_of(from).is_none() {
            if self.is_suspending() {
                // Knocking after the suspend went out: told at once.
                self.actions.push_back(Action::Send { to: from, msg: Msg::Suspend });
                return false;
            }
            self.knocking.insert(from);
        }
        true
    }

    /// The run is suspended: nodes still waiting to be admitted through
    /// this one stop too, as suspended (their command, run again, joins
    /// the resumed run) — not as turned away.
    pub(super) fn tell_knocking_suspended(&mut self) {
        for id in std::mem::take(&mut self.knocking) {
            if self.roster.cluster_of(id).is_none() {
                self.actions.push_back(Action::Send { to: id, msg: Msg::Suspend });
            }
        }
    }
}
