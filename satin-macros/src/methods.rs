//! Methods: `#[divide_and_conquer]` on an `impl` block makes each method
//! marked `#[divide_and_conquer]` inside it a function of its own, outside
//! the block, whose first parameter is the receiver (`&self` travels as
//! `&Type` does: by reference here, as the owned data to other nodes).
//! The method stays where it was and calls that function; recursive calls
//! in its body (`self.left.sum()`, `child.sum()`, `Self::sum(t)`) become
//! calls of the function, which the usual forms then spawn.
//!
//! The job types and helper functions cannot be items of an `impl` block,
//! which is why the attribute goes on the block: a method alone does not
//! know its type's name.

use proc_macro2::{Ident, Span, TokenStream, TokenTree};
use quote::{format_ident, quote, ToTokens};
use syn::visit_mut::{self, VisitMut};
use syn::{parse_quote, Attribute, Expr, FnArg, ImplItem, ImplItemFn, ItemFn, ItemImpl, Type};

use crate::{attr, expand};

/// Whether `a` is a `#[divide_and_conquer]` marker (any path ending so).
pub(crate) fn is_marker(a: &Attribute) -> bool {
    a.path().segments.last().is_some_and(|s| s.ident == "divide_and_conquer")
}

/// Takes an item's `#[divide_and_conquer]` marker off; returns its own
/// arguments, else the group's (`group`), or `None` if it has no marker.
pub(crate) fn take_marker(attrs: &mut Vec<Attribute>, group: &TokenStream) -> Option<TokenStream> {
    let at = attrs.iter().position(is_marker)?;
    let own = match attrs.remove(at).meta {
        syn::Meta::List(l) => l.tokens,
        _ => TokenStream::new(),
    };
    Some(if own.is_empty() { group.clone() } else { own })
}

