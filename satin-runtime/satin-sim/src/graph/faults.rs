//! Faults of the shared language (`satin-faults`) in a simulated
//! task-graph run. What a task-graph run has no meaning for is refused in
//! words, as `--chaos` refuses it for real task-graph runs: a graceful
//! leave, a suspend or a checkpoint's corruption (no checkpoint), failing
//! stolen jobs (nothing is stolen), a cluster by its number (one cluster).
//! A share (`at=50%`) is of the planned makespan, from the clocks' start.

use satin_faults::{Crashed, Fault, Kind};

use super::{Ev, GraphEnding, World};
use crate::workload::Nanos;

/// Refuses what a task-graph run cannot do, and nodes it does not have.
pub(super) fn check(faults: &[Fault], nodes: usize) -> Result<(), String> {
    let joins = faults.iter().filter(|f| matches!(f.kind, Kind::Join(_))).count();
    for f in faults {
        let no = |what: &str| Err(format!("{f}: a task-graph run has no {what}"));
        match &f.kind {
            Kind::Leave(_) | Kind::Drain(_) => return no("graceful leave (its schedule is static: kill the node)"),
            Kind::Suspend(_) | Kind::Corrupt => return no("checkpoint"),
            Kind::Fail { .. } | Kind::FailRunning(_) | Kind::KillJobs(_) => return no("stolen jobs to fail"),
            Kind::Crash(Crashed::Cluster(_)) | Kind::Join(Some(1..)) => return no("clusters"),
            _ => {}
        }
        if let Some(n) = f.kind.nodes().into_iter().find(|&n| n as usize >= nodes + joins) {
            return Err(format!("{f}: names node {n}, but the run has only {} nodes", nodes + joins));
        }
    }
    Ok(())
}

impl World<'_> {
    /// Fault `k` strikes now.
    pub(super) fn fault(&mut self, now: Nanos, k: usize) {
        let kind = self.faults[k].kind.clone();
        match kind {
            Kind::Crash(Crashed::Node(n)) => self.crash(now, n as usize, true),
            Kind::Crash(Crashed::All) => {
                for i in 0..self.nodes.len() {
                    self.crash(now, i, true);
                }
            }
            Kind::Crash(Crashed::Master) => {
                if let Some(i) = self.master() {
                    self.crash(now, i, true);
                }
            }
            Kind::Vanish(n) => self.crash(now, n as usize, false),
            Kind::Join(_) => {
                let i = self.nodes.len();
                self.add_node();
                self.queue.push(now, Ev::Start { node: i });
            }
            Kind::Slow { node, factor } => {
                if let Some(n) = self.nodes.get_mut(node as usize) {
                    n.slow = factor;
                }
            }
            Kind::Net { links, cut } => {
                let (newly_cut, released) = self.net.change(&links, cut, self.nodes.len());
                for ((a, b), episode) in newly_cut {
                    self.queue.push(now + self.cfg.idle_timeout, Ev::LinkTimeout { a, b, episode });
                }
                for (from, to, packet) in released {
                    // A dead sender retransmits nothing.
                    if !self.nodes[from].gone {
                        self.queue.push(now + self.cfg.latency, Ev::Packet { to, from, packet });
                    }
                }
            }
            Kind::Loss { node, rate } => self.net.set_loss(node.map(|n| n as usize), rate),
            Kind::Delay { node, ms, jitter } => self.net.set_delay(node.map(|n| n as usize), ms, jitter),
            Kind::Leave(_)
            | Kind::Drain(_)
            | Kind::Suspend(_)
            | Kind::Corrupt
            | Kind::Fail { .. }
            | Kind::FailRunning(_)
            | Kind::KillJobs(_)
            | Kind::Crash(Crashed::Cluster(_)) => unreachable!("refused by `check`"),
        }
    }

    /// Node `i`'s process dies; with `seen`, the supervisor tells the
    /// others, otherwise each finds it by its connection's idle timeout.
    fn crash(&mut self, now: Nanos, i: usize, seen: bool) {
        let Some(n) = self.nodes.get_mut(i) else { return };
        if n.gone {
            return;
        }
        n.gone = true;
        n.end = GraphEnding::Crashed;
        n.running = None;
        self.net.forget(i, self.nodes.len());
        if seen {
            self.tell_gone(now, i);
            return;
        }
        for j in (0..self.nodes.len()).filter(|&j| j != i && !self.nodes[j].gone) {
            if !self.net.is_lost(i, j) {
                let at = now + self.cfg.idle_timeout;
                self.queue.push(at, Ev::Lost { node: j, peer: i, loss: super::idle_timeout() });
            }
        }
    }

    /// The live node with the lowest processor number (the first node
    /// before the plan is made).
    fn master(&self) -> Option<usize> {
        let roster = self.nodes.iter().find_map(|n| n.core.roster().map(<[_]>::to_vec));
        match roster {
            Some(r) => r.iter().filter_map(|id| self.ids.get(id).copied()).find(|&i| !self.nodes[i].gone),
            None => (!self.nodes[0].gone).then_some(0),
        }
    }
}
