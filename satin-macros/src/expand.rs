//! Generates the job type and the public, sequential and parallel functions.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::{FnArg, Ident, ItemFn, Pat, ReturnType, Type};

use crate::generics::{self, TypeParams};
use crate::rewrite::{self, Names};
use crate::{attr, signature};

pub(crate) fn divide_and_conquer(args: TokenStream, item: TokenStream) -> TokenStream {
    if let Ok(block) = syn::parse2::<syn::ItemImpl>(item.clone()) {
        return crate::methods::expand_impl(args, block);
    }
    if let Ok(module) = syn::parse2::<syn::ItemMod>(item.clone()) {
        return crate::modules::expand_mod(args, module);
    }
    divide_and_conquer_named(args, item, None, Vec::new())
}

/// The expansion of one function; `shown` is how messages name it (a
/// method's `Type::name`), if not by its own name; `peers` are the
/// functions of its group, whose calls spawn too.
pub(crate) fn divide_and_conquer_named(
    args: TokenStream,
    item: TokenStream,
    shown: Option<String>,
    peers: Vec<syn::Signature>,
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
    if let Err(e) = signature::check(&func) {
        return with_error(item, e);
    }
    if let Err(e) = TypeParams::of(&func.sig, &args.krate).check(&func.sig) {
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
    let with_policy = (args.expect_ns.is_some() || args.retries.is_some()).then(|| {
        let expect_ns = option(args.expect_ns.map(|ns| quote!(#ns)));
        let retries = option(args.retries.map(|n| quote!(#n)));
        quote!(.with_policy(#expect_ns, #retries))
    });
    // Nodes of one run must run the same code, not only functions of the
    // same names: the handshake compares a hash of every annotated body.
    let code = code_hash(&func);
    let policy = Some(quote!(#with_policy .code(#code)));
    let ItemFn { attrs, vis, sig, block } = func;
    let name = &sig.ident;
    let shown = args.shown.clone().unwrap_or_else(|| name.to_string());
    let job = format_ident!("__SatinJob_{}", name);
    let seq = format_ident!("__satin_seq_{}", name);
    let par = format_ident!("__satin_par_{}", name);
    let lazy = format_ident!("__satin_lazy_{}", name);
    let lazy_body = format_ident!("__satin_lazybody_{}", name);
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

    let kinds: Vec<ParamKind> = types.iter().map(|t| ParamKind::of(t)).collect();
    let borrows = kinds.iter().any(|k| !matches!(k, ParamKind::Owned));
    let mut callees = vec![callee(&sig)];
    callees.extend(args.peers.iter().filter(|p| p.ident != *name).map(callee));
    let names = Names { krate: krate.clone(), callees };
    let mut seq_block = (*block).clone();
    rewrite::rewrite_sequential(&names, &mut seq_block);
    let mut par_block = (*block).clone();
    let (spawn_sites, notes) = rewrite::rewrite_parallel(&names, &mut par_block);
    let sites = rewrite::call_sites(&names, &block);
    // Never silently sequential: calls that could run at once, none of
    // them in a form that spawns, are a warning (an error with `strict`).
    // (Calls that hold a `&mut` borrow stay in order on purpose.)
    let could_overlap = rewrite::calls_on_a_path(&names, &block) >= 2 && !names.own().exclusive.contains(&true);
    let mut sequential_warning = (spawn_sites == 0 && notes.is_empty() && could_overlap && !sites.is_empty()).then(|| {
        let msg = format!(
            "no call of `{shown}` here can run in parallel: none stands in a form that spawns (`let x = {shown}(..);`, `{shown}(a) + {shown}(b)`, calls as statements, `if`/`match` in a `let`, `||`/`&&`, loops, `.map(..).sum()`), so they run one after another; see docs/guide.md, \"Which calls run in parallel\""
        );
        stays_sequential(&format!("__satin_sequential_{name}"), &msg, sites[0], args.strict)
    });
    // Loops whose calls read what the loop changes: a warning each, naming
    // the variable.
    for (k, (span, msg)) in notes.iter().enumerate() {
        let warning = stays_sequential(&format!("__satin_in_loop_{name}_{k}"), msg, *span, args.strict);
        sequential_warning = Some(quote!(#sequential_warning #warning));
    }
    // Calls left in the closures of iterator adapters run element after
    // element: each is a warning of its own.
    for (k, span) in rewrite::calls_left_in_adapters(&names, &par_block).into_iter().enumerate() {
        let msg = format!(
            "this call of `{shown}` runs once per element, one element after another: a closure of this iterator method is not made parallel; spawn the calls with a loop (`for x in xs {{ v.push({shown}(x)); }}`) or `.map(|x| {shown}(x))` followed by `.sum()`, `.collect()`, `.fold(..)`, `.max_by_key(..)` or another method that reads every element; see docs/guide.md, \"Which calls run in parallel\""
        );
        let warning = stays_sequential(&format!("__satin_in_adapter_{name}_{k}"), &msg, span, args.strict);
        sequential_warning = Some(quote!(#sequential_warning #warning));
    }
    // The lazy ring: `lazy` polls and runs `lazybody`, whose calls go to
    // `lazyquiet`, whose calls go to `lazyquiet2`, whose calls go back to
    // `lazy` — a poll every third level, which costs a fine-grained tree
    // a third of a poll per call. Each block below is the body of the
    // copy it is named after.
    let lazy_quiet = format_ident!("__satin_lazyquiet_{}", name);
    let lazy_quiet2 = format_ident!("__satin_lazyquiet2_{}", name);
    let mut lazybody_block = (*block).clone();
    rewrite::rewrite_lazy(&names, &lazy_quiet, &mut lazybody_block);
    let mut lazyquiet_block = (*block).clone();
    rewrite::rewrite_lazy(&names, &lazy_quiet2, &mut lazyquiet_block);
    let mut lazyquiet2_block = (*block).clone();
    rewrite::rewrite_lazy(&names, &lazy, &mut lazyquiet2_block);

    let (docs, others): (Vec<_>, Vec<_>) = attrs.iter().partition(|a| a.path().is_ident("doc"));
    let assertions = types.iter().zip(&kinds).map(|(ty, kind)| match kind {
        ParamKind::Owned => quote_spanned!(ty.span()=> #krate::__private::assert_param::<#ty>();),
        ParamKind::Shared(elem) => quote_spanned!(ty.span()=> #krate::__private::assert_borrowed_param::<#elem>();),
        ParamKind::Mut(elem) => quote_spanned!(ty.span()=> #krate::__private::assert_mut_param::<#elem>();),
    });
    let output_span = match &sig.output {
        ReturnType::Default => name.span(),
        ReturnType::Type(_, ty) => ty.span(),
    };
    let output_assertion = quote_spanned!(output_span=> #krate::__private::assert_result::<#output>(););

    let type_params = TypeParams::of(&sig, krate);
    let fn_generics = type_params.decl();
    let where_fn = type_params.where_clause();
    // A generic function's checks name its type parameters: they go into
    // its body, where those are in scope (and where a type argument that
    // cannot travel has failed `TypeParam` at the call already).
    let (const_assertions, body_assertions) = if type_params.is_generic() {
        (quote!(), quote!(#(#assertions)* #output_assertion))
    } else {
        (quote!(const _: () = { #(#assertions)* #output_assertion };), quote!())
    };
    let run_fns = quote! {
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
    };
    let generic_entry = if type_params.is_generic() {
        quote! {
            #krate::__private::inventory::submit! {
                #krate::__private::GenericFn::new(concat!(module_path!(), #fn_id), #code)
            }
        }
    } else {
        TokenStream::new()
    };
    let job_type = if borrows {
        let borrowed = Borrowed {
            job: &job,
            krate,
            serde_crate: &serde_crate,
            vis: &vis,
            output: &output,
            fields: &fields,
            type_params: &type_params,
        };
        borrowed.job_type(name, &types, &kinds, &fn_id, &run_fns, policy.as_ref())
    } else {
        let lt = generics::static_lifetime();
        let (decl, args, where_) = (type_params.params(None), type_params.args(), type_params.where_with(Some(&lt)));
        let serde_impls = owned_serde_impls(krate, &job, types.len(), &type_params);
        let entry = quote!(#krate::__private::JobFn::of::<#job #args>()#policy);
        let (instance, submit) = registration(krate, &type_params, &quote!(#job #args), &entry);
        quote! {
            #[doc(hidden)]
            #[allow(non_camel_case_types)]
            #vis struct #job #decl (#(pub #types),*);

            #serde_impls

            impl #decl #krate::Job for #job #args #where_ {
                type Output = #output;
                const FN_ID: &'static str = concat!(module_path!(), #fn_id);
                #instance
                #run_fns
            }

            #submit
        }
    };

    quote! {
        #const_assertions
        #sequential_warning

        #(#docs)*
        #(#others)*
        #vis fn #name #fn_generics (#(#public_names: #types),*) #ret #where_fn {
            #body_assertions
            #krate::__private::enter(#job(#(#public_names),*))
        }

        #job_type
        #generic_entry

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
        fn #lazy_body #fn_generics (#ctx: &#krate::__private::Ctx<'_>, #inputs) #ret #where_fn #lazybody_block

        #[doc(hidden)]
        #(#others)*
        #[allow(unused, clippy::all, clippy::pedantic, clippy::nursery)]
        fn #lazy_quiet #fn_generics (#ctx: &#krate::__private::Ctx<'_>, #inputs) #ret #where_fn #lazyquiet_block

        #[doc(hidden)]
        #(#others)*
        #[allow(unused, clippy::all, clippy::pedantic, clippy::nursery)]
        fn #lazy_quiet2 #fn_generics (#ctx: &#krate::__private::Ctx<'_>, #inputs) #ret #where_fn #lazyquiet2_block

    }
}

/// How a node finds the function's jobs when they arrive as bytes: the
/// `inventory` entry `entry`, or for a generic function a `Job::instance_id`
/// that registers each instantiation on first use (`static_job`: its
/// `'static` job type). Returns (items of the `Job` impl, items beside it).
fn registration(
    krate: &syn::Path,
    type_params: &TypeParams,
    static_job: &TokenStream,
    entry: &TokenStream,
) -> (TokenStream, TokenStream) {
    if !type_params.is_generic() {
        return (quote!(), quote!(#krate::__private::inventory::submit! { #entry }));
    }
    let type_names = type_params.type_names();
    let instance = quote! {
        fn instance_id() -> &'static str {
            #krate::__private::instance::<#static_job>(Self::FN_ID, #type_names, || #entry)
        }
    };
    (instance, quote!())
}

/// What the rewriter needs to spawn calls of the function `sig` declares.
fn callee(sig: &syn::Signature) -> rewrite::Callee {
    let name = &sig.ident;
    let exclusive = sig
        .inputs
        .iter()
        .map(|a| matches!(a, FnArg::Typed(pt) if matches!(ParamKind::of(&pt.ty), ParamKind::Mut(_))))
        .collect();
    rewrite::Callee {
        func: name.clone(),
        arity: sig.inputs.len(),
        job: format_ident!("__SatinJob_{}", name),
        seq: format_ident!("__satin_seq_{}", name),
        exclusive,
    }
}

/// A compile-time warning at `span` (an error with `strict`). A macro on
/// stable Rust raises a warning as a deprecation: `marker` is a deprecated
/// struct whose use carries the call's span.
fn stays_sequential(marker: &str, msg: &str, span: Span, strict: bool) -> TokenStream {
    if strict {
        return quote_spanned!(span=> compile_error!(#msg););
    }
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

/// `Serialize` and `Deserialize` of a job whose fields are all owned, one
/// field at a time through `Param` (see `satin::job::fields`): a field type
/// that cannot travel fails `Param`'s bound, with its message, and nothing
/// else. The encoding is the derive's (a tuple of the fields).
fn owned_serde_impls(krate: &syn::Path, job: &Ident, arity: usize, type_params: &TypeParams) -> TokenStream {
    let serde = quote!(#krate::__private::serde);
    let private = quote!(#krate::__private);
    let index = (0..arity).map(syn::Index::from).collect::<Vec<_>>();
    let deserialize = deserialize_impl(krate, job, arity, type_params);
    let lt = generics::static_lifetime();
    let (decl, args, where_) = (type_params.params(None), type_params.args(), type_params.where_with(Some(&lt)));
    quote! {
        impl #decl #serde::Serialize for #job #args #where_ {
            fn serialize<__S: #serde::Serializer>(&self, __s: __S) -> ::core::result::Result<__S::Ok, __S::Error> {
                let mut __t = #serde::Serializer::serialize_tuple(__s, #arity)?;
                #( #private::ser_field(&mut __t, &self.#index)?; )*
                #serde::ser::SerializeTuple::end(__t)
            }
        }

        #deserialize
    }
}

/// `Deserialize` of a job type whose fields are all owned, one field at a
/// time through `Param` (see `owned_serde_impls`).
fn deserialize_impl(krate: &syn::Path, job: &Ident, arity: usize, type_params: &TypeParams) -> TokenStream {
    let serde = quote!(#krate::__private::serde);
    let private = quote!(#krate::__private);
    let positions = 0..arity;
    // The visitor, an item of its own, declares the type parameters again.
    let lt = generics::static_lifetime();
    let (args, where_) = (type_params.args(), type_params.where_with(Some(&lt)));
    let names = &type_params.names;
    quote! {
        impl<'de, #(#names),*> #serde::Deserialize<'de> for #job #args #where_ {
            fn deserialize<__D: #serde::Deserializer<'de>>(__d: __D) -> ::core::result::Result<Self, __D::Error> {
                struct __Visitor #args (::core::marker::PhantomData<fn() -> #job #args>);
                impl<'de, #(#names),*> #serde::de::Visitor<'de> for __Visitor #args #where_ {
                    type Value = #job #args;
                    fn expecting(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                        f.write_str("the parameters of a call")
                    }
                    #[allow(unused_mut, unused_variables)]
                    fn visit_seq<__A: #serde::de::SeqAccess<'de>>(self, mut __a: __A) -> ::core::result::Result<#job #args, __A::Error> {
                        ::core::result::Result::Ok(#job(#( #private::de_field(&mut __a, #positions)? ),*))
                    }
                }
                #serde::Deserializer::deserialize_tuple(__d, #arity, __Visitor(::core::marker::PhantomData))
            }
        }
    }
}

/// The owned type that a borrowed `&U` decodes into on another node, as
/// written: `[T]` → `Vec<T>`, `str` → `String`, any other `U` itself; none
/// if `U` holds a reference or a lifetime (then `Travel` names it).
fn owned_form(u: &Type) -> Option<Type> {
    struct HasBorrow(bool);
    impl<'ast> syn::visit::Visit<'ast> for HasBorrow {
        fn visit_lifetime(&mut self, _: &'ast syn::Lifetime) {
            self.0 = true;
        }
        fn visit_type_reference(&mut self, _: &'ast syn::TypeReference) {
            self.0 = true;
        }
    }
    let mut found = HasBorrow(false);
    syn::visit::Visit::visit_type(&mut found, u);
    if found.0 {
        return None;
    }
    Some(match u {
        Type::Slice(s) => {
            let elem = &s.elem;
            syn::parse_quote!(::std::vec::Vec<#elem>)
        }
        Type::Path(p) if p.qself.is_none() && p.path.is_ident("str") => syn::parse_quote!(::std::string::String),
        other => other.clone(),
    })
}

/// How a parameter is passed: owned, or borrowed (`&U`, `&mut U`).
enum ParamKind {
    Owned,
    Shared(Type),
    Mut(Type),
}

impl ParamKind {
    fn of(ty: &Type) -> ParamKind {
        match ty {
            Type::Reference(r) if r.mutability.is_some() => ParamKind::Mut((*r.elem).clone()),
            Type::Reference(r) => ParamKind::Shared((*r.elem).clone()),
            Type::Paren(p) => ParamKind::of(&p.elem),
            Type::Group(g) => ParamKind::of(&g.elem),
            _ => ParamKind::Owned,
        }
    }
}

/// The job type of a function that borrows parameters: the job holds the
/// references, and a second type, its owned form, is what another node
/// decodes (see `satin::Travel`).
struct Borrowed<'a> {
    job: &'a Ident,
    krate: &'a syn::Path,
    serde_crate: &'a str,
    vis: &'a syn::Visibility,
    output: &'a Type,
    fields: &'a [Ident],
    type_params: &'a TypeParams,
}

impl Borrowed<'_> {
    fn job_type(
        &self,
        name: &Ident,
        types: &[&Type],
        kinds: &[ParamKind],
        fn_id: &str,
        run_fns: &TokenStream,
        policy: Option<&TokenStream>,
    ) -> TokenStream {
        let Borrowed { job, krate, serde_crate, vis, output, fields, type_params } = *self;
        let owned = format_ident!("__SatinOwned_{}", name);
        let lt = syn::Lifetime::new("'__satin", Span::call_site());
        // The job's generics (its lifetime, then the type parameters), the
        // owned form's, and their bounds.
        let job_params = type_params.params(Some(&lt));
        let job_static = type_params.params(Some(&generics::static_lifetime()));
        let owned_args = type_params.args();
        let job_where = type_params.where_with(Some(&lt));
        let owned_where = type_params.where_with(Some(&generics::static_lifetime()));
        // Every lifetime of the signature becomes the job's one lifetime.
        let field_types: Vec<Type> = types.iter().map(|t| generics::with_lifetime((*t).clone(), &lt)).collect();
        // What another node decodes: named as written where the borrowed
        // type holds no reference (`&[T]` → `Vec<T>`, `&str` → `String`,
        // `&T` → `T`), so that a type that cannot travel fails `Param`'s
        // bound alone; through `Travel` otherwise.
        let owned_form = |u: &Type| owned_form(u).map(|o| quote!(#o));
        let owned_types: Vec<TokenStream> = types
            .iter()
            .zip(kinds)
            .map(|(t, k)| match k {
                ParamKind::Owned => quote!(#t),
                ParamKind::Shared(u) | ParamKind::Mut(u) => {
                    owned_form(u).unwrap_or_else(|| quote!(<#u as #krate::Travel>::Owned))
                }
            })
            .collect();
        let named_owned = kinds.iter().all(|k| match k {
            ParamKind::Owned => true,
            ParamKind::Shared(u) | ParamKind::Mut(u) => owned_form(u).is_some(),
        });
        let borrow_args: Vec<TokenStream> = fields
            .iter()
            .zip(kinds)
            .map(|(f, k)| match k {
                ParamKind::Owned => quote!(#f),
                ParamKind::Shared(u) if owned_form(u).is_some() => quote!(&#f),
                ParamKind::Mut(u) if owned_form(u).is_some() => quote!(&mut #f),
                ParamKind::Shared(u) => quote!(<#u as #krate::Travel>::borrow(&#f)),
                ParamKind::Mut(u) => quote!(<#u as #krate::TravelMut>::borrow_mut(&mut #f)),
            })
            .collect();
        // The call travels as the tuple of what it borrows (as the derive
        // wrote it), each field through a bound with the project's message.
        let ser_fields: Vec<TokenStream> = kinds
            .iter()
            .enumerate()
            .map(|(i, k)| {
                let i = syn::Index::from(i);
                match k {
                    ParamKind::Owned => quote!(#krate::__private::ser_field(&mut __t, &self.#i)?;),
                    ParamKind::Shared(_) => quote!(#krate::__private::ser_lent(&mut __t, self.#i)?;),
                    ParamKind::Mut(_) => quote!(#krate::__private::ser_lent(&mut __t, &*self.#i)?;),
                }
            })
            .collect();
        let arity = kinds.len();
        let serde = quote!(#krate::__private::serde);
        let serialize = quote! {
            impl #job_params #serde::Serialize for #job #job_params #job_where {
                fn serialize<__S: #serde::Serializer>(&self, __s: __S) -> ::core::result::Result<__S::Ok, __S::Error> {
                    let mut __t = #serde::Serializer::serialize_tuple(__s, #arity)?;
                    #(#ser_fields)*
                    #serde::ser::SerializeTuple::end(__t)
                }
            }
        };
        let owned_deserialize = if named_owned {
            deserialize_impl(krate, &owned, arity, type_params)
        } else {
            quote! {
                impl<'de> #serde::Deserialize<'de> for #owned #owned_args {
                    fn deserialize<__D: #serde::Deserializer<'de>>(__d: __D) -> ::core::result::Result<Self, __D::Error> {
                        #[derive(#serde::Deserialize)]
                        #[serde(crate = #serde_crate)]
                        struct __Fields(#(#owned_types),*);
                        let __Fields(#(#fields),*) = <__Fields as #serde::Deserialize>::deserialize(__d)?;
                        ::core::result::Result::Ok(#owned(#(#fields),*))
                    }
                }
            }
        };
        let muts: Vec<(&Ident, &Type)> = fields
            .iter()
            .zip(kinds)
            .filter_map(|(f, k)| match k {
                ParamKind::Mut(u) => Some((f, u)),
                _ => None,
            })
            .collect();
        let mut_fields: Vec<&Ident> = muts.iter().map(|(f, _)| *f).collect();
        let mut_owned: Vec<TokenStream> =
            muts.iter().map(|(_, u)| owned_form(u).unwrap_or_else(|| quote!(<#u as #krate::Travel>::Owned))).collect();
        let mut_elems: Vec<&Type> = muts.iter().map(|(_, u)| *u).collect();
        let values: Vec<Ident> = (0..muts.len()).map(|i| format_ident!("__satin_m{}", i)).collect();
        let binding: Vec<TokenStream> = fields
            .iter()
            .zip(kinds)
            .map(|(f, k)| match k {
                ParamKind::Mut(_) => quote!(mut #f),
                _ => quote!(#f),
            })
            .collect();
        let postcard = quote!(#krate::__private::postcard);
        // A call that changes its `&mut` parameters sends their contents
        // back with its result, and takes them in on arrival.
        let (mutates, encode) = if muts.is_empty() {
            (quote!(), quote!(#postcard::to_allocvec(&__satin_out)))
        } else {
            let accept = quote! {
                const MUTATES: bool = true;
                fn accept(self, outcome: &[u8]) -> ::core::result::Result<#output, #krate::AcceptError> {
                    let (__satin_value, #(#values),*): (#output, #(#mut_owned),*) = #postcard::from_bytes(outcome)?;
                    #[allow(unused_variables)]
                    let #job(#(#fields),*) = self;
                    #(<#mut_elems as #krate::TravelMut>::write_back(#mut_fields, #values)?;)*
                    ::core::result::Result::Ok(__satin_value)
                }
            };
            (accept, quote!(#postcard::to_allocvec(&(&__satin_out, #(&#mut_fields),*))))
        };
        let entry = quote!(#krate::__private::JobFn::borrowing::<#owned #owned_args>()#policy);
        let (instance, submit) = registration(krate, type_params, &quote!(#owned #owned_args), &entry);
        quote! {
            #[doc(hidden)]
            #[allow(non_camel_case_types)]
            #vis struct #job #job_params (#(pub #field_types),*);

            #serialize

            impl #job_params #krate::Job for #job #job_params #job_where {
                type Output = #output;
                const FN_ID: &'static str = concat!(module_path!(), #fn_id);
                #instance
                #mutates
                #run_fns
            }

            #[doc(hidden)]
            #[allow(non_camel_case_types)]
            #vis struct #owned #owned_args (#(pub #owned_types),*);

            #owned_deserialize

            impl #owned_args #krate::OwnedJob for #owned #owned_args #owned_where {
                const FN_ID: &'static str = <#job #job_static as #krate::Job>::FN_ID;
                fn run_encoded(self, ctx: &#krate::__private::Ctx<'_>) -> ::std::vec::Vec<u8> {
                    let #owned(#(#binding),*) = self;
                    let __satin_out = #krate::Job::run(#job(#(#borrow_args),*), ctx);
                    #encode.expect("postcard encodes any serde value into a Vec")
                }
            }

            #submit
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
