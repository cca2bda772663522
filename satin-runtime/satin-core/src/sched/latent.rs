//! Latent loops: iterations a worker has not started yet, handed to
//! thieves only when one asks.
//!
//! A loop over annotated calls (`iter.map(|x| f(x)).sum()`) whose worker
//! already offers enough work runs each call inline. While it does, the
//! rest of its iterations are *latent*: the loop is registered on its
//! worker's [`LatentLoops`], and when some worker (or node) asks for work,
//! the worker's next poll (`Ctx::promote`, in lazy code) or push onto its
//! deque (in parallel code) spawns remaining iterations of the *oldest* registered
//! loops, up to [`RELEASE_BUDGET`] calls, instead of the children of the
//! call it happens to be in — heartbeat scheduling's rule, applied to
//! loops.
//!
//! Why it matters on irregular trees: the innermost call's children are,
//! in a binomial tree, leaves with probability 7/8, so a thief fed from
//! there is back after one node and every request costs a round trip
//! between the workers. A batch of pending iterations from the outermost
//! loops (a root with 2 000 children, the upper levels of a deep chain)
//! holds, with high probability, a subtree worth the steal.
//!
//! The released calls are ordinary spawns (boxed slots in the loop's
//! [`SpawnList`]); the loop joins them, in order, once its inline call
//! returns. Releasing happens on the loop's own thread while the loop is
//! suspended in that call, so the loop's state needs no synchronisation.

use std::any::Any;
use std::cell::{Cell, UnsafeCell};
use std::collections::VecDeque;
use std::marker::PhantomData;
use std::panic::{self, AssertUnwindSafe};
use std::ptr;

use super::ctx::{Ctx, Place};
use super::slot::SpawnList;
use crate::Job;

/// Most calls one request for work releases.
pub(crate) const RELEASE_BUDGET: usize = 8;

/// A loop with iterations not started yet.
pub(crate) trait Latent {
    /// Spawns up to `max` of the remaining iterations, in order; returns
    /// how many it spawned.
    fn release(&self, max: usize) -> usize;
    /// The loop registered just before this one (see [`Link`]).
    fn link(&self) -> &Link;
}

/// A registered loop's pointer to the one registered before it: the
/// registered loops of a worker form an intrusive stack through their own
/// frames, so registering costs two stores and no allocation.
#[derive(Default)]
pub(crate) struct Link {
    older: Cell<Option<*const (dyn Latent + 'static)>>,
}

/// One worker's registered loops: the newest, which links to the older.
#[derive(Default)]
pub(crate) struct LatentLoops {
    /// A loop suspended in an inline call on this thread, registered by
    /// [`LatentLoops::register`] and removed by the guard before the loop
    /// can move or end.
    newest: Cell<Option<*const (dyn Latent + 'static)>>,
    releasing: Cell<bool>,
}

impl LatentLoops {
    /// Registers `frame` for as long as the guard lives.
    #[inline]
    pub(crate) fn register<'a>(&'a self, frame: &'a (dyn Latent + 'a)) -> Registered<'a> {
        let ptr: *const (dyn Latent + 'a) = frame;
        // SAFETY: only the lifetime is erased; the guard unlinks the pointer
        // before `'a` ends, and nothing dereferences it after that.
        let ptr: *const (dyn Latent + 'static) = unsafe { std::mem::transmute(ptr) };
        frame.link().older.set(self.newest.replace(Some(ptr)));
        Registered { loops: self, older: frame.link().older.get() }
    }

    /// Releases iterations of the oldest loops, up to [`RELEASE_BUDGET`];
    /// returns how many calls it spawned.
    #[cold]
    pub(crate) fn release(&self) -> usize {
        // A release runs user code (the iterator that makes the calls), which
        // may poll again: that poll must not release the same loop again.
        if self.releasing.replace(true) {
            return 0;
        }
        let _reset = Reset(&self.releasing);
        let mut frames = Vec::new();
        let mut next = self.newest.get();
        while let Some(frame) = next {
            frames.push(frame);
            // SAFETY: a registered loop is suspended in its inline call
            // below this frame on this thread, so it is alive.
            next = unsafe { (*frame).link().older.get() };
        }
        let mut released = 0;
        for frame in frames.into_iter().rev() {
            if released == RELEASE_BUDGET {
                break;
            }
            // SAFETY: as above; a loop registered by the call (user code)
            // is unlinked again before it returns.
            released += unsafe { (*frame).release(RELEASE_BUDGET - released) };
        }
        released
    }
}

/// Unlinks the newest registered loop when dropped (also when the loop's
/// call unwinds).
pub(crate) struct Registered<'a> {
    loops: &'a LatentLoops,
    older: Option<*const (dyn Latent + 'static)>,
}

impl Drop for Registered<'_> {
    #[inline]
    fn drop(&mut self) {
        self.loops.newest.set(self.older);
    }
}

