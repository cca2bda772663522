//! The bodies as a shared object, as Satin's Barnes-Hut keeps them: each
//! step the master publishes the bodies ([`Snapshot`], a newer step
//! replaces an older one); a job carries only (step, range of bodies), and
//! each node builds the step's tree once from its replica. A job that
//! reaches a node before that step's bodies waits for them with a guard.
//! Jobs are tiny on the wire, where the tree version sends the tree with
//! every job that leaves its node. The numbers are the same to the last
//! bit: the same tree, the same walks.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use satin::divide_and_conquer;
use satin::shared::{Lattice, Shared};
use serde::{Deserialize, Serialize};

use super::tree::{acceleration, inner, leaf, octant_centre, split, Cell};
use super::{bounding_cube, Body, Vec3};

/// The bodies of one step (step 0, no bodies: nothing published yet).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    pub step: u64,
    pub bodies: Vec<Body>,
}

/// A later step replaces an earlier one.
impl Lattice for Snapshot {
    fn join(&mut self, other: &Self) -> bool {
        if other.step > self.step {
            *self = other.clone();
            true
        } else {
            false
        }
    }
}

/// Bodies per job of [`accelerations_of`].
const RANGE: u32 = 128;
/// How long a job waits for its step's bodies before it fails.
const GUARD_TIMEOUT: Duration = Duration::from_secs(30);

/// The tree of one step, built once per process: (step, tree, its bodies
/// in tree order).
type Built = (u64, Arc<Cell>, Arc<Vec<Body>>);
static TREE: Mutex<Option<Built>> = Mutex::new(None);

fn build_plain(bodies: Vec<Body>, centre: Vec3, half: f64) -> Cell {
    match leaf(bodies, half) {
        Ok(cell) => cell,
        Err(bodies) => {
            let children = split(bodies, centre)
                .into_iter()
                .map(|(o, part)| build_plain(part, octant_centre(centre, half, o), half / 2.0))
                .collect();
            inner(children, half)
        }
    }
}

/// The tree of `step` on this node, from the shared bodies (waiting for
/// them if this node has not received that step yet).
fn tree_of(bodies: &Shared<Snapshot>, step: u64) -> (Arc<Cell>, Arc<Vec<Body>>) {
    let mut cached = TREE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((s, tree, ordered)) = &*cached {
        if *s == step {
            return (Arc::clone(tree), Arc::clone(ordered));
        }
    }
    assert!(
        bodies.guard(|s| s.step >= step, GUARD_TIMEOUT),
        "the bodies of step {step} did not reach this node within {GUARD_TIMEOUT:?}"
    );
    let snapshot = bodies.get();
    assert_eq!(snapshot.step, step, "a job of an older step outlived it");
    let (centre, half) = bounding_cube(&snapshot.bodies);
    let tree = Arc::new(build_plain(snapshot.bodies, centre, half));
    let ordered = Arc::new(tree.bodies());
    *cached = Some((step, Arc::clone(&tree), Arc::clone(&ordered)));
    (tree, ordered)
}

/// The accelerations of bodies `lo..hi` (in the order of step `step`'s
/// tree), by halves of the range.
#[divide_and_conquer]
pub fn accelerations_of(bodies: &Shared<Snapshot>, step: u64, lo: u32, hi: u32, theta: f64) -> Vec<Vec3> {
    if hi - lo <= RANGE {
        let (tree, ordered) = tree_of(bodies, step);
        return ordered[lo as usize..hi as usize].iter().map(|b| acceleration(&tree, b, theta)).collect();
    }
    let mid = lo + (hi - lo) / 2;
    let left = accelerations_of(bodies, step, lo, mid, theta);
    let right = accelerations_of(bodies, step, mid, hi, theta);
    [left, right].concat()
}

/// [`super::simulate`] with the bodies shared: the same result. One
/// annotated call runs every step, so that in a run across machines (where
/// the program's first annotated call is the run) every step is spread
/// over the nodes.
#[divide_and_conquer]
pub fn simulate(bodies: Vec<Body>, steps: u64, dt: f64, theta: f64) -> Vec<Body> {
    let shared = Shared::new("barnes_hut bodies", Snapshot::default());
    let mut bodies = bodies;
    for step in 1..=steps {
        shared.update(Snapshot { step, bodies });
        let (_, ordered) = tree_of(&shared, step);
        let acc = accelerations_of(&shared, step, 0, ordered.len() as u32, theta);
        let mut moved = ordered.to_vec();
        super::kick_and_drift(&mut moved, &acc, dt);
        bodies = moved;
    }
    bodies
}
