//! The slow path of `Job::run`, taken only in distributed runs and only near
//! the top of the tree.
//!
//! - *Tracking*: a call's depth (calls from the root) and duration are
//!   measured; one that ran long enough is published to the result table
//!   (key, encoded value, depth, its id and its nearest tracked ancestor's
//!   id), so that little finished work dies with a crashed node — the
//!   master's own top-level work included — and so that checkpoints have
//!   something to save. Depths whose calls are short on average stop being
//!   tracked: below them the recursion runs at full speed.
//! - *Lookups*: inside a job re-executed after a failure (or resumed from a
//!   checkpoint), a call first looks its result up: a value is used; a
//!   pointer, or a job of an older epoch still running elsewhere, is waited
//!   for (the driver fetches it, or the running job publishes it). Calls are
//!   hashed only where results can be: at the depths where results of
//!   tracked calls sit, and — below the tracked levels, where depths are
//!   not known — within `SATIN_LOOKUP_DEPTH` calls below the redone job.
//!
//! The fast path (`Ctx::slow` false) reads one flag per call.

use std::time::Instant;

use super::ctx::{Aborted, Ctx};
use super::remote::{Remote, RemoteEvent};
use crate::checkpoint::{ResultMeta, DEPTH_UNKNOWN};
use crate::job::ResultCodec;
use crate::progress::Unfinished;
use crate::proto::SharedEntry;
use crate::{Job, JobKey};

/// How many nested calls below a redone job look up the result table
/// whatever their depth: results of jobs stolen across nodes sit near the
/// top of the tree (thieves take the oldest jobs). Override with
/// `SATIN_LOOKUP_DEPTH`.
pub(crate) fn lookup_depth_limit() -> u32 {
    static LIMIT: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *LIMIT.get_or_init(|| {
        std::env::var("SATIN_LOOKUP_DEPTH").ok().and_then(|s| s.parse().ok()).unwrap_or(DEFAULT_LOOKUP_DEPTH)
    })
}

pub(crate) const DEFAULT_LOOKUP_DEPTH: u32 = 6;

/// The call's key: small parameters (borrowed ones as their digests)
/// encoded on the stack, large ones streamed into the hash (no copy of a
/// call's data).
fn key<J: Job>(job: &J) -> JobKey {
    let mut buf = [0u8; 128];
    let small = {
        let _keying = crate::job::lent::keying();
        postcard::to_slice(job, &mut buf).map(|b| b.len())
    };
    match small {
        Ok(n) => J::key_of_params(&buf[..n]),
        Err(_) => job.key(),
    }
}

/// `Job::run` when `ctx.slow` is set.
#[cold]
#[inline(never)]
pub(crate) fn run_slow<J: Job>(job: J, ctx: &Ctx<'_>) -> J::Output {
    let registry = ctx.worker.registry();
    let Some(remote) = registry.remote.get() else { return run_for_progress(job, ctx) };
    if J::MUTATES || J::LOCAL.is_some() {
        // Its outcome includes the data it changes in place, which the
        // table does not hold (or its parameters cannot be keyed): it
        // only runs (again), untracked.
        return run_fast(job, ctx);
    }
    let depth = ctx.depth.get();
    let known = depth != DEPTH_UNKNOWN;
    let redone = ctx.redone.get();
    let rel = ctx.lookup_depth.get();
    let limit = lookup_depth_limit();
    // Where the depth is known, calls are looked up only at depths where
    // results of tracked calls sit; below the tracked levels, a few levels
    // under the redone job (results of short stolen jobs sit there).
    let (look_here, look_below) = match (redone, known) {
        (false, _) => (false, false),
        (true, true) => (remote.table.has_depth(depth), remote.table.has_deeper(depth)),
        (true, false) => (rel < limit, rel + 1 < limit),
    };
    let track = known && remote.tracking() && remote.tracks(depth);
    // The entry call's key came with it (see `Ctx::entry_key`).
    let entry_key = ctx.entry_key.take().filter(|&(d, _)| known && d == depth).map(|(_, k)| k);
    if !look_below && !track {
        let found = if look_here { lookup::<J>(remote, ctx, entry_key.unwrap_or_else(|| key(&job))) } else { None };
        // Below everything the slow path is for: full speed from here on.
        return found.unwrap_or_else(|| run_fast(job, ctx));
    }
    // Keyed for a lookup, or for publishing where that costs little
    // against the run (`Remote::publishes`). An entry call (a stolen job,
    // the root) is not published here: its outcome goes to the protocol,
    // which puts a stolen job's result into the table as it returns it —
    // encoding a result of megabytes twice would double its cost.
    let ticket = if track && entry_key.is_none() { remote.publishes(depth) } else { None };
    let publishes = ticket.is_some();
    let keying = Instant::now();
    let key = (look_here || publishes).then(|| entry_key.unwrap_or_else(|| key(&job)));
    let key_ns = keying.elapsed().as_nanos() as u64;
    if let (true, Some(k)) = (look_here, key) {
        if let Some(v) = lookup::<J>(remote, ctx, k) {
            return v;
        }
    }
    let outer_depth = ctx.depth.replace(if known { depth + 1 } else { DEPTH_UNKNOWN });
    let outer_frame = ctx.frame.get();
    let outer_redone = ctx.redone.replace(look_below);
    ctx.lookup_depth.set(rel + 1);
    let frame = if track { remote.next_frame() } else { outer_frame };
    ctx.frame.set(frame);
    let start = track.then(Instant::now);
    let unfinished = registry.progress.as_deref().filter(|p| track && p.tracks(depth)).map(|progress| {
        progress.started(frame, outer_frame, depth);
        Unfinished { progress, frame }
    });
    // An unwinding call leaves `ctx` behind: it belongs to the job that
    // catches the unwind, which is done with it.
    let out = job.run_parallel(ctx);
    if let Some(u) = unfinished {
        u.finish();
    }
    ctx.depth.set(outer_depth);
    ctx.frame.set(outer_frame);
    ctx.redone.set(outer_redone);
    ctx.lookup_depth.set(rel);
    if let Some(start) = start {
        let ran = start.elapsed();
        let ran_ns = ran.as_nanos() as u64;
        remote.record_duration(depth, ran_ns);
        if let (true, Some(key)) = (publishes && ran_ns >= remote.publish_after(), key) {
            if remote.within_publish_cost(key_ns, ran_ns) {
                let encoding = Instant::now();
                // (A local function's results do not encode; its calls
                // are not tracked, so none gets here.)
                let budget = remote.publish_budget(key_ns, ran_ns);
                match J::Codec::exceeds(&out, budget) {
                    Ok(false) => {
                        let encode_only = Instant::now();
                        if let Ok(value) = J::Codec::encode(&out) {
                            remote.record_encoding(value.len(), encode_only.elapsed().as_nanos() as u64);
                            let cost = key_ns + encoding.elapsed().as_nanos() as u64;
                            remote.record_publish_cost(depth, cost, ran_ns);
                            let meta = ResultMeta { depth, id: frame, parent: outer_frame };
                            remote.send(RemoteEvent::Published { key, value, meta, ran });
                        }
                    }
                    // Too large to be worth it: known without encoding it.
                    _ => remote.refuse_publishing(depth),
                }
            } else {
                // Keying alone cost more than publishing may: the encoding
                // is spared, and what was paid is enough to know.
                remote.record_publish_cost(depth, key_ns, ran_ns);
            }
        }
    }
    // (A probe's ticket ends the probe here, or on unwinding.)
    drop(ticket);
    out
}

