//! How a shared borrowed parameter travels: its data; or, for a value the
//! thief holds — one the run's root borrows (every node of the run holds
//! those: `pins.rs`) or one kept from an earlier steal (`cache.rs`) — the
//! digest that names it, so that the thief borrows its own copy instead
//! of decoding one; or, for a large value whose digest the victim knows,
//! its digest and data, which the thief keeps.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, EnumAccess, VariantAccess, Visitor};
use serde::ser::{Serialize, Serializer};

use super::cache::{self, Keep};
use super::pins::{self, Digest, Use};
use crate::job::Travel;

const NAME: &str = "Lent";
const VARIANTS: &[&str] = &["Data", "Named", "Keyed", "Part"];

/// A shared borrowed parameter on its way out.
pub(super) enum Wire<'a, U: ?Sized> {
    Data(&'a U),
    Named([u8; 32]),
    /// Digest, length of the encoding, data.
    Keyed([u8; 32], u64, &'a U),
    /// A part of a value the thief holds: the value's digest, the part's
    /// first element and its length (`Travel::place_in`).
    Part([u8; 32], u64, u64),
}

impl<U: Serialize + ?Sized> Serialize for Wire<'_, U> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Wire::Data(value) => s.serialize_newtype_variant(NAME, 0, VARIANTS[0], value),
            Wire::Named(digest) => s.serialize_newtype_variant(NAME, 1, VARIANTS[1], digest),
            Wire::Keyed(digest, len, value) => s.serialize_newtype_variant(NAME, 2, VARIANTS[2], &(digest, len, value)),
            Wire::Part(digest, from, len) => s.serialize_newtype_variant(NAME, 3, VARIANTS[3], &(digest, from, len)),
        }
    }
}

/// A shared borrowed parameter (`&U`) of a call as another node decodes
/// it: the data it sent (`O`, what `U`'s data decodes into: see
/// `Travel`), or this node's own copy of the value — the run's root's,
/// or one kept from another node — borrowed until the call ends.
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
    Kept {
        at: *const U,
        _keep: Keep,
    },
}

// SAFETY: the data is `Send`; a root or kept value is only read through
// `&U`, which may cross threads as `U: Sync` (every borrowed parameter
// is, see `Lent`), and the value outlives the borrow (`_use`, `_keep`).
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
            // SAFETY: `cache::keep` or `cache::find` gave a pointer into
            // the value that `_keep` holds alive, which does not move.
            Held::Kept { at, .. } => unsafe { &**at },
        }
    }
}

impl<'de, U: Travel<Owned = O> + ?Sized, O: de::DeserializeOwned + Send + 'static> Deserialize<'de>
    for LentParam<U, O>
{
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Read<U: ?Sized, O>(PhantomData<fn() -> LentParam<U, O>>);
        impl<'de, U: Travel<Owned = O> + ?Sized, O: de::DeserializeOwned + Send + 'static> Visitor<'de> for Read<U, O> {
            type Value = LentParam<U, O>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a borrowed parameter: its data, the digest of a value held here, both, or a part of one")
            }
            fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Self::Value, A::Error> {
                let (index, variant) = data.variant::<u32>()?;
                let held = match index {
                    0 => Held::Data(variant.newtype_variant::<O>()?),
                    1 => {
                        let digest: [u8; 32] = variant.newtype_variant()?;
                        match pins::resolve::<U>(&digest) {
                            Some((at, _use)) => Held::Root { at, _use },
                            None => {
                                let (at, _keep) = cache::find::<U>(&digest).ok_or_else(|| {
                                    de::Error::custom(
                                        "a borrowed value named by its digest is not held here (another input?)",
                                    )
                                })?;
                                Held::Kept { at, _keep }
                            }
                        }
                    }
                    2 => {
                        let (hash, len, value): ([u8; 32], u64, O) = variant.newtype_variant()?;
                        let (at, _keep) = cache::keep::<U, O>(Digest { hash, len }, value);
                        Held::Kept { at, _keep }
                    }
                    3 => {
                        let (digest, from, len): ([u8; 32], u64, u64) = variant.newtype_variant()?;
                        let place = (usize::try_from(from).ok(), usize::try_from(len).ok());
                        let place = match place {
                            (Some(from), Some(len)) => (from, len),
                            _ => {
                                return Err(de::Error::custom("a part of a borrowed value beyond this machine's reach"))
                            }
                        };
                        let missing = || {
                            de::Error::custom(
                                "a part of a borrowed value named by its digest is not held here (another input?)",
                            )
                        };
                        match pins::resolve_part::<U>(&digest, place) {
                            Some((at, _use)) => Held::Root { at, _use },
                            None => {
                                let (whole, _keep) = cache::find::<U>(&digest).ok_or_else(missing)?;
                                // SAFETY: `cache::find` gave a pointer into the
                                // value `_keep` holds alive, which does not move.
                                let part = U::part(unsafe { &*whole }, place).ok_or_else(missing)?;
                                Held::Kept { at: part as *const U, _keep }
                            }
                        }
                    }
                    other => return Err(de::Error::invalid_value(de::Unexpected::Unsigned(other.into()), &self)),
                };
                Ok(LentParam { held })
            }
        }
        d.deserialize_enum(NAME, VARIANTS, Read(PhantomData))
    }
}
