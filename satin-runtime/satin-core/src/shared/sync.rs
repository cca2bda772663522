//! A node's replicas of the shared values as its driver sees them: what
//! its jobs changed since it last said (news for the other members), all
//! of them (for a member that joins or comes back), peers' values merged
//! in, and the values as a record of the checkpoint file. The protocol
//! core decides when each goes where (`satin_proto`'s `node/shared.rs`),
//! through the executor ([`crate::dist::LocalExecutor`]).

use serde_bytes::ByteBuf;

use std::sync::Arc;

use super::{Direction, Replicas};
use crate::checkpoint::{Record, ResultMeta};
use crate::proto::{Msg, SharedValues};
use crate::JobKey;

/// How the checkpoint file tells shared values from results: no call has
/// this id, and no result this depth.
const CHECKPOINT_META: ResultMeta = ResultMeta { depth: u32::MAX - 1, id: 0x5348_4152_4544_0001, parent: 0 };

/// A node's replicas, and what it has sent of them so far.
#[derive(Debug)]
pub struct SharedSync {
    replicas: Arc<Replicas>,
    /// Their `local_changes()` when the values were last sent.
    sent: u64,
}

impl SharedSync {
    /// From now on updates made to `replicas` are kept until sent.
    pub fn start(replicas: Arc<Replicas>) -> SharedSync {
        replicas.start_syncing();
        SharedSync { replicas, sent: 0 }
    }

    /// What to send to every peer, if jobs here changed a value since the
    /// last call: every incumbent, and what was added to other objects.
    pub fn news(&mut self) -> Option<SharedValues> {
        let now = self.replicas.local_changes();
        if now == self.sent {
            return None;
        }
        self.sent = now;
        Some(values(self.replicas.incumbent_values(), self.replicas.take_unsent()))
    }

    /// Every value this node knows, for a peer that just connected.
    pub fn everything(&self) -> Option<SharedValues> {
        let (incumbents, objects) = (self.replicas.incumbent_values(), self.replicas.encode_all());
        (!incumbents.is_empty() || !objects.is_empty()).then(|| values(incumbents, objects))
    }

    /// A peer's values, merged into the replicas here. A value that does
    /// not decode here (another program's type under the same name) is
    /// left out and said on standard error.
    pub fn merge(&self, values: SharedValues) {
        for (name, maximize, value) in values.incumbents {
            let direction = if maximize { Direction::Maximize } else { Direction::Minimize };
            self.replicas.merge_incumbent(&name, direction, value);
        }
        for (name, bytes) in values.objects {
            if let Err(e) = self.replicas.merge_encoded(&name, bytes.into_vec()) {
                eprintln!("satin: a peer's value of shared object {name:?} does not decode here: {e}");
            }
        }
    }
}

impl SharedSync {
    /// Every shared value, as a record of the checkpoint file (written with
    /// each batch of results), so that a resumed run starts from the bounds
    /// it had reached. Keyed by its content: compaction keeps one copy of
    /// each state, and every state is joined on resume.
    pub fn checkpoint_record(&self) -> Option<Record> {
        // As a message, the encoding files have always had.
        let msg = Msg::Shared(self.everything()?);
        let value = postcard::to_allocvec(&msg).ok()?;
        let key = JobKey(*blake3::hash(&[b"satin shared values\0".as_slice(), &value].concat()).as_bytes());
        Some(Record { key, meta: CHECKPOINT_META, value })
    }

    /// The records of a checkpoint file, less the shared values among
    /// them, which are joined into the replicas here.
    pub fn restore(&self, records: Vec<Record>) -> Vec<Record> {
        let (values, results): (Vec<Record>, Vec<Record>) =
            records.into_iter().partition(|r| r.meta == CHECKPOINT_META);
        for r in values {
            match postcard::from_bytes::<Msg>(&r.value) {
                Ok(Msg::Shared(values)) => self.merge(values),
                _ => eprintln!("satin: a checkpoint record of shared values does not decode; ignored"),
            }
        }
        results
    }
}

fn values(incumbents: Vec<(String, Direction, u64)>, objects: Vec<(String, Vec<u8>)>) -> SharedValues {
    SharedValues {
        incumbents: incumbents.into_iter().map(|(n, d, v)| (n, d == Direction::Maximize, v)).collect(),
        objects: objects.into_iter().map(|(n, b)| (n, ByteBuf::from(b))).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shared::Incumbent;

    #[test]
    fn shared_values_ride_in_the_checkpoint_and_come_back_on_resume() {
        let before = SharedSync::start(Replicas::new());
        let best = before.replicas.enter(|| Incumbent::minimize("checkpointed bound", 500));
        best.offer(120);
        let record = before.checkpoint_record().expect("there are values");
        let result = Record { key: JobKey([7; 32]), meta: ResultMeta::UNKNOWN, value: vec![1, 2] };
        // A resumed process starts again from the initial bound.
        let after = SharedSync::start(Replicas::new());
        let resumed = after.replicas.enter(|| Incumbent::minimize("checkpointed bound", 500));
        let kept = after.restore(vec![result.clone(), record]);
        assert_eq!(kept, vec![result], "results pass through, the values record does not");
        assert_eq!(resumed.get(), 120, "the bound the run had reached");
    }
}
