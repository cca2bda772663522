//! Checkpoints: finished results written to a file while a run goes on, so
//! that a run started again with the same command after losing every node
//! (or after a suspend) computes only what is missing.
//!
//! - [`record`]: what is saved (content key, value, where in the tree) and
//!   which computation a file belongs to; compaction.
//! - [`format`](mod@format): the bytes, and reading them without trusting them.
//! - [`file`](mod@file): the file on disk — atomic creation and rewrites, synced
//!   appends, inspection and repair on open.
//!
//! Who writes what and when (the coordinator) is part of the protocol core,
//! `proto::checkpoint`; the driver gives the file to a thread of its own.
//! The records and the format are the protocol's (`satin_proto::checkpoint`).

pub mod file;

pub use file::{CheckpointError, OpenReport, Store};
pub use satin_proto::checkpoint::{compact, compact_for, format, record, Identity, Record, ResultMeta, DEPTH_UNKNOWN};