struct Reset<'a>(&'a Cell<bool>);

impl Drop for Reset<'_> {
    fn drop(&mut self) {
        self.0.set(false);
    }
}

/// A panic of user code, kept to resume where the loop would have met it.
pub(crate) type Panic = Box<dyn Any + Send>;

/// Takes up to `max` jobs from a suspended loop's iterator and spawns each
/// with `spawn`; returns how many. The iterator is user code run on behalf
/// of the loop, perhaps inside an unrelated job higher on this thread's
/// stack: a panic is caught and returned, for the loop to resume where it
/// would have made that call. An aborted loop releases nothing.
///
/// # Safety
/// The loop owning `jobs` is suspended in a call: nothing else references
/// `jobs` until it returns.
unsafe fn release_jobs<J, I: Iterator<Item = J>>(
    ctx: &Ctx<'_>,
    jobs: &UnsafeCell<I>,
    max: usize,
    mut spawn: impl FnMut(J),
) -> (usize, Option<Panic>) {
    if ctx.is_aborted() {
        return (0, None);
    }
    let mut n = 0;
    let caught = panic::catch_unwind(AssertUnwindSafe(|| {
        while n < max {
            // SAFETY: per the function contract.
            let Some(job) = (unsafe { (*jobs.get()).next() }) else { break };
            spawn(job);
            n += 1;
        }
    }));
    (n, caught.err())
}

/// The parallel version's loop: spawns each call while the worker has room
/// in its deque, runs it inline (as a latent loop) when not.
pub(crate) struct SpawnEach<'l, 'c, 'w, J: Job, I> {
    /// The loop's list. Reached through a pointer: a release spawns into
    /// it while the loop is suspended in an inline call.
    list: *mut SpawnList<J>,
    jobs: UnsafeCell<I>,
    ctx: &'c Ctx<'w>,
    /// Where the loop's calls sit in the tree (at the tracked levels).
    place: Option<Place>,
    link: Link,
    /// The iterator panicked in a release: no more releases; the loop
    /// resumes the panic after its inline call.
    failed: Cell<Option<Panic>>,
    _list: PhantomData<&'l mut SpawnList<J>>,
}

impl<'l, 'c, 'w, J: Job, I: Iterator<Item = J>> SpawnEach<'l, 'c, 'w, J, I> {
    pub(crate) fn new(list: &'l mut SpawnList<J>, ctx: &'c Ctx<'w>, jobs: I) -> Self {
        SpawnEach {
            list,
            jobs: UnsafeCell::new(jobs),
            ctx,
            place: ctx.slow.get().then(|| ctx.place()),
            link: Link::default(),
            failed: Cell::new(None),
            _list: PhantomData,
        }
    }

    /// Spawns or runs every call (see `SpawnList::spawn_each`); with
    /// `stop`, none after one run inline whose result it holds for.
    pub(crate) fn run(&self, stop: Option<fn(&J::Output) -> bool>) {
        let ctx = self.ctx;
        loop {
            // SAFETY: this thread alone reaches the list and the iterator,
            // and a release (through the registered loop) runs only during
            // the inline call, when no reference into either is live here.
            // The same holds for every use of them in this loop.
            let Some(job) = (unsafe { (*self.jobs.get()).next() }) else { break };
            if !ctx.worker.has_enough_queued() {
                // SAFETY: as above.
                unsafe { (*self.list).push_spawned(ctx, job) };
                continue;
            }
            ctx.check_abort();
            // SAFETY: as above.
            let at = unsafe { (*self.list).keep_place() };
            let value = {
                let _latent = ctx.worker.latent().register(self);
                job.run(ctx)
            };
            let stops = stop.is_some_and(|stop| stop(&value));
            // SAFETY: as above.
            unsafe { (*self.list).put(at, value) };
            // The iterator panicked in a release: where this loop meets it.
            if let Some(p) = self.failed.take() {
                panic::resume_unwind(p);
            }
            if stops {
                break;
            }
        }
    }
}

