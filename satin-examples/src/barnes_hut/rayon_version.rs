//! The same build and force walk with rayon, for the benchmark: the
//! octants of a cell go to `par_iter` (rayon's own divide and conquer over
//! `join`), everything else is the satin version's code.

use rayon::prelude::*;

use super::tree::{acceleration, inner, leaf, octant_centre, split, Cell, Kind};
use super::{bounding_cube, Body, Vec3};

/// [`super::build`] with rayon.
pub fn build(bodies: Vec<Body>, centre: Vec3, half: f64) -> Cell {
    match leaf(bodies, half) {
        Ok(cell) => cell,
        Err(bodies) => {
            let children: Vec<Cell> = split(bodies, centre)
                .into_par_iter()
                .map(|(o, part)| build(part, octant_centre(centre, half, o), half / 2.0))
                .collect();
            inner(children, half)
        }
    }
}

/// [`super::accelerations`] with rayon.
pub fn accelerations(root: &Cell, cell: &Cell, theta: f64) -> Vec<Vec3> {
    match &cell.kind {
        Kind::Leaf(bodies) => bodies.iter().map(|b| acceleration(root, b, theta)).collect(),
        Kind::Inner(children) => {
            let parts: Vec<Vec<Vec3>> = children.par_iter().map(|c| accelerations(root, c, theta)).collect();
            parts.concat()
        }
    }
}

/// [`super::tree_accelerations`] with rayon (inside a rayon pool).
pub fn tree_accelerations(bodies: Vec<Body>, theta: f64) -> (Vec<Body>, Vec<Vec3>) {
    let (centre, half) = bounding_cube(&bodies);
    let root = build(bodies, centre, half);
    let acc = accelerations(&root, &root, theta);
    (root.bodies(), acc)
}
