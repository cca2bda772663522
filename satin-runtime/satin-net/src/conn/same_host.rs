//! Large frames between nodes of one host, through shared memory.
//!
//! Nodes started on one machine (`--local-nodes`, or by hand) would send
//! their megabytes through QUIC over loopback: encrypted, cut into
//! packets, copied into the kernel and out again, and decrypted, on both
//! ends' network threads, while the workers wait for the data. Instead a
//! node keeps a directory of its own under `/dev/shm` (memory, not disk)
//! and tells each peer where it is when it connects (`Frame::Place`, with
//! a random token written there). A peer that reads the same token there
//! shares this host's memory: a large frame for this node is written as a
//! file in this node's directory and only its name travels on the stream,
//! in the frame's place (`Frame::Placed`) — so frames stay in order, and
//! network faults (`--chaos` cuts, losses, delays) hold the name up as
//! they would the bytes. The receiver maps the file, removes its name and
//! decodes the frame from the mapping (a job's parameters or a result are
//! slices of it, not copies).
//!
//! Nothing outlives the node: it removes its directory when it ends (at
//! exit too); a node that is killed leaves it behind, and the next node
//! started on the host removes every directory whose process is gone.
//! While the node's network has emulated faults (`--chaos` loss, delay or
//! cuts, `netfault.rs`) its frames take that network, as they would
//! between machines. `SATIN_SAME_HOST=off` sends everything through QUIC;
//! `SATIN_SAME_HOST=/a/directory` keeps the places there (another memory
//! file system, say).

