//! Barnes-Hut N-body: an octree built by divide and conquer over space,
//! and accelerations computed by divide and conquer over the tree (each
//! leaf's bodies walk the whole tree, opening a cell only when it looks
//! larger than `theta` from the body). Checked against the direct O(n²)
//! sum ([`direct`]) on a Plummer sphere ([`plummer`]) with a fixed seed.
//! The same code with `rayon::join` is in [`rayon_version`], for the
//! benchmark.
//!
//! Units: G = 1, total mass 1 (Hénon units for the Plummer sphere), forces
//! softened by [`SOFTENING`].

pub mod plummer;
pub mod rayon_version;
pub mod shared;
mod tree;

use satin::divide_and_conquer;
use serde::{Deserialize, Serialize};

pub use tree::{accelerations, build, Cell, Kind};

/// Plummer softening length: the force between two bodies at distance r
/// is m / (r² + ε²)^{3/2} · r.
pub const SOFTENING: f64 = 0.01;
/// Bodies per leaf of the octree.
pub const LEAF: usize = 8;

pub type Vec3 = [f64; 3];

/// One body: where it is, how it moves, its mass, and who it is (bodies
/// come back in the tree's order).
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq)]
pub struct Body {
    pub id: u32,
    pub mass: f64,
    pub pos: Vec3,
    pub vel: Vec3,
}

pub(crate) fn sub(a: Vec3, b: Vec3) -> Vec3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

pub(crate) fn norm2(a: Vec3) -> f64 {
    a[0] * a[0] + a[1] * a[1] + a[2] * a[2]
}

/// The acceleration a mass `m` at offset `d` (from the body to the mass)
/// gives, softened.
pub(crate) fn pull(m: f64, d: Vec3) -> Vec3 {
    let r2 = norm2(d) + SOFTENING * SOFTENING;
    let f = m / (r2 * r2.sqrt());
    [f * d[0], f * d[1], f * d[2]]
}

pub(crate) fn add(a: &mut Vec3, b: Vec3) {
    a[0] += b[0];
    a[1] += b[1];
    a[2] += b[2];
}

/// The smallest cube around every body: (centre, half side).
pub fn bounding_cube(bodies: &[Body]) -> (Vec3, f64) {
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for b in bodies {
        for k in 0..3 {
            lo[k] = lo[k].min(b.pos[k]);
            hi[k] = hi[k].max(b.pos[k]);
        }
    }
    let centre = [(lo[0] + hi[0]) / 2.0, (lo[1] + hi[1]) / 2.0, (lo[2] + hi[2]) / 2.0];
    let half = (0..3).map(|k| (hi[k] - lo[k]) / 2.0).fold(0.0, f64::max);
    // A hair larger, so that no body sits on the boundary.
    (centre, half * (1.0 + 1e-9) + 1e-12)
}

/// Every body's acceleration by the direct sum over all others, in the
/// order given: the reference the tree code approximates.
pub fn direct(bodies: &[Body]) -> Vec<Vec3> {
    bodies
        .iter()
        .map(|b| {
            let mut a = [0.0; 3];
            for o in bodies.iter().filter(|o| o.id != b.id) {
                add(&mut a, pull(o.mass, sub(o.pos, b.pos)));
            }
            a
        })
        .collect()
}

/// The bodies and their accelerations (Barnes-Hut, opening angle
/// `theta`), both in the tree's order. Inside a runtime both the build and
/// the force walk run in parallel; outside, sequentially.
pub fn tree_accelerations(bodies: Vec<Body>, theta: f64) -> (Vec<Body>, Vec<Vec3>) {
    let (centre, half) = bounding_cube(&bodies);
    let root = build(bodies, centre, half);
    let acc = accelerations(&root, &root, theta);
    (root.bodies(), acc)
}

/// `steps` steps of length `dt` (kick, then drift); the bodies after, in
/// the last tree's order. One annotated call runs every step, so that in a
/// run across machines (where the program's first annotated call is the
/// run) every step is spread over the nodes.
#[divide_and_conquer]
pub fn simulate(bodies: Vec<Body>, steps: u64, dt: f64, theta: f64) -> Vec<Body> {
    let mut bodies = bodies;
    for _ in 0..steps {
        let (mut moved, acc) = tree_accelerations(bodies, theta);
        kick_and_drift(&mut moved, &acc, dt);
        bodies = moved;
    }
    bodies
}

/// One step of length `dt` for `bodies` under accelerations `acc`: the
/// velocity first (kick), then the position (drift).
pub(crate) fn kick_and_drift(bodies: &mut [Body], acc: &[Vec3], dt: f64) {
    for (b, a) in bodies.iter_mut().zip(acc) {
        for ((v, x), a) in b.vel.iter_mut().zip(&mut b.pos).zip(a) {
            *v += a * dt;
            *x += *v * dt;
        }
    }
}

/// Total kinetic energy: the example's printed answer.
pub fn kinetic_energy(bodies: &[Body]) -> f64 {
    bodies.iter().map(|b| 0.5 * b.mass * norm2(b.vel)).sum()
}

/// How far `approx` is from `exact`: (root mean square, largest) of the
/// relative error |a − e| / |e| over the bodies.
pub fn relative_errors(approx: &[Vec3], exact: &[Vec3]) -> (f64, f64) {
    let errors: Vec<f64> = approx.iter().zip(exact).map(|(a, e)| (norm2(sub(*a, *e)) / norm2(*e)).sqrt()).collect();
    let rms = (errors.iter().map(|e| e * e).sum::<f64>() / errors.len().max(1) as f64).sqrt();
    (rms, errors.iter().copied().fold(0.0, f64::max))
}
