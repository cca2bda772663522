//! What one run of the campaign is: drawn from its seed alone, so that a
//! failing seed replays the same run.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A program and its arguments (the answer is its last stdout line).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Workload {
    /// The example binary.
    pub bin: &'static str,
    /// Its arguments.
    pub args: Vec<String>,
}

/// How the nodes are started.
#[derive(Clone, Debug, PartialEq)]
pub enum Layout {
    /// `--local-nodes N --chaos SPEC`: the supervisor starts them and
    /// applies the faults.
    Supervised {
        /// The `--chaos` schedule.
        chaos: String,
        /// It holds a suspend or the loss of every node: the run goes on
        /// from a checkpoint file with the same command.
        resumes: bool,
        /// It holds `fail`: jobs are retried.
        retries: bool,
    },
    /// One `--listen` and the others `--join` it, each its own process;
    /// `kills`: (joiner, milliseconds after the last start) killed with
    /// SIGKILL from outside.
    ByHand {
        /// Nodes killed (0: the listener), and when.
        kills: Vec<(u32, u64)>,
    },
}

/// One run: a workload on `nodes` nodes laid out as `layout`.
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    /// The seed it was drawn from.
    pub seed: u64,
    /// What runs.
    pub workload: Workload,
    /// How many nodes.
    pub nodes: u32,
    /// How they start and fail.
    pub layout: Layout,
}

impl std::fmt::Display for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {} on {} nodes, ", self.workload.bin, self.workload.args.join(" "), self.nodes)?;
        match &self.layout {
            Layout::Supervised { chaos, .. } => write!(f, "--chaos '{chaos}'"),
            Layout::ByHand { kills } if kills.is_empty() => write!(f, "by hand, no kill"),
            Layout::ByHand { kills } => {
                let k: Vec<String> = kills.iter().map(|(n, ms)| format!("node {n} at {ms} ms")).collect();
                write!(f, "by hand, SIGKILL {}", k.join(", "))
            }
        }
    }
}

fn workload(rng: &mut ChaCha8Rng) -> Workload {
    let s = |v: &[&str]| v.iter().map(|a| a.to_string()).collect();
    match rng.gen_range(0..4) {
        0 => Workload { bin: "nqueens", args: s(&[["13", "14"][rng.gen_range(0..2)]]) },
        1 => Workload { bin: "mergesort", args: s(&[["500000", "1000000"][rng.gen_range(0..2)]]) },
        2 => Workload {
            bin: "barnes_hut",
            args: s(&["--bodies", ["10000", "20000"][rng.gen_range(0..2)], "--steps", "2"]),
        },
        _ => Workload { bin: "raytracer", args: s(&["--width", "640", "--height", "480", "--samples", "2"]) },
    }
}

/// A share of the run, as the fault language writes it.
fn share(rng: &mut ChaCha8Rng) -> String {
    format!("{}%", rng.gen_range(2..95))
}

fn lasting(rng: &mut ChaCha8Rng) -> String {
    format!("{}ms", rng.gen_range(50..1500))
}

/// A schedule as it is drawn: its faults, and what they ask of the run.
#[derive(Default)]
struct Schedule {
    faults: Vec<String>,
    /// Nodes crashed or gone so far (none is named twice, and one node
    /// at least is never named by a death).
    deaths: Vec<u32>,
    /// The run may be interrupted (a suspend, every node killed): it is
    /// run again with its checkpoint.
    resumes: bool,
    /// Jobs fail on purpose: the run allows retries.
    retries: bool,
}

impl Schedule {
    /// Draws one fault of the language on `n` nodes, if the draw allows
    /// one here.
    fn draw_fault(&mut self, rng: &mut ChaCha8Rng, n: u32) {
        let node = rng.gen_range(0..n);
        let alive = !self.deaths.contains(&node);
        // Deaths leave two nodes at least (one with a network fault in the
        // schedule could otherwise be the only one on its side).
        let may_die = alive && self.deaths.len() + 3 <= n as usize;
        let at = share(rng);
        let fault = match rng.gen_range(0..15) {
            0 | 1 if may_die => {
                self.deaths.push(node);
                format!("kill:node={node},at={at}")
            }
            2 if may_die => {
                self.deaths.push(node);
                format!("leave:node={node},at={at}")
            }
            3 if may_die && n >= 3 => {
                self.deaths.push(node);
                format!("vanish:node={node},at={at}")
            }
            4 => format!("join:at={at}"),
            5 => format!("slow:node={node},factor={},at={at},for={}", rng.gen_range(2..10), lasting(rng)),
            6 if alive => format!("hang:node={node},at={at}"),
            7 => {
                self.retries = true;
                format!("fail:node={node},rate=0.{}", rng.gen_range(1..6))
            }
            8 => format!("partition:node={node},at={at},for={}", lasting(rng)),
            9 => {
                let other = (node + 1 + rng.gen_range(0..n - 1)) % n;
                let arrow = if rng.gen_bool(0.5) { "-" } else { ">" };
                format!("cut:{node}{arrow}{other},at={at},for={}", lasting(rng))
            }
            10 if n >= 3 => format!("split:nodes={node},at={at},for={}", lasting(rng)),
            11 => format!("loss:0.{:02},at={at},for={}", rng.gen_range(2..20), lasting(rng)),
            12 => {
                format!("delay:{},jitter={},at={at},for={}", rng.gen_range(1..20), rng.gen_range(0..10), lasting(rng))
            }
            13 => {
                self.resumes = true;
                format!("suspend:at={at}")
            }
            14 if self.deaths.is_empty() => {
                self.resumes = true;
                self.deaths.extend(0..n);
                format!("kill:node=all,at={at}")
            }
            _ => return,
        };
        self.faults.push(fault);
    }
}

/// The run of `seed`.
pub fn draw(seed: u64) -> Run {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let workload = workload(&mut rng);
    let nodes = rng.gen_range(3..=5);
    let layout = if rng.gen_range(0..5) == 0 {
        // By hand, with `--expect-nodes`: any one node (the listener
        // included) killed from outside, from its first millisecond on.
        let kills = match rng.gen_range(0..3) {
            0 => Vec::new(),
            _ => vec![(rng.gen_range(0..nodes), rng.gen_range(1..1500))],
        };
        Layout::ByHand { kills }
    } else {
        let mut schedule = Schedule::default();
        while schedule.faults.is_empty() {
            for _ in 0..rng.gen_range(1..=3) {
                schedule.draw_fault(&mut rng, nodes);
            }
        }
        Layout::Supervised { chaos: schedule.faults.join(";"), resumes: schedule.resumes, retries: schedule.retries }
    };
    Run { seed, workload, nodes, layout }
}
