//! Satin's local runtime: jobs and their keys, the work-stealing scheduler
//! of one process, checkpoint files, shared values, and the executor a node
//! driver gives the protocol core. Users depend on `satin`, which
//! re-exports this crate's public API beside the optional layers (QUIC
//! driver, simulator, task graphs).

#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

// The code `#[divide_and_conquer]` generates names `::satin`; inside this
// crate (its unit tests) that is this crate.
extern crate self as satin;

pub mod checkpoint;
pub mod dist;
mod job;
pub mod progress;
mod sched;
pub mod shared;

pub use satin_proto as proto;
pub use satin_proto::codec;

pub use job::{
    call_fn_id, check_call, encode_job, function_digest, function_ids, knows_call, policy_of, AcceptError,
    BuildKeyHasher, CallError, Job, JobKey, KeyHasher, LocalCodec, OwnedJob, ResultCodec, SerdeCodec, Travel,
    TravelMut, TypeParam, WriteBackError,
};
pub use satin_macros::divide_and_conquer;
pub use sched::{sequential, BuildError, Builder, JobSpan, Ran, RunStats, Runtime, DEFAULT_SPAWN_LIMIT};

/// Items used by the code that `#[divide_and_conquer]` generates. Not a public
/// API: names and signatures here change without notice.
#[doc(hidden)]
pub mod __private {
    pub use crate::job::borrow::{assert_borrowed_param, assert_mut_param};
    pub use crate::job::fields::{de_field, de_lent};
    pub use crate::job::generic::{instance, GenericFn};
    pub use crate::job::lent::{pin, ser_field, ser_lent, ser_lent_mut, LentParam, Pinned};
    pub use crate::job::receiver::ReceiverMut;
    pub use crate::job::{assert_param, assert_result, enter, JobFn, LocalCodec, Param, ResultValue, SerdeCodec};
    pub use crate::sched::{
        decides_false, decides_some, decides_true, failed, Ctx, Entrant, Keep, LazyIter, Race, Slot, SpawnList,
    };
    pub use core::pin::pin;
    pub use inventory;

    /// A lazy version's conditional `let` (`let l = match &n.left {
    /// Some(c) => f(c), None => 0 };`): the call's job, run where the
    /// result is read — after the calls of the `let`s that follow, in the
    /// order the parallel version runs them — or the value of a branch
    /// without a call.
    pub enum Later<J, T> {
        Call(J),
        Ready(T),
    }

    /// A plain value where a call's `Result` or `Option` stands: the
    /// other branches of a conditional `let` beside one ending in
    /// `f(..)?`, whose `?` is applied where the result is read.
    pub trait TryLift<T> {
        /// `Ok(value)` or `Some(value)`.
        fn lift(value: T) -> Self;
    }

    impl<T, E> TryLift<T> for Result<T, E> {
        fn lift(value: T) -> Self {
            Ok(value)
        }
    }

    impl<T> TryLift<T> for Option<T> {
        fn lift(value: T) -> Self {
            Some(value)
        }
    }
    pub use serde;

    /// What generated code encodes outcomes with (calls that change their
    /// `&mut` parameters): postcard's format, by `satin_proto::values`.
    pub mod postcard {
        pub use satin_proto::values::{from_bytes, to_vec as to_allocvec};
    }
}
