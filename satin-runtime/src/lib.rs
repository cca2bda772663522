//! Satin: fault-tolerant divide-and-conquer parallelism.
//!
//! Put [`divide_and_conquer`] on an ordinary recursive function. Each recursive
//! call becomes a job that may run on another core; the first read of its
//! result waits for it. Run the function inside a [`Runtime`] to use all cores;
//! called anywhere else it runs sequentially with the same result.
//!
//! ```
//! use satin::divide_and_conquer;
//!
//! #[divide_and_conquer]
//! pub fn fib(n: u32) -> u64 {
//!     if n < 2 {
//!         return n as u64;
//!     }
//!     let x = fib(n - 1); // spawned: may run on another core
//!     let y = fib(n - 2); // run inline: it is the last call before a read
//!     x + y               // first read of x: waits for it
//! }
//!
//! let rt = satin::Runtime::builder().workers(2).build().unwrap();
//! assert_eq!(rt.run(|| fib(20)), 6765);
//! assert_eq!(fib(20), 6765); // no runtime: sequential
//! ```
//!
//! # Purity
//!
//! An annotated function must be referentially transparent: the same
//! parameters give the same result and the caller sees no side effects. The
//! runtime relies on this to run calls in parallel, abort calls whose result is
//! never read, and (across machines) re-execute lost work and reuse results.

#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod checkpoint;
pub mod codec;
pub mod dag;
pub mod dist;
mod job;
#[cfg(feature = "net")]
pub mod net;
#[allow(missing_docs)] // protocol messages and counters: documented where not self-explanatory
pub mod proto;
mod sched;
pub mod shared;
#[allow(missing_docs)]
pub mod sim;

pub use job::{
    check_call, encode_job, function_digest, function_ids, knows_call, policy_of, AcceptError, BuildKeyHasher,
    CallError, Job, JobKey, KeyHasher, OwnedJob, Travel, TravelMut, TypeParam, WriteBackError,
};
pub use satin_macros::divide_and_conquer;
pub use sched::{sequential, BuildError, Builder, Ran, RunStats, Runtime, DEFAULT_SPAWN_LIMIT};

/// Items used by the code that `#[divide_and_conquer]` generates. Not a public
/// API: names and signatures here change without notice.
#[doc(hidden)]
pub mod __private {
    pub use crate::job::borrow::{assert_borrowed_param, assert_mut_param};
    pub use crate::job::fields::{de_field, ser_field, ser_lent};
    pub use crate::job::generic::{instance, GenericFn};
    pub use crate::job::receiver::ReceiverMut;
    pub use crate::job::{assert_param, assert_result, enter, JobFn};
    pub use crate::sched::{decides_false, decides_some, decides_true, Ctx, Entrant, LazyIter, Race, Slot, SpawnList};
    pub use core::pin::pin;
    pub use inventory;
    pub use postcard;
    pub use serde;
}
