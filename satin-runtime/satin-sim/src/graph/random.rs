//! Random task graphs and fault schedules for property tests: every case
//! from one seed, its faults in the language `--chaos` reads.

use satin_dag::{Costs, TaskGraph};
use satin_faults::{Crashed, Fault, Kind, Links, When};
use satin_proto::SplitMix64;

/// Which faults a random case draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultClass {
    /// What the fault-tolerant schedule with replanning is built to
    /// survive, once the clocks run: crashes and silent deaths of all but
    /// one node, a node or a group cut off (healed or not), delay, loss,
    /// slow nodes.
    Survivable,
    /// Anything a task-graph run takes: also before the start, every node
    /// crashed, single links cut (the two ends each take the other for
    /// dead while a third sees both), hung workers, late joiners.
    Any,
}

/// One random run: a graph, its nodes, its faults.
#[derive(Debug, Clone)]
pub struct GraphCase {
    /// The task graph.
    pub graph: TaskGraph,
    /// Nodes at the start.
    pub nodes: usize,
    /// The fault schedule.
    pub faults: Vec<Fault>,
    /// Whether the faults are all [`FaultClass::Survivable`] ones.
    pub survivable: bool,
}

/// A random layered graph of `tasks` tasks: each task after the first
/// layer takes one to three inputs from earlier layers; costs 1 to 20
/// units, communication 0 to 10.
pub fn random_graph(rng: &mut SplitMix64, tasks: usize) -> TaskGraph {
    let tasks = tasks.max(1);
    let layers = 2 + rng.below(6) as usize;
    let mut layer_of: Vec<usize> =
        (0..tasks).map(|t| if t == 0 { 0 } else { rng.below(layers as u64) as usize }).collect();
    layer_of.sort_unstable();
    let mut edges = Vec::new();
    for t in 0..tasks {
        let earlier: Vec<usize> = (0..t).filter(|&u| layer_of[u] < layer_of[t]).collect();
        if earlier.is_empty() {
            continue;
        }
        let inputs = 1 + rng.below(3) as usize;
        let mut chosen: Vec<usize> = Vec::new();
        for _ in 0..inputs {
            let u = earlier[rng.below(earlier.len() as u64) as usize];
            if !chosen.contains(&u) {
                chosen.push(u);
                edges.push((u, t, rng.below(11) as f64));
            }
        }
    }
    let costs = (0..tasks).map(|_| 1.0 + rng.below(20) as f64).collect();
    let names = (0..tasks).map(|t| format!("t{t}")).collect();
    TaskGraph::new(names, Costs::Uniform(costs), &edges).expect("a layered graph has no cycle")
}

/// The case of `seed` in `class`.
pub fn random_case(seed: u64, class: FaultClass) -> GraphCase {
    let mut rng = SplitMix64::new(seed ^ 0x7A5C_6A11);
    let tasks = 8 + rng.below(50) as usize;
    let graph = random_graph(&mut rng, tasks);
    let nodes = 2 + rng.below(5) as usize;
    let mut faults = Vec::new();
    let mut dead: Vec<u64> = Vec::new();
    let count = rng.below(4);
    let any = class == FaultClass::Any;
    for _ in 0..count {
        let at = if any && rng.below(4) == 0 {
            When::After(rng.below(200) * 1_000_000)
        } else {
            When::Share((5 + rng.below(96)) as f64 / 100.0)
        };
        let node = rng.below(nodes as u64);
        // (A share is at most 100 %: the language, and so `--chaos`, reads
        // no more. A heal after the plan's end is a time.)
        let later = |rng: &mut SplitMix64, at: When| match at {
            When::Share(s) if rng.below(2) == 0 => When::Share((s + (5 + rng.below(95)) as f64 / 100.0).min(1.0)),
            When::Share(s) if rng.below(2) == 0 => When::ShareThen(s, (50 + rng.below(1500)) * 1_000_000),
            When::Share(_) => When::After((100 + rng.below(1500)) * 1_000_000),
            When::ShareThen(s, t) => When::ShareThen(s, t + (50 + rng.below(1500)) * 1_000_000),
            When::After(t) => When::After(t + (50 + rng.below(1500)) * 1_000_000),
        };
        let mut heal = None;
        let kind = match rng.below(if any { 11 } else { 7 }) {
            0 | 1 => {
                // Crash or vanish: all but one node at most, unless `Any`.
                if !any && (dead.contains(&node) || dead.len() + 1 >= nodes) {
                    continue;
                }
                dead.push(node);
                if rng.below(2) == 0 {
                    Kind::Crash(Crashed::Node(node))
                } else {
                    Kind::Vanish(node)
                }
            }
            2 | 3 => {
                let links = if rng.below(2) == 0 {
                    Links::Node(node)
                } else {
                    let side: Vec<u64> = (0..nodes as u64).filter(|_| rng.below(2) == 0).collect();
                    if side.is_empty() || side.len() == nodes {
                        Links::Node(node)
                    } else {
                        Links::Split(side)
                    }
                };
                if rng.below(2) == 0 {
                    let at = later(&mut rng, at);
                    heal = Some(Fault { at, kind: Kind::Net { links: links.clone(), cut: false } });
                }
                Kind::Net { links, cut: true }
            }
            4 => Kind::Delay {
                node: (rng.below(2) == 0).then_some(node),
                ms: rng.below(11) as f64,
                jitter: rng.below(6) as f64,
            },
            5 => Kind::Loss { node: (rng.below(2) == 0).then_some(node), rate: rng.below(21) as f64 / 100.0 },
            6 => Kind::Slow { node, factor: 1.5 + rng.below(6) as f64 / 2.0 },
            7 => {
                let other = (node + 1 + rng.below(nodes as u64 - 1)) % nodes as u64;
                Kind::Net { links: Links::Link { from: node, to: other, both: rng.below(2) == 0 }, cut: true }
            }
            8 => Kind::Slow { node, factor: f64::INFINITY },
            9 => Kind::Join(None),
            _ => {
                if rng.below(3) == 0 {
                    Kind::Crash(Crashed::All)
                } else {
                    Kind::Crash(Crashed::Master)
                }
            }
        };
        faults.push(Fault { at, kind });
        faults.extend(heal);
    }
    let survivable = faults.iter().all(|f| {
        let hang = matches!(f.kind, Kind::Slow { factor, .. } if factor.is_infinite());
        let heal = matches!(f.kind, Kind::Net { cut: false, .. });
        (heal || matches!(f.at, When::Share(_)))
            && !hang
            && !matches!(
                f.kind,
                Kind::Net { links: Links::Link { .. }, .. }
                    | Kind::Join(_)
                    | Kind::Crash(Crashed::All | Crashed::Master)
            )
    }) && dead.len() < nodes;
    GraphCase { graph, nodes, faults, survivable }
}
