//! Functions that call each other, each with the attribute alone: the
//! attribute on `max_value` finds `min_value`'s in the source file they
//! share.
//!
//! One attribute sees only its own function; whether `min_value` is
//! annotated too is written elsewhere in the file. The file is at hand
//! (`Span::local_file`): the attribute reads it and takes the annotated
//! functions of the module its own function stands in that call it back
//! (directly or through each other) as its group, as the attribute on a
//! module does (`modules.rs`). Anything it cannot be
//! sure of — no file (a function made by another macro, an IDE's
//! expansion), a file that does not parse, a name found in two modules
//! or written differently than the function the attribute was given, a
//! sibling behind `#[cfg]` — gives no group: calls of the others stay
//! plain calls, as they were, and the attribute's warnings say so.

use quote::ToTokens;
use syn::{Item, ItemFn, Signature};

use crate::methods::is_marker;

/// What the attribute on a function alone finds beside it.
#[derive(Default)]
pub(crate) struct Siblings {
    /// The annotated functions of its module that it calls and that call
    /// it back (directly or through each other), its own included; empty
    /// if none does.
    pub(crate) group: Vec<Signature>,
    /// The other annotated functions of its module that it calls.
    pub(crate) called: Vec<Signature>,
}

/// The annotated functions beside `func` in its module; none if the file
/// does not say for sure.
pub(crate) fn of(func: &ItemFn) -> Siblings {
    if !proc_macro::is_available() {
        return Siblings::default();
    }
    let Some(path) = proc_macro::Span::call_site().local_file() else { return Siblings::default() };
    let Ok(text) = std::fs::read_to_string(path) else { return Siblings::default() };
    in_source(&text, &func.sig)
}

/// [`of`] over the text of a file.
pub(crate) fn in_source(text: &str, sig: &Signature) -> Siblings {
    let Ok(file) = syn::parse_file(text) else { return Siblings::default() };
    let mut scopes = Vec::new();
    scopes_of(&file.items, &mut scopes);
    let written = sig.to_token_stream().to_string();
    let mut holding = scopes.into_iter().filter(|scope| {
        scope.iter().any(|f| f.sig.ident == sig.ident && f.sig.to_token_stream().to_string() == written)
    });
    let (Some(scope), None) = (holding.next(), holding.next()) else { return Siblings::default() };
    if scope.iter().any(|f| f.attrs.iter().any(|a| a.path().is_ident("cfg"))) {
        return Siblings::default();
    }
    let own = called_names(scope.iter().find(|f| f.sig.ident == sig.ident).expect("found above"));
    let group = calling_each_other(&scope, &sig.ident);
    let called = scope
        .iter()
        .filter(|f| own.contains(&f.sig.ident.to_string()) && !group.iter().any(|g| g.sig.ident == f.sig.ident))
        .map(|f| f.sig.clone())
        .collect();
    let group = if group.len() < 2 { Vec::new() } else { group.into_iter().map(|f| f.sig.clone()).collect() };
    Siblings { group, called }
}

/// The functions of `scope` that `name` calls and that call it back,
/// directly or through others of `scope` — `name`'s own included — in
/// the order of the file. Only these are its group: a function that
/// calls an annotated one that never calls it back (a driver looping
/// over time steps of a kernel) calls it as before, an entry point.
fn calling_each_other<'a>(scope: &[&'a ItemFn], name: &syn::Ident) -> Vec<&'a ItemFn> {
    let calls: Vec<Vec<usize>> = scope
        .iter()
        .map(|f| {
            let called = called_names(f);
            (0..scope.len()).filter(|&j| called.contains(&scope[j].sig.ident.to_string())).collect()
        })
        .collect();
    let reach = |from: usize| {
        let mut seen = vec![false; scope.len()];
        let mut todo = vec![from];
        while let Some(i) = todo.pop() {
            for &j in &calls[i] {
                if !seen[j] {
                    seen[j] = true;
                    todo.push(j);
                }
            }
        }
        seen
    };
    let Some(own) = scope.iter().position(|f| f.sig.ident == *name) else { return Vec::new() };
    let from_own = reach(own);
    (0..scope.len()).filter(|&i| i == own || (from_own[i] && reach(i)[own])).map(|i| scope[i]).collect()
}

/// The names `f`'s body calls as bare paths (`g(..)`), closures included.
fn called_names(f: &ItemFn) -> Vec<String> {
    struct Calls(Vec<String>);
    impl syn::visit::Visit<'_> for Calls {
        fn visit_expr_call(&mut self, c: &syn::ExprCall) {
            if let syn::Expr::Path(p) = &*c.func {
                if p.qself.is_none() && p.path.segments.len() == 1 {
                    self.0.push(p.path.segments[0].ident.to_string());
                }
            }
            syn::visit::visit_expr_call(self, c);
        }
        fn visit_item(&mut self, _: &Item) {}
    }
    let mut calls = Calls(Vec::new());
    syn::visit::Visit::visit_block(&mut calls, &f.block);
    calls.0
}

