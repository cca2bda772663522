//! What the nodes of a cluster printed and how they ended, and the
//! waits on their processes.

use std::net::SocketAddr;
use std::process::{Child, ExitStatus};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use super::{Cluster, Event, RunError, START_TIMEOUT};
use crate::ending::{EXPELLED_STATUS, LOST_MAJORITY_STATUS, SUSPENDED_STATUS};

/// What the nodes printed and how they ended.
#[derive(Default)]
pub(super) struct Outputs {
    pub(super) stdout: Vec<Option<String>>,
    pub(super) exited: Vec<Option<ExitStatus>>,
    pub(super) master: Option<usize>,
    /// The node the run started on, when it showed the answer although
    /// another node ended the run as master (see `proto/node/origin.rs`).
    pub(super) origin_shown: Option<usize>,
    /// CPU time of every node process, killed ones included.
    pub(super) cpu: Duration,
    pub(super) logs_closed: usize,
}

impl Outputs {
    /// Output of `node` if it is complete: printed (or said it showed the
    /// answer, for a program that prints nothing), then exited with success.
    pub(super) fn complete(&self, node: usize) -> Option<String> {
        match (self.stdout.get(node), self.exited.get(node)) {
            (Some(Some(text)), Some(Some(status))) if status.success() && (!text.is_empty() || self.showed(node)) => {
                Some(text.clone())
            }
            _ => None,
        }
    }

    /// `node` said it showed the answer: the node the run started on, or
    /// else the master.
    fn showed(&self, node: usize) -> bool {
        self.origin_shown.map_or(self.master == Some(node), |origin| origin == node)
    }

    /// One line: how each node ended — its exit status and what that
    /// means, or the signal that ended it.
    pub(super) fn exits(&self, wound_down: &[usize]) -> String {
        use std::os::unix::process::ExitStatusExt;
        let mut parts = Vec::new();
        for (node, status) in self.exited.iter().enumerate() {
            let Some(status) = status else { continue };
            let what = match (status.code(), status.signal()) {
                (Some(0), _) if self.origin_shown == Some(node) => {
                    "0 (the node the run started on: printed the answer)".to_string()
                }
                (Some(0), _) if self.master == Some(node) && self.origin_shown.is_some() => "0 (master)".to_string(),
                (Some(0), _) if self.master == Some(node) => "0 (master: printed the answer)".to_string(),
                (Some(0), _) => "0".to_string(),
                (Some(c), _) if c == LOST_MAJORITY_STATUS => format!("{c} (lost the majority)"),
                (Some(c), _) if c == EXPELLED_STATUS => format!("{c} (removed by the majority)"),
                (Some(c), _) if c == SUSPENDED_STATUS => format!("{c} (suspended)"),
                (Some(c), _) => c.to_string(),
                (None, Some(sig)) if wound_down.contains(&node) => format!("signal {sig} (stopped after the answer)"),
                (None, Some(sig)) => format!("signal {sig}"),
                (None, None) => "?".to_string(),
            };
            parts.push(format!("node {node} {what}"));
        }
        parts.join(", ")
    }

    /// The output of the node that showed the answer: the one the run
    /// started on, or else the master.
    pub(super) fn shown_answer(&self) -> Option<String> {
        self.origin_shown.and_then(|n| self.complete(n)).or_else(|| self.master.and_then(|m| self.complete(m)))
    }

    pub(super) fn any_answer(&self) -> Option<String> {
        (0..self.stdout.len()).find_map(|n| self.complete(n))
    }

    /// Every node that exited on its own stopped for a suspend — but for
    /// nodes that came to join while the run was being suspended
    /// (`late_joiners`): one that found its contact gone before it was
    /// admitted was never part of what the checkpoint holds.
    pub(super) fn all_suspended(&self, late_joiners: &[usize]) -> bool {
        use std::os::unix::process::ExitStatusExt;
        let statuses: Vec<(usize, &ExitStatus)> = (self.exited.iter().enumerate())
            .filter_map(|(node, s)| s.as_ref().map(|s| (node, s)))
            .filter(|(_, s)| s.signal().is_none())
            .collect();
        let suspended = |s: &ExitStatus| s.code() == Some(SUSPENDED_STATUS);
        statuses.iter().any(|(node, s)| suspended(s) && !late_joiners.contains(node))
            && statuses.iter().all(|(node, s)| suspended(s) || (late_joiners.contains(node) && s.code() == Some(1)))
    }
}

/// Waits for `child` and reads the CPU time it used (user + system), which
/// the kernel reports even for a killed process.
pub(super) fn wait_with_cpu(child: Child) -> (ExitStatus, Duration) {
    use std::os::unix::process::ExitStatusExt;
    let pid = child.id() as libc::pid_t;
    let mut status: libc::c_int = 0;
    // SAFETY: an all-zero rusage is a valid value of the plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: `status` and `usage` are valid for writes; `pid` is our
        // child, reaped only here.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if r == pid {
            break;
        }
        if r == -1 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return (ExitStatus::from_raw(status), Duration::ZERO);
        }
    }
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    // `child` is reaped: dropping it must not wait again (it does not).
    drop(child);
    (ExitStatus::from_raw(status), tv(usage.ru_utime) + tv(usage.ru_stime))
}

pub(super) fn put<T>(v: &mut Vec<Option<T>>, i: usize, x: T) {
    if v.len() <= i {
        v.resize_with(i + 1, || None);
    }
    v[i] = Some(x);
}

/// Waits until `node` listens and returns where; `None` if it ended with
/// success first — a program whose annotated calls all stayed on their
/// node (`Job::LOCAL`) never starts a distributed run. Every other event
/// that arrives meanwhile is kept in `deferred`, in order, for the run's
/// loop (what a node printed must not be lost).
pub(super) fn wait_listening(
    rx: &Receiver<Event>,
    cluster: &mut Cluster,
    node: usize,
    deferred: &mut std::collections::VecDeque<Event>,
) -> Result<Option<SocketAddr>, RunError> {
    // (It may have ended while an earlier node was waited for.)
    let ended = deferred.iter().find_map(|e| match e {
        Event::Exited { node: n, status, .. } if *n == node => Some(*status),
        _ => None,
    });
    if let Some(status) = ended {
        return match status.success() {
            true => Ok(None),
            false => Err(RunError::Failed(format!("node {node} exited before it listened ({status})"))),
        };
    }
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(Event::Listening { node: n, addr }) => {
                cluster.addrs[n] = Some(addr);
                if n == node {
                    return Ok(Some(addr));
                }
            }
            Ok(Event::Exited { node: n, status, cpu }) if n == node => {
                if !status.success() {
                    return Err(RunError::Failed(format!("node {node} exited before it listened ({status})")));
                }
                deferred.push_back(Event::Exited { node: n, status, cpu });
                return Ok(None);
            }
            Ok(other) => deferred.push_back(other),
            Err(_) => {
                return Err(RunError::Failed(format!("node {node} did not start listening within {START_TIMEOUT:?}")))
            }
        }
    }
}
