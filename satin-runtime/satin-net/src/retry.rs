//! Retries of local operations that may fail for a moment — a checkpoint
//! write on a busy file server, reading the pool credential over NFS,
//! binding a port a previous process still holds — with a bounded
//! exponential back-off, before they fail for good (as GRID superscalar
//! retries its runtime's system calls). Errors that cannot pass (a missing
//! file, no permission, bad contents) fail at once.

use std::io::ErrorKind;
use std::time::Duration;

/// How often and how patiently.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Backoff {
    /// Attempts in all (the first included).
    pub(crate) attempts: u32,
    /// The wait before the second attempt; it doubles after each.
    pub(crate) first: Duration,
}

/// The default: 5 attempts, 100 ms doubling (about 1.5 s in all).
pub(crate) const LOCAL_OPERATIONS: Backoff = Backoff { attempts: 5, first: Duration::from_millis(100) };

/// Whether an I/O error may pass if the operation is tried again.
pub(crate) fn transient(kind: ErrorKind) -> bool {
    !matches!(
        kind,
        ErrorKind::NotFound
            | ErrorKind::PermissionDenied
            | ErrorKind::InvalidInput
            | ErrorKind::InvalidData
            | ErrorKind::Unsupported
            | ErrorKind::AlreadyExists
    )
}

/// Runs `op` until it succeeds, its error is not transient (`is_transient`
/// says), or the attempts are spent; returns the last result. `warn` hears
/// of every failure that is tried again.
pub(crate) fn retry<T, E: std::fmt::Display>(
    backoff: Backoff,
    mut op: impl FnMut() -> Result<T, E>,
    is_transient: impl Fn(&E) -> bool,
    mut warn: impl FnMut(&E, Duration),
) -> Result<T, E> {
    let mut wait = backoff.first;
    let mut attempt = 1;
    loop {
        match op() {
            Err(e) if attempt < backoff.attempts && is_transient(&e) => {
                warn(&e, wait);
                std::thread::sleep(wait);
                wait = wait.saturating_mul(2);
                attempt += 1;
            }
            done => return done,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const QUICK: Backoff = Backoff { attempts: 4, first: Duration::from_millis(1) };

    fn io(kind: ErrorKind) -> std::io::Error {
        std::io::Error::new(kind, "test")
    }

    #[test]
    fn a_passing_failure_is_tried_again_until_it_passes() {
        let mut calls = 0;
        let mut warned = 0;
        let r = retry(
            QUICK,
            || {
                calls += 1;
                if calls < 3 {
                    Err(io(ErrorKind::Interrupted))
                } else {
                    Ok(calls)
                }
            },
            |e| transient(e.kind()),
            |_, _| warned += 1,
        );
        assert_eq!(r.unwrap(), 3);
        assert_eq!(warned, 2);
    }

    #[test]
    fn the_attempts_are_bounded_and_the_last_error_returned() {
        let mut calls = 0;
        let r: Result<(), _> = retry(
            QUICK,
            || {
                calls += 1;
                Err(io(ErrorKind::TimedOut))
            },
            |e| transient(e.kind()),
            |_, _| {},
        );
        assert_eq!(r.unwrap_err().kind(), ErrorKind::TimedOut);
        assert_eq!(calls, 4);
    }

    #[test]
    fn a_lasting_failure_fails_at_once() {
        let mut calls = 0;
        let r: Result<(), _> = retry(
            QUICK,
            || {
                calls += 1;
                Err(io(ErrorKind::NotFound))
            },
            |e| transient(e.kind()),
            |_, _| {},
        );
        assert!(r.is_err());
        assert_eq!(calls, 1);
    }
}
