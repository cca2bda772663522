//! `--chaos slow` and `hang` on a real node: its worker threads are paused
//! for part of the time — a signal handler that sleeps — so its jobs run
//! `factor` times slower, or not at all, while the node's network thread
//! goes on answering keep-alives, steal requests and status questions. A
//! slow or hung node is alive; only its work lags.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// Workers run this long between pauses.
const QUANTUM: Duration = Duration::from_millis(10);

/// How long a worker sleeps in the handler (one pause).
static PAUSE_NS: AtomicU64 = AtomicU64::new(0);
/// Hung: workers stay in the handler while this is set.
static HUNG: AtomicBool = AtomicBool::new(false);

extern "C" fn on_pause(_: libc::c_int) {
    // Only atomics and nanosleep: both async-signal-safe.
    let nap = |ns: u64| {
        let ts = libc::timespec { tv_sec: (ns / 1_000_000_000) as libc::time_t, tv_nsec: (ns % 1_000_000_000) as _ };
        // SAFETY: `ts` is a valid timespec; a null remainder is allowed.
        unsafe { libc::nanosleep(&ts, std::ptr::null_mut()) };
    };
    while HUNG.load(Ordering::Relaxed) {
        nap(10_000_000);
    }
    nap(PAUSE_NS.load(Ordering::Relaxed));
}

/// The slowness of this process's workers: 1 runs them at full speed,
/// `f64::INFINITY` stops them.
pub(crate) struct Throttle {
    factor: Arc<Mutex<f64>>,
}

impl Throttle {
    /// Starts pausing the threads in `workers` (kernel thread ids) as
    /// [`Throttle::set`] says; at first not at all.
    pub(crate) fn start(workers: Vec<libc::pid_t>) -> Throttle {
        static INSTALLED: OnceLock<()> = OnceLock::new();
        INSTALLED.get_or_init(|| {
            // SAFETY: a zeroed sigaction is valid; the handler is an
            // `extern "C" fn(c_int)` that does only async-signal-safe work.
            unsafe {
                let mut act: libc::sigaction = std::mem::zeroed();
                act.sa_sigaction = on_pause as extern "C" fn(libc::c_int) as usize;
                act.sa_flags = libc::SA_RESTART;
                libc::sigemptyset(&mut act.sa_mask);
                libc::sigaction(libc::SIGUSR2, &act, std::ptr::null_mut());
            }
        });
        let factor = Arc::new(Mutex::new(1.0));
        let shared = Arc::clone(&factor);
        std::thread::spawn(move || {
            // SAFETY: getpid has no preconditions.
            let pid = unsafe { libc::getpid() };
            loop {
                let f: f64 = *shared.lock().unwrap_or_else(|e| e.into_inner());
                if f.is_infinite() {
                    HUNG.store(true, Ordering::Relaxed);
                } else {
                    HUNG.store(false, Ordering::Relaxed);
                }
                if f > 1.0 {
                    let pause = if f.is_infinite() { 0 } else { (QUANTUM.as_nanos() as f64 * (f - 1.0)) as u64 };
                    PAUSE_NS.store(pause, Ordering::Relaxed);
                    for &tid in &workers {
                        // SAFETY: tgkill on threads of this process; the
                        // handler for SIGUSR2 is installed above.
                        unsafe { libc::syscall(libc::SYS_tgkill, pid, tid, libc::SIGUSR2) };
                    }
                    std::thread::sleep(Duration::from_nanos(pause) + QUANTUM);
                } else {
                    std::thread::sleep(QUANTUM);
                }
            }
        });
        Throttle { factor }
    }

    pub(crate) fn set(&self, factor: f64) {
        *self.factor.lock().unwrap_or_else(|e| e.into_inner()) = factor.max(1.0);
    }
}
