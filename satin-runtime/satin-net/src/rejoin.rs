//! A node the majority removed while it was cut off joins the run again as
//! a new node. The process starts over (`exec` of the same program with the
//! same arguments: the same pid and pipes, so a supervisor keeps watching
//! it) as a joiner of the member that told it, with the results it had
//! finished, which the run then reuses.

use std::net::SocketAddr;
use std::path::PathBuf;

use satin_core::checkpoint::ResultMeta;
use satin_core::JobKey;

/// Where a rejoining process joins (a member's address).
const REJOIN_ENV: &str = "SATIN_REJOIN";
/// The file holding the results it carries over (postcard).
const CARRY_ENV: &str = "SATIN_CARRY";
/// The id this process had as the run's origin, if it was (it claims the
/// origin back: the answer is shown where the user started the run).
const WAS_ORIGIN_ENV: &str = "SATIN_REJOIN_ORIGIN";
/// How often this process joined again already (the core decides whether
/// it does once more: `Config::max_rejoins`).
const REJOINS_ENV: &str = "SATIN_REJOINS";

/// Results carried from one incarnation to the next.
pub(super) type Carry = Vec<(JobKey, Vec<u8>, ResultMeta)>;

/// The member this process joins through, if it is a rejoining one.
pub(super) fn contact() -> Option<SocketAddr> {
    std::env::var(REJOIN_ENV).ok()?.parse().ok()
}

/// How often this process started over as a new node already.
pub(super) fn done() -> u32 {
    std::env::var(REJOINS_ENV).ok().and_then(|v| v.parse().ok()).unwrap_or(0)
}

/// The id of the previous incarnation, if it was the run's origin.
pub(super) fn was_origin() -> Option<u64> {
    std::env::var(WAS_ORIGIN_ENV).ok()?.parse().ok()
}

/// The results the previous incarnation carried over (the file is
/// removed: they are published once this node is welcomed).
pub(super) fn take_carry() -> Carry {
    let Some(path) = std::env::var_os(CARRY_ENV).map(PathBuf::from) else { return Vec::new() };
    let bytes = std::fs::read(&path).unwrap_or_default();
    let _ = std::fs::remove_file(&path);
    postcard::from_bytes(&bytes).unwrap_or_default()
}

/// Starts this process over as a new node joining through `contact`.
/// Returns only if it cannot (`exec` failed): why.
pub(super) fn rejoin(contact: SocketAddr, carry: &Carry, was_origin: Option<u64>) -> String {
    let done = done();
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
    cmd.args(std::env::args_os().skip(1))
        .env(REJOIN_ENV, contact.to_string())
        .env(CARRY_ENV, &path)
        .env(REJOINS_ENV, (done + 1).to_string());
    match was_origin {
        Some(id) => cmd.env(WAS_ORIGIN_ENV, id.to_string()),
        None => cmd.env_remove(WAS_ORIGIN_ENV),
    };
    // Anything buffered goes out before the image is replaced.
    let _ = std::io::Write::flush(&mut std::io::stdout());
    let _ = std::io::Write::flush(&mut std::io::stderr());
    let e = std::os::unix::process::CommandExt::exec(&mut cmd);
    let _ = std::fs::remove_file(&path);
    format!("cannot start over as a new node: {e}")
}
