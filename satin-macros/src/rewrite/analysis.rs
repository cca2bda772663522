//! What a body's calls allow: how many one run can make, where they
//! stand, and which variables an argument list uses.

use proc_macro2::{Span, TokenStream};
use syn::{Block, Expr, Ident};

use super::Names;

/// The most recursive calls one execution of `block` can make, counting
/// only one branch of each `if`/`match` (two for a loop that calls): a
/// function that can make two calls has calls that could run at once.
pub(crate) fn calls_on_a_path(names: &Names, block: &Block) -> usize {
    struct Count<'a> {
        names: &'a Names,
        n: usize,
    }
    impl Count<'_> {
        fn of(&self, f: impl FnOnce(&mut Count<'_>)) -> usize {
            let mut c = Count { names: self.names, n: 0 };
            f(&mut c);
            c.n
        }
    }
    impl syn::visit::Visit<'_> for Count<'_> {
        fn visit_expr(&mut self, e: &Expr) {
            if self.names.recursive_call(e).is_some() {
                self.n += 1;
            }
            match e {
                Expr::If(i) => {
                    self.visit_expr(&i.cond);
                    let then = self.of(|c| c.visit_block(&i.then_branch));
                    let other = i.else_branch.as_ref().map_or(0, |(_, e)| self.of(|c| c.visit_expr(e)));
                    self.n += then.max(other);
                }
                Expr::Match(m) => {
                    self.visit_expr(&m.expr);
                    self.n += m.arms.iter().map(|a| self.of(|c| c.visit_expr(&a.body))).max().unwrap_or(0);
                }
                Expr::ForLoop(_) | Expr::While(_) | Expr::Loop(_) => {
                    let body = self.of(|c| syn::visit::visit_expr(c, e));
                    self.n += body.min(1) * 2;
                }
                Expr::Closure(_) => {}
                _ => syn::visit::visit_expr(self, e),
            }
        }
        fn visit_item(&mut self, _: &syn::Item) {}
    }
    let mut c = Count { names, n: 0 };
    syn::visit::Visit::visit_block(&mut c, block);
    c.n
}

/// Where the function calls itself (outside closures and nested items).
pub(crate) fn call_sites(names: &Names, block: &Block) -> Vec<Span> {
    struct Sites<'a> {
        names: &'a Names,
        out: Vec<Span>,
    }
    impl syn::visit::Visit<'_> for Sites<'_> {
        fn visit_expr(&mut self, e: &Expr) {
            if self.names.recursive_call(e).is_some() {
                self.out.push(syn::spanned::Spanned::span(e));
            }
            syn::visit::visit_expr(self, e);
        }
        fn visit_expr_closure(&mut self, _: &syn::ExprClosure) {}
        fn visit_item(&mut self, _: &syn::Item) {}
    }
    let mut sites = Sites { names, out: Vec::new() };
    syn::visit::Visit::visit_block(&mut sites, block);
    sites.out
}

/// A call of another function by its bare name (see [`only_other_calls`]).
pub(crate) struct OtherCall {
    pub(crate) span: Span,
    pub(crate) callee: Ident,
    pub(crate) arity: usize,
    /// Some call of it stands in a closure (`.map(|x| g(x))`).
    pub(crate) in_closure: bool,
}

