use super::*;

const S: Nanos = 1_000_000_000;
const MS: Nanos = 1_000_000;

#[test]
fn reads_every_kind() {
    let f = parse(
        "kill:node=2,at=50%; crash:node=3,at=2s; crash:node=all,at=1s; crash-all:at=1s; crash-cluster:cluster=1,at=2s; \
         crash-master:at=1.5s; vanish:node=4,at=3s; leave:node=3,at=2s; drain:node=1,at=10ms; join:at=300ms; \
         join:cluster=1,at=5s; suspend:at=1s; suspend:node=2,at=2s; corrupt:at=1s",
    )
    .unwrap();
    let kinds: Vec<Kind> = f.iter().map(|f| f.kind.clone()).collect();
    assert_eq!(
        kinds,
        vec![
            Kind::Crash(Crashed::Node(2)),
            Kind::Crash(Crashed::Node(3)),
            Kind::Crash(Crashed::All),
            Kind::Crash(Crashed::All),
            Kind::Crash(Crashed::Cluster(1)),
            Kind::Crash(Crashed::Master),
            Kind::Vanish(4),
            Kind::Leave(3),
            Kind::Drain(1),
            Kind::Join(None),
            Kind::Join(Some(1)),
            Kind::Suspend(None),
            Kind::Suspend(Some(2)),
            Kind::Corrupt,
        ]
    );
    assert_eq!(f[0].at, When::Share(0.5));
    assert_eq!(f[5].at, When::After(1_500 * MS));
    assert_eq!(f[8].at, When::After(10 * MS));
    let f =
        parse("slow:node=1,factor=5,at=20%;hang:node=2,at=1s;fail:node=3,rate=0.5;slow:node=1,factor=3,at=1s,for=2s")
            .unwrap();
    assert_eq!(f[0], Fault { at: When::Share(0.2), kind: Kind::Slow { node: 1, factor: 5.0 } });
    assert_eq!(f[1].kind, Kind::Slow { node: 2, factor: f64::INFINITY });
    assert_eq!(f[2], Fault { at: When::After(0), kind: Kind::Fail { node: 3, rate: 0.5 } });
    assert_eq!(f[4], Fault { at: When::After(3 * S), kind: Kind::Slow { node: 1, factor: 1.0 } });
    let f = parse("fail-running:node=1,at=3s;kill-jobs:node=2,at=4s").unwrap();
    assert_eq!((f[0].kind.clone(), f[1].kind.clone()), (Kind::FailRunning(1), Kind::KillJobs(2)));
}

#[test]
fn reads_network_faults_and_their_ends() {
    let f = parse(
        "partition:node=2,at=50%;cut:0-1,at=1s,for=2s;cut:2>0,at=3s;loss:0.2;loss:30%,node=2;delay:100,jitter=50,at=1s",
    )
    .unwrap();
    assert_eq!(f[0], Fault { at: When::Share(0.5), kind: Kind::Net { links: Links::Node(2), cut: true } });
    let link = Links::Link { from: 0, to: 1, both: true };
    assert_eq!(f[1].kind, Kind::Net { links: link.clone(), cut: true });
    assert_eq!(f[2], Fault { at: When::After(3 * S), kind: Kind::Net { links: link, cut: false } });
    assert_eq!(f[3].kind, Kind::Net { links: Links::Link { from: 2, to: 0, both: false }, cut: true });
    assert_eq!(f[4], Fault { at: When::After(0), kind: Kind::Loss { node: None, rate: 0.2 } });
    assert_eq!(f[5].kind, Kind::Loss { node: Some(2), rate: 0.3 });
    assert_eq!(f[6].kind, Kind::Delay { node: None, ms: 100.0, jitter: 50.0 });
    let f = parse("split:nodes=0+2,at=1s,for=1s;heal:node=3,at=2s;heal:1-2,at=3s;heal:nodes=0+1,at=4s").unwrap();
    assert_eq!(f[0].kind, Kind::Net { links: Links::Split(vec![0, 2]), cut: true });
    assert_eq!(f[1].kind, Kind::Net { links: Links::Split(vec![0, 2]), cut: false });
    assert_eq!(f[2].kind, Kind::Net { links: Links::Node(3), cut: false });
    assert_eq!(f[3].kind, Kind::Net { links: Links::Link { from: 1, to: 2, both: true }, cut: false });
    assert_eq!(f[4].kind, Kind::Net { links: Links::Split(vec![0, 1]), cut: false });
    assert_eq!(f[0].kind.nodes(), vec![0, 2]);
}

