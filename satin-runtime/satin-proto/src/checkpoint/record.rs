//! What a checkpoint holds: finished results, each with enough about the
//! call that made it to find it again and to tell when it became useless.

use serde::{Deserialize, Serialize};

use crate::JobKey;

/// The depth of a call whose distance from the root is not known (it ran
/// below the levels the runtime tracks).
pub const DEPTH_UNKNOWN: u32 = u32::MAX;

/// Where a published result sits in the computation.
///
/// `id` names the call that produced the result (unique across nodes and
/// runs, not a content key), `parent` the nearest enclosing call that could
/// be recorded too (0: none known). Once the parent's result is saved, the
/// child's is redundant: that is how the file is compacted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResultMeta {
    /// Calls between the root (depth 0) and this one, or [`DEPTH_UNKNOWN`].
    pub depth: u32,
    /// The call that produced the result (see above; 0: unknown).
    pub id: u64,
    /// The nearest enclosing call that could be recorded (0: none known).
    pub parent: u64,
}

impl ResultMeta {
    /// Meta of a result about which nothing is known.
    pub const UNKNOWN: ResultMeta = ResultMeta { depth: DEPTH_UNKNOWN, id: 0, parent: 0 };
}

/// One checkpointed result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// The call's content key.
    pub key: JobKey,
    /// Where it stands in the tree.
    pub meta: ResultMeta,
    /// The encoded result (postcard), as the result table holds it.
    #[serde(with = "serde_bytes")]
    pub value: Vec<u8>,
}

/// Which computation a checkpoint belongs to: results are reused only by a
/// run of the same program, with the same annotated functions, for the
/// same root call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Identity {
    /// The application's name (as nodes tell each other in their hello).
    pub program: String,
    /// blake3 over the program's sorted function ids.
    pub functions: [u8; 32],
    /// Function id of the root call.
    pub root_fn: String,
    /// Content key of the root call: function and arguments.
    pub root_key: JobKey,
}

/// Drops what a checkpoint no longer needs: duplicate keys (the first
/// stays) and results whose parent call's result is in the set too (the
/// paper's checkpoint compression: the ancestor alone is enough). Once the
/// root's result is in, it is all a run needs.
pub fn compact_for(root: &JobKey, records: Vec<Record>) -> Vec<Record> {
    if let Some(answer) = records.iter().find(|r| r.key == *root) {
        return vec![answer.clone()];
    }
    compact(records)
}

/// [`compact_for`] without knowing the root.
pub fn compact(records: Vec<Record>) -> Vec<Record> {
    let mut seen = std::collections::HashSet::with_capacity(records.len());
    let mut kept: Vec<Record> = records.into_iter().filter(|r| seen.insert(r.key)).collect();
    let ids: std::collections::HashSet<u64> = kept.iter().map(|r| r.meta.id).filter(|&id| id != 0).collect();
    kept.retain(|r| r.meta.parent == 0 || !ids.contains(&r.meta.parent));
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(k: u8, id: u64, parent: u64) -> Record {
        Record { key: JobKey([k; 32]), meta: ResultMeta { depth: 1, id, parent }, value: vec![k] }
    }

    #[test]
    fn compaction_keeps_the_highest_saved_ancestors_and_one_copy_of_each_key() {
        // 1 is the parent of 2 and 3; 4's parent (9) is not saved; 5 repeats 2's key.
        let kept = compact(vec![rec(2, 2, 1), rec(1, 1, 0), rec(3, 3, 1), rec(4, 4, 9), rec(2, 5, 0)]);
        let keys: Vec<u8> = kept.iter().map(|r| r.key.0[0]).collect();
        assert_eq!(keys, vec![1, 4]);
    }
}