use std::collections::HashMap;
use std::fs::{DirBuilder, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use bytes::Bytes;
use satin_proto::NodeId;

use crate::netfault::Faults;

/// Where the directories are, unless `SATIN_SAME_HOST` names another
/// directory: memory on Linux.
const ROOT: &str = "/dev/shm";

/// Where this host's nodes keep their places: `None` if they send
/// everything through QUIC.
fn root() -> Option<PathBuf> {
    match std::env::var(crate::contract::SAME_HOST) {
        Ok(v) if v == "off" => None,
        Ok(v) if Path::new(&v).is_absolute() => Some(PathBuf::from(v)),
        _ => Some(PathBuf::from(ROOT)),
    }
}

/// Every node's directory is named `satin-<pid>-<random>`.
const PREFIX: &str = "satin-";

/// The file that proves a peer sees this node's directory.
const TOKEN: &str = "token";

/// Frames shorter than this travel on the stream: a file costs more.
pub(crate) const FROM: usize = 256 * 1024;

/// This node's directory, and the peers' it may write into.
pub(crate) struct SameHost {
    root: PathBuf,
    dir: PathBuf,
    token: [u8; 16],
    /// Peers that proved they share this host: their directories.
    peers: Mutex<HashMap<NodeId, PathBuf>>,
    /// Names files this node writes (with its process id).
    next: AtomicU64,
    /// Bytes of frames sent through memory.
    sent: AtomicU64,
    /// The emulated faults of this node's network, if any.
    faults: Option<Arc<Faults>>,
}

impl SameHost {
    /// This node's directory, made now; `None` where there is no shared
    /// memory to use (no `/dev/shm`, or `SATIN_SAME_HOST=off`).
    pub(crate) fn open(faults: Option<Arc<Faults>>) -> Option<Arc<SameHost>> {
        let root = root()?;
        sweep(&root);
        let token = random_token()?;
        let hex: String = token[..6].iter().map(|b| format!("{b:02x}")).collect();
        let dir = root.join(format!("{PREFIX}{}-{hex}", std::process::id()));
        if let Err(e) = DirBuilder::new().mode(0o700).create(&dir) {
            tracing::debug!("no frames through shared memory: cannot make {}: {e}", dir.display());
            return None;
        }
        if let Err(e) = std::fs::write(dir.join(TOKEN), token) {
            tracing::debug!("no frames through shared memory: {e}");
            let _ = std::fs::remove_dir_all(&dir);
            return None;
        }
        remove_at_exit(&dir);
        Some(Arc::new(SameHost {
            root,
            dir,
            token,
            peers: Mutex::default(),
            next: AtomicU64::new(0),
            sent: AtomicU64::new(0),
            faults,
        }))
    }

    /// What this node tells each peer it connects to: its directory and
    /// the token in it.
    pub(crate) fn place(&self) -> (String, [u8; 16]) {
        (self.dir.to_string_lossy().into_owned(), self.token)
    }

    /// Peer `id` keeps its frames in `dir` with `token` in it: true if this
    /// node sees that token there (it shares the host's memory), and then
    /// writes `id`'s large frames there.
    pub(crate) fn learn(&self, id: NodeId, dir: &str, token: [u8; 16]) -> bool {
        let dir = PathBuf::from(dir);
        let named_right = dir.parent() == Some(self.root.as_path())
            && dir.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(PREFIX));
        let seen = named_right && std::fs::read(dir.join(TOKEN)).is_ok_and(|t| t == token);
        let mut peers = self.peers.lock().unwrap_or_else(|p| p.into_inner());
        if seen {
            peers.insert(id, dir);
        } else {
            peers.remove(&id);
        }
        seen
    }

    /// Where `id`'s large frames go, if it shares this host (and this
    /// node's network has no emulated faults now).
    pub(crate) fn place_of(&self, id: NodeId) -> Option<PathBuf> {
        if self.faults.as_ref().is_some_and(|f| !f.quiet()) {
            return None;
        }
        self.peers.lock().unwrap_or_else(|p| p.into_inner()).get(&id).cloned()
    }

    /// `id`'s directory cannot be written (it ended): its frames go on
    /// the stream from now on.
    pub(crate) fn forget(&self, id: NodeId) {
        self.peers.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
    }

    /// Writes a frame's `segments` as a new file in a peer's `dir`; the
    /// file's name. Readable by the peer whatever the user it runs as:
    /// the directory keeps everyone else out.
    pub(crate) fn write(&self, dir: &Path, segments: &[Bytes]) -> std::io::Result<String> {
        let name = format!("{}-{}", std::process::id(), self.next.fetch_add(1, Ordering::Relaxed));
        let path = dir.join(&name);
        let written = (|| {
            let mut file = OpenOptions::new().write(true).create_new(true).mode(0o644).open(&path)?;
            for segment in segments {
                file.write_all(segment)?;
            }
            Ok(())
        })();
        if let Err(e) = written {
            let _ = std::fs::remove_file(&path);
            return Err(e);
        }
        self.sent.fetch_add(segments.iter().map(|s| s.len() as u64).sum(), Ordering::Relaxed);
        Ok(name)
    }

    /// The frame a peer wrote to this node as file `name`, `len` bytes,
    /// mapped; the name is gone from the directory once this returns.
    pub(crate) fn take(&self, name: &str, len: u64) -> Result<Bytes, String> {
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_digit() || b == b'-') {
            return Err(format!("a frame in shared memory with a bad name {name:?}"));
        }
        let path = self.dir.join(name);
        let file = File::open(&path).map_err(|e| format!("the frame in shared memory {name}: {e}"));
        let _ = std::fs::remove_file(&path);
        let file = file?;
        let size = file.metadata().map_err(|e| e.to_string())?.size();
        if size != len || len == 0 {
            return Err(format!("the frame in shared memory {name} holds {size} bytes, not {len}"));
        }
        // SAFETY: the file lies in this node's own directory (mode 0700),
        // written whole by its sender before the name was sent and not
        // touched by it again; its name is removed above, so nobody else
        // opens it: nothing changes the bytes while they are mapped.
        let map = unsafe { memmap2::MmapOptions::new().populate().map(&file) }.map_err(|e| e.to_string())?;
        Ok(Bytes::from_owner(map))
    }

    /// Bytes of frames sent through memory so far.
    pub(crate) fn sent(&self) -> u64 {
        self.sent.load(Ordering::Relaxed)
    }

    /// Removes this node's directory and whatever frames it still holds.
    pub(crate) fn remove(&self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Drop for SameHost {
    fn drop(&mut self) {
        self.remove();
    }
}

/// Removes the places of nodes of this host that are gone (a supervisor
/// calls this once its nodes ended: those killed left theirs behind).
pub(crate) fn sweep_gone() {
    if let Some(root) = root() {
        sweep(&root);
    }
}

/// Sixteen random bytes from the kernel.
fn random_token() -> Option<[u8; 16]> {
    let mut token = [0u8; 16];
    std::fs::File::open("/dev/urandom").and_then(|mut f| std::io::Read::read_exact(&mut f, &mut token)).ok()?;
    Some(token)
}

/// Removes the directories under `root` of processes that are gone
/// (killed nodes'), among those this user owns.
fn sweep(root: &Path) {
    let Ok(entries) = std::fs::read_dir(root) else { return };
    // SAFETY: `geteuid` has no preconditions.
    let me = unsafe { libc::geteuid() };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix(PREFIX)).and_then(|r| r.split('-').next()) else {
            continue;
        };
        let Ok(pid) = pid.parse::<libc::pid_t>() else { continue };
        let owned = entry.metadata().is_ok_and(|m| m.is_dir() && m.uid() == me);
        if owned && pid > 0 && !alive(pid) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Whether process `pid` exists.
fn alive(pid: libc::pid_t) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// The directory removed when the process exits (`std::process::exit`
/// included, which runs no destructors).
fn remove_at_exit(dir: &Path) {
    static DIRS: OnceLock<Mutex<Vec<PathBuf>>> = OnceLock::new();
    extern "C" fn remove() {
        if let Some(dirs) = DIRS.get() {
            for dir in dirs.lock().unwrap_or_else(|p| p.into_inner()).iter() {
                let _ = std::fs::remove_dir_all(dir);
            }
        }
    }
    let mut first = false;
    let dirs = DIRS.get_or_init(|| {
        first = true;
        Mutex::default()
    });
    dirs.lock().unwrap_or_else(|p| p.into_inner()).push(dir.to_path_buf());
    if first {
        // SAFETY: `remove` is an `extern "C" fn()` that does not unwind
        // (it ignores every error) and needs nothing `exit` tears down
        // (a static and system calls).
        unsafe { libc::atexit(remove) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_written_for_a_peer_is_read_back_once() {
        let (a, b) = (SameHost::open(None).expect("/dev/shm"), SameHost::open(None).expect("/dev/shm"));
        let (dir, token) = b.place();
        assert!(a.learn(7, &dir, token));
        let to = a.place_of(7).expect("b shares the host");
        let frame = [Bytes::from(vec![1u8; 300_000]), Bytes::from_static(b"end")];
        let name = a.write(&to, &frame).expect("written");
        let got = b.take(&name, 300_003).expect("read");
        assert_eq!(&got[..300_000], &frame[0][..]);
        assert_eq!(&got[300_000..], b"end");
        assert!(b.take(&name, 300_003).is_err(), "a frame is taken once");
        assert_eq!(a.sent(), 300_003);
    }

    #[test]
    fn a_wrong_token_or_place_is_not_taken_for_this_host() {
        let (a, b) = (SameHost::open(None).expect("/dev/shm"), SameHost::open(None).expect("/dev/shm"));
        let (dir, mut token) = b.place();
        token[0] ^= 1;
        assert!(!a.learn(7, &dir, token));
        assert!(a.place_of(7).is_none());
        assert!(!a.learn(7, "/tmp", b.place().1), "only directories under /dev/shm");
        assert!(!a.learn(7, &format!("{dir}/../{}", dir.rsplit('/').next().unwrap_or("")), b.place().1));
    }

    #[test]
    fn frames_take_the_network_while_it_has_faults() {
        let faults = Faults::new(1);
        let (a, b) = (SameHost::open(Some(faults.clone())).expect("/dev/shm"), SameHost::open(None).expect("/dev/shm"));
        let (dir, token) = b.place();
        assert!(a.learn(7, &dir, token));
        assert!(a.place_of(7).is_some());
        faults.apply("loss 0.1").expect("an order");
        assert!(a.place_of(7).is_none(), "a lossy network carries the bytes");
        faults.apply("loss 0").expect("an order");
        assert!(a.place_of(7).is_some());
    }

    #[test]
    fn bad_names_and_lengths_are_refused_in_words() {
        let (a, b) = (SameHost::open(None).expect("/dev/shm"), SameHost::open(None).expect("/dev/shm"));
        assert!(b.take("../token", 16).unwrap_err().contains("bad name"));
        assert!(b.take("", 1).unwrap_err().contains("bad name"));
        let name = a.write(&b.dir, &[Bytes::from_static(b"four")]).expect("written");
        assert!(b.take(&name, 5).unwrap_err().contains("holds 4 bytes"));
        assert!(b.take("1-999", 4).is_err(), "no such frame");
    }

    #[test]
    fn a_directory_is_removed_with_its_node_and_a_dead_node_s_by_the_next() {
        let a = SameHost::open(None).expect("/dev/shm");
        let dir = a.dir.clone();
        drop(a);
        assert!(!dir.exists());
        // A killed node's: a process that cannot exist (no process id
        // reaches `pid_max`, so none can take it over meanwhile).
        let pid_max = std::fs::read_to_string("/proc/sys/kernel/pid_max").expect("pid_max");
        let pid: libc::pid_t = pid_max.trim().parse().expect("a number");
        assert!(!alive(pid));
        let left = Path::new(ROOT).join(format!("{PREFIX}{pid}-test"));
        std::fs::create_dir(&left).expect("made");
        let next = SameHost::open(None).expect("/dev/shm");
        assert!(!left.exists(), "the next node removes a gone process's directory");
        assert!(next.dir.exists());
    }
}
