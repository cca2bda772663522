//! What a simulated task-graph run must give, whatever its faults.

use satin_dag::{TaskGraph, Workflow};

use super::{GraphEnding, GraphReport};

/// What is wrong with `report`, a run of `graph` that started with `nodes`
/// nodes, in words (empty: nothing). Always: every node ends (no task
/// waits for ever); every output that travelled, and every output a node
/// that ended with the results holds, is the fault-free one; such a node
/// has every task's output in once and every result. With `survivable`
/// (faults the schedule is built to survive, struck after the clocks
/// started): every starting node whose clocks started and that no fault
/// crashed ends with the results, and the others fail because their
/// master went before their clocks started.
pub fn violations(graph: &TaskGraph, nodes: usize, report: &GraphReport, survivable: bool) -> Vec<String> {
    let want = Workflow::synthetic(graph.clone()).run_sequential();
    let mut wrong: Vec<String> = report.wrong_outputs.iter().take(3).cloned().collect();
    for (i, end) in report.ends.iter().enumerate() {
        match end {
            GraphEnding::Waiting => wrong.push(format!("node {i} never ended: a task waits for ever")),
            GraphEnding::Done { run, .. } => {
                if run.tasks_completed != graph.len() || run.tasks_total != graph.len() {
                    wrong.push(format!("node {i} ended with {} of {} tasks done", run.tasks_completed, graph.len()));
                }
                for (t, out) in run.outputs.iter().enumerate() {
                    match out {
                        Some(o) if *o != want[t] => wrong.push(format!("node {i} holds a wrong output of task {t}")),
                        None if graph.succs(t).is_empty() => {
                            wrong.push(format!("node {i} ended without the result of task {t}"))
                        }
                        _ => {}
                    }
                }
            }
            GraphEnding::Failed(why) if survivable && i < nodes => {
                let before_start = !report.clocks_started[i] && why.contains("master went before the run started");
                if !before_start {
                    wrong.push(format!("node {i} failed though the faults were survivable: {why}"));
                }
            }
            GraphEnding::Failed(_) | GraphEnding::Crashed => {}
        }
    }
    wrong
}
