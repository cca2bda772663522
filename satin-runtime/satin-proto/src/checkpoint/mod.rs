//! What a checkpoint holds, without the file: the records (content key,
//! value, where in the tree), the computation a file belongs to, compaction,
//! and the bytes of the format. The protocol core decides what to save
//! (`node/checkpoint.rs`); the file on disk belongs to `satin`'s
//! `checkpoint::file`.

pub mod format;
pub mod record;

pub use record::{compact, compact_for, Identity, Record, ResultMeta, DEPTH_UNKNOWN};
