//! The octree, built and walked by divide and conquer.

use satin::divide_and_conquer;
use serde::{Deserialize, Serialize};

use super::{add, norm2, pull, sub, Body, Vec3, LEAF};

/// A cube of space: the total mass and centre of mass of the bodies in
/// it, its half side, and either its bodies or its non-empty octants.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Cell {
    pub mass: f64,
    pub com: Vec3,
    pub half: f64,
    pub kind: Kind,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub enum Kind {
    Leaf(Vec<Body>),
    Inner(Vec<Cell>),
}

/// Which octant of `centre` a point is in (bit k: above on axis k).
fn octant(centre: Vec3, p: Vec3) -> usize {
    (0..3).map(|k| usize::from(p[k] >= centre[k]) << k).sum()
}

/// The centre of octant `o` of the cube at `centre` with half side `half`.
pub(crate) fn octant_centre(centre: Vec3, half: f64, o: usize) -> Vec3 {
    let q = half / 2.0;
    [0, 1, 2].map(|k| centre[k] + if o >> k & 1 == 1 { q } else { -q })
}

/// The bodies split by octant: (octant, its bodies), non-empty ones only.
pub(crate) fn split(bodies: Vec<Body>, centre: Vec3) -> Vec<(usize, Vec<Body>)> {
    let mut parts: [Vec<Body>; 8] = Default::default();
    for b in bodies {
        parts[octant(centre, b.pos)].push(b);
    }
    parts.into_iter().enumerate().filter(|(_, p)| !p.is_empty()).collect()
}

/// A leaf of `bodies`, or the bodies back if they should be split further.
pub(crate) fn leaf(bodies: Vec<Body>, half: f64) -> Result<Cell, Vec<Body>> {
    // Coincident bodies cannot be separated: stop at a tiny cube.
    if bodies.len() > LEAF && half > 1e-9 {
        return Err(bodies);
    }
    let mut mass = 0.0;
    let mut com = [0.0; 3];
    for b in &bodies {
        mass += b.mass;
        add(&mut com, b.pos.map(|x| x * b.mass));
    }
    Ok(Cell { mass, com: com.map(|x| x / mass), half, kind: Kind::Leaf(bodies) })
}

/// An inner cell over its octants.
pub(crate) fn inner(children: Vec<Cell>, half: f64) -> Cell {
    let mass: f64 = children.iter().map(|c| c.mass).sum();
    let mut com = [0.0; 3];
    for c in &children {
        add(&mut com, c.com.map(|x| x * c.mass));
    }
    Cell { mass, com: com.map(|x| x / mass), half, kind: Kind::Inner(children) }
}

/// The octree of `bodies` (non-empty) in the cube at `centre` with half
/// side `half`: the octants are built in parallel.
#[divide_and_conquer]
pub fn build(bodies: Vec<Body>, centre: Vec3, half: f64) -> Cell {
    match leaf(bodies, half) {
        Ok(cell) => cell,
        Err(bodies) => {
            let children: Vec<Cell> = split(bodies, centre)
                .into_iter()
                .map(|(o, part)| build(part, octant_centre(centre, half, o), half / 2.0))
                .collect();
            inner(children, half)
        }
    }
}

/// The accelerations of the bodies under `cell`, in the tree's order,
/// each from a walk of the whole tree `root`: the octants in parallel.
#[divide_and_conquer]
pub fn accelerations(root: &Cell, cell: &Cell, theta: f64) -> Vec<Vec3> {
    match &cell.kind {
        Kind::Leaf(bodies) => bodies.iter().map(|b| acceleration(root, b, theta)).collect(),
        Kind::Inner(children) => {
            let parts: Vec<Vec<Vec3>> = children.iter().map(|c| accelerations(root, c, theta)).collect();
            parts.concat()
        }
    }
}

/// The acceleration of `b` from the bodies under `cell`: a cell whose side
/// is less than `theta` times its distance counts as one mass at its
/// centre of mass.
pub(crate) fn acceleration(cell: &Cell, b: &Body, theta: f64) -> Vec3 {
    let d = sub(cell.com, b.pos);
    match &cell.kind {
        Kind::Leaf(bodies) => {
            let mut a = [0.0; 3];
            for o in bodies.iter().filter(|o| o.id != b.id) {
                add(&mut a, pull(o.mass, sub(o.pos, b.pos)));
            }
            a
        }
        Kind::Inner(_) if 4.0 * cell.half * cell.half < theta * theta * norm2(d) => pull(cell.mass, d),
        Kind::Inner(children) => {
            let mut a = [0.0; 3];
            for c in children {
                add(&mut a, acceleration(c, b, theta));
            }
            a
        }
    }
}

impl Cell {
    /// The bodies under this cell, in the tree's order.
    pub fn bodies(&self) -> Vec<Body> {
        let mut out = Vec::new();
        self.collect_bodies(&mut out);
        out
    }

    fn collect_bodies(&self, out: &mut Vec<Body>) {
        match &self.kind {
            Kind::Leaf(bodies) => out.extend_from_slice(bodies),
            Kind::Inner(children) => children.iter().for_each(|c| c.collect_bodies(out)),
        }
    }
}
