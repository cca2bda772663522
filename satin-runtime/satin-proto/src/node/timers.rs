//! Every deadline of the node in one table, one slot per kind: the
//! driver (or the simulator) asks [`Node::poll_timeout`] when to wake
//! and calls [`Node::handle_timeout`] then; each concern sets and reads
//! its own slot here instead of keeping a deadline of its own.
//!
//! [`Node::poll_timeout`]: super::Node::poll_timeout
//! [`Node::handle_timeout`]: super::Node::handle_timeout

use super::Time;

/// What a deadline is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timer {
    /// The membership protocol's next beat or election check
    /// (`proto/quorum`); also when a lost answer is asked for again.
    Quorum,
    /// A joiner asks its contact again (`joining.rs`).
    JoinRetry,
    /// The oldest unanswered steal request is given up (`stealing.rs`).
    StealReply,
    /// Steal again after every victim said it had nothing (`stealing.rs`).
    StealBackoff,
    /// A late stolen job's next check: soft or hard timeout, a status
    /// question, a lost answer (`stragglers.rs`).
    LateJobs,
    /// This node may steal again after another node dropped it (`health.rs`).
    Dropped,
    /// The checkpoint's next batch (`checkpoint.rs`).
    Checkpoint,
    /// The driver's figures are due, and the publication threshold grows
    /// (`figures.rs`).
    Figures,
    /// A draining node's time is up: it leaves (`membership.rs`).
    Leave,
    /// What jobs here changed of the shared values goes out, busy or not
    /// (`shared.rs`).
    SharedNews,
}

impl Timer {
    /// In the order they go off when due together.
    const ALL: [Timer; 10] = [
        Timer::Quorum,
        Timer::JoinRetry,
        Timer::StealBackoff,
        Timer::StealReply,
        Timer::Checkpoint,
        Timer::LateJobs,
        Timer::Dropped,
        Timer::Figures,
        Timer::Leave,
        Timer::SharedNews,
    ];
}

/// The node's deadlines (core time, nanoseconds), one per [`Timer`].
#[derive(Debug, Default)]
pub(super) struct TimerTable {
    at: [Option<Time>; Timer::ALL.len()],
}

impl TimerTable {
    /// `timer` goes off at `at` (replacing any deadline it had).
    pub(super) fn set(&mut self, timer: Timer, at: Time) {
        self.at[timer as usize] = Some(at);
    }

    /// `timer` goes off at `at` or at its deadline, whichever is first.
    pub(super) fn set_earliest(&mut self, timer: Timer, at: Time) {
        let slot = &mut self.at[timer as usize];
        *slot = Some(slot.map_or(at, |t| t.min(at)));
    }

    /// `timer` does not go off.
    pub(super) fn stop(&mut self, timer: Timer) {
        self.at[timer as usize] = None;
    }

    /// When `timer` goes off, if it is set.
    pub(super) fn get(&self, timer: Timer) -> Option<Time> {
        self.at[timer as usize]
    }

    /// Whether `timer` is set and not due at `now`.
    pub(super) fn pending(&self, timer: Timer, now: Time) -> bool {
        self.get(timer).is_some_and(|t| now < t)
    }

    /// The earliest deadline.
    pub(super) fn next(&self) -> Option<Time> {
        self.at.iter().flatten().min().copied()
    }

    /// The timers due at `now` with their deadlines, in [`Timer::ALL`]'s
    /// order; each is cleared (its concern sets it again for another).
    pub(super) fn take_due(&mut self, now: Time) -> Vec<(Timer, Time)> {
        Timer::ALL
            .into_iter()
            .filter_map(|t| match self.at[t as usize] {
                Some(at) if at <= now => {
                    self.at[t as usize] = None;
                    Some((t, at))
                }
                _ => None,
            })
            .collect()
    }

    /// Every timer stops (the node stopped).
    pub(super) fn clear(&mut self) {
        self.at = Default::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_earliest_deadline_wakes_the_node_and_only_due_timers_go_off() {
        let mut t = TimerTable::default();
        assert_eq!(t.next(), None);
        t.set(Timer::Checkpoint, 30);
        t.set(Timer::Quorum, 10);
        t.set_earliest(Timer::StealReply, 20);
        t.set_earliest(Timer::StealReply, 25);
        assert_eq!(t.get(Timer::StealReply), Some(20), "the earlier of two deadlines");
        assert_eq!(t.next(), Some(10));
        assert!(t.take_due(9).is_empty());
        assert!(t.pending(Timer::Quorum, 9));
        assert_eq!(t.take_due(20), vec![(Timer::Quorum, 10), (Timer::StealReply, 20)]);
        assert_eq!(t.next(), Some(30), "due timers are cleared");
        t.stop(Timer::Checkpoint);
        assert_eq!(t.next(), None);
    }
}
