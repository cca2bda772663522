//! One node for as long as the program makes annotated calls: the node's
//! event loop ([`super::driver`]) on a thread of its own, each call a run
//! of the same cluster (see `proto/node/sequence.rs`). The program's
//! thread hands over each call and waits for the run's end.

use std::sync::Arc;

use tokio::sync::mpsc::unbounded_channel;

use super::driver::{drive, Input, NodeReport, NodeSpec, RunEnd, RunOver};
use super::node_io::block_on;
use super::tls::Pool;
use satin_core::{JobKey, Runtime};

/// See the module docs.
pub(crate) struct Session {
    input: tokio::sync::mpsc::UnboundedSender<Input>,
    ends: std::sync::mpsc::Receiver<RunOver>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Session {
    /// Starts the node with the program's first call, `root`; its end
    /// comes with [`Session::wait`].
    pub(crate) fn start(spec: NodeSpec, pool: Pool, runtime: Arc<Runtime>, root: (JobKey, Vec<u8>)) -> Session {
        let (input_tx, input) = unbounded_channel::<Input>();
        let (ends_tx, ends) = std::sync::mpsc::channel::<RunOver>();
        let to_driver = input_tx.clone();
        let thread = std::thread::Builder::new().name("satin-node".into()).spawn(move || {
            let last = block_on(drive(spec, &pool, runtime, root, (to_driver, input), ends_tx.clone()))
                .unwrap_or_else(|e| (RunEnd::Failed(e), None));
            let _ = ends_tx.send(last);
        });
        match thread {
            Ok(t) => Session { input: input_tx, ends, thread: Some(t) },
            Err(e) => {
                let (tx, ends) = std::sync::mpsc::channel();
                let _ = tx.send((RunEnd::Failed(format!("cannot start the node's thread: {e}")), None));
                Session { input: input_tx, ends, thread: None }
            }
        }
    }

    /// Waits for the end of the current run.
    pub(crate) fn wait(&self) -> RunOver {
        self.ends.recv().unwrap_or((RunEnd::Left, None))
    }

    /// The program's next annotated call: the next run; waits for its end.
    pub(crate) fn next(&self, root: (JobKey, Vec<u8>)) -> RunOver {
        let _ = self.input.send(Input::NextRoot { key: root.0, payload: root.1 });
        self.wait()
    }

    /// The program is over: the node sends its last frames and stops;
    /// its figures in all (checkpoint writes included, all on disk now).
    /// The program returned from its last call and went on: the node
    /// sends its last frames and stops, waited for at most `limit` (the
    /// process may be ending).
    pub(crate) fn close_within(mut self, limit: std::time::Duration) {
        let _ = self.input.send(Input::Close { returned: true });
        let Some(thread) = self.thread.take() else { return };
        let (done_tx, done) = std::sync::mpsc::channel();
        let joiner = std::thread::Builder::new().name("satin-close".into()).spawn(move || {
            let _ = thread.join();
            let _ = done_tx.send(());
        });
        if joiner.is_ok() && done.recv_timeout(limit).is_err() {
            tracing::warn!("the node did not end within {limit:?}; the process ends without it");
        }
    }

    pub(crate) fn close(mut self, returned: bool) -> Option<NodeReport> {
        let _ = self.input.send(Input::Close { returned });
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        // The last end the thread sent is its final one.
        self.ends.try_iter().last().and_then(|(_, report)| report)
    }
}