/// If no call of the function or of its group stands anywhere in
/// `block` (closures included): the calls there of other functions by
/// their bare name — neither a parameter nor a variable — first call
/// first, one per name. A function that runs as the plain one may mean
/// one of them to be an annotated function its attribute does not see.
pub(crate) fn only_other_calls(names: &Names, inputs: &super::Inputs, block: &Block) -> Vec<OtherCall> {
    struct Calls<'a> {
        names: &'a Names,
        group: bool,
        bound: Vec<Ident>,
        closures: usize,
        other: Vec<OtherCall>,
    }
    impl syn::visit::Visit<'_> for Calls<'_> {
        fn visit_expr(&mut self, e: &Expr) {
            if self.names.recursive_call(e).is_some() {
                self.group = true;
            } else if let Expr::Call(c) = e {
                if let Expr::Path(p) = &*c.func {
                    let bare = p.qself.is_none() && p.path.leading_colon.is_none() && p.path.segments.len() == 1;
                    let ident = &p.path.segments[0].ident;
                    // (`Some(..)`, `Ok(..)`: variants and tuple structs.)
                    let function = ident.to_string().starts_with(|c: char| c.is_ascii_lowercase());
                    let in_closure = self.closures > 0;
                    match self.other.iter_mut().find(|o| o.callee == *ident) {
                        Some(o) => o.in_closure |= in_closure,
                        None if bare && function => self.other.push(OtherCall {
                            span: syn::spanned::Spanned::span(&p.path),
                            callee: ident.clone(),
                            arity: c.args.len(),
                            in_closure,
                        }),
                        None => {}
                    }
                }
            }
            syn::visit::visit_expr(self, e);
        }
        fn visit_expr_closure(&mut self, c: &syn::ExprClosure) {
            self.closures += 1;
            syn::visit::visit_expr_closure(self, c);
            self.closures -= 1;
        }
        fn visit_pat_ident(&mut self, p: &syn::PatIdent) {
            self.bound.push(p.ident.clone());
            syn::visit::visit_pat_ident(self, p);
        }
        fn visit_item(&mut self, _: &syn::Item) {}
    }
    let mut calls = Calls { names, group: false, bound: Vec::new(), closures: 0, other: Vec::new() };
    for input in inputs {
        syn::visit::Visit::visit_fn_arg(&mut calls, input);
    }
    syn::visit::Visit::visit_block(&mut calls, block);
    if calls.group {
        return Vec::new();
    }
    let bound = calls.bound;
    calls.other.into_iter().filter(|o| !bound.contains(&o.callee)).collect()
}

/// Iterator methods whose closure runs once per element: a call inside it
/// stays a call, made element after element, unless a form rewrites it.
const ADAPTERS: &[&str] = &[
    "all",
    "any",
    "filter",
    "filter_map",
    "find",
    "find_map",
    "flat_map",
    "fold",
    "for_each",
    "inspect",
    "map_while",
    "max_by",
    "max_by_key",
    "min_by",
    "min_by_key",
    "partition",
    "position",
    "reduce",
    "scan",
    "skip_while",
    "take_while",
    "try_fold",
    "try_for_each",
];

/// Recursive calls left inside the closures of iterator adapters (see
/// [`ADAPTERS`]) in an already rewritten body: they run one after another.
pub(crate) fn calls_left_in_adapters(names: &Names, block: &Block) -> Vec<Span> {
    struct Sites<'a> {
        names: &'a Names,
        depth: usize,
        out: Vec<Span>,
    }
    impl syn::visit::Visit<'_> for Sites<'_> {
        fn visit_expr(&mut self, e: &Expr) {
            if self.depth > 0 && self.names.recursive_call(e).is_some() {
                self.out.push(syn::spanned::Spanned::span(e));
            }
            match e {
                Expr::MethodCall(m) if ADAPTERS.contains(&m.method.to_string().as_str()) => {
                    self.visit_expr(&m.receiver);
                    self.depth += 1;
                    m.args.iter().for_each(|a| self.visit_expr(a));
                    self.depth -= 1;
                }
                _ => syn::visit::visit_expr(self, e),
            }
        }
        fn visit_item(&mut self, _: &syn::Item) {}
    }
    let mut sites = Sites { names, depth: 0, out: Vec::new() };
    syn::visit::Visit::visit_block(&mut sites, block);
    sites.out
}

/// The variables an expression uses: identifiers, not the names of
/// methods, fields, functions or macros, nor paths' leading segments.
pub(super) fn variables(code: &impl quote::ToTokens) -> Vec<String> {
    fn walk(tokens: TokenStream, out: &mut Vec<String>) {
        let tokens: Vec<proc_macro2::TokenTree> = tokens.into_iter().collect();
        for (k, tt) in tokens.iter().enumerate() {
            let is = |at: Option<&proc_macro2::TokenTree>, c: char| matches!(at, Some(proc_macro2::TokenTree::Punct(p)) if p.as_char() == c);
            let next = tokens.get(k + 1);
            let call = matches!(next, Some(proc_macro2::TokenTree::Group(g)) if g.delimiter() == proc_macro2::Delimiter::Parenthesis);
            let member = k > 0 && is(tokens.get(k - 1), '.');
            let named = call || member || is(next, '!') || is(next, ':');
            match tt {
                proc_macro2::TokenTree::Ident(i) if !named => out.push(i.to_string()),
                proc_macro2::TokenTree::Group(g) => walk(g.stream(), out),
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    walk(code.to_token_stream(), &mut out);
    out
}
