//! The bytes of a checkpoint file, and reading them without trusting them.
//!
//! ```text
//! file   = MAGIC (8 bytes, "SATINCKP") frame*
//! frame  = MARKER (4) kind (1) len (u32 LE) body (len bytes) sum (8)
//! sum    = blake3(kind ‖ len ‖ body), first 8 bytes
//! kind 1 = header (postcard `Header`), written twice at the start
//! kind 2 = record (postcard `Record`)
//! ```
//!
//! Every frame carries its own marker and checksum, so a reader that meets
//! damage — a torn tail, a flipped byte, a length claiming gigabytes —
//! skips to the next marker and finds every frame the damage did not
//! touch. Nothing read is allocated before its checksum holds, and no
//! length is believed beyond the bytes actually there. The header is
//! written twice so that one damaged byte cannot cost the file its
//! identity; the magic tolerates one wrong byte when a valid header follows.

use serde::{Deserialize, Serialize};

use super::record::{Identity, Record};

/// The first bytes of every checkpoint file.
pub const MAGIC: [u8; 8] = *b"SATINCKP";
/// The version of this layout; a file of another version is refused.
pub const FORMAT_VERSION: u32 = 1;

const MARKER: [u8; 4] = [0xC5, 0x5A, 0x7E, 0x1D];
const KIND_HEADER: u8 = 1;
const KIND_RECORD: u8 = 2;
const PREFIX: usize = MARKER.len() + 1 + 4;
const SUM: usize = 8;
/// Bytes a frame adds to its body.
pub const FRAME_OVERHEAD: usize = PREFIX + SUM;

/// What the header frame says.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    /// The format the file is written in.
    pub format_version: u32,
    /// The computation it belongs to.
    pub identity: Identity,
}

/// What a reader found wrong with a file (all zero: nothing).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Damage {
    /// The magic had one wrong byte (or was cut short).
    pub magic: bool,
    /// Header copies missing or damaged (of the two written).
    pub header_copies: u32,
    /// Damaged stretches between valid frames.
    pub regions: u32,
    /// The bytes of those stretches.
    pub skipped_bytes: u64,
    /// Bytes after the last valid frame that form no frame (a write cut off).
    pub torn_tail: u64,
}

impl Damage {
    /// Nothing was wrong.
    pub fn is_clean(&self) -> bool {
        *self == Damage::default()
    }
}

impl std::fmt::Display for Damage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts = Vec::new();
        if self.magic {
            parts.push("a damaged magic".to_string());
        }
        if self.header_copies > 0 {
            parts.push(format!("{} of 2 header copies damaged", self.header_copies));
        }
        if self.regions > 0 {
            parts.push(format!("{} damaged region(s), {} bytes skipped", self.regions, self.skipped_bytes));
        }
        if self.torn_tail > 0 {
            parts.push(format!("a torn tail of {} bytes", self.torn_tail));
        }
        if parts.is_empty() {
            parts.push("no damage".to_string());
        }
        write!(f, "{}", parts.join(", "))
    }
}

/// Everything valid in a file.
#[derive(Clone, Debug, Default)]
pub struct Scan {
    /// The first valid header, if any survived.
    pub header: Option<Header>,
    /// The valid records, in file order.
    pub records: Vec<Record>,
    /// What was wrong with the file.
    pub damage: Damage,
}

/// The bytes do not start like a checkpoint file at all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotACheckpoint;

/// The start of a new file: magic and both header copies.
pub fn encode_start(identity: &Identity) -> Vec<u8> {
    let header = Header { format_version: FORMAT_VERSION, identity: identity.clone() };
    let body = postcard::to_stdvec(&header).expect("postcard encodes a header into a Vec");
    let mut out = MAGIC.to_vec();
    frame(KIND_HEADER, &body, &mut out);
    frame(KIND_HEADER, &body, &mut out);
    out
}

/// Appends one record frame to `out`.
pub fn encode_record(record: &Record, out: &mut Vec<u8>) {
    let body = postcard::to_stdvec(record).expect("postcard encodes a record into a Vec");
    frame(KIND_RECORD, &body, out);
}

/// Encoded size of a record frame.
pub fn record_size(record: &Record) -> usize {
    FRAME_OVERHEAD + postcard::experimental::serialized_size(record).unwrap_or(0)
}

fn frame(kind: u8, body: &[u8], out: &mut Vec<u8>) {
    let len = u32::try_from(body.len()).expect("a checkpoint frame is smaller than 4 GiB");
    out.extend_from_slice(&MARKER);
    out.push(kind);
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(body);
    out.extend_from_slice(&checksum(kind, &len.to_le_bytes(), body));
}

