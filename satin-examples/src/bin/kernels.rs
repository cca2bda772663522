//! `kernels KERNEL SIZE`: a data-carrying kernel written as a new user
//! writes it, on this machine's cores or across nodes — `strassen SIDE`
//! (a product of two seeded matrices), `fft LOG2` (a spectrum of 2^LOG2
//! samples), `quickhull N` (the hull of N points in a disc),
//! `prefix N` (running sums of N numbers), `kdbuild N` (a k-d tree of N
//! points). Prints a checksum of the result; `--plain` runs the plain
//! twin on one thread instead.

use clap::{Parser, ValueEnum};
use satin_examples::{cli, kdtree, kernels};

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Kernel {
    Strassen,
    Fft,
    Quickhull,
    Prefix,
    Kdbuild,
}

#[derive(Parser)]
#[command(
    about = "Runs a data-carrying kernel (Strassen, FFT, quickhull, prefix sums, k-d tree build); prints a checksum"
)]
struct Args {
    /// Which kernel.
    #[arg(value_enum)]
    kernel: Kernel,
    /// Its size: a matrix side (a power of two), log2 of the samples, or a count.
    size: usize,
    /// Seed of the input.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The plain function on one thread, for checking.
    #[arg(long)]
    plain: bool,
    #[command(flatten)]
    run: cli::RunArgs,
}

/// A checksum of a tree's shape: its points weighted by their depth.
fn shape(tree: &kdtree::KdTree, depth: u32) -> f64 {
    let below = |t: &Option<Box<kdtree::KdTree>>| t.as_deref().map_or(0.0, |t| shape(t, depth + 1));
    f64::from(depth) * (tree.point[0] + 2.0 * tree.point[1]) + below(&tree.left) + below(&tree.right)
}

fn main() {
    let args: Args = cli::parse("kernels");
    let (kernel, size, seed, plain) = (args.kernel, args.size, args.seed, args.plain);
    let fits = match kernel {
        Kernel::Strassen => size.is_power_of_two() && size >= 2,
        Kernel::Fft => (1..=30).contains(&size),
        Kernel::Quickhull => size >= 2,
        Kernel::Prefix | Kernel::Kdbuild => size >= 1,
    };
    if !fits {
        cli::bad_input(
            "kernels",
            "SIZE: strassen takes a power of two ≥ 2, fft a log2 from 1 to 30, quickhull at least 2, prefix and kdbuild at least 1",
        );
    }
    let answer = cli::run("kernels", &args.run, move || match kernel {
        Kernel::Strassen => {
            let (a, b) = (kernels::Matrix::random(size, seed), kernels::Matrix::random(size, seed + 1));
            let c = if plain { kernels::strassen_plain(a, b) } else { kernels::strassen(a, b) };
            format!("{:.6e}", c.checksum())
        }
        Kernel::Fft => {
            let x = kernels::random_signal(1 << size, seed);
            let spectrum = if plain { kernels::fft_plain(x) } else { kernels::fft(x) };
            format!("{:.6e}", kernels::spectrum_checksum(&spectrum))
        }
        Kernel::Quickhull => {
            let points = kernels::random_disc(size, seed);
            let hull = if plain { kernels::quickhull_plain(&points) } else { kernels::quickhull(&points) };
            let sum: f64 = hull.iter().map(|p| p.0 + 2.0 * p.1).sum();
            format!("{} {:.9}", hull.len(), sum)
        }
        Kernel::Prefix => {
            let xs = kernels::random_numbers(size, seed);
            let sums = if plain { kernels::prefix_sums_plain(&xs) } else { kernels::prefix_sums(&xs) };
            let check =
                sums.iter().enumerate().fold(0u64, |acc, (i, s)| acc.wrapping_add(s.wrapping_mul(i as u64 | 1)));
            check.to_string()
        }
        Kernel::Kdbuild => {
            let points = kdtree::random_points(size, seed);
            let tree = if plain { kdtree::build_plain(points, 0) } else { kdtree::build_kdtree(points, 0) };
            format!("{} {:.9}", kdtree::size(&tree), shape(&tree, 1))
        }
    });
    println!("{answer}");
}
