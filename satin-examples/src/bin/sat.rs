//! `sat FILE.cnf`: DPLL on a DIMACS CNF file; prints SAT (with a model) or UNSAT.

use std::path::PathBuf;

use clap::Parser;
use satin_examples::{cli, sat};

#[derive(Parser)]
#[command(about = "Decides satisfiability of a DIMACS CNF formula")]
struct Args {
    /// DIMACS CNF file, e.g. satin-examples/data/cnf/uf50-01.cnf.
    file: PathBuf,
    #[command(flatten)]
    run: cli::RunArgs,
}

fn main() {
    let args: Args = cli::parse("sat");
    let text = cli::read_input("sat", &args.file);
    let formula =
        sat::parse(&text).unwrap_or_else(|e| cli::bad_input("sat", format_args!("{}: {e}", args.file.display())));
    let f2 = formula.clone();
    match cli::run("sat", &args.run, move || sat::solve(&f2)) {
        Some(model) => {
            assert!(sat::satisfies(&formula, &model), "the model found must satisfy the formula");
            println!("SAT");
            let lits: Vec<String> =
                (1..=formula.vars).map(|v| if model[v] >= 0 { v.to_string() } else { format!("-{v}") }).collect();
            println!("v {} 0", lits.join(" "));
        }
        None => println!("UNSAT"),
    }
}
