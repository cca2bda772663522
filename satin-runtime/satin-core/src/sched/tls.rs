//! The calling thread's current job context, for entry points that are not
//! passed one (the public function an annotated `fn` keeps).

use std::cell::Cell;

use super::ctx::Ctx;

thread_local! {
    static CURRENT: Cell<*const ()> = const { Cell::new(std::ptr::null()) };
}

/// The context of the job this thread is executing, if it is a worker thread.
pub(crate) fn current_ctx() -> Option<*const Ctx<'static>> {
    let p = CURRENT.with(Cell::get);
    (!p.is_null()).then_some(p as *const Ctx<'static>)
}

/// Installs a context for the duration of a job; restores the previous one on drop.
pub(crate) struct CurrentGuard {
    previous: *const (),
}

impl CurrentGuard {
    pub(crate) fn set(ctx: &Ctx<'_>) -> CurrentGuard {
        let previous = CURRENT.with(|c| c.replace(ctx as *const Ctx<'_> as *const ()));
        CurrentGuard { previous }
    }
}

impl Drop for CurrentGuard {
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(self.previous));
    }
}

/// Runs `f` with no runtime context: annotated functions called inside run
/// as their plain sequential versions, with no spawn overhead at all.
///
/// This is the grain-size cut-off of divide-and-conquer programs: call it in
/// the body of an annotated function once the remaining problem is small.
///
/// ```
/// # use satin::divide_and_conquer;
/// #[divide_and_conquer]
/// fn count(depth: u32) -> u64 {
///     if depth == 0 {
///         return 1;
///     }
///     if depth < 8 {
///         // Small enough: finish this subtree sequentially.
///         return satin::sequential(|| count(depth - 1) * 2);
///     }
///     let a = count(depth - 1);
///     let b = count(depth - 1);
///     a + b
/// }
/// let rt = satin::Runtime::new().unwrap();
/// assert_eq!(rt.run(|| count(16)), 1 << 16);
/// ```
pub fn sequential<R>(f: impl FnOnce() -> R) -> R {
    struct Restore(*const ());
    impl Drop for Restore {
        fn drop(&mut self) {
            CURRENT.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(CURRENT.with(|c| c.replace(std::ptr::null())));
    f()
}
