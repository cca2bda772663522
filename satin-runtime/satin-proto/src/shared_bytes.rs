//! Byte strings inside messages (a job's parameters, a result), decoded
//! as slices of the frame that carried them instead of copies.
//!
//! serde gives a field's deserializer a borrowed `&[u8]` of the input,
//! never the `Bytes` it lies in. [`decode_from`] names that `Bytes` for
//! the duration of one decode (a thread-local), and a field read with
//! this module's `deserialize` takes its slice of it: a result of
//! megabytes goes from the network's buffer to the worker that reads it
//! with no copy. A small string is copied (a slice would keep its whole
//! frame alive), and so is one decoded from anything else.
//!
//! Encoding goes the other way: while a frame is encoded as segments
//! (`values::to_segments`), each large field offers its `Bytes`, and the
//! encoder makes it a segment of its own instead of copying it into the
//! frame.

use std::cell::RefCell;

use bytes::Bytes;
use serde::de::{Deserializer, Error, SeqAccess, Visitor};
use serde::Serializer;

/// Shorter strings are copied rather than sliced.
const SLICE_FROM: usize = 4096;

thread_local! {
    static SOURCE: RefCell<Option<Bytes>> = const { RefCell::new(None) };
    /// While a frame is encoded as segments (`Some`): the large field
    /// offered last, which the encoder is about to write.
    static OFFERED: RefCell<Option<Option<Bytes>>> = const { RefCell::new(None) };
}

/// Runs `encode` with large `Bytes` fields offered to it: see
/// [`offered`].
pub(crate) fn offer_while<R>(encode: impl FnOnce() -> R) -> R {
    struct Restore(Option<Option<Bytes>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let outer = self.0.take();
            OFFERED.with(|o| *o.borrow_mut() = outer);
        }
    }
    let _restore = Restore(OFFERED.with(|o| o.borrow_mut().replace(None)));
    encode()
}

/// The offered `Bytes` that `v` is (same address and length), if the
/// field being written offered one.
pub(crate) fn offered(v: &[u8]) -> Option<Bytes> {
    if v.len() < SLICE_FROM {
        return None;
    }
    OFFERED.with(|o| {
        let o = o.borrow();
        let last = o.as_ref()?.as_ref()?;
        (last.as_ptr() == v.as_ptr() && last.len() == v.len()).then(|| last.clone())
    })
}

fn offer(v: &Bytes) {
    if v.len() >= SLICE_FROM {
        OFFERED.with(|o| {
            if let Some(last) = o.borrow_mut().as_mut() {
                *last = Some(v.clone());
            }
        });
    }
}

/// Runs `decode` (which reads `source`) with `source` named as the
/// buffer its byte strings may be slices of.
pub fn decode_from<R>(source: &Bytes, decode: impl FnOnce(&[u8]) -> R) -> R {
    struct Restore(Option<Bytes>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let outer = self.0.take();
            SOURCE.with(|s| *s.borrow_mut() = outer);
        }
    }
    let _restore = Restore(SOURCE.with(|s| s.borrow_mut().replace(source.clone())));
    decode(source)
}

/// `v` as `Bytes`: a slice of the named source if it lies inside it.
fn share(v: &[u8]) -> Bytes {
    if v.len() >= SLICE_FROM {
        let sliced = SOURCE.with(|s| {
            let s = s.borrow();
            let source = s.as_ref()?;
            let (start, end) = (source.as_ptr() as usize, source.as_ptr() as usize + source.len());
            let at = v.as_ptr() as usize;
            (at >= start && at + v.len() <= end).then(|| source.slice_ref(v))
        });
        if let Some(b) = sliced {
            return b;
        }
    }
    Bytes::copy_from_slice(v)
}

struct SharedVisitor;

impl<'de> Visitor<'de> for SharedVisitor {
    type Value = Bytes;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a byte string")
    }

    fn visit_borrowed_bytes<E: Error>(self, v: &'de [u8]) -> Result<Bytes, E> {
        Ok(share(v))
    }

    fn visit_bytes<E: Error>(self, v: &[u8]) -> Result<Bytes, E> {
        Ok(Bytes::copy_from_slice(v))
    }

    fn visit_byte_buf<E: Error>(self, v: Vec<u8>) -> Result<Bytes, E> {
        Ok(Bytes::from(v))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Bytes, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 16));
        while let Some(b) = seq.next_element::<u8>()? {
            out.push(b);
        }
        Ok(Bytes::from(out))
    }
}

/// `#[serde(with = "crate::shared_bytes")]` for a `Bytes` field.
pub fn serialize<S: Serializer>(v: &Bytes, s: S) -> Result<S::Ok, S::Error> {
    offer(v);
    s.serialize_bytes(v)
}

/// See [`serialize`].
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Bytes, D::Error> {
    d.deserialize_bytes(SharedVisitor)
}

/// The same for an `Option<Bytes>` field.
pub mod option {
    use bytes::Bytes;
    use serde::de::{Deserializer, Visitor};
    use serde::Serializer;

    /// `#[serde(with = "crate::shared_bytes::option")]`.
    pub fn serialize<S: Serializer>(v: &Option<Bytes>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(b) => {
                super::offer(b);
                s.serialize_some(&serde_bytes::Bytes::new(b))
            }
            None => s.serialize_none(),
        }
    }

    struct OptionVisitor;

    impl<'de> Visitor<'de> for OptionVisitor {
        type Value = Option<Bytes>;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an optional byte string")
        }

        fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            super::deserialize(d).map(Some)
        }
    }

    /// See [`serialize`].
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Bytes>, D::Error> {
        d.deserialize_option(OptionVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::{Deserialize, Serialize};

    #[derive(Serialize, Deserialize, PartialEq, Debug)]
    struct Carrier {
        #[serde(with = "crate::shared_bytes")]
        big: Bytes,
        #[serde(with = "crate::shared_bytes::option")]
        maybe: Option<Bytes>,
        #[serde(with = "crate::shared_bytes")]
        small: Bytes,
    }

    #[test]
    fn large_strings_are_slices_of_the_frame_and_small_ones_copies() {
        let c = Carrier {
            big: Bytes::from(vec![7u8; 10_000]),
            maybe: Some(Bytes::from(vec![9u8; 5_000])),
            small: Bytes::from_static(b"abc"),
        };
        let frame = Bytes::from(postcard::to_allocvec(&c).unwrap());
        let back: Carrier = decode_from(&frame, |b| postcard::from_bytes(b).unwrap());
        assert_eq!(back, c);
        let inside = |b: &Bytes| {
            let at = b.as_ptr() as usize;
            at >= frame.as_ptr() as usize && at + b.len() <= frame.as_ptr() as usize + frame.len()
        };
        assert!(inside(&back.big));
        assert!(inside(back.maybe.as_ref().unwrap()));
        assert!(!inside(&back.small));
        // Without a named source, everything is a copy, and the same value.
        let copied: Carrier = postcard::from_bytes(&frame).unwrap();
        assert!(!inside(&copied.big));
        assert_eq!(copied, c);
        let none = Carrier { maybe: None, ..copied };
        let again: Carrier = postcard::from_bytes(&postcard::to_allocvec(&none).unwrap()).unwrap();
        assert_eq!(again, none);
    }
}
