//! The fault language of Satin: one grammar for the simulator's fault
//! schedules and for `--chaos` on real processes, so that a schedule a
//! failing simulator seed prints runs on real processes unchanged (as far
//! as they allow: each reader refuses, in words, what it cannot do).
//!
//! A schedule is a `;`-separated list of faults, each `KIND:key=value,…`:
//!
//! | fault | what |
//! |---|---|
//! | `crash:node=N,at=T` (or `kill:`) | node N's process dies; `node=all` (or `crash-all:at=T`): every node's |
//! | `vanish:node=N,at=T` | node N dies and nobody is told (found only by the failure detector) |
//! | `crash-cluster:cluster=C,at=T`, `crash-master:at=T` | every node of a cluster; whichever node leads then |
//! | `leave:node=N,at=T` | node N leaves at once, handing over what it finished (a real node: an order from its supervisor) |
//! | `drain:node=N,at=T` | node N finishes what it runs, then leaves (a real node: one SIGTERM) |
//! | `join:at=T[,cluster=C]` | one more node joins |
//! | `suspend:at=T[,node=N]` | the run is suspended (SIGUSR1), to resume from its checkpoint |
//! | `corrupt:at=T` | one bit of the checkpoint file flips |
//! | `slow:node=N,factor=F,at=T[,for=D]` | node N's jobs take F times as long (F = 1: full speed again) |
//! | `hang:node=N,at=T` | node N's jobs stop; it still answers |
//! | `fail:node=N,rate=P[,at=T][,for=D]` | jobs node N steals fail with probability P |
//! | `fail-running:node=N,at=T`, `kill-jobs:node=N,at=T` | the jobs N runs for others fail now; vanish without a word |
//! | `partition:node=N,at=T[,for=D]` | node N is cut off from all others |
//! | `cut:A-B,at=T[,for=D]` | the link A–B is cut both ways (`A>B`: only A's packets to B) |
//! | `split:nodes=A+B+…,at=T[,for=D]` | every link between those nodes and the others is cut |
//! | `heal:node=N` / `heal:A-B` / `heal:nodes=A+B`, `at=T` | a partition, cut or split ends |
//! | `loss:P[,node=N][,at=T][,for=D]` | each packet is lost with probability P (`30%` too) |
//! | `delay:MS[,jitter=MS][,node=N][,at=T][,for=D]` | each packet waits MS ms plus up to the jitter |
//!
//! `T` is a time since the start (`2s`, `500ms`) or a share of the run
//! (`50%`: of the leaves in the simulator, of a calibration run's time for
//! `--chaos`); `D` is a duration. Nodes are numbered in start order; a
//! joiner takes the next number. `fail`, `loss` and `delay` start at 0
//! without `at=`. [`Fault`]'s `Display` writes the same language back
//! ([`to_spec`] a whole schedule), so `parse(to_spec(s)) == s`. These
//! types are the only ones: the simulator and `--chaos` both hold them.

mod display;
mod parse;

pub use display::to_spec;
pub use parse::parse;

/// Nanoseconds.
pub type Nanos = u64;

/// When a fault strikes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum When {
    /// This long after the start.
    After(Nanos),
    /// At this share of the run (0 to 1).
    Share(f64),
    /// This long after a share of the run (`at=50%+200ms`; the end of a
    /// lasting fault that starts at a share, `at=50%,for=200ms`).
    ShareThen(f64, Nanos),
}

/// Which nodes a crash takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Crashed {
    /// One node, by its number.
    Node(u64),
    /// Every node.
    All,
    /// Every node of a cluster.
    Cluster(u32),
    /// Whichever node leads the run at that moment.
    Master,
}

/// A link, or a set of links, that a network fault cuts or heals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Links {
    /// Every link of one node.
    Node(u64),
    /// The link from `from` to `to` (and back, with `both`).
    Link {
        /// The sending end.
        from: u64,
        /// The receiving end.
        to: u64,
        /// Both directions.
        both: bool,
    },
    /// Every link between these nodes and the others.
    Split(Vec<u64>),
}

