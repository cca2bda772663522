//! The checkpoint file on disk. Created and rewritten atomically (a synced
//! temporary file renamed over the old one), appended and synced once per
//! batch, inspected every time it is opened: a damaged file is repaired by
//! rewriting its valid records, a file of another computation is refused,
//! and a file that is not a checkpoint is never written to.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use super::format::{self, Damage, MAGIC};
use super::record::{compact_for, Identity, Record};

/// Why a checkpoint cannot be used.
#[derive(Debug)]
pub enum CheckpointError {
    /// The file exists and is something else; it is left untouched.
    NotACheckpoint {
        /// The file.
        path: PathBuf,
    },
    /// The file belongs to another computation; it is left untouched.
    OtherComputation {
        /// The file.
        path: PathBuf,
        /// What differs (program, root call).
        what: String,
    },
    /// Written by another version of the format.
    Version {
        /// The file.
        path: PathBuf,
        /// The format version it was written in.
        found: u32,
    },
    /// Reading, writing or syncing the file failed.
    Io {
        /// The file.
        path: PathBuf,
        /// What was being done ("read", "append", …).
        doing: &'static str,
        /// What the system said.
        error: std::io::Error,
    },
}

impl std::fmt::Display for CheckpointError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CheckpointError::NotACheckpoint { path } => write!(
                f,
                "{} exists and is not a checkpoint file; it was left as it is (name another file with --checkpoint)",
                path.display()
            ),
            CheckpointError::OtherComputation { path, what } => write!(
                f,
                "{} is the checkpoint of another computation ({what}); it was left as it is: name another file, or add --checkpoint-fresh to discard it and start over",
                path.display()
            ),
            CheckpointError::Version { path, found } => write!(
                f,
                "{} was written in checkpoint format version {found}; this program reads version {}",
                path.display(),
                format::FORMAT_VERSION
            ),
            CheckpointError::Io { path, doing, error } => write!(f, "cannot {doing} {}: {error}", path.display()),
        }
    }
}

impl std::error::Error for CheckpointError {}

/// What opening found.
#[derive(Debug, Default, Clone)]
pub struct OpenReport {
    /// The file was there (a resumed run).
    pub existed: bool,
    /// Valid records found.
    pub found: usize,
    /// Records kept after compaction.
    pub kept: usize,
    /// What was wrong with the file, if anything.
    pub damage: Damage,
    /// The file was rewritten from its valid records.
    pub repaired: bool,
    /// Where a file whose header could not be read went (it was then
    /// started anew).
    pub moved_aside: Option<PathBuf>,
    /// Size of the file after opening.
    pub bytes: u64,
}

impl OpenReport {
    /// A warning to print, if something was wrong with the file.
    pub fn warning(&self, path: &Path) -> Option<String> {
        if let Some(aside) = &self.moved_aside {
            return Some(format!(
                "checkpoint {}: both header copies are damaged, so nothing in it can be tied to this computation; moved it to {} and started a new one",
                path.display(),
                aside.display()
            ));
        }
        (!self.damage.is_clean()).then(|| {
            format!(
                "checkpoint {} was damaged ({}); {} valid record(s) found, the file was rewritten with {} of them",
                path.display(),
                self.damage,
                self.found,
                self.kept
            )
        })
    }
}

/// An open checkpoint file, positioned for appending.
pub struct Store {
    path: PathBuf,
    identity: Identity,
    file: File,
    records: u64,
    bytes: u64,
    /// Records right after the last rewrite: the file is compacted again
    /// when it has grown well past that.
    compacted: u64,
}

fn io<'a>(path: &'a Path, doing: &'static str) -> impl FnOnce(std::io::Error) -> CheckpointError + 'a {
    move |error| CheckpointError::Io { path: path.to_path_buf(), doing, error }
}

