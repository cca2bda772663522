//! Large frames sent by reference to bytes both ends already hold.
//!
//! Every node of a run executes the same program on the same input, so
//! every node holds the root call's encoded parameters (the handshake
//! checks that their keys, hence their bytes, are equal). A job stolen
//! from near the top of the tree carries a piece of that input — the
//! right half of the array to sort, a block of the matrix — and a piece's
//! encoding is, byte for byte, a stretch of the root's. The sender finds
//! such stretches and names them by where they lie in the root
//! ([`Piece::Root`]); only the rest travels ([`Packed`]). Nothing is asked
//! for or confirmed: the sender knows what the receiver holds because both
//! hold the same root.
//!
//! Finding a stretch is cheap because the root is indexed sparsely: a
//! hash of the 32 bytes at every 4 KiB. Any stretch of the root at least
//! that long contains one such anchor within its first 4 KiB, so the sender hashes the windows of
//! the frame's first bytes until one names an anchor, checks it byte for
//! byte and extends the match both ways by comparing memory (no hashing
//! of the stretch itself). The receiver needs no index at all: it copies
//! the named ranges of its own root.

use std::sync::OnceLock;

use bytes::Bytes;
use serde::{Deserialize, Serialize};

/// Frames shorter than this are sent as they are: looking for the root
/// in them costs more than it could save.
pub const PACK_FROM: usize = 64 * 1024;

/// The root is indexed at every offset that is a multiple of this.
const ANCHOR_EVERY: usize = 4096;

/// The bytes hashed at an anchor (and at each offset the sender tries).
const WINDOW: usize = 32;

/// Shorter matches are sent as bytes: naming them saves nothing.
const MIN_MATCH: usize = 4 * 1024;

/// Bytes scanned past the last match without finding another, after
/// which the rest of a piece is taken for new bytes (a result, say).
const SEARCH_BUDGET: usize = 64 * 1024;

/// One piece of a packed frame.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Piece {
    /// Bytes the receiver may not hold, as they are.
    Bytes(#[serde(with = "crate::shared_bytes")] Bytes),
    /// `len` bytes of the root's encoding from offset `at`.
    Root {
        /// Where the stretch begins in the root.
        at: u64,
        /// Its length.
        len: u64,
    },
}

/// A frame's bytes as pieces: its original length and what rebuilds it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Packed {
    /// The length of the bytes the pieces rebuild.
    pub len: u64,
    /// The pieces, in order.
    pub pieces: Vec<Piece>,
}

/// A packed frame that does not rebuild on this node: it names bytes
/// beyond this node's root, or its pieces do not add up to its length
/// (the two ends do not hold the same root, or the peer is broken or
/// hostile).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotOurRoot;

impl std::fmt::Display for NotOurRoot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "a packed frame names bytes this node's root does not hold")
    }
}

impl std::error::Error for NotOurRoot {}

/// The bytes both ends hold (the root call's encoding), with the sender's
/// sparse index of them, made the first time a frame is packed.
#[derive(Debug)]
pub struct Dictionary {
    bytes: Bytes,
    anchors: OnceLock<Anchors>,
}

impl Dictionary {
    /// The root call's encoding; nothing is indexed yet.
    pub fn new(bytes: impl Into<Bytes>) -> Dictionary {
        Dictionary { bytes: bytes.into(), anchors: OnceLock::new() }
    }

    /// How many bytes the dictionary holds.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Whether the dictionary holds no byte.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The frame whose bytes are `segments` in order, as pieces, if at
    /// least one stretch of the root lies in it (else it is better sent
    /// as it is). Segments shorter than 4 KiB are taken as they are: they are a frame's headers, and the stretches are in the long
    /// ones (a job's parameters).
    pub fn pack(&self, segments: &[Bytes]) -> Option<Packed> {
        let len: usize = segments.iter().map(Bytes::len).sum();
        if len < PACK_FROM || self.bytes.len() < MIN_MATCH {
            return None;
        }
        let anchors = self.anchors.get_or_init(|| Anchors::new(&self.bytes));
        let mut pieces = Vec::new();
        let mut found = false;
        for segment in segments {
            if segment.len() < MIN_MATCH {
                push_bytes(&mut pieces, segment.clone());
                continue;
            }
            found |= self.pack_segment(anchors, segment, &mut pieces);
        }
        found.then_some(Packed { len: len as u64, pieces })
    }

