//! The writing half: a serde `Serializer` for postcard's format.

use serde::{ser, Serialize};

use super::Error;

/// Where encoded bytes go.
pub(super) trait Out {
    fn byte(&mut self, b: u8);
    fn bytes(&mut self, b: &[u8]);
    /// `v` as a LEB128 varint (postcard's integers and lengths).
    fn varint(&mut self, v: u64);

    /// Whether `at_least` more bytes may follow: a sequence of `n`
    /// elements takes at least `n` (unless its elements take none), so a
    /// writer with a limit can stop at its length.
    #[inline]
    fn fits(&mut self, _at_least: usize) -> bool {
        true
    }

    fn varint128(&mut self, mut v: u128) {
        while v >= 0x80 {
            self.byte(v as u8 | 0x80);
            v >>= 7;
        }
        self.byte(v as u8);
    }
}

/// Into a vector.
pub(super) struct VecOut(pub(super) Vec<u8>);

impl Out for VecOut {
    #[inline]
    fn byte(&mut self, b: u8) {
        self.0.push(b);
    }

    #[inline]
    fn bytes(&mut self, b: &[u8]) {
        self.0.extend_from_slice(b);
    }

    #[inline(always)]
    fn varint(&mut self, v: u64) {
        push_varint(&mut self.0, v);
    }
}

/// Into segments: bytes written go into the open one, but a large field
/// that offered its `Bytes` (`shared_bytes`) becomes a segment of its
/// own, not a copy.
pub(super) struct SegmentOut {
    pub(super) head: Option<Vec<u8>>,
    pub(super) open: Vec<u8>,
    pub(super) cut: Vec<bytes::Bytes>,
    /// Bytes shared rather than written (encoded before: a call's
    /// parameters, a result).
    pub(super) shared: usize,
}

impl SegmentOut {
    fn close_open(&mut self) {
        let open = std::mem::take(&mut self.open);
        match &self.head {
            None => self.head = Some(open),
            Some(_) if !open.is_empty() => self.cut.push(open.into()),
            Some(_) => {}
        }
    }
}

impl Out for SegmentOut {
    #[inline]
    fn byte(&mut self, b: u8) {
        self.open.push(b);
    }

    #[inline]
    fn bytes(&mut self, b: &[u8]) {
        match crate::shared_bytes::offered(b) {
            Some(shared) => {
                self.close_open();
                self.shared += shared.len();
                self.cut.push(shared);
            }
            None => self.open.extend_from_slice(b),
        }
    }

    #[inline(always)]
    fn varint(&mut self, v: u64) {
        push_varint(&mut self.open, v);
    }
}

/// Appends `v` as a varint (see `varint.rs`): its 16-byte form is
/// stored whole into reserved room, and the length covers its bytes.
#[inline(always)]
fn push_varint(buf: &mut Vec<u8>, v: u64) {
    let (bytes, n) = super::varint::encode(v);
    buf.reserve(16);
    let len = buf.len();
    // SAFETY: room for 16 bytes was reserved past `len`; all 16 are
    // written, and `set_len` covers the first `n` (at most 10) of them.
    unsafe {
        buf.as_mut_ptr().add(len).copy_from_nonoverlapping(bytes.as_ptr(), 16);
        buf.set_len(len + n);
    }
}

/// Into a hash, through a buffer.
pub(super) struct HashOut<'h> {
    hasher: &'h mut blake3::Hasher,
    buf: Vec<u8>,
    /// How many bytes went into the hasher.
    pub(super) hashed: usize,
}

const HASH_BUFFER: usize = 64 * 1024;

impl<'h> HashOut<'h> {
    pub(super) fn new(hasher: &'h mut blake3::Hasher) -> Self {
        HashOut { hasher, buf: Vec::with_capacity(HASH_BUFFER), hashed: 0 }
    }

    pub(super) fn flush(&mut self) {
        self.hashed += self.buf.len();
        self.hasher.update(&self.buf);
        self.buf.clear();
    }

    #[inline]
    fn room(&mut self, n: usize) {
        if self.buf.len() + n > HASH_BUFFER {
            self.flush();
        }
    }
}

