//! What the property tests over random schedules share.

/// The failures of `check` over `seeds`, in seed order: the seeds are
/// shared out over the machine's cores (each run of the simulator is
/// deterministic and independent of the others).
pub fn failures(seeds: impl IntoIterator<Item = u64>, check: impl Fn(u64) -> Result<(), String> + Sync) -> Vec<String> {
    let seeds: Vec<u64> = seeds.into_iter().collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(seeds.len().max(1));
    let mut found: Vec<(usize, String)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                let (seeds, check) = (&seeds, &check);
                s.spawn(move || {
                    (t..seeds.len())
                        .step_by(threads)
                        .filter_map(|i| check(seeds[i]).err().map(|e| (i, e)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().expect("a checking thread panicked")).collect()
    });
    found.sort_by_key(|(i, _)| *i);
    found.into_iter().map(|(_, e)| e).collect()
}
