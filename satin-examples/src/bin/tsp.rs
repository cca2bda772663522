//! `tsp FILE`: the optimal tour length of a TSPLIB instance, by branch and
//! bound with the best tour found so far shared by every job.

use std::path::PathBuf;

use clap::Parser;
use satin_examples::tsp::held_karp::{self, Root};
use satin_examples::tsp::{self, LowerBound};
use satin_examples::{cli, Bound};

#[derive(Parser)]
#[command(about = "Solves a TSPLIB instance exactly by branch and bound")]
struct Args {
    /// TSPLIB file, e.g. satin-examples/data/tsp/att48.tsp.
    file: PathBuf,
    /// The lower bound: `held-karp` (1-trees under subgradient-optimised
    /// multipliers, branching on edges; up to 1000 cities) or `simple`
    /// (the seeds' bound on a tour grown city by city; up to 64 cities).
    #[arg(long, default_value = "held-karp", value_name = "BOUND")]
    bound: LowerBound,
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
    tsp::check(&m, args.bound).unwrap_or_else(|e| cli::bad_input("tsp", format_args!("{}: {e}", args.file.display())));
    let sharing = if args.per_branch { Bound::PerBranch } else { Bound::Shared };
    let (bound, sequential) = (args.bound, args.run.sequential);
    let matrix = m.clone();
    // The root's ascent, once: its figures are printed after the run.
    let root = (bound == LowerBound::HeldKarp).then(|| Root::new(&m));
    let start = root.clone();
    let best = cli::run("tsp", &args.run, move || match (&start, sequential) {
        (Some(root), false) => held_karp::solve_from(&m, root, sharing),
        (Some(root), true) => held_karp::solve_plain_from(&m, root),
        (None, _) => tsp::solve_with(&m, bound, sharing, sequential),
    });
    println!("{best}");
    eprintln!("tsp: {} nodes expanded on this node", satin_examples::expanded::total());
    if let Some(Root { tour, ascent: Some(ascent) }) = &root {
        let gap = root.as_ref().expect("matched").gap(best);
        eprintln!("tsp: first tour {tour}, root bound {:.1} ({gap:.2} % below the optimum)", ascent.bound);
    }
    if !sequential && !args.per_branch {
        eprintln!("tsp: shortest tour known on this node {}", tsp::known_best(&matrix));
    }
}
