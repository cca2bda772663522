//! Rewrites the body of the parallel version: recursive calls become spawns,
//! the first read of a spawned result becomes a sync.
//!
//! Recognised forms (everything else stays a plain, inline call):
//! - `let x = f(..);` spawns; `x` is synced just before the first statement
//!   that mentions it. Of a run of such lets, the one read first runs inline
//!   (work-first: the rest stay stealable). A spawn never read is aborted when
//!   its block ends or the function returns.
//! - two or more calls in unconditional positions of one expression
//!   (`f(a) + f(b)`, `(f(a), f(b))`, `max(f(a), f(b))`) are spawned before it,
//!   the last one inline, and joined where they stood.
//! - inside `for`/`while`/`loop`: `v.push(f(..));` and `acc OP= f(..);` spawn
//!   every iteration; results are applied in iteration order after the loop.
//! - `iter.map(|p| f(..)).sum()` (also `product`, `collect`, `min`, `max`)
//!   spawns every element and reduces the results in order.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::punctuated::Punctuated;
use syn::visit_mut::{self, VisitMut};
use syn::{parse_quote, BinOp, Block, Expr, Ident, Local, LocalInit, Pat, Path, Stmt, Token, Type};

use crate::mentions::mentions;

type Args = Punctuated<Expr, Token![,]>;

/// Names the rewriter needs from the expansion.
pub(crate) struct Names {
    pub(crate) func: Ident,
    pub(crate) arity: usize,
    pub(crate) job: Ident,
    pub(crate) krate: Path,
    /// Per parameter: a `&mut` one, whose argument the call holds
    /// exclusively while it runs.
    pub(crate) exclusive: Vec<bool>,
}

impl Names {
    /// The arguments of `expr` if it is a recursive call.
    fn recursive_call<'e>(&self, expr: &'e Expr) -> Option<&'e Args> {
        match expr {
            Expr::Call(c) if c.args.len() == self.arity => match &*c.func {
                Expr::Path(p) if p.qself.is_none() && p.path.is_ident(&self.func) => Some(&c.args),
                _ => None,
            },
            Expr::Paren(p) => self.recursive_call(&p.expr),
            _ => None,
        }
    }

    /// Whether two calls cannot run at once: one holds a variable through
    /// a `&mut` parameter that the other's arguments use. (Sequentially
    /// each borrow ends with its call; spawned, it lasts until the join.)
    fn conflict(&self, a: &Args, b: &Args) -> bool {
        let (held_a, held_b) = (self.held(a), self.held(b));
        let (uses_a, uses_b) = (variables(a), variables(b));
        held_a.iter().any(|v| uses_b.contains(v)) || held_b.iter().any(|v| uses_a.contains(v))
    }

    /// Variables in the arguments passed to `&mut` parameters.
    fn held(&self, args: &Args) -> Vec<String> {
        args.iter().zip(&self.exclusive).filter(|(_, &x)| x).flat_map(|(a, _)| variables(a)).collect()
    }

    fn job_value(&self, args: &Args) -> Expr {
        let job = &self.job;
        parse_quote!(#job(#args))
    }
}

pub(crate) fn ctx_ident() -> Ident {
    Ident::new("__satin_ctx", Span::call_site())
}

/// Rewrites `block` (the parallel version's body) in place.
/// Returns how many places it made spawn calls.
pub(crate) fn rewrite_parallel(names: &Names, block: &mut Block) -> usize {
    let mut p = Parallel { names, next_id: 0, speculative: Vec::new(), lazy: None, spawn_sites: 0 };
    p.visit_block_mut(block);
    p.spawn_sites
}

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

