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
//! A value the root borrows is on every node whose program has made the
//! run's call: a thief lists the digests of what it holds in its steal
//! request, and a stolen call that borrows one of them travels with its
//! digest in its place; the thief borrows its own copy (`param.rs`) — no
//! encoding, no decoding, nothing sent. A node whose program is behind
//! (it waits at an earlier call) gets the data, with its digest if it is
//! large, and keeps it for the life of the program (`cache.rs`): it lists
//! that digest too in its later steal requests, so the value crosses to a
//! node once, in this run and the next. A thief that does not hold a
//! value a job names (a copy meant for another thief) refuses the job,
//! which then runs on its own node.
//!
//! The generated `Serialize` of a job writes each borrowed parameter
//! through `ser_lent`, which does what the thread is doing now (`mode.rs`):
//! writing the call out (its bytes, or a root value's digest, for
//! another node), keying it (the digest), or pinning it (noting where it
//! lies).
//!
//! A part of a pinned value — a sub-slice of a pinned slice, such as
//! the halves of the root's slice a recursion passes down — is keyed
//! from the value's digest and the part's place in it, without reading
//! its bytes, and goes to a thief that holds the value as that digest
//! and place: the thief borrows the same part of its own copy.
//!
//! A borrowed value is taken to stay as it is while it is borrowed: a
//! pinned value changed through interior mutability (a `Mutex` or an
//! atomic inside it) keeps the digest it had when first keyed.

mod cache;
mod mode;
pub(crate) mod named;
mod param;
mod pins;

pub(crate) use mode::{for_thief, keying, writing};
pub use mode::{ser_field, ser_lent, ser_lent_mut};
pub use param::LentParam;
pub(crate) use pins::held_values;
pub(crate) use pins::pin_root;
pub use pins::{pin, Pinned};
