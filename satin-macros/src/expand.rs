//! Generates the job type and the public, sequential and parallel functions.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::{FnArg, Ident, ItemFn, Pat, ReturnType, Type};

use crate::rewrite::{self, Names};
use crate::{attr, signature};

pub(crate) fn divide_and_conquer(args: TokenStream, item: TokenStream) -> TokenStream {
    let func: ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(_) => {
            let e = not_a_function(&item);
            return with_error(item, e);
        }
    };
    let args = match attr::parse(args) {
        Ok(a) => a,
        Err(e) => return with_error(item, e),
    };
    if let Err(e) = signature::check(&func) {
        return with_error(item, e);
    }
    expand(&args, func)
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
        Ok(syn::Item::Impl(_)) => "an impl block; put it on a free function instead",
        Ok(syn::Item::Mod(_)) => "a module",
        Ok(syn::Item::Trait(_)) => "a trait",
        Ok(syn::Item::Const(_)) | Ok(syn::Item::Static(_)) => "a constant",
        _ => "this item",
    };
    let span = item.clone().into_iter().next().map_or(Span::call_site(), |t| t.span());
    syn::Error::new(span, format!("#[divide_and_conquer] applies to a recursive free function, not to {what}"))
}

fn expand(args: &attr::Args, func: ItemFn) -> TokenStream {
    let krate = &args.krate;
    // Only a function that states its own estimate or retries says so.
    let option = |v: Option<TokenStream>| match v {
        Some(v) => quote!(::core::option::Option::Some(#v)),
        None => quote!(::core::option::Option::None),
    };
    let policy = (args.expect_ns.is_some() || args.retries.is_some()).then(|| {
        let expect_ns = option(args.expect_ns.map(|ns| quote!(#ns)));
        let retries = option(args.retries.map(|n| quote!(#n)));
        quote!(.with_policy(#expect_ns, #retries))
    });
    let ItemFn { attrs, vis, sig, block } = func;
    let name = &sig.ident;
    let job = format_ident!("__SatinJob_{}", name);
    let seq = format_ident!("__satin_seq_{}", name);
    let par = format_ident!("__satin_par_{}", name);
    let ctx = rewrite::ctx_ident();

    let types: Vec<&Type> = sig
        .inputs
        .iter()
        .map(|a| match a {
            FnArg::Typed(pt) => &*pt.ty,
            FnArg::Receiver(_) => unreachable!("rejected by signature::check"),
        })
        .collect();
    // Public parameter names: the user's identifier where there is one.
    let public_names: Vec<Ident> = sig
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
    let fields: Vec<Ident> = (0..types.len()).map(|i| format_ident!("__satin_p{}", i)).collect();
    let output: Type = match &sig.output {
        ReturnType::Default => syn::parse_quote!(()),
        ReturnType::Type(_, ty) => (**ty).clone(),
    };
    let ret = &sig.output;
    let inputs = &sig.inputs;

    let fn_id = {
        let params = types.iter().map(|t| t.to_token_stream().to_string()).collect::<Vec<_>>().join(", ");
        format!("::{}({}) -> {}", name, params, output.to_token_stream())
    };
    let serde_crate = format!("{}::__private::serde", krate.to_token_stream()).replace(' ', "");

    let names = Names { func: name.clone(), arity: types.len(), job: job.clone(), krate: krate.clone() };
    let mut seq_block = (*block).clone();
    rewrite::rewrite_sequential(&names, &seq, &mut seq_block);
    let mut par_block = (*block).clone();
    rewrite::rewrite_parallel(&names, &mut par_block);

    let (docs, others): (Vec<_>, Vec<_>) = attrs.iter().partition(|a| a.path().is_ident("doc"));
    let assertions = types.iter().map(|ty| quote_spanned!(ty.span()=> #krate::__private::assert_param::<#ty>();));
    let output_span = match &sig.output {
        ReturnType::Default => name.span(),
        ReturnType::Type(_, ty) => ty.span(),
    };
    let output_assertion = quote_spanned!(output_span=> #krate::__private::assert_result::<#output>(););

    quote! {
        const _: () = {
            #(#assertions)*
            #output_assertion
        };

        #(#docs)*
        #(#others)*
        #vis fn #name(#(#public_names: #types),*) #ret {
            #krate::__private::enter(#job(#(#public_names),*))
        }

        #[doc(hidden)]
        #[allow(non_camel_case_types)]
        #[derive(#krate::__private::serde::Serialize, #krate::__private::serde::Deserialize)]
        #[serde(crate = #serde_crate)]
        #vis struct #job(#(pub #types),*);

        impl #krate::Job for #job {
            type Output = #output;
            const FN_ID: &'static str = concat!(module_path!(), #fn_id);
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
        }

        #krate::__private::inventory::submit! {
            #krate::__private::JobFn::of::<#job>()#policy
        }

        #[doc(hidden)]
        #(#others)*
        fn #seq(#inputs) #ret #seq_block

        #[doc(hidden)]
        #(#others)*
        #[allow(unused, clippy::all, clippy::pedantic, clippy::nursery)]
        fn #par(#ctx: &#krate::__private::Ctx<'_>, #inputs) #ret #par_block

    }
}

#[cfg(test)]
mod tests;
