//! Unbalanced Tree Search (UTS; Olivier, Huan, Liu, Prins, Dinan,
//! Sadayappan, Tseng, "UTS: An Unbalanced Tree Search Benchmark", LCPC
//! 2006): count the nodes of a tree that exists only as it is generated.
//! Each node is a 20-byte SHA-1 state; a child's state is the SHA-1 of its
//! parent's and its index, and the number of children follows from the
//! state — binomially (a node has `m` children with probability `q`, or
//! none), geometrically (with a mean that depends on the depth), or first
//! one and then the other. The published sample trees T1–T5 have about 4
//! million nodes each and known sizes, which the tests check (parameters
//! and sizes from the benchmark's `sample_trees.sh`, MIT licence; the
//! generation is written here from its description).
//!
//! Written as one would: a recursive count over the children, nothing
//! else. The tree's shape is the benchmark's point: T3 is a critical
//! binomial tree of depth 1 572 under a root of 2 000 children.

use satin::divide_and_conquer;
use serde::{Deserialize, Serialize};
use sha1::{Digest, Sha1};

/// The most children a geometric node may have (the benchmark's cap).
const MAX_CHILDREN: u32 = 100;

/// How the number of children is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum TreeType {
    /// `m` children with probability `q`, else none; `b_0` at the root.
    Binomial,
    /// Geometric with a mean from the shape function.
    Geometric,
    /// Geometric above `shift × gen_mx`, binomial below.
    Hybrid,
}

/// How a geometric tree's mean branching factor changes with depth.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Shape {
    /// `b_0 (1 − d / gen_mx)`.
    Linear,
    /// `b_0 d^(−ln b_0 / ln gen_mx)`.
    ExpDec,
    /// `b_0^sin(2π d / gen_mx)`, nothing below `5 gen_mx`.
    Cyclic,
    /// `b_0` above `gen_mx`, nothing below.
    Fixed,
}

/// A tree's parameters (the benchmark's `-t -a -b -d -q -m -r -f`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Params {
    pub tree: TreeType,
    pub shape: Shape,
    /// Branching factor at the root (`-b`).
    pub b0: f64,
    /// Depth of a geometric tree (`-d`).
    pub gen_mx: u32,
    /// Probability that a binomial node has children (`-q`).
    pub q: f64,
    /// Children of a binomial node that has any (`-m`).
    pub m: u32,
    /// Seed of the root (`-r`).
    pub root_seed: i32,
    /// Where a hybrid tree turns binomial, as a fraction of `gen_mx` (`-f`).
    pub shift: f64,
}

/// The published sample trees: their parameters and sizes (nodes,
/// leaves, depth), from the benchmark's `sample_trees.sh`.
pub fn sample(name: &str) -> Option<(Params, Counts)> {
    let base = Params {
        tree: TreeType::Geometric,
        shape: Shape::Linear,
        b0: 4.0,
        gen_mx: 6,
        q: 15.0 / 64.0,
        m: 4,
        root_seed: 0,
        shift: 0.5,
    };
    let (params, nodes, leaves, depth) = match name {
        "T1" => (Params { shape: Shape::Fixed, gen_mx: 10, b0: 4.0, root_seed: 19, ..base }, 4_130_071, 3_305_118, 10),
        "T2" => {
            (Params { shape: Shape::Cyclic, gen_mx: 16, b0: 6.0, root_seed: 502, ..base }, 4_117_769, 2_342_762, 81)
        }
        "T3" => (
            Params { tree: TreeType::Binomial, b0: 2000.0, q: 0.124875, m: 8, root_seed: 42, ..base },
            4_112_897,
            3_599_034,
            1572,
        ),
        "T4" => (
            Params { tree: TreeType::Hybrid, gen_mx: 16, b0: 6.0, root_seed: 1, q: 0.234375, m: 4, ..base },
            4_132_453,
            3_108_986,
            134,
        ),
        "T5" => (Params { gen_mx: 20, b0: 4.0, root_seed: 34, ..base }, 4_147_582, 2_181_318, 20),
        _ => return None,
    };
    Some((params, Counts { nodes, leaves, depth }))
}

/// What a search counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    pub nodes: u64,
    pub leaves: u64,
    /// The deepest node's depth (the root's is 0).
    pub depth: u32,
}

impl Counts {
    fn merge(self, other: Counts) -> Counts {
        Counts {
            nodes: self.nodes + other.nodes,
            leaves: self.leaves + other.leaves,
            depth: self.depth.max(other.depth),
        }
    }
}