    /// Appends `segment` as pieces; whether a stretch of the root was in it.
    fn pack_segment(&self, anchors: &Anchors, segment: &Bytes, pieces: &mut Vec<Piece>) -> bool {
        let (s, root) = (&segment[..], &self.bytes[..]);
        let mut found = false;
        // `s[literal..]` is not yet in a piece; `i` is the next offset tried.
        let (mut literal, mut i, mut since_match) = (0, 0, 0);
        while i + WINDOW <= s.len() && since_match < SEARCH_BUDGET {
            let Some(at) = anchors.find(root, &s[i..i + WINDOW]) else {
                i += 1;
                since_match += 1;
                continue;
            };
            let back = common_suffix(&s[literal..i], &root[..at]);
            let forward = common_prefix(&s[i..], &root[at..]);
            if back + forward < MIN_MATCH {
                i += 1;
                since_match += 1;
                continue;
            }
            let start = i - back;
            if start > literal {
                push_bytes(pieces, segment.slice(literal..start));
            }
            pieces.push(Piece::Root { at: (at - back) as u64, len: (back + forward) as u64 });
            found = true;
            i = start + back + forward;
            literal = i;
            since_match = 0;
        }
        if literal < s.len() {
            push_bytes(pieces, segment.slice(literal..));
        }
        found
    }

    /// The bytes `packed` stands for.
    pub fn unpack(&self, packed: &Packed) -> Result<Vec<u8>, NotOurRoot> {
        // The length is the sender's word: reserve no more than the
        // pieces can fill, and check it at the end.
        let room = packed.pieces.iter().fold(0usize, |n, p| {
            n.saturating_add(match p {
                Piece::Bytes(b) => b.len(),
                Piece::Root { len, .. } => (*len).min(self.bytes.len() as u64) as usize,
            })
        });
        let mut out = Vec::with_capacity(room.min(packed.len as usize));
        for piece in &packed.pieces {
            match piece {
                Piece::Bytes(b) => out.extend_from_slice(b),
                &Piece::Root { at, len } => {
                    let end = at.checked_add(len).filter(|&e| e <= self.bytes.len() as u64).ok_or(NotOurRoot)?;
                    out.extend_from_slice(&self.bytes[at as usize..end as usize]);
                }
            }
        }
        if out.len() as u64 != packed.len {
            return Err(NotOurRoot);
        }
        Ok(out)
    }
}

/// Adds bytes to the pieces, joining them to a small `Bytes` piece before
/// (a frame's headers are several short segments).
fn push_bytes(pieces: &mut Vec<Piece>, b: Bytes) {
    if let Some(Piece::Bytes(last)) = pieces.last_mut() {
        if last.len() + b.len() < MIN_MATCH {
            let mut joined = Vec::with_capacity(last.len() + b.len());
            joined.extend_from_slice(last);
            joined.extend_from_slice(&b);
            *last = Bytes::from(joined);
            return;
        }
    }
    pieces.push(Piece::Bytes(b));
}

/// How many bytes `a` and `b` begin with in common: memory compared a
/// block at a time, the first differing block byte by byte.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    const BLOCK: usize = 256;
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + BLOCK <= n && a[i..i + BLOCK] == b[i..i + BLOCK] {
        i += BLOCK;
    }
    i + a[i..n].iter().zip(&b[i..n]).take_while(|(x, y)| x == y).count()
}

