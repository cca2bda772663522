//! The reading half: a serde `Deserializer` for postcard's format, with
//! postcard's rules for what is malformed (a varint longer than its type
//! allows, a last byte with bits beyond it, a bool or option tag other
//! than 0 and 1, bad UTF-8) and its errors.

use serde::de::{self, DeserializeSeed, IntoDeserializer, Visitor};

use super::Error;

pub(super) struct Deserializer<'de> {
    pub(super) input: &'de [u8],
}

/// Reads a varint of at most `MAX` bytes whose last byte is at most
/// `LAST`, as postcard does for each integer width.
macro_rules! varint {
    ($name:ident, $ty:ty, $max:expr, $last:expr) => {
        #[inline]
        fn $name(&mut self) -> Result<$ty, Error> {
            let mut out: $ty = 0;
            for i in 0..$max {
                let Some((&b, rest)) = self.input.split_first() else { return Err(Error::DeserializeUnexpectedEnd) };
                self.input = rest;
                out |= ((b & 0x7f) as $ty) << (7 * i);
                if b & 0x80 == 0 {
                    return if i == $max - 1 && b > $last { Err(Error::DeserializeBadVarint) } else { Ok(out) };
                }
            }
            Err(Error::DeserializeBadVarint)
        }
    };
}

impl<'de> Deserializer<'de> {
    #[inline]
    fn byte(&mut self) -> Result<u8, Error> {
        let (&b, rest) = self.input.split_first().ok_or(Error::DeserializeUnexpectedEnd)?;
        self.input = rest;
        Ok(b)
    }

    #[inline]
    fn take(&mut self, n: usize) -> Result<&'de [u8], Error> {
        if self.input.len() < n {
            return Err(Error::DeserializeUnexpectedEnd);
        }
        let (taken, rest) = self.input.split_at(n);
        self.input = rest;
        Ok(taken)
    }

    varint!(varint_u16, u16, 3, 0b11);
    varint!(varint_u32, u32, 5, 0b1111);
    varint!(varint_u128, u128, 19, 0b11);
    varint!(varint_u64_slow, u64, 10, 0b1);

    /// A u64 varint: with 16 bytes left (all but the end of a buffer),
    /// read without a branch per byte (see `varint.rs`).
    #[inline]
    fn varint_u64(&mut self) -> Result<u64, Error> {
        let Some(sixteen) = self.input.first_chunk::<16>() else { return self.varint_u64_slow() };
        let (v, n) = super::varint::decode(sixteen).ok_or(Error::DeserializeBadVarint)?;
        self.input = &self.input[n..];
        Ok(v)
    }

    #[inline]
    fn len(&mut self) -> Result<usize, Error> {
        usize::try_from(self.varint_u64()?).map_err(|_| Error::DeserializeBadVarint)
    }
}

fn unzig16(n: u16) -> i16 {
    ((n >> 1) as i16) ^ (-((n & 1) as i16))
}

fn unzig32(n: u32) -> i32 {
    ((n >> 1) as i32) ^ (-((n & 1) as i32))
}

fn unzig64(n: u64) -> i64 {
    ((n >> 1) as i64) ^ (-((n & 1) as i64))
}

fn unzig128(n: u128) -> i128 {
    ((n >> 1) as i128) ^ (-((n & 1) as i128))
}

/// `len` elements (of a sequence, tuple or struct) or entries (of a map).
struct Counted<'a, 'de> {
    de: &'a mut Deserializer<'de>,
    len: usize,
}

impl<'de> de::SeqAccess<'de> for Counted<'_, 'de> {
    type Error = Error;

    #[inline]
    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, Error> {
        if self.len == 0 {
            return Ok(None);
        }
        self.len -= 1;
        seed.deserialize(&mut *self.de).map(Some)
    }

    #[inline]
    fn size_hint(&self) -> Option<usize> {
        // A length beyond the bytes left is not believed (postcard's rule).
        (self.len <= self.de.input.len()).then_some(self.len)
    }
}

impl<'de> de::MapAccess<'de> for Counted<'_, 'de> {
    type Error = Error;

    #[inline]
    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, Error> {
        if self.len == 0 {
            return Ok(None);
        }
        self.len -= 1;
        seed.deserialize(&mut *self.de).map(Some)
    }

    #[inline]
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        seed.deserialize(&mut *self.de)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.len)
    }
}

