//! What the property tests over random schedules share.

/// A simulation builds and drops its world many times a second: with the
/// system allocator a third of the tests' time went to the kernel, mapping
/// and faulting in the pages freed a moment before (mimalloc keeps them).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The failures of `check` over `seeds`, in seed order: the seeds are
/// shared out over the machine's cores, each core taking the next seed
/// when it is done with one (each run of the simulator is deterministic
/// and independent of the others; a few take much longer than the rest,
/// so a fixed share per core would leave one core idle at the end).
pub fn failures(seeds: impl IntoIterator<Item = u64>, check: impl Fn(u64) -> Result<(), String> + Sync) -> Vec<String> {
    let seeds: Vec<u64> = seeds.into_iter().collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(seeds.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut found: Vec<(usize, String)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                let (seeds, check, next) = (&seeds, &check, &next);
                s.spawn(move || {
                    let mut found = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(&seed) = seeds.get(i) else { return found };
                        if let Err(e) = check(seed) {
                            found.push((i, e));
                        }
                    }
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().expect("a checking thread panicked")).collect()
    });
    found.sort_by_key(|(i, _)| *i);
    found.into_iter().map(|(_, e)| e).collect()
}
