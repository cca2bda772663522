//! Each node's figures, for the master's dashboard.
//!
//! The master sees only what passes through it (the jobs it hands out);
//! what every node ran, looked up and sent is known only there. A node's
//! driver hands the core its figures now and then ([`Node::share_figures`]);
//! the core sends them to the master of the moment, whose driver gets
//! them as [`Action::PeerFigures`]. Figures are news, not state: one lost
//! (the master changed, a link went down) is replaced by the next.
//!
//! A node that serves a dashboard says so in its figures (`watches`); the
//! master hands its board to those nodes when its driver shares it
//! ([`Node::share_board`]), and they get it as [`Action::MasterBoard`]:
//! every such page shows the run as the master of the moment knows it.

use bytes::Bytes;

use super::{Action, Node, NodeId, Time, Timer};
use crate::msg::{Msg, NodeFigures};

impl Node {
    /// This node's figures, for the master (dropped on the master itself,
    /// before a welcome and after the end).
    pub fn share_figures(&mut self, figures: NodeFigures) {
        if self.stopped || !self.joined || self.is_master() {
            return;
        }
        self.actions.push_back(Action::Send { to: self.master, msg: Msg::Figures(figures) });
    }

    /// Every `Config::figures_every`: the driver's figures are due, and
    /// the publication threshold grows with the run.
    pub(super) fn figures_due(&mut self, now: Time) {
        let Some(every) = self.config.figures_every else { return };
        self.timers.set(Timer::Figures, now + every);
        self.actions.push_back(Action::ShareFigures);
        if let Some(after) = self.config.publish_threshold(now).filter(|t| Some(*t) != self.published_after) {
            self.published_after = Some(after);
            self.actions.push_back(Action::PublishAfter { after });
        }
    }

    /// Figures from `from`: for the driver, if this node is the master.
    pub(super) fn figures_from(&mut self, from: NodeId, figures: NodeFigures) {
        if self.is_master() {
            if figures.watches {
                self.board_watchers.insert(from);
            } else {
                self.board_watchers.remove(&from);
            }
            self.actions.push_back(Action::PeerFigures { from, figures });
        }
    }

    /// This master's board (the driver's, as JSON), for the live nodes
    /// that serve a dashboard; nothing on a node that is not the master.
    pub fn share_board(&mut self, board: Bytes) {
        if self.stopped || !self.is_master() {
            return;
        }
        let live: std::collections::BTreeSet<NodeId> = self.live_members().collect();
        self.board_watchers.retain(|w| live.contains(w));
        for &to in &self.board_watchers {
            self.actions.push_back(Action::Send { to, msg: Msg::Board(board.clone()) });
        }
    }

    /// Whether some node serves a dashboard of this master's board.
    pub fn board_watched(&self) -> bool {
        !self.board_watchers.is_empty()
    }

    /// A board from `from`: for the driver, if `from` is the master.
    pub(super) fn board_from(&mut self, from: NodeId, board: Bytes) {
        if from == self.master && !self.is_master() {
            self.actions.push_back(Action::MasterBoard { from, board });
        }
    }
}
