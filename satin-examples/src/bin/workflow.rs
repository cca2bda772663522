//! `workflow [BLOCKS [SIZE]]`: a task graph of Rust functions — generate
//! BLOCKS blocks of SIZE pseudo-random numbers, sort each, merge them
//! pairwise down to one sorted sequence, and summarise it — run on the
//! processors of its fault-tolerant schedule: threads of this process, or
//! nodes (`--local-nodes N [--chaos …]`, or `--listen ADDR --nodes N` and
//! `--join ADDR`). Prints the summary (the median and a checksum of the
//! sorted sequence) first, then how the run went.

use satin::dag::{FtParams, TaskId, WorkflowBuilder};
use satin::net::{run_workflow, Launch};
use satin_examples::cli;
use satin_examples::pipeline;

fn main() {
    let (launch, args) = Launch::from_env("workflow");
    let number = |i: usize, default: usize, what: &str| -> usize {
        match args.get(i) {
            None => default,
            Some(a) => a.parse().ok().filter(|&n| (1..=1 << 24).contains(&n)).unwrap_or_else(|| {
                cli::bad_input("workflow", format_args!("{what} {a:?}: expected a whole number from 1 to 16777216"))
            }),
        }
    };
    let (blocks, size) = (number(1, 16, "BLOCKS"), number(2, 250_000, "SIZE"));
    if args.len() > 3 {
        cli::bad_input("workflow", "usage: workflow [BLOCKS [SIZE]] (and the flags of --satin-help)");
    }
    let mut w = WorkflowBuilder::new();
    // Costs in units of a million elements handled: what the schedule
    // weighs the tasks by.
    let mega = size as f64 / 1e6;
    let mut level: Vec<(TaskId, usize)> = (0..blocks)
        .map(|i| {
            let generate = w.task(&format!("generate {i}"), mega, &[], mega, move |_| pipeline::generate(i, size));
            let sort = w.task(&format!("sort {i}"), 4.0 * mega, &[generate], mega, |inputs| pipeline::sort(inputs[0]));
            (sort, 1)
        })
        .collect();
    while level.len() > 1 {
        level = level
            .chunks(2)
            .map(|pair| match pair {
                [(a, n), (b, m)] => {
                    let len = (n + m) as f64 * mega;
                    let name = format!("merge {a}+{b}");
                    (w.task(&name, len, &[*a, *b], len, |inputs| pipeline::merge(inputs[0], inputs[1])), n + m)
                }
                [single] => *single,
                _ => unreachable!("chunks of two"),
            })
            .collect();
    }
    let all = level[0].0;
    w.task("summarise", mega, &[all], 0.0, |inputs| pipeline::summarise(inputs[0]).into_bytes());
    let workflow = w.build().unwrap_or_else(|e| cli::bad_input("workflow", e));
    // A unit of cost (a million elements) is planned at 20 ms: about what
    // sorting that many takes here.
    let unit = std::time::Duration::from_millis(20);
    let run = run_workflow("workflow", &launch, &workflow, FtParams::default(), unit);
    let summary = workflow.exits().first().and_then(|&t| run.outputs[t].clone()).unwrap_or_default();
    println!("{}", String::from_utf8_lossy(&summary));
    println!(
        "{} of {} tasks on {} processors in {:.1} ms (planned {:.1} ms); duplicates run to their end {}; crashed {:?}",
        run.tasks_completed,
        run.tasks_total,
        run.procs,
        run.makespan.as_secs_f64() * 1e3,
        run.planned.as_secs_f64() * 1e3,
        run.duplicates_completed,
        run.crashed
    );
}
