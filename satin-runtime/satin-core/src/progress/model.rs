//! The estimate itself: the top levels of the call tree as they unfold,
//! and the share of the tree that finished subtrees cover.
//!
//! Nobody knows a divide-and-conquer tree's size in advance, so the
//! estimate weighs calls by their place: the root is the whole tree, and a
//! call's children share its weight equally. A finished call covers its
//! whole weight; an unfinished one covers what its children cover, over
//! the number of children it will have — those seen so far, or, if more,
//! the mean number that finished calls at its depth (or the nearest depth)
//! had, or two before any has finished. Below the tracked levels the
//! calls of the first untracked level are counted (started, finished) for
//! their parent, without their subtrees.
//!
//! Equal shares are exact for balanced trees and wrong for skewed ones (an
//! early child that holds most of the work makes the estimate run ahead,
//! then stall); branch and bound, whose later subtrees are pruned by
//! what earlier ones found, makes it lag. `docs/guide.md` gives measured
//! figures.

use std::collections::HashMap;

/// A tracked call's id, unique in its process (`0`: none — the root's
/// parent).
pub type FrameId = u64;

#[derive(Debug, Clone)]
struct Frame {
    parent: FrameId,
    depth: u32,
    children: Vec<FrameId>,
    /// Children below the tracked levels (too short to track one by one):
    /// how many started, and finished.
    untracked: (u64, u64),
    finished: bool,
}

/// The tracked top of one run's call tree.
#[derive(Debug, Default, Clone)]
pub struct TreeModel {
    frames: HashMap<FrameId, Frame>,
    roots: Vec<FrameId>,
    /// Per depth: finished calls that had tracked children, and how many
    /// children they had in all.
    branching: Vec<(u64, u64)>,
}

/// At most this many calls are tracked; deeper calls beyond it are not
/// (the estimate needs the top levels only, and stays cheap).
pub const MAX_FRAMES: usize = 100_000;

impl TreeModel {
    /// Whether another call can be tracked.
    pub fn has_room(&self) -> bool {
        self.frames.len() < MAX_FRAMES
    }

    /// How many calls are tracked.
    pub fn len(&self) -> usize {
        self.frames.len()
    }

    /// Whether nothing is tracked yet.
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// Call `id` started at `depth` under `parent`. A parent not tracked
    /// here makes it a root — the run's root (depth 0), or the first job
    /// a node got from another; a call under an untracked parent anywhere
    /// else is left out (its place is unknown).
    pub fn started(&mut self, id: FrameId, parent: FrameId, depth: u32) {
        if self.frames.contains_key(&id) {
            return;
        }
        let frame = Frame { parent, depth, children: Vec::new(), untracked: (0, 0), finished: false };
        match self.frames.get_mut(&parent) {
            Some(p) => p.children.push(id),
            None if depth == 0 || self.roots.is_empty() => self.roots.push(id),
            None => return,
        }
        self.frames.insert(id, frame);
    }

    /// A call under `parent` too short to track started (`done` false) or
    /// finished (`done` true).
    pub fn untracked(&mut self, parent: FrameId, done: bool) {
        if let Some(p) = self.frames.get_mut(&parent) {
            if done {
                p.untracked.1 += 1;
            } else {
                p.untracked.0 += 1;
            }
        }
    }

    /// Call `id` finished: its whole subtree is done.
    pub fn finished(&mut self, id: FrameId) {
        let Some(f) = self.frames.get_mut(&id) else { return };
        if f.finished {
            return;
        }
        f.finished = true;
        let (depth, kids) = (f.depth as usize, f.children.len() as u64 + f.untracked.0);
        if kids > 0 {
            if self.branching.len() <= depth {
                self.branching.resize(depth + 1, (0, 0));
            }
            self.branching[depth].0 += 1;
            self.branching[depth].1 += kids;
        }
    }

    /// Call `id` will not finish here (its job went back to be run
    /// again, or was aborted): it is forgotten.
    pub fn abandoned(&mut self, id: FrameId) {
        let Some(f) = self.frames.remove(&id) else { return };
        match self.frames.get_mut(&f.parent) {
            Some(p) => p.children.retain(|&c| c != id),
            None => self.roots.retain(|&r| r != id),
        }
        let mut stack = f.children;
        while let Some(c) = stack.pop() {
            if let Some(g) = self.frames.remove(&c) {
                stack.extend(g.children);
            }
        }
    }

    /// The mean number of children finished calls at `depth` had, if any
    /// finished with tracked children.
    fn mean_children(&self, depth: u32) -> Option<f64> {
        let &(calls, kids) = self.branching.get(depth as usize)?;
        (calls > 0).then(|| kids as f64 / calls as f64)
    }

    /// How many children an unfinished call at `depth` with `seen` so far
    /// is expected to have: its depth's mean, else the nearest depth's (a
    /// recursion branches alike at neighbouring levels), else two (a call
    /// that divides makes at least two calls).
    fn expected_children(&self, depth: u32, seen: usize) -> f64 {
        let nearest = (0..self.branching.len() as u32)
            .filter_map(|d| self.mean_children(d).map(|m| (d.abs_diff(depth), m)))
            .min_by_key(|&(distance, _)| distance)
            .map(|(_, m)| m);
        match nearest {
            Some(m) => m.max(seen as f64),
            None => seen.max(2) as f64,
        }
    }

