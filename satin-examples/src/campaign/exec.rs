//! Running one drawn run as real processes, and what came of it.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use super::draw::{Layout, Run, Workload};

/// How a run ended, as the campaign counts it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The right answer, printed by exactly one process.
    RightOnce,
    /// An answer that is not the fault-free one.
    Wrong(String),
    /// The answer printed by more than one process.
    Twice,
    /// No answer, and every process ended.
    None(String),
    /// Still running at the time limit (killed then).
    Hang,
    /// A process died of a signal nobody sent, or panicked.
    Crash(String),
}

impl Outcome {
    /// Its class, as the campaign's table names it.
    pub fn class(&self) -> &'static str {
        match self {
            Outcome::RightOnce => "right once",
            Outcome::Wrong(_) => "wrong",
            Outcome::Twice => "printed twice",
            Outcome::None(_) => "none",
            Outcome::Hang => "hang",
            Outcome::Crash(_) => "crash",
        }
    }
}

/// Where the example binaries are, and a scratch directory.
pub struct Bench {
    bins: PathBuf,
    scratch: PathBuf,
    pool: PathBuf,
}

impl Bench {
    /// The binaries beside this one; a scratch directory under `scratch`.
    pub fn new(scratch: &Path) -> Result<Bench, String> {
        let me = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
        let bins = me.parent().ok_or("this program has no directory")?.to_path_buf();
        std::fs::create_dir_all(scratch).map_err(|e| format!("cannot make {}: {e}", scratch.display()))?;
        let pool = scratch.join("pool.pem");
        let _ = std::fs::remove_file(&pool);
        let out = Command::new(bins.join("nqueens"))
            .arg("--init-pool")
            .arg(&pool)
            .output()
            .map_err(|e| format!("cannot run nqueens (build the examples first): {e}"))?;
        if !out.status.success() {
            return Err(format!("--init-pool failed: {}", String::from_utf8_lossy(&out.stderr)));
        }
        Ok(Bench { bins, scratch: scratch.to_path_buf(), pool })
    }

    fn command(&self, w: &Workload) -> Command {
        let mut c = Command::new(self.bins.join(w.bin));
        c.args(&w.args).arg("--no-progress").stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        c
    }

    /// The workload's answer in one process without faults, and how long
    /// it took.
    pub fn reference(&self, w: &Workload) -> Result<(String, Duration), String> {
        let start = Instant::now();
        let out = self.command(w).output().map_err(|e| format!("cannot run {}: {e}", w.bin))?;
        let took = start.elapsed();
        let text = String::from_utf8_lossy(&out.stdout);
        match (out.status.success(), text.lines().last()) {
            (true, Some(answer)) => Ok((answer.to_string(), took)),
            _ => Err(format!("{} {:?} fails without faults: {}", w.bin, w.args, String::from_utf8_lossy(&out.stderr))),
        }
    }

    /// Runs `run` within `limit`; `want` is the fault-free answer.
    pub fn run(&self, run: &Run, want: &str, limit: Duration) -> (Outcome, String) {
        match &run.layout {
            Layout::Supervised { chaos, resumes, retries } => {
                self.supervised(run, chaos, *resumes, *retries, want, limit)
            }
            Layout::ByHand { kills } => self.by_hand(run, kills, want, limit),
        }
    }

    fn supervised(
        &self,
        run: &Run,
        chaos: &str,
        resumes: bool,
        retries: bool,
        want: &str,
        limit: Duration,
    ) -> (Outcome, String) {
        let checkpoint = self.scratch.join(format!("run-{}.ckpt", run.seed));
        let _ = std::fs::remove_file(&checkpoint);
        let start = Instant::now();
        let mut log = String::new();
        // A suspended run, or one that lost every node, goes on with the
        // same command (without the faults), as the guide says.
        for attempt in 0..3 {
            let mut c = self.command(&run.workload);
            c.args(["--local-nodes", &run.nodes.to_string()]);
            if attempt == 0 {
                c.args(["--chaos", chaos]);
            }
            if resumes {
                c.arg("--checkpoint").arg(&checkpoint).args(["--checkpoint-interval", "100ms"]);
            }
            if retries {
                c.args(["--retries", "50"]);
            }
            let Some(end) = finish(c, limit.saturating_sub(start.elapsed())) else {
                return (Outcome::Hang, log);
            };
            log.push_str(&end.stderr);
            let interrupted = matches!(end.status.code(), Some(75) | Some(3));
            if resumes && interrupted && end.stdout.trim().is_empty() {
                continue;
            }
            return (judge(&[end], want, &[]), log);
        }
        (Outcome::None("interrupted three times".into()), log)
    }

