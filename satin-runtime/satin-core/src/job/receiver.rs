//! The receiver of a `&mut self` method's recursive call, as the method
//! call would take it: `child.sum()` works whether `child` is a `Node`, a
//! `&mut Node` (reborrowed, no `mut` binding needed) or a `Box<Node>` (a
//! `&mut Box<Node>`, which coerces to `&mut Node` where the call passes it).
//! A `&self` call needs no help: `&x` coerces the same way.

/// `x.__satin_receiver_mut()`: `x` by mutable reference, after the
/// method-call adjustments of `x`.
pub trait ReceiverMut {
    /// This value, mutably borrowed.
    #[inline(always)]
    fn __satin_receiver_mut(&mut self) -> &mut Self {
        self
    }
}

impl<T: ?Sized> ReceiverMut for T {}
