//! A Plummer sphere (Aarseth, Hénon and Wielen, A&A 37, 1974): radii from
//! the cumulative mass profile, speeds by rejection from the distribution
//! function, both isotropic; scaled to Hénon units (G = M = 1, total
//! energy −1/4). A fixed seed makes the same bodies everywhere.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::{Body, Vec3};

/// `n` bodies of mass 1/n, from `seed`.
pub fn sphere(n: usize, seed: u64) -> Vec<Body> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // Plummer's scale length in Hénon units.
    let scale = 3.0 * std::f64::consts::PI / 16.0;
    (0..n)
        .map(|i| {
            let r = loop {
                let x: f64 = rng.gen_range(1e-10..1.0);
                let r = (x.powf(-2.0 / 3.0) - 1.0).powf(-0.5);
                // The profile has no edge; a few far outliers only stretch the tree.
                if r < 10.0 {
                    break r;
                }
            };
            let pos = isotropic(&mut rng, r);
            let escape = std::f64::consts::SQRT_2 * (1.0 + r * r).powf(-0.25);
            let q = loop {
                let (q, y): (f64, f64) = (rng.gen(), rng.gen());
                if 0.1 * y < q * q * (1.0 - q * q).powf(3.5) {
                    break q;
                }
            };
            let vel = isotropic(&mut rng, q * escape);
            Body { id: i as u32, mass: 1.0 / n as f64, pos: pos.map(|x| x * scale), vel: vel.map(|v| v / scale.sqrt()) }
        })
        .collect()
}

/// A vector of length `len` in a uniformly random direction.
fn isotropic(rng: &mut ChaCha8Rng, len: f64) -> Vec3 {
    let z: f64 = rng.gen_range(-1.0..1.0);
    let phi: f64 = rng.gen_range(0.0..std::f64::consts::TAU);
    let s = (1.0 - z * z).sqrt();
    [len * s * phi.cos(), len * s * phi.sin(), len * z]
}
