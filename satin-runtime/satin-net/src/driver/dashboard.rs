//! The driver's side of what others see of the run: the board it keeps
//! up to date as the run goes, which while master it feeds to every
//! dashboard — its own node's (`--dashboard`), the other nodes', its
//! supervisor's (see `net/src/dashboard/`) — and the reports a supervisor
//! draws its status line from.

use super::*;
use crate::dashboard::{self, Board};

impl Driver {
    /// Keeps the board (reported while master, `report_board`), and
    /// serves the master's view if this node serves a dashboard — the
    /// first node too: its page follows the run to the next master.
    pub(super) fn open_dashboard(&mut self) {
        // Whichever node is master when someone looks draws every node's
        // jobs: each records its own from the start (a recorded job costs
        // two clock reads; only jobs that moved are recorded).
        self.exec.record_jobs(true);
        if let Some(addr) = self.spec.io.dashboard {
            match crate::dashboard::relay::Relay::new(&self.first_root.0, &self.spec.me.label).serve(addr) {
                Ok(view) => self.view = Some(view),
                Err(e) => warn!("cannot serve the dashboard on {addr}: {e}"),
            }
        }
        // Every node keeps a board: whichever is master shows it — to its
        // supervisor, to the nodes that serve a dashboard (itself
        // included), in its report (the board is read only when someone
        // asks). Named as its peers are: by its short name (its number
        // under a supervisor, SLURM or Kubernetes; else its address).
        let trace = self.spec.me.trace.as_ref().map(|p| p.display().to_string());
        self.board = Some(Arc::new(std::sync::Mutex::new(Board::new(&self.first_root.0, trace))));
        let (me, name, address) = (self.spec.me.id, self.spec.me.label.clone(), self.io.addr.to_string());
        let serves = self.view.is_some();
        self.on_board(|b| {
            b.alive(me, name, Some(address), serves);
            b.event("the run starts");
        });
    }

    /// Changes the board, if there is one.
    pub(super) fn on_board(&self, change: impl FnOnce(&mut Board)) {
        if let Some(board) = &self.board {
            change(&mut board.lock().unwrap_or_else(|e| e.into_inner()));
        }
    }

    /// Under a supervisor that draws the status line, the master reports
    /// its estimate four times a second (a line it takes off the log).
    pub(super) fn report_status(&mut self) {
        if !self.spec.io.report_status || !self.node.joined() || !self.node.is_master() {
            return;
        }
        if self.reported.is_some_and(|t| t.elapsed() < Duration::from_millis(250)) {
            return;
        }
        if let Some(e) = self.exec.progress() {
            self.reported = Some(Instant::now());
            let mine = self.figures();
            let others = self.peer_figures.iter().filter(|(id, _)| self.node.live_members().any(|m| m == **id));
            let mut totals =
                crate::status_line::Totals { jobs_stolen: mine.jobs_stolen, cpu_s: mine.cpu_ms as f64 / 1e3 };
            for (_, f) in others {
                totals.jobs_stolen += f.jobs_stolen;
                totals.cpu_s += f.cpu_ms as f64 / 1e3;
            }
            crate::contract::Report::Status(crate::status_line::report(&e, self.node.live_members().count(), totals))
                .tell();
        }
    }

    /// This node's figures, the estimate and who leads, after each step.
    pub(super) fn update_board(&self) {
        if self.board.is_none() {
            return;
        }
        let (me, stats, estimate) = (self.spec.me.id, self.node.stats(), self.exec.progress());
        let (leader, dropped) = (self.node.leader(), self.node.dropped_now(self.now()));
        self.on_board(|b| {
            b.update(me, stats.jobs_stolen, stats.jobs_given, estimate);
            b.set_master(leader);
            b.straggler_news(stats);
            b.set_dropped(&dropped);
        });
    }

