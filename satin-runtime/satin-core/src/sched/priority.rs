//! Worker threads a few steps below the node's network
//! (`Builder::lower_worker_priority`).
//!
//! A node's event loop and its network threads are idle most of the time
//! and must answer at once when a beat or a vote arrives: a failure
//! detector whose node cannot read its beats for a second while its
//! workers — one per core — keep every core busy accuses live peers.
//! Lowering the workers' priority (a higher nice value, which needs no
//! privilege) lets the scheduler run the network as soon as it wakes; the
//! workers lose nothing when it sleeps.

/// Raises the calling thread's nice value by `steps` (Linux: per
/// thread); false if the operating system refused or does not support it.
pub(crate) fn lower_current_thread(steps: i32) -> bool {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: gettid has no preconditions; getpriority and setpriority
        // only read their integer arguments.
        unsafe {
            let tid = libc::gettid() as libc::id_t;
            let now = libc::getpriority(libc::PRIO_PROCESS, tid);
            libc::setpriority(libc::PRIO_PROCESS, tid, (now + steps).min(19)) == 0
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = steps;
        false
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    #[test]
    fn a_thread_lowers_its_own_priority_only() {
        // SAFETY: getpriority only reads its integer arguments; gettid has
        // no preconditions.
        let before = unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
        let lowered = std::thread::spawn(|| {
            assert!(super::lower_current_thread(3));
            // SAFETY: as above.
            unsafe { libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t) }
        })
        .join()
        .expect("the thread runs");
        assert_eq!(lowered, (before + 3).min(19));
        // SAFETY: as above.
        assert_eq!(unsafe { libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t) }, before);
    }
}
