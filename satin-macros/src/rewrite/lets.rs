//! `let` spawns: runs of `let x = f(..);` and conditional lets (`if`/
//! `match` with a call in a branch), and their syncs.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{parse_quote, Block, Expr, Ident, Local, LocalInit, Pat, Stmt, Type};

use super::branches::{each_branch, LaterForm, SlotForm};
use super::{bound, ctx_ident, mentions_any, Args, Parallel, Wrapping};

/// A `let x = f(..);` whose result is not read yet.
pub(super) struct PendingLet {
    pub(super) pat: Pat,
    pub(super) ty: Option<Type>,
    pub(super) slot: Ident,
    /// What the statement does to the result (`let x = -f(..)?;`): the
    /// sync applies it.
    pub(super) wrap: Wrapping,
    /// Which function it calls (see `Names::callees`).
    pub(super) callee: usize,
    /// A lazy version's conditional call: `slot` is a `Later`, the call's
    /// job or the value of a branch without one.
    pub(super) later: bool,
}

impl PendingLet {
    /// The variables its pattern binds.
    pub(super) fn idents(&self) -> Vec<Ident> {
        bound(&self.pat).unwrap_or_default().into_iter().map(|p| p.ident).collect()
    }
}

/// The parts of a `let x[: T] = f(args);` (or `let (a, b) = f(args);`),
/// or of a `let` whose `if` or `match` ends in such a call in some branch.
pub(super) struct LetSpawn {
    pat: Pat,
    ty: Option<Type>,
    /// The variables the pattern binds (at least one).
    idents: Vec<Ident>,
    init: LetInit,
    /// What it does to the call's result (`let x = -f(..)?;`).
    wrap: Wrapping,
}

impl LetSpawn {
    /// `let x = f(..)?;` and the like: read where it stands.
    fn fallible(&self) -> bool {
        self.wrap.fallible()
    }
}

pub(super) enum LetInit {
    Call(Args),
    /// `if c { f(a) } else { v }` (or a `match`): evaluated where it stands,
    /// the branch taken either spawns its call or holds its value.
    Cond(Expr),
}

