//! Keeps this node's replicas of the shared incumbents (`crate::shared`)
//! in step with its peers': what this node's jobs improve goes to every
//! live member, what peers send is merged in, and a peer that connects
//! gets every value (a joiner starts from the run's best, not from
//! nothing). Values only improve, so order, repeats and loss of a
//! duplicate do not matter; no ordering protocol is needed.

use crate::proto::Msg;
use crate::shared::{local_improvements, merge_from_peer, snapshot, Direction};

/// What this node has sent so far.
#[derive(Default)]
pub(super) struct SharedSync {
    /// `local_improvements()` when the values were last sent.
    sent: u64,
}

impl SharedSync {
    /// The values to send to every peer, if jobs here improved one since
    /// the last call. Improvements in between are sent together.
    pub(super) fn improved(&mut self) -> Option<Msg> {
        let now = local_improvements();
        if now == self.sent {
            return None;
        }
        self.sent = now;
        Some(message(snapshot()))
    }

    /// Every value this node knows, for a peer that just connected.
    pub(super) fn everything() -> Option<Msg> {
        let all = snapshot();
        (!all.is_empty()).then(|| message(all))
    }

    /// A peer's values, merged into the replicas here.
    pub(super) fn merge(values: Vec<(String, bool, u64)>) {
        for (name, maximize, value) in values {
            let direction = if maximize { Direction::Maximize } else { Direction::Minimize };
            merge_from_peer(&name, direction, value);
        }
    }
}

fn message(all: Vec<(String, Direction, u64)>) -> Msg {
    Msg::Shared { values: all.into_iter().map(|(n, d, v)| (n, d == Direction::Maximize, v)).collect() }
}
