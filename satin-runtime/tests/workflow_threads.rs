//! A workflow run through the node front end, on threads of this process.

/// The example of docs/guide.md, "Running a workflow on many machines",
/// with no flags: on threads of this process.
#[test]
fn the_guide_run_workflow_example_runs_on_threads() {
    use satin::dag::{FtParams, WorkflowBuilder};
    use satin::net::{run_workflow, Launch};
    let launch = Launch { workers: Some(3), ..Launch::default() };
    let mut b = WorkflowBuilder::new();
    let load = b.task("load", 2.0, &[], 1.0, |_| b"data".to_vec());
    let up = b.task("upper", 3.0, &[load], 1.0, |i| i[0].to_ascii_uppercase());
    let len = b.task("len", 3.0, &[load], 1.0, |i| vec![i[0].len() as u8]);
    let out = b.task("join", 1.0, &[up, len], 1.0, |i| [i[0], i[1]].concat());
    let wf = b.build().expect("a graph");
    let run = run_workflow("myflow", &launch, &wf, FtParams::default(), std::time::Duration::from_millis(1));
    assert_eq!(run.outputs[out].as_deref(), Some(&b"DATA\x04"[..]));
    assert_eq!((run.tasks_completed, run.tasks_total, run.procs), (4, 4, 3));
    assert!(run.crashed.is_empty());
}
