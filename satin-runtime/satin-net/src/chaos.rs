//! `--chaos SPEC`: faults the supervisor of a local cluster injects.
//!
//! `SPEC` is a schedule in the fault language — its grammar and table are
//! `satin_faults`'s, and its types are too: a schedule a simulator seed
//! prints runs here unchanged. What a real cluster of local processes
//! cannot do is refused here, in words (`crash-cluster`, `crash-master`,
//! `corrupt`, `fail-running`, `kill-jobs`, a join into another cluster).
//!
//! How the supervisor carries each fault out (`supervise/chaos.rs`): a
//! crash is a SIGKILL the supervisor sees and reports to the others, a
//! `vanish` one it does not report; `leave` is an order on the node's
//! standard input (it leaves at once, handing over what it finished),
//! `drain` a SIGTERM (it finishes what it runs first); `suspend` is a SIGUSR1; `slow`, `hang`
//! and `fail` are orders to the node's workers; the network faults are
//! orders to the nodes' UDP sockets below QUIC (`netfault.rs`: packets
//! dropped or delayed, never refused). A share of the run (`at=50%`) is
//! a share of how long the same run takes without faults, which the
//! supervisor measures first with a calibration run.

use satin_faults::{Crashed, Fault, Kind};

/// Parses a chaos spec; the error says which part is wrong and why, and
/// what only the simulator can do is refused in words.
pub fn parse(spec: &str) -> Result<Vec<Fault>, String> {
    let faults = satin_faults::parse(spec)?;
    for f in &faults {
        check(f)?;
    }
    Ok(faults)
}

/// Whether a cluster of local processes can carry `f` out.
fn check(f: &Fault) -> Result<(), String> {
    let simulator_only = |what: &str| Err(format!("{f}: {what} is the simulator's only (a real run cannot do it)"));
    match &f.kind {
        Kind::Crash(Crashed::Cluster(_)) => simulator_only("crashing a cluster by its number"),
        Kind::Crash(Crashed::Master) => simulator_only("crashing whichever node leads"),
        Kind::Corrupt => simulator_only("flipping a bit of the checkpoint file"),
        Kind::FailRunning(_) | Kind::KillJobs(_) => simulator_only("failing the jobs a node runs"),
        Kind::Join(Some(c)) if *c != 0 => Err(format!("{f}: nodes under --local-nodes are all of cluster 0")),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use satin_faults::{Links, When};

    const MS: u64 = 1_000_000;

    #[test]
    fn reads_the_language_into_its_own_types() {
        let f = parse("kill:node=2,at=50%; leave:node=3,at=2s;drain:node=1,at=1s;join:at=300ms").unwrap();
        assert_eq!(f[0], Fault { at: When::Share(0.5), kind: Kind::crash(2) });
        assert_eq!(f[1], Fault { at: When::After(2000 * MS), kind: Kind::Leave(3) });
        assert_eq!(f[2].kind, Kind::Drain(1));
        assert_eq!(f[3], Fault { at: When::After(300 * MS), kind: Kind::Join(None) });
        let f = parse("kill:node=all,at=50%;suspend:at=1s;suspend:node=2,at=2s;join:cluster=0,at=1s").unwrap();
        assert_eq!(f[0].kind, Kind::Crash(Crashed::All));
        assert_eq!(f[1].kind, Kind::Suspend(None));
        assert_eq!(f[2].kind, Kind::Suspend(Some(2)));
        assert_eq!(f[3].kind, Kind::Join(Some(0)));
        let f = parse("hang:node=2,at=1s;fail:node=3,rate=0.5;slow:node=1,factor=3,at=1s,for=2s").unwrap();
        assert_eq!(f[0].kind, Kind::hang(2));
        assert_eq!(f[1], Fault { at: When::After(0), kind: Kind::Fail { node: 3, rate: 0.5 } });
        assert_eq!(f[3], Fault { at: When::After(3000 * MS), kind: Kind::Slow { node: 1, factor: 1.0 } });
    }

    /// A lasting fault that starts at a share of the run ends that long
    /// after the share (the supervisor adds it to the share's time).
    #[test]
    fn a_lasting_fault_may_start_at_a_percentage() {
        let f = parse("cut:1-0,at=40%,for=200ms").unwrap();
        let link = Links::Link { from: 1, to: 0, both: true };
        assert_eq!(f[0], Fault { at: When::Share(0.4), kind: Kind::Net { links: link.clone(), cut: true } });
        assert_eq!(f[1], Fault { at: When::ShareThen(0.4, 200 * MS), kind: Kind::Net { links: link, cut: false } });
    }

    #[test]
    fn refuses_what_only_the_simulator_can_do_with_reasons() {
        // The grammar's own errors are `satin_faults`' (tested there);
        // here, that they come through, and what a real run refuses.
        for (spec, needle) in [
            ("explode:node=1,at=1s", "unknown fault"),
            ("crash-master:at=1s", "simulator's only"),
            ("crash-cluster:cluster=1,at=1s", "simulator's only"),
            ("corrupt:at=1s", "simulator's only"),
            ("kill-jobs:node=1,at=1s", "simulator's only"),
            ("fail-running:node=1,at=1s", "simulator's only"),
            ("join:cluster=2,at=1s", "cluster 0"),
        ] {
            let e = parse(spec).unwrap_err();
            assert!(e.contains(needle), "{spec}: {e}");
        }
    }
}