impl<J: Job, I: Iterator<Item = J>> Latent for SpawnEach<'_, '_, '_, J, I> {
    fn release(&self, max: usize) -> usize {
        let failed = self.failed.take();
        if failed.is_some() {
            self.failed.set(failed);
            return 0;
        }
        // SAFETY: the loop is suspended in its inline call, touching
        // neither its iterator nor its list until the call returns.
        let (n, failed) = unsafe {
            release_jobs(self.ctx, &self.jobs, max, |job| (*self.list).push_released_at(self.ctx, job, self.place))
        };
        self.failed.set(failed);
        n
    }

    fn link(&self) -> &Link {
        &self.link
    }
}

/// The lazy version of `iter.map(|x| f(x))`: yields each call's result,
/// running the call lazily inline (through `run`); the iterations not
/// started yet are a latent loop (see the module docs). A `fold` (and what
/// is built on it: `sum`, `for_each`, most reductions) registers the loop
/// once; plain `next` calls register it for each call.
///
/// Kept small and with a trivial drop: one runs at every node of a tree.
pub struct LazyIter<'c, 'w, J: Job, I, R> {
    ctx: &'c Ctx<'w>,
    /// Where the loop's calls sit in the tree (at the tracked levels).
    place: Option<Place>,
    jobs: UnsafeCell<I>,
    run: R,
    link: Link,
    /// Iterations released to thieves and not read yet (null: none; most
    /// loops never release any). Owned: a `Box::into_raw`.
    released: Cell<*mut Released<J>>,
}

struct Released<J: Job> {
    spawned: SpawnList<J>,
    /// Results of joined released calls, for `next`, in order.
    results: VecDeque<J::Output>,
    /// The iterator panicked while releasing: the loop resumes the panic
    /// after the released calls, and releases no more.
    failed: Option<Panic>,
}

impl<'c, 'w, J: Job, I: Iterator<Item = J>, R: Fn(J) -> J::Output> LazyIter<'c, 'w, J, I, R> {
    /// The calls `jobs` makes, each run lazily inline by `run`, in `ctx`.
    #[inline]
    pub fn new(ctx: &'c Ctx<'w>, jobs: I, run: R) -> Self {
        let place = ctx.slow.get().then(|| ctx.place());
        LazyIter {
            ctx,
            place,
            jobs: UnsafeCell::new(jobs),
            run,
            link: Link::default(),
            released: Cell::new(ptr::null_mut()),
        }
    }

    /// Whether released calls (or their results, or a panic) wait to be read.
    #[inline]
    fn has_released(&self) -> bool {
        !self.released.get().is_null()
    }

    /// Takes the released calls out, for the loop to read.
    fn take_released(&self) -> Box<Released<J>> {
        // SAFETY: a non-null pointer is an owned box; it is nulled here, so
        // it is taken once. No release runs now (between calls).
        unsafe { Box::from_raw(self.released.replace(ptr::null_mut())) }
    }

    /// For `next`: the next result of a released call, joining them first;
    /// resumes the iterator's panic after the last. `None`: nothing left.
    #[cold]
    #[inline(never)]
    fn next_released(&mut self) -> Option<J::Output> {
        let mut r = self.take_released();
        // Not registered now: no release happens during these joins.
        let joined: Vec<_> = r.spawned.join_all(self.ctx).collect();
        r.results.extend(joined);
        let value = r.results.pop_front();
        if value.is_none() {
            if let Some(p) = r.failed.take() {
                panic::resume_unwind(p);
            }
            return None;
        }
        self.released.set(Box::into_raw(r));
        value
    }