impl Store {
    /// Opens `path` for the computation `identity`, creating it if it does
    /// not exist (or, with `fresh`, replacing a checkpoint that does).
    /// Returns the valid, compacted records of an existing file.
    pub fn open(
        path: &Path,
        identity: &Identity,
        fresh: bool,
    ) -> Result<(Store, Vec<Record>, OpenReport), CheckpointError> {
        let mut report = OpenReport::default();
        let bytes = match File::open(path) {
            Ok(mut f) => {
                report.existed = true;
                // Look at the magic before reading a possibly huge file.
                let mut head = Vec::with_capacity(MAGIC.len());
                (&mut f).take(MAGIC.len() as u64).read_to_end(&mut head).map_err(io(path, "read"))?;
                if head.iter().zip(MAGIC).filter(|(a, b)| **a != *b).count() > 1 {
                    return Err(CheckpointError::NotACheckpoint { path: path.to_path_buf() });
                }
                let mut all = head;
                f.read_to_end(&mut all).map_err(io(path, "read"))?;
                Some(all)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(io(path, "open")(e)),
        };
        let Some(bytes) = bytes else {
            let store = Store::create(path, identity, &[])?;
            report.bytes = store.bytes;
            return Ok((store, Vec::new(), report));
        };
        let scan = format::scan(&bytes).map_err(|_| CheckpointError::NotACheckpoint { path: path.to_path_buf() })?;
        if fresh {
            let store = Store::create(path, identity, &[])?;
            report.existed = false;
            report.bytes = store.bytes;
            return Ok((store, Vec::new(), report));
        }
        if bytes.is_empty() {
            let store = Store::create(path, identity, &[])?;
            report.bytes = store.bytes;
            return Ok((store, Vec::new(), report));
        }
        let Some(header) = scan.header else {
            // Nothing ties the records to a computation: keep the file
            // aside, untouched, and start anew.
            let aside = aside_name(path);
            std::fs::rename(path, &aside).map_err(io(path, "move aside"))?;
            report.moved_aside = Some(aside);
            report.damage = scan.damage;
            let store = Store::create(path, identity, &[])?;
            report.bytes = store.bytes;
            return Ok((store, Vec::new(), report));
        };
        if header.format_version != format::FORMAT_VERSION {
            return Err(CheckpointError::Version { path: path.to_path_buf(), found: header.format_version });
        }
        if let Some(what) = mismatch(&header.identity, identity) {
            return Err(CheckpointError::OtherComputation { path: path.to_path_buf(), what });
        }
        report.found = scan.records.len();
        report.damage = scan.damage;
        let records = compact_for(&identity.root_key, scan.records);
        report.kept = records.len();
        let store = if !report.damage.is_clean() || records.len() < report.found {
            report.repaired = !report.damage.is_clean();
            Store::create(path, identity, &records)?
        } else {
            Store::append_to(path, identity, records.len(), bytes.len())?
        };
        report.bytes = store.bytes;
        Ok((store, records, report))
    }

    /// Writes a new file holding `records`, atomically replacing `path`.
    fn create(path: &Path, identity: &Identity, records: &[Record]) -> Result<Store, CheckpointError> {
        let mut bytes = format::encode_start(identity);
        for r in records {
            format::encode_record(r, &mut bytes);
        }
        write_atomically(path, &bytes)?;
        Store::append_to(path, identity, records.len(), bytes.len())
    }

    /// The file at `path`, which holds `records` records in `bytes` bytes,
    /// opened for appending.
    fn append_to(path: &Path, identity: &Identity, records: usize, bytes: usize) -> Result<Store, CheckpointError> {
        let file = OpenOptions::new().append(true).open(path).map_err(io(path, "open"))?;
        Ok(Store {
            path: path.to_path_buf(),
            identity: identity.clone(),
            file,
            records: records as u64,
            bytes: bytes as u64,
            compacted: records as u64,
        })
    }

    /// Appends `records` and makes them durable; returns the bytes written.
    pub fn append(&mut self, records: &[Record]) -> Result<u64, CheckpointError> {
        if records.is_empty() {
            return Ok(0);
        }
        let mut bytes = Vec::new();
        for r in records {
            format::encode_record(r, &mut bytes);
        }
        self.file.write_all(&bytes).map_err(io(&self.path, "write"))?;
        self.file.sync_data().map_err(io(&self.path, "sync"))?;
        self.records += records.len() as u64;
        self.bytes += bytes.len() as u64;
        Ok(bytes.len() as u64)
    }

    /// Whether the file has grown enough since its last rewrite that
    /// compacting it is worth a rewrite.
    pub fn wants_compaction(&self) -> bool {
        self.records >= 64 && self.records >= 2 * self.compacted.max(1)
    }

    /// Rewrites the file with only the records it still needs (see
    /// [`super::compact`]); returns how many remain.
    pub fn compact(&mut self) -> Result<u64, CheckpointError> {
        let bytes = std::fs::read(&self.path).map_err(io(&self.path, "read"))?;
        let scan = format::scan(&bytes).map_err(|_| CheckpointError::NotACheckpoint { path: self.path.clone() })?;
        let records = compact_for(&self.identity.root_key, scan.records);
        *self = Store::create(&self.path, &self.identity, &records)?;
        Ok(self.records)
    }

    /// Records in the file.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Bytes of the file.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Where the file is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Says how `found` differs from `ours`, if it does.
fn mismatch(found: &Identity, ours: &Identity) -> Option<String> {
    if found.program != ours.program {
        return Some(format!("written by `{}`, this is `{}`", found.program, ours.program));
    }
    if found.functions != ours.functions {
        return Some(format!(
            "written by a build of `{}` with other annotated functions; rebuild from the same source",
            found.program
        ));
    }
    if found.root_fn != ours.root_fn {
        return Some(format!("its run started with {}, this one with {}", found.root_fn, ours.root_fn));
    }
    if found.root_key != ours.root_key {
        return Some(format!("its run called {} with other arguments", found.root_fn));
    }
    None
}

fn aside_name(path: &Path) -> PathBuf {
    for n in 0u32.. {
        let mut name = path.as_os_str().to_owned();
        name.push(if n == 0 { ".damaged".to_string() } else { format!(".damaged.{n}") });
        let p = PathBuf::from(name);
        if !p.exists() {
            return p;
        }
    }
    unreachable!("some name is free")
}

/// Writes `bytes` to a synced temporary file beside `path` and renames it
/// over `path`, then syncs the directory: a crash leaves the old file or
/// the new one, never a mix.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), CheckpointError> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(&dir).map_err(io(path, "create a temporary file beside"))?;
    tmp.write_all(bytes).map_err(io(path, "write"))?;
    tmp.as_file().sync_all().map_err(io(path, "sync"))?;
    tmp.persist(path).map_err(|e| io(path, "replace")(e.error))?;
    // The rename is durable once the directory is.
    if let Ok(d) = File::open(&dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkpoint::record::ResultMeta;
    use crate::JobKey;

    fn identity(root: u8) -> Identity {
        Identity {
            program: "test".into(),
            functions: [7; 32],
            root_fn: "m::f(u32) -> u64".into(),
            // Apart from the records' keys: a root record compacts the
            // file down to itself.
            root_key: JobKey([200 + root; 32]),
        }
    }

    fn record(i: u8, parent: u64) -> Record {
        Record { key: JobKey([i; 32]), meta: ResultMeta { depth: 1, id: i as u64, parent }, value: vec![i; 40] }
    }

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("satin-ckpt-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn records_appended_are_found_when_the_file_is_opened_again() {
        let path = dir("append").join("run.ckpt");
        let (mut store, found, report) = Store::open(&path, &identity(1), false).unwrap();
        assert!(found.is_empty() && !report.existed);
        store.append(&[record(1, 0), record(2, 0)]).unwrap();
        store.append(&[record(3, 0)]).unwrap();
        drop(store);
        let (store, found, report) = Store::open(&path, &identity(1), false).unwrap();
        assert!(report.existed && report.damage.is_clean() && !report.repaired);
        assert_eq!(found, vec![record(1, 0), record(2, 0), record(3, 0)]);
        assert_eq!(store.bytes(), std::fs::metadata(&path).unwrap().len());
    }

    #[test]
    fn a_torn_file_is_repaired_from_its_valid_records() {
        let path = dir("torn").join("run.ckpt");
        let (mut store, ..) = Store::open(&path, &identity(1), false).unwrap();
        store.append(&[record(1, 0), record(2, 0), record(3, 0)]).unwrap();
        drop(store);
        let len = std::fs::metadata(&path).unwrap().len();
        let f = OpenOptions::new().write(true).open(&path).unwrap();
        f.set_len(len - 5).unwrap();
        let (_, found, report) = Store::open(&path, &identity(1), false).unwrap();
        assert_eq!(found, vec![record(1, 0), record(2, 0)]);
        assert!(report.repaired && report.damage.torn_tail > 0);
        assert!(report.warning(&path).unwrap().contains("2 valid record(s)"));
        // The repaired file is clean.
        let (_, found, report) = Store::open(&path, &identity(1), false).unwrap();
        assert_eq!(found.len(), 2);
        assert!(report.damage.is_clean() && !report.repaired);
    }

    #[test]
    fn compaction_drops_results_whose_parent_is_saved() {
        let path = dir("compact").join("run.ckpt");
        let (mut store, ..) = Store::open(&path, &identity(1), false).unwrap();
        let children: Vec<Record> = (10..80).map(|i| record(i, 5)).collect();
        store.append(&children).unwrap();
        store.append(&[record(5, 0)]).unwrap();
        assert!(store.wants_compaction() || store.records() < 64);
        assert_eq!(store.compact().unwrap(), 1);
        let (_, found, _) = Store::open(&path, &identity(1), false).unwrap();
        assert_eq!(found, vec![record(5, 0)]);
        // The root's result is all a finished run needs.
        let (mut store, ..) = Store::open(&path, &identity(1), false).unwrap();
        store.append(&[record(9, 0), record(201, 0)]).unwrap();
        store.compact().unwrap();
        let (_, found, _) = Store::open(&path, &identity(1), false).unwrap();
        assert_eq!(found, vec![record(201, 0)]);
    }

    #[test]
    fn other_files_and_other_computations_are_refused_and_left_untouched() {
        let d = dir("refuse");
        let text = d.join("notes.txt");
        std::fs::write(&text, "not a checkpoint").unwrap();
        for fresh in [false, true] {
            let e = Store::open(&text, &identity(1), fresh).err().unwrap();
            assert!(matches!(e, CheckpointError::NotACheckpoint { .. }), "{e}");
        }
        assert_eq!(std::fs::read_to_string(&text).unwrap(), "not a checkpoint");

        let path = d.join("run.ckpt");
        let (mut store, ..) = Store::open(&path, &identity(1), false).unwrap();
        store.append(&[record(1, 0)]).unwrap();
        drop(store);
        let before = std::fs::read(&path).unwrap();
        let e = Store::open(&path, &identity(2), false).err().unwrap();
        assert!(e.to_string().contains("other arguments") && e.to_string().contains("--checkpoint-fresh"), "{e}");
        assert_eq!(std::fs::read(&path).unwrap(), before);
        // --checkpoint-fresh starts over.
        let (_, found, _) = Store::open(&path, &identity(2), true).unwrap();
        assert!(found.is_empty());
        let (_, found, _) = Store::open(&path, &identity(2), false).unwrap();
        assert!(found.is_empty());
    }

    #[test]
    fn a_file_whose_headers_are_both_damaged_is_moved_aside() {
        let path = dir("headers").join("run.ckpt");
        let (mut store, ..) = Store::open(&path, &identity(1), false).unwrap();
        store.append(&[record(1, 0)]).unwrap();
        drop(store);
        let mut bytes = std::fs::read(&path).unwrap();
        let start = format::encode_start(&identity(1));
        let one = (start.len() - MAGIC.len()) / 2;
        bytes[MAGIC.len() + 20] ^= 1;
        bytes[MAGIC.len() + one + 20] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        let (_, found, report) = Store::open(&path, &identity(1), false).unwrap();
        assert!(found.is_empty());
        let aside = report.moved_aside.clone().unwrap();
        assert_eq!(std::fs::read(&aside).unwrap(), bytes);
        assert!(report.warning(&path).unwrap().contains("moved it"));
    }
}
