//! `--answer-file FILE`: the answer goes into a file rather than onto
//! standard output — written by whichever process shows it (the
//! supervisor of `--local-nodes`; else the node the run started on, or
//! the master if that one is gone), so a batch script finds it in one
//! place whichever node ended the run.

use std::io::{self, Write};
use std::path::Path;

/// Writes `text` to `path` whole: into a file beside it, then renamed over
/// it, so a reader never sees half an answer.
pub(super) fn write(path: &Path, text: &str) -> io::Result<()> {
    let name = path.file_name().ok_or_else(|| io::Error::other("the path names no file"))?;
    let temp = path.with_file_name(format!(".{}.{}.part", name.to_string_lossy(), std::process::id()));
    let written = std::fs::write(&temp, text).and_then(|()| std::fs::rename(&temp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written
}

/// From now on this process's standard output goes to `path` (created or
/// emptied): the program prints its answer after its run returns, and it
/// lands in the file. (The library returns the value to the program,
/// which prints it as it likes: only its standard output can be moved.)
pub(super) fn redirect_stdout(path: &Path) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let file = std::fs::File::create(path)?;
    io::stdout().flush()?;
    // SAFETY: dup2(2) on two descriptors this process owns: `file`'s is
    // open until the end of this function, and 1 is standard output,
    // which Rust's `Stdout` writes to by number (its buffer was flushed
    // above, so nothing meant for the old output is left in it).
    let done = unsafe { libc::dup2(file.as_raw_fd(), libc::STDOUT_FILENO) };
    if done < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
