//! The launch front end both kinds of run share ([`try_run`](super::try_run)
//! and [`try_run_workflow`](super::try_run_workflow)): the steps a launch
//! takes before a run of either kind begins, decided the same way with the
//! same words.

use std::path::PathBuf;

use super::ending::RunError;
use super::{init_pool, supervise, Launch, Pool};

/// What the launch's first steps did.
pub(crate) enum FirstSteps {
    /// `--init-pool FILE`: the credential is written; nothing else runs.
    PoolWritten(PathBuf),
    /// `--local-nodes N`: this process supervised the cluster to its end.
    Supervised,
    /// Neither: the run is this process's to make.
    Run,
}

/// Writes the pool credential (`--init-pool`, which needs nothing else),
/// checks the flags, and supervises a local cluster of `--local-nodes`
/// (at least `min_nodes`, for the reason `why_min`) of the `kind` of run
/// this is.
pub(crate) fn first_steps(
    app: &str,
    args: &Launch,
    (min_nodes, why_min): (u32, &str),
    kind: supervise::Kind,
) -> Result<FirstSteps, RunError> {
    if let Some(path) = &args.init_pool {
        return write_pool(app, path).map(FirstSteps::PoolWritten);
    }
    args.check().map_err(RunError::Usage)?;
    if let Some(n) = args.local_nodes {
        if n < min_nodes {
            return Err(RunError::Usage(format!(
                "--local-nodes {n}: this run needs at least {min_nodes} nodes: {why_min}"
            )));
        }
        supervise::run(app, args, n, kind)?;
        return Ok(FirstSteps::Supervised);
    }
    Ok(FirstSteps::Run)
}

/// The pool credential a node of a distributed run proves itself with.
pub(crate) fn load_pool(args: &Launch) -> Result<Pool, RunError> {
    let path = args.pool.as_ref().ok_or_else(|| {
        RunError::Failed(
            "a distributed run needs the pool credential: make one with --init-pool FILE, copy it to every \
             machine and pass it with --pool FILE or SATIN_POOL=FILE"
                .into(),
        )
    })?;
    Pool::load(path).map_err(|e| RunError::Failed(e.to_string()))
}

/// Writes a new pool credential to `path` (`--init-pool`) and says where.
pub(crate) fn write_pool(app: &str, path: &std::path::Path) -> Result<PathBuf, RunError> {
    let file = init_pool(path).map_err(|e| RunError::Failed(e.to_string()))?;
    let fingerprint = Pool::load(&file).map(|p| p.fingerprint()).map_err(|e| RunError::Failed(e.to_string()))?;
    eprintln!(
        "{app}: wrote a new pool credential to {} (fingerprint {fingerprint}); copy it to every machine of the pool",
        file.display()
    );
    Ok(file)
}

/// The file after `--init-pool` (or in `--init-pool=FILE`) on a command
/// line, before any `--` (after which the arguments are the program's).
pub(crate) fn init_pool_arg(args: &[String]) -> Option<PathBuf> {
    let mut args = args.iter().take_while(|a| a.as_str() != "--");
    while let Some(a) = args.next() {
        if a == "--init-pool" {
            return args.next().map(PathBuf::from);
        }
        if let Some(file) = a.strip_prefix("--init-pool=") {
            return Some(PathBuf::from(file));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::init_pool_arg;

    fn arg(line: &[&str]) -> Option<String> {
        let line: Vec<String> = line.iter().map(|s| s.to_string()).collect();
        init_pool_arg(&line).map(|p| p.display().to_string())
    }

    #[test]
    fn the_pool_file_is_found_wherever_the_flag_stands() {
        assert_eq!(arg(&["prog", "--init-pool", "p.pem"]), Some("p.pem".into()));
        assert_eq!(arg(&["prog", "16", "--workers", "2", "--init-pool=p.pem"]), Some("p.pem".into()));
        assert_eq!(arg(&["prog", "16"]), None);
        assert_eq!(arg(&["prog", "--", "--init-pool", "p.pem"]), None, "after `--` it is the program's");
        assert_eq!(arg(&["prog", "--init-pool"]), None, "no file: clap says what is missing");
    }
}