impl Out for HashOut<'_> {
    #[inline]
    fn byte(&mut self, b: u8) {
        self.room(1);
        self.buf.push(b);
    }

    #[inline]
    fn bytes(&mut self, b: &[u8]) {
        if b.len() >= HASH_BUFFER / 2 {
            self.flush();
            self.hashed += b.len();
            self.hasher.update(b);
        } else {
            self.room(b.len());
            self.buf.extend_from_slice(b);
        }
    }

    #[inline]
    fn varint(&mut self, v: u64) {
        self.room(16);
        push_varint(&mut self.buf, v);
    }
}

/// Nowhere: only the number of bytes is kept. With a limit, a sequence
/// longer than what is left stops the encoding at its length
/// ([`Out::fits`]): a call on 5 M numbers is found large at once.
pub(super) struct CountOut {
    pub(super) n: usize,
    pub(super) limit: usize,
}

impl Out for CountOut {
    #[inline]
    fn byte(&mut self, _: u8) {
        self.n += 1;
    }

    #[inline]
    fn bytes(&mut self, b: &[u8]) {
        self.n += b.len();
    }

    #[inline(always)]
    fn varint(&mut self, v: u64) {
        self.n += super::varint::len(v);
    }

    #[inline]
    fn fits(&mut self, at_least: usize) -> bool {
        self.n.saturating_add(at_least) <= self.limit
    }
}

fn zig_zag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

pub(super) struct Serializer<'o, O: Out> {
    pub(super) out: &'o mut O,
}

impl<O: Out> Serializer<'_, O> {
    #[inline]
    fn len(&mut self, len: Option<usize>) -> Result<(), Error> {
        let len = len.ok_or(Error::SerializeSeqLengthUnknown)?;
        self.out.varint(len as u64);
        match self.out.fits(len) {
            true => Ok(()),
            false => Err(Error::SerializeBufferFull),
        }
    }
}

