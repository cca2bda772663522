//! The loop form (`v.push(f(..))`, `acc += f(..)` in a loop body) and the
//! iterator form (`iter.map(|p| f(..)).sum()`).

use proc_macro2::TokenStream;
use quote::quote;
use syn::visit_mut::{self, VisitMut};
use syn::{parse_quote, BinOp, Block, Expr, Ident, Stmt};

use super::{ctx_ident, Args, Names, Parallel};
use crate::mentions::mentions;

impl Parallel<'_> {
    /// The loop form: per-iteration spawns of `v.push(f(..))` / `acc OP= f(..)`.
    pub(super) fn rewrite_loop(&mut self, expr: &mut Expr) {
        let body = match expr {
            Expr::ForLoop(l) => &mut l.body,
            Expr::While(l) => &mut l.body,
            Expr::Loop(l) => &mut l.body,
            _ => return,
        };
        let mut found: Vec<Collector> = Vec::new();
        find_collectors(self.names, body, &mut found);
        // A target must appear nowhere else in the loop: not read, not
        // otherwise changed, not in the calls' arguments.
        let whole = quote!(#expr);
        let mut targets: Vec<(Ident, CollectorKind)> = Vec::new();
        for c in &found {
            if !targets.iter().any(|(t, k)| *t == c.target && *k == c.kind) {
                targets.push((c.target.clone(), c.kind.clone()));
            }
        }
        targets.retain(|(t, _)| {
            let uses = count_ident(whole.clone(), &t.to_string());
            let claimed = found.iter().filter(|c| c.target == *t).count();
            uses == claimed && !found.iter().any(|c| mentions(&c.args, t))
        });
        if targets.is_empty() {
            return;
        }
        self.spawn_sites += 1;
        let (krate, ctx) = (self.names.krate.clone(), ctx_ident());
        let mut lists = Vec::new();
        for (target, kind) in &targets {
            lists.push((self.fresh("list"), target.clone(), kind.clone()));
        }
        let body = match expr {
            Expr::ForLoop(l) => &mut l.body,
            Expr::While(l) => &mut l.body,
            Expr::Loop(l) => &mut l.body,
            _ => unreachable!("checked above"),
        };
        ReplaceCollectors { names: self.names, lists: &lists }.visit_block_mut(body);
        let decls = lists.iter().map(|(l, _, _)| quote!(let mut #l = #krate::__private::SpawnList::new();));
        let applies = lists.iter().map(|(l, target, kind)| {
            let apply = match kind {
                CollectorKind::Push => quote!(#target.push(__satin_r);),
                CollectorKind::Op(op) => quote!(#target #op __satin_r;),
            };
            quote!(for __satin_r in #l.join_all(#ctx) { #apply })
        });
        let the_loop = expr.clone();
        *expr = parse_quote!({
            #(#decls)*
            let __satin_loop_value = #the_loop;
            #(#applies)*
            __satin_loop_value
        });
    }

    /// The iterator form: `iter.map(|p| f(..)).sum()` and friends.
    pub(super) fn rewrite_iterator(&mut self, expr: &mut Expr) {
        let Expr::MethodCall(reduce) = expr else { return };
        if !["sum", "product", "collect", "min", "max"].contains(&reduce.method.to_string().as_str())
            || !reduce.args.is_empty()
        {
            return;
        }
        let Expr::MethodCall(map) = &*reduce.receiver else { return };
        if map.method != "map" || map.args.len() != 1 {
            return;
        }
        let Expr::Closure(closure) = &map.args[0] else { return };
        let call_args = match &*closure.body {
            Expr::Block(b) if b.block.stmts.len() == 1 => match &b.block.stmts[0] {
                Stmt::Expr(e, None) => self.names.recursive_call(e),
                _ => None,
            },
            e => self.names.recursive_call(e),
        };
        let Some(call_args) = call_args.cloned() else { return };
        self.spawn_sites += 1;
        let (krate, ctx) = (self.names.krate.clone(), ctx_ident());
        let list = self.fresh("list");
        let job = self.names.job_value(&call_args);
        let inputs = &closure.inputs;
        let source = &map.receiver;
        let (method, turbofish) = (&reduce.method, &reduce.turbofish);
        *expr = parse_quote!({
            let mut #list = #krate::__private::SpawnList::new();
            #source.for_each(|#inputs| #list.spawn_kept(#ctx, #job));
            #list.join_all(#ctx).#method #turbofish()
        });
    }
}

/// How a loop collects results into its target.
#[derive(Clone, PartialEq)]
enum CollectorKind {
    Push,
    Op(BinOp),
}

struct Collector {
    target: Ident,
    kind: CollectorKind,
    args: Args,
}

fn collector_of(names: &Names, stmt: &Stmt) -> Option<Collector> {
    let Stmt::Expr(e, Some(_)) = stmt else { return None };
    match e {
        Expr::MethodCall(m) if m.method == "push" && m.args.len() == 1 => {
            let target = plain_ident(&m.receiver)?;
            let args = names.recursive_call(&m.args[0])?.clone();
            Some(Collector { target, kind: CollectorKind::Push, args })
        }
        Expr::Binary(b) if is_compound_assign(&b.op) => {
            let target = plain_ident(&b.left)?;
            let args = names.recursive_call(&b.right)?.clone();
            Some(Collector { target, kind: CollectorKind::Op(b.op), args })
        }
        _ => None,
    }
}

fn is_compound_assign(op: &BinOp) -> bool {
    matches!(
        op,
        BinOp::AddAssign(_)
            | BinOp::SubAssign(_)
            | BinOp::MulAssign(_)
            | BinOp::BitOrAssign(_)
            | BinOp::BitAndAssign(_)
            | BinOp::BitXorAssign(_)
    )
}

fn plain_ident(e: &Expr) -> Option<Ident> {
    match e {
        Expr::Path(p) if p.qself.is_none() => p.path.get_ident().cloned(),
        _ => None,
    }
}

/// Collector statements anywhere in a loop body, outside closures and items.
fn find_collectors(names: &Names, block: &Block, out: &mut Vec<Collector>) {
    struct Find<'a> {
        names: &'a Names,
        out: &'a mut Vec<Collector>,
    }
    impl syn::visit::Visit<'_> for Find<'_> {
        fn visit_stmt(&mut self, s: &Stmt) {
            match collector_of(self.names, s) {
                Some(c) => self.out.push(c),
                None => syn::visit::visit_stmt(self, s),
            }
        }
        fn visit_expr_closure(&mut self, _: &syn::ExprClosure) {}
        fn visit_item(&mut self, _: &syn::Item) {}
    }
    syn::visit::Visit::visit_block(&mut Find { names, out }, block);
}

struct ReplaceCollectors<'a> {
    names: &'a Names,
    lists: &'a [(Ident, Ident, CollectorKind)],
}

impl VisitMut for ReplaceCollectors<'_> {
    fn visit_stmt_mut(&mut self, s: &mut Stmt) {
        if let Some(c) = collector_of(self.names, s) {
            if let Some((list, _, _)) = self.lists.iter().find(|(_, t, k)| *t == c.target && *k == c.kind) {
                let job = self.names.job_value(&c.args);
                let ctx = ctx_ident();
                let target = &c.target;
                let apply = match &c.kind {
                    CollectorKind::Push => quote!(#target.push(__satin_r);),
                    CollectorKind::Op(op) => quote!(#target #op __satin_r;),
                };
                *s = parse_quote!(if let Some(__satin_r) = #list.spawn(#ctx, #job) { #apply });
                return;
            }
        }
        visit_mut::visit_stmt_mut(self, s);
    }
    fn visit_expr_closure_mut(&mut self, _: &mut syn::ExprClosure) {}
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

fn count_ident(tokens: TokenStream, name: &str) -> usize {
    tokens
        .into_iter()
        .map(|tt| match tt {
            proc_macro2::TokenTree::Ident(i) => usize::from(i == name),
            proc_macro2::TokenTree::Group(g) => count_ident(g.stream(), name),
            proc_macro2::TokenTree::Literal(l) => {
                let s = l.to_string();
                usize::from(s.contains(&format!("{{{name}}}")) || s.contains(&format!("{{{name}:")))
            }
            _ => 0,
        })
        .sum()
}
