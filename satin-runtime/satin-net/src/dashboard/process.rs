//! This process's own use of the machine: CPU time and memory, for the
//! figures a node reports.

use std::time::Duration;

/// CPU time this process used so far (user and system, all threads).
pub(crate) fn cpu() -> Duration {
    // SAFETY: an all-zero rusage is a valid value of the plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is valid for writes; RUSAGE_SELF names this process.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return Duration::ZERO;
    }
    let time = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    time(usage.ru_utime) + time(usage.ru_stime)
}

/// Memory this process holds now (its resident set), in bytes; 0 where
/// the system does not say (`/proc/self/statm` is Linux's).
pub(crate) fn resident_bytes() -> u64 {
    let Ok(statm) = std::fs::read_to_string("/proc/self/statm") else { return 0 };
    let pages: u64 = statm.split_whitespace().nth(1).and_then(|p| p.parse().ok()).unwrap_or(0);
    // SAFETY: sysconf reads a system constant.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    pages * page.max(0) as u64
}

#[cfg(test)]
mod tests {
    #[test]
    #[cfg(target_os = "linux")]
    fn this_process_holds_some_memory_and_used_some_cpu() {
        // (Through `black_box`: an allocation nothing reads may be left out.)
        let v: Vec<u8> = std::hint::black_box(vec![1; 8 << 20]);
        let rss = super::resident_bytes();
        assert!(rss >= 8 << 20, "{rss} bytes resident with 8 MiB touched");
        drop(v);
        let spin = std::time::Instant::now();
        while spin.elapsed() < std::time::Duration::from_millis(20) {}
        assert!(super::cpu() > std::time::Duration::ZERO);
    }
}
