//! `uts TREE`: Unbalanced Tree Search on one of the published sample trees
//! (T1–T5, about 4 million nodes each); prints nodes, leaves and depth,
//! and checks them against the published sizes.

use clap::Parser;
use satin_examples::{cli, uts};

#[derive(Parser)]
#[command(about = "Unbalanced Tree Search: count the nodes of a published sample tree")]
struct Args {
    /// The sample tree: T1 (geometric, fixed), T2 (geometric, cyclic), T3
    /// (binomial), T4 (hybrid) or T5 (geometric, linear).
    tree: String,
    #[command(flatten)]
    run: cli::RunArgs,
}

fn main() {
    let args: Args = cli::parse("uts");
    let Some((params, published)) = uts::sample(&args.tree) else {
        eprintln!("uts: error: unknown tree {:?}; the sample trees are T1, T2, T3, T4 and T5", args.tree);
        std::process::exit(2);
    };
    let root = uts::Node::root(&params);
    let counts = cli::run("uts", &args.run, move || uts::search(&params, root));
    println!("{} nodes, {} leaves, depth {}", counts.nodes, counts.leaves, counts.depth);
    if counts != published {
        eprintln!(
            "uts: error: the published tree has {} nodes, {} leaves, depth {}",
            published.nodes, published.leaves, published.depth
        );
        std::process::exit(1);
    }
}
