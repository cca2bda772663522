//! Loops that read each call's result in the same iteration (loop
//! fission):
//!
//! ```text
//! for c in children { let v = f(c.arg()); best = keep(best, v); }
//! ```
//!
//! becomes a loop that spawns every iteration's call, then a loop that
//! runs the rest of each iteration's body, in order, as its result is
//! read:
//!
//! ```text
//! list.spawn_each(ctx, children.into_iter().map(|c| { seen.push(c); Job(c.arg()) }));
//! for (c, v) in seen.into_iter().zip(list.join_all(ctx)) { best = keep(best, v); }
//! ```
//!
//! Only when the call's arguments cannot depend on what the body changes:
//! they (and the `let`s before the call, which the first loop runs) read
//! no variable that the loop assigns, borrows mutably or calls a method
//! on that might change it. Otherwise the warning names that variable.
//! The `let`s before the call must not leave the iteration early
//! (`continue`, `break`, `return`, `?`); the rest of the body may.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::{parse_quote, Block, Expr, ExprForLoop, Ident, Local, LocalInit, Pat, Stmt};

use super::analysis::variables;
use super::{ctx_ident, Args, Parallel, Wrapping};
use crate::mentions::mentions;

/// Methods that only read their receiver: calling them does not make it
/// a variable the loop changes.
const READS_ONLY: &[&str] = &[
    "len",
    "is_empty",
    "get",
    "iter",
    "clone",
    "contains",
    "first",
    "last",
    "as_ref",
    "as_slice",
    "to_vec",
    "to_owned",
    "to_string",
    "abs",
    "min",
    "max",
    "pow",
    "chars",
    "bytes",
    "keys",
    "values",
    "is_some",
    "is_none",
    "unwrap_or",
    "copied",
    "cloned",
];

/// The call a loop body's statement spawns: `let x = f(..);` or
/// `let x = -f(..)?;` (see `wrapping.rs`) with a plain identifier.
struct Split {
    /// Index of the call's statement in the body.
    at: usize,
    pat: Pat,
    args: Args,
    /// What the statement does to the result (`let x = -f(..)?;`).
    wrap: Wrapping,
}

