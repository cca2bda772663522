//! A k-d tree of points in the plane: built by one annotated function and
//! queried by another that passes the whole tree down the recursion
//! unchanged — the shape of a program whose calls all borrow one large
//! structure (a lookup table, a graph, an index).

use rand::{Rng, SeedableRng};
use satin::divide_and_conquer;
use serde::{Deserialize, Serialize};

/// A point in the unit square.
pub type Point = [f64; 2];

/// A node of a 2-d tree: its point splits the plane on `axis`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KdTree {
    pub point: Point,
    pub axis: u8,
    pub left: Option<Box<KdTree>>,
    pub right: Option<Box<KdTree>>,
}

/// Below this many points a subtree is built sequentially.
const BUILD_CUTOFF: usize = 2048;

/// The tree of `points`, split on the median along alternating axes.
#[divide_and_conquer]
pub fn build_kdtree(points: Vec<Point>, depth: usize) -> KdTree {
    if points.len() <= BUILD_CUTOFF {
        return build_plain(points, depth);
    }
    let (axis, point, below, above) = split_at_median(points, depth);
    let left = build_kdtree(below, depth + 1);
    let right = build_kdtree(above, depth + 1);
    KdTree { point, axis, left: Some(Box::new(left)), right: Some(Box::new(right)) }
}

/// The same tree, built without the annotation.
pub fn build_plain(points: Vec<Point>, depth: usize) -> KdTree {
    let (axis, point, below, above) = split_at_median(points, depth);
    let child = |p: Vec<Point>| (!p.is_empty()).then(|| Box::new(build_plain(p, depth + 1)));
    KdTree { point, axis, left: child(below), right: child(above) }
}

/// The same tree built with `rayon::join` above the same cut-off.
pub fn build_rayon(points: Vec<Point>, depth: usize) -> KdTree {
    if points.len() <= BUILD_CUTOFF {
        return build_plain(points, depth);
    }
    let (axis, point, below, above) = split_at_median(points, depth);
    let (left, right) = rayon::join(|| build_rayon(below, depth + 1), || build_rayon(above, depth + 1));
    KdTree { point, axis, left: Some(Box::new(left)), right: Some(Box::new(right)) }
}

/// The median point along the axis of `depth` and the points on either side.
fn split_at_median(mut points: Vec<Point>, depth: usize) -> (u8, Point, Vec<Point>, Vec<Point>) {
    assert!(!points.is_empty(), "a k-d tree node needs a point");
    let axis = (depth % 2) as u8;
    let mid = points.len() / 2;
    points.select_nth_unstable_by(mid, |a, b| a[axis as usize].total_cmp(&b[axis as usize]));
    let above = points.split_off(mid + 1);
    let point = points.pop().expect("the median is there");
    (axis, point, points, above)
}

/// How many pairs (p, q) of points of `node`'s subtree and of `all`, p ≠ q,
/// lie within `r` of each other. Every call passes `all` on unchanged.
#[divide_and_conquer]
pub fn count_close(node: &KdTree, all: &KdTree, r: f64) -> u64 {
    let here = within(all, &node.point, r) - 1;
    let left = match &node.left {
        Some(l) => count_close(l, all, r),
        None => 0,
    };
    let right = match &node.right {
        Some(c) => count_close(c, all, r),
        None => 0,
    };
    here + left + right
}

/// The same count without the annotation.
pub fn count_close_plain(node: &KdTree, all: &KdTree, r: f64) -> u64 {
    let here = within(all, &node.point, r) - 1;
    let left = node.left.as_deref().map_or(0, |l| count_close_plain(l, all, r));
    let right = node.right.as_deref().map_or(0, |c| count_close_plain(c, all, r));
    here + left + right
}

/// How many points of `tree` lie within `r` of `q` (itself included).
pub fn within(tree: &KdTree, q: &Point, r: f64) -> u64 {
    let (dx, dy) = (tree.point[0] - q[0], tree.point[1] - q[1]);
    let mut n = u64::from(dx * dx + dy * dy <= r * r);
    let gap = q[tree.axis as usize] - tree.point[tree.axis as usize];
    if let Some(l) = &tree.left {
        if gap <= r {
            n += within(l, q, r);
        }
    }
    if let Some(c) = &tree.right {
        if gap >= -r {
            n += within(c, q, r);
        }
    }
    n
}

/// `n` seeded random points in the unit square (ChaCha8: the same on
/// every platform).
pub fn random_points(n: usize, seed: u64) -> Vec<Point> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    (0..n).map(|_| [rng.gen(), rng.gen()]).collect()
}

/// How many nodes the tree has.
pub fn size(tree: &KdTree) -> usize {
    1 + tree.left.as_deref().map_or(0, size) + tree.right.as_deref().map_or(0, size)
}
