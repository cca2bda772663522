//! The checkpoint file's own thread: the coordinator's driver hands it
//! opens and writes, so the event loop (and the computation) never waits
//! for the disk. Answers come back as driver inputs, in order.

use std::path::PathBuf;
use std::sync::mpsc::{channel, Sender};
use std::thread::JoinHandle;

use tokio::sync::mpsc::UnboundedSender;
use tracing::warn;

use super::driver::Input;
use super::retry::{retry, transient, LOCAL_OPERATIONS};
use satin_core::checkpoint::{CheckpointError, Identity, OpenReport, Record, Store};

/// Where the checkpoint goes, as the command line said.
#[derive(Clone, Debug)]
pub(crate) struct CheckpointSpec {
    pub(crate) path: PathBuf,
    /// Start over: replace an existing checkpoint (only when the run
    /// starts; a later takeover keeps what is there).
    pub(crate) fresh: bool,
}

enum Command {
    Open(Identity),
    Write { seq: u64, records: Vec<Record> },
}

/// What the thread reports.
#[derive(Debug)]
pub(crate) enum Done {
    Opened(Result<(Vec<Record>, OpenReport), CheckpointError>),
    Written { seq: u64, records: u64, bytes: u64 },
    WriteFailed { seq: u64, error: CheckpointError },
}

pub(crate) struct Checkpointer {
    tx: Sender<Command>,
    /// Ends with the records and bytes it wrote.
    thread: JoinHandle<(u64, u64)>,
}

impl Checkpointer {
    pub(crate) fn start(spec: CheckpointSpec, input: UnboundedSender<Input>) -> Checkpointer {
        let (tx, rx) = channel::<Command>();
        let thread = std::thread::Builder::new()
            .name("satin-checkpoint".into())
            .spawn(move || {
                let mut store: Option<Store> = None;
                let mut root = None;
                let mut fresh = spec.fresh;
                let mut written = (0, 0);
                for cmd in rx {
                    let done = match cmd {
                        Command::Open(identity) => {
                            root = Some(identity.root_key);
                            let opened = Store::open(&spec.path, &identity, std::mem::take(&mut fresh));
                            Done::Opened(opened.map(|(s, records, report)| {
                                store = Some(s);
                                (records, report)
                            }))
                        }
                        Command::Write { seq, records } => match store.as_mut() {
                            None => continue,
                            Some(s) => match retry(
                                LOCAL_OPERATIONS,
                                || write(s, &records, root.as_ref()),
                                |e| matches!(e, CheckpointError::Io { error, .. } if transient(error.kind())),
                                |e, wait| warn!("checkpoint write failed ({e}); trying again in {wait:?}"),
                            ) {
                                Ok(bytes) => {
                                    written.0 += records.len() as u64;
                                    written.1 += bytes;
                                    Done::Written { seq, records: records.len() as u64, bytes }
                                }
                                Err(error) => Done::WriteFailed { seq, error },
                            },
                        },
                    };
                    let _ = input.send(Input::Checkpoint(done));
                }
                written
            })
            .expect("the checkpoint thread starts");
        Checkpointer { tx, thread }
    }

    pub(crate) fn open(&self, identity: Identity) {
        let _ = self.tx.send(Command::Open(identity));
    }

    pub(crate) fn write(&self, seq: u64, records: Vec<Record>) {
        let _ = self.tx.send(Command::Write { seq, records });
    }

    /// Waits until everything handed over is on disk; returns the records
    /// and bytes written in all.
    pub(crate) fn close(self) -> (u64, u64) {
        drop(self.tx);
        self.thread.join().unwrap_or_default()
    }
}

/// Appends and syncs; rewrites the file when it has grown well past what
/// it needs (results whose ancestor is saved too), or down to the answer
/// once the root's result is in.
fn write(store: &mut Store, records: &[Record], root: Option<&satin_core::JobKey>) -> Result<u64, CheckpointError> {
    let bytes = store.append(records)?;
    if store.wants_compaction() || records.iter().any(|r| Some(&r.key) == root) {
        store.compact()?;
    }
    Ok(bytes)
}
