//! Shared values between members (`satin::shared`: incumbents and other
//! lattices). The executor keeps the replicas; the core moves them: news
//! of this node's changes to every live member at each idle check and,
//! while busy, every `Config::shared_news_every`; every value to a member that joins and to a peer whose link comes back (news
//! sent while it was cut off may be lost), and peers' values into the
//! executor. Updates are joins, so order, repeats and a lost duplicate do
//! not matter: no ordering protocol is needed.

use super::{Action, Node, Time};
use crate::msg::{Msg, NodeId};
use crate::Executor;

impl Node {
    /// Sends what jobs here changed since the last call to every live
    /// member (called at every idle check).
    pub(super) fn send_shared_news(&mut self, exec: &mut impl Executor) {
        if self.stopped {
            return;
        }
        if let Some(values) = exec.take_shared() {
            self.actions.push_back(Action::Broadcast { msg: Msg::Shared(values) });
        }
    }

    /// Every `Config::shared_news_every`: the news goes out even while
    /// every worker is busy.
    pub(super) fn shared_news_due(&mut self, now: Time, exec: &mut impl Executor) {
        let Some(every) = self.config.shared_news_every else { return };
        self.timers.set(super::Timer::SharedNews, now + every);
        if self.joined {
            self.send_shared_news(exec);
        }
    }

    /// Sends every shared value here to `peer`.
    pub(super) fn send_all_shared(&mut self, peer: NodeId, exec: &impl Executor) {
        if peer == self.id || self.stopped {
            return;
        }
        if let Some(values) = exec.all_shared() {
            self.actions.push_back(Action::Send { to: peer, msg: Msg::Shared(values) });
        }
    }

    /// A connection from `peer` came up (its first, or one after a lost
    /// one): what it may have missed of the shared values goes to it.
    pub fn handle_link_up(&mut self, _now: Time, peer: NodeId, exec: &mut impl Executor) {
        self.quorum.link_works(peer);
        self.send_all_shared(peer, exec);
    }
}
