//! `knapsack FILE`: the optimum of a 0/1 knapsack instance, by branch and
//! bound with the best packing found so far shared by every job.
//! `knapsack --generate T,N,R,I,S` prints instance I of S of Pisinger's
//! family T (N items, coefficients up to R) instead.

use std::path::PathBuf;

use clap::Parser;
use satin_examples::knapsack::pisinger::{self, Family};
use satin_examples::{cli, knapsack, Bound};

#[derive(Parser)]
#[command(about = "Solves a 0/1 knapsack instance (format: n capacity, then n lines `profit weight`)")]
struct Args {
    /// Instance file, e.g. satin-examples/data/knapsack/pisinger/knapPI_13_60_1000_50.
    #[arg(required_unless_present = "generate")]
    file: Option<PathBuf>,
    /// The search: `levels` (Martello and Toth's reduction, then every
    /// branch decided one item at a time from the break item outwards;
    /// solves the hard families), `martello-toth` (their bound U2 depth
    /// first, with dominance between branches) or `dantzig` (the seeds' search:
    /// Dantzig's bound only).
    #[arg(long, default_value = "levels", value_name = "BOUND")]
    bound: knapsack::Search,
    /// Pass the best value down as a parameter instead of sharing it (to
    /// compare the nodes each expands).
    #[arg(long)]
    per_branch: bool,
    /// Print an instance of Pisinger's generator instead of solving one:
    /// TYPE,ITEMS,RANGE,INSTANCE,SERIES (type 3 strongly correlated, 13
    /// strongly correlated spanner; see the guide).
    #[arg(long, value_name = "T,N,R,I,S", conflicts_with = "file")]
    generate: Option<String>,
    #[command(flatten)]
    run: cli::RunArgs,
}

fn main() {
    let args: Args = cli::parse("knapsack");
    if let Some(spec) = &args.generate {
        let (items, capacity) =
            parse_spec(spec).unwrap_or_else(|e| cli::bad_input("knapsack", format_args!("--generate {spec}: {e}")));
        print!("{}", pisinger::to_text(&items, capacity));
        return;
    }
    let file = args.file.expect("required unless --generate");
    let text = cli::read_input("knapsack", &file);
    let instance =
        knapsack::parse(&text).unwrap_or_else(|e| cli::bad_input("knapsack", format_args!("{}: {e}", file.display())));
    let integral = instance.integral;
    let bound = if args.per_branch { Bound::PerBranch } else { Bound::Shared };
    let (search, sequential) = (args.bound, args.run.sequential);
    let root = knapsack::strong::root_bound(&instance);
    let best = cli::run("knapsack", &args.run, move || knapsack::solve_by(&instance, search, bound, sequential));
    println!("{}", knapsack::format_value(best, integral));
    eprintln!("knapsack: {} nodes expanded on this node", satin_examples::expanded::total());
    let percent = if best > 0.0 { 100.0 * (root - best) / best } else { 0.0 };
    eprintln!("knapsack: root bound U2 {root:.1} ({:.1} above the optimum, {percent:.4} %)", root - best);
}

fn parse_spec(spec: &str) -> Result<(Vec<(i64, i64)>, i64), String> {
    let fields: Vec<&str> = spec.split(',').collect();
    let [t, n, r, i, s] = fields[..] else {
        return Err("expected five numbers TYPE,ITEMS,RANGE,INSTANCE,SERIES".into());
    };
    let number = |what: &str, v: &str| v.trim().parse::<i64>().map_err(|_| format!("{what} `{v}` is not a number"));
    let t = number("the type", t)?;
    let family = Family::from_type(t as u32)
        .filter(|_| (1..=16).contains(&t))
        .ok_or_else(|| format!("no family of type {t} (1-6, 11-16)"))?;
    let (n, r, i, s) = (number("ITEMS", n)?, number("RANGE", r)?, number("INSTANCE", i)?, number("SERIES", s)?);
    let small = |what: &str, v: i64| u32::try_from(v).map_err(|_| format!("{what} {v} is out of range"));
    pisinger::generate(family, small("ITEMS", n)? as usize, r, small("INSTANCE", i)?, small("SERIES", s)?)
}
