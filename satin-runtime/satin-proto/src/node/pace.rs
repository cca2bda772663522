//! A peer's recent rate of work, from its status answers.
//!
//! Status answers carry the sender's work and busy time so far. Judged
//! over a window of the latest answers, not since the first: a node that
//! worked well for most of the run and then hung is found as soon as its
//! recent work says so. The judgement is `health.rs`'s for thieves: less
//! than half this node's own rate, once the span is long enough to say so.
//! A node that itself works slowly needs a longer span for that (its own
//! rate is the yardstick): the window then stretches back, up to
//! [`STRETCH`] windows, to the shortest span that says enough — else a
//! slow node never found a hung one stalled.

use std::collections::VecDeque;

use super::Time;

/// How many windows back a judgement may reach for enough evidence.
const STRETCH: Time = 16;

/// A peer's answers: (when, work, busy time), oldest first, within
/// [`STRETCH`] windows (and one before them).
#[derive(Clone, Debug, Default)]
pub(super) struct Pace {
    answers: VecDeque<(Time, u64, u64)>,
    window: Time,
}

impl Pace {
    /// An answer arrived at `now` saying `progress` (work, busy time),
    /// judged over `window`.
    pub(super) fn record(&mut self, now: Time, progress: (u64, u64), window: Time) {
        self.window = window;
        self.answers.push_back((now, progress.0, progress.1));
        let keep = window.saturating_mul(STRETCH);
        while self.answers.len() > 2 && self.answers[1].0.saturating_add(keep) <= now {
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

    /// Over the shortest span back from the latest answer that covers the
    /// window and says enough.
    fn judged(&self, ours: (u64, u64)) -> Option<bool> {
        let &(t1, w1, b1) = self.answers.back()?;
        let n = self.answers.len();
        self.answers.iter().take(n - 1).rev().find_map(|&(t0, w0, b0)| {
            if t0 + self.window > t1 && t0 != self.answers[0].0 {
                return None;
            }
            super::health::judge_rate(w1.saturating_sub(w0), b1.saturating_sub(b0), ours)
        })
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

    #[test]
    fn a_slow_judge_looks_further_back_for_enough_evidence() {
        // This node: 1 unit of work per 10 of busy time (a slow node); a
        // window of 30 holds too little of it to judge anybody by.
        let ours = (100, 1_000);
        let mut pace = Pace::default();
        for t in 0..40 {
            pace.record(t * 10, (5, t * 10), 30);
        }
        assert!(pace.stalled(ours), "no work over 390 of busy time: more than 20 units of ours");
        let mut short = Pace::default();
        for t in 0..5 {
            short.record(t * 10, (5, t * 10), 30);
        }
        assert!(!short.stalled(ours) && !short.working(ours), "40 of busy time says too little");
        // Answers beyond STRETCH windows are forgotten.
        for t in 40..200 {
            pace.record(t * 10, (5 + t, t * 10), 30);
        }
        assert!(pace.answers.front().unwrap().0 >= 1990 - 30 * STRETCH - 10);
    }
}