/// Rewrites `block` as a lazy version's body: the sequential function,
/// each call going to `target(ctx, ..)`, except that a `let x = f(..);`
/// the parallel version would spawn is deferred — run at its sync, not at
/// all if its result is never read (as a spawn that nobody stole would
/// be). Calls inside closures stay calls of the public function: a closure
/// may leave the frame, the context may not.
pub(crate) fn rewrite_lazy(names: &Names, target: &Ident, block: &mut Block) {
    Parallel { names, next_id: 0, speculative: Vec::new(), lazy: Some(target.clone()), spawn_sites: 0 }
        .visit_block_mut(block);
}

/// Renames recursive calls in the sequential version's body to `seq`.
pub(crate) fn rewrite_sequential(names: &Names, seq: &Ident, block: &mut Block) {
    struct Seq<'a> {
        names: &'a Names,
        seq: &'a Ident,
    }
    impl VisitMut for Seq<'_> {
        fn visit_expr_mut(&mut self, e: &mut Expr) {
            visit_mut::visit_expr_mut(self, e);
            if let Some(args) = self.names.recursive_call(e) {
                let (seq, args) = (self.seq, args.clone());
                *e = parse_quote!(#seq(#args));
            }
        }
        fn visit_item_mut(&mut self, _: &mut syn::Item) {}
    }
    Seq { names, seq }.visit_block_mut(block);
}

struct Parallel<'a> {
    names: &'a Names,
    next_id: usize,
    /// Placeholders of calls on the right of `||`/`&&` (see `hoist_expr`).
    speculative: Vec<Ident>,
    /// Rewriting a lazy version: calls go to this function.
    lazy: Option<Ident>,
    /// Places that spawn (see `rewrite_parallel`).
    spawn_sites: usize,
}

/// A `let x = f(..);` whose result is not read yet.
struct PendingLet {
    pat: Pat,
    ty: Option<Type>,
    slot: Ident,
}

/// The parts of a `let x[: T] = f(args);`, or of a `let` whose `if` or
/// `match` ends in such a call in some branch.
struct LetSpawn {
    pat: Pat,
    ty: Option<Type>,
    ident: Ident,
    init: LetInit,
}

enum LetInit {
    Call(Args),
    /// `if c { f(a) } else { v }` (or a `match`): evaluated where it stands,
    /// the branch taken either spawns its call or holds its value.
    Cond(Expr),
}

impl LetSpawn {
    /// What the initialiser reads.
    fn reads(&self) -> TokenStream {
        match &self.init {
            LetInit::Call(args) => quote!(#args),
            LetInit::Cond(e) => quote!(#e),
        }
    }
}

impl Parallel<'_> {
    fn fresh(&mut self, what: &str) -> Ident {
        self.next_id += 1;
        format_ident!("__satin_{}{}", what, self.next_id)
    }

    fn as_let_spawn(&self, stmt: &Stmt) -> Option<LetSpawn> {
        let Stmt::Local(Local { pat, init: Some(LocalInit { expr, diverge: None, .. }), .. }) = stmt else {
            return None;
        };
        let init = match self.names.recursive_call(expr) {
            Some(args) => LetInit::Call(args.clone()),
            // A lazy version runs conditional calls where they stand; so
            // does a function whose calls may hold a `&mut` borrow.
            None if self.lazy.is_none() && !self.names.exclusive.contains(&true) && self.branches_call(expr) => {
                LetInit::Cond((**expr).clone())
            }
            None => return None,
        };
        let (inner, ty) = match pat {
            Pat::Type(pt) => (&*pt.pat, Some((*pt.ty).clone())),
            p => (p, None),
        };
        match inner {
            Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                Some(LetSpawn { pat: inner.clone(), ty, ident: pi.ident.clone(), init })
            }
            _ => None,
        }
    }

    /// Whether `e` is an `if` with an `else`, or a `match`, some branch of
    /// which ends in a recursive call.
    fn branches_call(&self, e: &Expr) -> bool {
        match e {
            Expr::If(i) => {
                let Some((_, other)) = &i.else_branch else { return false };
                self.block_calls(&i.then_branch) || self.branch_calls(other)
            }
            Expr::Match(m) => m.arms.iter().any(|a| self.branch_calls(&a.body)),
            Expr::Paren(p) => self.branches_call(&p.expr),
            _ => false,
        }
    }

