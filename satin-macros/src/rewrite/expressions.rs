//! Calls in expressions and statements: two or more calls of one
//! expression (`f(a) + f(b)`, `f(a) || f(b)`), and calls as statements in a
//! row (`f(left); f(right);`).

use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{parse_quote, BinOp, Expr, Ident, Local, LocalInit, Stmt};

use super::{ctx_ident, Args, Parallel, PendingLet, Substitute};

/// How the two calls of a race combine (see `Parallel::race`).
#[derive(Clone, Copy)]
enum RaceKind {
    /// `f(a) || f(b)`: `true` decides.
    Or,
    /// `f(a) && f(b)`: `false` decides.
    And,
    /// `f(a).or_else(|| f(b))`: `Some` decides.
    OrElse,
}

fn is_placeholder(e: &Expr, name: &Ident) -> bool {
    match e {
        Expr::Paren(p) => is_placeholder(&p.expr, name),
        Expr::Group(g) => is_placeholder(&g.expr, name),
        Expr::Path(p) => p.path.is_ident(name),
        _ => false,
    }
}

/// The node of `expr` that combines exactly the placeholders `a` and `b`
/// as a race, with its kind.
fn race_node<'e>(expr: &'e mut Expr, a: &Ident, b: &Ident) -> Option<(&'e mut Expr, RaceKind)> {
    let kind = match &*expr {
        Expr::Binary(x) if is_placeholder(&x.left, a) && is_placeholder(&x.right, b) => match x.op {
            BinOp::Or(_) => Some(RaceKind::Or),
            BinOp::And(_) => Some(RaceKind::And),
            _ => None,
        },
        Expr::MethodCall(m)
            if m.method == "or_else"
                && is_placeholder(&m.receiver, a)
                && matches!(m.args.first(), Some(Expr::Closure(c)) if is_placeholder(&c.body, b)) =>
        {
            Some(RaceKind::OrElse)
        }
        _ => None,
    };
    if let Some(kind) = kind {
        return Some((expr, kind));
    }
    match expr {
        Expr::Paren(p) => race_node(&mut p.expr, a, b),
        Expr::Group(g) => race_node(&mut g.expr, a, b),
        Expr::Unary(u) => race_node(&mut u.expr, a, b),
        Expr::Binary(x) => match race_node(&mut x.left, a, b) {
            Some(found) => Some(found),
            None => race_node(&mut x.right, a, b),
        },
        Expr::Return(r) => r.expr.as_deref_mut().and_then(|e| race_node(e, a, b)),
        Expr::Block(blk) => match blk.block.stmts.last_mut() {
            Some(Stmt::Expr(e, None)) => race_node(e, a, b),
            _ => None,
        },
        _ => None,
    }
}

