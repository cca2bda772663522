//! Stack-allocated spawned jobs: the spawn/sync fast path.
//!
//! A [`Slot`] holds one spawned call: its parameters until someone runs it,
//! then its result until the parent reads it. Generated code pins the slot in
//! the parent's frame (`pin!`), so a spawn costs a deque push and a sync an
//! uncontended pop, with no heap allocation. Pinning is also what makes the
//! deque's raw pointer sound: a pinned slot is dropped before its memory is
//! reused, and `Drop` does not return while any deque or thief can still reach
//! the slot.

use std::any::Any;
use std::cell::{Cell, UnsafeCell};
use std::marker::PhantomPinned;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};

use super::ctx::{Aborted, Ctx, Place};
use super::job_ref::{Exec, JobRef, Taken};
use super::latent::SpawnEach;
use super::registry::{Registry, WorkerCounters, WorkerThread};
use super::remote::{Completion, RemotePanic, RemoteTake};
use super::tls::CurrentGuard;
use crate::Job;
use satin_proto::JobKind;

const NEW: u8 = 0; // created, not spawned
const DEFERRED: u8 = 5; // spawned while the worker had enough queued: kept here, run at the sync
const QUEUED: u8 = 1; // in the owner's deque
const RUNNING: u8 = 2; // taken out of the deque by an executor
const DONE: u8 = 3; // result written
const CONSUMED: u8 = 4; // result read (or the job ran inline in the parent)
const READY: u8 = 6; // made with its value (a branch without a call), never pushed

const NO_THIEF: usize = usize::MAX;
/// `thief` of a job stolen by another machine.
const REMOTE: usize = usize::MAX - 1;

enum SlotResult<J: Job> {
    Value(J::Output),
    /// A result from another node, decoded by the worker that reads it
    /// (not by the driver's thread, which must stay free for beats): the
    /// job, whose `&mut` parameters get the thief's copy's contents, and
    /// the encoded outcome.
    Encoded(J, satin_proto::Bytes),
    Panic(Box<dyn Any + Send>),
    Aborted,
}

impl<J: Job> SlotResult<J> {
    /// A decoded outcome: an encoded one decoded now.
    fn decoded(self) -> SlotResult<J> {
        match self {
            SlotResult::Encoded(job, bytes) => match job.accept(&bytes) {
                Ok(v) => SlotResult::Value(v),
                Err(e) => {
                    SlotResult::Panic(Box::new(format!("satin: a result from another node does not decode: {e}")))
                }
            },
            other => other,
        }
    }
}

/// One spawned call of an annotated function. See the module docs.
pub struct Slot<J: Job> {
    state: AtomicU8,
    abort: AtomicBool,
    /// Worker that stole the job, if any; written before `DONE` is released.
    thief: AtomicUsize,
    /// Set by `spawn`; read by the executor after it took the job from the
    /// deque (the deque's release/acquire orders the two).
    owner: Cell<*const WorkerThread>,
    spawner: Cell<*const ()>,
    /// Where the call sits in the tree; known only where the spawner
    /// tracks calls (see `sched::track`).
    place: Cell<Place>,
    job: UnsafeCell<Option<J>>,
    outcome: UnsafeCell<Option<SlotResult<J>>>,
    _pinned: PhantomPinned,
}

impl<J: Job> Slot<J> {
    /// A slot holding the parameters of a call that has not been spawned yet.
    #[inline]
    pub fn new(job: J) -> Slot<J> {
        Slot::with(NEW, Some(job), None)
    }

    /// A slot that already holds its result: the branch of a conditional
    /// spawn (`let x = if c { f(a) } else { v };`) that makes no call.
    /// Spawning it does nothing; joining it returns `value`.
    #[inline]
    pub fn ready(value: J::Output) -> Slot<J> {
        Slot::with(READY, None, Some(SlotResult::Value(value)))
    }

    #[inline]
    fn with(state: u8, job: Option<J>, outcome: Option<SlotResult<J>>) -> Slot<J> {
        Slot {
            state: AtomicU8::new(state),
            abort: AtomicBool::new(false),
            thief: AtomicUsize::new(NO_THIEF),
            owner: Cell::new(std::ptr::null()),
            spawner: Cell::new(std::ptr::null()),
            place: Cell::new(Place::UNKNOWN),
            job: UnsafeCell::new(job),
            outcome: UnsafeCell::new(outcome),
            _pinned: PhantomPinned,
        }
    }

