//! Borrowed values keyed once.
//!
//! A value a call borrows (`&T`, `&[T]`, `&str`) enters the call's key as
//! its digest — blake3 of its encoding — rather than as its bytes:
//! key = blake3(function id ‖ 0 ‖ the parameters in postcard's format, a
//! borrowed one written as its 32-byte digest). So a large structure
//! passed down the recursion unchanged (the whole tree, a lookup table, a
//! graph) costs one digest, and a value that stays put while a run goes
//! on — what the run's root call borrows, pinned for the run ([`pin`]) —
//! is hashed once per process however many calls carry it: its digest is
//! remembered by where it lies.
//!
//! A value the root borrows is on every node of the run (each node's
//! program makes the same call): a stolen call that borrows it travels
//! with its digest in its place, and the thief borrows its own copy
//! (`param.rs`) — no encoding, no decoding, nothing sent. A thief that
//! does not hold it (its program made another call) refuses the job,
//! which then runs on its own node.
//!
//! The generated `Serialize` of a job writes each borrowed parameter
//! through `ser_lent`, which does what the thread is doing now (`mode.rs`):
//! writing the call out (its bytes, or a root value's digest, for
//! another node), keying it (the digest), or pinning it (noting where it
//! lies).
//!
//! A borrowed value is taken to stay as it is while it is borrowed: a
//! pinned value changed through interior mutability (a `Mutex` or an
//! atomic inside it) keeps the digest it had when first keyed.

mod mode;
pub(crate) mod named;
mod param;
mod pins;

pub(crate) use mode::{keying, writing};
pub use mode::{ser_field, ser_lent, ser_lent_mut};
pub use param::LentParam;
pub(crate) use pins::pin_root;
pub use pins::{pin, Pinned};
