//! What a job is: the serialisable parameters of one call of an annotated
//! function, plus how to run it.

mod key;
pub(crate) mod registry;

pub use key::{BuildKeyHasher, JobKey, KeyHasher};
pub use registry::{check_call, encode_job, function_ids, policy_of, CallError, JobFn};

use serde::{de::DeserializeOwned, Serialize};

use crate::sched::Ctx;

/// One call of a `#[divide_and_conquer]` function, with its parameters.
///
/// The macro implements this for a struct it generates per function; users do
/// not implement it by hand. Parameters and results cross threads (and, in
/// distributed runs, machines), hence the serde and `Send + 'static` bounds.
pub trait Job: Serialize + DeserializeOwned + Send + 'static {
    /// The function's return type.
    type Output: Serialize + DeserializeOwned + Send + 'static;

    /// Stable function id: module path, name and signature as written in the
    /// source. The same source built on another machine has the same id.
    const FN_ID: &'static str;

    /// Runs the call with parallel recursion inside the runtime context `ctx`.
    /// In distributed runs, calls near the top of the tree are tracked, and
    /// inside a job re-executed after a failure looked up first.
    #[inline]
    fn run(self, ctx: &Ctx<'_>) -> Self::Output {
        if ctx.slow.get() {
            return crate::sched::run_slow(self, ctx);
        }
        self.run_parallel(ctx)
    }

    /// The function's body with parallel recursion (generated).
    fn run_parallel(self, ctx: &Ctx<'_>) -> Self::Output;

    /// Runs the call as the plain sequential function.
    fn run_sequential(self) -> Self::Output;

    /// The job's content key: blake3(function id ‖ postcard(params)).
    ///
    /// Computed only when needed (steals across machines, result table,
    /// checkpoints); the local fast path never hashes.
    fn key(&self) -> JobKey {
        JobKey::of(self)
    }
}

/// Runs `job` in the calling thread's runtime context if there is one, or
/// sequentially if not. This is the body of every annotated function's public
/// entry point.
#[inline]
pub fn enter<J: Job>(job: J) -> J::Output {
    match crate::sched::current_ctx() {
        // SAFETY: `current_ctx` only returns a context that the worker thread
        // installed for the job it is executing right now; it outlives this call.
        Some(ctx) => job.run(unsafe { &*ctx }),
        None => match crate::dist::take_root_runner() {
            Some(runner) => run_distributed(job, runner),
            None => job.run_sequential(),
        },
    }
}

#[inline(never)]
fn run_distributed<J: Job>(job: J, runner: crate::dist::RootRunner) -> J::Output {
    let bytes = runner(job.key(), registry::encode_call(&job));
    postcard::from_bytes(&bytes)
        .unwrap_or_else(|e| panic!("satin: the run's result does not decode as {}: {e}", J::FN_ID))
}

/// Marker trait for values that can be a parameter of an annotated function.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a parameter of a #[divide_and_conquer] function",
    label = "parameters must be `Serialize + DeserializeOwned + Send + 'static`",
    note = "parameters travel to other threads and machines: use an owned type that derives serde's `Serialize` and `Deserialize` and is `Send`"
)]
pub trait Param: Serialize + DeserializeOwned + Send + 'static {}
impl<T: Serialize + DeserializeOwned + Send + 'static> Param for T {}

/// Marker trait for values that can be returned by an annotated function.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the result of a #[divide_and_conquer] function",
    label = "results must be `Serialize + DeserializeOwned + Send + 'static`",
    note = "results travel back from other threads and machines: return an owned type that derives serde's `Serialize` and `Deserialize` and is `Send`"
)]
pub trait ResultValue: Serialize + DeserializeOwned + Send + 'static {}
impl<T: Serialize + DeserializeOwned + Send + 'static> ResultValue for T {}

/// Compile-time check used by generated code, spanned on a parameter type.
pub const fn assert_param<T: Param>() {}

/// Compile-time check used by generated code, spanned on the return type.
pub const fn assert_result<T: ResultValue>() {}
