//! Adaptive Simpson quadrature of any integrand: a closure parameter, so
//! the calls stay on the cores of the process that makes them (see the
//! guide, "Parameters that cannot travel").

use satin::divide_and_conquer;

/// Simpson's rule on `[a, b]`.
pub fn simpson<F: Fn(f64) -> f64>(f: &F, a: f64, b: f64) -> f64 {
    (b - a) / 6.0 * (f(a) + 4.0 * f((a + b) / 2.0) + f(b))
}

/// The integral of `f` over `[a, b]` within about `eps`, `whole` being
/// Simpson's rule over the whole interval.
#[divide_and_conquer(local)]
pub fn integrate<F: Fn(f64) -> f64 + Sync>(f: &F, a: f64, b: f64, eps: f64, whole: f64) -> f64 {
    let m = (a + b) / 2.0;
    let (left, right) = (simpson(f, a, m), simpson(f, m, b));
    // (Below a nanometre of x, rounding is all that is left to refine.)
    if (left + right - whole).abs() <= 15.0 * eps || b - a < 1e-9 {
        return left + right + (left + right - whole) / 15.0;
    }
    let l = integrate(f, a, m, eps / 2.0, left);
    let r = integrate(f, m, b, eps / 2.0, right);
    l + r
}

/// The same algorithm without the annotation.
pub fn integrate_plain<F: Fn(f64) -> f64>(f: &F, a: f64, b: f64, eps: f64, whole: f64) -> f64 {
    let m = (a + b) / 2.0;
    let (left, right) = (simpson(f, a, m), simpson(f, m, b));
    if (left + right - whole).abs() <= 15.0 * eps || b - a < 1e-9 {
        return left + right + (left + right - whole) / 15.0;
    }
    integrate_plain(f, a, m, eps / 2.0, left) + integrate_plain(f, m, b, eps / 2.0, right)
}

/// The example's integrand: `sin(k x)` damped, with some work per point
/// (a sum of `terms` harmonics), so that calls are worth spreading.
pub fn wave(k: f64, terms: u32, x: f64) -> f64 {
    (1..=terms).map(|i| (k * f64::from(i) * x).sin() / f64::from(i)).sum::<f64>() * (-x / 10.0).exp()
}
