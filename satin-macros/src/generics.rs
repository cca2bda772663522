//! Generic functions: the job type takes the function's type parameters,
//! every item the expansion generates carries their bounds plus
//! `TypeParam` (what a type argument needs to travel), and each
//! instantiation travels under an id of its own (`satin::job::generic`).

use proc_macro2::{Span, TokenStream};
use quote::{quote, ToTokens};
use syn::visit_mut::VisitMut;
use syn::{GenericParam, Ident, Lifetime, Signature, Type, WherePredicate};

use crate::mentions::mentions;

/// The type parameters of a function, as its generated items need them.
pub(crate) struct TypeParams {
    /// In declaration order.
    pub(crate) names: Vec<Ident>,
    /// The user's bounds (inline and `where`), then `T: TypeParam` for each.
    predicates: Vec<WherePredicate>,
    /// The function's generics with the type parameters' bounds moved to
    /// [`TypeParams::where_clause`] (one place for every bound).
    decl: TokenStream,
}

impl TypeParams {
    /// `local`: the function's calls never leave their process (see
    /// `expand::local`), so its type arguments need only be `Send + Sync`
    /// (its jobs hold them and run on other threads), not serde.
    pub(crate) fn of(sig: &Signature, krate: &syn::Path, local: bool) -> TypeParams {
        let mut names = Vec::new();
        let mut predicates: Vec<WherePredicate> = Vec::new();
        for p in &sig.generics.params {
            if let GenericParam::Type(t) = p {
                let name = &t.ident;
                names.push(name.clone());
                let bounds = &t.bounds;
                if !bounds.is_empty() {
                    predicates.push(syn::parse_quote!(#name: #bounds));
                }
            }
        }
        if let Some(w) = &sig.generics.where_clause {
            predicates.extend(w.predicates.iter().cloned());
        }
        for name in &names {
            predicates.push(if local {
                syn::parse_quote!(#name: ::core::marker::Send + ::core::marker::Sync)
            } else {
                syn::parse_quote!(#name: #krate::TypeParam)
            });
        }
        predicates.extend(associated_bounds(sig, &names, krate, local));
        let params = sig.generics.params.iter().map(|p| match p {
            GenericParam::Type(t) => t.ident.to_token_stream(),
            other => other.to_token_stream(),
        });
        let decl = if sig.generics.params.is_empty() { TokenStream::new() } else { quote!(<#(#params),*>) };
        TypeParams { names, predicates, decl }
    }

    /// `<'a, T>` for the function's own items (see `where_clause`).
    pub(crate) fn decl(&self) -> &TokenStream {
        &self.decl
    }

    pub(crate) fn is_generic(&self) -> bool {
        !self.names.is_empty()
    }

    /// `where ..` for the function's own items (its lifetimes as written).
    pub(crate) fn where_clause(&self) -> TokenStream {
        self.where_with(None)
    }

    /// `where ..` for a job type's impls: every lifetime in a bound
    /// becomes `lt`, the job's one lifetime (or `'static`).
    pub(crate) fn where_with(&self, lt: Option<&Lifetime>) -> TokenStream {
        if self.predicates.is_empty() {
            return TokenStream::new();
        }
        let predicates = self.predicates.iter().cloned().map(|mut p| {
            if let Some(lt) = lt {
                ReplaceLifetimes(lt).visit_where_predicate_mut(&mut p);
            }
            p
        });
        quote!(where #(#predicates),*)
    }

    /// `<'lt, T, U>` for a job type and its impls (`lt` first, if any).
    pub(crate) fn params(&self, lt: Option<&Lifetime>) -> TokenStream {
        let names = &self.names;
        match (lt, names.is_empty()) {
            (None, true) => TokenStream::new(),
            (None, false) => quote!(<#(#names),*>),
            (Some(lt), true) => quote!(<#lt>),
            (Some(lt), false) => quote!(<#lt, #(#names),*>),
        }
    }

    /// `<T, U>` after a type name that has no lifetime.
    pub(crate) fn args(&self) -> TokenStream {
        self.params(None)
    }

    /// `&[type_name::<T>(), ..]`: the instantiation's type arguments.
    pub(crate) fn type_names(&self) -> TokenStream {
        let names = &self.names;
        quote!(&[#(::core::any::type_name::<#names>()),*])
    }

    /// What a generic function must be: type parameters only, each named
    /// by some parameter (the job type has no other field to hold it, and
    /// a call's parameters are what another node decodes).
    pub(crate) fn check(&self, sig: &Signature) -> syn::Result<()> {
        for p in &sig.generics.params {
            if let GenericParam::Const(c) = p {
                return Err(syn::Error::new_spanned(
                    c,
                    "#[divide_and_conquer] does not support const generic parameters: pass the value as an ordinary parameter",
                ));
            }
        }
        for name in &self.names {
            let in_params = sig.inputs.iter().any(|a| match a {
                syn::FnArg::Typed(pt) => mentions(&pt.ty, name),
                syn::FnArg::Receiver(_) => false,
            });
            if !in_params {
                return Err(syn::Error::new_spanned(
                    name,
                    format!(
                        "the type parameter `{name}` appears in no parameter of this #[divide_and_conquer] function, so a call's parameters cannot say which `{name}` it is meant for; add a parameter that names it (`_: std::marker::PhantomData<{name}>` will do)"
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// What the body needs of associated types of the type parameters that
/// the signature names (`P::Out`, `<P as Problem>::Out`): a result of one
/// is `ResultValue`, an owned parameter `Param` — bounds the user would
/// otherwise have to find and write (`where P::Out: Serialize + ..`). A
/// local function's values never travel: they need only be `Send`.
fn associated_bounds(sig: &Signature, names: &[Ident], krate: &syn::Path, local: bool) -> Vec<WherePredicate> {
    let associated = |ty: &Type| match ty {
        Type::Path(p) if p.qself.is_some() => true,
        Type::Path(p) => p.path.segments.len() >= 2 && names.iter().any(|n| p.path.segments[0].ident == *n),
        _ => false,
    };
    let mut out: Vec<WherePredicate> = Vec::new();
    if let syn::ReturnType::Type(_, ty) = &sig.output {
        if associated(ty) {
            out.push(match local {
                true => syn::parse_quote!(#ty: ::core::marker::Send + 'static),
                false => syn::parse_quote!(#ty: #krate::__private::ResultValue),
            });
        }
    }
    for input in &sig.inputs {
        if let syn::FnArg::Typed(pt) = input {
            let ty = &*pt.ty;
            if associated(ty) {
                out.push(match local {
                    true => syn::parse_quote!(#ty: ::core::marker::Send),
                    false => syn::parse_quote!(#ty: #krate::__private::Param),
                });
            }
        }
    }
    out
}

/// Replaces every lifetime, named or elided in a reference, with one.
struct ReplaceLifetimes<'a>(&'a Lifetime);

impl VisitMut for ReplaceLifetimes<'_> {
    fn visit_lifetime_mut(&mut self, l: &mut Lifetime) {
        *l = self.0.clone();
    }
    fn visit_type_reference_mut(&mut self, r: &mut syn::TypeReference) {
        r.lifetime = Some(self.0.clone());
        syn::visit_mut::visit_type_reference_mut(self, r);
    }
}

/// `ty` with every lifetime, named or elided, replaced by `lt`.
pub(crate) fn with_lifetime(mut ty: Type, lt: &Lifetime) -> Type {
    ReplaceLifetimes(lt).visit_type_mut(&mut ty);
    ty
}

/// `'static`, for the impls of a job that borrows nothing.
pub(crate) fn static_lifetime() -> Lifetime {
    Lifetime::new("'static", Span::call_site())
}
