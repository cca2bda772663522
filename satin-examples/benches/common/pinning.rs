//! Pinning for the benchmarks: satin's workers pin themselves
//! (`Builder::pin_workers`); rayon's threads are pinned the same way here,
//! so that both pools start every run with one thread per core.

/// Whether to pin: yes, unless SATIN_BENCH_UNPINNED=1.
pub fn wanted() -> bool {
    std::env::var("SATIN_BENCH_UNPINNED").map_or(true, |v| v != "1")
}

/// Pins the calling thread to the `i`-th core the process may use.
pub fn pin_to_core(i: usize) {
    // SAFETY: a zeroed cpu_set_t is an empty set, filled by
    // sched_getaffinity; every size passed is the set's own.
    unsafe {
        let mut allowed: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut allowed) != 0 {
            return;
        }
        let cores: Vec<usize> = (0..libc::CPU_SETSIZE as usize).filter(|&c| libc::CPU_ISSET(c, &allowed)).collect();
        if cores.is_empty() {
            return;
        }
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cores[i % cores.len()], &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// A rayon pool of `threads`, pinned as satin's workers are unless
/// SATIN_BENCH_UNPINNED=1. Its threads get 64 MiB stacks: a parallel
/// iterator's frames on every level of UTS T3 (1 572 deep) overflow the
/// default 2 MiB.
pub fn rayon_pool(threads: usize) -> rayon::ThreadPool {
    let pinned = wanted();
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .stack_size(64 << 20)
        .start_handler(move |i| {
            if pinned {
                pin_to_core(i);
            }
        })
        .build()
        .expect("rayon pool")
}
