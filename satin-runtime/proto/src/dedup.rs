//! Large frames sent by reference to bytes both ends already hold.
//!
//! Every node of a run executes the same program on the same input, so
//! every node holds the root call's encoded parameters (the handshake
//! checks that their keys, hence their bytes, are equal). A job stolen
//! from near the top of the tree carries a piece of that input — the
//! right half of the array to sort, a block of the matrix — and a piece's
//! encoding is, byte for byte, a stretch of the root's. Cutting both into
//! content-defined chunks (FastCDC: a chunk ends where a rolling hash of
//! the last bytes says so, so the cuts of a stretch fall where the cuts of
//! the whole fall once past its first chunk) finds those stretches; a
//! frame then names each chunk the receiver holds by its blake3 hash and
//! carries only the rest ([`Packed`]). Nothing is asked for or confirmed:
//! the sender knows what the receiver holds because both hold the same
//! root.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

/// Frames shorter than this are sent as they are: chunking them costs
/// more than it could save.
pub const PACK_FROM: usize = 64 * 1024;

/// Chunk sizes (FastCDC's minimum, average and maximum).
const MIN_CHUNK: usize = 4 * 1024;
const AVG_CHUNK: usize = 16 * 1024;
const MAX_CHUNK: usize = 64 * 1024;

/// Chunks without a single known one after which a frame is taken for
/// new bytes and sent as it is.
const GIVE_UP_AFTER: usize = 16;

/// A chunk's name: its blake3 hash.
pub type ChunkId = [u8; 32];

/// Bytes both ends hold, cut into chunks and indexed by hash.
#[derive(Debug)]
pub struct Dictionary {
    bytes: bytes::Bytes,
    /// Where each chunk lies in `bytes`: (start, length).
    chunks: HashMap<ChunkId, (usize, usize)>,
}

/// One piece of a packed frame.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Piece {
    /// Bytes the receiver may not hold, as they are.
    Bytes(#[serde(with = "serde_bytes")] Vec<u8>),
    /// A chunk of the dictionary, by its hash.
    Known(ChunkId),
}

/// A frame's bytes as pieces: its original length and what rebuilds it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Packed {
    /// The length of the bytes the pieces rebuild.
    pub len: u64,
    /// The pieces, in order.
    pub pieces: Vec<Piece>,
}

/// A packed frame named a chunk the dictionary does not hold: the two
/// ends do not hold the same bytes (a broken or hostile peer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownChunk;

impl std::fmt::Display for UnknownChunk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "a packed frame names a chunk this node does not hold")
    }
}

impl std::error::Error for UnknownChunk {}

fn chunks(bytes: &[u8]) -> impl Iterator<Item = (usize, usize)> + '_ {
    fastcdc::v2020::FastCDC::new(bytes, MIN_CHUNK, AVG_CHUNK, MAX_CHUNK).map(|c| (c.offset, c.length))
}

fn id(bytes: &[u8]) -> ChunkId {
    *blake3::hash(bytes).as_bytes()
}

impl Dictionary {
    /// Indexes `bytes` (the root call's encoding).
    pub fn new(bytes: impl Into<bytes::Bytes>) -> Dictionary {
        let bytes: bytes::Bytes = bytes.into();
        let chunks = chunks(&bytes).map(|(at, len)| (id(&bytes[at..at + len]), (at, len))).collect();
        Dictionary { bytes, chunks }
    }

    /// How many chunks the dictionary holds.
    pub fn len(&self) -> usize {
        self.chunks.len()
    }

    /// Whether the dictionary holds no chunk.
    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }

    /// `bytes` as pieces, if at least one chunk of them is known (else
    /// they are better sent as they are).
    pub fn pack(&self, bytes: &[u8]) -> Option<Packed> {
        if bytes.len() < PACK_FROM || self.chunks.is_empty() {
            return None;
        }
        let mut pieces = Vec::new();
        let mut raw: Option<(usize, usize)> = None;
        let mut known = 0usize;
        for (i, (at, len)) in chunks(bytes).enumerate() {
            if i == GIVE_UP_AFTER && known == 0 {
                // New bytes (a result, say): no use cutting the rest.
                return None;
            }
            let chunk = &bytes[at..at + len];
            let cid = id(chunk);
            if self.chunks.get(&cid).is_some_and(|&(_, l)| l == len) {
                if let Some((s, e)) = raw.take() {
                    pieces.push(Piece::Bytes(bytes[s..e].to_vec()));
                }
                pieces.push(Piece::Known(cid));
                known += len;
            } else {
                raw = Some(raw.map_or((at, at + len), |(s, _)| (s, at + len)));
            }
        }
        if let Some((s, e)) = raw {
            pieces.push(Piece::Bytes(bytes[s..e].to_vec()));
        }
        (known > 0).then_some(Packed { len: bytes.len() as u64, pieces })
    }

    /// The bytes `packed` stands for.
    pub fn unpack(&self, packed: &Packed) -> Result<Vec<u8>, UnknownChunk> {
        // The length is the sender's word: reserve no more than the
        // pieces can fill.
        let mut out = Vec::with_capacity((packed.len as usize).min(self.bytes.len() + 64 * 1024 * 1024));
        for piece in &packed.pieces {
            match piece {
                Piece::Bytes(b) => out.extend_from_slice(b),
                Piece::Known(cid) => {
                    let &(at, len) = self.chunks.get(cid).ok_or(UnknownChunk)?;
                    out.extend_from_slice(&self.bytes[at..at + len]);
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    fn random(n: usize, seed: u64) -> Vec<u8> {
        let mut rng = SplitMix64::new(seed);
        (0..n).map(|_| rng.next_u64() as u8).collect()
    }

    #[test]
    fn a_stretch_of_the_dictionary_travels_as_a_few_names() {
        let root = random(4 << 20, 1);
        let dict = Dictionary::new(root.clone());
        // A job's frame: a header of its own, then a stretch of the root
        // from an arbitrary offset.
        let mut frame = b"a header the root does not have".to_vec();
        frame.extend_from_slice(&root[1_234_567..3_000_001]);
        let packed = dict.pack(&frame).expect("most of it is known");
        let sent = postcard::to_stdvec(&packed).unwrap().len();
        assert!(sent < frame.len() / 20, "{sent} bytes for a frame of {}", frame.len());
        assert_eq!(dict.unpack(&packed).unwrap(), frame);
    }

    #[test]
    fn new_bytes_are_not_packed_and_small_frames_never() {
        let dict = Dictionary::new(random(1 << 20, 2));
        assert_eq!(dict.pack(&random(1 << 20, 3)), None);
        assert_eq!(dict.pack(&random(PACK_FROM - 1, 2)), None);
    }

    #[test]
    fn a_chunk_the_receiver_lacks_is_an_error() {
        let root = random(1 << 20, 4);
        let packed = Dictionary::new(root.clone()).pack(&root).unwrap();
        assert_eq!(Dictionary::new(random(1 << 20, 5)).unpack(&packed), Err(UnknownChunk));
    }
}
