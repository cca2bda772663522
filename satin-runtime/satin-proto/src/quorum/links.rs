//! Lost links between members, reported to the leader only if they stay
//! lost.
//!
//! A connection can end on a link that still works: under heavy loss a
//! run of lost packets backs QUIC's retransmissions off past the idle
//! timeout, and the node dials again at once. The leader removes one end
//! of a pair of members that cannot talk (`leader.rs`,
//! `cut_link_removal`), so reporting such a blip would remove a live
//! node. A member reports a link only once it has been down for
//! `suspect_after` with no sign of the peer (a message, or a connection
//! up again); a link cut for real is reported that much later.

use super::{Output, QMsg, Quorum, Role, Time};
use crate::msg::NodeId;

impl Quorum {
    /// The connection to `peer` was lost (not a death: a suspicion). It is
    /// reported at a tick once it has stayed lost (see the module).
    pub fn link_down(&mut self, now: Time, peer: NodeId) {
        if self.outside || !self.log.is_member(peer) {
            return;
        }
        self.lost_links.entry(peer).or_insert(now);
    }

    /// `peer` was heard from, or a connection with it is up: the link
    /// works.
    pub fn link_works(&mut self, peer: NodeId) {
        if !self.lost_links.is_empty() {
            self.lost_links.remove(&peer);
        }
    }

    /// At each tick: tells the leader of the links lost for
    /// `suspect_after`. The leader needs no report (a member silent to it
    /// goes for its silence), nor does a report about the leader.
    pub(super) fn report_lost_links(&mut self, now: Time) {
        let grace = self.cfg.suspect_after;
        let due: Vec<NodeId> =
            self.lost_links.iter().filter(|&(_, &since)| now >= since + grace).map(|(&peer, _)| peer).collect();
        for peer in due {
            // Reported once; a connection that fails again is news again.
            self.lost_links.remove(&peer);
            if !self.log.is_member(peer) {
                continue;
            }
            match (self.role, self.leader) {
                (Role::Leader, _) => {}
                (_, Some(leader)) if leader != peer && leader != self.me => {
                    self.out.push_back(Output::Send { to: leader, msg: QMsg::Unreachable { peer } })
                }
                _ => {}
            }
        }
    }
}
