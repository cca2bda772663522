//! A job's parameters read back one field at a time through [`Param`]
//! (written through `lent::ser_field` and `lent::ser_lent`).
//!
//! The macro writes the job type's `Serialize` and `Deserialize` with these
//! rather than deriving them: a parameter type that cannot travel then
//! fails one bound, `Param`'s, whose message says what to do — a derive
//! would add errors of its own that point into serde's source. The
//! encoding is the derive's: a tuple of the fields (postcard writes a tuple
//! struct and a newtype struct the same way), so content keys do not change.

use serde::de::{Error, SeqAccess};

use super::Param;

/// Reads parameter `index` of a job.
#[inline]
pub fn de_field<'de, T: Param, A: SeqAccess<'de>>(seq: &mut A, index: usize) -> Result<T, A::Error> {
    seq.next_element::<T>()?.ok_or_else(|| A::Error::invalid_length(index, &"the parameters of a call"))
}

/// Reads shared borrowed parameter `index` of a job: its data, or the
/// digest of a value this node holds (see `lent`).
#[inline]
pub fn de_lent<'de, U: super::Travel<Owned = O> + ?Sized, O: Param, A: SeqAccess<'de>>(
    seq: &mut A,
    index: usize,
) -> Result<super::lent::LentParam<U, O>, A::Error> {
    seq.next_element()?.ok_or_else(|| A::Error::invalid_length(index, &"the parameters of a call"))
}
