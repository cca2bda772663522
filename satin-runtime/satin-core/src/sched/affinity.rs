//! Pinning worker threads to cores (`Builder::pin_workers`).
//!
//! Unpinned, the kernel may wake a parked worker on the core of the worker
//! that woke it and leave both there for several milliseconds before its
//! load balancer moves one: a run that starts after the pool slept can then
//! spend its first milliseconds on one core. Pinned, each worker has a core
//! of its own from the first instruction.

/// The cores this process may run on, in increasing order (empty where the
/// operating system does not tell).
pub(crate) fn allowed_cores() -> Vec<usize> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: `set` is a plain bit set that sched_getaffinity fills in;
        // the size passed is its own.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
                return Vec::new();
            }
            (0..libc::CPU_SETSIZE as usize).filter(|&c| libc::CPU_ISSET(c, &set)).collect()
        }
    }
    #[cfg(not(target_os = "linux"))]
    Vec::new()
}

/// Pins the calling thread to `core`; false if the operating system refused
/// (the thread then stays unpinned, which is only slower).
pub(crate) fn pin_current_thread(core: usize) -> bool {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: as above; `core` < CPU_SETSIZE since it came from
        // `allowed_cores`.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(core, &mut set);
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = core;
        false
    }
}
