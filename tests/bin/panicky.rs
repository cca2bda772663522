//! A divide-and-conquer count whose one leaf may panic: the program the
//! tests run to see how a panic in a job ends a distributed run.
//!
//! `panicky DEPTH [--bad-leaf N] [launch flags]` prints 2^DEPTH, unless
//! leaf N (0-based, left to right) panics.

use std::sync::OnceLock;

use clap::Parser;
use satin::divide_and_conquer;

static BAD_LEAF: OnceLock<u64> = OnceLock::new();

#[divide_and_conquer]
fn count(depth: u32, path: u64) -> u64 {
    if depth == 0 {
        if BAD_LEAF.get() == Some(&path) {
            panic!("leaf {path} is bad");
        }
        // Some work per leaf, so that nodes steal from each other.
        let mut x = path;
        for _ in 0..20_000 {
            x = std::hint::black_box(x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1));
        }
        std::hint::black_box(x);
        return 1;
    }
    count(depth - 1, 2 * path) + count(depth - 1, 2 * path + 1)
}

#[derive(Parser)]
struct Args {
    /// Depth of the recursion: 2^DEPTH leaves.
    #[arg(value_parser = clap::value_parser!(u32).range(0..=40))]
    depth: u32,
    /// The leaf that panics.
    #[arg(long)]
    bad_leaf: Option<u64>,
    #[command(flatten)]
    launch: satin::net::Launch,
}

fn main() {
    let args = Args::parse();
    if let Some(leaf) = args.bad_leaf {
        let _ = BAD_LEAF.set(leaf);
    }
    let n = satin::net::run("panicky", &args.launch, satin::Runtime::builder(), || count(args.depth, 0));
    println!("{n}");
}