    /// The share of the tree done, from 0 to 1: what finished subtrees
    /// cover, weighted by their place (see the module documentation).
    /// Several roots (jobs from other nodes) share the tree equally.
    pub fn fraction(&self) -> f64 {
        if self.roots.is_empty() {
            return 0.0;
        }
        let total: f64 = self.roots.iter().map(|&r| self.covered(r)).sum();
        (total / self.roots.len() as f64).clamp(0.0, 1.0)
    }

    /// The share of `id`'s subtree that is done. Iterative: trees may be
    /// deep (a skewed recursion tracked all the way down).
    fn covered(&self, id: FrameId) -> f64 {
        // Post-order over the unfinished frames: (frame, children done).
        let mut done: HashMap<FrameId, f64> = HashMap::new();
        let mut stack = vec![(id, false)];
        while let Some((f, expanded)) = stack.pop() {
            let Some(frame) = self.frames.get(&f) else {
                done.insert(f, 0.0);
                continue;
            };
            if frame.finished {
                done.insert(f, 1.0);
                continue;
            }
            if !expanded {
                stack.push((f, true));
                stack.extend(frame.children.iter().map(|&c| (c, false)));
                continue;
            }
            let seen = frame.children.len() + frame.untracked.0 as usize;
            let expected = self.expected_children(frame.depth, seen);
            let share = if expected > 0.0 {
                let tracked: f64 = frame.children.iter().map(|c| done.get(c).copied().unwrap_or(0.0)).sum();
                (tracked + frame.untracked.1 as f64) / expected
            } else {
                0.0
            };
            done.insert(f, share);
        }
        done.get(&id).copied().unwrap_or(0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a complete binary tree of `depth` levels depth-first, checking
    /// the estimate after each finished leaf against the true share.
    #[test]
    fn a_balanced_tree_is_estimated_exactly_once_each_level_is_known() {
        let mut m = TreeModel::default();
        let mut next = 1;
        let leaves = 1u64 << 6;
        let mut finished_leaves = 0u64;
        let mut worst: f64 = 0.0;
        fn walk(
            m: &mut TreeModel,
            next: &mut u64,
            parent: u64,
            depth: u32,
            max: u32,
            on_leaf: &mut dyn FnMut(&TreeModel),
        ) {
            let id = *next;
            *next += 1;
            m.started(id, parent, depth);
            if depth < max {
                walk(m, next, id, depth + 1, max, on_leaf);
                walk(m, next, id, depth + 1, max, on_leaf);
            }
            m.finished(id);
            if depth == max {
                on_leaf(m);
            }
        }
        walk(&mut m, &mut next, 0, 0, 6, &mut |m| {
            finished_leaves += 1;
            let truth = finished_leaves as f64 / leaves as f64;
            worst = worst.max((m.fraction() - truth).abs());
        });
        assert_eq!(m.fraction(), 1.0);
        // Before any call with children finished, each is taken to have
        // two; then depths learn from each other: exact for a complete
        // binary tree.
        assert!(worst < 1e-9, "worst error {worst}");
    }

    #[test]
    fn depths_learn_their_branching_from_finished_calls() {
        let mut m = TreeModel::default();
        m.started(1, 0, 0);
        for c in 2..=5 {
            m.started(c, 1, 1);
        }
        // A finished sibling subtree at depth 1 with 4 children teaches
        // the depth's branching to the unfinished one.
        for g in 10..14 {
            m.started(g, 2, 2);
            m.finished(g);
        }
        m.finished(2);
        m.started(20, 3, 2);
        m.finished(20);
        // Root: 4 children, one done (1/4), one with 1 of 4 expected done.
        let expected = (1.0 + 0.25) / 4.0;
        assert!((m.fraction() - expected).abs() < 1e-9, "{}", m.fraction());
    }

    #[test]
    fn untracked_children_count_and_strays_are_left_out() {
        let mut m = TreeModel::default();
        m.started(1, 0, 0);
        for _ in 0..4 {
            m.untracked(1, false);
        }
        m.untracked(1, true);
        assert_eq!(m.fraction(), 0.25, "one of four short children done");
        m.started(9, 77, 3);
        assert_eq!(m.len(), 1, "a call whose parent is not tracked has no known place");
    }

    #[test]
    fn an_abandoned_call_and_its_subtree_are_forgotten() {
        let mut m = TreeModel::default();
        m.started(1, 0, 0);
        m.started(2, 1, 1);
        m.started(3, 1, 1);
        m.started(4, 3, 2);
        m.finished(2);
        m.abandoned(3);
        assert_eq!(m.len(), 2);
        // Child 2 is the only one known, finished; the root has not
        // finished, and is taken to make two calls.
        assert_eq!(m.fraction(), 0.5);
        m.started(5, 1, 1);
        m.started(6, 1, 1);
        assert!((m.fraction() - 1.0 / 3.0).abs() < 1e-9, "three seen: {}", m.fraction());
    }
}
