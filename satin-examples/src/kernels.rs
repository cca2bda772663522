//! Data-carrying kernels as a new user writes them: each an ordinary
//! recursive function given only the attribute, beside its plain twin —
//! Strassen's matrix product, a radix-2 FFT, quickhull, split–scan–fix-up
//! prefix sums. (`kdtree::build_kdtree` is the k-d tree build.)
//!
//! Every kernel does the same floating-point operations in the same
//! order however it is run, so its checksum is the same bit for bit on
//! one thread, on all cores and across nodes.

use rand::{Rng, SeedableRng};
use satin::divide_and_conquer;
use serde::{Deserialize, Serialize};

/// A square matrix of side `n`, row by row.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Matrix {
    /// The side.
    pub n: usize,
    /// `n * n` entries, row by row.
    pub data: Vec<f64>,
}

/// Below this side a product is computed directly.
pub const STRASSEN_CUTOFF: usize = 128;

impl Matrix {
    /// A matrix of side `n` with seeded entries in [-1, 1).
    pub fn random(n: usize, seed: u64) -> Matrix {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        Matrix { n, data: (0..n * n).map(|_| rng.gen_range(-1.0..1.0)).collect() }
    }

    fn zero(n: usize) -> Matrix {
        Matrix { n, data: vec![0.0; n * n] }
    }

    /// Quadrant `(qi, qj)` (0 or 1 each) of a matrix of even side.
    fn quadrant(&self, qi: usize, qj: usize) -> Matrix {
        let h = self.n / 2;
        let mut out = Vec::with_capacity(h * h);
        for i in 0..h {
            let row = (qi * h + i) * self.n + qj * h;
            out.extend_from_slice(&self.data[row..row + h]);
        }
        Matrix { n: h, data: out }
    }

    fn add(&self, other: &Matrix) -> Matrix {
        Matrix { n: self.n, data: self.data.iter().zip(&other.data).map(|(a, b)| a + b).collect() }
    }

    fn sub(&self, other: &Matrix) -> Matrix {
        Matrix { n: self.n, data: self.data.iter().zip(&other.data).map(|(a, b)| a - b).collect() }
    }

    /// The four quadrants put together.
    fn join(c11: &Matrix, c12: &Matrix, c21: &Matrix, c22: &Matrix) -> Matrix {
        let h = c11.n;
        let mut out = Matrix::zero(2 * h);
        for i in 0..h {
            for (q, (qi, qj)) in [(c11, (0, 0)), (c12, (0, 1)), (c21, (1, 0)), (c22, (1, 1))] {
                let row = (qi * h + i) * out.n + qj * h;
                out.data[row..row + h].copy_from_slice(&q.data[i * h..(i + 1) * h]);
            }
        }
        out
    }

    /// The product by the schoolbook loop (i, k, j order).
    pub fn times(&self, other: &Matrix) -> Matrix {
        let n = self.n;
        let mut out = Matrix::zero(n);
        for i in 0..n {
            for k in 0..n {
                let a = self.data[i * n + k];
                let row = &other.data[k * n..(k + 1) * n];
                for (o, b) in out.data[i * n..(i + 1) * n].iter_mut().zip(row) {
                    *o += a * b;
                }
            }
        }
        out
    }

    /// A checksum of the entries: their position-weighted sum.
    pub fn checksum(&self) -> f64 {
        self.data.iter().enumerate().map(|(i, v)| v * ((i % 7) as f64 + 1.0)).sum()
    }
}

/// `a × b` by Strassen's seven products (sides a power of two).
#[divide_and_conquer]
pub fn strassen(a: Matrix, b: Matrix) -> Matrix {
    if a.n <= STRASSEN_CUTOFF {
        return a.times(&b);
    }
    let (a11, a12, a21, a22) = (a.quadrant(0, 0), a.quadrant(0, 1), a.quadrant(1, 0), a.quadrant(1, 1));
    let (b11, b12, b21, b22) = (b.quadrant(0, 0), b.quadrant(0, 1), b.quadrant(1, 0), b.quadrant(1, 1));
    let m1 = strassen(a11.add(&a22), b11.add(&b22));
    let m2 = strassen(a21.add(&a22), b11.clone());
    let m3 = strassen(a11.clone(), b12.sub(&b22));
    let m4 = strassen(a22.clone(), b21.sub(&b11));
    let m5 = strassen(a11.add(&a12), b22.clone());
    let m6 = strassen(a21.sub(&a11), b11.add(&b12));
    let m7 = strassen(a12.sub(&a22), b21.add(&b22));
    let c11 = m1.add(&m4).sub(&m5).add(&m7);
    let c12 = m3.add(&m5);
    let c21 = m2.add(&m4);
    let c22 = m1.sub(&m2).add(&m3).add(&m6);
    Matrix::join(&c11, &c12, &c21, &c22)
}

