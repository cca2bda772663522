//! `mergesort N --seed S`: sorts N seeded random numbers, prints a checksum.

use clap::Parser;
use satin_examples::{cli, mergesort};

#[derive(Parser)]
#[command(about = "Sorts N seeded random u64 by merge sort and prints a checksum of the result")]
struct Args {
    /// How many numbers.
    n: usize,
    /// Seed of the input.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[command(flatten)]
    run: cli::RunArgs,
}

fn main() {
    let args: Args = cli::parse("mergesort");
    let (n, seed) = (args.n, args.seed);
    // The input is made where the program runs: a supervisor of local
    // nodes (`--local-nodes`) starts them without making it.
    let sorted = cli::run("mergesort", &args.run, move || mergesort::mergesort(mergesort::random_input(n, seed)));
    debug_assert!(sorted.windows(2).all(|w| w[0] <= w[1]));
    println!("{}", mergesort::checksum(&sorted));
}