    fn branch_calls(&self, e: &Expr) -> bool {
        match e {
            Expr::Block(b) if b.label.is_none() => self.block_calls(&b.block),
            e => self.names.recursive_call(e).is_some() || self.branches_call(e),
        }
    }

    fn block_calls(&self, b: &Block) -> bool {
        matches!(b.stmts.last(), Some(Stmt::Expr(tail, None)) if self.branch_calls(tail))
    }

    /// The branches of a conditional let, each made a slot: a call spawns,
    /// any other value is ready.
    fn slot_branches(&self, e: &mut Expr) {
        let krate = &self.names.krate;
        match e {
            Expr::If(i) => {
                self.slot_block(&mut i.then_branch);
                let (_, other) = i.else_branch.as_mut().expect("checked by branches_call");
                self.slot_branch(other);
            }
            Expr::Match(m) => m.arms.iter_mut().for_each(|a| self.slot_branch(&mut a.body)),
            Expr::Paren(p) => self.slot_branches(&mut p.expr),
            other => {
                let value = other.clone();
                *other = parse_quote!(#krate::__private::Slot::ready(#value));
            }
        }
    }

    fn slot_branch(&self, e: &mut Expr) {
        let krate = &self.names.krate;
        if let Some(args) = self.names.recursive_call(e) {
            let job = self.names.job_value(&args.clone());
            *e = parse_quote!(#krate::__private::Slot::new(#job));
            return;
        }
        match e {
            Expr::Block(b) if b.label.is_none() => self.slot_block(&mut b.block),
            Expr::If(i) if i.else_branch.is_some() => self.slot_branches(e),
            Expr::Match(_) | Expr::Paren(_) => self.slot_branches(e),
            other => {
                let value = other.clone();
                *other = parse_quote!(#krate::__private::Slot::ready(#value));
            }
        }
    }

    fn slot_block(&self, b: &mut Block) {
        let krate = &self.names.krate;
        match b.stmts.last_mut() {
            Some(Stmt::Expr(tail, None)) => self.slot_branch(tail),
            // No value (it diverges, or is `()`): the block is the value.
            _ => {
                let block = b.clone();
                *b = parse_quote!({ #krate::__private::Slot::ready(#block) });
            }
        }
    }

    fn sync_stmt(&self, p: &PendingLet) -> Stmt {
        let (pat, slot, ctx) = (&p.pat, &p.slot, ctx_ident());
        if let Some(target) = &self.lazy {
            // The deferred call is its job value: unpack it and run it here.
            let (job, parts) = (&self.names.job, self.parts());
            let value = quote!({ let #job(#(#parts),*) = #slot; #target(#ctx, #(#parts),*) });
            return match &p.ty {
                Some(ty) => parse_quote!(let #pat: #ty = #value;),
                None => parse_quote!(let #pat = #value;),
            };
        }
        match &p.ty {
            Some(ty) => parse_quote!(let #pat: #ty = #slot.as_ref().join(#ctx);),
            None => parse_quote!(let #pat = #slot.as_ref().join(#ctx);),
        }
    }

    /// Names for a job's fields when a lazy version unpacks it.
    fn parts(&self) -> Vec<Ident> {
        (0..self.names.arity).map(|i| format_ident!("__satin_a{}", i)).collect()
    }

    fn spawn_stmts(&mut self, args: &Args, out: &mut Vec<Stmt>) -> Ident {
        if self.lazy.is_some() {
            // Deferred: the job value waits for its sync.
            let slot = self.fresh("slot");
            let job = self.names.job_value(args);
            out.push(parse_quote!(let #slot = #job;));
            return slot;
        }
        self.spawn_sites += 1;
        let krate = &self.names.krate;
        let (job_var, slot) = (self.fresh("job"), self.fresh("slot"));
        let job = self.names.job_value(args);
        let ctx = ctx_ident();
        out.push(parse_quote!(let #job_var = #job;));
        out.push(parse_quote!(let #slot = #krate::__private::pin!(#krate::__private::Slot::new(#job_var));));
        out.push(parse_quote!(#slot.as_ref().spawn(#ctx);));
        slot
    }

    fn run_inline(&self, job: &Expr) -> Expr {
        let (krate, ctx) = (&self.names.krate, ctx_ident());
        if let Some(target) = &self.lazy {
            let (name, parts) = (&self.names.job, self.parts());
            return parse_quote!({ let #name(#(#parts),*) = #job; #target(#ctx, #(#parts),*) });
        }
        parse_quote!(#krate::Job::run(#job, #ctx))
    }

    /// Block-level forms: `let` spawns with their syncs, and expression hoists.
    fn rewrite_stmts(&mut self, stmts: Vec<Stmt>) -> Vec<Stmt> {
        let mut out = Vec::with_capacity(stmts.len());
        let mut pending: Vec<PendingLet> = Vec::new();
        let mut i = 0;
        while i < stmts.len() {
            self.sync_mentioned(&stmts[i], &mut pending, &mut out);
            if self.lazy.is_none() && self.call_run_len(&stmts[i..]) >= 2 {
                i = self.rewrite_call_run(&stmts, i, &mut pending, &mut out);
                continue;
            }
            if self.as_let_spawn(&stmts[i]).is_some() {
                i = self.rewrite_let_run(&stmts, i, &mut pending, &mut out);
                continue;
            }
            let mut stmt = stmts[i].clone();
            if self.lazy.is_none() {
                self.hoist_stmt(&mut stmt, &mut out);
            }
            out.push(stmt);
            i += 1;
        }
        out
    }

    /// The arguments of a statement that is a recursive call and nothing
    /// else (`f(a);`, or `f(a)` ending the block).
    fn as_call_stmt<'s>(&self, stmt: &'s Stmt) -> Option<&'s Args> {
        match stmt {
            Stmt::Expr(e, _) => self.names.recursive_call(e),
            _ => None,
        }
    }

    /// How many call statements in a row start `stmts`, none holding what
    /// another one uses; a call ending the block ends the run.
    fn call_run_len(&self, stmts: &[Stmt]) -> usize {
        let mut run: Vec<&Args> = Vec::new();
        for stmt in stmts {
            let Some(args) = self.as_call_stmt(stmt) else { break };
            if run.iter().any(|a| self.names.conflict(a, args)) {
                break;
            }
            run.push(args);
            if matches!(stmt, Stmt::Expr(_, None)) {
                break;
            }
        }
        run.len()
    }

    /// Calls as statements in a row (`f(left); f(right);`, as in an
    /// in-place sort): all but the last are spawned, the last runs inline,
    /// and all are joined before the next statement, where the sequential
    /// function would have finished them.
    fn rewrite_call_run(
        &mut self,
        stmts: &[Stmt],
        start: usize,
        pending: &mut Vec<PendingLet>,
        out: &mut Vec<Stmt>,
    ) -> usize {
        let end = start + self.call_run_len(&stmts[start..]);
        for stmt in &stmts[start + 1..end] {
            self.sync_mentioned(stmt, pending, out);
        }
        let ctx = ctx_ident();
        let mut slots = Vec::new();
        for stmt in &stmts[start..end - 1] {
            let args = self.as_call_stmt(stmt).expect("a call run").clone();
            slots.push(self.spawn_stmts(&args, out));
        }
        let last = self.as_call_stmt(&stmts[end - 1]).expect("a call run").clone();
        let value = self.fresh("value");
        let run = self.run_inline(&self.names.job_value(&last));
        out.push(parse_quote!(let #value = #run;));
        for slot in slots.iter().rev() {
            out.push(parse_quote!(#slot.as_ref().join(#ctx);));
        }
        out.push(match &stmts[end - 1] {
            Stmt::Expr(_, None) => Stmt::Expr(parse_quote!(#value), None),
            _ => parse_quote!(let _ = #value;),
        });
        end
    }

    /// Syncs (newest first) every pending result that `stmt` mentions.
    fn sync_mentioned(&self, stmt: &Stmt, pending: &mut Vec<PendingLet>, out: &mut Vec<Stmt>) {
        let mut k = pending.len();
        while k > 0 {
            k -= 1;
            let ident = pat_ident(&pending[k].pat);
            if mentions(stmt, ident) {
                let p = pending.remove(k);
                out.push(self.sync_stmt(&p));
            }
        }
    }

    /// Rewrites the run of `let` spawns starting at `start`; returns where it ends.
    fn rewrite_let_run(
        &mut self,
        stmts: &[Stmt],
        start: usize,
        pending: &mut Vec<PendingLet>,
        out: &mut Vec<Stmt>,
    ) -> usize {
        let mut run: Vec<LetSpawn> = Vec::new();
        let mut end = start;
        while let Some(l) = stmts.get(end).and_then(|s| self.as_let_spawn(s)) {
            // A later call whose arguments read an earlier result ends the run.
            let conflict = |r: &LetSpawn| match (&l.init, &r.init) {
                (LetInit::Call(a), LetInit::Call(b)) => self.names.conflict(a, b),
                _ => false,
            };
            if run.iter().any(|r| mentions(&l.reads(), &r.ident) || conflict(r))
                || pending.iter().any(|p| mentions(&l.reads(), pat_ident(&p.pat)))
            {
                break;
            }
            run.push(l);
            end += 1;
        }
        let first_read = |ident: &Ident| stmts[end..].iter().position(|s| mentions(s, ident));
        // The result read first runs inline; ties go to the newest call.
        let mut inline: Option<(usize, usize)> = None;
        for (k, l) in run.iter().enumerate() {
            // A conditional call is evaluated where it stands.
            if matches!(l.init, LetInit::Cond(_)) {
                continue;
            }
            if let Some(at) = first_read(&l.ident) {
                if inline.is_none_or(|(best, _)| at <= best) {
                    inline = Some((at, k));
                }
            }
        }
        // A lone call only runs inline if it is read at once.
        if run.len() == 1 && inline.is_some_and(|(at, _)| at > 0) {
            inline = None;
        }
        // A lone conditional call read at once stays as written.
        if let [LetSpawn { init: LetInit::Cond(_), ident, .. }] = run.as_slice() {
            if first_read(ident) == Some(0) {
                out.push(stmts[start].clone());
                return end;
            }
        }
        let mut inline_job = None;
        for (k, l) in run.iter().enumerate() {
            match &l.init {
                LetInit::Call(args) if inline.is_some_and(|(_, ik)| ik == k) => {
                    let var = self.fresh("job");
                    let job = self.names.job_value(args);
                    out.push(parse_quote!(let #var = #job;));
                    inline_job = Some((var, k));
                }
                LetInit::Call(args) => {
                    let slot = self.spawn_stmts(args, out);
                    pending.push(PendingLet { pat: l.pat.clone(), ty: l.ty.clone(), slot });
                }
                LetInit::Cond(e) => {
                    self.spawn_sites += 1;
                    let mut e = e.clone();
                    self.slot_branches(&mut e);
                    let (krate, ctx, slot) = (&self.names.krate, ctx_ident(), self.fresh("slot"));
                    out.push(parse_quote!(let #slot = #krate::__private::pin!(#e);));
                    out.push(parse_quote!(#slot.as_ref().spawn(#ctx);));
                    pending.push(PendingLet { pat: l.pat.clone(), ty: l.ty.clone(), slot });
                }
            }
        }
        if let Some((var, k)) = inline_job {
            let (pat, value) = (&run[k].pat, self.run_inline(&parse_quote!(#var)));
            out.push(match &run[k].ty {
                Some(ty) => parse_quote!(let #pat: #ty = #value;),
                None => parse_quote!(let #pat = #value;),
            });
        }
        end
    }

    /// Spawns the unconditional recursive calls of one statement's expression
    /// when there are at least two; the statement then joins them in place.
    fn hoist_stmt(&mut self, stmt: &mut Stmt, out: &mut Vec<Stmt>) {
        let expr = match stmt {
            Stmt::Expr(e, _) => e,
            Stmt::Local(Local { init: Some(LocalInit { expr, .. }), .. }) => &mut **expr,
            _ => return,
        };
        self.hoist_expr(expr, out);
    }

    fn hoist_expr(&mut self, expr: &mut Expr, out: &mut Vec<Stmt>) {
        let original = expr.clone();
        self.speculative.clear();
        let mut calls: Vec<(Ident, Args)> = Vec::new();
        self.collect_unconditional(expr, &mut calls);
        let conflict =
            calls.iter().enumerate().any(|(k, (_, a))| calls[k + 1..].iter().any(|(_, b)| self.names.conflict(a, b)));
        if calls.len() < 2 || conflict {
            *expr = original;
            return;
        }
        // The last call evaluated whatever happens runs inline, after the
        // others are spawned; a call on the right of `||`/`&&` is joined
        // only if the left side does not decide, else aborted unread.
        let inline = calls.iter().rposition(|(p, _)| !self.speculative.contains(p)).unwrap_or(calls.len() - 1);
        let mut replacements: Vec<(Ident, Expr)> = Vec::new();
        for (k, (placeholder, args)) in calls.iter().enumerate() {
            if k != inline {
                let slot = self.spawn_stmts(args, out);
                let ctx = ctx_ident();
                replacements.push((placeholder.clone(), parse_quote!(#slot.as_ref().join(#ctx))));
            }
        }
        let (placeholder, args) = &calls[inline];
        let value = self.fresh("value");
        let run = self.run_inline(&self.names.job_value(args));
        out.push(parse_quote!(let #value = #run;));
        replacements.push((placeholder.clone(), parse_quote!(#value)));
        self.speculative.clear();
        Substitute(&replacements).visit_expr_mut(expr);
    }

    /// Replaces each recursive call evaluated whenever `expr` is, in
    /// evaluation order, by a placeholder; records its arguments.
    fn collect_unconditional(&mut self, expr: &mut Expr, calls: &mut Vec<(Ident, Args)>) {
        if let Some(args) = self.names.recursive_call(expr) {
            let args = args.clone();
            let placeholder = self.fresh("call");
            *expr = parse_quote!(#placeholder);
            calls.push((placeholder, args));
            return;
        }
        let mut go = |e: &mut Expr| self.collect_unconditional(e, calls);
        match expr {
            Expr::Binary(b) if matches!(b.op, BinOp::And(_) | BinOp::Or(_)) => {
                go(&mut b.left);
                // `f(a) || f(b)`: the right call is spawned speculatively
                // (it is pure) when it stands alone, so that no guard on
                // the left protects its arguments.
                if let Some(args) = self.names.recursive_call(&b.right) {
                    let args = args.clone();
                    let placeholder = self.fresh("call");
                    *b.right = parse_quote!(#placeholder);
                    self.speculative.push(placeholder.clone());
                    calls.push((placeholder, args));
                }
            }
            Expr::Binary(b) => {
                go(&mut b.left);
                go(&mut b.right);
            }
            Expr::Unary(u) => go(&mut u.expr),
            Expr::Paren(p) => go(&mut p.expr),
            Expr::Group(g) => go(&mut g.expr),
            Expr::Cast(c) => go(&mut c.expr),
            Expr::Field(f) => go(&mut f.base),
            Expr::Reference(r) => go(&mut r.expr),
            Expr::Try(t) => go(&mut t.expr),
            Expr::Index(i) => {
                go(&mut i.expr);
                go(&mut i.index);
            }
            Expr::MethodCall(m) => {
                go(&mut m.receiver);
                m.args.iter_mut().for_each(go);
            }
            Expr::Call(c) => {
                go(&mut c.func);
                c.args.iter_mut().for_each(go);
            }
            Expr::Tuple(t) => t.elems.iter_mut().for_each(go),
            Expr::Array(a) => a.elems.iter_mut().for_each(go),
            Expr::Struct(s) => s.fields.iter_mut().for_each(|f| go(&mut f.expr)),
            Expr::Assign(a) => go(&mut a.right),
            Expr::Return(r) => r.expr.iter_mut().for_each(|e| go(e)),
            Expr::If(i) => go(&mut i.cond),
            Expr::Match(m) => go(&mut m.expr),
            _ => {}
        }
    }

    /// The loop form: per-iteration spawns of `v.push(f(..))` / `acc OP= f(..)`.
    fn rewrite_loop(&mut self, expr: &mut Expr) {
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
    fn rewrite_iterator(&mut self, expr: &mut Expr) {
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

impl VisitMut for Parallel<'_> {
    fn visit_block_mut(&mut self, block: &mut Block) {
        let stmts = std::mem::take(&mut block.stmts);
        block.stmts = self.rewrite_stmts(stmts);
        visit_mut::visit_block_mut(self, block);
    }

    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        match expr {
            // A lazy version runs loops, iterators and expressions as written.
            _ if self.lazy.is_some() => {
                if matches!(expr, Expr::Closure(_)) {
                    return;
                }
            }
            Expr::ForLoop(_) | Expr::While(_) | Expr::Loop(_) => self.rewrite_loop(expr),
            Expr::MethodCall(_) => self.rewrite_iterator(expr),
            Expr::Match(m) => {
                for arm in &mut m.arms {
                    if matches!(&*arm.body, Expr::Block(_)) {
                        continue;
                    }
                    let mut hoisted = Vec::new();
                    self.hoist_expr(&mut arm.body, &mut hoisted);
                    if !hoisted.is_empty() {
                        let body = &arm.body;
                        *arm.body = parse_quote!({ #(#hoisted)* #body });
                    }
                }
            }
            // Calls inside closures stay calls of the public function, which
            // finds the runtime context itself: the closure may outlive or
            // leave this frame.
            Expr::Closure(_) => return,
            _ => {}
        }
        visit_mut::visit_expr_mut(self, expr);
        if let Some(args) = self.names.recursive_call(expr) {
            let args = args.clone();
            if let Some(target) = &self.lazy {
                let ctx = ctx_ident();
                *expr = parse_quote!(#target(#ctx, #args));
                return;
            }
            let job = self.names.job_value(&args);
            *expr = self.run_inline(&job);
        }
    }

    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
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

/// Replaces placeholder paths with their expressions.
struct Substitute<'a>(&'a [(Ident, Expr)]);

impl VisitMut for Substitute<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if let Expr::Path(p) = e {
            if let Some((_, with)) = self.0.iter().find(|(ph, _)| p.path.is_ident(ph)) {
                *e = with.clone();
                return;
            }
        }
        visit_mut::visit_expr_mut(self, e);
    }
}

/// The variables an expression uses: identifiers, not the names of
/// methods, fields, functions or macros, nor paths' leading segments.
fn variables(code: &impl quote::ToTokens) -> Vec<String> {
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

fn pat_ident(p: &Pat) -> &Ident {
    match p {
        Pat::Ident(pi) => &pi.ident,
        _ => unreachable!("pending lets bind a plain identifier"),
    }
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