    /// Makes the call available to other workers. It runs in parallel with the
    /// caller until [`join`](Self::join) or until the slot is dropped.
    ///
    /// Lazy task creation: if the worker already has enough jobs queued for
    /// thieves (see `Builder::spawn_limit`), the job is not pushed but kept
    /// in the slot; `join` then runs it inline, as the sequential function
    /// would have, and a drop discards it without running it.
    #[inline]
    pub fn spawn(self: Pin<&Self>, ctx: &Ctx<'_>) {
        ctx.check_abort();
        let this = self.get_ref();
        if this.state.load(Ordering::Relaxed) == READY {
            return;
        }
        debug_assert_eq!(this.state.load(Ordering::Relaxed), NEW, "a slot is spawned once");
        if ctx.worker.has_enough_queued() {
            this.state.store(DEFERRED, Ordering::Relaxed);
            return;
        }
        self.push(ctx);
    }

    /// Keeps the call in this frame instead of spawning it: the join runs
    /// it inline. (A conditional `let` whose call is `?`ed and read first
    /// runs where the plain function runs it, before the calls after it,
    /// which are spawned meanwhile; spawned too, it would sit under them
    /// in the deque and run after them on this worker.)
    #[inline]
    pub fn run_at_join(self: Pin<&Self>) {
        let this = self.get_ref();
        if this.state.load(Ordering::Relaxed) == NEW {
            this.state.store(DEFERRED, Ordering::Relaxed);
        }
    }

    /// Pushes the call onto the worker's deque, however many jobs it holds.
    #[inline]
    fn push(self: Pin<&Self>, ctx: &Ctx<'_>) {
        let place = ctx.slow.get().then(|| ctx.place());
        self.push_at(ctx, place);
    }

