//! The `--chaos` faults still to come in a supervised run, soonest first.

use std::time::Duration;

use satin_faults::Kind;

/// Faults due at their moments from the run's start.
pub(super) struct Schedule {
    /// Soonest last; at one instant, kills first: a signal due then to a
    /// node killed then goes to a live one (`chaos::apply`).
    pending: Vec<(Duration, Kind)>,
}

impl Schedule {
    pub(super) fn new(chaos: &[(Duration, Kind)]) -> Schedule {
        let mut pending = chaos.to_vec();
        let after_kills = |k: &Kind| !matches!(k, Kind::Crash(_) | Kind::Vanish(_));
        pending.sort_by_key(|e| std::cmp::Reverse((e.0, after_kills(&e.1))));
        Schedule { pending }
    }

    /// The network faults that hold from the start: in force from each
    /// node's first packet, before any node runs.
    pub(super) fn take_network_from_start(&mut self) -> Vec<Kind> {
        let mut now = Vec::new();
        self.pending.retain(|(at, kind)| {
            let start = at.is_zero() && kind.is_network();
            if start {
                now.push(kind.clone());
            }
            !start
        });
        // (Taken soonest last: in the order they were given.)
        now.reverse();
        now
    }

    /// When the next fault is due.
    pub(super) fn next_at(&self) -> Option<Duration> {
        self.pending.last().map(|(at, _)| *at)
    }

    /// The next fault, taken off the schedule.
    pub(super) fn take_next(&mut self) -> Option<Kind> {
        self.pending.pop().map(|(_, kind)| kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use satin_faults::Crashed;

    #[test]
    fn faults_come_soonest_first_and_kills_first_at_one_instant() {
        let ms = Duration::from_millis;
        let loss = Kind::Loss { node: None, rate: 0.1 };
        let mut s = Schedule::new(&[
            (ms(0), loss.clone()),
            (ms(0), Kind::Suspend(Some(1))),
            (ms(5), Kind::Suspend(Some(1))),
            (ms(5), Kind::crash(1)),
            (ms(1), Kind::Crash(Crashed::All)),
        ]);
        assert_eq!(s.take_network_from_start(), [loss], "a suspend is no network fault");
        assert_eq!(s.next_at(), Some(ms(0)));
        assert_eq!(s.take_next(), Some(Kind::Suspend(Some(1))));
        assert_eq!(s.take_next(), Some(Kind::Crash(Crashed::All)));
        assert_eq!(s.next_at(), Some(ms(5)));
        assert_eq!(s.take_next(), Some(Kind::crash(1)));
        assert_eq!(s.take_next(), Some(Kind::Suspend(Some(1))));
        assert_eq!((s.next_at(), s.take_next()), (None, None));
    }
}
