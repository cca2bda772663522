//! The progress estimate of a runtime that tracks it: a balanced tree
//! whose leaves the test releases one at a time, so that the estimate can
//! be read at known points of the run.

use std::sync::{Arc, Condvar, Mutex};

use satin::{divide_and_conquer, Runtime};

/// Leaves started so far, and tokens that let leaves finish.
#[derive(Default)]
struct Gate {
    state: Mutex<(u32, u32)>,
    changed: Condvar,
}

impl Gate {
    /// A leaf starts, then waits for its token.
    fn pass(&self) {
        let mut s = self.state.lock().unwrap();
        s.0 += 1;
        self.changed.notify_all();
        while s.1 == 0 {
            s = self.changed.wait(s).unwrap();
        }
        s.1 -= 1;
    }

    /// Waits until `n` leaves have started (every leaf before the last of
    /// them has finished: one worker runs one leaf at a time).
    fn started(&self, n: u32) {
        let mut s = self.state.lock().unwrap();
        while s.0 < n {
            s = self.changed.wait(s).unwrap();
        }
    }

    /// Lets one leaf finish, then waits until `then_started` leaves have
    /// started.
    fn release(&self, then_started: u32) {
        self.state.lock().unwrap().1 += 1;
        self.changed.notify_all();
        self.started(then_started);
    }
}

static GATE: std::sync::OnceLock<Gate> = std::sync::OnceLock::new();

#[divide_and_conquer]
fn leaves(depth: u32) -> u64 {
    if depth == 0 {
        GATE.get_or_init(Gate::default).pass();
        return 1;
    }
    leaves(depth - 1) + leaves(depth - 1)
}

#[test]
fn a_balanced_tree_s_progress_is_the_share_of_its_finished_leaves() {
    let gate = GATE.get_or_init(Gate::default);
    let runtime = Arc::new(Runtime::builder().workers(1).track_progress(true).build().expect("a pool"));
    assert_eq!(runtime.progress().map(|e| e.fraction), Some(0.0), "nothing ran yet");
    let run = {
        let runtime = Arc::clone(&runtime);
        std::thread::spawn(move || runtime.run(|| leaves(3)))
    };
    gate.started(1);
    assert_eq!(runtime.progress().map(|e| e.fraction), Some(0.0), "leaf 1 runs: nothing finished");
    let mut seen = Vec::new();
    // Release the leaves one by one and read the estimate each time the
    // next leaf has started.
    for finished in 1..8u32 {
        gate.release(finished + 1);
        let e = runtime.progress().expect("tracked");
        seen.push(e.fraction);
        let truth = finished as f64 / 8.0;
        assert!((e.fraction - truth).abs() < 1e-9, "after {finished} of 8 leaves: estimate {} ({seen:?})", e.fraction);
        assert!(!e.done && e.tracked > 0);
    }
    gate.release(8);
    assert_eq!(run.join().expect("the run ends"), 8);
    let end = runtime.progress().expect("tracked");
    assert!(end.done && end.fraction == 1.0 && end.eta == Some(std::time::Duration::ZERO), "{end:?}");
}

#[test]
fn a_runtime_that_does_not_track_progress_says_so() {
    let runtime = Runtime::builder().workers(1).build().expect("a pool");
    assert_eq!(runtime.progress(), None);
}