    /// [`push`](Self::push) for a call whose place in the tree is not the
    /// context's current one (`None`: not known or not needed).
    #[inline]
    fn push_at(self: Pin<&Self>, ctx: &Ctx<'_>, place: Option<Place>) {
        let this = self.get_ref();
        this.owner.set(ctx.worker);
        this.spawner.set(ctx as *const Ctx<'_> as *const ());
        if let Some(place) = place {
            this.place.set(place);
        }
        this.state.store(QUEUED, Ordering::Relaxed);
        WorkerCounters::bump(&ctx.worker.counters().spawns);
        if J::LOCAL.is_some() {
            ctx.worker.set_local_queued(true);
        }
        // SAFETY: the slot is pinned and its `Drop` waits until the job is out
        // of every deque and finished, so the pointer stays valid for as long
        // as the `JobRef` can be executed; `execute::<J>` matches the data.
        let job_ref = unsafe { JobRef::new(this as *const Slot<J> as *const (), execute::<J>) };
        ctx.worker.push(job_ref);
    }

    /// Waits for the spawned call and returns its result. Runs it inline if no
    /// other worker took it; otherwise executes other work until it is done.
    /// A panic in the call resumes here.
    #[inline]
    pub fn join(self: Pin<&Self>, ctx: &Ctx<'_>) -> J::Output {
        let this = self.get_ref();
        match this.state.load(Ordering::Acquire) {
            DEFERRED => {
                this.state.store(CONSUMED, Ordering::Relaxed);
                // SAFETY: a deferred slot was never pushed: only this thread sees it.
                let job = unsafe { (*this.job.get()).take() }.expect("a deferred slot holds its job");
                return job.run(ctx);
            }
            QUEUED => {
                if let Some(job) = this.retrieve(ctx.worker) {
                    this.state.store(CONSUMED, Ordering::Relaxed);
                    // Nobody took it, and older (larger) jobs still wait in
                    // the deque: no worker is short of work, so this one runs
                    // as the plain call (which still polls). Running it in
                    // parallel instead would refill the deque with ever
                    // smaller jobs at every level on the way down: d^4/24
                    // spawns for a tree of depth d with the default limit.
                    if !ctx.slow.get() && ctx.worker.keeps_returned_jobs_lazy() {
                        return job.run_lazy(ctx);
                    }
                    return job.run(ctx);
                }
            }
            READY => {
                this.state.store(CONSUMED, Ordering::Relaxed);
                // SAFETY: a ready slot was never pushed: only this thread sees it.
                match unsafe { (*this.outcome.get()).take() } {
                    Some(SlotResult::Value(v)) => return v,
                    _ => unreachable!("a ready slot holds its value"),
                }
            }
            RUNNING | DONE => {}
            s => panic!("satin internal error: join of a slot in state {s}"),
        }
        // A call on another machine is not waited for by an aborted frame
        // (the run ended elsewhere): it unwinds, and the slot's drop
        // cancels the call.
        let remote_and_aborted = || this.thief.load(Ordering::Relaxed) == REMOTE && ctx.is_aborted();
        ctx.worker.wait_until_in(ctx.epoch, || this.state.load(Ordering::Acquire) == DONE || remote_and_aborted());
        if this.state.load(Ordering::Acquire) != DONE {
            panic::resume_unwind(Box::new(Aborted));
        }
        match this.take_outcome().decoded() {
            SlotResult::Value(v) => v,
            SlotResult::Panic(p) => panic::resume_unwind(p),
            SlotResult::Aborted | SlotResult::Encoded(..) => panic::resume_unwind(Box::new(Aborted)),
        }
    }

    /// Pops the owner's deque until this job comes out (returns its params)
    /// or the deque is empty (the job was stolen). Jobs popped on the way are
    /// later siblings; they are executed here, their results kept in their slots.
    fn retrieve(&self, worker: &WorkerThread) -> Option<J> {
        let me = self as *const Slot<J> as *const ();
        while let Some(job) = worker.pop() {
            if job.data() == me {
                // SAFETY: we popped our own job, so no one else can run it and
                // nobody else touches `job`.
                return unsafe { (*self.job.get()).take() };
            }
            // SAFETY: popped from the deque: this is its one execution.
            unsafe { job.execute(worker, Taken::Popped) };
        }
        None
    }

    /// Reads the outcome of a finished job (state `DONE`).
    fn take_outcome(&self) -> SlotResult<J> {
        self.state.store(CONSUMED, Ordering::Relaxed);
        let thief = self.thief.load(Ordering::Relaxed);
        if thief != NO_THIEF && thief != REMOTE {
            // SAFETY: `owner` was set by `spawn` on this thread.
            let owner = unsafe { &*self.owner.get() };
            if let Some(ft) = &owner.registry().ft {
                ft.result_read(owner.index(), self as *const Slot<J> as usize);
            }
        }
        // SAFETY: state was DONE (acquired by the caller): the executor wrote
        // the outcome before releasing DONE and no longer touches the slot.
        unsafe { (*self.outcome.get()).take() }.expect("a finished slot holds an outcome")
    }
}

impl<J: Job> Drop for Slot<J> {
    /// Dropping an unread spawn aborts it and everything it spawned.
    fn drop(&mut self) {
        match self.state.load(Ordering::Acquire) {
            NEW | DEFERRED | CONSUMED | READY => return,
            DONE => {}
            state => {
                // SAFETY: `owner` was set by `spawn` on this thread, which is
                // still running the frame that owns the slot.
                let worker = unsafe { &*self.owner.get() };
                self.abort.store(true, Ordering::Release);
                if state == QUEUED && self.retrieve(worker).is_some() {
                    self.state.store(CONSUMED, Ordering::Relaxed);
                    return;
                }
                let registry = worker.registry();
                registry.bump_abort_epoch();
                let me = self as *const Slot<J> as *const ();
                // SAFETY: a spawned slot's spawner is the context of the
                // frame that owns the slot, which is dropping it now.
                let epoch = unsafe { &*(self.spawner.get() as *const Ctx<'_>) }.epoch;
                // A job on another machine is not waited for: cancelling it
                // completes the slot as aborted (see `sched::remote`).
                worker.wait_until_in(epoch, || {
                    self.state.load(Ordering::Acquire) == DONE
                        || (self.thief.load(Ordering::Relaxed) == REMOTE && registry.cancel_remote(me))
                });
            }
        }
        if let SlotResult::Panic(p) = self.take_outcome() {
            if !std::thread::panicking() {
                panic::resume_unwind(p);
            }
        }
    }
}

/// Executes a slot taken out of a deque, on `worker`.
///
/// # Safety
/// `data` points to a live, spawned `Slot<J>` and this is its one execution.
unsafe fn execute<J: Job>(data: *const (), exec: Exec<'_>) -> bool {
    // SAFETY: forwarded.
    unsafe { execute_as::<J>(data, exec, false) }
}

/// Executes a slot whose remote thief died: a redone job.
///
/// # Safety
/// As for [`execute`].
unsafe fn execute_requeued<J: Job>(data: *const (), exec: Exec<'_>) -> bool {
    // SAFETY: forwarded.
    unsafe { execute_as::<J>(data, exec, true) }
}

/// # Safety
/// As for [`execute`].
unsafe fn execute_as<J: Job>(data: *const (), exec: Exec<'_>, redone: bool) -> bool {
    // SAFETY: per the function contract.
    let slot = unsafe { &*(data as *const Slot<J>) };
    let (worker, taken) = match exec {
        Exec::Run(worker, taken) => (worker, taken),
        // A local call stays: `out` is left empty and the taker puts
        // the job back where this process's workers find it.
        Exec::Remote(_) if J::LOCAL.is_some() => return false,
        Exec::Remote(out) => {
            *out = Some(slot.take_remote(data, redone));
            return true;
        }
    };
    // SAFETY: the spawner outlives the slot's completion, not reached yet.
    let spawner = unsafe { &*(slot.spawner.get() as *const Ctx<'_>) };
    if spawner.epoch > worker.epoch_limit() {
        // Newer work must not run nested above a frame of an older epoch
        // (see `proto::JobSpec::epoch`): hand it to another worker, or to
        // this one once its older frames are done.
        let f = if redone { execute_requeued::<J> } else { execute::<J> };
        // SAFETY: the same job, still unexecuted, under the same contract.
        worker.registry().injector.push(unsafe { JobRef::new(data, f) });
        return false;
    }
    slot.state.store(RUNNING, Ordering::Relaxed);
    // The task stream draws the jobs that moved here or run again.
    let recorded = (redone || matches!(taken, Taken::Stolen { .. })) && worker.registry().spans.on();
    let started_kind = if redone { JobKind::Redone } else { JobKind::Stolen };
    let start = recorded.then(|| worker.registry().spans.started(worker.index(), started_kind));
    if let Taken::Stolen { victim } = taken {
        WorkerCounters::bump(&worker.counters().steals);
        slot.thief.store(worker.index(), Ordering::Relaxed);
        if let Some(ft) = &worker.registry().ft {
            ft.record_steal(victim, data as usize, worker.index());
        }
    }
    let outcome = {
        let ctx = Ctx::child(worker, &slot.abort, spawner, redone, slot.place.get());
        if ctx.is_aborted() {
            SlotResult::Aborted
        } else {
            // SAFETY: only the executor touches `job` once the slot left the deque.
            let job = unsafe { (*slot.job.get()).take() }.expect("a queued slot holds its job");
            let _current = CurrentGuard::set(&ctx);
            match panic::catch_unwind(AssertUnwindSafe(|| job.run(&ctx))) {
                Ok(v) => SlotResult::Value(v),
                Err(p) if p.is::<Aborted>() => SlotResult::Aborted,
                Err(p) => SlotResult::Panic(p),
            }
        }
    };
    if let Some(start) = start {
        let kind = match outcome {
            SlotResult::Aborted => JobKind::Aborted,
            SlotResult::Panic(_) => JobKind::Failed,
            SlotResult::Value(_) | SlotResult::Encoded(..) if redone => JobKind::Redone,
            SlotResult::Value(_) | SlotResult::Encoded(..) => JobKind::Stolen,
        };
        worker.registry().spans.ended(worker.index(), start, kind);
    }
    // SAFETY: the owner reads `outcome` only after it acquires DONE below.
    unsafe { *slot.outcome.get() = Some(outcome) };
    let stolen = taken != Taken::Popped;
    slot.state.store(DONE, Ordering::Release);
    // The slot may be gone from here on: touch only the worker.
    if stolen {
        worker.registry().sleep.wake_all();
    }
    true
}

impl<J: Job> Slot<J> {
    /// Another machine takes this job: encode the call but keep it here, in
    /// case the thief dies and it has to run here after all. A job run
    /// again (`redone`: its last thief died) goes as redone: its new
    /// thief looks up what the dead one's work left in the result table.
    fn take_remote(&self, data: *const (), redone: bool) -> RemoteTake {
        self.thief.store(REMOTE, Ordering::Relaxed);
        self.state.store(RUNNING, Ordering::Relaxed);
        // SAFETY: the job is out of the deque; only this taker reads it, and
        // only a later (requeued) execution takes it.
        let job = unsafe { (*self.job.get()).as_ref() }.expect("a queued slot holds its job");
        // SAFETY: the spawning context outlives the slot's completion, which
        // has not happened yet.
        let spawner = unsafe { &*(self.spawner.get() as *const Ctx<'_>) };
        let (key, payload) = crate::job::registry::encode_stolen_call(job);
        RemoteTake {
            key,
            redone: redone || self.place.get().redone,
            epoch: spawner.epoch,
            place: self.place.get(),
            payload: payload.into(),
            complete: complete_remote::<J>,
            // SAFETY: `execute_requeued::<J>` matches the data; the
            // remote-steal map runs this reference at most once (requeue).
            job: unsafe { JobRef::new(data, execute_requeued::<J>) },
        }
    }
}

/// Completes a remotely stolen slot with its encoded result (or as aborted).
///
/// # Safety
/// `data` points to a live `Slot<J>` taken by `take_remote`, completed once.
unsafe fn complete_remote<J: Job>(data: *const (), completion: Completion<'_>, registry: &Registry) {
    // SAFETY: per the function contract.
    let slot = unsafe { &*(data as *const Slot<J>) };
    // SAFETY: the job left the deque for the remote thief; the requeue that
    // could run it here is ruled out by this completion (see `sched::remote`).
    let job = unsafe { (*slot.job.get()).take() };
    let outcome = match completion {
        // Decoded by the owner when it reads it (see `SlotResult::Encoded`),
        // unless it must be seen at once.
        Completion::Value(bytes) => {
            let encoded = SlotResult::Encoded(job.expect("a remotely taken slot keeps its job"), bytes);
            if J::ACCEPT_ON_ARRIVAL {
                encoded.decoded()
            } else {
                encoded
            }
        }
        Completion::Aborted => SlotResult::Aborted,
        Completion::Failed(reason) => SlotResult::Panic(Box::new(RemotePanic(reason.to_string()))),
    };
    // SAFETY: the owner reads `outcome` only after it acquires DONE below.
    unsafe { *slot.outcome.get() = Some(outcome) };
    slot.state.store(DONE, Ordering::Release);
    registry.sleep.wake_all();
}

/// The spawns of one loop: every iteration's call, joined after the loop.
///
/// Spawned calls are boxed slots, because their number is only known at run
/// time. A call run inline by the lazy-spawning cut-off while nothing earlier
/// is pending is handed straight back to the loop, so a saturated worker
/// neither allocates nor stores anything.
pub struct SpawnList<J: Job> {
    entries: Vec<Entry<J>>,
}

enum Entry<J: Job> {
    Ready(J::Output),
    Spawned(Pin<Box<Slot<J>>>),
    /// Read by `join_until`.
    Joined,
}

impl<J: Job> Default for SpawnList<J> {
    fn default() -> Self {
        SpawnList { entries: Vec::new() }
    }
}

impl<J: Job> SpawnList<J> {
    /// An empty list.
    pub fn new() -> Self {
        Self::default()
    }

    /// Spawns one iteration's call. Returns its result if the call ran inline
    /// and every earlier call's result was already handed back: the caller
    /// applies it now, which keeps the results in iteration order.
    #[inline]
    #[must_use]
    pub fn spawn(&mut self, ctx: &Ctx<'_>, job: J) -> Option<J::Output> {
        let ready = self.spawn_or_run(ctx, job)?;
        if self.entries.is_empty() {
            return Some(ready);
        }
        self.entries.push(Entry::Ready(ready));
        None
    }

    /// Whether the call [`spawn`](Self::spawn) just kept ran inline and
    /// failed (see `failure.rs`): a loop that `?`s its results starts no
    /// more iterations.
    #[inline]
    pub fn kept_failed(&self) -> bool
    where
        J::Output: super::Failure,
    {
        matches!(self.entries.last(), Some(Entry::Ready(v)) if super::failed(v))
    }

    /// Spawns one call and keeps its result for [`join_all`](Self::join_all).
    #[inline]
    pub fn spawn_kept(&mut self, ctx: &Ctx<'_>, job: J) {
        if let Some(ready) = self.spawn_or_run(ctx, job) {
            self.entries.push(Entry::Ready(ready));
        }
    }

    #[inline]
    fn spawn_or_run(&mut self, ctx: &Ctx<'_>, job: J) -> Option<J::Output> {
        if ctx.worker.has_enough_queued() {
            ctx.check_abort();
            return Some(job.run(ctx));
        }
        self.push_spawned(ctx, job);
        None
    }

    /// Spawns every call `jobs` makes, keeping the results for
    /// [`join_all`](Self::join_all). A call the worker has no room for
    /// runs inline, and meanwhile the calls not made yet are a latent loop
    /// (see `sched::latent`): released to thieves if one asks.
    #[inline]
    pub fn spawn_each(&mut self, ctx: &Ctx<'_>, jobs: impl Iterator<Item = J>) {
        SpawnEach::new(self, ctx, jobs).run(None);
    }

    /// [`spawn_each`](Self::spawn_each) that makes no more calls after
    /// one run inline fails (see `failure.rs`): the loop `?`s each result.
    #[inline]
    pub fn spawn_each_until_failure(&mut self, ctx: &Ctx<'_>, jobs: impl Iterator<Item = J>)
    where
        J::Output: super::Failure,
    {
        SpawnEach::new(self, ctx, jobs).run(Some(super::failed::<J::Output>));
    }

    /// Keeps a place for the result of a call run inline now, before the
    /// calls a release may spawn meanwhile; returns where it is.
    pub(super) fn keep_place(&mut self) -> usize {
        self.entries.push(Entry::Joined);
        self.entries.len() - 1
    }

    /// Puts the result of the call run inline at `at` (see `keep_place`).
    pub(super) fn put(&mut self, at: usize, value: J::Output) {
        self.entries[at] = Entry::Ready(value);
    }

    #[inline(never)]
    pub(super) fn push_spawned(&mut self, ctx: &Ctx<'_>, job: J) {
        ctx.check_abort();
        self.push_released(ctx, job);
    }

    /// Spawns one call, however many jobs the worker has queued, without
    /// looking for an abort (a release runs on behalf of a loop that may
    /// sit below another job on this thread's stack: see `sched::latent`).
    pub(crate) fn push_released(&mut self, ctx: &Ctx<'_>, job: J) {
        let slot = Box::pin(Slot::new(job));
        slot.as_ref().push(ctx);
        self.entries.push(Entry::Spawned(slot));
    }

    /// [`push_released`](Self::push_released) for an iteration of a loop
    /// suspended below the current call: it sits where the loop's calls
    /// do (`place`, taken when the loop began), not where the context is
    /// now — deeper, or below the tracked levels.
    pub(crate) fn push_released_at(&mut self, ctx: &Ctx<'_>, job: J, place: Option<Place>) {
        let slot = Box::pin(Slot::new(job));
        slot.as_ref().push_at(ctx, place);
        self.entries.push(Entry::Spawned(slot));
    }

    /// Whether no call is waiting to be handed back.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Waits for every call not handed back yet; yields their results in
    /// spawn order.
    #[inline]
    pub fn join_all(&mut self, ctx: &Ctx<'_>) -> impl Iterator<Item = J::Output> + '_ {
        if !self.entries.is_empty() {
            self.join_pending(ctx);
        }
        self.entries.drain(..).map(|e| match e {
            Entry::Ready(v) => v,
            Entry::Spawned(_) | Entry::Joined => unreachable!("every entry was joined, none by `join_until`"),
        })
    }

    /// Joins the calls, newest first, until one's result satisfies `stop`
    /// or `cut()` holds (true), or all are joined with neither (false).
    /// What is not joined then is aborted when the list is dropped.
    pub fn join_until(&mut self, ctx: &Ctx<'_>, stop: impl Fn(&J::Output) -> bool, cut: impl Fn() -> bool) -> bool {
        for entry in self.entries.iter_mut().rev() {
            if cut() {
                return true;
            }
            let value = match entry {
                Entry::Spawned(slot) => slot.as_ref().join(ctx),
                Entry::Ready(_) => match std::mem::replace(entry, Entry::Joined) {
                    Entry::Ready(v) => v,
                    _ => unreachable!("matched as ready"),
                },
                Entry::Joined => continue,
            };
            *entry = Entry::Joined;
            if stop(&value) {
                return true;
            }
        }
        cut()
    }

    #[inline(never)]
    fn join_pending(&mut self, ctx: &Ctx<'_>) {
        // Newest first: each one is then on top of the deque if not stolen.
        for entry in self.entries.iter_mut().rev() {
            if let Entry::Spawned(slot) = entry {
                let value = slot.as_ref().join(ctx);
                *entry = Entry::Ready(value);
            }
        }
    }
}

impl<J: Job> Drop for SpawnList<J> {
    fn drop(&mut self) {
        // Newest first, as locals are dropped.
        while let Some(entry) = self.entries.pop() {
            drop(entry);
        }
    }
}
