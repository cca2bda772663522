//! A program's annotated calls as the runs of one node: [`try_run`].

use std::cell::{Cell, RefCell};
use std::net::SocketAddr;
use std::panic::{self, AssertUnwindSafe};
use std::rc::Rc;
use std::sync::Arc;

use super::contract::Report;
use super::driver::{Again, RunEnd};
use super::ending::{Ended, NodeEnded, RunError};
use super::front::{first_steps, load_pool, FirstSteps};
use super::tls::Pool;
use super::{
    init_logging, k8s, node_spec, rejoin, report, session, shown_at_exit, slurm_launch, status_line, supervise, FtArg,
    Launch,
};
use satin_core::Builder;

/// How many nice values a distributed node's workers run below its
/// network threads.
const WORKER_PRIORITY_STEPS: i32 = 5;

/// What the node that ends the run as master says on stderr.
pub(super) const MASTER_LINE: &str = "the run is over; this node is its master";
/// What the master says when the node the run started on shows the answer.
const ORIGIN_SHOWS_LINE: &str = "the answer is shown by the node the run started on";
/// What the node the run started on says when another ended it as master.
const ORIGIN_LINE: &str = "the run is over; its master is another node, the answer is shown here (the node the run \
                           started on)";
/// What a suspended node says on stderr.
const SUSPENDED_LINE: &str = "the run is suspended; run the same command again to resume it from its checkpoint";

