//! `forms KIND SIZE`: recursion as people write it, run on any number of
//! nodes — `orbits` (a function that `?`s its calls: the longest Collatz
//! orbit below SIZE, an error if one is longer than `--limit`), `queens`
//! (a method taking `self`: N-queens on a SIZE × SIZE board), `minimax`
//! (two functions that call each other, SIZE moves deep), `inversions`
//! (`&mut` halves merged after the calls, SIZE numbers), `sort` (a generic
//! merge sort of SIZE numbers) and
//! `ranks` (a generic function calling an instantiation of another that
//! only it uses). `sort` and `ranks` print the length and a digest.
//! `steps` makes two annotated calls, the second from the first's answer
//! (a quick look SIZE-1 moves deep, then SIZE moves deep from the position
//! the first answer names): each call is a run of the same nodes.

use clap::{Parser, ValueEnum};
use satin_examples::cli;
use satin_examples::forms::{self, minimax};

#[derive(Clone, Copy, ValueEnum)]
enum Kind {
    Orbits,
    Queens,
    Minimax,
    Inversions,
    Sort,
    Ranks,
    Steps,
}

#[derive(Parser)]
#[command(
    about = "Recursion as people write it: `?`, methods, mutual recursion, a merge after &mut calls, generic functions"
)]
struct Args {
    /// Which function.
    #[arg(value_enum)]
    kind: Kind,
    /// Its size: numbers for `orbits`, `inversions`, `sort` and `ranks`,
    /// the board for `queens` (at most 31), moves deep for `minimax`.
    size: u32,
    /// `orbits`: the longest orbit allowed, in steps (longer is an error).
    #[arg(long, default_value_t = u32::MAX)]
    limit: u32,
    #[command(flatten)]
    run: cli::RunArgs,
}

fn main() {
    let args: Args = cli::parse("forms");
    let size = args.size;
    let answer = match args.kind {
        Kind::Orbits => {
            let limit = args.limit;
            format!("{:?}", cli::run("forms", &args.run, move || forms::longest_orbit(1, u64::from(size), limit)))
        }
        Kind::Queens => {
            if size > 31 {
                eprintln!("forms: error: a board of at most 31 rows");
                std::process::exit(2);
            }
            let board = forms::Board::empty(size);
            cli::run("forms", &args.run, move || board.solutions()).to_string()
        }
        Kind::Minimax => cli::run("forms", &args.run, move || minimax::max_value(0, size, 4)).to_string(),
        Kind::Inversions => {
            let mut xs = forms::numbers(size as usize, 3);
            cli::run("forms", &args.run, move || forms::count_inversions(&mut xs)).to_string()
        }
        Kind::Sort => {
            let xs = forms::numbers(size as usize, 5);
            let sorted = cli::run("forms", &args.run, move || forms::merge_sort(&xs));
            format!("{} {}", sorted.len(), forms::digest(&sorted))
        }
        Kind::Steps => {
            let (first, second) = cli::run("forms", &args.run, move || {
                let first = minimax::max_value(0, size.saturating_sub(1), 4);
                let second = minimax::max_value(forms::next_position(first), size, 4);
                (first, second)
            });
            format!("{first} {second}")
        }
        Kind::Ranks => {
            let xs = forms::numbers(size as usize, 7);
            let ranks = cli::run("forms", &args.run, move || forms::ranks(&xs));
            format!("{} {}", ranks.len(), forms::digest(&ranks))
        }
    };
    println!("{answer}");
}
