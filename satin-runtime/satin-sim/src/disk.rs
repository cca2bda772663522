//! The simulated checkpoint file: bytes in the real checkpoint format that
//! outlive every node, read and written with a latency and a bandwidth,
//! torn when its writer crashes in the middle of a write.

use super::workload::{key_of, Nanos};
use satin_proto::checkpoint::format;
use satin_proto::checkpoint::{compact, Identity, Record};

/// Speed of the storage the checkpoint lives on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SimCheckpoint {
    /// Interval between the coordinator's writes.
    pub interval: Nanos,
    /// The first write this long after the start (`None`: one interval).
    pub first: Option<Nanos>,
    /// Fixed cost of a read or a durable write (a sync).
    pub latency: Nanos,
    /// Bytes per second.
    pub bandwidth: f64,
}

impl Default for SimCheckpoint {
    fn default() -> Self {
        SimCheckpoint { interval: 60_000_000_000, first: None, latency: 5_000_000, bandwidth: 100e6 }
    }
}

pub(super) struct Disk {
    pub(super) bytes: Vec<u8>,
    pub(super) speed: SimCheckpoint,
    /// Largest size the file reached.
    pub(super) max_bytes: usize,
    /// Records in the file, and right after its last rewrite.
    records: u64,
    compacted: u64,
    /// Records that opening found (valid ones, before compaction).
    pub(super) records_found: u64,
    /// Opens that found damage (and repaired it).
    pub(super) repairs: u64,
}

/// The identity every simulated run writes.
fn identity() -> Identity {
    Identity { program: "simulate".into(), functions: [0; 32], root_fn: "tree".into(), root_key: key_of(0) }
}

impl Disk {
    pub(super) fn new(speed: SimCheckpoint) -> Disk {
        Disk { bytes: Vec::new(), speed, max_bytes: 0, records: 0, compacted: 0, records_found: 0, repairs: 0 }
    }

    /// How long moving `bytes` takes.
    pub(super) fn time(&self, bytes: usize) -> Nanos {
        self.speed.latency + (bytes as f64 / self.speed.bandwidth * 1e9) as Nanos
    }

    /// Opens the file as `Store::open` does: a new one is started, a
    /// damaged one rewritten from its valid records (compacted).
    pub(super) fn open(&mut self) -> Vec<Record> {
        // Only this simulator writes it: garbage would be a cut-off file.
        let scan = format::scan(&self.bytes).unwrap_or_default();
        self.records_found += scan.records.len() as u64;
        let clean = scan.damage.is_clean() && scan.header.is_some();
        let records = compact(scan.records);
        (self.records, self.compacted) = (records.len() as u64, records.len() as u64);
        if !clean {
            if !self.bytes.is_empty() {
                self.repairs += 1;
            }
            let mut bytes = format::encode_start(&identity());
            for r in &records {
                format::encode_record(r, &mut bytes);
            }
            self.bytes = bytes;
        }
        records
    }

    /// Appends a write's frames; compacts as `Store` does, once the file
    /// has grown to twice what it held after its last rewrite.
    pub(super) fn append(&mut self, frames: &[u8], records: u64) {
        self.bytes.extend_from_slice(frames);
        self.records += records;
        self.max_bytes = self.max_bytes.max(self.bytes.len());
        if self.records >= 64 && self.records >= 2 * self.compacted.max(1) {
            let scan = format::scan(&self.bytes).unwrap_or_default();
            let kept = compact(scan.records);
            let mut bytes = format::encode_start(&identity());
            for r in &kept {
                format::encode_record(r, &mut bytes);
            }
            self.bytes = bytes;
            (self.records, self.compacted) = (kept.len() as u64, kept.len() as u64);
        }
    }

    /// The frames of `records`, as a write appends them.
    pub(super) fn frames(records: &[Record]) -> Vec<u8> {
        let mut out = Vec::new();
        for r in records {
            format::encode_record(r, &mut out);
        }
        out
    }
}
