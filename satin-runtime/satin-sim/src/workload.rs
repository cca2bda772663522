//! Job trees the simulator executes: the shape of the computation, the cost
//! of every leaf, and the value each leaf contributes to the answer.

use satin_proto::JobKey;
use satin_proto::SplitMix64;

/// Virtual nanoseconds.
pub type Nanos = u64;

/// Built-in tree shapes.
#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    /// fib(n): a node k has children k-1 and k-2; k < 2 are leaves.
    Fib {
        /// The root's argument.
        n: u32,
    },
    /// Uneven binary tree over `leaves` leaves: each split puts a uniform
    /// 20–80 % of the leaves left (like branch and bound).
    Uneven {
        /// Leaves in the tree.
        leaves: u32,
    },
    /// A root with `leaves` leaf children (master-worker).
    Flat {
        /// Leaves in the tree.
        leaves: u32,
    },
}

/// Leaf cost distribution around a mean.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Cost {
    /// Every leaf costs the mean.
    Constant,
    /// Exponential: many cheap leaves, a few expensive ones.
    Exponential,
}

/// A job tree in compressed form: node 0 is the root.
pub struct Tree {
    first_child: Vec<u32>,
    child_count: Vec<u32>,
    children: Vec<u32>,
    leaf_cost: Vec<Nanos>,
    leaf_value: Vec<u64>,
    leaves: u64,
    answer: u64,
}

impl Tree {
    /// The tree of `shape`, leaf costs drawn from `seed` around `mean_leaf_cost`.
    pub fn build(shape: &Shape, mean_leaf_cost: Nanos, cost: Cost, seed: u64) -> Tree {
        let mut rng = SplitMix64::new(seed ^ 0x7EE5);
        let mut t = Tree {
            first_child: vec![],
            child_count: vec![],
            children: vec![],
            leaf_cost: vec![],
            leaf_value: vec![],
            leaves: 0,
            answer: 0,
        };
        // (node index, shape parameter) pending expansion, breadth first.
        let root_param = match shape {
            Shape::Fib { n } => *n as u64,
            Shape::Uneven { leaves } | Shape::Flat { leaves } => (*leaves).max(1) as u64,
        };
        t.push_node();
        let mut queue = std::collections::VecDeque::from([(0u32, root_param, true)]);
        while let Some((node, param, is_root)) = queue.pop_front() {
            let kids: Vec<u64> = match shape {
                Shape::Fib { .. } if param >= 2 => vec![param - 1, param - 2],
                Shape::Uneven { .. } if param >= 2 => {
                    let left = ((param as f64) * (0.2 + 0.6 * rng.unit())).round() as u64;
                    let left = left.clamp(1, param - 1);
                    vec![left, param - left]
                }
                Shape::Flat { .. } if is_root && param >= 2 => vec![1; param as usize],
                _ => vec![],
            };
            if kids.is_empty() {
                let c = match cost {
                    Cost::Constant => mean_leaf_cost,
                    Cost::Exponential => ((-(1.0 - rng.unit()).ln()) * mean_leaf_cost as f64) as Nanos,
                };
                t.leaf_cost[node as usize] = c.max(1);
                let v = rng.next_u64() % 1000;
                t.leaf_value[node as usize] = v;
                t.leaves += 1;
                t.answer = t.answer.wrapping_add(v);
                continue;
            }
            t.first_child[node as usize] = t.children.len() as u32;
            t.child_count[node as usize] = kids.len() as u32;
            for k in kids {
                let child = t.push_node();
                t.children.push(child);
                queue.push_back((child, k, false));
            }
        }
        t
    }

    fn push_node(&mut self) -> u32 {
        self.first_child.push(0);
        self.child_count.push(0);
        self.leaf_cost.push(0);
        self.leaf_value.push(0);
        (self.first_child.len() - 1) as u32
    }

    /// Jobs (tree nodes) in the tree.
    pub fn jobs(&self) -> usize {
        self.first_child.len()
    }

    /// Leaves in the tree.
    pub fn leaves(&self) -> u64 {
        self.leaves
    }

    /// The answer of a fault-free run: the sum of all leaf values.
    pub fn answer(&self) -> u64 {
        self.answer
    }

    /// The children of tree node `node`.
    pub fn children(&self, node: u32) -> &[u32] {
        let (f, c) = (self.first_child[node as usize] as usize, self.child_count[node as usize] as usize);
        &self.children[f..f + c]
    }

    /// Whether tree node `node` is a leaf.
    pub fn is_leaf(&self, node: u32) -> bool {
        self.child_count[node as usize] == 0
    }

    /// What leaf `node` costs, nanoseconds.
    pub fn leaf_cost(&self, node: u32) -> Nanos {
        self.leaf_cost[node as usize]
    }

    /// The value leaf `node` returns.
    pub fn leaf_value(&self, node: u32) -> u64 {
        self.leaf_value[node as usize]
    }

    /// Total leaf work: the run time on one node with no overheads.
    pub fn total_work(&self) -> Nanos {
        self.leaf_cost.iter().sum()
    }
}

/// The key of tree node `node`: its index, so the simulator hashes nothing.
pub fn key_of(node: u32) -> JobKey {
    let mut k = [0u8; 32];
    k[..4].copy_from_slice(&node.to_le_bytes());
    k[31] = 0x51; // marks simulated keys apart from blake3 keys in logs
    JobKey(k)
}

/// The tree node a simulated key names (see `key_of`).
pub fn node_of(key: &JobKey) -> u32 {
    u32::from_le_bytes([key.0[0], key.0[1], key.0[2], key.0[3]])
}