    /// For `fold`: folds the released calls' results into `acc`, and
    /// resumes the iterator's panic after them. The loop stays registered
    /// meanwhile: the joins may release more (into a new list).
    #[cold]
    #[inline(never)]
    fn fold_released<B>(&self, mut acc: B, f: &mut impl FnMut(B, J::Output) -> B) -> B {
        let mut r = self.take_released();
        for v in r.results.drain(..) {
            acc = f(acc, v);
        }
        for v in r.spawned.join_all(self.ctx) {
            acc = f(acc, v);
        }
        if let Some(p) = r.failed.take() {
            panic::resume_unwind(p);
        }
        acc
    }

    /// The next call's job, if any.
    #[inline]
    fn next_job(&self) -> Option<J> {
        // SAFETY: between calls, on this thread: no release runs.
        unsafe { (*self.jobs.get()).next() }
    }
}

impl<J: Job, I, R> Drop for LazyIter<'_, '_, J, I, R> {
    #[inline]
    fn drop(&mut self) {
        if !self.released.get().is_null() {
            drop_released(self.released.replace(ptr::null_mut()));
        }
    }
}

/// Drops released calls nobody read (aborting them: see `SpawnList`).
#[cold]
#[inline(never)]
fn drop_released<J: Job>(released: *mut Released<J>) {
    // SAFETY: an owned box, taken out of its iterator by the caller.
    drop(unsafe { Box::from_raw(released) });
}

impl<J: Job, I: Iterator<Item = J>, R: Fn(J) -> J::Output> Iterator for LazyIter<'_, '_, J, I, R> {
    type Item = J::Output;

    #[inline]
    fn next(&mut self) -> Option<J::Output> {
        if self.has_released() {
            if let Some(v) = self.next_released() {
                return Some(v);
            }
        }
        let job = self.next_job()?;
        let this: &Self = self;
        let _latent = this.ctx.worker.latent().register(this);
        Some((this.run)(job))
    }

    /// What `min`, `max` and the like are built on: one fold, so the loop
    /// registers once.
    #[inline]
    fn reduce<F: FnMut(J::Output, J::Output) -> J::Output>(self, mut f: F) -> Option<J::Output> {
        self.fold(None, |acc, v| {
            Some(match acc {
                Some(a) => f(a, v),
                None => v,
            })
        })
    }

    #[inline]
    fn fold<B, F: FnMut(B, J::Output) -> B>(self, init: B, mut f: F) -> B {
        let mut acc = init;
        let this: &Self = &self;
        // What calls of `next` left.
        if this.has_released() {
            acc = this.fold_released(acc, &mut f);
        }
        let Some(mut job) = this.next_job() else { return acc };
        let _latent = this.ctx.worker.latent().register(this);
        loop {
            acc = f(acc, (this.run)(job));
            // A release during the call (or during `f`) took the
            // iterations that come next.
            while this.has_released() {
                acc = this.fold_released(acc, &mut f);
            }
            job = match this.next_job() {
                Some(job) => job,
                None => return acc,
            };
        }
    }
}

impl<J: Job, I: Iterator<Item = J>, R> Latent for LazyIter<'_, '_, J, I, R> {
    fn release(&self, max: usize) -> usize {
        let mut r = self.released.get();
        // SAFETY: the loop is suspended in a call (or in `fold`'s `f`),
        // holding no reference to its jobs or released calls.
        if !r.is_null() && unsafe { (*r).failed.is_some() } {
            return 0;
        }
        if r.is_null() {
            r = Box::into_raw(Box::new(Released { spawned: SpawnList::new(), results: VecDeque::new(), failed: None }));
            self.released.set(r);
        }
        // SAFETY: as above; `r` is the loop's owned box.
        let r = unsafe { &mut *r };
        // SAFETY: as above.
        let (n, failed) = unsafe {
            release_jobs(self.ctx, &self.jobs, max, |job| r.spawned.push_released_at(self.ctx, job, self.place))
        };
        r.failed = failed;
        n
    }

    fn link(&self) -> &Link {
        &self.link
    }
}