/// What a fault does.
#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    /// Nodes die; the others are told (a supervisor sees the process end).
    Crash(Crashed),
    /// A node dies and nobody is told.
    Vanish(u64),
    /// A node leaves at once, handing over what it finished.
    Leave(u64),
    /// A node finishes what it runs, then leaves.
    Drain(u64),
    /// One more node joins (in this cluster, if given).
    Join(Option<u32>),
    /// The run is suspended (through this node, if given).
    Suspend(Option<u64>),
    /// One bit of the checkpoint file flips.
    Corrupt,
    /// A node's jobs take `factor` times as long (infinite: hung).
    Slow {
        /// The node.
        node: u64,
        /// How many times as long (1: full speed).
        factor: f64,
    },
    /// Jobs a node steals fail with probability `rate` (0: none again).
    Fail {
        /// The node.
        node: u64,
        /// The probability.
        rate: f64,
    },
    /// The jobs a node runs for others fail now.
    FailRunning(u64),
    /// The jobs a node runs for others vanish now, without a word.
    KillJobs(u64),
    /// Links are cut (`cut`) or heal.
    Net {
        /// Which links.
        links: Links,
        /// Cut (`true`) or healed.
        cut: bool,
    },
    /// Each packet (of `node`, or every node's) is lost with probability `rate`.
    Loss {
        /// The node whose packets (`None`: every node's).
        node: Option<u64>,
        /// The probability (0: none again).
        rate: f64,
    },
    /// Each packet (of `node`, or every node's) waits `ms` plus up to `jitter` ms.
    Delay {
        /// The node whose packets (`None`: every node's).
        node: Option<u64>,
        /// Milliseconds every packet waits.
        ms: f64,
        /// Up to this many more, at random.
        jitter: f64,
    },
}

impl Kind {
    /// Node `node`'s process dies (`crash:node=N`).
    pub fn crash(node: u64) -> Kind {
        Kind::Crash(Crashed::Node(node))
    }

    /// Node `node`'s jobs stop while it still answers (`hang:node=N`: a
    /// slowness without end).
    pub fn hang(node: u64) -> Kind {
        Kind::Slow { node, factor: f64::INFINITY }
    }

    /// Whether this is a fault of the network (links cut, packets lost or
    /// delayed), rather than of a node.
    pub fn is_network(&self) -> bool {
        matches!(self, Kind::Net { .. } | Kind::Loss { .. } | Kind::Delay { .. })
    }

    /// The fault that ends this one (`for=`), if it lasts.
    pub fn undo(&self) -> Option<Kind> {
        Some(match self {
            Kind::Slow { node, .. } => Kind::Slow { node: *node, factor: 1.0 },
            Kind::Fail { node, .. } => Kind::Fail { node: *node, rate: 0.0 },
            Kind::Net { links, .. } => Kind::Net { links: links.clone(), cut: false },
            Kind::Loss { node, .. } => Kind::Loss { node: *node, rate: 0.0 },
            Kind::Delay { node, .. } => Kind::Delay { node: *node, ms: 0.0, jitter: 0.0 },
            _ => return None,
        })
    }

    /// The nodes this fault names.
    pub fn nodes(&self) -> Vec<u64> {
        match self {
            Kind::Crash(Crashed::Node(n))
            | Kind::Vanish(n)
            | Kind::Leave(n)
            | Kind::Drain(n)
            | Kind::Suspend(Some(n))
            | Kind::Slow { node: n, .. }
            | Kind::Fail { node: n, .. }
            | Kind::FailRunning(n)
            | Kind::KillJobs(n)
            | Kind::Loss { node: Some(n), .. }
            | Kind::Delay { node: Some(n), .. } => vec![*n],
            Kind::Net { links: Links::Node(n), .. } => vec![*n],
            Kind::Net { links: Links::Link { from, to, .. }, .. } => vec![*from, *to],
            Kind::Net { links: Links::Split(side), .. } => side.clone(),
            _ => Vec::new(),
        }
    }
}

/// One fault of a schedule: what, and when.
#[derive(Clone, Debug, PartialEq)]
pub struct Fault {
    /// When it strikes.
    pub at: When,
    /// What it does.
    pub kind: Kind,
}

#[cfg(test)]
mod tests;
