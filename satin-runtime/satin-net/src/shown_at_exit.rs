//! The node that shows the last answer stays in the run until its
//! program has shown it.
//!
//! [`super::try_run`] returns the answer to the program, which prints it
//! afterwards: when the call returns, nothing is shown yet. Were the node
//! to end there, the others would hear that the answer is shown
//! (`Msg::Shown`, `Msg::ProgramOver`) and end too — and a kill of this
//! process before its print would leave no answer anywhere (seen in the
//! fault campaign: the first node killed by hand at the very end of a
//! run). So the node stays, its session parked here, and says so when the
//! process ends (an `atexit` handler, after `main` returned and its
//! output was flushed) — or when the program has gone on for
//! [`GRACE`] without ending, for a program that does more after its
//! answer. Killed before that, the others take it for a shower that may
//! have shown nothing, and the next master shows the answer: twice at
//! worst, never not at all.

use std::sync::{Arc, Mutex, Once};
use std::time::Duration;

use super::session::Session;

/// How long a program may go on after its answer before the others are
/// told it showed it anyway.
pub(crate) const GRACE: Duration = Duration::from_secs(1);

/// How long the end of the process waits for the node's last frames.
const CLOSE_LIMIT: Duration = Duration::from_secs(10);

/// One parked session; closed once, by whichever comes first.
type Parked = Arc<Mutex<Option<Session>>>;

/// Every session parked and not closed yet.
static PARKED: Mutex<Vec<Parked>> = Mutex::new(Vec::new());

/// Keeps `session` running until the process ends, or [`GRACE`] has
/// passed.
pub(crate) fn park(session: Session) {
    static AT_EXIT: Once = Once::new();
    AT_EXIT.call_once(|| {
        // SAFETY: `close_all_at_exit` is an `extern "C" fn()` that never
        // unwinds (it catches every panic) and lives as long as the program.
        let registered = unsafe { libc::atexit(close_all_at_exit) } == 0;
        if !registered {
            tracing::warn!("cannot register the end of the process: the answer is said to be shown after {GRACE:?}");
        }
    });
    let parked: Parked = Arc::new(Mutex::new(Some(session)));
    lock(&PARKED).push(Arc::clone(&parked));
    let grace = std::thread::Builder::new().name("satin-shown".into()).spawn(move || {
        std::thread::sleep(GRACE);
        close(&parked);
    });
    if grace.is_err() {
        // No thread for the grace: the end of the process closes it.
        tracing::warn!("cannot start the grace timer; the others wait for this process to end");
    }
}

/// Closes every parked session now (a new node is about to start in
/// this process, or the process ends).
pub(crate) fn close_all() {
    let all: Vec<Parked> = std::mem::take(&mut *lock(&PARKED));
    for parked in &all {
        close(parked);
    }
}

extern "C" fn close_all_at_exit() {
    // A panic must not cross into C.
    let _ = std::panic::catch_unwind(close_all);
}

fn close(parked: &Parked) {
    // Closed under the lock: the end of the process, come while the grace
    // timer closes it, waits until the last frames are out.
    let mut slot = lock(parked);
    if let Some(session) = slot.take() {
        session.close_within(CLOSE_LIMIT);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
