//! A program that reads its own command line, without clap, and is still a
//! node of a distributed run: `Launch::from_env` takes satin's flags
//! (`--local-nodes`, `--listen`, `--join`, `--workers`, …; see
//! `--satin-help`) out and leaves the program its own arguments.
//!
//! `plain_main N` prints 1² + 2² + … + N², summed by halves of a borrowed
//! slice.

use satin::divide_and_conquer;

#[divide_and_conquer]
fn sum_of_squares(xs: &[u64]) -> u64 {
    match xs {
        [] => 0,
        [x] => x * x,
        _ => {
            let (left, right) = xs.split_at(xs.len() / 2);
            sum_of_squares(left) + sum_of_squares(right)
        }
    }
}

const HELP: &str = "plain_main N: prints the sum of the squares of 1..=N.
Runs on all cores; add satin's flags (see --satin-help) to run on many processes or machines.";

fn main() {
    let (launch, args) = satin::net::Launch::from_env("plain_main");
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{HELP}");
        return;
    }
    let Some(n) = args.get(1).and_then(|a| a.parse::<u64>().ok()).filter(|n| *n <= 2_000_000) else {
        eprintln!("plain_main: error: expected N, a number up to 2000000 (see --help)");
        std::process::exit(2)
    };
    let xs: Vec<u64> = (1..=n).collect();
    let answer = satin::net::run("plain_main", &launch, satin::Runtime::builder(), || sum_of_squares(&xs));
    println!("{answer}");
}
