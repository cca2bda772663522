//! Generates, for one annotated function, its public function, its job
//! type and the copies of its body. By concern: `names` (the generated
//! items' identifiers), `params` (how each parameter is passed),
//! `diagnostics` (the warnings for calls that stay sequential),
//! `job_type` and `borrowed` (the job type of a function with owned
//! parameters, and of one that borrows), `copies` (the bodies).

mod borrowed;
mod copies;
mod diagnostics;
mod job_type;
pub(crate) mod local;
mod names;
mod params;

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::{FnArg, Ident, ItemFn, Pat, ReturnType, Type};

use crate::generics::TypeParams;
use crate::rewrite::{self, Names};
use crate::{attr, signature};
use borrowed::Borrowed;
use copies::Bodies;
use names::Idents;
use params::ParamKind;

/// The expansion of one function; `shown` is how messages name it (a
/// method's `Type::name`), if not by its own name; `peers` are the
/// functions of its group, whose calls spawn too; `callable` other
/// annotated functions it calls, whose calls spawn where that changes
/// nothing else (see `siblings.rs`).
pub(crate) fn divide_and_conquer_named(
    args: TokenStream,
    item: TokenStream,
    shown: Option<String>,
    peers: Vec<syn::Signature>,
    callable: Vec<syn::Signature>,
) -> TokenStream {
    let func: ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(_) => {
            let e = not_a_function(&item);
            return with_error(item, e);
        }
    };
    let mut args = match attr::parse(args) {
        Ok(a) => a,
        Err(e) => return with_error(item, e),
    };
    // `Self` in a function alone: a method of a block without the attribute.
    if shown.is_none() && crate::mentions::mentions(&func, &Ident::new("Self", Span::call_site())) {
        let e = syn::Error::new(
            func.sig.ident.span(),
            "a method needs #[divide_and_conquer] on its `impl` block as well (`#[divide_and_conquer] impl Type { .. }`): the jobs of a method are generated beside the block, which only the block's attribute can do",
        );
        return with_error(item, e);
    }
    args.shown = shown;
    args.peers = peers;
    args.callable = callable;
    let local = local::of(&func.sig, &args).is_some();
    if let Err(e) = signature::check(&func, local) {
        return with_error(item, e);
    }
    if let Err(e) = TypeParams::of(&func.sig, &args.krate, local).check(&func.sig) {
        return with_error(item, e);
    }
    expand(&args, func)
}

/// `names` with each annotated function of `others` among the callees
/// whose calls, added, make more of `block`'s calls spawn while no loop's
/// calls take turns that did not before: two calls of a kernel from a
/// driver (`quickhull`'s two `hull_side`s) spawn, a call in a loop over
/// time steps stays the entry call it was.
fn spawning_too(mut names: Names, others: &[syn::Signature], block: &syn::Block) -> Names {
    if others.is_empty() {
        return names;
    }
    let (mut spawns, notes) = rewrite::rewrite_parallel(&names, &mut block.clone());
    for other in others {
        let with_other = names.with(names::callee(other));
        let (more, notes_then) = rewrite::rewrite_parallel(&with_other, &mut block.clone());
        if more > spawns && notes_then.len() == notes.len() {
            (names, spawns) = (with_other, more);
        }
    }
    names
}

