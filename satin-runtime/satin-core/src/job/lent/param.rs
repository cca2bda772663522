//! How a shared borrowed parameter travels: its data, or — for a value
//! the run's root borrows, which every node of the run holds — the digest
//! that names it, so that the thief borrows its own copy instead of
//! decoding one (see `pins.rs`).

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, EnumAccess, VariantAccess, Visitor};
use serde::ser::{Serialize, Serializer};

use super::pins::{self, Use};

const NAME: &str = "Lent";
const VARIANTS: &[&str] = &["Data", "Named"];

/// A shared borrowed parameter on its way out.
pub(super) enum Wire<'a, U: ?Sized> {
    Data(&'a U),
    Named([u8; 32]),
}

impl<U: Serialize + ?Sized> Serialize for Wire<'_, U> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Wire::Data(value) => s.serialize_newtype_variant(NAME, 0, VARIANTS[0], value),
            Wire::Named(digest) => s.serialize_newtype_variant(NAME, 1, VARIANTS[1], digest),
        }
    }
}

/// A shared borrowed parameter (`&U`) of a call as another node decodes
/// it: the data it sent (`O`, what `U`'s data decodes into: see
/// `Travel`), or this node's own copy of a value of the run's root,
/// borrowed until the call ends.
pub struct LentParam<U: ?Sized, O> {
    held: Held<U, O>,
}

enum Held<U: ?Sized, O> {
    Data(O),
    Root {
        at: *const U,
        /// The root's pin waits for this before the value may go.
        _use: Use,
    },
}

// SAFETY: the data is `Send`; a root value is only read through `&U`,
// which may cross threads as `U: Sync` (every borrowed parameter is,
// see `Lent`), and the value outlives the borrow (`_use`).
unsafe impl<U: Sync + ?Sized, O: Send> Send for LentParam<U, O> {}

impl<U: ?Sized, O> LentParam<U, O> {
    /// The parameter, borrowed as the call takes it (`borrow` borrows the
    /// data as `U`: see `Travel`).
    pub fn get<'a>(&'a self, borrow: impl FnOnce(&'a O) -> &'a U) -> &'a U {
        match &self.held {
            Held::Data(owned) => borrow(owned),
            // SAFETY: `resolve` gave a pointer to a `U` pinned as the
            // root's, which stays where it is until every `Use` of it,
            // this one included, has dropped.
            Held::Root { at, .. } => unsafe { &**at },
        }
    }
}

impl<U: ?Sized, O: Serialize> Serialize for LentParam<U, O> {
    /// As the data: a root value's as its data too (it encodes as what it
    /// decodes into, see `Travel`).
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &self.held {
            Held::Data(owned) => Wire::Data(owned).serialize(s),
            // A root value is borrowed, never owned, here: it goes out
            // by its digest's name only through `ser_lent`.
            Held::Root { .. } => Err(serde::ser::Error::custom("a borrowed root value is written through the call")),
        }
    }
}

impl<'de, U: ?Sized, O: de::DeserializeOwned> Deserialize<'de> for LentParam<U, O> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Read<U: ?Sized, O>(PhantomData<fn() -> LentParam<U, O>>);
        impl<'de, U: ?Sized, O: de::DeserializeOwned> Visitor<'de> for Read<U, O> {
            type Value = LentParam<U, O>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a borrowed parameter: its data, or the digest of a value of the run's root")
            }
            fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Self::Value, A::Error> {
                let (index, variant) = data.variant::<u32>()?;
                let held = match index {
                    0 => Held::Data(variant.newtype_variant::<O>()?),
                    1 => {
                        let digest: [u8; 32] = variant.newtype_variant()?;
                        let (at, _use) = pins::resolve::<U>(&digest).ok_or_else(|| {
                            de::Error::custom("a borrowed value named by its digest is not held here (another input?)")
                        })?;
                        Held::Root { at, _use }
                    }
                    other => return Err(de::Error::invalid_value(de::Unexpected::Unsigned(other.into()), &self)),
                };
                Ok(LentParam { held })
            }
        }
        d.deserialize_enum(NAME, VARIANTS, Read(PhantomData))
    }
}