    /// When the core says (`Action::ShareFigures`, once a second): this
    /// node's figures to the master (through the core), or onto the
    /// board of the master that serves one.
    pub(super) fn share_figures(&mut self) {
        let figures = self.figures_and_jobs();
        if self.node.is_master() {
            let me = self.spec.me.id;
            self.on_board(|b| b.figures(me, &figures));
            self.report_board();
        } else {
            self.node.share_figures(figures);
        }
    }

    /// At the end, the master's last figures and the jobs it ended since
    /// its last report go onto its board (its root among them), before
    /// the board is reported for the last time.
    pub(super) fn last_figures(&mut self) {
        if self.board.is_some() && self.node.is_master() {
            let (me, figures) = (self.spec.me.id, self.figures_and_jobs());
            self.on_board(|b| b.figures(me, &figures));
        }
    }

    /// This node's figures and the jobs it ended since the last call.
    fn figures_and_jobs(&self) -> NodeFigures {
        let jobs = dashboard::stream::bars_of(self.exec.take_job_spans(), self.exec.running_job_spans());
        NodeFigures { jobs, ..self.figures() }
    }

    /// `--report FILE`: the board as it is at the end, as one page.
    pub(super) fn write_report(&self) {
        let (Some(path), Some(board)) = (&self.spec.io.report, &self.board) else { return };
        let status = serde_json::to_value(board.lock().unwrap_or_else(|e| e.into_inner()).status()).unwrap_or_default();
        match crate::dashboard::report::write(path, &status) {
            Ok(()) => eprintln!("report: {}", path.display()),
            Err(e) => warn!("cannot write the report to {}: {e}", path.display()),
        }
    }

    /// While master (once a second, with its figures, and at its end):
    /// the board to whoever shows it — a supervisor that serves the
    /// dashboard (a line it takes off the log), the nodes that serve one
    /// (`Node::share_board`), this node's own page if it serves the
    /// master's view.
    pub(super) fn report_board(&mut self) {
        let wanted = self.spec.io.board_to_supervisor || self.node.board_watched() || self.view.is_some();
        if !wanted || !self.node.is_master() {
            return;
        }
        let Some(board) = &self.board else { return };
        let report = crate::dashboard::relay::board_report(&board.lock().unwrap_or_else(|e| e.into_inner()));
        if self.spec.io.board_to_supervisor {
            crate::contract::Report::Board(report.clone()).tell();
        }
        if let Some(view) = &self.view {
            view.take_report(&self.spec.me.label, &report);
        }
        if self.node.board_watched() {
            self.node.share_board(report.into_bytes().into());
        }
    }

    /// The master's board reached this node, which serves its view.
    pub(super) fn master_board(&mut self, from: NodeId, board: satin_proto::Bytes) {
        if let Some(view) = &self.view {
            view.take_report(&self.peer_name(from), &String::from_utf8_lossy(&board));
        }
    }

    /// Figures a peer reported to this master: on the board, and kept for
    /// the sums of the supervisor's line.
    pub(super) fn peer_figures(&mut self, from: NodeId, figures: NodeFigures) {
        self.on_board(|b| b.figures(from, &figures));
        if self.spec.io.report_status {
            self.peer_figures.insert(from, figures);
        }
    }

    /// This node's figures now, without its jobs.
    fn figures(&self) -> NodeFigures {
        let stats = self.node.stats();
        NodeFigures {
            cluster: self.spec.me.cluster_name.clone(),
            spawns: self.exec.spawns(),
            jobs_stolen: stats.jobs_stolen,
            jobs_given: stats.jobs_given,
            table_entries: self.node.table_len() as u64,
            table_lookups: self.exec.table_lookups(),
            table_hits: self.exec.table_hits(),
            recoveries: stats.recoveries,
            bytes_sent: self.io.net.sent().1,
            cpu_ms: dashboard::process::cpu().as_millis() as u64,
            rss_bytes: dashboard::process::resident_bytes(),
            watches: self.view.is_some(),
            // The jobs ended since the last report go with it alone
            // (`share_figures`).
            jobs: Vec::new(),
        }
    }
}
