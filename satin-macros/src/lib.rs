//! `#[divide_and_conquer]`: turns a recursive function into spawnable jobs.
//!
//! The entry point is thin; the work happens in ordinary modules that take
//! and return `proc_macro2` tokens, so it can be unit-tested:
//! `attr` parses the arguments, `signature` checks the function,
//! `rewrite` finds recursive calls and turns them into spawns and syncs,
//! `expand` generates the job type and the function bodies (`generics`
//! what a generic function adds, `methods` and `modules` the groups,
//! `siblings` the group of a function alone).

mod attr;
mod expand;
mod generics;
mod mentions;
mod methods;
mod modules;
mod rewrite;
mod siblings;
mod signature;

use proc_macro::TokenStream;

/// Runs an ordinary recursive function in parallel.
///
/// Every call of the function inside its own body becomes a spawn that may run
/// on another core (or machine); the first read of its result waits for it.
/// See the `satin` crate documentation and `docs/guide.md` for the recognised
/// forms and the purity rule.
///
/// Arguments: `crate = "path"` names the runtime crate if it is re-exported
/// under another path (default `::satin`); `expect = "2s"` and `retries = 3`
/// give the function's own estimate and retries for calls that run on
/// other nodes (timeouts count from the estimate; a failed call runs again
/// up to `retries` times).
#[proc_macro_attribute]
pub fn divide_and_conquer(args: TokenStream, item: TokenStream) -> TokenStream {
    expand_item(args.into(), item.into()).into()
}

/// What the attribute stands on: an `impl` block and a module expand
/// their functions one by one (`methods.rs`, `modules.rs`), each through
/// `expand`, which knows nothing of blocks and modules.
fn expand_item(args: proc_macro2::TokenStream, item: proc_macro2::TokenStream) -> proc_macro2::TokenStream {
    if let Ok(block) = syn::parse2::<syn::ItemImpl>(item.clone()) {
        return methods::expand_impl(args, block);
    }
    if let Ok(module) = syn::parse2::<syn::ItemMod>(item.clone()) {
        return modules::expand_mod(args, module);
    }
    // A function alone: the annotated functions of its module in its
    // source file that call it back are its group, the others it calls
    // may be (`siblings.rs`).
    let found = syn::parse2::<syn::ItemFn>(item.clone()).map(|f| siblings::of(&f)).unwrap_or_default();
    expand::divide_and_conquer_named(args, item, None, found.group, found.called)
}
