//! How calls and results are encoded: postcard's format, byte for byte,
//! written and read by code of our own.
//!
//! Keys are blake3 over postcard (see `key.rs`), frames carry postcard,
//! and checkpoints hold it: the format is fixed. But postcard's own
//! serializer and deserializer loop over each varint's bytes, some 11 ns
//! per random `u64` (the loop's exit mispredicts: such numbers take 9 or
//! 10 bytes at even odds) — encoding 5 M numbers costs half of what
//! sorting them does, and a distributed merge sort encodes and decodes
//! its data several times. Here a `u64` is written and read as machine
//! words without a branch per byte (`varint.rs`): the same bytes
//! (property-tested against postcard for every serde shape, `tests.rs`),
//! 30 % less time to encode 5 M random numbers and 20 % less to decode
//! them (what remains is mostly the memory they take). Errors are
//! postcard's own [`postcard::Error`].

mod counters;
mod de;
mod ser;
#[cfg(test)]
mod tests;
mod varint;

pub use counters::{counts, hashed, ValueCounts};
pub use postcard::Error;
use serde::{Deserialize, Serialize};

/// `value` in postcard's format.
pub fn to_vec<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, Error> {
    let mut out = ser::VecOut(Vec::new());
    value.serialize(&mut ser::Serializer { out: &mut out })?;
    counters::encoded(out.0.len());
    Ok(out.0)
}

/// `value` in postcard's format, after `first`, as segments: large byte
/// strings that offered themselves (fields read and written with
/// `shared_bytes`) are not copied but are segments of their own.
pub fn to_segments<T: Serialize + ?Sized>(value: &T, first: Vec<u8>) -> Result<Segments, Error> {
    let mut out = ser::SegmentOut { head: None, open: first, cut: Vec::new(), shared: 0 };
    crate::shared_bytes::offer_while(|| value.serialize(&mut ser::Serializer { out: &mut out }))?;
    let ser::SegmentOut { head, open, mut cut, shared } = out;
    // Shared segments were encoded before (a call's parameters, a
    // result): only what was written here counts.
    let all = head.as_ref().map_or(0, Vec::len) + open.len() + cut.iter().map(bytes::Bytes::len).sum::<usize>();
    counters::encoded(all - shared);
    Ok(match head {
        None => Segments { head: open, rest: cut },
        Some(head) => {
            if !open.is_empty() {
                cut.push(open.into());
            }
            Segments { head, rest: cut }
        }
    })
}

/// An encoding in pieces ([`to_segments`]): its bytes are `head`, then
/// each of `rest` in order.
#[derive(Debug)]
pub struct Segments {
    /// The bytes before the first large byte string (all of them if none).
    pub head: Vec<u8>,
    /// The rest, in order.
    pub rest: Vec<bytes::Bytes>,
}

impl Segments {
    /// How many bytes in all.
    pub fn len(&self) -> usize {
        self.head.len() + self.rest.iter().map(bytes::Bytes::len).sum::<usize>()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// `value` in postcard's format, fed to `hasher` in pieces (a value of
/// megabytes is hashed without a copy of its encoding).
pub fn hash_into<T: Serialize + ?Sized>(value: &T, hasher: &mut blake3::Hasher) -> Result<(), Error> {
    let mut out = ser::HashOut::new(hasher);
    value.serialize(&mut ser::Serializer { out: &mut out })?;
    out.flush();
    counters::hashed(out.hashed);
    Ok(())
}

/// How many bytes `value` takes in postcard's format, without writing
/// them (a pass over the value, no memory).
pub fn encoded_len<T: Serialize + ?Sized>(value: &T) -> Result<usize, Error> {
    let mut out = ser::CountOut { n: 0, limit: usize::MAX };
    value.serialize(&mut ser::Serializer { out: &mut out })?;
    Ok(out.n)
}

/// Whether `value` takes more than `limit` bytes in postcard's format.
/// Without writing them, and without looking further than needed: a
/// sequence of more elements than bytes are left answers at once (so a
/// sequence of zero-sized elements may be called larger than it is).
pub fn exceeds<T: Serialize + ?Sized>(value: &T, limit: usize) -> Result<bool, Error> {
    let mut out = ser::CountOut { n: 0, limit };
    match value.serialize(&mut ser::Serializer { out: &mut out }) {
        Ok(()) => Ok(out.n > limit),
        Err(Error::SerializeBufferFull) => Ok(true),
        Err(e) => Err(e),
    }
}

/// The value `bytes` begin with, as postcard's `from_bytes` reads it
/// (bytes after it are ignored).
pub fn from_bytes<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> Result<T, Error> {
    take_from_bytes(bytes).map(|(v, _)| v)
}

/// The value `bytes` begin with, and the bytes after it.
pub fn take_from_bytes<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> Result<(T, &'a [u8]), Error> {
    let mut de = de::Deserializer { input: bytes };
    let value = T::deserialize(&mut de)?;
    counters::decoded(bytes.len() - de.input.len());
    Ok((value, de.input))
}
