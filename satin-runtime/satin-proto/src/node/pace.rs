//! A peer's recent rate of work, from its status answers.
//!
//! Status answers carry the sender's work and busy time so far. Judged
//! over a window of the latest answers, not since the first: a node that
//! worked well for most of the run and then hung is found as soon as its
//! recent work says so. The judgement is `health.rs`'s for thieves: less
//! than half this node's own rate, once the span is long enough to say so.

use std::collections::VecDeque;

use super::Time;

/// A peer's answers: (when, work, busy time), oldest first, within the
/// window (and one before it).
#[derive(Clone, Debug, Default)]
pub(super) struct Pace {
    answers: VecDeque<(Time, u64, u64)>,
}

impl Pace {
    /// An answer arrived at `now` saying `progress` (work, busy time);
    /// answers older than `window` go, but for the last one before it.
    pub(super) fn record(&mut self, now: Time, progress: (u64, u64), window: Time) {
        self.answers.push_back((now, progress.0, progress.1));
        while self.answers.len() > 2 && self.answers[1].0 + window <= now {
            self.answers.pop_front();
        }
    }

    /// Whether the peer worked at less than half the rate of `ours` (this
    /// node's (work, busy time) so far) over the window.
    pub(super) fn stalled(&self, ours: (u64, u64)) -> bool {
        self.judged(ours) == Some(true)
    }

    /// Whether the peer worked at half the rate of `ours` or more over
    /// the window, once the window is long enough to say so.
    pub(super) fn working(&self, ours: (u64, u64)) -> bool {
        self.judged(ours) == Some(false)
    }

    fn judged(&self, ours: (u64, u64)) -> Option<bool> {
        let (Some(&(_, w0, b0)), Some(&(_, w1, b1))) = (self.answers.front(), self.answers.back()) else {
            return None;
        };
        super::health::judge_rate(w1.saturating_sub(w0), b1.saturating_sub(b0), ours)
    }

    pub(super) fn clear(&mut self) {
        self.answers.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_peer_that_stops_working_is_stalled_once_the_window_shows_it() {
        // This node: 1 unit of work per unit of busy time, plenty of it.
        let ours = (1_000, 1_000);
        let mut pace = Pace::default();
        assert!(!pace.stalled(ours), "no answers say nothing");
        // Worked at our rate for a while...
        for t in 0..10 {
            pace.record(t * 10, (t * 10, t * 10), 30);
        }
        assert!(!pace.stalled(ours) && pace.working(ours));
        // ...then busy without work: the window forgets the good times.
        for t in 10..20 {
            pace.record(t * 10, (90, t * 10), 30);
        }
        assert!(pace.stalled(ours) && !pace.working(ours));
        pace.clear();
        assert!(!pace.stalled(ours) && !pace.working(ours), "nothing known, nothing judged");
    }
}
