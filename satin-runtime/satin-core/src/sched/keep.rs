//! Values of one loop iteration that its spawned call borrows, kept until
//! the loop's calls are joined.
//!
//! `for mv in moves { let child = board.with(mv); let s = f(&child); .. }`
//! spawns every iteration's call before joining any, so each `child` must
//! outlive its iteration. The rewritten loop moves it here and borrows it
//! from here: [`Keep::keep`] takes `&self` and hands out a borrow as long
//! as the `Keep`'s, the pattern of an arena.

use std::cell::RefCell;

/// An append-only store of values, each in a heap allocation of its own
/// (see the module docs).
pub struct Keep<T> {
    /// Allocations made by `Box::into_raw`, freed when the store drops.
    values: RefCell<Vec<*mut T>>,
}

impl<T> Default for Keep<T> {
    fn default() -> Self {
        Keep { values: RefCell::new(Vec::new()) }
    }
}

impl<T> Keep<T> {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Moves `value` in and borrows it for as long as the store lives.
    pub fn keep(&self, value: T) -> &T {
        let at = Box::into_raw(Box::new(value));
        self.values.borrow_mut().push(at);
        // SAFETY: `at` is a live allocation of its own that nothing moves,
        // mutates or frees before the store drops, and the returned borrow
        // cannot outlive `&self`.
        unsafe { &*at }
    }
}

impl<T> Drop for Keep<T> {
    fn drop(&mut self) {
        for at in self.values.get_mut().drain(..) {
            // SAFETY: made by `Box::into_raw` in `keep`, freed once, here;
            // no borrow of it outlives the store.
            drop(unsafe { Box::from_raw(at) });
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn kept_values_stay_put_while_more_are_kept() {
        let keep = super::Keep::new();
        let first = keep.keep(vec![1u32, 2, 3]);
        let more: Vec<&Vec<u32>> = (0..1000).map(|i| keep.keep(vec![i])).collect();
        assert_eq!(first, &vec![1, 2, 3]);
        assert_eq!(more[999], &vec![999]);
    }
}
