//! Keeps this node's replicas of the shared values (`satin_core::shared`) in
//! step with its peers': what this node's jobs change goes to every live
//! member, what peers send is merged in, and a peer that connects gets
//! every value (a joiner starts from the run's best, not from nothing).
//! Updates are joins, so order, repeats and loss of a duplicate do not
//! matter; no ordering protocol is needed.

use serde_bytes::ByteBuf;

use satin_core::checkpoint::{Record, ResultMeta};
use satin_core::JobKey;
use satin_proto::Msg;

/// How the checkpoint file tells shared values from results: no call has
/// this id, and no result this depth.
const CHECKPOINT_META: ResultMeta = ResultMeta { depth: u32::MAX - 1, id: 0x5348_4152_4544_0001, parent: 0 };
use satin_core::shared::{self, Direction};

/// What this node has sent so far.
pub(super) struct SharedSync {
    /// `local_changes()` when the values were last sent.
    sent: u64,
}

impl SharedSync {
    /// From now on this process's updates are kept until sent.
    pub(super) fn start() -> SharedSync {
        shared::start_syncing();
        SharedSync { sent: 0 }
    }

    /// What to send to every peer, if jobs here changed a value since the
    /// last call: every incumbent, and what was added to other objects.
    pub(super) fn improved(&mut self) -> Option<Msg> {
        let now = shared::local_changes();
        if now == self.sent {
            return None;
        }
        self.sent = now;
        Some(message(shared::snapshot(), shared::take_unsent()))
    }

    /// Every value this node knows, for a peer that just connected.
    pub(super) fn everything() -> Option<Msg> {
        let (incumbents, objects) = (shared::snapshot(), shared::encode_all());
        (!incumbents.is_empty() || !objects.is_empty()).then(|| message(incumbents, objects))
    }

    /// A peer's values, merged into the replicas here.
    pub(super) fn merge(incumbents: Vec<(String, bool, u64)>, objects: Vec<(String, ByteBuf)>) {
        for (name, maximize, value) in incumbents {
            let direction = if maximize { Direction::Maximize } else { Direction::Minimize };
            shared::merge_from_peer(&name, direction, value);
        }
        for (name, bytes) in objects {
            if let Err(e) = shared::merge_encoded(&name, bytes.into_vec()) {
                tracing::warn!("a peer's value of shared object {name:?} does not decode here: {e}");
            }
        }
    }
}

impl SharedSync {
    /// Every shared value, as a record of the checkpoint file (written with
    /// each batch of results), so that a resumed run starts from the bounds
    /// it had reached. Keyed by its content: compaction keeps one copy of
    /// each state, and every state is joined on resume.
    pub(super) fn checkpoint_record() -> Option<Record> {
        let msg = SharedSync::everything()?;
        let value = postcard::to_allocvec(&msg).ok()?;
        let key = JobKey(*blake3::hash(&[b"satin shared values\0".as_slice(), &value].concat()).as_bytes());
        Some(Record { key, meta: CHECKPOINT_META, value })
    }

    /// The records of a checkpoint file, less the shared values among
    /// them, which are joined into the replicas here.
    pub(super) fn restore(records: Vec<Record>) -> Vec<Record> {
        let (values, results): (Vec<Record>, Vec<Record>) =
            records.into_iter().partition(|r| r.meta == CHECKPOINT_META);
        for r in values {
            match postcard::from_bytes::<Msg>(&r.value) {
                Ok(Msg::Shared { incumbents, objects }) => SharedSync::merge(incumbents, objects),
                _ => tracing::warn!("a checkpoint record of shared values does not decode; ignored"),
            }
        }
        results
    }
}

fn message(incumbents: Vec<(String, Direction, u64)>, objects: Vec<(String, Vec<u8>)>) -> Msg {
    Msg::Shared {
        incumbents: incumbents.into_iter().map(|(n, d, v)| (n, d == Direction::Maximize, v)).collect(),
        objects: objects.into_iter().map(|(n, b)| (n, ByteBuf::from(b))).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use satin_core::shared::Incumbent;

    #[test]
    fn shared_values_ride_in_the_checkpoint_and_come_back_on_resume() {
        let best = Incumbent::minimize("checkpointed bound", 500);
        best.offer(120);
        let record = SharedSync::checkpoint_record().expect("there are values");
        let result = Record { key: JobKey([7; 32]), meta: ResultMeta::UNKNOWN, value: vec![1, 2] };
        // A resumed process starts again from the initial bound.
        let resumed = Incumbent::minimize("checkpointed bound", 500);
        let kept = SharedSync::restore(vec![result.clone(), record]);
        assert_eq!(kept, vec![result], "results pass through, the values record does not");
        assert_eq!(resumed.get(), 120, "the bound the run had reached");
    }
}