/// Keeps the user's item next to the error so the rest of their code (and
/// their IDE) still sees the function.
fn with_error(item: TokenStream, e: syn::Error) -> TokenStream {
    let e = e.to_compile_error();
    quote!(#item #e)
}

fn not_a_function(item: &TokenStream) -> syn::Error {
    let what = match syn::parse2::<syn::Item>(item.clone()) {
        Ok(syn::Item::Struct(_)) => "a struct",
        Ok(syn::Item::Enum(_)) => "an enum",
        Ok(syn::Item::Trait(_)) => "a trait",
        Ok(syn::Item::Const(_)) | Ok(syn::Item::Static(_)) => "a constant",
        _ => "this item",
    };
    let span = item.clone().into_iter().next().map_or(Span::call_site(), |t| t.span());
    syn::Error::new(span, format!("#[divide_and_conquer] applies to a recursive free function, not to {what}"))
}

fn expand(args: &attr::Args, func: ItemFn) -> TokenStream {
    let krate = &args.krate;
    let code = code_hash(&func);
    let policy = policy(args, code);
    let ItemFn { attrs, vis, sig, block } = func;
    let name = &sig.ident;
    let ids = Idents::of(name);
    let params = Params::of(&sig);
    let Params { types, public_names, fields, output, kinds } = &params;
    let fn_id = {
        let params = types.iter().map(|t| t.to_token_stream().to_string()).collect::<Vec<_>>().join(", ");
        format!("::{}({}) -> {}", name, params, output.to_token_stream())
    };

    let mut callees = vec![names::callee(&sig)];
    callees.extend(args.peers.iter().filter(|p| p.ident != *name).map(names::callee));
    let names = spawning_too(Names { krate: krate.clone(), callees }, &args.callable, &block);
    let bodies = Bodies::rewrite(&names, &block, &ids);
    let sequential_warning =
        diagnostics::warnings(args, &sig, &names, &block, &bodies.par, bodies.spawn_sites, &bodies.notes);

    let local = local::of(&sig, args);
    let type_params = TypeParams::of(&sig, krate, local.is_some());
    let (const_assertions, body_assertions) = assertions(krate, &sig, &params, &type_params, local.is_some());
    let local_note = local
        .as_ref()
        .and_then(|l| l.note.as_ref())
        .map(|(span, msg)| diagnostics::warning(&format!("__satin_local_{name}"), msg, *span));
    let generic_entry = if type_params.is_generic() && local.is_none() {
        quote! {
            #krate::__private::inventory::submit! {
                #krate::__private::GenericFn::new(concat!(module_path!(), #fn_id), #code)
            }
        }
    } else {
        TokenStream::new()
    };
    let run_fns = run_fns(krate, &ids, fields, output);
    let shown = args.shown.clone().unwrap_or_else(|| name.to_string());
    let job_type = if let Some(local) = &local {
        let job = local::LocalJob {
            krate,
            vis: &vis,
            job: &ids.job,
            sig: &sig,
            types,
            output,
            where_clause: type_params.where_clause(),
            why: &local.why,
            shown: &shown,
        };
        job.emit(&fn_id, &run_fns)
    } else if kinds.iter().any(|k| !matches!(k, ParamKind::Owned)) {
        let serde_crate = format!("{}::__private::serde", krate.to_token_stream()).replace(' ', "");
        let borrowed = Borrowed {
            job: &ids.job,
            krate,
            serde_crate: &serde_crate,
            vis: &vis,
            output,
            fields,
            type_params: &type_params,
        };
        borrowed.job_type(name, types, kinds, &fn_id, &run_fns, Some(&policy))
    } else {
        job_type::owned(krate, &vis, &ids.job, types, output, &type_params, &fn_id, &run_fns, &policy)
    };

    let (docs, others): (Vec<_>, Vec<_>) = attrs.iter().partition(|a| a.path().is_ident("doc"));
    let (fn_generics, where_fn) = (type_params.decl(), type_params.where_clause());
    let shared = copies::Shared {
        krate,
        others: &others,
        fn_generics,
        where_fn: &where_fn,
        inputs: &sig.inputs,
        ret: &sig.output,
        fields,
        types,
    };
    let copies = copies::emit(&ids, &shared, &bodies);
    let (job, ret) = (&ids.job, &sig.output);
    quote! {
        #const_assertions
        #sequential_warning
        #local_note

        #(#docs)*
        #(#others)*
        #vis fn #name #fn_generics (#(#public_names: #types),*) #ret #where_fn {
            #body_assertions
            #krate::__private::enter(#job(#(#public_names),*))
        }

        #job_type
        #generic_entry

        #copies
    }
}