/// `Job::run`'s slow path in a runtime with no remote side: the call is
/// tracked for the progress estimate if its depth is worth it (see
/// [`crate::progress`]); below, the subtree runs at full speed.
fn run_for_progress<J: Job>(job: J, ctx: &Ctx<'_>) -> J::Output {
    let depth = ctx.depth.get();
    let Some(progress) = ctx.worker.registry().progress.as_deref() else { return run_fast(job, ctx) };
    if depth == DEPTH_UNKNOWN {
        return run_fast(job, ctx);
    }
    if !progress.tracks(depth) {
        // The first level too short to track: counted for its parent, so
        // that the parent's share is right; its subtree at full speed.
        let parent = ctx.frame.get();
        progress.untracked(parent, false);
        let out = run_fast(job, ctx);
        progress.untracked(parent, true);
        return out;
    }
    let frame = progress.next_frame();
    let parent = ctx.frame.replace(frame);
    ctx.depth.set(depth + 1);
    progress.started(frame, parent, depth);
    let unfinished = Unfinished { progress, frame };
    let start = Instant::now();
    let out = job.run_parallel(ctx);
    progress.record_duration(depth, start.elapsed());
    unfinished.finish();
    ctx.depth.set(depth);
    ctx.frame.set(parent);
    out
}

/// Runs the call and its whole subtree without the slow path.
fn run_fast<J: Job>(job: J, ctx: &Ctx<'_>) -> J::Output {
    ctx.slow.set(false);
    let depth = ctx.depth.replace(DEPTH_UNKNOWN);
    let out = job.run_parallel(ctx);
    ctx.slow.set(true);
    ctx.depth.set(depth);
    out
}

/// Looks `key` up for a call of `ctx`: a value in the table, or one worth
/// waiting for.
fn lookup<J: Job>(remote: &Remote, ctx: &Ctx<'_>, key: JobKey) -> Option<J::Output> {
    let registry = ctx.worker.registry();
    registry.table_lookups.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let entry = remote.table.get(&key);
    // Only a job of an older epoch may be waited for (see
    // `proto::JobSpec::epoch`); the wait runs other work meanwhile, none
    // newer than this frame.
    let worth_waiting = match &entry {
        Some(SharedEntry::Pointer) => true,
        Some(SharedEntry::Running { epoch }) => *epoch < ctx.epoch,
        // With a home table, what this replica lacks its homes may hold.
        None => remote.table.asks_homes(),
        Some(SharedEntry::Value(_)) => false,
    };
    let bytes = match entry {
        Some(SharedEntry::Value(v)) => Some(v.clone()),
        _ if worth_waiting => {
            let wait = remote.ask(key, ctx.epoch);
            ctx.worker.wait_until_in(ctx.epoch, || wait.is_done() || ctx.is_aborted());
            if ctx.is_aborted() {
                std::panic::resume_unwind(Box::new(Aborted));
            }
            wait.value()
        }
        _ => None,
    }?;
    let value = J::Codec::decode(&bytes).ok()?;
    registry.table_hits.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    Some(value)
}