impl Parallel<'_> {
    /// Splits a `for` loop whose body reads a call's result in the same
    /// iteration; true if it did. Records why not when a call's arguments
    /// read what the loop changes.
    pub(super) fn rewrite_fission(&mut self, expr: &mut Expr) -> bool {
        let Expr::ForLoop(l) = &*expr else { return false };
        // (A lazy version splits the same loops, silently: the parallel
        // version has said why it does not split the others.)
        let lazy = self.lazy.is_some();
        let Some(split) = self.find_split(&l.body) else { return false };
        let prefix = &l.body.stmts[..split.at];
        // (A parameter nothing can change is never among them, unless
        // the body binds its name anew.)
        let frozen = &self.names.own().frozen;
        let mut changed = changed_in(&l.body);
        changed.retain(|v| !frozen.contains(v) || binds(&l.body, v));
        let reads: Vec<String> = prefix.iter().flat_map(variables).chain(variables(&split.args)).collect();
        if let Some(var) = reads.iter().find(|v| changed.contains(v)) {
            if lazy {
                return false;
            }
            let name = &self.names.own().func;
            let methods = methods_changing(&l.body, var);
            let message = match methods.as_slice() {
                // A move played and undone around the call (`board.play(mv);
                // .. board.undo(mv);`): the calls share one board.
                [_, ..] => format!(
                    "the calls of this loop run one after another: their arguments read `{var}`, which the loop changes around them ({}); calls that share one value changed before and undone after each can only take turns — give each call its own copy instead (copy-make: `let next = ..; {name}(&next, ..)` with `next` a clone of `{var}` after `{}`)",
                    methods.iter().map(|m| format!("`{var}.{m}(..)`")).collect::<Vec<_>>().join(", "),
                    methods[0],
                ),
                [] => format!(
                    "the calls of this loop run one after another: their arguments read `{var}`, which the loop changes; compute the arguments from what the loop does not change, or collect them first (`let args: Vec<_> = ..; for a in args {{ .. {name}(a) .. }}`)"
                ),
            };
            self.notes.push((l.body.stmts[split.at].span(), message));
            return false;
        }
        if let Some(s) = prefix.iter().find(|s| !matches!(s, Stmt::Local(_)) || leaves_early(s)) {
            if lazy {
                return false;
            }
            self.notes.push((
                s.span(),
                "the calls of this loop run one after another: only `let`s that cannot leave the iteration may come before the call in the loop's body (this statement keeps the calls in order); move it after the call".to_string(),
            ));
            return false;
        }
        let rest = &l.body.stmts[split.at + 1..];
        let kept: Vec<(Ident, bool)> =
            carried(l, prefix).into_iter().filter(|(i, _)| rest.iter().any(|s| mentions(s, i))).collect();
        if lazy {
            // A child the call borrows would be boxed into a store at every
            // iteration of every node (`Keep`): as written, the lazy loop
            // costs what the plain one does, and its calls still promote.
            if !lent_by_call(prefix, &split.args).is_empty() {
                return false;
            }
            *expr = self.lazy_fission(l, &split, &kept);
            return true;
        }
        self.spawn_sites += 1;
        *expr = self.fission(l, &split, &kept);
        true
    }

    /// The lazy version of a split loop: each iteration's call runs
    /// lazily inline, in order, through `LazyIter`, whose iterations not
    /// started yet are a latent loop a request for work can take (as the
    /// lazy version of `iter.map(|p| f(..)).fold(..)` does); what the rest
    /// of the body reads of the iteration waits in a queue beside it.
    fn lazy_fission(&mut self, l: &ExprForLoop, split: &Split, kept: &[(Ident, bool)]) -> Expr {
        let (krate, ctx) = (&self.names.krate, ctx_ident());
        let (label, pat, iter) = (&l.label, &l.pat, &l.expr);
        let prefix = &l.body.stmts[..split.at];
        let rest = &l.body.stmts[split.at + 1..];
        let job = self.names.job_value(&split.args);
        let run = self.run_deferred(split.args.callee, &parse_quote!(__satin_job));
        let result = Ident::new("__satin_result", Span::call_site());
        let value = split.wrap.apply(parse_quote!(#result));
        let call_pat = &split.pat;
        let (seen, jobs) = (self.fresh("seen"), self.fresh("jobs"));
        let names: Vec<&Ident> = kept.iter().map(|(i, _)| i).collect();
        let bindings: Vec<TokenStream> =
            kept.iter().map(|(i, m)| if *m { quote!(mut #i) } else { quote!(#i) }).collect();
        let (declare_seen, push_seen, pop_seen) = if kept.is_empty() {
            (quote!(), quote!(), quote!())
        } else {
            (
                quote!(let #seen = ::core::cell::RefCell::new(::std::collections::VecDeque::new());),
                quote!(#seen.borrow_mut().push_back((#(#names,)*));),
                quote!(let (#(#bindings,)*) = #seen.borrow_mut().pop_front().expect("kept when its call was made");),
            )
        };
        // (No call here borrows a value of its iteration: see the caller.)
        parse_quote!({
            #declare_seen
            let #jobs = ::core::iter::Iterator::map(::core::iter::IntoIterator::into_iter(#iter), |#pat| {
                #(#prefix)*
                #push_seen
                #job
            });
            #label for #result in #krate::__private::LazyIter::new(#ctx, #jobs, |__satin_job| #run) {
                #pop_seen
                let #call_pat = #value;
                #(#rest)*
            }
        })
    }

    /// The first `let x = f(..)[?];` among the body's statements.
    fn find_split(&self, body: &Block) -> Option<Split> {
        body.stmts.iter().enumerate().find_map(|(at, s)| {
            let Stmt::Local(Local { pat, init: Some(LocalInit { expr, diverge: None, .. }), .. }) = s else {
                return None;
            };
            let (args, wrap) = Wrapping::peel(self.names, expr)?;
            matches!(pat, Pat::Ident(_) | Pat::Type(_)).then(|| Split { at, pat: pat.clone(), args, wrap })
        })
    }

    fn fission(&mut self, l: &ExprForLoop, split: &Split, kept: &[(Ident, bool)]) -> Expr {
        let (krate, ctx) = (&self.names.krate, ctx_ident());
        let (list, seen) = (self.fresh("list"), self.fresh("seen"));
        let (label, pat, iter) = (&l.label, &l.pat, &l.expr);
        let prefix = &l.body.stmts[..split.at];
        let rest = &l.body.stmts[split.at + 1..];
        let job = self.names.job_value(&split.args);
        let names: Vec<&Ident> = kept.iter().map(|(i, _)| i).collect();
        let bindings: Vec<TokenStream> =
            kept.iter().map(|(i, m)| if *m { quote!(mut #i) } else { quote!(#i) }).collect();
        let result = Ident::new("__satin_result", Span::call_site());
        let value = split.wrap.apply(parse_quote!(#result));
        let call_pat = &split.pat;
        // A value of the iteration that the call borrows (`let child = ..;
        // f(&child)`) must outlive it: it moves into a store that lives
        // until the calls are joined (declared before the list, so dropped
        // after it), and the call borrows it there.
        let lent = lent_by_call(prefix, &split.args);
        let stores: Vec<Ident> = lent.iter().map(|v| self.fresh(&format!("keep_{v}"))).collect();
        // The iterations are a latent loop (`SpawnList::spawn_each`): run
        // inline while the worker has jobs queued, the ones not made yet
        // released to a thief that asks — not pushed one by one, and not
        // run inline to the end once the queue is full. A `?` on the call
        // ends them at the first inline failure, as the plain loop's
        // return would.
        let spawn_each = if split.wrap.tries_first() { quote!(spawn_each_until_failure) } else { quote!(spawn_each) };
        parse_quote!({
            #(let #stores = #krate::__private::Keep::new();)*
            let mut #list = #krate::__private::SpawnList::new();
            let mut #seen = ::std::vec::Vec::new();
            #list.#spawn_each(#ctx, ::core::iter::IntoIterator::into_iter(#iter).map(|#pat| {
                #(#prefix)*
                #(let #lent = #stores.keep(#lent);)*
                #seen.push((#(#names,)*));
                #job
            }));
            #label for ((#(#bindings,)*), #result) in #seen.into_iter().zip(#list.join_all(#ctx)) {
                let #call_pat = #value;
                #(#rest)*
            }
        })
    }
}

/// Variables the `let`s before the call declare that the call's
/// arguments borrow (`&child`).
pub(super) fn lent_by_call(prefix: &[Stmt], args: &Args) -> Vec<Ident> {
    let declared: Vec<Ident> = prefix
        .iter()
        .filter_map(|s| match s {
            Stmt::Local(Local { pat: Pat::Ident(p), .. }) => Some(p.ident.clone()),
            Stmt::Local(Local { pat: Pat::Type(t), .. }) => match &*t.pat {
                Pat::Ident(p) => Some(p.ident.clone()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    let mut lent: Vec<Ident> = Vec::new();
    for a in args.iter() {
        if let Expr::Reference(r) = a {
            if let (None, Some(v)) = (r.mutability, base(&r.expr)) {
                if let Some(d) = declared.iter().rev().find(|d| **d == v) {
                    if !lent.contains(d) {
                        lent.push(d.clone());
                    }
                }
            }
        }
    }
    lent
}

/// Whether a statement can leave the iteration or the function.
fn leaves_early(s: &Stmt) -> bool {
    struct Leaves(bool);
    impl Visit<'_> for Leaves {
        fn visit_expr(&mut self, e: &Expr) {
            match e {
                Expr::Break(_) | Expr::Continue(_) | Expr::Return(_) | Expr::Try(_) => self.0 = true,
                Expr::Closure(_) => {}
                _ => syn::visit::visit_expr(self, e),
            }
        }
        fn visit_item(&mut self, _: &syn::Item) {}
    }
    let mut v = Leaves(false);
    v.visit_stmt(s);
    v.0
}

/// Variables a loop body may change: assigned, borrowed `&mut`, or the
/// receiver of a method that may change it.
fn changed_in(body: &Block) -> Vec<String> {
    struct Changed(Vec<String>);
    impl Visit<'_> for Changed {
        fn visit_expr(&mut self, e: &Expr) {
            match e {
                Expr::Assign(a) => self.0.extend(base(&a.left)),
                Expr::Binary(b) if is_assign_op(&b.op) => self.0.extend(base(&b.left)),
                Expr::Reference(r) if r.mutability.is_some() => self.0.extend(base(&r.expr)),
                Expr::MethodCall(m) if !READS_ONLY.contains(&m.method.to_string().as_str()) => {
                    self.0.extend(base(&m.receiver))
                }
                _ => {}
            }
            syn::visit::visit_expr(self, e);
        }
        fn visit_item(&mut self, _: &syn::Item) {}
    }
    let mut v = Changed(Vec::new());
    v.visit_block(body);
    v.0
}

/// Whether the body declares a variable named `var` (a `let` or a
/// closure's parameter: a `for` pattern of a loop inside counts too).
fn binds(body: &Block, var: &str) -> bool {
    struct Binds<'v>(&'v str, bool);
    impl Visit<'_> for Binds<'_> {
        fn visit_pat_ident(&mut self, p: &syn::PatIdent) {
            self.1 |= p.ident == self.0;
        }
        fn visit_item(&mut self, _: &syn::Item) {}
    }
    let mut v = Binds(var, false);
    v.visit_block(body);
    v.1
}

/// The methods the loop's body calls on `var` that may change it (in
/// order, each once).
fn methods_changing(body: &Block, var: &str) -> Vec<String> {
    struct Methods<'v>(&'v str, Vec<String>);
    impl Visit<'_> for Methods<'_> {
        fn visit_expr_method_call(&mut self, m: &syn::ExprMethodCall) {
            let method = m.method.to_string();
            if !READS_ONLY.contains(&method.as_str())
                && base(&m.receiver).is_some_and(|b| b == self.0)
                && !self.1.contains(&method)
            {
                self.1.push(method);
            }
            syn::visit::visit_expr_method_call(self, m);
        }
        fn visit_item(&mut self, _: &syn::Item) {}
    }
    let mut v = Methods(var, Vec::new());
    v.visit_block(body);
    v.1
}

fn is_assign_op(op: &syn::BinOp) -> bool {
    use syn::BinOp::*;
    matches!(
        op,
        AddAssign(_)
            | SubAssign(_)
            | MulAssign(_)
            | DivAssign(_)
            | RemAssign(_)
            | BitXorAssign(_)
            | BitAndAssign(_)
            | BitOrAssign(_)
            | ShlAssign(_)
            | ShrAssign(_)
    )
}

/// The variable at the root of a place (`v` of `v[i].x`, `*v`).
fn base(e: &Expr) -> Option<String> {
    match e {
        Expr::Path(p) => p.path.get_ident().map(|i| i.to_string()),
        Expr::Field(f) => base(&f.base),
        Expr::Index(i) => base(&i.expr),
        Expr::Unary(u) => base(&u.expr),
        Expr::Paren(p) => base(&p.expr),
        Expr::MethodCall(m) => base(&m.receiver),
        _ => None,
    }
}

/// What the second loop needs of each iteration: the loop pattern's
/// bindings and those of the `let`s before the call, with their `mut`.
fn carried(l: &ExprForLoop, prefix: &[Stmt]) -> Vec<(Ident, bool)> {
    let mut out = Vec::new();
    bound_by(&l.pat, &mut out);
    for s in prefix {
        if let Stmt::Local(local) = s {
            bound_by(&local.pat, &mut out);
        }
    }
    out
}

fn bound_by(p: &Pat, out: &mut Vec<(Ident, bool)>) {
    struct Bound<'a>(&'a mut Vec<(Ident, bool)>);
    impl Visit<'_> for Bound<'_> {
        fn visit_pat_ident(&mut self, p: &syn::PatIdent) {
            self.0.push((p.ident.clone(), p.mutability.is_some()));
            syn::visit::visit_pat_ident(self, p);
        }
    }
    Bound(out).visit_pat(p);
}
