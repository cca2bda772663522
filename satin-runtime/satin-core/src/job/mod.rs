//! What a job is: the serialisable parameters of one call of an annotated
//! function, plus how to run it.

pub(crate) mod borrow;
pub(crate) mod codec;
pub(crate) mod fields;
pub(crate) mod generic;
pub(crate) mod lent;
pub(crate) mod local;
pub(crate) mod receiver;
pub(crate) mod registry;
pub(crate) mod typed_root;

pub use borrow::{Travel, TravelMut, WriteBackError};
pub use codec::{LocalCodec, ResultCodec, SerdeCodec};
pub use generic::TypeParam;
pub use registry::{
    call_fn_id, check_call, encode_job, function_digest, function_ids, knows_call, policy_of, CallError, JobFn,
    OwnedJob,
};
pub use satin_proto::{BuildKeyHasher, JobKey, KeyHasher};

use serde::{de::DeserializeOwned, Serialize};

use crate::sched::Ctx;

/// One call of a `#[divide_and_conquer]` function, with its parameters.
///
/// The macro implements this for a struct it generates per function; users do
/// not implement it by hand. Parameters cross threads (and, in distributed
/// runs, machines), hence the serde and `Send` bounds; a job may borrow its
/// parameters (see `borrow.rs`): the frame that spawns it waits for it.
pub trait Job: Serialize + Send + Sized {
    /// The function's return type.
    type Output: Send + 'static;

    /// How its results become bytes: [`SerdeCodec`], or [`LocalCodec`]
    /// for a local function, whose results need not be serde.
    type Codec: ResultCodec<Self::Output>;

    /// Stable function id: module path, name and signature as written in the
    /// source. The same source built on another machine has the same id.
    const FN_ID: &'static str;

