//! The helpers for binaries: what [`super::try_run`] and friends return,
//! said on stderr and turned into the process's exit status. The only
//! place in the library that ends the process.

use super::ending::{Ended, RunError, USAGE_STATUS};
use super::workflow::{try_run_workflow, WorkflowOptions, WorkflowRun};
use super::{try_run, Launch, Split};
use satin_core::Builder;
use satin_dag::Workflow;

/// Reading the command line where the process may end: here, the only
/// place the library ends the process, not beside the flags (`launch.rs`).
impl Launch {
    /// Takes this crate's flags (`--listen`, `--join`, `--local-nodes`,
    /// `--workers`, `--chaos`, … — the examples' flags) out of the
    /// program's command line, for a program that parses its own: returns
    /// them and the program's own arguments (its name first), in order.
    /// `--satin-help` prints them and exits; a bad value, or an unknown
    /// flag one or two letters away from one of satin's (`--lisen`), exits
    /// with status 2 and a message. After `--` everything is the program's.
    ///
    /// ```no_run
    /// let (launch, args) = satin::net::Launch::from_env("myprog");
    /// let n: u32 = args[1].parse().expect("a number");
    /// # fn work(n: u32) -> u32 { n }
    /// let answer = satin::net::run("myprog", &launch, satin::Runtime::builder(), || work(n));
    /// println!("{answer}");
    /// ```
    pub fn from_env(app: &str) -> (Launch, Vec<String>) {
        launch_from_env(app, &[])
    }

    /// [`Launch::from_env`] for a program with flags of its own that look
    /// like satin's (see [`Launch::from_args_with`]).
    pub fn from_env_with(app: &str, own_flags: &[&str]) -> (Launch, Vec<String>) {
        launch_from_env(app, own_flags)
    }
}

/// [`Launch::from_args`] on this process's command line; help goes to
/// standard output and ends the process with status 0, a bad flag to
/// standard error with status 2, and `--init-pool FILE` is done at once
/// ([`init_pool_if_asked`]).
pub(super) fn launch_from_env(app: &str, own_flags: &[&str]) -> (Launch, Vec<String>) {
    // The program's own arguments come next; a credential needs none.
    init_pool_if_asked(app);
    match Launch::from_args_with(app, std::env::args(), own_flags) {
        Ok(Split::Run(launch, own)) => (*launch, own),
        Ok(Split::Help(text)) => {
            // A closed pipe (`| head`) is not an error worth a panic.
            let _ = std::io::Write::write_all(&mut std::io::stdout(), format!("{text}\n").as_bytes());
            std::process::exit(0)
        }
        Err(e) => {
            eprintln!("{app}: error: {e}");
            std::process::exit(USAGE_STATUS)
        }
    }
}

/// For a binary whose own command line has required arguments: if this
/// process was started with `--init-pool FILE`, writes the pool
/// credential and ends the process (status 0, or 1 with the reason) —
/// before the program's parser can ask for arguments that making a
/// credential does not need. Call it first in `main`; otherwise it
/// returns and the program parses its command line as usual.
pub fn init_pool_if_asked(app: &str) {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = super::front::init_pool_arg(&args) else { return };
    match super::front::write_pool(app, &path) {
        Ok(_) => std::process::exit(0),
        Err(e) => {
            eprintln!("{app}: error: {e}");
            std::process::exit(e.exit_status())
        }
    }
}

/// Runs `f` as `args` say ([`try_run`]) and returns its result on the
/// node that shows the answer. Every other way this process's part can
/// end, ends the process: status 0 for a node whose answer is another's
/// to show (or that left), for `--init-pool` and for a supervisor whose
/// run gave an answer; otherwise the status of the [`RunError`], after
/// its message on stderr.
pub fn run<R: Send>(app: &str, args: &Launch, builder: Builder, f: impl FnOnce() -> R + Send) -> R {
    finish(app, args, try_run(app, args, builder, f))
}

/// For a program that shows its answer itself (a run on this machine's
/// cores through [`super::run_here`]; [`run`] does it for distributed
/// runs): with `--answer-file FILE`, this process's standard output goes
/// into FILE from now on — call it just before printing the answer. A file
/// that cannot be written is said on stderr, and the answer stays on
/// standard output.
pub fn send_answer_to_file(app: &str, args: &Launch) {
    let Some(file) = &args.answer_file else { return };
    if let Err(e) = super::answer_file::redirect_stdout(file) {
        eprintln!("{app}: error: cannot write the answer to {}: {e}; it goes to standard output", file.display());
    }
}

/// Runs `workflow` as `args` say ([`try_run_workflow`]); ends the process
/// as [`run`] does.
pub fn run_workflow_with(app: &str, args: &Launch, workflow: &Workflow, options: &WorkflowOptions) -> WorkflowRun {
    finish(app, args, try_run_workflow(app, args, workflow, options))
}

/// The value for the node that shows it (with `--answer-file`, its
/// standard output moved into the file); the end of the process for the
/// others.
fn finish<R>(app: &str, args: &Launch, ended: Result<Ended<R>, RunError>) -> R {
    // Under a supervisor every node that saw the end reports, and the
    // supervisor prefers the output of the node that shows the answer:
    // it may be killed between its answer and its output.
    let supervised = crate::contract::ChildEnv::current().supervised;
    match ended {
        Ok(Ended::Returned { value, shows }) if shows || supervised => {
            if !supervised {
                send_answer_to_file(app, args);
            }
            value
        }
        Ok(_) => std::process::exit(0),
        Err(e) => {
            if e.is_error() {
                eprintln!("{app}: error: {e}");
            } else {
                eprintln!("{app}: {e}");
            }
            std::process::exit(e.exit_status())
        }
    }
}
