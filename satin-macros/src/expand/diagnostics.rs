//! The warnings (errors with `strict`) for calls that stay sequential:
//! never silently sequential.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::{Block, Ident};

use crate::attr;
use crate::rewrite::{self, Names};

/// Every warning of the function `sig` declares (`shown` in messages): calls that
/// could overlap and none of which spawns, loops whose calls read what the
/// loop changes (`notes`), calls left in iterator adapters of the parallel
/// body `par_block`.
pub(super) fn warnings(
    args: &attr::Args,
    sig: &syn::Signature,
    names: &Names,
    block: &Block,
    par_block: &Block,
    spawn_sites: usize,
    notes: &[(Span, String)],
) -> Option<TokenStream> {
    let name = &sig.ident;
    let shown = args.shown.clone().unwrap_or_else(|| name.to_string());
    let sites = rewrite::call_sites(names, block);
    // Never silently sequential: calls that could run at once, none of
    // them in a form that spawns, are a warning (an error with `strict`).
    // (Calls that hold a `&mut` borrow stay in order on purpose.)
    let could_overlap = rewrite::calls_on_a_path(names, block) >= 2 && !names.own().exclusive.contains(&true);
    let mut sequential_warning = (spawn_sites == 0 && notes.is_empty() && could_overlap && !sites.is_empty()).then(|| {
        let msg = format!(
            "no call of `{shown}` here can run in parallel: none stands in a form that spawns (`let x = {shown}(..);`, `{shown}(a) + {shown}(b)`, calls as statements, `if`/`match` in a `let`, `||`/`&&`, loops, `.map(..).sum()`), so they run one after another; see docs/guide.md, \"Which calls run in parallel\""
        );
        stays_sequential(&format!("__satin_sequential_{name}"), &msg, sites[0], args.strict)
    });
    // A function that calls neither itself nor its group runs as the
    // plain one. Calls of another function that could run at once, and
    // would spawn if that function were of the group, are a warning: it
    // may be an annotated function this attribute does not see.
    if spawn_sites == 0 {
        let unseen = rewrite::only_other_calls(names, &sig.inputs, block).into_iter().find(|other| {
            let with_it = names.with_callee(&other.callee, other.arity);
            let (spawns, notes) = rewrite::rewrite_parallel(&with_it, &mut block.clone());
            let overlap = other.in_closure || rewrite::calls_on_a_path(&with_it, block) >= 2;
            spawns > 0 && notes.is_empty() && overlap
        });
        if let Some(rewrite::OtherCall { span, callee, .. }) = unseen {
            let msg = format!(
                "`{shown}` calls neither itself nor a function of its group, so it runs as the plain function, and its calls of `{callee}` run one after another; if `{callee}` is annotated, write the two in the same module of one source file (the attribute finds it there and spawns its calls) or in a `#[divide_and_conquer] mod`; see docs/guide.md, \"Functions that call each other\""
            );
            let warning = stays_sequential(&format!("__satin_no_group_{name}"), &msg, span, args.strict);
            sequential_warning = Some(quote!(#sequential_warning #warning));
        }
    }
    // Loops whose calls read what the loop changes: a warning each, naming
    // the variable.
    for (k, (span, msg)) in notes.iter().enumerate() {
        let warning = stays_sequential(&format!("__satin_in_loop_{name}_{k}"), msg, *span, args.strict);
        sequential_warning = Some(quote!(#sequential_warning #warning));
    }
    // Calls left in the closures of iterator adapters run element after
    // element: each is a warning of its own.
    for (k, span) in rewrite::calls_left_in_adapters(names, par_block).into_iter().enumerate() {
        let msg = format!(
            "this call of `{shown}` runs once per element, one element after another: a closure of this iterator method is not made parallel; spawn the calls with a loop (`for x in xs {{ v.push({shown}(x)); }}`) or `.map(|x| {shown}(x))` followed by `.sum()`, `.collect()`, `.fold(..)`, `.max_by_key(..)` or another method that reads every element; see docs/guide.md, \"Which calls run in parallel\""
        );
        let warning = stays_sequential(&format!("__satin_in_adapter_{name}_{k}"), &msg, span, args.strict);
        sequential_warning = Some(quote!(#sequential_warning #warning));
    }
    sequential_warning
}

/// A compile-time warning at `span` (an error with `strict`). A macro on
/// stable Rust raises a warning as a deprecation: `marker` is a deprecated
/// struct whose use carries the call's span.
fn stays_sequential(marker: &str, msg: &str, span: Span, strict: bool) -> TokenStream {
    if strict {
        return quote_spanned!(span=> compile_error!(#msg););
    }
    warning(marker, msg, span)
}

/// A compile-time warning at `span`: the use of a deprecated struct
/// `marker` whose note is `msg`.
pub(super) fn warning(marker: &str, msg: &str, span: Span) -> TokenStream {
    let marker = Ident::new(marker, span);
    let use_it = quote_spanned!(span=> let _ = #marker;);
    quote! {
        const _: () = {
            #[deprecated(note = #msg)]
            #[allow(non_camel_case_types)]
            struct #marker;
            #use_it
        };
    }
}
