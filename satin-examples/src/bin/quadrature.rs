//! `quadrature K`: the integral of a damped wave over [0, 10] by adaptive
//! Simpson quadrature — an annotated function that takes a closure.

use clap::Parser;
use satin_examples::{cli, quadrature};

#[derive(Parser)]
#[command(about = "Integrates a damped wave of frequency K over [0, 10] by adaptive Simpson quadrature")]
struct Args {
    /// Frequency of the wave.
    k: f64,
    /// Tolerance.
    #[arg(long, default_value_t = 1e-9)]
    eps: f64,
    /// Harmonics summed per point (work per evaluation).
    #[arg(long, default_value_t = 20)]
    terms: u32,
    #[command(flatten)]
    run: cli::RunArgs,
}

fn main() {
    let args: Args = cli::parse("quadrature");
    if !(args.eps > 0.0 && args.eps.is_finite() && args.k.is_finite()) {
        eprintln!("quadrature: K must be a finite number and --eps a positive one");
        std::process::exit(2);
    }
    let (k, eps, terms) = (args.k, args.eps, args.terms);
    let value = cli::run("quadrature", &args.run, move || {
        let f = move |x: f64| quadrature::wave(k, terms, x);
        quadrature::integrate(&f, 0.0, 10.0, eps, quadrature::simpson(&f, 0.0, 10.0))
    });
    println!("{value:.12}");
}
