//! Rewrites the body of the parallel version: recursive calls become spawns,
//! the first read of a spawned result becomes a sync; and the bodies of the
//! sequential and lazy versions.
//!
//! Recognised forms (everything else stays a plain, inline call):
//! - `let x = f(..);` spawns; `x` is synced just before the first statement
//!   that mentions it. Of a run of such lets, the one read first runs inline
//!   (work-first: the rest stay stealable). A spawn never read is aborted when
//!   its block ends or the function returns. A `let` whose `if`/`match`
//!   ends in a call in some branch spawns that call (`lets.rs`).
//! - two or more calls in unconditional positions of one expression
//!   (`f(a) + f(b)`, `(f(a), f(b))`, `max(f(a), f(b))`) are spawned before it,
//!   the last one inline, and joined where they stood; a call alone on the
//!   right of `||`/`&&` is spawned speculatively; calls as statements in a
//!   row are spawned and joined before the next statement (`expressions.rs`).
//! - inside `for`/`while`/`loop`: `v.push(f(..));` and `acc OP= f(..);` spawn
//!   every iteration; results are applied in iteration order after the loop.
//! - `iter.map(|p| f(..)).sum()` (also `product`, `collect`, `min`, `max`)
//!   spawns every element and reduces the results in order (`loops.rs`).
//!
//! `analysis.rs` reads a body without changing it (how many calls one run
//! can make, where they stand, which variables arguments use).

use proc_macro2::Span;
use quote::{format_ident, quote};
use syn::punctuated::Punctuated;
use syn::visit_mut::{self, VisitMut};
use syn::{parse_quote, Block, Expr, Ident, Pat, Path, Stmt, Token};

use crate::mentions::mentions;

mod analysis;
mod branches;
mod expressions;
mod fission;
mod lets;
mod loops;
mod wrapping;

use analysis::variables;
pub(crate) use analysis::{call_sites, calls_left_in_adapters, calls_on_a_path, only_other_calls, OtherCall};
use lets::PendingLet;
use wrapping::Wrapping;

/// A call's arguments, and which of the [`Names::callees`] it calls.
#[derive(Clone)]
pub(crate) struct Args {
    callee: usize,
    list: Punctuated<Expr, Token![,]>,
    /// The call's `::<..>`, as written (`msort::<T>(v)`).
    turbofish: Option<syn::AngleBracketedGenericArguments>,
}

