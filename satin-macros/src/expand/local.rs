//! Functions whose calls never leave their process (`Job::LOCAL`): one
//! that takes a closure, a trait object, a function pointer or a value
//! borrowing with a lifetime cannot encode its calls, so instead of being
//! refused its jobs are stolen by its own process's workers only. Also
//! `#[divide_and_conquer(local)]`, for any other parameter that cannot
//! travel (a type without serde).

use proc_macro2::{Span, TokenStream};
use quote::{quote, ToTokens};
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::{FnArg, GenericParam, Ident, Signature, Type, TypeParamBound, WherePredicate};

use crate::attr;

/// Why a function's calls stay in their process.
pub(crate) struct Local {
    /// What the start-up line says after the function's name
    /// (`takes a closure (`F`)`).
    pub(crate) why: String,
    /// Where the compile-time note points, and what would let the calls
    /// travel; none when the attribute says `local` itself.
    pub(crate) note: Option<(Span, String)>,
}

/// Whether `sig`'s calls must stay in their process, and why.
pub(crate) fn of(sig: &Signature, args: &attr::Args) -> Option<Local> {
    let name = args.shown.clone().unwrap_or_else(|| sig.ident.to_string());
    let found = closure_params(sig).into_iter().next().map(|p| {
        let why = format!("takes a closure (`{p}`)");
        let fix = format!(
            "pass a value that says which function to use instead (an enum with a method that calls it) and `{name}`'s calls can go to other machines too"
        );
        (p.span(), why, fix)
    });
    let found = found.or_else(|| {
        sig.inputs.iter().find_map(|a| match a {
            FnArg::Typed(pt) => optional_borrow(&pt.ty)
                .or_else(|| cannot_travel(&pt.ty).map(|(span, why, fix)| (span, why, fix.to_string()))),
            FnArg::Receiver(_) => None,
        })
    });
    match (found, args.local) {
        (Some((span, why, fix)), false) => {
            let note = format!(
                "`{name}` {why}: its calls run in parallel on the cores of the process that makes them, but never travel to another node (a distributed run says so at start-up); {fix}, or write #[divide_and_conquer(local)] to keep them local without this note"
            );
            Some(Local { why, note: Some((span, note)) })
        }
        (Some((_, why, _)), true) => Some(Local { why, note: None }),
        (None, true) => Some(Local { why: "is marked `local`".into(), note: None }),
        (None, false) => None,
    }
}

/// Type parameters bounded by `Fn`, `FnMut` or `FnOnce` (inline or in the
/// `where` clause).
pub(crate) fn closure_params(sig: &Signature) -> Vec<Ident> {
    let fn_like = |bounds: &syn::punctuated::Punctuated<TypeParamBound, syn::Token![+]>| {
        bounds.iter().any(|b| match b {
            TypeParamBound::Trait(t) => t.path.segments.last().is_some_and(|s| {
                matches!(s.ident.to_string().as_str(), "Fn" | "FnMut" | "FnOnce")
                    && matches!(s.arguments, syn::PathArguments::Parenthesized(_))
            }),
            _ => false,
        })
    };
    let mut out = Vec::new();
    for p in &sig.generics.params {
        if let GenericParam::Type(t) = p {
            let in_where = sig.generics.where_clause.iter().flat_map(|w| &w.predicates).any(|w| match w {
                WherePredicate::Type(pt) => {
                    t.ident == pt.bounded_ty.to_token_stream().to_string() && fn_like(&pt.bounds)
                }
                _ => false,
            });
            if fn_like(&t.bounds) || in_where {
                out.push(t.ident.clone());
            }
        }
    }
    out
}

