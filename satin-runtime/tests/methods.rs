//! Methods: `#[divide_and_conquer]` on the `impl` block and on each
//! recursive method. `&self`, `&mut self`, `self` and associated functions
//! (`Self::build(..)`) give the plain method's results and spawn.

use satin::{divide_and_conquer, Runtime};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Tree {
    value: u64,
    children: Vec<Tree>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Node {
    value: u64,
    left: Option<Box<Node>>,
    right: Option<Box<Node>>,
}

#[divide_and_conquer]
impl Tree {
    /// A tree of `fan` children per node down to `depth`.
    #[divide_and_conquer]
    fn build(depth: u32, fan: u32, value: u64) -> Tree {
        if depth == 0 {
            return Tree { value, children: Vec::new() };
        }
        let children = (0..fan).map(|k| Self::build(depth - 1, fan, value * 3 + u64::from(k))).collect();
        Self { value, children }
    }

    /// Every value, summed: the iterator form over `&self`.
    #[divide_and_conquer]
    fn total(&self) -> u64 {
        self.value + self.children.iter().map(|c| c.total()).sum::<u64>()
    }

    /// Values weighted by depth: the loop form, with an argument.
    #[divide_and_conquer]
    fn weighted(&self, depth: u64) -> u64 {
        let mut sum = self.value * depth;
        for child in &self.children {
            sum += child.weighted(depth + 1);
        }
        sum
    }

    /// Consumes the tree: `self` by value.
    #[divide_and_conquer]
    fn into_leaves(self) -> Vec<u64> {
        if self.children.is_empty() {
            return vec![self.value];
        }
        let mut leaves = Vec::new();
        for child in self.children {
            leaves.push(child.into_leaves());
        }
        leaves.concat()
    }

    /// Values on even levels (the root is level 0): methods that call
    /// each other, as a group.
    #[divide_and_conquer]
    fn even_levels(&self) -> u64 {
        self.value + self.children.iter().map(|c| c.odd_levels()).sum::<u64>()
    }

    #[divide_and_conquer]
    fn odd_levels(&self) -> u64 {
        self.children.iter().map(|c| c.even_levels()).sum::<u64>()
    }

    fn total_plain(&self) -> u64 {
        self.value + self.children.iter().map(|c| c.total_plain()).sum::<u64>()
    }
}

#[divide_and_conquer]
impl Node {
    #[divide_and_conquer]
    fn full(depth: u32) -> Node {
        if depth == 0 {
            return Node { value: 1, left: None, right: None };
        }
        let left = Node::full(depth - 1);
        let right = Node::full(depth - 1);
        Node { value: u64::from(depth), left: Some(Box::new(left)), right: Some(Box::new(right)) }
    }

    /// `&mut self`: both halves in parallel (two distinct borrows).
    #[divide_and_conquer]
    fn add(&mut self, by: u64) {
        self.value += by;
        if let (Some(l), Some(r)) = (&mut self.left, &mut self.right) {
            l.add(by);
            r.add(by);
        }
    }

    #[divide_and_conquer]
    fn sum(&self) -> u64 {
        let left = self.left.as_ref().map_or(0, |l| l.sum());
        let right = match &self.right {
            Some(r) => r.sum(),
            None => 0,
        };
        self.value + left + right
    }
}

fn runtime(workers: usize) -> Runtime {
    Runtime::builder().workers(workers).spawn_limit(usize::MAX).plain_when_alone(false).build().unwrap()
}

#[test]
fn methods_give_the_plain_results_and_spawn() {
    let plain = Tree::build(6, 3, 1);
    for workers in [1, 2, 4] {
        let rt = runtime(workers);
        let tree = rt.run(|| Tree::build(6, 3, 1));
        assert_eq!(tree, plain, "{workers} workers");
        let spawns = rt.stats().spawns;
        assert!(spawns > 0, "the associated function spawned nothing: {:?}", rt.stats());
        assert_eq!(rt.run(|| tree.total()), tree.total_plain());
        assert!(rt.stats().spawns > spawns, "`&self` spawned nothing: {:?}", rt.stats());
        let weighted: u64 = {
            fn go(t: &Tree, d: u64) -> u64 {
                t.value * d + t.children.iter().map(|c| go(c, d + 1)).sum::<u64>()
            }
            go(&tree, 1)
        };
        assert_eq!(rt.run(|| tree.weighted(1)), weighted);
        let spawns = rt.stats().spawns;
        let (even, odd) = rt.run(|| (tree.even_levels(), tree.odd_levels()));
        assert_eq!(even + odd, tree.total_plain());
        let even_plain: u64 = {
            fn go(t: &Tree, level: u32) -> u64 {
                u64::from(level & 1 == 0) * t.value + t.children.iter().map(|c| go(c, level + 1)).sum::<u64>()
            }
            go(&tree, 0)
        };
        assert_eq!(even, even_plain);
        assert!(rt.stats().spawns > spawns, "methods calling each other spawned nothing: {:?}", rt.stats());
        let leaves = rt.run(|| tree.clone().into_leaves());
        assert_eq!(leaves.len(), 3usize.pow(6));
        // The leftmost leaf: the root 1, times 3 at each of the six levels.
        assert_eq!(leaves.first(), Some(&3u64.pow(6)));
    }
}

#[test]
fn a_mut_self_method_changes_the_tree_in_place_from_every_worker() {
    for workers in [1, 2, 4] {
        let rt = runtime(workers);
        let mut node = rt.run(|| Node::full(10));
        let before = rt.run(|| node.sum());
        let spawns = rt.stats().spawns;
        rt.run(|| node.add(2));
        assert!(rt.stats().spawns > spawns, "`&mut self` spawned nothing: {:?}", rt.stats());
        // 2^11 - 1 nodes, each 2 more.
        assert_eq!(node.sum(), before + 2 * ((1 << 11) - 1), "{workers} workers");
    }
}
