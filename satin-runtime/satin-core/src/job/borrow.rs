//! Borrowed parameters: what a `&T`, `&[T]`, `&str` or `&mut` parameter
//! becomes when its call leaves the process.
//!
//! Locally a job holds the reference itself, as a `rayon::join` closure
//! would: nothing is copied, and the spawning frame outlives the job (its
//! slot waits for the job before it is dropped). A job that another node
//! steals is encoded as it stands — serde writes `&[T]` exactly as it
//! writes `Vec<T>` — and decoded there into the owned form named here; the
//! call then runs on a borrow of that owned value. A `&mut` parameter's
//! final contents travel back with the result and are written into the
//! caller's borrow before the result is read.

use serde::de::DeserializeOwned;

/// A type that a parameter may borrow: the owned form its data takes on
/// another node, and how to borrow it back.
#[diagnostic::on_unimplemented(
    message = "`&{Self}` cannot be a parameter of a #[divide_and_conquer] function",
    label = "a borrowed parameter must be `&T`, `&[T]` or `&str` with an owned, serialisable `T`",
    note = "the borrowed data travels by value to other machines: it must decode into an owned type"
)]
pub trait Travel {
    /// What the borrowed data decodes into on another node.
    type Owned: DeserializeOwned + Send + 'static;
    /// Borrows the decoded data as the parameter's type.
    fn borrow(owned: &Self::Owned) -> &Self;

    /// Where `part` lies within `whole` as (first element, elements), if
    /// it is a part of it: a sub-slice of a slice. A value of any other
    /// type has no parts.
    #[doc(hidden)]
    fn place_in(whole: &Self, part: &Self) -> Option<(usize, usize)> {
        let _ = (whole, part);
        None
    }

    /// The part of `whole` at `place` (see [`Travel::place_in`]).
    #[doc(hidden)]
    fn part(whole: &Self, place: (usize, usize)) -> Option<&Self> {
        let _ = (whole, place);
        None
    }
}

impl<T: DeserializeOwned + Send + 'static> Travel for T {
    type Owned = T;
    fn borrow(owned: &T) -> &T {
        owned
    }
}

impl<T: DeserializeOwned + Send + 'static> Travel for [T] {
    type Owned = Vec<T>;
    fn borrow(owned: &Vec<T>) -> &[T] {
        owned
    }

    fn place_in(whole: &[T], part: &[T]) -> Option<(usize, usize)> {
        let size = std::mem::size_of::<T>();
        let (start, at) = (whole.as_ptr() as usize, part.as_ptr() as usize);
        let from = at.checked_sub(start)?;
        // Zero-sized elements have no place; a part starts on an element.
        if size == 0 || from % size != 0 || (from / size).checked_add(part.len())? > whole.len() {
            return None;
        }
        Some((from / size, part.len()))
    }

    fn part(whole: &[T], (from, len): (usize, usize)) -> Option<&[T]> {
        whole.get(from..from.checked_add(len)?)
    }
}

impl Travel for str {
    type Owned = String;
    fn borrow(owned: &String) -> &str {
        owned
    }
}

/// A type that a `&mut` parameter may borrow: its final contents come back
/// from another node and are written into the caller's borrow.
#[diagnostic::on_unimplemented(
    message = "`&mut {Self}` cannot be a parameter of a #[divide_and_conquer] function",
    label = "a `&mut` parameter must be `&mut T` or `&mut [T]` with an owned, serialisable `T`",
    note = "the data travels to other machines and its new contents travel back"
)]
pub trait TravelMut: Travel {
    /// Borrows the decoded data mutably as the parameter's type.
    fn borrow_mut(owned: &mut Self::Owned) -> &mut Self;
    /// Overwrites `self` with what a call on another node left in its copy.
    fn write_back(&mut self, from: Self::Owned) -> Result<(), WriteBackError>;
}

impl<T: DeserializeOwned + Send + 'static> TravelMut for T {
    fn borrow_mut(owned: &mut T) -> &mut T {
        owned
    }
    fn write_back(&mut self, from: T) -> Result<(), WriteBackError> {
        *self = from;
        Ok(())
    }
}

impl<T: DeserializeOwned + Send + 'static> TravelMut for [T] {
    fn borrow_mut(owned: &mut Vec<T>) -> &mut [T] {
        owned
    }
    fn write_back(&mut self, from: Vec<T>) -> Result<(), WriteBackError> {
        if from.len() != self.len() {
            return Err(WriteBackError { expected: self.len(), got: from.len() });
        }
        for (to, value) in self.iter_mut().zip(from) {
            *to = value;
        }
        Ok(())
    }
}

/// A `&mut [T]` came back from another node with another length: the node
/// runs a different program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteBackError {
    expected: usize,
    got: usize,
}

impl std::fmt::Display for WriteBackError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "a `&mut` slice of {} elements came back from another node with {}", self.expected, self.got)
    }
}

impl std::error::Error for WriteBackError {}

/// What a borrowed parameter's data must be to travel: borrowable
/// ([`Travel`]), serialisable, and shared between threads.
#[diagnostic::on_unimplemented(
    message = "`&{Self}` cannot be a parameter of a #[divide_and_conquer] function",
    label = "a borrowed parameter must be `&T`, `&[T]` or `&str` with an owned, serialisable `T`",
    note = "the borrowed data travels by value to other machines: it must decode into an owned type"
)]
pub trait Lent: Travel + serde::Serialize + Sync {}
impl<U: Travel + serde::Serialize + Sync + ?Sized> Lent for U {}

/// Compile-time check used by generated code, spanned on a `&U` parameter.
pub const fn assert_borrowed_param<U: Lent + ?Sized>() {}

/// Compile-time check used by generated code, spanned on a `&mut U` parameter.
pub const fn assert_mut_param<U: TravelMut + serde::Serialize + Send + ?Sized>() {}

#[cfg(test)]
mod tests {
    use super::Travel;

    #[test]
    fn a_sub_slice_has_a_place_in_its_slice_and_reads_back_from_it() {
        let v: Vec<u64> = (0..100).collect();
        let (whole, part) = (&v[..], &v[30..70]);
        assert_eq!(<[u64]>::place_in(whole, part), Some((30, 40)));
        assert_eq!(<[u64]>::part(whole, (30, 40)), Some(part));
        assert_eq!(<[u64]>::place_in(part, whole), None, "a slice is no part of its own part");
        let other: Vec<u64> = (0..100).collect();
        assert_eq!(<[u64]>::place_in(&other, part), None, "equal data elsewhere is not a part");
        assert_eq!(<[u64]>::part(whole, (90, 20)), None, "beyond the end");
        assert_eq!(<[u64]>::part(whole, (usize::MAX, 2)), None);
        let unit = [(); 8];
        assert_eq!(<[()]>::place_in(&unit, &unit[2..4]), None, "zero-sized elements have no place");
        assert_eq!(<u64>::place_in(&v[0], &v[0]), None, "only slices have parts");
    }
}