/// The annotated functions of each module of `items` (the file's own
/// items, then every inline module's) — except a module that carries the
/// attribute itself, whose functions are expanded as its group.
fn scopes_of<'a>(items: &'a [Item], scopes: &mut Vec<Vec<&'a ItemFn>>) {
    let here: Vec<&ItemFn> = items
        .iter()
        .filter_map(|item| match item {
            Item::Fn(f) if f.attrs.iter().any(is_marker) => Some(f),
            _ => None,
        })
        .collect();
    scopes.push(here);
    for item in items {
        if let Item::Mod(m) = item {
            if let (Some((_, inner)), false) = (&m.content, m.attrs.iter().any(is_marker)) {
                scopes_of(inner, scopes);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::in_source;

    fn names(text: &str, sig: &str) -> Vec<String> {
        let sig: syn::Signature = syn::parse_str(sig).unwrap();
        in_source(text, &sig).group.iter().map(|s| s.ident.to_string()).collect()
    }

    fn called(text: &str, sig: &str) -> Vec<String> {
        let sig: syn::Signature = syn::parse_str(sig).unwrap();
        in_source(text, &sig).called.iter().map(|s| s.ident.to_string()).collect()
    }

    const GAME: &str = r#"
        use satin::divide_and_conquer;
        #[divide_and_conquer]
        pub fn max_value(pos: u64, depth: u32) -> i64 { min_value(pos, depth) }
        #[satin::divide_and_conquer]
        pub fn min_value(pos: u64, depth: u32) -> i64 { max_value(pos, depth) }
        pub fn helper(x: u64) -> u64 { x }
        #[divide_and_conquer]
        pub fn driver(steps: u32) -> i64 { (0..steps).map(|s| max_value(s as u64, 3)).sum() }
        mod other {
            #[divide_and_conquer]
            fn max_value(pos: u64) -> i64 { 0 }
        }
    "#;

    #[test]
    fn the_annotated_functions_of_the_same_module_are_the_group() {
        assert_eq!(names(GAME, "fn min_value(pos: u64, depth: u32) -> i64"), ["max_value", "min_value"]);
    }

    #[test]
    fn a_function_that_is_not_called_back_is_not_in_the_group() {
        assert_eq!(names(GAME, "fn max_value(pos: u64, depth: u32) -> i64"), ["max_value", "min_value"]);
        assert!(names(GAME, "fn driver(steps: u32) -> i64").is_empty());
        assert_eq!(called(GAME, "fn driver(steps: u32) -> i64"), ["max_value"]);
        assert!(called(GAME, "fn max_value(pos: u64, depth: u32) -> i64").is_empty());
    }

    #[test]
    fn a_cycle_through_a_third_function_is_one_group() {
        let text = "#[dac] fn a(x: u64) -> u64 { b(x) }\n#[dac] fn b(x: u64) -> u64 { c(x) }\n#[dac] fn c(x: u64) -> u64 { a(x) + d(x) }\n#[dac] fn d(x: u64) -> u64 { x }";
        let text = text.replace("dac", "divide_and_conquer");
        assert_eq!(names(&text, "fn b(x: u64) -> u64"), ["a", "b", "c"]);
    }

    #[test]
    fn a_function_alone_in_its_module_has_no_group() {
        assert!(names(GAME, "fn max_value(pos: u64) -> i64").is_empty());
    }

    #[test]
    fn a_function_not_written_in_the_file_has_no_group() {
        assert!(names(GAME, "fn min_value(pos: u64) -> i64").is_empty());
        assert!(names(GAME, "fn elsewhere(pos: u64) -> i64").is_empty());
        assert!(names("fn broken( {", "fn max_value(pos: u64) -> i64").is_empty());
    }

    #[test]
    fn a_sibling_behind_cfg_gives_no_group() {
        let text = "#[divide_and_conquer] fn a(x: u64) -> u64 { b(x) }\n#[cfg(test)] #[divide_and_conquer] fn b(x: u64) -> u64 { a(x) }";
        assert!(names(text, "fn a(x: u64) -> u64").is_empty());
    }

    #[test]
    fn an_annotated_module_is_not_searched() {
        let text = "#[divide_and_conquer] mod m { #[divide_and_conquer] fn a(x: u64) -> u64 { b(x) } #[divide_and_conquer] fn b(x: u64) -> u64 { a(x) } }";
        assert!(names(text, "fn a(x: u64) -> u64").is_empty());
    }
}
