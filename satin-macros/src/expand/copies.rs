//! The copies of the user's body, each with its reason to exist:
//!
//! - `seq`: the body with every annotated call made plainly, to the
//!   callees' `seq` copies — what a call outside any run does
//!   (`Job::run_sequential`: a program without a runtime, a test), at the
//!   plain function's speed.
//! - `par`: the body with its calls spawned — what a job runs when its
//!   calls are worth handing out (a call that was stolen, promoted, or
//!   entered from outside).
//! - `lazybody`, `lazyquiet`, `lazyquiet2`: the lazy ring. A call run
//!   inline goes through `lazy` (no copy: a poll, then `par` if some worker
//!   wants work, `lazybody` otherwise); the ring's bodies run their calls
//!   straight in the next copy, so a poll happens every third level — a
//!   third of a poll per call on a fine-grained tree — and a copy never
//!   calls itself, so the compiler can inline along the ring.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::{Attribute, Block, Ident, Type};

use super::names::Idents;
use crate::rewrite::{self, Names};

/// The rewritten copies of one body.
pub(super) struct Bodies {
    pub(super) seq: Block,
    pub(super) par: Block,
    lazybody: Block,
    lazyquiet: Block,
    lazyquiet2: Block,
    /// Places where `par` spawns, and why calls that could run in
    /// parallel do not (see `rewrite::rewrite_parallel`).
    pub(super) spawn_sites: usize,
    pub(super) notes: Vec<(Span, String)>,
}

impl Bodies {
    pub(super) fn rewrite(names: &Names, block: &Block, ids: &Idents) -> Bodies {
        let mut seq = block.clone();
        rewrite::rewrite_sequential(names, &mut seq);
        let mut par = block.clone();
        let (spawn_sites, notes) = rewrite::rewrite_parallel(names, &mut par);
        // Each block is the body of the copy it is named after; its calls
        // go to the next copy of the ring.
        let mut lazybody = block.clone();
        rewrite::rewrite_lazy(names, &ids.lazy_quiet, &mut lazybody);
        let mut lazyquiet = block.clone();
        rewrite::rewrite_lazy(names, &ids.lazy_quiet2, &mut lazyquiet);
        let mut lazyquiet2 = block.clone();
        rewrite::rewrite_lazy(names, &ids.lazy, &mut lazyquiet2);
        Bodies { seq, par, lazybody, lazyquiet, lazyquiet2, spawn_sites, notes }
    }
}

/// The signature parts every copy shares.
pub(super) struct Shared<'a> {
    pub(super) krate: &'a syn::Path,
    /// The user's attributes other than docs (`#[cfg]`, `#[inline]`, …).
    pub(super) others: &'a [&'a Attribute],
    pub(super) fn_generics: &'a TokenStream,
    pub(super) where_fn: &'a TokenStream,
    pub(super) inputs: &'a syn::punctuated::Punctuated<syn::FnArg, syn::token::Comma>,
    pub(super) ret: &'a syn::ReturnType,
    pub(super) fields: &'a [Ident],
    pub(super) types: &'a [&'a Type],
}

/// The copies as items, and `lazy`, the polling shim.
pub(super) fn emit(ids: &Idents, shared: &Shared<'_>, bodies: &Bodies) -> TokenStream {
    let Shared { krate, others, fn_generics, where_fn, inputs, ret, fields, types } = shared;
    let Idents { seq, par, lazy, lazy_body, lazy_quiet, lazy_quiet2, .. } = ids;
    let Bodies { seq: seq_block, par: par_block, lazybody, lazyquiet, lazyquiet2, .. } = bodies;
    let ctx = rewrite::ctx_ident();
    quote! {
        #[doc(hidden)]
        #(#others)*
        fn #seq #fn_generics (#inputs) #ret #where_fn #seq_block

        #[doc(hidden)]
        #(#others)*
        #[allow(unused, clippy::all, clippy::pedantic, clippy::nursery)]
        fn #par #fn_generics (#ctx: &#krate::__private::Ctx<'_>, #inputs) #ret #where_fn #par_block

        /// A call run lazily: sequentially, unless some worker wants work
        /// (a poll of this worker's flag).
        #[doc(hidden)]
        #(#others)*
        #[inline]
        #[allow(clippy::too_many_arguments)]
        fn #lazy #fn_generics (#ctx: &#krate::__private::Ctx<'_>, #(#fields: #types),*) #ret #where_fn {
            if #ctx.promote() {
                return #par(#ctx, #(#fields),*);
            }
            #lazy_body(#ctx, #(#fields),*)
        }

        #[doc(hidden)]
        #(#others)*
        #[allow(unused, clippy::all, clippy::pedantic, clippy::nursery)]
        fn #lazy_body #fn_generics (#ctx: &#krate::__private::Ctx<'_>, #inputs) #ret #where_fn #lazybody

        #[doc(hidden)]
        #(#others)*
        #[allow(unused, clippy::all, clippy::pedantic, clippy::nursery)]
        fn #lazy_quiet #fn_generics (#ctx: &#krate::__private::Ctx<'_>, #inputs) #ret #where_fn #lazyquiet

        #[doc(hidden)]
        #(#others)*
        #[allow(unused, clippy::all, clippy::pedantic, clippy::nursery)]
        fn #lazy_quiet2 #fn_generics (#ctx: &#krate::__private::Ctx<'_>, #inputs) #ret #where_fn #lazyquiet2

    }
}
