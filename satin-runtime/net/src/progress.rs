//! The master's progress bar: how many results came back, how many nodes
//! are alive, steals and recoveries. Drawn only when stderr is a terminal.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use satin_proto::Node;

pub(crate) struct Progress {
    bar: ProgressBar,
}

impl Progress {
    pub(crate) fn new() -> Progress {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(4));
        bar.set_style(
            ProgressStyle::with_template("{spinner} {elapsed_precise} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.enable_steady_tick(Duration::from_millis(250));
        Progress { bar }
    }

    pub(crate) fn update(&mut self, node: &Node, frames: u64) {
        let s = node.stats();
        self.bar.set_message(format!(
            "nodes alive {} | jobs given {} | stolen {} | redone {} | recoveries {} | table {} | checkpointed {} | frames sent {}",
            node.live_members().count(),
            s.jobs_given,
            s.jobs_stolen,
            s.redone,
            s.recoveries,
            node.table_len(),
            s.records_written + s.records_loaded,
            frames
        ));
    }

    pub(crate) fn finish(self) {
        self.bar.finish_and_clear();
    }
}