/// `Option<&T>`: a borrow with no outer reference to keep, so the
/// general fix does not fit it; a reference to the owned option does
/// (`&Option<Box<Node>>`, called as `f(&node.left)`), and travels as any
/// `&T`.
fn optional_borrow(ty: &Type) -> Option<(Span, String, String)> {
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != "Option" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else { return None };
    if args.args.len() != 1 {
        return None;
    }
    let Some(syn::GenericArgument::Type(Type::Reference(r))) = args.args.first() else { return None };
    if r.mutability.is_some() {
        return None;
    }
    let inner = r.elem.to_token_stream().to_string().replace(' ', "");
    let why = format!("takes an optional borrow (`Option<&{inner}>`)");
    let fix = format!(
        "take a reference to the owned option instead (`&Option<Box<{inner}>>` or `&Option<{inner}>`, as the data holds it; called as `f(&node.left)`): it travels as any `&T` does"
    );
    Some((ty.span(), why, fix))
}

/// What in a parameter's type cannot be encoded: (where, why, the fix).
/// The outer reference of a parameter is fine (`&[T]` travels as a
/// `Vec<T>`); a reference or a lifetime inside it, a trait object or a
/// function pointer is not.
fn cannot_travel(ty: &Type) -> Option<(Span, String, &'static str)> {
    let inner = match ty {
        Type::Reference(r) => &*r.elem,
        ty => ty,
    };
    let mut finder = Finder(None);
    finder.visit_type(inner);
    finder.0
}

struct Finder(Option<(Span, String, &'static str)>);

impl<'ast> Visit<'ast> for Finder {
    fn visit_type_reference(&mut self, r: &'ast syn::TypeReference) {
        if self.0.is_none() {
            let shown = r.to_token_stream().to_string().replace(" ", "");
            self.0 = Some((r.span(), format!("takes a borrow inside a parameter (`{shown}`)"), OWNED_FIX));
        }
    }
    fn visit_lifetime(&mut self, l: &'ast syn::Lifetime) {
        if self.0.is_none() {
            self.0 = Some((l.span(), format!("takes a value that borrows (lifetime `{l}`)"), OWNED_FIX));
        }
    }
    fn visit_type_trait_object(&mut self, t: &'ast syn::TypeTraitObject) {
        if self.0.is_none() {
            let shown = t.to_token_stream().to_string();
            self.0 = Some((
                t.span(),
                format!("takes a trait object (`{shown}`)"),
                "pass a value of a serialisable type (an enum with a method) instead",
            ));
        }
    }
    fn visit_type_bare_fn(&mut self, f: &'ast syn::TypeBareFn) {
        if self.0.is_none() {
            self.0 = Some((
                f.span(),
                "takes a function pointer".into(),
                "pass a value that says which function to use instead (an enum with a method that calls it)",
            ));
        }
    }
}

const OWNED_FIX: &str = "pass owned values inside the outer reference (`&[String]`, not `&[&str]`; a range of indices, not a struct holding a slice)";

/// The job type of a local function: a tuple struct of its parameters as
/// written (elided lifetimes named `'__satin`, the user's own lifetimes
/// kept), whose encoding is an error that says why, and its `Job` impl
/// with `LOCAL` set. Nothing registers it: no node decodes its calls.
pub(super) struct LocalJob<'a> {
    pub(super) krate: &'a syn::Path,
    pub(super) vis: &'a syn::Visibility,
    pub(super) job: &'a Ident,
    pub(super) sig: &'a Signature,
    pub(super) types: &'a [&'a Type],
    pub(super) output: &'a Type,
    pub(super) where_clause: TokenStream,
    pub(super) why: &'a str,
    pub(super) shown: &'a str,
}

