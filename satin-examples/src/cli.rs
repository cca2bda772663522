//! Flags every example shares, and running an application under them.

use std::time::Instant;

use clap::Args;
use satin::Runtime;

/// How to run: where (this machine, or a distributed run) and runtime switches.
#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    #[command(flatten)]
    pub launch: satin::net::Launch,
    /// Run the plain sequential function, without a runtime.
    #[arg(long)]
    pub sequential: bool,
    /// Turn off the fault-tolerance records (to measure what they cost).
    #[arg(long)]
    pub no_ft: bool,
    /// Lazy-spawning cut-off: a spawn runs inline once its worker has this
    /// many jobs queued (0: never inline, push every spawn).
    #[arg(long, default_value_t = satin::DEFAULT_SPAWN_LIMIT)]
    pub spawn_limit: usize,
    /// Pin each worker thread to a core of its own (for a process that has
    /// the machine to itself; see `Builder::pin_workers`).
    #[arg(long)]
    pub pin_workers: bool,
}

/// This example's command line: `--init-pool FILE` first (it needs none
/// of the example's own arguments), then the example's parser.
pub fn parse<A: clap::Parser>(name: &str) -> A {
    satin::net::init_pool_if_asked(name);
    A::parse()
}

/// Runs `app` as `args` say, printing timing and scheduler counters to stderr.
/// Exits with status 1 and a message if the runtime cannot start.
pub fn run<R: Send>(name: &str, args: &RunArgs, app: impl FnOnce() -> R + Send) -> R {
    let start = Instant::now();
    if let Err(e) = args.launch.check() {
        eprintln!("{name}: error: {e}");
        std::process::exit(2)
    }
    if args.sequential {
        let r = app();
        eprintln!("{name}: sequential, {:.3} s", start.elapsed().as_secs_f64());
        satin::net::send_answer_to_file(name, &args.launch);
        return r;
    }
    let limit = if args.spawn_limit == 0 { usize::MAX } else { args.spawn_limit };
    let builder = Runtime::builder().fault_tolerance(!args.no_ft).spawn_limit(limit).pin_workers(args.pin_workers);
    if args.launch.goes_beyond_this_process() {
        let r = satin::net::run(name, &args.launch, builder, app);
        let l = &args.launch;
        let how = if l.listen.is_some() || l.join.is_some() || l.slurm || l.k8s {
            "distributed run"
        } else if l.checkpoint.is_some() {
            "run with checkpoint"
        } else if l.dashboard.is_some() {
            "run with a dashboard"
        } else {
            "run with a report"
        };
        eprintln!("{name}: {how}, {:.3} s", start.elapsed().as_secs_f64());
        return r;
    }
    let mut builder = builder.track_progress(satin::net::status_line_wanted(args.launch.no_progress));
    if let Some(w) = args.launch.workers {
        builder = builder.workers(w as usize);
    }
    let rt = std::sync::Arc::new(builder.build().unwrap_or_else(|e| {
        eprintln!("{name}: error: {e}");
        std::process::exit(1)
    }));
    let r = satin::net::run_here(&rt, app);
    if let Some(path) = &args.launch.stats_json {
        if let Err(e) = satin::net::write_local_stats(path, &rt) {
            eprintln!("{name}: error: cannot write the statistics to {}: {e}", path.display());
            std::process::exit(1)
        }
    }
    let s = rt.stats();
    eprintln!(
        "{name}: {} workers, {:.3} s, {} spawns, {} steals, {} promotions, {} released, fault tolerance {}",
        rt.workers(),
        start.elapsed().as_secs_f64(),
        s.spawns,
        s.steals,
        s.promotions,
        s.released,
        if args.no_ft { "off" } else { "on" }
    );
    satin::net::send_answer_to_file(name, &args.launch);
    r
}

/// Reads an input file or exits with status 2 and a message that names it.
pub fn read_input(name: &str, path: &std::path::Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| {
        eprintln!("{name}: error: cannot read {}: {e}", path.display());
        std::process::exit(2)
    })
}

/// Exits with status 2 and a message: for input that does not parse.
pub fn bad_input(name: &str, what: impl std::fmt::Display) -> ! {
    eprintln!("{name}: error: {what}");
    std::process::exit(2)
}