/// How many bytes `a` and `b` end with in common (at most `a`'s length,
/// which is at most one anchor's stride past the last match).
fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    a.iter().rev().zip(b.iter().rev()).take_while(|(x, y)| x == y).count()
}

/// The root's anchors: an open-addressed table from a window's hash to
/// the offset of the anchor it was taken at (the first, if several
/// windows are equal).
#[derive(Debug)]
struct Anchors {
    /// Per slot: the window hash's high half (which rejects most windows
    /// without reading the root, a cache miss away) and the anchor's
    /// number + 1 (0: empty) — at the hash's slot or after it.
    slots: Vec<(u32, u32)>,
    mask: usize,
}

impl Anchors {
    fn new(root: &[u8]) -> Anchors {
        let count = (root.len().saturating_sub(WINDOW) / ANCHOR_EVERY + 1).min(u32::MAX as usize - 1);
        let size = (count * 2).next_power_of_two();
        let mut anchors = Anchors { slots: vec![(0, 0); size], mask: size - 1 };
        for n in 0..count {
            let at = n * ANCHOR_EVERY;
            let Some(window) = root.get(at..at + WINDOW) else { break };
            let hash = window_hash(window);
            let (tag, mut slot) = ((hash >> 32) as u32, hash as usize & anchors.mask);
            loop {
                match anchors.slots[slot] {
                    (_, 0) => {
                        anchors.slots[slot] = (tag, n as u32 + 1);
                        break;
                    }
                    // An equal window is already there: keep the first.
                    (t, m) if t == tag && root[(m as usize - 1) * ANCHOR_EVERY..][..WINDOW] == *window => break,
                    _ => slot = (slot + 1) & anchors.mask,
                }
            }
        }
        anchors
    }

    /// The offset of an anchor whose window is `window`, if any.
    #[inline]
    fn find(&self, root: &[u8], window: &[u8]) -> Option<usize> {
        let hash = window_hash(window);
        let (tag, mut slot) = ((hash >> 32) as u32, hash as usize & self.mask);
        loop {
            match self.slots[slot] {
                (_, 0) => return None,
                (t, m) if t == tag => {
                    let at = (m as usize - 1) * ANCHOR_EVERY;
                    if root[at..at + WINDOW] == *window {
                        return Some(at);
                    }
                }
                _ => {}
            }
            slot = (slot + 1) & self.mask;
        }
    }
}

