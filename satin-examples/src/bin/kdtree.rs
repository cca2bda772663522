//! `kdtree N --radius R`: counts the pairs of N seeded random points that
//! lie within R of each other, by a k-d tree query whose calls all borrow
//! the whole tree. `--build` builds the tree in a run of its own first
//! (two runs in one program: the second carries the first's result).

use clap::Parser;
use satin_examples::{cli, kdtree};

#[derive(Parser)]
#[command(about = "Counts close pairs of N seeded random points with a k-d tree; prints the count")]
struct Args {
    /// How many points.
    n: usize,
    /// The distance within which two points are close.
    #[arg(long, default_value_t = 0.001)]
    radius: f64,
    /// Seed of the points.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Build the tree with the annotated `build_kdtree` in a run of its
    /// own (otherwise every process builds it plainly).
    #[arg(long)]
    build: bool,
    #[command(flatten)]
    run: cli::RunArgs,
}

fn main() {
    let args: Args = cli::parse("kdtree");
    if args.n == 0 {
        cli::bad_input("kdtree", "N must be at least 1 (a tree needs a point)");
    }
    if !(args.radius.is_finite() && args.radius >= 0.0) {
        cli::bad_input("kdtree", format!("the radius must be a finite number ≥ 0, not {}", args.radius));
    }
    let (n, seed, r, build) = (args.n, args.seed, args.radius, args.build);
    let count = cli::run("kdtree", &args.run, move || {
        let points = kdtree::random_points(n, seed);
        let tree = if build { kdtree::build_kdtree(points, 0) } else { kdtree::build_plain(points, 0) };
        kdtree::count_close(&tree, &tree, r)
    });
    println!("{count}");
}