impl LetSpawn {
    /// What the initialiser reads.
    pub(super) fn reads(&self) -> TokenStream {
        match &self.init {
            LetInit::Call(args) => quote!(#args),
            LetInit::Cond(e) => quote!(#e),
        }
    }
}

impl Parallel<'_> {
    pub(super) fn as_let_spawn(&self, stmt: &Stmt) -> Option<LetSpawn> {
        let Stmt::Local(Local { pat, init: Some(LocalInit { expr, diverge: None, .. }), .. }) = stmt else {
            return None;
        };
        // `let x = -f(..)?;` spawns too: what it does to the result is
        // applied at the sync (`wrapping.rs`).
        let (init, wrap) = match Wrapping::peel(self.names, expr) {
            Some((args, wrap)) => (LetInit::Call(args), wrap),
            // A function whose calls may hold a `&mut` borrow runs
            // conditional calls where they stand; so does a lazy version
            // unless every branch that calls, calls one function bare
            // (its `Later` holds that function's job).
            None if !self.names.own().exclusive.contains(&true) => {
                let wrap = self.branches_call(expr)?;
                if self.lazy.is_some() && (!wrap.is_bare() || self.branches_callee(expr).is_none()) {
                    return None;
                }
                (LetInit::Cond((**expr).clone()), wrap)
            }
            None => return None,
        };
        let (inner, ty) = match pat {
            Pat::Type(pt) => (&*pt.pat, Some((*pt.ty).clone())),
            p => (p, None),
        };
        // A plain name or a destructuring (`(n, best)`, `Pair { a, b }`):
        // its variables are read where the result is.
        let idents: Vec<Ident> = bound(inner)?.into_iter().map(|p| p.ident).collect();
        if idents.is_empty() {
            return None;
        }
        Some(LetSpawn { pat: inner.clone(), ty, idents, init, wrap })
    }

    /// If `e` is an `if` with an `else`, or a `match`, some branch of which
    /// ends in a recursive call — bare, or with a `?` (`paths(..)?`), the
    /// same in every such branch — what the branches do to the call's
    /// result.
    fn branches_call(&self, e: &Expr) -> Option<Wrapping> {
        let mut wraps = Vec::new();
        self.branch_wraps(e, &mut wraps);
        let first = wraps.first()?.clone();
        (wraps.iter().all(|w| *w == first) && (first.is_bare() || first.is_try())).then_some(first)
    }

    /// The one function every branch of `e` that ends in a call calls.
    fn branches_callee(&self, e: &Expr) -> Option<usize> {
        let mut callees = Vec::new();
        let mut probe = e.clone();
        each_branch(self.names, &mut probe, &mut LaterForm { callees: &mut callees });
        let first = *callees.first()?;
        callees.iter().all(|&c| c == first).then_some(first)
    }

    /// What each branch of `e` that ends in a call does to its result.
    fn branch_wraps(&self, e: &Expr, out: &mut Vec<Wrapping>) {
        match e {
            Expr::If(i) => {
                let Some((_, other)) = &i.else_branch else { return };
                self.block_wraps(&i.then_branch, out);
                self.tail_wraps(other, out);
            }
            Expr::Match(m) => m.arms.iter().for_each(|a| self.tail_wraps(&a.body, out)),
            Expr::Paren(p) => self.branch_wraps(&p.expr, out),
            _ => {}
        }
    }

    fn tail_wraps(&self, e: &Expr, out: &mut Vec<Wrapping>) {
        match e {
            Expr::Block(b) if b.label.is_none() => self.block_wraps(&b.block, out),
            e => match Wrapping::peel(self.names, e) {
                Some((_, wrap)) => out.push(wrap),
                None => self.branch_wraps(e, out),
            },
        }
    }

    fn block_wraps(&self, b: &Block, out: &mut Vec<Wrapping>) {
        if let Some(Stmt::Expr(tail, None)) = b.stmts.last() {
            self.tail_wraps(tail, out);
        }
    }

    /// Rewrites the run of `let` spawns starting at `start`; returns where it ends.
    pub(super) fn rewrite_let_run(
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
            if run.iter().any(|r| mentions_any(&l.reads(), &r.idents) || conflict(r))
                || pending.iter().any(|p| mentions_any(&l.reads(), &p.idents()))
            {
                break;
            }
            run.push(l);
            end += 1;
        }
        let first_read = |idents: &[Ident]| stmts[end..].iter().position(|s| mentions_any(s, idents));
        // The result read first runs inline; ties go to the newest call.
        let mut inline: Option<(usize, usize)> = None;
        for (k, l) in run.iter().enumerate() {
            // A conditional call is evaluated where it stands: it can run
            // inline only as the run's last (nothing after it to reorder),
            // and not with a `?` (read where it stands anyway).
            if matches!(l.init, LetInit::Cond(_)) && (k + 1 < run.len() || l.fallible()) {
                continue;
            }
            if let Some(at) = first_read(&l.idents) {
                if inline.is_none_or(|(best, _)| at <= best) {
                    inline = Some((at, k));
                }
            }
        }
        // A lone call only runs inline if it is read at once.
        if run.len() == 1 && inline.is_some_and(|(at, _)| at > 0) {
            inline = None;
        }
        // A `?` is read where it stands, before anything after the run: the
        // run's first one runs inline, and the others are joined at once,
        // in order, so the error returned is the one the sequential
        // function would return (and an early one aborts the calls after).
        if let Some(k) = run.iter().position(|l| l.fallible() && matches!(l.init, LetInit::Call(_))) {
            inline = Some((0, k));
        }
        // A lone conditional call read at once stays as written.
        if let [LetSpawn { init: LetInit::Cond(_), idents, .. }] = run.as_slice() {
            if first_read(idents) == Some(0) {
                out.push(stmts[start].clone());
                return end;
            }
        }
        // Calls that hold a `&mut` borrow are read right after the run, in
        // a block of their own: the slots end there, and with them the
        // borrows, so the body may use the whole again (a merge after
        // calls on the two halves, a move undone after the call on the
        // board it changed). So are a lazy version's deferred calls: a
        // job value holds the borrow as a slot does.
        let eager = run.iter().any(|l| matches!(&l.init, LetInit::Call(a) if !self.names.held(a).is_empty()));
        // A lone such call is read at once: spawning it would only be a
        // push and a pop (or a theft of a call that then takes turns).
        if eager && run.len() == 1 && matches!(run[0].init, LetInit::Call(_)) {
            inline = Some((0, 0));
        }
        // With no `?`ed call to run inline, the first `?`ed conditional
        // runs at its join, in order, while the calls after it are spawned
        // (spawned first, it would run after them on this worker).
        let first_fallible = run.iter().position(LetSpawn::fallible);
        let cond_at_join = match first_fallible {
            Some(k) if matches!(run[k].init, LetInit::Cond(_)) && run.len() > 1 => Some(k),
            _ => None,
        };
        let mark = out.len();
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
                    pending.push(PendingLet {
                        pat: l.pat.clone(),
                        ty: l.ty.clone(),
                        slot,
                        wrap: l.wrap.clone(),
                        callee: args.callee,
                        later: false,
                    });
                }
                // The last conditional, read first: as written, its call
                // run inline like any call that does not spawn (`match
                // &n.right { Some(r) => sum(r), None => 0 }` after the
                // left one spawned: a push and a pop fewer per node).
                LetInit::Cond(_) if inline.is_some_and(|(_, ik)| ik == k) => out.push(stmts[start + k].clone()),
                // A lazy version's: its call deferred to the sync, which
                // comes after the calls of the lets after it (syncs go
                // newest first), as the parallel version runs them.
                LetInit::Cond(e) if self.lazy.is_some() => {
                    let mut e = e.clone();
                    let mut callees = Vec::new();
                    each_branch(self.names, &mut e, &mut LaterForm { callees: &mut callees });
                    let slot = self.fresh("later");
                    out.push(parse_quote!(let #slot = #e;));
                    pending.push(PendingLet {
                        pat: l.pat.clone(),
                        ty: l.ty.clone(),
                        slot,
                        wrap: l.wrap.clone(),
                        callee: callees.first().copied().unwrap_or(0),
                        later: true,
                    });
                }
                LetInit::Cond(e) => {
                    self.spawn_sites += 1;
                    let mut e = e.clone();
                    each_branch(self.names, &mut e, &mut SlotForm { lift: l.fallible() });
                    let (krate, ctx, slot) = (&self.names.krate, ctx_ident(), self.fresh("slot"));
                    out.push(parse_quote!(let #slot = #krate::__private::pin!(#e);));
                    if cond_at_join == Some(k) {
                        out.push(parse_quote!(#slot.as_ref().run_at_join();));
                    } else {
                        out.push(parse_quote!(#slot.as_ref().spawn(#ctx);));
                    }
                    // Read by a join.
                    pending.push(PendingLet {
                        pat: l.pat.clone(),
                        ty: l.ty.clone(),
                        slot,
                        wrap: l.wrap.clone(),
                        callee: 0,
                        later: false,
                    });
                }
            }
        }
        if let Some((var, k)) = inline_job {
            let callee = match &run[k].init {
                LetInit::Call(args) => args.callee,
                LetInit::Cond(_) => unreachable!("a conditional call is not run inline"),
            };
            let (pat, value) = (&run[k].pat, run[k].wrap.apply(self.run_inline(callee, &parse_quote!(#var))));
            out.push(match &run[k].ty {
                Some(ty) => parse_quote!(let #pat: #ty = #value;),
                None => parse_quote!(let #pat = #value;),
            });
        }
        // The run's other `?`s, in order (all its results if `eager`).
        for l in run.iter().filter(|l| l.fallible() || eager) {
            if let Some(at) = pending.iter().rposition(|p| p.pat == l.pat) {
                let p = pending.remove(at);
                out.push(self.sync_stmt(&p));
            }
        }
        if eager {
            let inner: Vec<Stmt> = out.drain(mark..).collect();
            // Every variable the run binds, as bound (`mut` kept).
            let bindings: Vec<syn::PatIdent> =
                run.iter().flat_map(|l| bound(&l.pat).expect("checked by as_let_spawn")).collect();
            let idents = bindings.iter().map(|b| &b.ident);
            out.push(parse_quote!(let (#(#bindings,)*) = { #(#inner)* (#(#idents,)*) };));
        }
        end
    }
}
