//! A node the majority removed while it was cut off joins the run again as
//! a new node. The process starts over (`exec` of the same program with the
//! same arguments: the same pid and pipes, so a supervisor keeps watching
//! it) as a joiner of the member that told it, with the results it had
//! finished, which the run then reuses.

use std::net::SocketAddr;

use satin_core::checkpoint::ResultMeta;
use satin_core::JobKey;

use super::contract::ChildEnv;

/// Results carried from one incarnation to the next.
pub(super) type Carry = Vec<(JobKey, Vec<u8>, ResultMeta)>;

/// The results the previous incarnation carried over, as `env` names
/// them (the file is removed: they are published once this node is
/// welcomed).
pub(super) fn take_carry(env: &ChildEnv) -> Carry {
    let Some(path) = env.carry.clone() else { return Vec::new() };
    let bytes = std::fs::read(&path).unwrap_or_default();
    let _ = std::fs::remove_file(&path);
    postcard::from_bytes(&bytes).unwrap_or_default()
}

/// Starts this process over as a new node joining through `contact`,
/// told what `told` (what its starter told this process) says besides.
/// Returns only if it cannot (`exec` failed): why.
pub(super) fn rejoin(contact: SocketAddr, carry: &Carry, was_origin: Option<u64>, told: &ChildEnv) -> String {
    let done = told.rejoins;
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => return format!("cannot find this program to join again: {e}"),
    };
    let path = std::env::temp_dir().join(format!("satin-carry-{}-{done}", std::process::id()));
    let write = postcard::to_stdvec(carry)
        .map_err(|e| e.to_string())
        .and_then(|b| std::fs::write(&path, b).map_err(|e| e.to_string()));
    if let Err(e) = write {
        return format!("cannot keep its finished results for the next incarnation: {e}");
    }
    let mut cmd = std::process::Command::new(exe);
    cmd.args(std::env::args_os().skip(1));
    // What it was told, and that it joins again.
    ChildEnv { rejoin: Some(contact), carry: Some(path.clone()), was_origin, rejoins: done + 1, ..told.clone() }
        .apply(&mut cmd);
    // Anything buffered goes out before the image is replaced.
    let _ = std::io::Write::flush(&mut std::io::stdout());
    let _ = std::io::Write::flush(&mut std::io::stderr());
    let e = std::os::unix::process::CommandExt::exec(&mut cmd);
    let _ = std::fs::remove_file(&path);
    format!("cannot start over as a new node: {e}")
}