    fn by_hand(&self, run: &Run, kills: &[(u32, u64)], want: &str, limit: Duration) -> (Outcome, String) {
        let port = match std::net::UdpSocket::bind("127.0.0.1:0").and_then(|s| s.local_addr()) {
            Ok(a) => a.port(),
            Err(e) => return (Outcome::None(format!("no free port: {e}")), String::new()),
        };
        let addr = format!("127.0.0.1:{port}");
        let mut children: Vec<Child> = Vec::new();
        for i in 0..run.nodes {
            let mut c = self.command(&run.workload);
            c.arg("--pool").arg(&self.pool).args(["--expect-nodes", &run.nodes.to_string()]);
            if i == 0 {
                c.args(["--listen", &addr]);
            } else {
                c.args(["--join", &addr, "--listen", "127.0.0.1:0"]);
            }
            match c.spawn() {
                Ok(child) => children.push(child),
                Err(e) => return (Outcome::None(format!("cannot start a node: {e}")), String::new()),
            }
        }
        let start = Instant::now();
        let mut killed = Vec::new();
        let mut kills: Vec<(u32, u64)> = kills.to_vec();
        kills.sort_by_key(|k| k.1);
        for (node, ms) in kills {
            std::thread::sleep(Duration::from_millis(ms).saturating_sub(start.elapsed()));
            let _ = children[node as usize].kill();
            killed.push(node as usize);
        }
        let ends: Vec<Option<End>> =
            children.into_iter().map(|c| wait(c, limit.saturating_sub(start.elapsed()))).collect();
        let log = ends.iter().flatten().map(|e| e.stderr.as_str()).collect::<Vec<_>>().join("\n");
        if ends.iter().any(Option::is_none) {
            return (Outcome::Hang, log);
        }
        let ends: Vec<End> = ends.into_iter().flatten().collect();
        (judge(&ends, want, &killed), log)
    }
}

/// What a process left.
struct End {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

fn finish(mut c: Command, limit: Duration) -> Option<End> {
    let child = c.spawn().ok()?;
    wait(child, limit)
}

/// Waits for `child` at most `limit` (then kills it: `None`), reading its
/// output meanwhile.
fn wait(mut child: Child, limit: Duration) -> Option<End> {
    let mut out = child.stdout.take().expect("piped");
    let mut err = child.stderr.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + limit;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() >= deadline => break None,
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(_) => break None,
        }
    };
    let Some(status) = status else {
        // A supervisor's nodes end with it (their parent-death signal).
        let _ = child.kill();
        let _ = child.wait();
        return None;
    };
    let stdout = reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    Some(End { status, stdout, stderr })
}

/// The outcome of processes that all ended; `killed`: the ones killed on
/// purpose.
fn judge(ends: &[End], want: &str, killed: &[usize]) -> Outcome {
    use std::os::unix::process::ExitStatusExt;
    for (i, e) in ends.iter().enumerate() {
        if e.stderr.contains("panicked") {
            return Outcome::Crash(format!("process {i} panicked"));
        }
        if let Some(sig) = e.status.signal().filter(|_| !killed.contains(&i)) {
            return Outcome::Crash(format!("process {i} died of signal {sig}"));
        }
    }
    // Every line any process printed: a supervisor passes on what each of
    // its nodes prints, so an answer shown twice is two lines there.
    let answers: Vec<&str> = ends.iter().flat_map(|e| e.stdout.lines()).filter(|l| !l.trim().is_empty()).collect();
    match answers.as_slice() {
        [] => Outcome::None(format!("exit statuses {:?}", ends.iter().map(|e| e.status.code()).collect::<Vec<_>>())),
        [a] if *a == want => Outcome::RightOnce,
        [a] => Outcome::Wrong(a.to_string()),
        _ if answers.iter().all(|a| *a == want) => Outcome::Twice,
        _ => Outcome::Wrong(answers.join(" | ")),
    }
}
