//! DPLL satisfiability on DIMACS CNF. Both branches of a decision are
//! spawned; once one finds a model, the other is aborted by dropping it.

use std::sync::Arc;

use satin::divide_and_conquer;
use serde::{Deserialize, Serialize};

/// A CNF formula: clauses of non-zero literals over variables `1..=vars`.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct Formula {
    pub vars: usize,
    pub clauses: Vec<Vec<i32>>,
}

/// Parses DIMACS CNF. Stops at a `%` line (SATLIB files end with `%` and `0`).
pub fn parse(text: &str) -> Result<Formula, String> {
    let mut header: Option<(usize, usize)> = None;
    let mut clauses = Vec::new();
    let mut current = Vec::new();
    for (lineno, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.starts_with('%') {
            break;
        }
        if line.is_empty() || line.starts_with('c') {
            continue;
        }
        if line.starts_with('p') {
            let f: Vec<&str> = line.split_whitespace().collect();
            match f.as_slice() {
                ["p", "cnf", v, c] => match (v.parse(), c.parse()) {
                    (Ok(v), Ok(c)) if v <= 1_000_000 => header = Some((v, c)),
                    _ => return Err(format!("line {}: bad problem line `{line}`", lineno + 1)),
                },
                _ => return Err(format!("line {}: expected `p cnf VARS CLAUSES`, found `{line}`", lineno + 1)),
            }
            continue;
        }
        let Some((vars, _)) = header else {
            return Err(format!("line {}: clause before the `p cnf` line", lineno + 1));
        };
        for tok in line.split_whitespace() {
            let lit: i32 = tok.parse().map_err(|_| format!("line {}: `{tok}` is not a literal", lineno + 1))?;
            if lit == 0 {
                clauses.push(std::mem::take(&mut current));
            } else if lit.unsigned_abs() as usize > vars {
                return Err(format!("line {}: literal {lit} names a variable above {vars}", lineno + 1));
            } else {
                current.push(lit);
            }
        }
    }
    let Some((vars, declared)) = header else {
        return Err("no `p cnf VARS CLAUSES` line".to_string());
    };
    if !current.is_empty() {
        clauses.push(current);
    }
    if clauses.len() != declared {
        return Err(format!("the header declares {declared} clauses, the file has {}", clauses.len()));
    }
    Ok(Formula { vars, clauses })
}

/// Values: 0 unassigned, 1 true, -1 false; index = variable (0 unused).
pub type Assignment = Vec<i8>;

fn value(a: &Assignment, lit: i32) -> i8 {
    let v = a[lit.unsigned_abs() as usize];
    if lit > 0 {
        v
    } else {
        -v
    }
}

/// Unit propagation. `false` on a conflict.
fn propagate(f: &Formula, a: &mut Assignment) -> bool {
    loop {
        let mut changed = false;
        for clause in &f.clauses {
            let mut unassigned = None;
            let mut open = 0;
            let mut satisfied = false;
            for &lit in clause {
                match value(a, lit) {
                    1 => {
                        satisfied = true;
                        break;
                    }
                    0 => {
                        open += 1;
                        unassigned = Some(lit);
                    }
                    _ => {}
                }
            }
            if satisfied {
                continue;
            }
            match (open, unassigned) {
                (0, _) => return false,
                (1, Some(lit)) => {
                    a[lit.unsigned_abs() as usize] = if lit > 0 { 1 } else { -1 };
                    changed = true;
                }
                _ => {}
            }
        }
        if !changed {
            return true;
        }
    }
}

/// An unassigned variable of a shortest unsatisfied clause; `None` if every
/// clause is satisfied.
fn choose(f: &Formula, a: &Assignment) -> Option<usize> {
    let mut best: Option<(usize, usize)> = None;
    for clause in &f.clauses {
        if clause.iter().any(|&l| value(a, l) == 1) {
            continue;
        }
        let open: Vec<i32> = clause.iter().copied().filter(|&l| value(a, l) == 0).collect();
        if best.is_none_or(|(len, _)| open.len() < len) {
            best = Some((open.len(), open[0].unsigned_abs() as usize));
        }
    }
    best.map(|(_, var)| var)
}

/// A model extending `assignment`, or `None` if there is none.
#[divide_and_conquer]
pub fn dpll(formula: Arc<Formula>, assignment: Assignment) -> Option<Assignment> {
    let mut a = assignment;
    if !propagate(&formula, &mut a) {
        return None;
    }
    let Some(var) = choose(&formula, &a) else {
        return Some(a);
    };
    let mut yes = a.clone();
    yes[var] = 1;
    let mut no = a;
    no[var] = -1;
    // The first branch to find a model ends the other (a race: the model
    // returned may differ from run to run; the plain function's is the
    // first in reading order).
    dpll(Arc::clone(&formula), yes).or_else(|| dpll(formula, no))
}

/// Solves a formula: a model (unassigned variables are free) or `None`.
pub fn solve(f: &Formula) -> Option<Assignment> {
    dpll(Arc::new(f.clone()), vec![0; f.vars + 1])
}

/// Whether `a` satisfies every clause of `f`.
pub fn satisfies(f: &Formula, a: &Assignment) -> bool {
    f.clauses.iter().all(|c| c.iter().any(|&l| value(a, l) == 1))
}