/// The same algorithm without the annotation.
pub fn strassen_plain(a: Matrix, b: Matrix) -> Matrix {
    if a.n <= STRASSEN_CUTOFF {
        return a.times(&b);
    }
    let (a11, a12, a21, a22) = (a.quadrant(0, 0), a.quadrant(0, 1), a.quadrant(1, 0), a.quadrant(1, 1));
    let (b11, b12, b21, b22) = (b.quadrant(0, 0), b.quadrant(0, 1), b.quadrant(1, 0), b.quadrant(1, 1));
    let m1 = strassen_plain(a11.add(&a22), b11.add(&b22));
    let m2 = strassen_plain(a21.add(&a22), b11.clone());
    let m3 = strassen_plain(a11.clone(), b12.sub(&b22));
    let m4 = strassen_plain(a22.clone(), b21.sub(&b11));
    let m5 = strassen_plain(a11.add(&a12), b22.clone());
    let m6 = strassen_plain(a21.sub(&a11), b11.add(&b12));
    let m7 = strassen_plain(a12.sub(&a22), b21.add(&b22));
    let c11 = m1.add(&m4).sub(&m5).add(&m7);
    let c12 = m3.add(&m5);
    let c21 = m2.add(&m4);
    let c22 = m1.sub(&m2).add(&m3).add(&m6);
    Matrix::join(&c11, &c12, &c21, &c22)
}

/// A complex number as (real, imaginary).
pub type Complex = (f64, f64);

/// Below this length a transform runs plainly.
pub const FFT_CUTOFF: usize = 4096;

/// The discrete Fourier transform of `x` (length a power of two), radix 2.
#[divide_and_conquer]
pub fn fft(x: Vec<Complex>) -> Vec<Complex> {
    if x.len() <= FFT_CUTOFF {
        return fft_plain(x);
    }
    let (even, odd) = split_even_odd(&x);
    let e = fft(even);
    let o = fft(odd);
    butterflies(&e, &o)
}

/// The same transform without the annotation.
pub fn fft_plain(x: Vec<Complex>) -> Vec<Complex> {
    if x.len() == 1 {
        return x;
    }
    let (even, odd) = split_even_odd(&x);
    butterflies(&fft_plain(even), &fft_plain(odd))
}

fn split_even_odd(x: &[Complex]) -> (Vec<Complex>, Vec<Complex>) {
    (x.iter().step_by(2).copied().collect(), x.iter().skip(1).step_by(2).copied().collect())
}

/// Combines the transforms of the even and the odd samples.
fn butterflies(e: &[Complex], o: &[Complex]) -> Vec<Complex> {
    let n = 2 * e.len();
    let mut out = vec![(0.0, 0.0); n];
    for k in 0..e.len() {
        let angle = -2.0 * std::f64::consts::PI * k as f64 / n as f64;
        let (s, c) = angle.sin_cos();
        let t = (c * o[k].0 - s * o[k].1, c * o[k].1 + s * o[k].0);
        out[k] = (e[k].0 + t.0, e[k].1 + t.1);
        out[k + n / 2] = (e[k].0 - t.0, e[k].1 - t.1);
    }
    out
}

/// `n` seeded samples in [-1, 1) (imaginary parts 0).
pub fn random_signal(n: usize, seed: u64) -> Vec<Complex> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    (0..n).map(|_| (rng.gen_range(-1.0..1.0), 0.0)).collect()
}

/// A checksum of a spectrum.
pub fn spectrum_checksum(x: &[Complex]) -> f64 {
    x.iter().enumerate().map(|(i, (re, im))| (re.abs() + im.abs()) * ((i % 5) as f64 + 1.0)).sum()
}

/// A point of the plane.
pub type Point2 = (f64, f64);

/// Twice the signed area of (a, b, p): positive if p lies left of a→b.
pub fn cross(a: Point2, b: Point2, p: Point2) -> f64 {
    (b.0 - a.0) * (p.1 - a.1) - (b.1 - a.1) * (p.0 - a.0)
}

/// The points of the convex hull strictly left of a→b, from a to b
/// (a and b not included): quickhull's recursion.
#[divide_and_conquer]
pub fn hull_side(points: &[Point2], a: Point2, b: Point2) -> Vec<Point2> {
    let beyond: Vec<Point2> = points.iter().copied().filter(|&p| cross(a, b, p) > 0.0).collect();
    let Some(c) = farthest(&beyond, a, b) else { return Vec::new() };
    let mut hull = hull_side(&beyond, a, c);
    let rest = hull_side(&beyond, c, b);
    hull.push(c);
    hull.extend(rest);
    hull
}