impl Parallel<'_> {
    /// The arguments of a statement that is a recursive call and nothing
    /// else (`f(a);`, or `f(a)` ending the block).
    fn as_call_stmt(&self, stmt: &Stmt) -> Option<Args> {
        self.as_call_stmt_of(stmt).map(|(args, _)| args)
    }

    /// As `as_call_stmt`, also taking `f(a)?;`: the arguments, and whether
    /// the call's value is `?`-ed.
    fn as_call_stmt_of(&self, stmt: &Stmt) -> Option<(Args, bool)> {
        match stmt {
            Stmt::Expr(Expr::Try(t), _) => self.names.recursive_call(&t.expr).map(|a| (a, true)),
            Stmt::Expr(e, _) => self.names.recursive_call(e).map(|a| (a, false)),
            _ => None,
        }
    }

    /// How many call statements in a row start `stmts`, none holding what
    /// another one uses; a call ending the block ends the run.
    pub(super) fn call_run_len(&self, stmts: &[Stmt]) -> usize {
        let mut run: Vec<Args> = Vec::new();
        for stmt in stmts {
            let Some(args) = self.as_call_stmt(stmt) else { break };
            if run.iter().any(|a| self.names.conflict(a, &args)) {
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
    pub(super) fn rewrite_call_run(
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
        // The spawns and joins go in a block of their own, which ends the
        // slots and the borrows they hold: the body may use the whole
        // again after calls on its parts.
        let outer = std::mem::take(out);
        let mut slots = Vec::new();
        for stmt in &stmts[start..end - 1] {
            let (args, fallible) = self.as_call_stmt_of(stmt).expect("a call run");
            slots.push((self.spawn_stmts(&args, out), fallible));
        }
        let (last, last_fallible) = self.as_call_stmt_of(&stmts[end - 1]).expect("a call run");
        let value = self.fresh("value");
        let run = self.run_inline(last.callee, &self.names.job_value(&last));
        out.push(parse_quote!(let #value = #run;));
        if slots.iter().any(|(_, fallible)| *fallible) || last_fallible {
            // `f(a)?; f(b)?;`: the `?`s in the order written, so that the
            // error returned is the first one, and the calls after it are
            // aborted unread.
            for (slot, fallible) in &slots {
                let question = fallible.then(|| quote::quote!(?));
                out.push(parse_quote!(#slot.as_ref().join(#ctx) #question;));
            }
        } else {
            for (slot, _) in slots.iter().rev() {
                out.push(parse_quote!(#slot.as_ref().join(#ctx);));
            }
        }
        let inner = std::mem::replace(out, outer);
        out.push(parse_quote!(let #value = { #(#inner)* #value };));
        let question = last_fallible.then(|| quote::quote!(?));
        out.push(match &stmts[end - 1] {
            Stmt::Expr(_, None) => Stmt::Expr(parse_quote!(#value #question), None),
            _ => parse_quote!(let _ = #value #question;),
        });
        end
    }

    /// Spawns the unconditional recursive calls of one statement's expression
    /// when there are at least two; the statement then joins them in place.
    pub(super) fn hoist_stmt(&mut self, stmt: &mut Stmt, out: &mut Vec<Stmt>) {
        let expr = match stmt {
            Stmt::Expr(e, _) => e,
            Stmt::Local(Local { init: Some(LocalInit { expr, .. }), .. }) => &mut **expr,
            _ => return,
        };
        self.hoist_expr(expr, out);
    }

    pub(super) fn hoist_expr(&mut self, expr: &mut Expr, out: &mut Vec<Stmt>) {
        let original = expr.clone();
        self.speculative.clear();
        let mut calls: Vec<(Ident, Args)> = Vec::new();
        self.collect_unconditional(expr, &mut calls);
        let shared = calls.iter().enumerate().find_map(|(k, (_, a))| {
            calls[k + 1..].iter().find_map(|(_, b)| self.names.conflict(a, b).then(|| self.names.shared(a, b)))
        });
        if let (true, Some(var)) = (calls.len() >= 2, &shared) {
            let name = &self.names.own().func;
            self.notes.push((
                original.span(),
                format!(
                    "these calls of `{name}` run one after another: each may change `{var}` through a `&mut` parameter, which the other uses; give each call its own (a clone, or a disjoint part: `split_at_mut`), or pass it as `&` if the calls only read it"
                ),
            ));
        }
        if calls.len() < 2 || shared.is_some() {
            *expr = original;
            return;
        }
        if self.race(expr, &calls, out) {
            self.speculative.clear();
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
        let run = self.run_inline(args.callee, &self.names.job_value(args));
        out.push(parse_quote!(let #value = #run;));
        replacements.push((placeholder.clone(), parse_quote!(#value)));
        self.speculative.clear();
        Substitute(&replacements).visit_expr_mut(expr);
    }

    /// Two calls combined by `||`, `&&` or `or_else`, the right one
    /// speculative: a race (see `satin::sched::race`), in which the first
    /// call to decide ends the other, whichever of the two it is. Emits the
    /// spawn of the right call into `out` and replaces the combination in
    /// `expr` by its outcome; false (nothing emitted) for any other shape.
    fn race(&mut self, expr: &mut Expr, calls: &[(Ident, Args)], out: &mut Vec<Stmt>) -> bool {
        let [(a, first), (b, second)] = calls else { return false };
        if self.speculative.as_slice() != [b.clone()] {
            return false;
        }
        let Some((node, kind)) = race_node(expr, a, b) else { return false };
        self.spawn_sites += 1;
        let (krate, ctx) = (&self.names.krate, ctx_ident());
        let (race, first_job, job, slot, value) =
            (self.fresh("race"), self.fresh("job"), self.fresh("job"), self.fresh("slot"), self.fresh("value"));
        let decides = match kind {
            RaceKind::Or => quote::quote!(#krate::__private::decides_true),
            RaceKind::And => quote::quote!(#krate::__private::decides_false),
            RaceKind::OrElse => quote::quote!(#krate::__private::decides_some),
        };
        let (right, left) = (self.names.job_value(second), self.names.job_value(first));
        // Arguments in reading order: the left call's may borrow what the
        // right call's move (`f(x.clone()).or_else(|| f(x))`).
        out.push(parse_quote!(let #first_job = #left;));
        out.push(parse_quote!(let #race = #krate::__private::Race::new(#ctx);));
        out.push(parse_quote!(let #job = #race.entrant(#right, #decides);));
        out.push(parse_quote!(let #slot = #krate::__private::pin!(#krate::__private::Slot::new(#job));));
        out.push(parse_quote!(#slot.as_ref().spawn(#ctx);));
        out.push(parse_quote!(let #value = #race.run_first(#ctx, #first_job);));
        // The first call's value if it decided; else (it did not, or the
        // second decided and stopped it) the second's.
        *node = match kind {
            RaceKind::Or => parse_quote!(match #value { Some(true) => true, _ => #slot.as_ref().join(#ctx) }),
            RaceKind::And => parse_quote!(match #value { Some(false) => false, _ => #slot.as_ref().join(#ctx) }),
            RaceKind::OrElse => parse_quote!(match #value {
                Some(Some(found)) => Some(found),
                _ => #slot.as_ref().join(#ctx),
            }),
        };
        true
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
            Expr::MethodCall(m) if m.method == "or_else" && m.args.len() == 1 => {
                go(&mut m.receiver);
                // `f(a).or_else(|| f(b))`: as the right side of `||`.
                if let Expr::Closure(c) = &mut m.args[0] {
                    if let (true, Some(args)) = (c.inputs.is_empty(), self.names.recursive_call(&c.body)) {
                        let args = args.clone();
                        let placeholder = self.fresh("call");
                        *c.body = parse_quote!(#placeholder);
                        self.speculative.push(placeholder.clone());
                        calls.push((placeholder, args));
                    }
                }
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
}
