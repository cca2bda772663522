//! Generic functions: each instantiation (`msort::<i64>`, `msort::<String>`)
//! is a function of its own on the wire, named by the function's id and its
//! type arguments.
//!
//! `inventory` registers code at link time, which a generic function does
//! not have: only its instantiations do, and only the program's use makes
//! them. An instantiation therefore registers itself in this process the
//! first time one of its calls is keyed or encoded — which every call that
//! starts a run is, on every node (each node runs the program to that
//! call), and every call sent to another node is, on its sender — or is
//! made outside a run (`enter`). A node
//! asked to run an instantiation it has not registered refuses it
//! ([`crate::proto::Executor::can_run`]) and the job runs on its owner.
//!
//! The function itself (its id and source hash) does go into the
//! inventory, so nodes still compare every annotated body when they meet.

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{OnceLock, RwLock};

use serde::{de::DeserializeOwned, Serialize};

use super::registry::JobFn;

/// What a type argument of a `#[divide_and_conquer]` function must be: its
/// values travel to other threads and machines inside the parameters.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a type argument of a #[divide_and_conquer] function",
    label = "type arguments must be `Serialize + DeserializeOwned + Send + Sync + 'static`",
    note = "a generic function's calls travel to other threads and machines with their parameters: use an owned type that derives serde's `Serialize` and `Deserialize` and is `Send + Sync`, or write #[divide_and_conquer(local)] to keep the function's calls on the cores of the process that makes them (then any `Send + Sync` type will do)"
)]
pub trait TypeParam: Serialize + DeserializeOwned + Send + Sync + 'static {}
impl<T: Serialize + DeserializeOwned + Send + Sync + 'static> TypeParam for T {}

/// A generic annotated function as the inventory knows it: its id and a
/// hash of its source (see [`super::function_digest`]).
pub struct GenericFn {
    pub(super) fn_id: &'static str,
    pub(super) code: u64,
}

impl GenericFn {
    /// The entry of the generic function `fn_id`; used by generated code.
    pub const fn new(fn_id: &'static str, code: u64) -> GenericFn {
        GenericFn { fn_id, code }
    }
}

inventory::collect!(GenericFn);

/// Instantiations registered in this process.
#[derive(Default)]
struct Instances {
    /// Wire id, by the instantiation's `'static` job type.
    ids: HashMap<TypeId, &'static str>,
    /// How to run each, by wire id.
    fns: HashMap<&'static str, &'static JobFn>,
}

fn instances() -> &'static RwLock<Instances> {
    static INSTANCES: OnceLock<RwLock<Instances>> = OnceLock::new();
    INSTANCES.get_or_init(Default::default)
}

/// The wire id of the instantiation whose `'static` job type is `K`
/// (`fn_id` with `type_args`), registering it on first use with the entry
/// `entry` makes. Called by generated code only where a call is keyed or
/// encoded: never on the local fast path.
pub fn instance<K: 'static>(fn_id: &'static str, type_args: &[&'static str], entry: fn() -> JobFn) -> &'static str {
    let ty = TypeId::of::<K>();
    if let Some(id) = instances().read().unwrap_or_else(|e| e.into_inner()).ids.get(&ty) {
        return id;
    }
    let mut all = instances().write().unwrap_or_else(|e| e.into_inner());
    if let Some(id) = all.ids.get(&ty) {
        return id;
    }
    // Leaked once per instantiation the program uses: a handful of strings.
    let id: &'static str = Box::leak(format!("{fn_id}::<{}>", type_args.join(", ")).into_boxed_str());
    let job_fn: &'static JobFn = Box::leak(Box::new(entry().named(id)));
    all.ids.insert(ty, id);
    all.fns.insert(id, job_fn);
    id
}

/// The registered instantiation with wire id `id`.
pub(super) fn registered(id: &str) -> Option<&'static JobFn> {
    instances().read().unwrap_or_else(|e| e.into_inner()).fns.get(id).copied()
}

/// Every generic function linked into this program.
pub(super) fn generic_fns() -> impl Iterator<Item = &'static GenericFn> {
    inventory::iter::<GenericFn>.into_iter()
}