/// The same recursion without the annotation.
pub fn hull_side_plain(points: &[Point2], a: Point2, b: Point2) -> Vec<Point2> {
    let beyond: Vec<Point2> = points.iter().copied().filter(|&p| cross(a, b, p) > 0.0).collect();
    let Some(c) = farthest(&beyond, a, b) else { return Vec::new() };
    let mut hull = hull_side_plain(&beyond, a, c);
    hull.push(c);
    hull.extend(hull_side_plain(&beyond, c, b));
    hull
}

/// The point farthest left of a→b (the first of equals).
fn farthest(points: &[Point2], a: Point2, b: Point2) -> Option<Point2> {
    points.iter().copied().fold(None, |best: Option<Point2>, p| match best {
        Some(q) if cross(a, b, q) >= cross(a, b, p) => Some(q),
        _ => Some(p),
    })
}

/// The convex hull of `points`, counter-clockwise from the leftmost
/// point: the two halves of quickhull, each a call that may run apart.
#[divide_and_conquer]
pub fn quickhull(points: &[Point2]) -> Vec<Point2> {
    let Some((lo, hi)) = extremes(points) else { return Vec::new() };
    let below = hull_side(points, hi, lo);
    let above = hull_side(points, lo, hi);
    around(lo, hi, below, above)
}

/// The same without the annotation.
pub fn quickhull_plain(points: &[Point2]) -> Vec<Point2> {
    let Some((lo, hi)) = extremes(points) else { return Vec::new() };
    around(lo, hi, hull_side_plain(points, hi, lo), hull_side_plain(points, lo, hi))
}

/// The leftmost and the rightmost point.
fn extremes(points: &[Point2]) -> Option<(Point2, Point2)> {
    let by_x = |p: &&Point2, q: &&Point2| p.0.total_cmp(&q.0).then(p.1.total_cmp(&q.1));
    Some((*points.iter().min_by(by_x)?, *points.iter().max_by(by_x)?))
}

/// The hull, counter-clockwise from `lo`, from its extremes and its two
/// sides as `hull_side` gives them (the part below the line from `hi` to
/// `lo`, the part above from `lo` to `hi`).
fn around(lo: Point2, hi: Point2, below: Vec<Point2>, above: Vec<Point2>) -> Vec<Point2> {
    let mut hull = vec![lo];
    hull.extend(below.into_iter().rev());
    hull.push(hi);
    hull.extend(above.into_iter().rev());
    hull
}

/// `n` seeded points in the unit disc.
pub fn random_disc(n: usize, seed: u64) -> Vec<Point2> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let p: Point2 = (rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0));
        if p.0 * p.0 + p.1 * p.1 < 1.0 {
            out.push(p);
        }
    }
    out
}

/// Below this length a prefix sum runs plainly.
pub const PREFIX_CUTOFF: usize = 1 << 16;

/// The running sums of `xs` (wrapping), split, scanned and fixed up.
#[divide_and_conquer]
pub fn prefix_sums(xs: &[u64]) -> Vec<u64> {
    if xs.len() <= PREFIX_CUTOFF {
        return scan(xs);
    }
    let (l, r) = xs.split_at(xs.len() / 2);
    let mut left = prefix_sums(l);
    let right = prefix_sums(r);
    let carry = left.last().copied().unwrap_or(0);
    left.extend(right.iter().map(|v| v.wrapping_add(carry)));
    left
}

/// The same recursion without the annotation.
pub fn prefix_sums_plain(xs: &[u64]) -> Vec<u64> {
    if xs.len() <= PREFIX_CUTOFF {
        return scan(xs);
    }
    let (l, r) = xs.split_at(xs.len() / 2);
    let mut left = prefix_sums_plain(l);
    let right = prefix_sums_plain(r);
    let carry = left.last().copied().unwrap_or(0);
    left.extend(right.iter().map(|v| v.wrapping_add(carry)));
    left
}

/// The same recursion with `rayon::join`: how far the shape itself goes
/// on these cores (each level allocates and copies its halves' sums: the
/// work is memory traffic and page faults as much as arithmetic).
pub fn prefix_sums_rayon(xs: &[u64]) -> Vec<u64> {
    if xs.len() <= PREFIX_CUTOFF {
        return scan(xs);
    }
    let (l, r) = xs.split_at(xs.len() / 2);
    let (mut left, right) = rayon::join(|| prefix_sums_rayon(l), || prefix_sums_rayon(r));
    let carry = left.last().copied().unwrap_or(0);
    left.extend(right.iter().map(|v| v.wrapping_add(carry)));
    left
}

/// The running sums in one pass.
pub fn scan(xs: &[u64]) -> Vec<u64> {
    let mut sum = 0u64;
    xs.iter()
        .map(|x| {
            sum = sum.wrapping_add(*x);
            sum
        })
        .collect()
}

/// `n` seeded numbers below 2^32.
pub fn random_numbers(n: usize, seed: u64) -> Vec<u64> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    (0..n).map(|_| rng.gen_range(0..1u64 << 32)).collect()
}