/// A node: its depth and its random state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Node {
    height: u32,
    state: [u8; 20],
}

impl Node {
    /// The root of a tree.
    pub fn root(params: &Params) -> Node {
        let mut seed = [0u8; 20];
        seed[16..].copy_from_slice(&params.root_seed.to_be_bytes());
        Node { height: 0, state: Sha1::digest(seed).into() }
    }

    /// Child `i`: the SHA-1 of this state and `i`.
    fn child(&self, i: u32) -> Node {
        let mut h = Sha1::new();
        h.update(self.state);
        h.update(i.to_be_bytes());
        Node { height: self.height + 1, state: h.finalize().into() }
    }

    /// This node's random number in [0, 1): its last four bytes.
    fn uniform(&self) -> f64 {
        let r = u32::from_be_bytes([self.state[16], self.state[17], self.state[18], self.state[19]]) & 0x7fff_ffff;
        f64::from(r) / 2_147_483_648.0
    }

    /// How many children this node has. (A hybrid tree's node is
    /// geometric above `shift × gen_mx`, binomial below.)
    fn children(&self, params: &Params) -> u32 {
        let geometric = match params.tree {
            TreeType::Binomial => false,
            TreeType::Geometric => true,
            TreeType::Hybrid => f64::from(self.height) < params.shift * f64::from(params.gen_mx),
        };
        if !geometric {
            if self.height == 0 {
                return params.b0.floor() as u32;
            }
            return if self.uniform() < params.q { params.m } else { 0 };
        }
        let (d, b0, mx) = (f64::from(self.height), params.b0, f64::from(params.gen_mx));
        let b = if self.height == 0 {
            b0
        } else {
            match params.shape {
                Shape::Linear => b0 * (1.0 - d / mx),
                Shape::ExpDec => b0 * d.powf(-b0.ln() / mx.ln()),
                Shape::Cyclic if d > 5.0 * mx => 0.0,
                Shape::Cyclic => b0.powf((2.0 * std::f64::consts::PI * d / mx).sin()),
                Shape::Fixed if self.height < params.gen_mx => b0,
                Shape::Fixed => 0.0,
            }
        };
        // The inverse of the geometric distribution's CDF with mean b.
        let p = 1.0 / (1.0 + b);
        let n = ((1.0 - self.uniform()).ln() / (1.0 - p).ln()).floor();
        (n.max(0.0) as u32).min(MAX_CHILDREN)
    }
}

/// Counts the tree below `node`, this node included.
#[divide_and_conquer]
pub fn search(params: &Params, node: Node) -> Counts {
    let n = node.children(params);
    let here = Counts { nodes: 1, leaves: u64::from(n == 0), depth: node.height };
    (0..n).map(|i| search(params, node.child(i))).fold(here, Counts::merge)
}

/// [`search`] without the annotation.
pub fn search_plain(params: &Params, node: Node) -> Counts {
    let n = node.children(params);
    let here = Counts { nodes: 1, leaves: u64::from(n == 0), depth: node.height };
    (0..n).map(|i| search_plain(params, node.child(i))).fold(here, Counts::merge)
}

/// [`search`] with the children in a plain `for` loop, as the
/// benchmark's C code walks them.
#[divide_and_conquer]
pub fn search_loop(params: &Params, node: Node) -> Counts {
    let n = node.children(params);
    let mut counts = Counts { nodes: 1, leaves: u64::from(n == 0), depth: node.height };
    for i in 0..n {
        let sub = search_loop(params, node.child(i));
        counts = counts.merge(sub);
    }
    counts
}

/// [`search_loop`] without the annotation.
pub fn search_loop_plain(params: &Params, node: Node) -> Counts {
    let n = node.children(params);
    let mut counts = Counts { nodes: 1, leaves: u64::from(n == 0), depth: node.height };
    for i in 0..n {
        let sub = search_loop_plain(params, node.child(i));
        counts = counts.merge(sub);
    }
    counts
}

/// [`search`] with `rayon`: each node's children as a parallel iterator.
pub fn search_rayon(params: &Params, node: Node) -> Counts {
    use rayon::prelude::*;
    let n = node.children(params);
    let here = Counts { nodes: 1, leaves: u64::from(n == 0), depth: node.height };
    (0..n)
        .into_par_iter()
        .map(|i| search_rayon(params, node.child(i)))
        .reduce(Counts::default, Counts::merge)
        .merge(here)
}
