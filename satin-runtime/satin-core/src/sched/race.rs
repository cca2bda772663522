//! First found wins: `f(a) || f(b)`, `f(a) && f(b)` and
//! `f(a).or_else(|| f(b))` between recursive calls, and `xs.any(|x| f(x))`,
//! `xs.all(|x| f(x))` over many.
//!
//! The call on the right is spawned as an [`Entrant`] of a [`Race`], the one
//! on the left runs inline under the race ([`Race::run_first`]). Whichever
//! returns a deciding value first (`true` for `||`, `false` for `&&`,
//! `Some` for `or_else`) ends the other: the right one is aborted when the
//! left decides (dropping its slot, as any unread spawn), and the left one
//! when the right decides — the entrant's completion raises the race's flag,
//! on whichever worker ran it or, for a call run on another node, when its
//! result arrives here; the inline call sees the flag at its next poll and
//! unwinds, aborting everything it spawned, on this node and on others.
//! This is Satin's inlet-and-abort pattern, with the inlet written by the
//! macro. The sequential and lazy versions keep reading order.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Serialize, Serializer};

use super::ctx::{Aborted, Ctx};
use super::registry::Registry;
use super::slot::SpawnList;
use super::tls::CurrentGuard;
use crate::job::{AcceptError, Job, JobKey};

/// Two calls of which the first to decide ends the other. See the module docs.
pub struct Race<'r> {
    decided: AtomicBool,
    registry: &'r Registry,
}

impl<'r> Race<'r> {
    /// A race in the frame that `ctx` runs.
    #[inline]
    pub fn new(ctx: &Ctx<'r>) -> Race<'r> {
        Race { decided: AtomicBool::new(false), registry: ctx.worker.registry() }
    }

    /// `job`, spawned as the race's second call: a value for which
    /// `decides` holds ends the first call.
    #[inline]
    pub fn entrant<J: Job>(&self, job: J, decides: fn(&J::Output) -> bool) -> Entrant<'_, J> {
        Entrant { job, race: self, decides }
    }

    /// Runs the race's first call inline; `None` if the second decided
    /// first and this one was stopped.
    pub fn run_first<J: Job>(&self, ctx: &Ctx<'_>, job: J) -> Option<J::Output> {
        if self.decided.load(Ordering::Acquire) {
            return None;
        }
        // The call runs as if its own job: a context whose abort flag is the
        // race's, below the current one (an abort of the caller still
        // reaches it), at the place the call would have had inline.
        let child = Ctx::child(ctx.worker, &self.decided, ctx, false, ctx.place());
        let outcome = {
            let _current = CurrentGuard::set(&child);
            panic::catch_unwind(AssertUnwindSafe(|| job.run(&child)))
        };
        match outcome {
            Ok(v) => Some(v),
            Err(p) if p.is::<Aborted>() && self.decided.load(Ordering::Acquire) && !ctx.is_aborted() => None,
            Err(p) => panic::resume_unwind(p),
        }
    }

    /// Whether some call of the race decided it.
    #[inline]
    pub fn is_decided(&self) -> bool {
        self.decided.load(Ordering::Acquire)
    }

    /// A race over many calls (`xs.any(|x| f(x))`, `.all`): whether one
    /// of `jobs` decided it. The first call runs inline; the others are
    /// spawned last first, so that thieves, which take the oldest job,
    /// start from the end while this worker goes on from the front: a
    /// solution near either end is reached early. Then the spawned calls
    /// are joined until one decides; the rest are aborted.
    pub fn run_all<J: Job>(&self, ctx: &Ctx<'_>, jobs: Vec<J>, decides: fn(&J::Output) -> bool) -> bool {
        let mut jobs = jobs.into_iter();
        let Some(first) = jobs.next() else { return false };
        let mut rest = SpawnList::new();
        for job in jobs.rev() {
            if self.is_decided() {
                break;
            }
            rest.spawn_kept(ctx, self.entrant(job, decides));
        }
        if let Some(v) = self.run_first(ctx, first) {
            if decides(&v) {
                return true;
            }
        }
        rest.join_until(ctx, decides, || self.is_decided())
    }

    /// `value`, after deciding the race if `decides` holds for it.
    #[inline]
    fn note<T>(&self, decides: fn(&T) -> bool, value: T) -> T {
        if decides(&value) {
            self.decide();
        }
        value
    }

    fn decide(&self) {
        if !self.decided.swap(true, Ordering::AcqRel) {
            // Running jobs re-check their abort flags (`Ctx::check_abort`),
            // lazily run ones at their next poll.
            self.registry.bump_abort_epoch();
        }
    }
}

/// The second call of a [`Race`]: the call's job, which raises the race's
/// flag when its result decides. It travels and is keyed as the call itself.
pub struct Entrant<'r, J: Job> {
    job: J,
    race: &'r Race<'r>,
    decides: fn(&J::Output) -> bool,
}

impl<J: Job> Entrant<'_, J> {
    /// Runs the call; its value decides the race if `decides` says so.
    #[inline]
    fn settle(self, run: impl FnOnce(J) -> J::Output) -> J::Output {
        let Entrant { job, race, decides } = self;
        race.note(decides, run(job))
    }
}

impl<J: Job> Serialize for Entrant<'_, J> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.job.serialize(s)
    }
}

impl<J: Job> Job for Entrant<'_, J> {
    type Output = J::Output;
    type Codec = J::Codec;
    const FN_ID: &'static str = J::FN_ID;
    const MUTATES: bool = J::MUTATES;
    const LOCAL: Option<&'static str> = J::LOCAL;
    // A deciding value ends the race's other call at once.
    const ACCEPT_ON_ARRIVAL: bool = true;

    fn instance_id() -> &'static str {
        J::instance_id()
    }

    fn accept(self, outcome: &[u8]) -> Result<J::Output, AcceptError> {
        let Entrant { job, race, decides } = self;
        let v = job.accept(outcome)?;
        Ok(race.note(decides, v))
    }

    #[inline]
    fn run(self, ctx: &Ctx<'_>) -> J::Output {
        self.settle(|job| job.run(ctx))
    }

    fn run_parallel(self, ctx: &Ctx<'_>) -> J::Output {
        self.settle(|job| job.run_parallel(ctx))
    }

    fn run_lazy(self, ctx: &Ctx<'_>) -> J::Output {
        self.settle(|job| job.run_lazy(ctx))
    }

    fn run_sequential(self) -> J::Output {
        self.settle(J::run_sequential)
    }

    fn key(&self) -> JobKey {
        self.job.key()
    }
}

/// What decides a race of `||`: `true`.
pub fn decides_true(v: &bool) -> bool {
    *v
}

/// What decides a race of `&&`: `false`.
pub fn decides_false(v: &bool) -> bool {
    !*v
}

/// What decides a race of `or_else`: `Some`.
pub fn decides_some<T>(v: &Option<T>) -> bool {
    v.is_some()
}
