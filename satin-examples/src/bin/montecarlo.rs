//! `montecarlo N --seed S`: estimates π from N independent seeded simulations.

use clap::Parser;
use satin_examples::{cli, montecarlo};

#[derive(Parser)]
#[command(about = "Estimates pi from N independent Monte Carlo simulations (1000 darts each)")]
struct Args {
    /// Number of simulations.
    #[arg(value_parser = clap::value_parser!(u64).range(1..=1_000_000_000_000))]
    n: u64,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// A flat tree: the root spawns one job per 500 simulations (instead
    /// of splitting the range in halves).
    #[arg(long)]
    flat: bool,
    #[command(flatten)]
    run: cli::RunArgs,
}

fn main() {
    let args: Args = cli::parse("montecarlo");
    let (n, seed, flat) = (args.n, args.seed, args.flat);
    let (hits, pi) = cli::run("montecarlo", &args.run, move || montecarlo::estimate(n, seed, flat));
    println!("{pi:.9}");
    eprintln!("montecarlo: {hits} of {} darts inside the quarter circle", n * montecarlo::DARTS);
}