impl<O: Out> ser::Serializer for &mut Serializer<'_, O> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Self;
    type SerializeTuple = Self;
    type SerializeTupleStruct = Self;
    type SerializeTupleVariant = Self;
    type SerializeMap = Self;
    type SerializeStruct = Self;
    type SerializeStructVariant = Self;

    fn is_human_readable(&self) -> bool {
        false
    }

    #[inline]
    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        self.out.byte(v as u8);
        Ok(())
    }

    #[inline]
    fn serialize_i8(self, v: i8) -> Result<(), Error> {
        self.out.byte(v as u8);
        Ok(())
    }

    #[inline]
    fn serialize_i16(self, v: i16) -> Result<(), Error> {
        self.out.varint(zig_zag(v.into()) as u16 as u64);
        Ok(())
    }

    #[inline]
    fn serialize_i32(self, v: i32) -> Result<(), Error> {
        self.out.varint(zig_zag(v.into()) as u32 as u64);
        Ok(())
    }

    #[inline]
    fn serialize_i64(self, v: i64) -> Result<(), Error> {
        self.out.varint(zig_zag(v));
        Ok(())
    }

    #[inline]
    fn serialize_i128(self, v: i128) -> Result<(), Error> {
        self.out.varint128(((v << 1) ^ (v >> 127)) as u128);
        Ok(())
    }

    #[inline]
    fn serialize_u8(self, v: u8) -> Result<(), Error> {
        self.out.byte(v);
        Ok(())
    }

    #[inline]
    fn serialize_u16(self, v: u16) -> Result<(), Error> {
        self.out.varint(v.into());
        Ok(())
    }

    #[inline]
    fn serialize_u32(self, v: u32) -> Result<(), Error> {
        self.out.varint(v.into());
        Ok(())
    }

    #[inline]
    fn serialize_u64(self, v: u64) -> Result<(), Error> {
        self.out.varint(v);
        Ok(())
    }

    #[inline]
    fn serialize_u128(self, v: u128) -> Result<(), Error> {
        self.out.varint128(v);
        Ok(())
    }

    #[inline]
    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        self.out.bytes(&v.to_bits().to_le_bytes());
        Ok(())
    }

    #[inline]
    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        self.out.bytes(&v.to_bits().to_le_bytes());
        Ok(())
    }

    fn serialize_char(self, v: char) -> Result<(), Error> {
        self.serialize_str(v.encode_utf8(&mut [0u8; 4]))
    }

    #[inline]
    fn serialize_str(self, v: &str) -> Result<(), Error> {
        self.serialize_bytes(v.as_bytes())
    }

    #[inline]
    fn serialize_bytes(self, v: &[u8]) -> Result<(), Error> {
        self.out.varint(v.len() as u64);
        self.out.bytes(v);
        Ok(())
    }

    #[inline]
    fn serialize_none(self) -> Result<(), Error> {
        self.out.byte(0);
        Ok(())
    }

    #[inline]
    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Result<(), Error> {
        self.out.byte(1);
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<(), Error> {
        Ok(())
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Error> {
        Ok(())
    }

    #[inline]
    fn serialize_unit_variant(self, _name: &'static str, index: u32, _variant: &'static str) -> Result<(), Error> {
        self.out.varint(index.into());
        Ok(())
    }

    #[inline]
    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, _name: &'static str, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }

    #[inline]
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        index: u32,
        _variant: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.out.varint(index.into());
        value.serialize(self)
    }

    #[inline]
    fn serialize_seq(self, len: Option<usize>) -> Result<Self, Error> {
        self.len(len)?;
        Ok(self)
    }

    #[inline]
    fn serialize_tuple(self, _len: usize) -> Result<Self, Error> {
        Ok(self)
    }

    #[inline]
    fn serialize_tuple_struct(self, _name: &'static str, _len: usize) -> Result<Self, Error> {
        Ok(self)
    }

    #[inline]
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self, Error> {
        self.out.varint(index.into());
        Ok(self)
    }

    #[inline]
    fn serialize_map(self, len: Option<usize>) -> Result<Self, Error> {
        self.len(len)?;
        Ok(self)
    }

    #[inline]
    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<Self, Error> {
        Ok(self)
    }

    #[inline]
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self, Error> {
        self.out.varint(index.into());
        Ok(self)
    }

    fn collect_str<T: ?Sized + std::fmt::Display>(self, value: &T) -> Result<(), Error> {
        use std::fmt::Write;
        let mut s = String::new();
        write!(s, "{value}").map_err(|_| Error::CollectStrError)?;
        self.serialize_str(&s)
    }
}

macro_rules! compound {
    ($trait:ident, $method:ident) => {
        impl<O: Out> ser::$trait for &mut Serializer<'_, O> {
            type Ok = ();
            type Error = Error;

            #[inline]
            fn $method<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Error> {
                value.serialize(&mut **self)
            }

            #[inline]
            fn end(self) -> Result<(), Error> {
                Ok(())
            }
        }
    };
}

compound!(SerializeSeq, serialize_element);
compound!(SerializeTuple, serialize_element);
compound!(SerializeTupleStruct, serialize_field);
compound!(SerializeTupleVariant, serialize_field);

impl<O: Out> ser::SerializeMap for &mut Serializer<'_, O> {
    type Ok = ();
    type Error = Error;

    #[inline]
    fn serialize_key<T: ?Sized + Serialize>(&mut self, key: &T) -> Result<(), Error> {
        key.serialize(&mut **self)
    }

    #[inline]
    fn serialize_value<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Error> {
        value.serialize(&mut **self)
    }

    fn end(self) -> Result<(), Error> {
        Ok(())
    }
}

macro_rules! fields {
    ($trait:ident) => {
        impl<O: Out> ser::$trait for &mut Serializer<'_, O> {
            type Ok = ();
            type Error = Error;

            #[inline]
            fn serialize_field<T: ?Sized + Serialize>(&mut self, _key: &'static str, value: &T) -> Result<(), Error> {
                value.serialize(&mut **self)
            }

            fn end(self) -> Result<(), Error> {
                Ok(())
            }
        }
    };
}

fields!(SerializeStruct);
fields!(SerializeStructVariant);