    /// The id calls travel under: the function id, and for a generic
    /// function its type arguments too (see `generic.rs`). Keys include it,
    /// so `f::<u32>(x)` and `f::<u64>(x)` are different calls.
    #[inline]
    fn instance_id() -> &'static str {
        Self::FN_ID
    }

    /// Whether the call changes data it borrows (`&mut` parameters). Such a
    /// call's outcome is its result and that data; it is neither published
    /// to nor looked up in the result table, only run (again).
    const MUTATES: bool = false;

    /// Why the function's calls never leave this process (a parameter
    /// that cannot travel: a closure, a borrow with a lifetime, a
    /// function pointer, or `#[divide_and_conquer(local)]`), or `None`
    /// if they travel. A local call is stolen by this process's workers
    /// only: remote thieves pass it by, it is neither keyed, published
    /// nor looked up, and as a distributed program's root it runs on the
    /// cores of the node that makes it (see `job/local.rs`).
    const LOCAL: Option<&'static str> = None;

    /// Whether an outcome from another node is taken ([`Job::accept`]) as
    /// soon as it arrives, on the driver's thread: a call whose result
    /// may end others at once (a race's entrant). Otherwise the worker
    /// that reads the result decodes it, and the driver stays free.
    const ACCEPT_ON_ARRIVAL: bool = false;

    /// Takes the outcome of this call as another node encoded it: decodes
    /// the result and writes back what the call changed in its `&mut`
    /// parameters.
    fn accept(self, outcome: &[u8]) -> Result<Self::Output, AcceptError> {
        Self::Codec::decode(outcome).map_err(AcceptError::Decode)
    }

    /// Runs the call with parallel recursion inside the runtime context `ctx`.
    /// In distributed runs, calls near the top of the tree are tracked, and
    /// inside a job re-executed after a failure looked up first.
    ///
    /// A worker with enough jobs queued for thieves runs the call lazily:
    /// as the sequential function, which costs what a plain call costs,
    /// except that every call polls whether some worker wants work and then
    /// runs in parallel (heartbeat scheduling's idea: parallelism is made
    /// only when it is wanted). No grain-size cut-off is needed.
    #[inline]
    fn run(self, ctx: &Ctx<'_>) -> Self::Output {
        if ctx.slow.get() {
            return crate::sched::run_slow(self, ctx);
        }
        if ctx.worker.has_enough_queued() {
            return self.run_lazy(ctx);
        }
        self.run_parallel(ctx)
    }

    /// The function's body with parallel recursion (generated).
    fn run_parallel(self, ctx: &Ctx<'_>) -> Self::Output;

    /// The function's sequential body, each call polling [`Ctx::promote`]
    /// to run in parallel instead (generated).
    fn run_lazy(self, ctx: &Ctx<'_>) -> Self::Output;

    /// Runs the call as the plain sequential function.
    fn run_sequential(self) -> Self::Output;

    /// The job's content key: blake3(function id ‖ 0 ‖ postcard(params)),
    /// a borrowed parameter written as its digest (see `lent`).
    ///
    /// Computed only when needed (steals across machines, result table,
    /// checkpoints); the local fast path never hashes.
    fn key(&self) -> JobKey {
        key_of(Self::instance_id(), self)
    }

    /// The key of a call of this function whose key's bytes (postcard,
    /// borrowed parameters as digests) are `params`.
    fn key_of_params(params: &[u8]) -> JobKey {
        JobKey::of_call(Self::instance_id(), params)
    }
}

/// blake3(`function_id` ‖ 0 ‖ postcard(`params`)), a borrowed parameter
/// written as its digest (see `lent`), the encoding streamed into the
/// hash: a call that carries megabytes is keyed without a copy of them.
pub fn key_of<P: serde::Serialize + ?Sized>(function_id: &str, params: &P) -> JobKey {
    let _keying = lent::keying();
    let mut hasher = blake3::Hasher::new();
    hasher.update(function_id.as_bytes());
    hasher.update(&[0]);
    satin_proto::values::hash_into(params, &mut hasher)
        .expect("postcard's format encodes any serde value with a known length");
    JobKey(*hasher.finalize().as_bytes())
}

/// Runs `job` in the calling thread's runtime context if there is one, or
/// sequentially if not. This is the body of every annotated function's public
/// entry point.
#[inline]
pub fn enter<J: Job>(job: J) -> J::Output {
    match crate::sched::current_ctx() {
        Some(ctx) => {
            // SAFETY: `current_ctx` only returns a context that the worker
            // thread installed for the job it is executing right now; it
            // outlives this call.
            let ctx = unsafe { &*ctx };
            // Nobody could take a call from this run: the plain function.
            if ctx.worker.registry().runs_plainly() {
                return job.run_sequential();
            }
            job.run(ctx)
        }
        None => match crate::dist::take_root_runner() {
            Some(runner) if J::LOCAL.is_some() => {
                crate::dist::put_back_root_runner(runner);
                local::run_here(job)
            }
            Some(runner) => run_distributed(job, runner),
            None => {
                // A generic function's instantiation used here, outside a
                // run, is one this process can run for others (see
                // `generic.rs`); free for any other function.
                J::instance_id();
                job.run_sequential()
            }
        },
    }
}

#[inline(never)]
fn run_distributed<J: Job>(job: J, mut runner: crate::dist::RootRunner) -> J::Output {
    // What the call borrows stays put until the run ends: its digests
    // are hashed once, whatever the number of calls that carry it.
    let _pinned = lent::pin_root(&job);
    let (key, payload) = registry::encode_keyed_call(&job);
    // The call's value itself is lent to this process's workers for the
    // run (see `typed_root.rs`); a call that writes back through `&mut`
    // takes its effects from the bytes, as on any node.
    let (bytes, mut returned) = if J::MUTATES {
        (runner(key, payload), typed_root::Returned { job: Some(job), output: None })
    } else {
        let at = payload.as_ptr();
        typed_root::lend(key, at, job, || runner(key, payload))
    };
    crate::dist::put_back_root_runner(runner);
    // The run ended with the very bytes its run from the value made (its
    // encoding or the stand-in for it, held until here, so no other
    // buffer can be at their address): the value itself is the answer,
    // not decoded again.
    let accepted = match (returned.own_output(&bytes), returned) {
        (Some(output), _) => Ok(output),
        (None, typed_root::Returned { job: Some(job), .. }) => job.accept(&bytes),
        _ => J::Codec::decode(&bytes).map_err(AcceptError::Decode),
    };
    accepted.unwrap_or_else(|e| panic!("satin: the run's result does not decode as {}: {e}", J::instance_id()))
}

/// Why an outcome from another node cannot be taken.
#[derive(Debug)]
pub enum AcceptError {
    /// The bytes do not decode as the result (and `&mut` data).
    Decode(postcard::Error),
    /// A `&mut` slice came back with another length.
    WriteBack(WriteBackError),
}

impl std::fmt::Display for AcceptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AcceptError::Decode(e) => e.fmt(f),
            AcceptError::WriteBack(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for AcceptError {}

impl From<postcard::Error> for AcceptError {
    fn from(e: postcard::Error) -> Self {
        AcceptError::Decode(e)
    }
}

impl From<WriteBackError> for AcceptError {
    fn from(e: WriteBackError) -> Self {
        AcceptError::WriteBack(e)
    }
}

/// Marker trait for values that can be a parameter of an annotated function.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a parameter of a #[divide_and_conquer] function",
    label = "parameters must be `Serialize + DeserializeOwned + Send + 'static`",
    note = "parameters travel to other threads and machines: use an owned type that derives serde's `Serialize` and `Deserialize` and is `Send`, or write #[divide_and_conquer(local)] to keep the function's calls on the cores of the process that makes them"
)]
pub trait Param: Serialize + DeserializeOwned + Send + 'static {}
impl<T: Serialize + DeserializeOwned + Send + 'static> Param for T {}

/// Marker trait for values that can be returned by an annotated function.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the result of a #[divide_and_conquer] function",
    label = "results must be `Serialize + DeserializeOwned + Send + 'static`",
    note = "results travel back from other threads and machines: return an owned type that derives serde's `Serialize` and `Deserialize` and is `Send`, or write #[divide_and_conquer(local)] to keep the function's calls on the cores of the process that makes them"
)]
pub trait ResultValue: Serialize + DeserializeOwned + Send + 'static {}
impl<T: Serialize + DeserializeOwned + Send + 'static> ResultValue for T {}

/// Compile-time check used by generated code, spanned on a parameter type.
pub const fn assert_param<T: Param>() {}

/// Compile-time check used by generated code, spanned on the return type.
pub const fn assert_result<T: ResultValue>() {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_streamed_key_is_the_key_of_the_encoded_parameters() {
        for params in [vec![], vec![7u64], (0..100_000u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).collect()] {
            let bytes = postcard::to_stdvec(&(params.clone(),)).unwrap();
            assert_eq!(key_of("f", &(params,)), JobKey::of_call("f", &bytes));
        }
    }
}