fn checksum(kind: u8, len: &[u8], body: &[u8]) -> [u8; SUM] {
    let mut h = blake3::Hasher::new();
    h.update(&[kind]);
    h.update(len);
    h.update(body);
    h.finalize().as_bytes()[..SUM].try_into().expect("8 bytes")
}

/// Reads whatever is valid in `bytes`. An empty input is a file not written
/// yet: no header, no damage. Input that does not start with the magic
/// (two or more bytes off, or one off without a valid header after it) is
/// not a checkpoint.
pub fn scan(bytes: &[u8]) -> Result<Scan, NotACheckpoint> {
    let mut scan = Scan::default();
    if bytes.is_empty() {
        return Ok(scan);
    }
    let head = &bytes[..bytes.len().min(MAGIC.len())];
    let wrong = head.iter().zip(MAGIC).filter(|(a, b)| **a != *b).count();
    if bytes.len() < MAGIC.len() {
        // Cut inside the magic: a file whose creation was cut off.
        if wrong > 0 {
            return Err(NotACheckpoint);
        }
        scan.damage = Damage { magic: true, header_copies: 2, torn_tail: bytes.len() as u64, ..Damage::default() };
        return Ok(scan);
    }
    if wrong > 1 {
        return Err(NotACheckpoint);
    }
    scan.damage.magic = wrong == 1;
    let mut headers = 0u32;
    let mut pos = MAGIC.len();
    let mut valid_end = pos;
    while pos < bytes.len() {
        match read_frame(bytes, pos) {
            Some((frame, end)) => {
                if pos > valid_end {
                    scan.damage.regions += 1;
                    scan.damage.skipped_bytes += (pos - valid_end) as u64;
                }
                match frame {
                    Frame::Header(h) => {
                        headers += 1;
                        scan.header.get_or_insert(h);
                    }
                    Frame::Record(r) => scan.records.push(r),
                }
                pos = end;
                valid_end = end;
            }
            None => pos = next_marker(bytes, pos + 1),
        }
    }
    scan.damage.torn_tail = (bytes.len() - valid_end) as u64;
    scan.damage.header_copies = 2u32.saturating_sub(headers);
    if scan.damage.magic && scan.header.is_none() {
        return Err(NotACheckpoint);
    }
    Ok(scan)
}

enum Frame {
    Header(Header),
    Record(Record),
}

/// The valid frame at `pos` and where it ends, if there is one.
fn read_frame(bytes: &[u8], pos: usize) -> Option<(Frame, usize)> {
    let rest = bytes.get(pos..)?;
    if rest.len() < FRAME_OVERHEAD || rest[..MARKER.len()] != MARKER {
        return None;
    }
    let kind = rest[MARKER.len()];
    let len_bytes = &rest[MARKER.len() + 1..PREFIX];
    let len = u32::from_le_bytes(len_bytes.try_into().expect("4 bytes")) as usize;
    // The length is believed only as far as the bytes go.
    if len > rest.len() - FRAME_OVERHEAD {
        return None;
    }
    let body = &rest[PREFIX..PREFIX + len];
    let sum = &rest[PREFIX + len..PREFIX + len + SUM];
    if checksum(kind, len_bytes, body) != sum {
        return None;
    }
    let frame = match kind {
        KIND_HEADER => Frame::Header(decode_all(body)?),
        KIND_RECORD => Frame::Record(decode_all(body)?),
        _ => return None,
    };
    Some((frame, pos + FRAME_OVERHEAD + len))
}

fn decode_all<T: serde::de::DeserializeOwned>(body: &[u8]) -> Option<T> {
    match postcard::take_from_bytes::<T>(body) {
        Ok((v, [])) => Some(v),
        _ => None,
    }
}

