//! Fault schedules: what goes wrong, and when — in the fault language's
//! own types (`satin_faults`), which `--chaos` reads too. In the simulator
//! a share of the run (`at=50%`) is a share of the distinct leaves
//! executed, any node's `suspend` suspends the whole run, and a `join`
//! without a cluster joins cluster 0.

pub use satin_faults::{to_spec, Crashed, Fault, Kind, Links, When};

/// Reads a schedule in the fault language (`satin_faults` lists every
/// fault), e.g.
/// `crash:node=3,at=50%;crash-cluster:cluster=1,at=20s;crash-master:at=60%;leave:node=2,at=10s;join:cluster=0,at=5s`,
/// `slow:node=2,factor=10,at=5s,for=20s;hang:node=3,at=1s;fail:node=1,rate=0.5,at=0s;fail-running:node=1,at=3s;kill-jobs:node=2,at=4s`.
/// What only real processes do (a loss or delay of one node's packets) is
/// refused.
pub fn parse(spec: &str) -> Result<Vec<Fault>, String> {
    let faults = satin_faults::parse(spec)?;
    check(&faults)?;
    Ok(faults)
}

/// Whether the simulator can carry out every fault of a schedule; if not,
/// the first it cannot, and why.
pub fn check(faults: &[Fault]) -> Result<(), String> {
    match faults.iter().find(|f| matches!(f.kind, Kind::Loss { node: Some(_), .. } | Kind::Delay { node: Some(_), .. }))
    {
        Some(f) => Err(format!("{f}: the simulator's loss and delay are every link's; drop node=")),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_kind_and_rejects_nonsense() {
        let f = parse("crash:node=3,at=50%; crash-cluster:cluster=1,at=2s;crash-master:at=1.5s;leave:node=2,at=10ms;join:cluster=0,at=5s")
            .unwrap();
        assert_eq!(f.len(), 5);
        assert_eq!(f[0], Fault { at: When::Share(0.5), kind: Kind::crash(3) });
        assert_eq!(f[2].at, When::After(1_500_000_000));
        assert_eq!(f[3].at, When::After(10_000_000));
        assert!(parse("crash:at=5s").unwrap_err().contains("missing node"));
        assert!(parse("explode:at=5s").unwrap_err().contains("unknown fault"));
        assert!(parse("crash:node=1,at=150%").unwrap_err().contains("not within"));
        assert!(parse("crash:node=1,at=soon").unwrap_err().contains("bad time"));
    }

    #[test]
    fn parses_slow_hang_and_failing_nodes() {
        let f = parse("slow:node=2,factor=10,at=5s,for=20s;hang:node=3,at=1s;fail:node=1,rate=0.5,at=0s").unwrap();
        assert_eq!(f.len(), 4);
        assert_eq!(f[0].kind, Kind::Slow { node: 2, factor: 10.0 });
        assert_eq!(f[1], Fault { at: When::After(25_000_000_000), kind: Kind::Slow { node: 2, factor: 1.0 } });
        assert_eq!(f[2].kind, Kind::hang(3));
        assert_eq!(f[3].kind, Kind::Fail { node: 1, rate: 0.5 });
        assert!(parse("slow:node=1,at=1s").unwrap_err().contains("missing factor"));
        assert!(parse("slow:node=1,factor=0.5,at=1s").unwrap_err().contains("at least 1"));
        assert!(parse("fail:node=1,rate=2,at=1s").unwrap_err().contains("probability"));
        let f = parse("slow:node=1,factor=2,at=50%,for=1s").unwrap();
        assert_eq!(f[1], Fault { at: When::ShareThen(0.5, 1_000_000_000), kind: Kind::Slow { node: 1, factor: 1.0 } });
        assert!(parse("crash:node=1,at=1s,for=1s").unwrap_err().contains("slow, fail and network"));
    }

    #[test]
    fn parses_network_faults() {
        let f = parse("partition:node=2,at=1s,for=2s;split:nodes=0+1,at=5s;cut:1>3,at=2s;loss:0.3;vanish:node=4,at=3s")
            .unwrap();
        assert_eq!(f[0].kind, Kind::Net { links: Links::Node(2), cut: true });
        assert_eq!(
            f[1],
            Fault { at: When::After(3_000_000_000), kind: Kind::Net { links: Links::Node(2), cut: false } }
        );
        assert_eq!(f[2].kind, Kind::Net { links: Links::Split(vec![0, 1]), cut: true });
        assert_eq!(f[3].kind, Kind::Net { links: Links::Link { from: 1, to: 3, both: false }, cut: true });
        assert_eq!(f[4], Fault { at: When::After(0), kind: Kind::Loss { node: None, rate: 0.3 } });
        assert_eq!(f[5].kind, Kind::Vanish(4));
        assert!(parse("cut:1~2,at=1s").unwrap_err().contains("A-B"));
        assert!(parse("split:at=1s").unwrap_err().contains("missing nodes"));
        assert!(parse("loss:2").unwrap_err().contains("probability"));
        let f = parse("delay:100,jitter=50,at=1s,for=1s").unwrap();
        assert_eq!(f[0].kind, Kind::Delay { node: None, ms: 100.0, jitter: 50.0 });
        assert_eq!(
            f[1],
            Fault { at: When::After(2_000_000_000), kind: Kind::Delay { node: None, ms: 0.0, jitter: 0.0 } }
        );
        assert!(parse("loss:0.2,node=1").unwrap_err().contains("every link's"));
    }

    #[test]
    fn a_schedule_is_printed_in_the_language_chaos_reads() {
        let spec = "crash:node=3,at=50%;crash-all:at=2s;hang:node=1,at=1s;partition:node=2,at=1s,for=2s;delay:100,jitter=50,at=1s";
        let faults = parse(spec).unwrap();
        assert_eq!(to_spec(&faults), spec);
        assert_eq!(parse(&to_spec(&faults)).unwrap(), faults);
    }
}
