//! `nqueens N`: the number of ways to place N non-attacking queens.

use clap::Parser;
use satin_examples::{cli, nqueens};

#[derive(Parser)]
#[command(about = "Counts the solutions of the N-queens problem")]
struct Args {
    /// Board size.
    #[arg(value_parser = clap::value_parser!(u32).range(1..=31))]
    n: u32,
    #[command(flatten)]
    run: cli::RunArgs,
}

fn main() {
    let args: Args = cli::parse("nqueens");
    let n = args.n;
    println!("{}", cli::run("nqueens", &args.run, move || nqueens::solutions(n)));
}