/// The job's policy: a function's own estimate or retries, if it states
/// them, and the hash of its code — nodes of one run must run the same
/// code, not only functions of the same names: the handshake compares a
/// hash of every annotated body.
fn policy(args: &attr::Args, code: u64) -> TokenStream {
    // Only a function that states its own estimate or retries says so.
    let option = |v: Option<TokenStream>| match v {
        Some(v) => quote!(::core::option::Option::Some(#v)),
        None => quote!(::core::option::Option::None),
    };
    let with_policy = (args.expect_ns.is_some() || args.retries.is_some()).then(|| {
        let expect_ns = option(args.expect_ns.map(|ns| quote!(#ns)));
        let retries = option(args.retries.map(|n| quote!(#n)));
        quote!(.with_policy(#expect_ns, #retries))
    });
    quote!(#with_policy .code(#code))
}

/// The parameters of a function as the generated items use them.
struct Params<'s> {
    types: Vec<&'s Type>,
    /// The user's identifier where there is one (for the public function).
    public_names: Vec<Ident>,
    /// The job's fields.
    fields: Vec<Ident>,
    output: Type,
    kinds: Vec<ParamKind>,
}

impl<'s> Params<'s> {
    fn of(sig: &'s syn::Signature) -> Params<'s> {
        let types: Vec<&Type> = sig
            .inputs
            .iter()
            .map(|a| match a {
                FnArg::Typed(pt) => &*pt.ty,
                FnArg::Receiver(_) => unreachable!("rejected by signature::check"),
            })
            .collect();
        let public_names = sig
            .inputs
            .iter()
            .enumerate()
            .map(|(i, a)| match a {
                FnArg::Typed(pt) => match &*pt.pat {
                    Pat::Ident(pi) if pi.subpat.is_none() => pi.ident.clone(),
                    _ => format_ident!("__satin_p{}", i),
                },
                FnArg::Receiver(_) => unreachable!("rejected by signature::check"),
            })
            .collect();
        let fields = (0..types.len()).map(|i| format_ident!("__satin_p{}", i)).collect();
        let output: Type = match &sig.output {
            ReturnType::Default => syn::parse_quote!(()),
            ReturnType::Type(_, ty) => (**ty).clone(),
        };
        let kinds = types.iter().map(|t| ParamKind::of(t)).collect();
        Params { types, public_names, fields, output, kinds }
    }
}

/// The checks that every parameter and the result can travel, each at
/// its type's span: as a constant item, or for a generic function in its
/// body, where its type parameters are in scope (and where a type argument
/// that cannot travel has failed `TypeParam` at the call already).
fn assertions(
    krate: &syn::Path,
    sig: &syn::Signature,
    params: &Params<'_>,
    type_params: &TypeParams,
    local: bool,
) -> (TokenStream, TokenStream) {
    // A local function's parameters need not travel (`local.rs`).
    let kinds = if local { &[][..] } else { &params.kinds[..] };
    let assertions = params.types.iter().zip(kinds).map(|(ty, kind)| match kind {
        ParamKind::Owned => quote_spanned!(ty.span()=> #krate::__private::assert_param::<#ty>();),
        ParamKind::Shared(elem) => quote_spanned!(ty.span()=> #krate::__private::assert_borrowed_param::<#elem>();),
        ParamKind::Mut(elem) => quote_spanned!(ty.span()=> #krate::__private::assert_mut_param::<#elem>();),
    });
    let output_span = match &sig.output {
        ReturnType::Default => sig.ident.span(),
        ReturnType::Type(_, ty) => ty.span(),
    };
    let output = &params.output;
    // A local function's results need not travel either (`job/codec.rs`).
    let output_assertion = match local {
        true => quote!(),
        false => quote_spanned!(output_span=> #krate::__private::assert_result::<#output>();),
    };
    if type_params.is_generic() {
        (quote!(), quote!(#(#assertions)* #output_assertion))
    } else {
        (quote!(const _: () = { #(#assertions)* #output_assertion };), quote!())
    }
}

/// The `Job` methods that run a call in each of its copies.
fn run_fns(krate: &syn::Path, ids: &Idents, fields: &[Ident], output: &Type) -> TokenStream {
    let Idents { job, seq, par, lazy, .. } = ids;
    let ctx = rewrite::ctx_ident();
    quote! {
        #[inline]
        fn run_parallel(self, #ctx: &#krate::__private::Ctx<'_>) -> #output {
            let #job(#(#fields),*) = self;
            #par(#ctx, #(#fields),*)
        }
        #[inline]
        fn run_sequential(self) -> #output {
            let #job(#(#fields),*) = self;
            #seq(#(#fields),*)
        }
        #[inline]
        fn run_lazy(self, #ctx: &#krate::__private::Ctx<'_>) -> #output {
            let #job(#(#fields),*) = self;
            #lazy(#ctx, #(#fields),*)
        }
    }
}

#[cfg(test)]
mod tests;

/// FNV-1a over the function as written (its tokens, so formatting and
/// comments do not count, doc comments do): equal for the same source.
fn code_hash(func: &ItemFn) -> u64 {
    quote!(#func)
        .to_string()
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
}