#[test]
fn refuses_bad_schedules_with_reasons() {
    for (spec, needle) in [
        ("kill:at=1s", "missing node"),
        ("kill:node=1", "missing at"),
        ("explode:node=1,at=1s", "unknown fault"),
        ("kill:node=x,at=1s", "node must be a number"),
        ("leave:node=all,at=1s", "for crash (kill) only"),
        ("kill:node=1,at=150%", "not within"),
        ("kill:node=1,at=soon", "bad time"),
        ("slow:node=1,at=1s", "missing factor"),
        ("slow:node=1,factor=0.5,at=1s", "at least 1"),
        ("fail:node=1,rate=1.5", "probability"),
        ("kill:node=1,at=50%+soon", "bad time"),
        ("kill:node=1,at=50%+20%", "bad time"),
        ("slow:node=1,factor=2,at=1s,for=50%", "is a duration"),
        ("crash:node=1,at=1s,for=1s", "slow, fail and network"),
        ("hang:node=1,at=1s,factor=2", "unknown key"),
        ("join:node=4,at=1s", "next number"),
        ("kill:node=1,at=1s,color=red", "unknown key"),
        ("crash-cluster:at=1s", "missing cluster"),
        ("partition:at=1s", "missing node"),
        ("cut:at=1s", "missing the link"),
        ("cut:1~2,at=1s", "A-B (both ways)"),
        ("cut:1-1,at=1s", "two different nodes"),
        ("cut:a-2,at=1s", "not a node number"),
        ("split:at=1s", "missing nodes"),
        ("split:nodes=0+x,at=1s", "nodes are numbers"),
        ("heal:at=1s", "heal names one of"),
        ("heal:node=1,at=1s,for=1s", "slow, fail and network"),
        ("loss:1.5", "probability"),
        ("loss:", "missing the loss rate"),
        ("delay:-3", "at least 0"),
        ("delay:10,jitter=x", "jitter is milliseconds"),
        ("vanish:at=1s", "missing node"),
        ("kill:node=1,at", "expected key=value"),
    ] {
        let e = parse(spec).unwrap_err();
        assert!(e.contains(needle), "{spec}: {e}");
        assert!(e.contains(spec.split(';').next().unwrap_or(spec).trim()), "{spec}: the error names the part: {e}");
    }
}

#[test]
fn a_schedule_written_back_reads_the_same() {
    for spec in [
        "crash:node=3,at=50%;crash-cluster:cluster=1,at=2s;crash-master:at=1500ms;leave:node=2,at=10ms;join:cluster=0,at=5s",
        "slow:node=2,factor=10,at=5s,for=20s;hang:node=3,at=1s;fail:node=1,rate=0.5,at=0s;fail-running:node=1,at=3s",
        "partition:node=2,at=1s,for=2s;split:nodes=0+1,at=5s;cut:1>3,at=2s;loss:0.3;vanish:node=4,at=3s",
        "delay:100,jitter=50,at=1s,for=1s;loss:0.25,node=2,at=30%;heal:2-3,at=9s;suspend:node=1,at=2s;corrupt:at=33%",
        "crash-all:at=2s;drain:node=2,at=1.25s;kill-jobs:node=4,at=7s;join:at=0s;slow:node=1,factor=1,at=3s",
        "cut:1-0,at=40%,for=200ms;slow:node=2,factor=3,at=10%+50ms,for=1s;kill:node=1,at=60%+5ms",
    ] {
        let faults = parse(spec).unwrap();
        let written = to_spec(&faults);
        assert_eq!(parse(&written).unwrap(), faults, "{spec}\nwritten as {written}");
    }
    // A lasting fault is written with for=; its end alone, as an end.
    let faults = parse("partition:node=2,at=1s,for=2s").unwrap();
    assert_eq!(to_spec(&faults), "partition:node=2,at=1s,for=2s");
    assert_eq!(to_spec(&faults[1..]), "heal:node=2,at=3s");
    // At a share of the run too: the end comes that long after the share.
    let faults = parse("cut:1-0,at=40%,for=200ms").unwrap();
    assert_eq!(faults[1].at, When::ShareThen(0.4, 200_000_000));
    assert_eq!(to_spec(&faults), "cut:1-0,at=40%,for=200ms");
    assert_eq!(to_spec(&faults[1..]), "heal:1-0,at=40%+200ms");
}

