//! Calls in expressions and statements: two or more calls of one
//! expression (`f(a) + f(b)`, `f(a) || f(b)`), and calls as statements in a
//! row (`f(left); f(right);`).

use syn::visit_mut::VisitMut;
use syn::{parse_quote, BinOp, Expr, Ident, Local, LocalInit, Stmt};

use super::{ctx_ident, Args, Parallel, PendingLet, Substitute};

impl Parallel<'_> {
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
    pub(super) fn call_run_len(&self, stmts: &[Stmt]) -> usize {
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
}