impl LocalJob<'_> {
    pub(super) fn emit(&self, fn_id: &str, run_fns: &TokenStream) -> TokenStream {
        let LocalJob { krate, vis, job, sig, types, output, where_clause, why, shown } = self;
        let lt = syn::Lifetime::new("'__satin", Span::call_site());
        let fields: Vec<Type> = types.iter().map(|t| name_elided((*t).clone(), &lt)).collect();
        let own = sig.generics.params.iter().map(|p| match p {
            GenericParam::Type(t) => t.ident.to_token_stream(),
            GenericParam::Lifetime(l) => l.lifetime.to_token_stream(),
            GenericParam::Const(c) => c.ident.to_token_stream(),
        });
        let own: Vec<TokenStream> = own.collect();
        // `'__satin` only where a field borrows without naming a lifetime.
        let borrows = fields.iter().any(|f| f.to_token_stream().to_string().contains("'__satin"));
        let params = match (borrows, own.is_empty()) {
            (true, _) => quote!(<#lt, #(#own),*>),
            (false, true) => quote!(),
            (false, false) => quote!(<#(#own),*>),
        };
        let serde = quote!(#krate::__private::serde);
        let refusal = format!("`{shown}` {why}: its calls cannot be encoded, they stay on the node that makes them");
        quote! {
            #[doc(hidden)]
            #[allow(non_camel_case_types)]
            #vis struct #job #params (#(pub #fields),*);

            impl #params #serde::Serialize for #job #params #where_clause {
                fn serialize<__S: #serde::Serializer>(&self, _: __S) -> ::core::result::Result<__S::Ok, __S::Error> {
                    ::core::result::Result::Err(<__S::Error as #serde::ser::Error>::custom(#refusal))
                }
            }

            impl #params #krate::Job for #job #params #where_clause {
                type Output = #output;
                type Codec = #krate::__private::LocalCodec;
                const FN_ID: &'static str = concat!(module_path!(), #fn_id);
                const LOCAL: ::core::option::Option<&'static str> = ::core::option::Option::Some(#why);
                #run_fns
            }
        }
    }
}

/// `ty` with every elided lifetime (`&T`, `'_`) named `lt`.
fn name_elided(mut ty: Type, lt: &syn::Lifetime) -> Type {
    struct Name<'a>(&'a syn::Lifetime);
    impl syn::visit_mut::VisitMut for Name<'_> {
        fn visit_type_reference_mut(&mut self, r: &mut syn::TypeReference) {
            if r.lifetime.as_ref().is_none_or(|l| l.ident == "_") {
                r.lifetime = Some(self.0.clone());
            }
            syn::visit_mut::visit_type_reference_mut(self, r);
        }
        fn visit_lifetime_mut(&mut self, l: &mut syn::Lifetime) {
            if l.ident == "_" {
                *l = self.0.clone();
            }
        }
        // A closure's own signature keeps its elided lifetimes.
        fn visit_parenthesized_generic_arguments_mut(&mut self, _: &mut syn::ParenthesizedGenericArguments) {}
        fn visit_type_bare_fn_mut(&mut self, _: &mut syn::TypeBareFn) {}
    }
    syn::visit_mut::VisitMut::visit_type_mut(&mut Name(lt), &mut ty);
    ty
}

#[cfg(test)]
mod tests {
    use super::*;

    fn why(f: &str, local: bool) -> Option<String> {
        let sig: Signature = syn::parse_str(f).unwrap();
        let mut args = attr::parse(TokenStream::new()).unwrap();
        args.local = local;
        of(&sig, &args).map(|l| l.why)
    }

    #[test]
    fn closures_borrows_objects_and_function_pointers_stay_local() {
        assert_eq!(
            why("fn f<F: Fn(f64) -> f64 + Sync>(f: &F, a: f64) -> f64", false).unwrap(),
            "takes a closure (`F`)"
        );
        assert_eq!(why("fn f<F>(f: &F) -> f64 where F: FnMut(u32) -> f64", false).unwrap(), "takes a closure (`F`)");
        assert!(why("fn f<'a>(s: Window<'a>) -> i64", false).unwrap().contains("lifetime `'a`"));
        assert!(why("fn f(s: &[&str]) -> usize", false).unwrap().contains("borrow inside"));
        assert!(why("fn f(g: &dyn Fn(u32) -> u32) -> u32", false).unwrap().contains("trait object"));
        assert!(why("fn f(g: fn(u32) -> u32, n: u32) -> u32", false).unwrap().contains("function pointer"));
        assert_eq!(why("fn f(v: Thing) -> u64", true).unwrap(), "is marked `local`");
    }

    #[test]
    fn what_travels_is_not_local() {
        for f in
            ["fn f(v: &[u64]) -> u64", "fn f<T: Ord>(v: &mut [T]) -> usize", "fn f(s: &str, n: &'static u8) -> u64"]
        {
            assert_eq!(why(f, false), None, "{f}");
        }
    }
}
