//! `--chaos` applied to a running cluster (what each fault is on real
//! processes: see `chaos.rs`). Faults only the simulator can do were
//! refused when the spec was read.

use satin_faults::{Crashed, Kind, Links};

use super::{Cluster, Order, RunError};

pub(super) fn apply(app: &str, cluster: &mut Cluster, kind: &Kind) -> Result<(), RunError> {
    match *kind {
        Kind::Crash(Crashed::Node(node)) => {
            say!("{app}: chaos: SIGKILL node {node}");
            cluster.signal(node as usize, libc::SIGKILL);
        }
        Kind::Leave(node) => {
            say!("{app}: chaos: node {node} told to leave now, handing over what it finished");
            cluster.tell(node as usize, &Order::Leave.line());
        }
        Kind::Drain(node) => {
            say!("{app}: chaos: SIGTERM node {node} (leave once what it runs is finished)");
            cluster.signal(node as usize, libc::SIGTERM);
        }
        Kind::Crash(Crashed::All) => {
            say!("{app}: chaos: SIGKILL every node");
            for node in 0..cluster.pids.len() {
                cluster.signal(node, libc::SIGKILL);
            }
        }
        Kind::Suspend(node) => {
            // A node killed at the same moment (or before) would lose the
            // signal: any live node suspends the whole run as well.
            let live = (0..cluster.pids.len()).find(|&n| cluster.alive(n));
            match (node.map(|n| n as usize), live) {
                (Some(t), _) if cluster.alive(t) => {
                    say!("{app}: chaos: SIGUSR1 node {t} (suspend the run)");
                    cluster.signal(t, libc::SIGUSR1);
                }
                (Some(t), Some(other)) => {
                    say!("{app}: chaos: node {t} is gone; SIGUSR1 node {other} instead (suspend the run)");
                    cluster.signal(other, libc::SIGUSR1);
                }
                (None, Some(t)) => {
                    say!("{app}: chaos: SIGUSR1 node {t} (suspend the run)");
                    cluster.signal(t, libc::SIGUSR1);
                }
                (_, None) => say!("{app}: chaos: no node is alive to suspend the run: the suspend is not done"),
            }
        }
        Kind::Slow { node, factor } => {
            match factor {
                f if f.is_infinite() => say!("{app}: chaos: node {node} hangs"),
                f if f <= 1.0 => say!("{app}: chaos: node {node} runs at full speed again"),
                f => say!("{app}: chaos: node {node} runs {f} times slower"),
            }
            cluster.tell(node as usize, &Order::Slow(factor).line());
            if factor.is_infinite() {
                cluster.hung.push(node as usize);
            }
        }
        Kind::Fail { node, rate } => {
            say!("{app}: chaos: jobs node {node} steals fail with probability {rate}");
            cluster.tell(node as usize, &Order::Fail(rate).line());
        }
        Kind::Vanish(node) => {
            say!("{app}: chaos: node {node} dies silently (SIGKILL, nobody told)");
            cluster.silent.push(node as usize);
            cluster.signal(node as usize, libc::SIGKILL);
        }
        Kind::Net { links: Links::Node(node), cut } => {
            match cut {
                true => say!("{app}: chaos: node {node} is cut off from the others"),
                false => say!("{app}: chaos: node {node} is reachable again"),
            }
            cluster.network(kind);
        }
        Kind::Net { links: Links::Link { from, to, both }, cut } => {
            let link = if both { format!("{from}-{to}") } else { format!("{from}>{to}") };
            match cut {
                true => say!("{app}: chaos: link {link} cut"),
                false => say!("{app}: chaos: link {link} works again"),
            }
            cluster.network(kind);
        }
        Kind::Net { links: Links::Split(ref side), cut } => {
            let nodes: Vec<String> = side.iter().map(u64::to_string).collect();
            match cut {
                true => say!("{app}: chaos: nodes {} cut off from the others", nodes.join("+")),
                false => say!("{app}: chaos: nodes {} reachable again", nodes.join("+")),
            }
            cluster.network(kind);
        }
        Kind::Loss { node, rate } => {
            let who = node.map_or("every node".to_string(), |n| format!("node {n}"));
            say!("{app}: chaos: {who} loses {:.0} % of the packets it sends", rate * 100.0);
            cluster.network(kind);
        }
        Kind::Delay { node, ms, jitter } => {
            let who = node.map_or("every node".to_string(), |n| format!("node {n}"));
            say!("{app}: chaos: {who} delays its packets by {ms} ms (+ up to {jitter} ms)");
            cluster.network(kind);
        }
        Kind::Join(_) => match cluster.live_addr() {
            Some(addr) => {
                let node = cluster.spawn(super::Start::Join(addr))?;
                cluster.joiners.push(node);
                say!("{app}: chaos: node {node} joins through {addr}");
            }
            None => say!("{app}: chaos: no live node to join through; join skipped"),
        },
        Kind::Crash(Crashed::Cluster(_) | Crashed::Master)
        | Kind::Corrupt
        | Kind::FailRunning(_)
        | Kind::KillJobs(_) => {
            unreachable!("refused by chaos::parse")
        }
    }
    Ok(())
}
