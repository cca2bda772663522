//! Calls that never leave their process (`Job::LOCAL`): a function that
//! takes a closure, a borrow with a lifetime or a function pointer keeps
//! the whole of its parallelism on one machine's cores.
//!
//! Inside a run, such a call is an ordinary job: this process's workers
//! steal it, remote thieves pass it by (`sched::remote`). Outside one, in
//! a distributed program, it is not a run of the cluster — its
//! parameters cannot be encoded — but a run of this node's own pool: every
//! node makes the same call (each runs the same program) and gets the
//! same answer on its own cores.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use super::Job;
use crate::sched::Runtime;

thread_local! {
    static LOCAL_POOL: std::cell::RefCell<Option<Arc<Runtime>>> = const { std::cell::RefCell::new(None) };
}

/// Sets the pool that local calls made outside a run use on this thread
/// (the node's, see `dist::with_root_runner`); returns the previous one.
pub(crate) fn set_pool(pool: Option<Arc<Runtime>>) -> Option<Arc<Runtime>> {
    LOCAL_POOL.with(|p| std::mem::replace(&mut *p.borrow_mut(), pool))
}

/// Runs a local call made outside a run on this node's pool (or
/// sequentially if there is none), after saying once per function why
/// its calls stay here.
pub(crate) fn run_here<J: Job>(job: J) -> J::Output {
    if let Some(why) = J::LOCAL {
        say_once(J::FN_ID, why);
    }
    match LOCAL_POOL.with(|p| p.borrow().clone()) {
        Some(pool) => pool.run(move || super::enter(job)),
        None => job.run_sequential(),
    }
}

fn say_once(fn_id: &'static str, why: &str) {
    static SAID: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let mut said = SAID.lock().unwrap_or_else(|e| e.into_inner());
    if said.get_or_insert_with(HashSet::new).insert(fn_id) {
        eprintln!("satin: `{}` {why}: its calls stay on this node", short_name(fn_id));
    }
}

/// `crate::module::f(..) -> T` as `f`.
fn short_name(fn_id: &str) -> &str {
    let path = fn_id.split('(').next().unwrap_or(fn_id);
    path.rsplit("::").next().unwrap_or(path)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_function_is_named_without_its_module_or_signature() {
        assert_eq!(super::short_name("app::maths::integrate(& F, f64) -> f64"), "integrate");
        assert_eq!(super::short_name("integrate"), "integrate");
    }
}
