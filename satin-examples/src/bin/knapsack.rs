//! `knapsack FILE`: the optimum of a 0/1 knapsack instance.

use std::path::PathBuf;

use clap::Parser;
use satin_examples::{cli, knapsack};

#[derive(Parser)]
#[command(about = "Solves a 0/1 knapsack instance (format: n capacity, then n lines `profit weight`)")]
struct Args {
    /// Instance file, e.g. satin-examples/data/knapsack/large_scale/knapPI_1_100_1000_1.
    file: PathBuf,
    #[command(flatten)]
    run: cli::RunArgs,
}

fn main() {
    let args = Args::parse();
    let text = cli::read_input("knapsack", &args.file);
    let instance = knapsack::parse(&text)
        .unwrap_or_else(|e| cli::bad_input("knapsack", format_args!("{}: {e}", args.file.display())));
    let integral = instance.integral;
    let best = cli::run("knapsack", &args.run, move || knapsack::solve(&instance));
    println!("{}", knapsack::format_value(best, integral));
}