impl<'de> de::Deserializer<'de> for &mut Deserializer<'de> {
    type Error = Error;

    fn is_human_readable(&self) -> bool {
        false
    }

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Error> {
        Err(Error::WontImplement)
    }

    #[inline]
    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.byte()? {
            0 => visitor.visit_bool(false),
            1 => visitor.visit_bool(true),
            _ => Err(Error::DeserializeBadBool),
        }
    }

    #[inline]
    fn deserialize_i8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_i8(self.byte()? as i8)
    }

    #[inline]
    fn deserialize_i16<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_i16(unzig16(self.varint_u16()?))
    }

    #[inline]
    fn deserialize_i32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_i32(unzig32(self.varint_u32()?))
    }

    #[inline]
    fn deserialize_i64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_i64(unzig64(self.varint_u64()?))
    }

    #[inline]
    fn deserialize_i128<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_i128(unzig128(self.varint_u128()?))
    }

    #[inline]
    fn deserialize_u8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_u8(self.byte()?)
    }

    #[inline]
    fn deserialize_u16<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_u16(self.varint_u16()?)
    }

    #[inline]
    fn deserialize_u32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_u32(self.varint_u32()?)
    }

    #[inline]
    fn deserialize_u64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_u64(self.varint_u64()?)
    }

    #[inline]
    fn deserialize_u128<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_u128(self.varint_u128()?)
    }

    #[inline]
    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let b = self.take(4)?.try_into().expect("four bytes");
        visitor.visit_f32(f32::from_bits(u32::from_le_bytes(b)))
    }

    #[inline]
    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let b = self.take(8)?.try_into().expect("eight bytes");
        visitor.visit_f64(f64::from_bits(u64::from_le_bytes(b)))
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let len = self.len()?;
        if len > 4 {
            return Err(Error::DeserializeBadChar);
        }
        let bytes = self.take(len)?;
        let c = std::str::from_utf8(bytes).ok().and_then(|s| s.chars().next()).ok_or(Error::DeserializeBadChar)?;
        visitor.visit_char(c)
    }

    #[inline]
    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let len = self.len()?;
        let s = std::str::from_utf8(self.take(len)?).map_err(|_| Error::DeserializeBadUtf8)?;
        visitor.visit_borrowed_str(s)
    }

    #[inline]
    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let len = self.len()?;
        let s = std::str::from_utf8(self.take(len)?).map_err(|_| Error::DeserializeBadUtf8)?;
        visitor.visit_str(s)
    }

    #[inline]
    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let len = self.len()?;
        visitor.visit_borrowed_bytes(self.take(len)?)
    }

    #[inline]
    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let len = self.len()?;
        visitor.visit_bytes(self.take(len)?)
    }

    #[inline]
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.byte()? {
            0 => visitor.visit_none(),
            1 => visitor.visit_some(self),
            _ => Err(Error::DeserializeBadOption),
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(self, _name: &'static str, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }

    #[inline]
    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _name: &'static str, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    #[inline]
    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let len = self.len()?;
        visitor.visit_seq(Counted { de: self, len })
    }

    #[inline]
    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_seq(Counted { de: self, len })
    }

    #[inline]
    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_seq(Counted { de: self, len })
    }

    #[inline]
    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let len = self.len()?;
        visitor.visit_map(Counted { de: self, len })
    }

    #[inline]
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_seq(Counted { de: self, len: fields.len() })
    }

    #[inline]
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_enum(self)
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Error> {
        Err(Error::WontImplement)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Error> {
        Err(Error::WontImplement)
    }
}

impl<'de> de::EnumAccess<'de> for &mut Deserializer<'de> {
    type Error = Error;
    type Variant = Self;

    #[inline]
    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self), Error> {
        let index = self.varint_u32()?;
        let value = seed.deserialize(index.into_deserializer())?;
        Ok((value, self))
    }
}

impl<'de> de::VariantAccess<'de> for &mut Deserializer<'de> {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        Ok(())
    }

    #[inline]
    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, Error> {
        seed.deserialize(self)
    }

    #[inline]
    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_seq(Counted { de: self, len })
    }

    #[inline]
    fn struct_variant<V: Visitor<'de>>(self, fields: &'static [&'static str], visitor: V) -> Result<V::Value, Error> {
        visitor.visit_seq(Counted { de: self, len: fields.len() })
    }
}
