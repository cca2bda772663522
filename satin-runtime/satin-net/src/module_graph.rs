//! A test of the crate's shape: no two of its modules import each other,
//! directly or around a circle. Read off the source: each top-level
//! module's references to the others (`crate::m`, a top-level file's
//! `super::m`, a nested file's `super::super::m`, and the names the crate
//! root re-exports, which stand for the module they come from); comments
//! and tests left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Every `.rs` file under `dir`, with its path relative to `root`.
fn files(root: &Path, dir: &Path, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).expect("the crate's sources are readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            files(root, &path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path.strip_prefix(root).expect("under the root").to_string_lossy().replace('\\', "/");
            out.push((rel, std::fs::read_to_string(&path).expect("a source file")));
        }
    }
}

/// The code of a file, without its tests and comments.
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or_default();
    text.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n")
}

/// The identifiers that follow each `prefix` in `code` (one, or each of a
/// `{a, b::c}` list's first segments).
fn after(code: &str, prefix: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _) in code.match_indices(prefix) {
        let before = code[..i].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let rest = &code[i + prefix.len()..];
        let ident = |s: &str| s.trim().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
        match rest.strip_prefix('{') {
            Some(list) => out.extend(list.split('}').next().unwrap_or_default().split(',').map(ident)),
            None => out.push(ident(rest)),
        }
    }
    out
}

/// Each top-level module and the top-level modules it refers to.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut all = Vec::new();
    files(&src, &src, &mut all);
    let top = |rel: &str| rel.split('/').next().unwrap_or_default().trim_end_matches(".rs").to_string();
    let modules: BTreeSet<String> = all.iter().map(|(rel, _)| top(rel)).filter(|m| m != "lib").collect();
    // `pub use m::{a, b}` in the crate root: `a` and `b` stand for `m`.
    let mut stands_for: BTreeMap<String, String> = BTreeMap::new();
    let root = &all.iter().find(|(rel, _)| rel == "lib.rs").expect("a crate root").1;
    for line in code(root).lines().filter(|l| l.trim_start().starts_with("pub use ") || l.starts_with("use ")) {
        let path = line.trim_start().trim_start_matches("pub ").trim_start_matches("use ");
        let Some((m, names)) = path.split_once("::") else { continue };
        if modules.contains(m) {
            for name in after(&format!(" {{{}", names.trim_start_matches('{')), "{") {
                stands_for.insert(name, m.to_string());
            }
        }
    }
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (rel, text) in &all {
        let from = top(rel);
        if from == "lib" {
            continue;
        }
        let code = code(text);
        let mut names = after(&code, "crate::");
        names.extend(after(&code, &format!("{}super::", "super::".repeat(rel.matches('/').count()))));
        for name in names {
            let to = stands_for.get(&name).cloned().unwrap_or(name);
            if to != from && modules.contains(&to) {
                graph.entry(from.clone()).or_default().insert(to);
            }
        }
    }
    graph
}

/// A circle of modules, if there is one (depth-first search).
fn circle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        m: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|p| p == m) {
            return Some(path[at..].to_vec());
        }
        if !done.insert(m.to_string()) {
            return None;
        }
        path.push(m.to_string());
        for next in graph.get(m).into_iter().flatten() {
            if let Some(c) = visit(next, graph, path, done) {
                return Some(c);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|m| visit(m, graph, &mut Vec::new(), &mut done))
}

#[test]
fn no_modules_of_the_crate_import_each_other_in_a_circle() {
    let graph = graph();
    assert!(graph.get("supervise").is_some_and(|to| to.contains("contract")), "the graph was read: {graph:?}");
    assert!(graph.get("program").is_some_and(|to| to.contains("front")), "re-exports were read: {graph:?}");
    if let Some(c) = circle(&graph) {
        panic!("modules import each other in a circle: {}", c.join(" → "));
    }
    // The finder finds one where there is one.
    let mut looped = graph.clone();
    looped.entry("contract".into()).or_default().insert("supervise".into());
    assert!(circle(&looped).is_some());
}