/// A small deterministic generator (splitmix64): the property test below
/// needs no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Any fault of the language, drawn at random: every kind, every form of
/// time, with values the language writes exactly.
fn any_fault(r: &mut Rng) -> Fault {
    let node = |r: &mut Rng| r.below(8);
    let at = match r.below(4) {
        0 => When::After(r.below(100_000) * MS),
        1 => When::After(r.below(1_000_000_000)),
        2 => When::Share(r.below(101) as f64 / 100.0),
        _ => When::ShareThen(r.below(101) as f64 / 100.0, r.below(5_000) * MS),
    };
    let kind = match r.below(21) {
        0 => Kind::crash(node(r)),
        1 => Kind::Crash(Crashed::All),
        2 => Kind::Crash(Crashed::Cluster(r.below(4) as u32)),
        3 => Kind::Crash(Crashed::Master),
        4 => Kind::Vanish(node(r)),
        5 => Kind::Leave(node(r)),
        6 => Kind::Drain(node(r)),
        7 => Kind::Join((r.below(2) == 0).then(|| r.below(4) as u32)),
        8 => Kind::Suspend((r.below(2) == 0).then(|| node(r))),
        9 => Kind::Corrupt,
        10 => Kind::Slow { node: node(r), factor: 1.0 + r.below(100) as f64 / 10.0 },
        11 => Kind::hang(node(r)),
        12 => Kind::Fail { node: node(r), rate: r.below(1001) as f64 / 1000.0 },
        13 => Kind::FailRunning(node(r)),
        14 => Kind::KillJobs(node(r)),
        15 => Kind::Net { links: Links::Node(node(r)), cut: r.below(2) == 0 },
        16 => {
            let from = node(r);
            let to = (from + 1 + r.below(7)) % 8;
            Kind::Net { links: Links::Link { from, to, both: r.below(2) == 0 }, cut: r.below(2) == 0 }
        }
        17 => {
            let mut side: Vec<u64> = (0..8).filter(|_| r.below(3) == 0).collect();
            if side.is_empty() {
                side.push(node(r));
            }
            Kind::Net { links: Links::Split(side), cut: r.below(2) == 0 }
        }
        18 => Kind::Loss { node: (r.below(2) == 0).then(|| node(r)), rate: r.below(1001) as f64 / 1000.0 },
        _ => Kind::Delay {
            node: (r.below(2) == 0).then(|| node(r)),
            ms: r.below(4000) as f64 / 4.0,
            jitter: r.below(400) as f64 / 4.0,
        },
    };
    Fault { at, kind }
}

/// Every fault the types can hold prints in the language, and what it
/// prints reads back as the same fault; a whole schedule written and read
/// back writes the same.
#[test]
fn any_fault_printed_reads_back_the_same() {
    let mut r = Rng(7);
    for _ in 0..20_000 {
        let f = any_fault(&mut r);
        let text = f.to_string();
        assert_eq!(parse(&text), Ok(vec![f.clone()]), "{f:?} printed as {text}");
    }
    for _ in 0..2_000 {
        let faults: Vec<Fault> = (0..1 + r.below(6)).map(|_| any_fault(&mut r)).collect();
        let spec = to_spec(&faults);
        let again = parse(&spec).unwrap_or_else(|e| panic!("{spec}: {e}"));
        assert_eq!(to_spec(&again), spec, "{faults:?}");
    }
}
