//! Reader for the Standard Task Graph format (Kasahara lab, STG).
//!
//! ```text
//! 3                      N: the number of real tasks
//!   0   0   0            id, run time, number of predecessors, their ids
//!   1   5   1   0        (task 0 and task N+1 are the dummy entry and exit)
//!   2   3   1   0
//!   3   7   2   1   2
//!   4   0   1   3
//! # an optional footer
//! ```
//!
//! Ids run 0..=N+1 in order. The standard set has no communication
//! costs; as an extension, a predecessor written `ID:COST` (`3   1:20`)
//! gives its edge a communication cost. Every refusal names its line.

use super::graph::{Costs, GraphError, TaskGraph, TaskId};

/// Parses an STG file.
pub fn parse(text: &str) -> Result<TaskGraph, GraphError> {
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty())
        .take_while(|(_, l)| !l.starts_with('#'));
    let (first, header) =
        lines.next().ok_or_else(|| GraphError::at(1, "empty file: expected the number of tasks".into()))?;
    let n: usize = header
        .parse()
        .ok()
        .filter(|&n| n <= 1_000_000)
        .ok_or_else(|| GraphError::at(first, format!("expected the number of tasks, found `{header}`")))?;
    let total = n + 2;
    let mut costs = Vec::with_capacity(total);
    let mut edges = Vec::new();
    let mut line_of = Vec::with_capacity(total);
    for (line, text) in lines {
        let fields: Vec<&str> = text.split_whitespace().collect();
        let number = |k: usize, what: &str| -> Result<f64, GraphError> {
            let f = fields.get(k).ok_or_else(|| GraphError::at(line, format!("missing {what}")))?;
            f.parse::<f64>().map_err(|_| GraphError::at(line, format!("{what} `{f}` is not a number")))
        };
        let id = number(0, "task id")?;
        let expected = costs.len();
        if id != expected as f64 {
            let why = if id >= 0.0 && (id as usize) < expected && id.fract() == 0.0 {
                "a duplicate id"
            } else {
                "out of order"
            };
            return Err(GraphError::at(line, format!("task id {id} is {why}: expected {expected}")));
        }
        if expected >= total {
            return Err(GraphError::at(
                line,
                format!("more task lines than the {n} tasks (and entry and exit) announced"),
            ));
        }
        let cost = number(1, "run time")?;
        if !cost.is_finite() || cost < 0.0 {
            return Err(GraphError::at(line, format!("task {id} has run time {cost}: it must not be negative")));
        }
        let count = number(2, "number of predecessors")?;
        if count < 0.0 || count.fract() != 0.0 || count as usize != fields.len() - 3 {
            return Err(GraphError::at(
                line,
                format!("task {id} announces {count} predecessors and lists {}", fields.len().saturating_sub(3)),
            ));
        }
        for field in &fields[3..] {
            let (p, comm) = field.split_once(':').unwrap_or((field, "0"));
            let p =
                p.parse::<f64>().map_err(|_| GraphError::at(line, format!("predecessor id `{p}` is not a number")))?;
            if p < 0.0 || p.fract() != 0.0 || p >= total as f64 {
                return Err(GraphError::at(line, format!("task {id} lists predecessor {p}, which is not a task")));
            }
            let comm = comm.parse::<f64>().ok().filter(|c| c.is_finite() && *c >= 0.0).ok_or_else(|| {
                GraphError::at(line, format!("edge {p} -> {id}: communication cost `{comm}` is not a time"))
            })?;
            edges.push((p as TaskId, expected, comm));
        }
        costs.push(cost);
        line_of.push(line);
    }
    if costs.len() != total {
        return Err(GraphError::at(
            line_of.last().copied().unwrap_or(first),
            format!("{} task lines, expected {total} ({n} tasks, entry and exit)", costs.len()),
        ));
    }
    let names = (0..total).map(|t| t.to_string()).collect();
    TaskGraph::new(names, Costs::Uniform(costs), &edges).map_err(|e| match e.task {
        Some(t) => GraphError { line: Some(line_of[t]), ..e },
        None => e,
    })
}
