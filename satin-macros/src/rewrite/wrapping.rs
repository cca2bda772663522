//! What a statement does to a call's result before it keeps it: `-f(x)`,
//! `!f(x)`, `f(x) as u64`, `f(x)?`, `f(x).0`, `f(x).unwrap()`, in any
//! nesting. The call spawns as a bare call does, and the rest is applied
//! to its result where the result is read.
//!
//! Applied later than written, these forms must not read anything the
//! statements in between may change: they are operators, casts, fields
//! and method calls whose arguments are literals — nothing else is
//! evaluated besides the call.

use syn::{parse_quote, Expr, Member, Type, UnOp};

use super::{Args, Names};

/// One step from the call's result outwards.
#[derive(Clone, PartialEq)]
enum Layer {
    Try,
    Unary(UnOp),
    Cast(Box<Type>),
    Field(Member),
    Method { call: Box<syn::ExprMethodCall> },
}

/// The steps around a call, innermost first (none: the bare call).
#[derive(Clone, Default, PartialEq)]
pub(crate) struct Wrapping(Vec<Layer>);

impl Wrapping {
    /// The recursive call inside `e` and what `e` does to its result, if
    /// `e` is a call wrapped only in the forms above.
    pub(super) fn peel(names: &Names, e: &Expr) -> Option<(Args, Wrapping)> {
        let mut layers = Vec::new();
        let mut at = e;
        loop {
            if let Some(args) = names.recursive_call(at) {
                layers.reverse();
                return Some((args, Wrapping(layers)));
            }
            at = match at {
                Expr::Try(t) => {
                    layers.push(Layer::Try);
                    &t.expr
                }
                // `*f(x)` would deref a temporary: left as written.
                Expr::Unary(u) if !matches!(u.op, UnOp::Deref(_)) => {
                    layers.push(Layer::Unary(u.op));
                    &u.expr
                }
                Expr::Cast(c) => {
                    layers.push(Layer::Cast(c.ty.clone()));
                    &c.expr
                }
                Expr::Paren(p) => &p.expr,
                Expr::Field(f) => {
                    layers.push(Layer::Field(f.member.clone()));
                    &f.base
                }
                Expr::MethodCall(m) if m.args.iter().all(|a| matches!(a, Expr::Lit(_))) => {
                    layers.push(Layer::Method { call: Box::new(m.clone()) });
                    &m.receiver
                }
                _ => return None,
            };
        }
    }

    /// No step: the bare call.
    pub(super) fn is_bare(&self) -> bool {
        self.0.is_empty()
    }

    /// A `?` and nothing else.
    pub(super) fn is_try(&self) -> bool {
        matches!(self.0.as_slice(), [Layer::Try])
    }

    /// Whether a `?` is among the steps: the result is read where the
    /// statement stands (an error returns from there).
    pub(super) fn fallible(&self) -> bool {
        self.0.iter().any(|l| matches!(l, Layer::Try))
    }

    /// `value` (the call's result) with the steps applied.
    /// Whether the call's own result is `?`ed first (`f(..)?`, `-f(..)?`):
    /// a failed call returns from the function before anything else.
    pub(super) fn tries_first(&self) -> bool {
        matches!(self.0.first(), Some(Layer::Try))
    }

    pub(super) fn apply(&self, value: Expr) -> Expr {
        self.0.iter().fold(value, |v, layer| match layer {
            Layer::Try => parse_quote!(#v?),
            Layer::Unary(op) => parse_quote!(#op (#v)),
            Layer::Cast(ty) => parse_quote!((#v) as #ty),
            Layer::Field(member) => parse_quote!((#v).#member),
            Layer::Method { call } => {
                let (method, turbofish, args) = (&call.method, &call.turbofish, &call.args);
                parse_quote!((#v).#method #turbofish (#args))
            }
        })
    }
}
