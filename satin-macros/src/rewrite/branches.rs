//! A conditional `let`'s branches (`let d = if c { f(..)? } else { 0 };`),
//! each made what the rewrite needs of it: a call of the group becomes its
//! job, any other branch its value — as `Slot`s to spawn, or as `Later`s a
//! lazy copy runs at the sync.

use syn::{parse_quote, Block, Expr, Stmt};

use super::{Args, Names, Wrapping};

/// What each branch of a conditional `let` becomes.
pub(super) trait BranchForm {
    /// A branch that ends in a call of the group (its `?`, if any, is
    /// applied at the sync).
    fn call(&mut self, names: &Names, args: Args) -> Expr;
    /// A branch with any other value.
    fn value(&mut self, names: &Names, value: Expr) -> Expr;
    /// A block without a value (it diverges, or is `()`): the block is
    /// the value.
    fn no_value(&mut self, names: &Names, block: Block) -> Expr;
}

/// Each branch of `e` (an `if` with an `else`, a `match`, either in
/// parentheses, nested) made its `form`.
pub(super) fn each_branch(names: &Names, e: &mut Expr, form: &mut impl BranchForm) {
    match e {
        Expr::If(i) => {
            block(names, &mut i.then_branch, form);
            let (_, other) = i.else_branch.as_mut().expect("checked by branches_call");
            branch(names, other, form);
        }
        Expr::Match(m) => m.arms.iter_mut().for_each(|a| branch(names, &mut a.body, form)),
        Expr::Paren(p) => each_branch(names, &mut p.expr, form),
        other => *other = form.value(names, other.clone()),
    }
}

fn branch(names: &Names, e: &mut Expr, form: &mut impl BranchForm) {
    if let Some((args, _)) = Wrapping::peel(names, e) {
        *e = form.call(names, args);
        return;
    }
    match e {
        Expr::Block(b) if b.label.is_none() => block(names, &mut b.block, form),
        Expr::If(i) if i.else_branch.is_some() => each_branch(names, e, form),
        Expr::Match(_) | Expr::Paren(_) => each_branch(names, e, form),
        other => *other = form.value(names, other.clone()),
    }
}

fn block(names: &Names, b: &mut Block, form: &mut impl BranchForm) {
    match b.stmts.last_mut() {
        Some(Stmt::Expr(tail, None)) => branch(names, tail, form),
        _ => {
            let value = form.no_value(names, b.clone());
            *b = parse_quote!({ #value });
        }
    }
}

/// Branches to spawn: a call's job in a `Slot`, any other value ready in
/// one — as `Ok(v)` or `Some(v)` (`lift`) beside calls with a `?`.
pub(super) struct SlotForm {
    pub(super) lift: bool,
}

impl BranchForm for SlotForm {
    fn call(&mut self, names: &Names, args: Args) -> Expr {
        let (krate, job) = (&names.krate, names.job_value(&args));
        parse_quote!(#krate::__private::Slot::new(#job))
    }

    fn value(&mut self, names: &Names, value: Expr) -> Expr {
        let krate = &names.krate;
        match self.lift {
            true => parse_quote!(#krate::__private::Slot::ready(#krate::__private::TryLift::lift(#value))),
            false => parse_quote!(#krate::__private::Slot::ready(#value)),
        }
    }

    fn no_value(&mut self, names: &Names, block: Block) -> Expr {
        let krate = &names.krate;
        parse_quote!(#krate::__private::Slot::ready(#block))
    }
}

/// A lazy copy's branches, deferred to the sync: a call's job or the
/// branch's value in a `Later`; the function each call is of pushed to
/// `callees`.
pub(super) struct LaterForm<'c> {
    pub(super) callees: &'c mut Vec<usize>,
}

impl BranchForm for LaterForm<'_> {
    fn call(&mut self, names: &Names, args: Args) -> Expr {
        let (krate, job) = (&names.krate, names.job_value(&args));
        self.callees.push(args.callee);
        parse_quote!(#krate::__private::Later::Call(#job))
    }

    fn value(&mut self, names: &Names, value: Expr) -> Expr {
        let krate = &names.krate;
        parse_quote!(#krate::__private::Later::Ready(#value))
    }

    fn no_value(&mut self, names: &Names, block: Block) -> Expr {
        let krate = &names.krate;
        parse_quote!(#krate::__private::Later::Ready(#block))
    }
}
