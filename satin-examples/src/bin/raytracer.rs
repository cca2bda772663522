//! `raytracer --width W --height H -o FILE.png`: renders the built-in scene.

use std::path::PathBuf;

use clap::Parser;
use satin_examples::{cli, raytracer};

#[derive(Parser)]
#[command(about = "Ray traces a built-in scene by recursive subdivision of the image")]
struct Args {
    #[arg(long, default_value_t = 800, value_parser = clap::value_parser!(u32).range(1..=16384))]
    width: u32,
    #[arg(long, default_value_t = 600, value_parser = clap::value_parser!(u32).range(1..=16384))]
    height: u32,
    /// Rays per pixel along each axis (supersampling: N×N rays per pixel,
    /// more work for the same image size).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    samples: u32,
    /// Output PNG file (optional: without it only the checksum is printed).
    #[arg(short = 'o', long = "output")]
    output: Option<PathBuf>,
    #[command(flatten)]
    run: cli::RunArgs,
}

fn main() {
    let args: Args = cli::parse("raytracer");
    let (w, h, s) = (args.width, args.height, args.samples);
    let rgb = cli::run("raytracer", &args.run, move || raytracer::image_sampled(w, h, s));
    println!("{}", raytracer::checksum(&rgb));
    if let Some(path) = &args.output {
        if let Err(e) = raytracer::write_png(path, w, h, &rgb) {
            cli::bad_input("raytracer", format_args!("cannot write {}: {e}", path.display()));
        }
        eprintln!("raytracer: wrote {}", path.display());
    }
}