impl Args {
    /// `::<..>` for a call of a generated function of the callee's (its
    /// sequential or lazy version), which has the callee's generics.
    fn turbofish(&self) -> proc_macro2::TokenStream {
        let Some(t) = &self.turbofish else { return Default::default() };
        let args = &t.args;
        quote!(::<#args>)
    }

    /// `::<..>` for the callee's job type: type arguments only (the job's
    /// lifetime is its own; Rust infers it).
    fn job_turbofish(&self) -> proc_macro2::TokenStream {
        let Some(t) = &self.turbofish else { return Default::default() };
        let types = t.args.iter().filter(|a| matches!(a, syn::GenericArgument::Type(_)));
        quote!(::<#(#types),*>)
    }
}

impl std::ops::Deref for Args {
    type Target = Punctuated<Expr, Token![,]>;
    fn deref(&self) -> &Self::Target {
        &self.list
    }
}

impl quote::ToTokens for Args {
    fn to_tokens(&self, tokens: &mut proc_macro2::TokenStream) {
        self.list.to_tokens(tokens);
    }
}

/// A function whose calls spawn: the one being expanded, or another of
/// its group (the marked functions of one annotated module or `impl`
/// block, which may call each other).
#[derive(Clone)]
pub(crate) struct Callee {
    pub(crate) func: Ident,
    pub(crate) arity: usize,
    pub(crate) job: Ident,
    pub(crate) seq: Ident,
    /// Per parameter: a `&mut` one, whose argument the call holds
    /// exclusively while it runs.
    pub(crate) exclusive: Vec<bool>,
    /// Parameters nothing in the body can change (bound without `mut`,
    /// not `&mut`): a method called on one only reads it.
    pub(crate) frozen: Vec<String>,
}

/// A function's parameters as its signature lists them.
pub(crate) type Inputs = Punctuated<syn::FnArg, Token![,]>;

/// Names the rewriter needs from the expansion.
pub(crate) struct Names {
    pub(crate) krate: Path,
    /// The function being expanded first, then the rest of its group.
    pub(crate) callees: Vec<Callee>,
}

impl Names {
    /// The function being expanded.
    pub(crate) fn own(&self) -> &Callee {
        &self.callees[0]
    }

    /// These names and `callee`, as if it were of the group (to ask
    /// whether its calls would spawn, or to make them spawn).
    pub(crate) fn with(&self, callee: Callee) -> Names {
        let mut callees = self.callees.clone();
        callees.push(callee);
        Names { krate: self.krate.clone(), callees }
    }

    /// [`Names::with`] a function known by its name and arity alone (a
    /// call of a function the attribute cannot see).
    pub(crate) fn with_callee(&self, func: &Ident, arity: usize) -> Names {
        self.with(Callee {
            func: func.clone(),
            arity,
            job: format_ident!("__SatinJob_{}", func),
            seq: format_ident!("__satin_seq_{}", func),
            exclusive: vec![false; arity],
            frozen: Vec::new(),
        })
    }

    /// The arguments of `expr` if it is a call of the function or of
    /// another of its group.
    fn recursive_call(&self, expr: &Expr) -> Option<Args> {
        match expr {
            Expr::Call(c) => match &*c.func {
                Expr::Path(p) if p.qself.is_none() && p.path.leading_colon.is_none() && p.path.segments.len() == 1 => {
                    let segment = &p.path.segments[0];
                    let turbofish = match &segment.arguments {
                        syn::PathArguments::None => None,
                        syn::PathArguments::AngleBracketed(t) => Some(t.clone()),
                        syn::PathArguments::Parenthesized(_) => return None,
                    };
                    let callee =
                        self.callees.iter().position(|f| f.arity == c.args.len() && segment.ident == f.func)?;
                    Some(Args { callee, list: c.args.clone(), turbofish })
                }
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

    /// A variable one call holds through a `&mut` parameter and the
    /// other uses (see [`Names::conflict`]).
    fn shared(&self, a: &Args, b: &Args) -> String {
        let (held_a, held_b) = (self.held(a), self.held(b));
        let (uses_a, uses_b) = (variables(a), variables(b));
        held_a
            .into_iter()
            .find(|v| uses_b.contains(v))
            .or_else(|| held_b.into_iter().find(|v| uses_a.contains(v)))
            .unwrap_or_default()
    }

    /// Variables in the arguments passed to `&mut` parameters.
    fn held(&self, args: &Args) -> Vec<String> {
        let exclusive = &self.callees[args.callee].exclusive;
        args.iter().zip(exclusive).filter(|(_, &x)| x).flat_map(|(a, _)| variables(a)).collect()
    }

    fn job_value(&self, args: &Args) -> Expr {
        let job = &self.callees[args.callee].job;
        let turbofish = args.job_turbofish();
        parse_quote!(#job #turbofish (#args))
    }
}

pub(crate) fn ctx_ident() -> Ident {
    Ident::new("__satin_ctx", Span::call_site())
}

/// Rewrites `block` (the parallel version's body) in place.
/// Returns how many places it made spawn calls, and why calls that could
/// have run in parallel do not (where, and a message).
pub(crate) fn rewrite_parallel(names: &Names, block: &mut Block) -> (usize, Vec<(Span, String)>) {
    let mut p = Parallel { names, next_id: 0, speculative: Vec::new(), lazy: None, spawn_sites: 0, notes: Vec::new() };
    p.visit_block_mut(block);
    (p.spawn_sites, p.notes)
}

/// Rewrites `block` as a lazy version's body: the sequential function,
/// each call going to `target(ctx, ..)`, except that a `let x = f(..);`
/// the parallel version would spawn is deferred — run at its sync, not at
/// all if its result is never read (as a spawn that nobody stole would
/// be). Calls inside closures stay calls of the public function: a closure
/// may leave the frame, the context may not.
pub(crate) fn rewrite_lazy(names: &Names, target: &Ident, block: &mut Block) {
    Parallel {
        names,
        next_id: 0,
        speculative: Vec::new(),
        lazy: Some(target.clone()),
        spawn_sites: 0,
        notes: Vec::new(),
    }
    .visit_block_mut(block);
}

/// Renames calls in the sequential version's body to the callees'
/// sequential versions.
pub(crate) fn rewrite_sequential(names: &Names, block: &mut Block) {
    struct Seq<'a> {
        names: &'a Names,
    }
    impl VisitMut for Seq<'_> {
        fn visit_expr_mut(&mut self, e: &mut Expr) {
            visit_mut::visit_expr_mut(self, e);
            if let Some(args) = self.names.recursive_call(e) {
                let seq = &self.names.callees[args.callee].seq;
                let turbofish = args.turbofish();
                *e = parse_quote!(#seq #turbofish (#args));
            }
        }
        fn visit_item_mut(&mut self, _: &mut syn::Item) {}
    }
    Seq { names }.visit_block_mut(block);
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
    /// Why calls that could run in parallel do not (see `rewrite_parallel`).
    notes: Vec<(Span, String)>,
}

impl Parallel<'_> {
    fn fresh(&mut self, what: &str) -> Ident {
        self.next_id += 1;
        format_ident!("__satin_{}{}", what, self.next_id)
    }

    fn sync_stmt(&self, p: &PendingLet) -> Stmt {
        let (pat, slot, ctx) = (&p.pat, &p.slot, ctx_ident());
        let krate = &self.names.krate;
        let value = match (self.lazy.is_some(), p.later) {
            // A deferred conditional call: its job, or a branch's value.
            (true, true) => {
                let run = self.run_deferred(p.callee, &parse_quote!(__satin_job));
                parse_quote!(match #slot {
                    #krate::__private::Later::Call(__satin_job) => #run,
                    #krate::__private::Later::Ready(__satin_value) => __satin_value,
                })
            }
            // The deferred call is its job value: run it here.
            (true, false) => self.run_deferred(p.callee, &parse_quote!(#slot)),
            (false, _) => parse_quote!(#slot.as_ref().join(#ctx)),
        };
        let value = p.wrap.apply(value);
        match &p.ty {
            Some(ty) => parse_quote!(let #pat: #ty = #value;),
            None => parse_quote!(let #pat = #value;),
        }
    }

    /// Names for a job's fields when a lazy version unpacks it.
    fn parts(&self) -> Vec<Ident> {
        (0..self.names.own().arity).map(|i| format_ident!("__satin_a{}", i)).collect()
    }

    /// In a lazy version, a job value of `callee` run here: a call of
    /// the function itself goes to the next lazy copy (unpacked), one of
    /// another function of the group to that function's lazy version.
    fn run_deferred(&self, callee: usize, job: &Expr) -> Expr {
        let (krate, ctx) = (&self.names.krate, ctx_ident());
        let target = self.lazy.as_ref().expect("a lazy version");
        if callee != 0 {
            return parse_quote!(#krate::Job::run_lazy(#job, #ctx));
        }
        let (name, parts) = (&self.names.own().job, self.parts());
        parse_quote!({ let #name(#(#parts),*) = #job; #target(#ctx, #(#parts),*) })
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

    /// A call of `callee` (its job value `job`) run where it stands.
    fn run_inline(&self, callee: usize, job: &Expr) -> Expr {
        let (krate, ctx) = (&self.names.krate, ctx_ident());
        if self.lazy.is_some() {
            return self.run_deferred(callee, job);
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

    /// Syncs (newest first) every pending result that `stmt` mentions.
    fn sync_mentioned(&self, stmt: &Stmt, pending: &mut Vec<PendingLet>, out: &mut Vec<Stmt>) {
        let mut k = pending.len();
        while k > 0 {
            k -= 1;
            if mentions_any(stmt, &pending[k].idents()) {
                let p = pending.remove(k);
                out.push(self.sync_stmt(&p));
            }
        }
    }
}

impl VisitMut for Parallel<'_> {
    fn visit_block_mut(&mut self, block: &mut Block) {
        let stmts = std::mem::take(&mut block.stmts);
        block.stmts = self.rewrite_stmts(stmts);
        visit_mut::visit_block_mut(self, block);
    }

    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        // A lazy version runs loops, iterators and expressions as written
        // (but see `rewrite_lazy_iterator`).
        if self.lazy.is_some() && (self.rewrite_lazy_iterator(expr) || matches!(expr, Expr::Closure(_))) {
            return;
        }
        match expr {
            // A loop that reads each call's result in its iteration: its
            // iterations a latent loop here too (`fission.rs`).
            Expr::ForLoop(_) if self.lazy.is_some() => {
                self.rewrite_fission(expr);
            }
            _ if self.lazy.is_some() => {}
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
            if let (Some(target), 0) = (&self.lazy, args.callee) {
                let (ctx, turbofish) = (ctx_ident(), args.turbofish());
                *expr = parse_quote!(#target #turbofish (#ctx, #args));
                return;
            }
            let job = self.names.job_value(&args);
            *expr = self.run_inline(args.callee, &job);
        }
    }

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

/// The variables an irrefutable `let` pattern binds by value; `None` for
/// a pattern the rewriter leaves alone (`ref` bindings, `x @ ..`,
/// literals, ranges, alternatives).
fn bound(p: &Pat) -> Option<Vec<syn::PatIdent>> {
    let mut out = Vec::new();
    collect_bound(p, &mut out)?;
    Some(out)
}

fn collect_bound(p: &Pat, out: &mut Vec<syn::PatIdent>) -> Option<()> {
    match p {
        Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => out.push(pi.clone()),
        Pat::Tuple(t) => t.elems.iter().try_for_each(|e| collect_bound(e, out))?,
        Pat::TupleStruct(t) => t.elems.iter().try_for_each(|e| collect_bound(e, out))?,
        Pat::Struct(s) => s.fields.iter().try_for_each(|f| collect_bound(&f.pat, out))?,
        Pat::Paren(p) => collect_bound(&p.pat, out)?,
        Pat::Wild(_) | Pat::Rest(_) => {}
        _ => return None,
    }
    Some(())
}

/// Whether `code` mentions any of `names`.
fn mentions_any(code: &impl quote::ToTokens, names: &[Ident]) -> bool {
    names.iter().any(|n| mentions(code, n))
}
