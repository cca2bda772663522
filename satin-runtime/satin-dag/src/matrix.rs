//! Reader for a task graph given as two matrices, with communication costs
//! and one run time per processor (the form of the HEFT paper's example).
//!
//! Run times, one row per task and one column per processor:
//!
//! ```text
//! TP,P_0,P_1,P_2
//! T_0,14,16,9
//! T_1,13,19,18
//! ```
//!
//! Connectivity, one row and one column per task; a positive entry in row
//! `i`, column `j` is an edge `i -> j` with that communication cost:
//!
//! ```text
//! T,T0,T1
//! T0,0,18
//! T1,0,0
//! ```
//!
//! The first row and column are labels. Every refusal names its line.

use super::graph::{Costs, GraphError, TaskGraph};

/// Parses the run-time matrix and the connectivity matrix.
pub fn parse(exec_times: &str, connectivity: &str) -> Result<TaskGraph, GraphError> {
    let times = rows(exec_times)?;
    let (names, times): (Vec<String>, Vec<Vec<f64>>) = times.into_iter().unzip();
    let procs = times.first().map_or(0, Vec::len);
    if procs == 0 {
        return Err(GraphError::at(1, "no processor columns in the run-time matrix".into()));
    }
    if let Some(k) = times.iter().position(|r| r.len() != procs) {
        return Err(GraphError::at(
            k + 2,
            format!("{} run times, expected {procs} (one per processor)", times[k].len()),
        ));
    }
    let links = rows(connectivity)?;
    if links.len() != names.len() {
        return Err(GraphError::new(format!(
            "the connectivity matrix has {} rows for {} tasks",
            links.len(),
            names.len()
        )));
    }
    let mut edges = Vec::new();
    for (i, (_, row)) in links.iter().enumerate() {
        if row.len() != names.len() {
            return Err(GraphError::at(
                i + 2,
                format!("{} columns, expected {} (one per task)", row.len(), names.len()),
            ));
        }
        for (j, &comm) in row.iter().enumerate() {
            if comm < 0.0 {
                return Err(GraphError::at(i + 2, format!("negative communication cost {comm}")));
            }
            if comm > 0.0 {
                edges.push((i, j, comm));
            }
        }
    }
    TaskGraph::new(names, Costs::PerProcessor { procs, times: times.concat() }, &edges).map_err(|e| match e.task {
        Some(t) => GraphError { line: Some(t + 2), ..e },
        None => e,
    })
}

/// The labelled rows of a CSV matrix (the header row skipped).
fn rows(text: &str) -> Result<Vec<(String, Vec<f64>)>, GraphError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate().skip(1) {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let mut cells = line.split(',').map(str::trim);
        let label = cells.next().unwrap_or_default().to_string();
        let values = cells
            .map(|c| c.parse::<f64>().map_err(|_| GraphError::at(i + 1, format!("`{c}` is not a number"))))
            .collect::<Result<Vec<f64>, _>>()?;
        out.push((label, values));
    }
    if out.is_empty() {
        return Err(GraphError::at(1, "no rows below the header".into()));
    }
    Ok(out)
}
