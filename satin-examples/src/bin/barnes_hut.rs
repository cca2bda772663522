//! `barnes_hut`: a Plummer sphere of N bodies moved S steps by Barnes-Hut;
//! prints the kinetic energy after (the same to the last digit
//! sequentially, on any number of workers and on any number of nodes).
//! `--check` also compares the first step's accelerations with the direct
//! O(n²) sum.

use clap::Parser;
use satin_examples::{barnes_hut, cli};

#[derive(Parser)]
#[command(about = "Barnes-Hut N-body simulation of a Plummer sphere")]
struct Args {
    /// Number of bodies.
    #[arg(long, default_value_t = 20_000, value_parser = clap::value_parser!(u32).range(2..=10_000_000))]
    bodies: u32,
    /// Time steps.
    #[arg(long, default_value_t = 2)]
    steps: usize,
    /// Opening angle: a cell counts as one mass when its side is less than
    /// THETA times its distance.
    #[arg(long, default_value_t = 0.5)]
    theta: f64,
    /// Step length (Hénon units).
    #[arg(long, default_value_t = 0.001)]
    dt: f64,
    /// Seed of the initial condition.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Also compare the tree's accelerations with the direct sum (O(n²)).
    #[arg(long)]
    check: bool,
    /// Keep the bodies in a shared object (each node builds the tree of a
    /// step from its replica; jobs carry only a range of bodies) instead of
    /// passing the tree to the jobs.
    #[arg(long)]
    shared_bodies: bool,
    #[command(flatten)]
    run: cli::RunArgs,
}

fn main() {
    let args: Args = cli::parse("barnes_hut");
    if !(args.theta.is_finite() && args.theta >= 0.0 && args.dt.is_finite()) {
        cli::bad_input("barnes_hut", format_args!("--theta must be ≥ 0 and --dt finite"));
    }
    let bodies = barnes_hut::plummer::sphere(args.bodies as usize, args.seed);
    let (steps, dt, theta, shared) = (args.steps, args.dt, args.theta, args.shared_bodies);
    let start = bodies.clone();
    let end = cli::run("barnes_hut", &args.run, move || {
        if shared {
            barnes_hut::shared::simulate(bodies, steps as u64, dt, theta)
        } else {
            barnes_hut::simulate(bodies, steps as u64, dt, theta)
        }
    });
    println!("{:.12e}", barnes_hut::kinetic_energy(&end));
    if args.check {
        let (ordered, approx) = barnes_hut::tree_accelerations(start, theta);
        let (rms, max) = barnes_hut::relative_errors(&approx, &barnes_hut::direct(&ordered));
        eprintln!(
            "barnes_hut: relative error of the accelerations against the direct sum: rms {rms:.2e}, max {max:.2e}"
        );
    }
}
