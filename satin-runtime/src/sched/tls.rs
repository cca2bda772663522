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
