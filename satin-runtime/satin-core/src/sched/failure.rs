//! What a `?` returns early on: a loop whose calls' results are `?`ed
//! (`total += f(x)?;`, `let v = f(x)?;` read in its iteration) starts no
//! iteration after one whose inline call failed, as the plain loop
//! returns there (`SpawnList::kept_failed`, `SpawnList::spawn_each_until`).
//! Calls already spawned go on; the loop's join reads the results in
//! order, so the error the plain function returns is the one returned,
//! and what is not read is aborted when the list is dropped.

use std::ops::ControlFlow;
use std::task::Poll;

/// A value on which `?` returns early: every type of the standard
/// library that `?` applies to.
pub trait Failure {
    /// Whether `?` on this value returns from the function.
    fn is_failure(&self) -> bool;
}

impl<T, E> Failure for Result<T, E> {
    #[inline]
    fn is_failure(&self) -> bool {
        self.is_err()
    }
}

impl<T> Failure for Option<T> {
    #[inline]
    fn is_failure(&self) -> bool {
        self.is_none()
    }
}

impl<B, C> Failure for ControlFlow<B, C> {
    #[inline]
    fn is_failure(&self) -> bool {
        self.is_break()
    }
}

impl<T, E> Failure for Poll<Result<T, E>> {
    #[inline]
    fn is_failure(&self) -> bool {
        matches!(self, Poll::Ready(Err(_)))
    }
}

impl<T, E> Failure for Poll<Option<Result<T, E>>> {
    #[inline]
    fn is_failure(&self) -> bool {
        matches!(self, Poll::Ready(Some(Err(_))))
    }
}

/// `Failure::is_failure` as a function (a loop's stop rule).
#[inline]
pub fn failed<T: Failure>(value: &T) -> bool {
    value.is_failure()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_is_what_the_question_mark_returns_on() {
        assert!(failed(&Err::<u8, ()>(())) && !failed(&Ok::<u8, ()>(1)));
        assert!(failed(&None::<u8>) && !failed(&Some(1)));
        assert!(failed(&ControlFlow::<(), u8>::Break(())) && !failed(&ControlFlow::<(), u8>::Continue(1)));
        assert!(failed(&Poll::Ready(Err::<u8, ()>(()))) && !failed(&Poll::<Result<u8, ()>>::Pending));
        assert!(failed(&Poll::Ready(Some(Err::<u8, ()>(())))) && !failed(&Poll::Ready(None::<Result<u8, ()>>)));
    }
}