/// The expansion of `#[divide_and_conquer(args)] impl Type { .. }`.
pub(crate) fn expand_impl(args: TokenStream, mut block: ItemImpl) -> TokenStream {
    // `Self` spelled `Tree::<T>`: a path that is right in types,
    // expressions and patterns alike.
    let self_ty = with_turbofish((*block.self_ty).clone());
    let block_generics = block.generics.clone();
    let mut outside = TokenStream::new();
    let mut group: Vec<Split> = Vec::new();
    for item in &mut block.items {
        let ImplItem::Fn(method) = item else { continue };
        let Some(args) = take_marker(&mut method.attrs, &args) else { continue };
        match split_method(&self_ty, &block_generics, method, args) {
            Ok(split) => group.push(split),
            Err(e) => outside.extend(e.to_compile_error()),
        }
    }
    if group.is_empty() && outside.is_empty() {
        let e = syn::Error::new(
            block.impl_token.span,
            "#[divide_and_conquer] on an `impl` block runs the methods marked `#[divide_and_conquer]` inside it in parallel; mark the recursive ones",
        )
        .to_compile_error();
        return quote!(#block #e);
    }
    // The methods of one block may call each other: each call of any of
    // them becomes a call of its function, which spawns like a recursive
    // call.
    let peers: Vec<syn::Signature> = group.iter().map(|s| s.func.sig.clone()).collect();
    let any_mut = group.iter().any(|s| s.receiver == Some(Receiver::Mut));
    for split in &group {
        let mut func = split.func.clone();
        let mut body = (*func.block).clone();
        MethodCalls { group: &group, self_ty: &self_ty }.visit_block_mut(&mut body);
        if any_mut {
            match attr::parse(split.args.clone()) {
                Ok(a) => {
                    let krate = a.krate;
                    body.stmts
                        .insert(0, parse_quote!(#[allow(unused_imports)] use #krate::__private::ReceiverMut as _;));
                }
                Err(e) => outside.extend(e.to_compile_error()),
            }
        }
        func.block = Box::new(body);
        let shown = format!("{}::{}", self_ty.to_token_stream().to_string().replace(' ', ""), split.name);
        outside.extend(expand::divide_and_conquer_named(
            split.args.clone(),
            func.into_token_stream(),
            Some(shown),
            peers.clone(),
            Vec::new(),
        ));
    }
    quote!(#block #outside)
}

/// `ty` with every generic argument list written as in an expression
/// (`Tree::<T>`).
fn with_turbofish(mut ty: Type) -> Type {
    struct Turbofish;
    impl VisitMut for Turbofish {
        fn visit_angle_bracketed_generic_arguments_mut(&mut self, a: &mut syn::AngleBracketedGenericArguments) {
            a.colon2_token = Some(Default::default());
            visit_mut::visit_angle_bracketed_generic_arguments_mut(self, a);
        }
    }
    Turbofish.visit_type_mut(&mut ty);
    ty
}

/// The generics of a method's function: the block's, then the method's
/// own; both `where` clauses.
fn merged_generics(block: &syn::Generics, method: &syn::Generics) -> syn::Generics {
    let mut g = block.clone();
    g.params.extend(method.params.iter().cloned());
    if let Some(w) = &method.where_clause {
        g.make_where_clause().predicates.extend(w.predicates.iter().cloned());
    }
    g
}

/// A marked method made a function of its own.
struct Split {
    name: Ident,
    receiver: Option<Receiver>,
    /// The function: the receiver its first parameter, `self` renamed,
    /// `Self` spelled out; calls of the group not rewritten yet.
    func: ItemFn,
    args: TokenStream,
}

/// Makes `method` a call of a new function that takes the receiver as its
/// first parameter, and returns that function.
fn split_method(
    self_ty: &Type,
    block_generics: &syn::Generics,
    method: &mut ImplItemFn,
    args: TokenStream,
) -> syn::Result<Split> {
    let name = method.sig.ident.clone();
    let free = format_ident!("__satin_method_{}_{}", type_tag(self_ty), name);
    let receiver = receiver_kind(method)?;
    let this = Ident::new("__satin_self", Span::call_site());

    let mut inputs: Vec<TokenStream> = Vec::new();
    for input in &method.sig.inputs {
        match input {
            FnArg::Receiver(_) => {
                let ty = match receiver {
                    Some(Receiver::Shared) => quote!(&#self_ty),
                    Some(Receiver::Mut) => quote!(&mut #self_ty),
                    Some(Receiver::Owned) | None => quote!(#self_ty),
                };
                inputs.push(quote!(#this: #ty));
            }
            FnArg::Typed(pt) => inputs.push(pt.to_token_stream()),
        }
    }
    let (output, attrs) = (&method.sig.output, &method.attrs);
    let body = &method.block;
    let generics = merged_generics(block_generics, &method.sig.generics);
    let where_clause = &generics.where_clause;
    let tokens = quote! {
        #(#attrs)*
        #[allow(non_snake_case)]
        fn #free #generics (#(#inputs),*) #output #where_clause #body
    };
    let func: ItemFn = syn::parse2(spell_out(tokens, self_ty, &this))?;

    // The method: its parameters named, passed on.
    let mut forwarded: Vec<TokenStream> = Vec::new();
    for (i, input) in method.sig.inputs.iter_mut().enumerate() {
        match input {
            FnArg::Receiver(_) => forwarded.push(quote!(self)),
            FnArg::Typed(pt) => {
                let arg = format_ident!("__satin_arg{}", i);
                *pt.pat = parse_quote!(#arg);
                forwarded.push(quote!(#arg));
            }
        }
    }
    method.block = parse_quote!({ #free(#(#forwarded),*) });
    // The function asks every type parameter to travel; so does the method.
    let krate = attr::parse(args.clone())?.krate;
    let type_params: Vec<Ident> = generics
        .params
        .iter()
        .filter_map(|p| match p {
            syn::GenericParam::Type(t) => Some(t.ident.clone()),
            _ => None,
        })
        .collect();
    if !type_params.is_empty() {
        let clause = method.sig.generics.make_where_clause();
        clause
            .predicates
            .extend(type_params.iter().map(|t| -> syn::WherePredicate { parse_quote!(#t: #krate::TypeParam) }));
    }
    method.attrs.retain(|a| a.path().is_ident("doc") || a.path().is_ident("inline") || a.path().is_ident("must_use"));
    Ok(Split { name, receiver, func, args })
}

#[derive(Clone, Copy, PartialEq)]
enum Receiver {
    Shared,
    Mut,
    Owned,
}

fn receiver_kind(method: &ImplItemFn) -> syn::Result<Option<Receiver>> {
    let Some(r) = method.sig.receiver() else { return Ok(None) };
    if r.colon_token.is_some() {
        return Err(syn::Error::new_spanned(
            r,
            "#[divide_and_conquer] methods take `&self`, `&mut self` or `self`; a receiver with a type (`self: Box<Self>`) is not supported",
        ));
    }
    Ok(Some(match (&r.reference, &r.mutability) {
        (Some(_), Some(_)) => Receiver::Mut,
        (Some(_), None) => Receiver::Shared,
        (None, _) => Receiver::Owned,
    }))
}

/// An identifier-safe name for a type (`Tree`, `geo::Shape` → `geo_Shape`).
fn type_tag(ty: &Type) -> String {
    let tag: String = ty.to_token_stream().to_string().chars().filter(|c| !c.is_whitespace()).collect();
    tag.chars().map(|c| if c.is_alphanumeric() { c.to_ascii_lowercase() } else { '_' }).collect()
}

/// `self` (but not `self::`) becomes `this`, `Self` the type.
fn spell_out(tokens: TokenStream, self_ty: &Type, this: &Ident) -> TokenStream {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let mut out = TokenStream::new();
    for (k, tt) in tokens.iter().enumerate() {
        match tt {
            TokenTree::Ident(i) if i == "self" => {
                let path = matches!(tokens.get(k + 1), Some(TokenTree::Punct(p)) if p.as_char() == ':');
                if path {
                    out.extend([tt.clone()]);
                } else {
                    out.extend([TokenTree::Ident(Ident::new(&this.to_string(), i.span()))]);
                }
            }
            TokenTree::Ident(i) if i == "Self" => out.extend(self_ty.to_token_stream()),
            TokenTree::Group(g) => {
                let mut inner = proc_macro2::Group::new(g.delimiter(), spell_out(g.stream(), self_ty, this));
                inner.set_span(g.span());
                out.extend([TokenTree::Group(inner)]);
            }
            _ => out.extend([tt.clone()]),
        }
    }
    out
}

/// Rewrites calls of the group's methods into calls of their functions.
struct MethodCalls<'a> {
    group: &'a [Split],
    self_ty: &'a Type,
}

impl VisitMut for MethodCalls<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        visit_mut::visit_expr_mut(self, e);
        match e {
            // `x.name(..)`: the receiver as the first argument, adjusted
            // as a method call would (a `&Box<T>` is a `&T`).
            Expr::MethodCall(m) if m.turbofish.is_none() => {
                let Some(split) = self.group.iter().find(|s| {
                    s.name == m.method && s.receiver.is_some() && s.func.sig.inputs.len() == m.args.len() + 1
                }) else {
                    return;
                };
                let (x, args, free) = (&m.receiver, &m.args, &split.func.sig.ident);
                let first = match split.receiver {
                    Some(Receiver::Shared) => quote!(&#x),
                    Some(Receiver::Mut) => quote!((#x).__satin_receiver_mut()),
                    _ => quote!(#x),
                };
                *e = parse_quote!(#free(#first, #args));
            }
            // `Self::name(..)` / `Type::name(..)`.
            Expr::Call(c) => {
                let Expr::Path(p) = &*c.func else { return };
                if p.qself.is_some() {
                    return;
                }
                let path = p.path.to_token_stream().to_string().replace(' ', "");
                let ty = self.self_ty;
                let Some(split) = self.group.iter().find(|s| {
                    let name = &s.name;
                    s.func.sig.inputs.len() == c.args.len() && quote!(#ty :: #name).to_string().replace(' ', "") == path
                }) else {
                    return;
                };
                let (free, args) = (&split.func.sig.ident, &c.args);
                *e = parse_quote!(#free(#args));
            }
            _ => {}
        }
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}