/// The position of the next frame marker at or after `from`, or the end.
fn next_marker(bytes: &[u8], from: usize) -> usize {
    let mut i = from;
    while i + MARKER.len() <= bytes.len() {
        match bytes[i..].iter().position(|&b| b == MARKER[0]) {
            None => break,
            Some(off) => {
                i += off;
                if bytes[i..].starts_with(&MARKER) {
                    return i;
                }
                i += 1;
            }
        }
    }
    bytes.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkpoint::record::ResultMeta;
    use crate::JobKey;

    fn identity() -> Identity {
        Identity {
            program: "test".into(),
            functions: [7; 32],
            root_fn: "m::f(u32) -> u64".into(),
            root_key: JobKey([1; 32]),
        }
    }

    fn record(i: u8, len: usize) -> Record {
        let meta = ResultMeta { depth: i as u32, id: 1000 + i as u64, parent: i as u64 };
        Record { key: JobKey([i; 32]), meta, value: vec![i; len] }
    }

    /// A file with records of assorted sizes, and where each record starts.
    fn sample() -> (Vec<u8>, Vec<Record>, Vec<usize>) {
        let mut bytes = encode_start(&identity());
        let records: Vec<Record> = (0..12u8).map(|i| record(i, [0, 1, 7, 300, 5000][i as usize % 5])).collect();
        let mut starts = Vec::new();
        for r in &records {
            starts.push(bytes.len());
            encode_record(r, &mut bytes);
        }
        (bytes, records, starts)
    }

    #[test]
    fn a_clean_file_reads_back_whole() {
        let (bytes, records, _) = sample();
        let scan = scan(&bytes).unwrap();
        assert!(scan.damage.is_clean(), "{}", scan.damage);
        assert_eq!(scan.header.unwrap().identity, identity());
        assert_eq!(scan.records, records);
        assert_eq!(record_size(&records[3]), FRAME_OVERHEAD + postcard::to_stdvec(&records[3]).unwrap().len());
    }

    #[test]
    fn a_file_cut_at_any_byte_keeps_every_record_before_the_cut() {
        let (bytes, records, starts) = sample();
        for cut in 0..bytes.len() {
            let scan = scan(&bytes[..cut]).unwrap_or_else(|_| panic!("cut at {cut}: refused"));
            let whole = starts.iter().zip(&records).filter(|(s, r)| **s + record_size(r) <= cut).count();
            assert_eq!(scan.records, records[..whole], "cut at {cut}");
            if cut > 0 {
                assert!(!scan.damage.is_clean() || starts.contains(&cut), "cut at {cut}: {}", scan.damage);
            }
        }
    }

    #[test]
    fn any_single_corrupted_byte_costs_at_most_the_record_it_hits() {
        let (bytes, records, starts) = sample();
        for at in 0..bytes.len() {
            for flip in [0x01u8, 0x80, 0xff] {
                let mut damaged = bytes.clone();
                damaged[at] ^= flip;
                let scan = scan(&damaged).unwrap_or_else(|_| panic!("byte {at} ^ {flip:#x}: refused"));
                let hit = starts.iter().zip(&records).position(|(s, r)| (*s..*s + record_size(r)).contains(&at));
                let expected: Vec<Record> =
                    records.iter().enumerate().filter(|(i, _)| Some(*i) != hit).map(|(_, r)| r.clone()).collect();
                assert_eq!(scan.records, expected, "byte {at} ^ {flip:#x}");
                assert_eq!(scan.header.as_ref().map(|h| &h.identity), Some(&identity()), "byte {at}");
                assert!(!scan.damage.is_clean(), "byte {at} ^ {flip:#x}: damage not noticed");
            }
        }
    }

    #[test]
    fn a_length_claiming_gigabytes_is_not_believed() {
        let (mut bytes, records, starts) = sample();
        let len_at = starts[4] + MARKER.len() + 1;
        bytes[len_at..len_at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        let scan = scan(&bytes).unwrap();
        assert_eq!(scan.records.len(), records.len() - 1);
        assert_eq!(scan.damage.regions, 1);
    }

    #[test]
    fn other_files_are_not_checkpoints() {
        assert_eq!(scan(b"hello world, this is text").unwrap_err(), NotACheckpoint);
        assert_eq!(scan(b"SATINC").unwrap().records.len(), 0, "a cut-off magic is a damaged checkpoint");
        assert_eq!(scan(b"XATINC").unwrap_err(), NotACheckpoint);
        // One wrong magic byte with nothing valid after it: not ours either.
        assert_eq!(scan(b"SATINCKQ and then some text").unwrap_err(), NotACheckpoint);
        assert!(scan(b"").unwrap().header.is_none());
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..2000)) {
            let _ = scan(&bytes);
            let mut with_magic = MAGIC.to_vec();
            with_magic.extend_from_slice(&bytes);
            let _ = scan(&with_magic);
        }

        #[test]
        fn records_after_garbage_are_found_again(garbage in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..500), split in 0usize..12) {
            let (bytes, records, starts) = sample();
            let mut damaged = bytes[..starts[split]].to_vec();
            damaged.extend_from_slice(&garbage);
            damaged.extend_from_slice(&bytes[starts[split]..]);
            let scan = scan(&damaged).unwrap();
            // Garbage may by chance hold a valid frame only with a forged checksum.
            proptest::prop_assert_eq!(scan.records, records);
        }
    }
}
