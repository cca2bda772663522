//! `fib N`: the N-th Fibonacci number, every call a spawn (no cutoff).

use clap::Parser;
use satin_examples::{cli, fib};

#[derive(Parser)]
#[command(about = "The N-th Fibonacci number by naive recursion")]
struct Args {
    /// Which Fibonacci number (at most 93, the largest that fits in u64).
    #[arg(value_parser = clap::value_parser!(u32).range(0..=93))]
    n: u32,
    #[command(flatten)]
    run: cli::RunArgs,
}

fn main() {
    let args: Args = cli::parse("fib");
    let n = args.n;
    println!("{}", cli::run("fib", &args.run, move || fib::fib(n)));
}
