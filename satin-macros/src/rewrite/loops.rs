//! The loop form (`v.push(f(..))`, `acc += f(..)` in a loop body) and the
//! iterator form (`iter.map(|p| f(..)).sum()`).

use proc_macro2::TokenStream;
use quote::quote;
use syn::visit_mut::{self, VisitMut};
use syn::{parse_quote, BinOp, Block, Expr, Ident, Stmt};

use super::{ctx_ident, Args, Names, Parallel, Wrapping};
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
            self.rewrite_fission(expr);
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
        let stores = self.keep_lent(body, &targets);
        // A `for`/`while` loop that `?`s a call's result starts no more
        // iterations once one run inline fails (the plain loop returns
        // there): a labelled `break` out of it, then the join in order.
        let tries = targets.iter().any(|(_, kind)| kind.wrapping().tries_first());
        let stop = match expr {
            Expr::ForLoop(syn::ExprForLoop { label, .. }) | Expr::While(syn::ExprWhile { label, .. }) if tries => {
                let label = label.get_or_insert_with(|| syn::Label {
                    name: syn::Lifetime::new(&format!("'{}", self.fresh("loop")), proc_macro2::Span::call_site()),
                    colon_token: Default::default(),
                });
                Some(label.name.clone())
            }
            _ => None,
        };
        let body = match expr {
            Expr::ForLoop(l) => &mut l.body,
            Expr::While(l) => &mut l.body,
            Expr::Loop(l) => &mut l.body,
            _ => unreachable!("checked above"),
        };
        ReplaceCollectors { names: self.names, lists: &lists, stop: stop.as_ref() }.visit_block_mut(body);
        // (Stores first: the lists, whose calls borrow from them, drop
        // before them.)
        let stores = stores.iter().map(|s| quote!(let #s = #krate::__private::Keep::new();));
        let decls = lists.iter().map(|(l, _, _)| quote!(let mut #l = #krate::__private::SpawnList::new();));
        let applies = lists.iter().map(|(l, target, kind)| {
            let apply = kind.apply(target);
            quote!(for __satin_r in #l.join_all(#ctx) { #apply })
        });
        let the_loop = expr.clone();
        *expr = parse_quote!({
            #(#stores)*
            #(#decls)*
            let __satin_loop_value = #the_loop;
            #(#applies)*
            __satin_loop_value
        });
    }

    /// A value of the iteration that a collector's call borrows (`let
    /// child = ..; sum += f(&child);`) must outlive the iteration: before
    /// the collector (a statement of the loop's body), it moves into a
    /// store that lives until the calls are joined, and the call borrows
    /// it there. Returns the stores to declare.
    fn keep_lent(&mut self, body: &mut Block, targets: &[(Ident, CollectorKind)]) -> Vec<Ident> {
        let mut stores = Vec::new();
        let mut out: Vec<Stmt> = Vec::with_capacity(body.stmts.len());
        for (i, stmt) in body.stmts.iter().enumerate() {
            if let Some(c) = collector_of(self.names, stmt).filter(|c| targets.iter().any(|(t, _)| *t == c.target)) {
                for var in super::fission::lent_by_call(&body.stmts[..i], &c.args) {
                    let store = self.fresh(&format!("keep_{var}"));
                    out.push(parse_quote!(let #var = #store.keep(#var);));
                    stores.push(store);
                }
            }
            out.push(stmt.clone());
        }
        body.stmts = out;
        stores
    }

    /// The iterator forms: `iter.map(|p| f(..)).sum()` and friends, and
    /// the races `iter.any(|p| f(..))`, `iter.all(|p| f(..))`.
    pub(super) fn rewrite_iterator(&mut self, expr: &mut Expr) {
        if self.rewrite_iterator_race(expr) {
            return;
        }
        let Expr::MethodCall(reduce) = expr else { return };
        if !READS_EVERY_ELEMENT.contains(&reduce.method.to_string().as_str()) {
            return;
        }
        let Expr::MethodCall(map) = &*reduce.receiver else { return };
        if map.method != "map" || map.args.len() != 1 {
            return;
        }
        let Expr::Closure(closure) = &map.args[0] else { return };
        let Some(call_args) = closure_call(self.names, &closure.body) else { return };
        self.spawn_sites += 1;
        let (krate, ctx) = (self.names.krate.clone(), ctx_ident());
        let list = self.fresh("list");
        let job = self.names.job_value(&call_args);
        let inputs = &closure.inputs;
        let source = &map.receiver;
        let (method, turbofish, reduce_args) = (&reduce.method, &reduce.turbofish, &reduce.args);
        *expr = parse_quote!({
            let mut #list = #krate::__private::SpawnList::new();
            #list.spawn_each(#ctx, #source.map(|#inputs| #job));
            #list.join_all(#ctx).#method #turbofish(#reduce_args)
        });
    }
}

impl Parallel<'_> {
    /// In a lazy version, `iter.map(|p| f(..)).sum()` and the like (the
    /// forms the parallel version spawns): the closure makes each call's
    /// job, and `LazyIter` runs it straight in the next lazy copy, as a
    /// statement's call does (not through the public function, which
    /// looks the context up again and checks the queue on every call).
    /// Meanwhile the iterations not started yet are a latent loop, which a
    /// request for work can take (see `sched/latent.rs`).
    pub(super) fn rewrite_lazy_iterator(&mut self, expr: &mut Expr) -> bool {
        if self.lazy.is_none() {
            return false;
        }
        let Expr::MethodCall(reduce) = expr else { return false };
        if !READS_EVERY_ELEMENT.contains(&reduce.method.to_string().as_str()) {
            return false;
        }
        let Expr::MethodCall(map) = &mut *reduce.receiver else { return false };
        if map.method != "map" || map.args.len() != 1 {
            return false;
        }
        let Expr::Closure(closure) = &mut map.args[0] else { return false };
        let Some(args) = closure_call(self.names, &closure.body) else { return false };
        let (krate, ctx) = (self.names.krate.clone(), ctx_ident());
        *closure.body = self.names.job_value(&args);
        self.visit_expr_mut(&mut map.receiver);
        for arg in &mut reduce.args {
            self.visit_expr_mut(arg);
        }
        let job: Expr = parse_quote!(__satin_job);
        let run = self.run_deferred(args.callee, &job);
        let the_map = &*reduce.receiver;
        *reduce.receiver = parse_quote!(#krate::__private::LazyIter::new(#ctx, #the_map, |__satin_job| #run));
        true
    }

    /// `iter.any(|p| f(..))` (or `.all`): every element's call joins one
    /// race (`Race::run_all`); the first call to decide (`true` for `any`,
    /// `false` for `all`) ends the others.
    fn rewrite_iterator_race(&mut self, expr: &mut Expr) -> bool {
        let Expr::MethodCall(m) = expr else { return false };
        let any = match m.method.to_string().as_str() {
            "any" => true,
            "all" => false,
            _ => return false,
        };
        if m.args.len() != 1 {
            return false;
        }
        let Expr::Closure(closure) = &m.args[0] else { return false };
        let Some(call_args) = closure_call(self.names, &closure.body) else { return false };
        self.spawn_sites += 1;
        let (krate, ctx) = (self.names.krate.clone(), ctx_ident());
        let (race, jobs) = (self.fresh("race"), self.fresh("jobs"));
        let job = self.names.job_value(&call_args);
        let inputs = &closure.inputs;
        let source = &m.receiver;
        let decides = if any {
            quote::quote!(#krate::__private::decides_true)
        } else {
            quote::quote!(#krate::__private::decides_false)
        };
        let decided = quote::quote!(#race.run_all(#ctx, #jobs, #decides));
        let result = if any { decided } else { quote::quote!(!#decided) };
        *expr = parse_quote!({
            let mut #jobs = ::std::vec::Vec::new();
            ::core::iter::Iterator::for_each(::core::iter::Iterator::by_ref(&mut #source), |#inputs| #jobs.push(#job));
            let #race = #krate::__private::Race::new(#ctx);
            #result
        });
        true
    }
}

/// The recursive call a closure's body is, alone or as a block's one
/// expression.
fn closure_call(names: &Names, body: &Expr) -> Option<Args> {
    match body {
        Expr::Block(b) if b.block.stmts.len() == 1 => match &b.block.stmts[0] {
            Stmt::Expr(e, None) => names.recursive_call(e),
            _ => None,
        },
        e => names.recursive_call(e),
    }
}

/// Iterator methods that read every element, whatever the elements are:
/// `.map(|x| f(x))` before one of them may spawn every call first (an
/// adapter that can stop early, `.any(..)`, `.take(n)`, is not among them:
/// spawning every call could change what runs, or never end).
const READS_EVERY_ELEMENT: &[&str] = &[
    "collect",
    "count",
    "fold",
    "for_each",
    "last",
    "max",
    "max_by",
    "max_by_key",
    "min",
    "min_by",
    "min_by_key",
    "partition",
    "product",
    "reduce",
    "sum",
    "unzip",
];

/// How a loop collects results into its target, and what it does to each
/// first (`v.push(f(..)?)`, `acc += -f(..)`: see `wrapping.rs`).
#[derive(Clone, PartialEq)]
enum CollectorKind {
    Push(Wrapping),
    Op(BinOp, Wrapping),
}

impl CollectorKind {
    fn wrapping(&self) -> &Wrapping {
        match self {
            CollectorKind::Push(wrap) | CollectorKind::Op(_, wrap) => wrap,
        }
    }

    /// Adds one result to `target`.
    fn apply(&self, target: &Ident) -> TokenStream {
        let result: Expr = parse_quote!(__satin_r);
        match self {
            CollectorKind::Push(wrap) => {
                let value = wrap.apply(result);
                quote!(#target.push(#value);)
            }
            CollectorKind::Op(op, wrap) => {
                let value = wrap.apply(result);
                quote!(#target #op #value;)
            }
        }
    }
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
            let (args, wrap) = Wrapping::peel(names, &m.args[0])?;
            Some(Collector { target, kind: CollectorKind::Push(wrap), args })
        }
        Expr::Binary(b) if is_compound_assign(&b.op) => {
            let target = plain_ident(&b.left)?;
            let (args, wrap) = Wrapping::peel(names, &b.right)?;
            Some(Collector { target, kind: CollectorKind::Op(b.op, wrap), args })
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
    /// The loop's label where a failed inline call ends it.
    stop: Option<&'a syn::Lifetime>,
}

impl VisitMut for ReplaceCollectors<'_> {
    fn visit_stmt_mut(&mut self, s: &mut Stmt) {
        if let Some(c) = collector_of(self.names, s) {
            if let Some((list, _, _)) = self.lists.iter().find(|(_, t, k)| *t == c.target && *k == c.kind) {
                let job = self.names.job_value(&c.args);
                let ctx = ctx_ident();
                let apply = c.kind.apply(&c.target);
                *s = match self.stop.filter(|_| c.kind.wrapping().tries_first()) {
                    Some(label) => parse_quote!(
                        if let Some(__satin_r) = #list.spawn(#ctx, #job) { #apply }
                        else if #list.kept_failed() { break #label; }
                    ),
                    None => parse_quote!(if let Some(__satin_r) = #list.spawn(#ctx, #job) { #apply }),
                };
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
