//! The checkpoint file's thread as the driver uses it: opening (and
//! resuming from) the file, and what the thread answers.

use super::*;

impl Driver {
    /// This node writes the checkpoint from now on (the master at start, or
    /// a new master): its thread opens, checks and repairs the file.
    pub(super) fn open_checkpoint(&mut self) {
        let Some(spec) = self.spec.io.checkpoint.clone() else {
            let now = self.now();
            self.node.handle_checkpoint_opened(now, Err("no checkpoint file was named".into()), &mut self.exec);
            return;
        };
        // The file is the whole program's: named by its first call, whichever
        // run a new master takes it over in.
        let (root_fn, root_key) = self.first_root.clone();
        let identity = satin_core::checkpoint::Identity {
            program: self.spec.me.hello.application.clone(),
            functions: self.spec.me.hello.functions,
            root_fn,
            root_key,
        };
        let c = self.checkpointer.get_or_insert_with(|| Checkpointer::start(spec, self.input.clone()));
        c.open(identity);
    }

    pub(super) fn on_checkpoint(&mut self, done: Done) {
        let now = self.now();
        let path = self.spec.io.checkpoint.as_ref().map(|c| c.path.display().to_string()).unwrap_or_default();
        match done {
            Done::Opened(Ok((records, report))) => {
                if let Some(w) = report.warning(std::path::Path::new(&path)) {
                    warn!("{w}");
                }
                let records = self.exec.shared().restore(records);
                if !records.is_empty() {
                    eprintln!("satin: resuming from {path}: {} saved results ({} bytes)", records.len(), report.bytes);
                }
                self.node.handle_checkpoint_opened(now, Ok(records), &mut self.exec);
            }
            Done::Opened(Err(e)) => {
                warn!("checkpoint: {e}");
                self.node.handle_checkpoint_opened(now, Err(e.to_string()), &mut self.exec);
            }
            Done::Written { seq, records, bytes } => {
                self.checkpoint_written.0 += records;
                self.checkpoint_written.1 += bytes;
                let (all, size) = self.checkpoint_written;
                self.on_board(|b| {
                    b.recurring("checkpoint", format!("checkpoint: {all} records written ({size} bytes)"))
                });
                self.node.handle_checkpoint_written(now, seq, records, bytes)
            }
            Done::WriteFailed { seq, error } => {
                warn!("checkpoint write failed (the run goes on; results since the last write may be recomputed after a total loss): {error}");
                self.node.handle_checkpoint_written(now, seq, 0, 0);
            }
        }
    }
}
