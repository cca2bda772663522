//! The identifiers of the items generated for one function, and what the
//! rewriter needs to spawn calls of it.

use quote::format_ident;
use syn::{FnArg, Ident};

use super::params::ParamKind;
use crate::rewrite;

/// The generated items of the function `name`: its job type and its
/// copies of the body (see `copies.rs`).
pub(super) struct Idents {
    pub(super) job: Ident,
    pub(super) seq: Ident,
    pub(super) par: Ident,
    pub(super) lazy: Ident,
    pub(super) lazy_body: Ident,
    pub(super) lazy_quiet: Ident,
    pub(super) lazy_quiet2: Ident,
}

impl Idents {
    pub(super) fn of(name: &Ident) -> Idents {
        Idents {
            job: format_ident!("__SatinJob_{}", name),
            seq: format_ident!("__satin_seq_{}", name),
            par: format_ident!("__satin_par_{}", name),
            lazy: format_ident!("__satin_lazy_{}", name),
            lazy_body: format_ident!("__satin_lazybody_{}", name),
            lazy_quiet: format_ident!("__satin_lazyquiet_{}", name),
            lazy_quiet2: format_ident!("__satin_lazyquiet2_{}", name),
        }
    }
}

/// What the rewriter needs to spawn calls of the function `sig` declares.
pub(super) fn callee(sig: &syn::Signature) -> rewrite::Callee {
    let name = &sig.ident;
    let exclusive = sig
        .inputs
        .iter()
        .map(|a| matches!(a, FnArg::Typed(pt) if matches!(ParamKind::of(&pt.ty), ParamKind::Mut(_))))
        .collect();
    // A parameter bound without `mut` and not `&mut`: no statement of the
    // body can change it (a method taking `&mut self` would not compile).
    let frozen = sig
        .inputs
        .iter()
        .filter_map(|a| match a {
            FnArg::Typed(pt) => match (&*pt.pat, ParamKind::of(&pt.ty)) {
                (syn::Pat::Ident(pi), ParamKind::Owned | ParamKind::Shared(_)) if pi.mutability.is_none() => {
                    Some(pi.ident.to_string())
                }
                _ => None,
            },
            FnArg::Receiver(_) => None,
        })
        .collect();
    rewrite::Callee {
        func: name.clone(),
        arity: sig.inputs.len(),
        job: format_ident!("__SatinJob_{}", name),
        seq: format_ident!("__satin_seq_{}", name),
        exclusive,
        frozen,
    }
}