/// A hash of [`WINDOW`] bytes: four words, multiplied and mixed.
#[inline]
fn window_hash(w: &[u8]) -> u64 {
    let word = |i: usize| u64::from_le_bytes(w[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
    let h = word(0).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ word(1).rotate_left(17).wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
        ^ word(2).rotate_left(31).wrapping_mul(0x1656_67B1_9E37_79F9)
        ^ word(3).rotate_left(47).wrapping_mul(0x27D4_EB2F_1656_67C5);
    h ^ (h >> 29)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    fn random(n: usize, seed: u64) -> Vec<u8> {
        let mut rng = SplitMix64::new(seed);
        (0..n).map(|_| rng.next_u64() as u8).collect()
    }

    fn joined(segments: &[Bytes]) -> Vec<u8> {
        segments.iter().flat_map(|s| s.iter().copied()).collect()
    }

    #[test]
    fn a_stretch_of_the_root_travels_as_its_place() {
        let root = random(4 << 20, 1);
        let dict = Dictionary::new(root.clone());
        // A job's frame: a header of its own, then a stretch of the root
        // from an arbitrary offset, then a trailer.
        let segments = [
            Bytes::from_static(b"a header the root does not have"),
            Bytes::copy_from_slice(&root[1_234_567..3_000_001]),
            Bytes::from_static(b"and a trailer"),
        ];
        let packed = dict.pack(&segments).expect("most of it is known");
        let sent = postcard::to_stdvec(&packed).unwrap().len();
        assert!(sent < 200, "{sent} bytes for a frame of {}", joined(&segments).len());
        assert_eq!(dict.unpack(&packed).unwrap(), joined(&segments));
    }

    #[test]
    fn stretches_from_several_places_and_new_bytes_between_them() {
        let root = random(2 << 20, 7);
        let dict = Dictionary::new(root.clone());
        let mut body = root[900_000..1_000_000].to_vec();
        body.extend_from_slice(&random(10_000, 8));
        body.extend_from_slice(&root[5..70_000]);
        body.extend_from_slice(&root[2_000_000..]);
        let segments = [Bytes::from_static(b"h"), Bytes::from(body)];
        let packed = dict.pack(&segments).unwrap();
        let roots = packed.pieces.iter().filter(|p| matches!(p, Piece::Root { .. })).count();
        assert_eq!(
            roots,
            3,
            "{:?}",
            packed
                .pieces
                .iter()
                .map(|p| match p {
                    Piece::Bytes(b) => format!("bytes {}", b.len()),
                    Piece::Root { at, len } => format!("root {at}+{len}"),
                })
                .collect::<Vec<_>>()
        );
        assert_eq!(dict.unpack(&packed).unwrap(), joined(&segments));
    }

    #[test]
    fn repeated_bytes_pack_and_unpack_right() {
        // Every anchor's window is the same: the first stands for all.
        let root = vec![0u8; 1 << 20];
        let dict = Dictionary::new(root);
        let mut body = vec![0u8; 300_000];
        body[150_000] = 1;
        let segments = [Bytes::from(body)];
        let packed = dict.pack(&segments).unwrap();
        assert_eq!(dict.unpack(&packed).unwrap(), joined(&segments));
    }

    #[test]
    fn new_bytes_are_not_packed_and_small_frames_never() {
        let root = random(1 << 20, 2);
        let dict = Dictionary::new(root.clone());
        assert_eq!(dict.pack(&[Bytes::from(random(1 << 20, 3))]), None);
        assert_eq!(dict.pack(&[Bytes::copy_from_slice(&root[..PACK_FROM - 1])]), None);
    }

    #[test]
    fn a_range_beyond_the_root_or_a_wrong_length_is_an_error() {
        let root = random(1 << 20, 4);
        let dict = Dictionary::new(root.clone());
        let beyond = Packed { len: 10, pieces: vec![Piece::Root { at: (1 << 20) - 5, len: 10 }] };
        assert_eq!(dict.unpack(&beyond), Err(NotOurRoot));
        let overflow = Packed { len: 10, pieces: vec![Piece::Root { at: u64::MAX - 1, len: 10 }] };
        assert_eq!(dict.unpack(&overflow), Err(NotOurRoot));
        let short = Packed { len: 11, pieces: vec![Piece::Root { at: 0, len: 10 }] };
        assert_eq!(dict.unpack(&short), Err(NotOurRoot));
        let huge = Packed { len: u64::MAX, pieces: vec![Piece::Root { at: 0, len: u64::MAX }] };
        assert_eq!(dict.unpack(&huge), Err(NotOurRoot));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 64, ..Default::default() })]

        /// Whatever the frame, what is packed unpacks to it.
        #[test]
        fn packing_round_trips(
            seed in 0u64..1000,
            cuts in proptest::collection::vec((0usize..300_000, 0usize..100_000, proptest::bool::ANY), 1..5),
        ) {
            let root = random(300_000, seed);
            let dict = Dictionary::new(root.clone());
            let segments: Vec<Bytes> = cuts.iter().enumerate().map(|(k, &(at, len, new))| {
                if new { Bytes::from(random(len, seed + k as u64 + 1)) }
                else { Bytes::copy_from_slice(&root[at.min(root.len())..(at + len).min(root.len())]) }
            }).collect();
            if let Some(packed) = dict.pack(&segments) {
                proptest::prop_assert_eq!(dict.unpack(&packed).unwrap(), joined(&segments));
            }
        }
    }
}