/// Runs `f` as `args` say and returns how this process's part ended;
/// never exits the process ([`super::run`] is the helper that does, for
/// binaries).
///
/// - Neither `--listen`, `--join` nor `--local-nodes`: `f` runs on a pool
///   built by `builder` (`--workers` overrides its worker count):
///   [`Ended::Returned`] with `shows` true.
/// - `--listen`/`--join`: this process is one node of a distributed run.
///   Each annotated call `f` makes is a run's root job, on the same nodes
///   (every node runs the same `f` with the same arguments, so the k-th
///   call is the same run everywhere, and every node gets each answer).
///   Every node returns [`Ended::Returned`]; `shows` says which one
///   shows the last answer: the node the run started on (the `--listen`
///   node, SLURM task 0, pod 0) while it is a member, else the master. A node whose part ends without an
///   answer (it left, lost the majority, was suspended) ends `f` early,
///   by unwinding from the annotated call it was in — a `catch_unwind` of
///   the program's own between would hold it up — and returns
///   [`Ended::Left`] or the error.
/// - `--local-nodes N`: starts N such processes and prints the master's
///   standard output ([`Ended::Supervised`]).
/// - `--init-pool FILE`: writes a new pool credential
///   ([`Ended::PoolWritten`]).
pub fn try_run<R: Send>(
    app: &str,
    args: &Launch,
    builder: Builder,
    f: impl FnOnce() -> R + Send,
) -> Result<Ended<R>, RunError> {
    match first_steps(app, args, (1, "one to run it"), supervise::Kind::Tree)? {
        FirstSteps::PoolWritten(file) => return Ok(Ended::PoolWritten(file)),
        FirstSteps::Supervised => return Ok(Ended::Supervised),
        FirstSteps::Run => {}
    }
    let from_environment;
    let (args, label) = if args.slurm || args.k8s {
        let launched = if args.slurm { slurm_launch(args) } else { k8s::launch(args) };
        let (launch, rank) = launched.map_err(RunError::Failed)?;
        from_environment = launch;
        (&from_environment, Some(rank.to_string()))
    } else {
        (args, None)
    };
    let mut builder = builder;
    if let Some(w) = args.workers {
        builder = builder.workers(w as usize);
    }
    // The first node (or a run on one machine) estimates the progress
    // when a status line or the dashboard shows it; under a supervisor
    // that draws the line or serves the dashboard, every node (any may
    // become master).
    let status = status_line::status_line_wanted(args.no_progress) && args.join.is_none();
    let told = crate::contract::ChildEnv::current();
    let reports = told.status_to_supervisor || told.board_to_supervisor;
    // A node's workers yield to its network: beats are read on time
    // however busy the cores are (`sched/priority.rs`).
    let builder = if args.is_distributed() { builder.lower_worker_priority(WORKER_PRIORITY_STEPS) } else { builder };
    let runtime = builder
        .track_progress(status || reports || args.dashboard.is_some() || args.report.is_some())
        .build()
        .map_err(|e| RunError::Failed(e.to_string()))?;
    if args.checkpoint.is_some() && args.ft != FtArg::Table {
        return Err(RunError::Failed(
            "--checkpoint saves what the result table gets: it needs --ft table (the default)".into(),
        ));
    }
    // A local run that keeps a checkpoint is a run of one node.
    let lone = !args.is_distributed() && args.checkpoint.is_some();
    if !args.is_distributed() && !lone {
        let runtime = Arc::new(runtime);
        let board = if args.dashboard.is_some() || args.report.is_some() {
            let open = crate::dashboard::local::LocalDashboard::open(app, args.dashboard, Arc::clone(&runtime));
            Some(open.map_err(|e| RunError::Failed(format!("cannot serve the dashboard: {e}")))?)
        } else {
            None
        };
        let value = status_line::run_here(&runtime, f);
        if let Some(board) = board {
            let report = args.report.as_deref();
            board.close(report).map_err(|e| {
                let file = report.map(|p| p.display().to_string()).unwrap_or_default();
                RunError::Failed(format!("cannot write the report to {file}: {e}"))
            })?;
        }
        if let Some(path) = &args.stats_json {
            report::write_local_stats(path, &runtime)
                .map_err(|e| RunError::Failed(format!("cannot write the statistics to {}: {e}", path.display())))?;
        }
        return Ok(Ended::Returned { value, shows: true });
    }
    init_logging();
    // A node this process started before and kept for its answer ends
    // first (its program went on to start another).
    shown_at_exit::close_all();
    let pool = if lone { Pool::ephemeral().map_err(|e| RunError::Failed(e.to_string()))? } else { load_pool(args)? };
    let mut spec = node_spec(app, args, label, told)?;
    if lone {
        spec.me.listen = SocketAddr::from(([127, 0, 0, 1], 0));
        spec.io.lone = true;
        spec.io.progress = false;
    }
    let runtime = Arc::new(runtime);
    let local_pool = Arc::clone(&runtime);
    let app_name = app.to_string();
    let stats_json = args.stats_json.clone();
    let supervised = spec.me.supervised;
    // The node lives as long as the program makes annotated calls: each
    // is a run of the same cluster (`proto/node/sequence.rs`).
    let session: Rc<RefCell<Option<session::Session>>> = Rc::default();
    let shows_last_answer = Rc::new(Cell::new(false));
    let (in_runner, last_shows) = (Rc::clone(&session), Rc::clone(&shows_last_answer));
    let mut first = Some((spec, pool, runtime));
    let runner: satin_core::dist::RootRunner = Box::new(move |key, payload| {
        let (end, report) = match first.take() {
            Some((spec, pool, runtime)) => {
                let started = session::Session::start(spec, pool, runtime, (key, payload));
                let ended = started.wait();
                *in_runner.borrow_mut() = Some(started);
                ended
            }
            None => {
                let session = in_runner.borrow();
                session.as_ref().expect("started by the first call").next((key, payload))
            }
        };
        if let (Some(r), Some(path)) = (&report, &stats_json) {
            if let Err(e) = report::write_nodes(path, vec![report::node_json(&r.label, r.id, &r.per_run())]) {
                eprintln!("{app_name}: cannot write the statistics to {}: {e}", path.display());
            }
        }
        // (A node alone says what its checkpoint holds once it is closed;
        // a supervisor prints its nodes' figures as a table.)
        if let Some(r) = report.filter(|_| !lone && !supervised) {
            eprintln!("{app_name}: node {}: {}", r.label, r.stats_line());
        }
        match end {
            RunEnd::Answer { value: Some(value), master, shows } => {
                if master && !lone {
                    eprintln!("{app_name}: {MASTER_LINE}");
                    Report::Master.tell();
                    if !shows {
                        eprintln!("{app_name}: {ORIGIN_SHOWS_LINE}");
                    }
                } else if shows {
                    eprintln!("{app_name}: {ORIGIN_LINE}");
                    Report::OriginShows.tell();
                }
                // Every node's program goes on to its next call; what it
                // does after its last is for the node that shows it.
                last_shows.set(shows);
                value
            }
            RunEnd::Answer { value: None, .. } | RunEnd::Left => NodeEnded::unwind(None),
            RunEnd::Failed(reason) => NodeEnded::unwind(Some(RunError::Failed(reason))),
            RunEnd::Suspended => NodeEnded::unwind(Some(RunError::Suspended(SUSPENDED_LINE.into()))),
            RunEnd::LostMajority { waited } => NodeEnded::unwind(Some(RunError::LostMajority { waited })),
            RunEnd::Expelled { by, again, carry, was_origin } => {
                // Join again as a new node through the member that said so:
                // the run goes on, and what this node finished is reused.
                let why = match again {
                    Again::No { removed } => format!("it was removed {removed} times; it does not join again"),
                    Again::Through(Some(contact)) => {
                        eprintln!(
                            "{app_name}: the majority removed this node from the run while it was cut off (told \
                             by {by}); joining again through {contact} as a new node, with {} finished results",
                            carry.len()
                        );
                        rejoin::rejoin(contact, &carry, was_origin, told)
                    }
                    Again::Through(None) => "the majority cannot reach it".to_string(),
                };
                NodeEnded::unwind(Some(RunError::Expelled(format!(
                    "the majority removed this node from the run while it was cut off (told by {by}); it left \
                     ({why}; no answer is printed here)"
                ))))
            }
        }
    });
    let returned = panic::catch_unwind(AssertUnwindSafe(|| {
        satin_core::dist::with_local_pool(local_pool, || satin_core::dist::with_root_runner(runner, f))
    }));
    // The node's last frames go out before the process ends — for the
    // node that shows the answer, once the program has shown it.
    let shows_here = returned.is_ok() && shows_last_answer.get() && !lone && !supervised;
    let last = match session.borrow_mut().take() {
        Some(s) if shows_here => {
            shown_at_exit::park(s);
            None
        }
        Some(s) => s.close(returned.is_ok()),
        None => None,
    };
    let value = match returned {
        Ok(value) => value,
        Err(payload) => match payload.downcast::<NodeEnded>() {
            Ok(ended) => return ended.0.map_or(Ok(Ended::Left), Err),
            Err(payload) => panic::resume_unwind(payload),
        },
    };
    if let (true, Some(r), Some(file)) = (lone, last, &args.checkpoint) {
        eprintln!(
            "{app}: checkpoint {}: {} results loaded, {} reused, {} records written ({} bytes)",
            file.display(),
            r.stats.records_loaded,
            r.table_hits,
            r.records_written,
            r.checkpoint_bytes
        );
    }
    Ok(Ended::Returned { value, shows: lone || shows_last_answer.get() })
}
