//! `tsp FILE`: the optimal tour length of a TSPLIB instance, by branch and
//! bound with the best tour found so far shared by every job.

use std::path::PathBuf;

use clap::Parser;
use satin_examples::{cli, tsp};

#[derive(Parser)]
#[command(about = "Solves a TSPLIB instance exactly (up to 64 cities) by branch and bound")]
struct Args {
    /// TSPLIB file, e.g. satin-examples/data/tsp/gr17.tsp.
    file: PathBuf,
    /// Pass the best tour down as a parameter instead of sharing it (to
    /// compare the nodes each expands).
    #[arg(long)]
    per_branch: bool,
    #[command(flatten)]
    run: cli::RunArgs,
}

fn main() {
    let args: Args = cli::parse("tsp");
    let text = cli::read_input("tsp", &args.file);
    let m = tsp::parse(&text).unwrap_or_else(|e| cli::bad_input("tsp", format_args!("{}: {e}", args.file.display())));
    let bound = if args.per_branch { tsp::Bound::PerBranch } else { tsp::Bound::Shared };
    let sequential = args.run.sequential;
    let matrix = m.clone();
    let best =
        cli::run("tsp", &args.run, move || if sequential { tsp::solve_plain(&m) } else { tsp::solve(&m, bound) });
    println!("{best}");
    eprintln!("tsp: {} nodes expanded on this node", satin_examples::expanded::total());
    if !sequential && !args.per_branch {
        eprintln!("tsp: shortest tour known on this node {}", tsp::known_best(&matrix));
    }
}
