//! Task graphs: readers (and their refusals), HEFT, and the schedule
//! checker, on the bundled STG and HEFT inputs.

use std::path::PathBuf;

use proptest::prelude::*;
use satin_dag::{heft, matrix, stg, upward_ranks, Costs, Placement, TaskGraph};

fn data(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../satin-examples/data/stg").join(path)
}

fn read(path: &str) -> String {
    std::fs::read_to_string(data(path)).expect("bundled data")
}

fn canonical() -> TaskGraph {
    matrix::parse(
        &read("heft_canonical/canonicalgraph_task_exe_time.csv"),
        &read("heft_canonical/canonicalgraph_task_connectivity.csv"),
    )
    .expect("the HEFT example parses")
}

#[test]
fn heft_gives_the_published_makespan_on_the_papers_example() {
    let g = canonical();
    assert_eq!(g.len(), 10);
    assert_eq!(g.fixed_procs(), Some(3));
    let ranks = upward_ranks(&g, 3);
    assert!((ranks[0] - 108.0).abs() < 1e-9, "rank_u(T0) = {}", ranks[0]);
    let s = heft(&g, 3);
    s.check(&g).expect("a valid schedule");
    assert_eq!(s.makespan(), 80.0);
}

/// `(file, procs, optimum)` for every proven optimum in the bundled table.
fn proven_optima() -> Vec<(String, usize, f64)> {
    read("optimal_schedule_lengths.csv")
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[2] == f[3]).then(|| (f[0].to_string(), f[1].parse().unwrap(), f[2].parse().unwrap()))
        })
        .collect()
}

#[test]
fn heft_is_valid_and_near_the_proven_optimum_on_the_50_task_graphs() {
    let optima = proven_optima();
    assert!(optima.len() >= 30, "{} proven optima", optima.len());
    let mut ratios = Vec::new();
    for (file, procs, opt) in &optima {
        let g = stg::parse(&read(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(g.len(), 52, "{file}: 50 tasks, entry and exit");
        let s = heft(&g, *procs);
        s.check(&g).unwrap_or_else(|v| panic!("{file} on {procs}: {v}"));
        assert!(s.makespan() >= opt - 1e-9, "{file} on {procs}: {} below the optimum {opt}", s.makespan());
        ratios.push(s.makespan() / opt);
    }
    let mean = ratios.iter().sum::<f64>() / ratios.len() as f64;
    let worst = ratios.iter().copied().fold(0.0, f64::max);
    eprintln!("HEFT / proven optimum over {} cases: mean {mean:.4}, worst {worst:.4}", ratios.len());
    assert!(mean <= 1.10, "HEFT averages {mean:.4} x the optimum");
}

#[test]
fn the_application_graphs_schedule_validly_on_4_to_32_processors() {
    for (file, tasks) in [("application/robot.stg", 90), ("application/sparse.stg", 98), ("application/fpppp.stg", 336)]
    {
        let g = stg::parse(&read(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(g.len(), tasks, "{file}");
        let mut last = f64::INFINITY;
        for procs in [1, 2, 4, 8, 16, 32] {
            let s = heft(&g, procs);
            s.check(&g).unwrap_or_else(|v| panic!("{file} on {procs}: {v}"));
            if procs == 1 {
                assert_eq!(s.makespan(), g.total_work(), "{file}: one processor runs everything in turn");
            }
            assert!(s.makespan() <= last + 1e-9, "{file}: more processors, longer schedule");
            last = s.makespan();
        }
    }
}

#[test]
fn the_checker_refuses_broken_schedules() {
    let g = canonical();
    let good = heft(&g, 3);
    let with = |f: &dyn Fn(&mut Vec<Placement>)| {
        let mut p = good.placements().to_vec();
        f(&mut p);
        satin_dag::Schedule::from_placements(3, p).check(&g)
    };
    assert!(with(&|_| {}).is_ok());
    let err = with(&|p| p.retain(|x| x.task != 4)).unwrap_err();
    assert!(err.0.contains("task T_4 is not placed"), "{err}");
    let err = with(&|p| {
        let t9 = p.iter_mut().find(|x| x.task == 9).unwrap();
        t9.start -= 5.0;
        t9.finish -= 5.0;
    })
    .unwrap_err();
    assert!(err.0.contains("before its input") || err.0.contains("overlap"), "{err}");
    let err = with(&|p| p[0].finish += 1.0).unwrap_err();
    assert!(err.0.contains("where it takes"), "{err}");
    let err = with(&|p| p[1].proc = 7).unwrap_err();
    assert!(err.0.contains("processor 7 of 3"), "{err}");
}

#[test]
fn bad_stg_files_are_refused_with_their_line() {
    let cases = [
        ("", "line 1: empty file"),
        ("x\n", "line 1: expected the number of tasks"),
        ("1\n0 0 0\n1 5 1 0\n", "line 3: 2 task lines, expected 3"),
        ("1\n0 0 0\n1 5 1 0\n1 0 1 1\n", "line 4: task id 1 is a duplicate id"),
        ("1\n0 0 0\n1 -5 1 0\n2 0 1 1\n", "line 3: task 1 has run time -5"),
        ("1\n0 0 0\n1 5 1 9\n2 0 1 1\n", "line 3: task 1 lists predecessor 9, which is not a task"),
        ("1\n0 0 0\n1 5 2 0\n2 0 1 1\n", "line 3: task 1 announces 2 predecessors and lists 1"),
        ("1\n0 0 0\n1 5 1 x\n2 0 1 1\n", "line 3: predecessor id `x` is not a number"),
        ("2\n0 0 0\n1 5 1 2\n2 5 1 1\n3 0 1 2\n", "is on a cycle"),
        ("1\n0 0 0\n1 5 1 0\n2 0 1 1\n3 0 0\n", "line 5: more task lines"),
        ("1\n0 0 0\n1 5 1 0:-2\n2 0 1 1\n", "line 3: edge 0 -> 1: communication cost `-2` is not a time"),
        ("1\n0 0 0\n1 5 1 0:x\n2 0 1 1\n", "line 3: edge 0 -> 1: communication cost `x`"),
    ];
    for (text, want) in cases {
        let err = stg::parse(text).expect_err(text).to_string();
        assert!(err.contains(want), "{text:?}: {err}");
    }
    // The extension: `ID:COST` gives an edge a communication cost.
    let g = stg::parse("2\n0 0 0\n1 5 1 0\n2 3 1 1:20\n3 0 2 1 2:4.5\n").unwrap();
    assert_eq!(g.preds(2), &[(1, 20.0)]);
    assert_eq!(g.preds(3), &[(1, 0.0), (2, 4.5)]);
    // A cycle is reported at the line of a task on it.
    let err = stg::parse("2\n0 0 0\n1 5 1 2\n2 5 1 1\n3 0 1 2\n").unwrap_err();
    assert!(matches!(err.line, Some(3) | Some(4)), "{err}");
}

#[test]
fn bad_matrices_are_refused_with_their_line() {
    let times = "TP,P_0,P_1\nT_0,1,2\nT_1,3,4\n";
    assert!(matrix::parse(times, "T,T0,T1\nT0,0,5\nT1,0,0\n").is_ok());
    let err = matrix::parse(times, "T,T0,T1\nT0,0,5\nT1,7,0\n").unwrap_err().to_string();
    assert!(err.contains("on a cycle"), "{err}");
    let err = matrix::parse("TP,P_0,P_1\nT_0,1,2\nT_1,3\n", "T,T0,T1\nT0,0,5\nT1,0,0\n").unwrap_err().to_string();
    assert!(err.starts_with("line 3:"), "{err}");
    let err = matrix::parse(times, "T,T0,T1\nT0,0,-5\nT1,0,0\n").unwrap_err().to_string();
    assert!(err.starts_with("line 2: negative"), "{err}");
    let err = matrix::parse("TP,P_0\nT_0,x\n", "T,T0\nT0,0\n").unwrap_err().to_string();
    assert!(err.contains("`x` is not a number"), "{err}");
    let err = matrix::parse(times, "T,T0\nT0,0\n").unwrap_err().to_string();
    assert!(err.contains("1 rows for 2 tasks"), "{err}");
}

#[test]
fn graphs_built_in_code_are_checked_too() {
    let names = || vec!["a".to_string(), "b".to_string()];
    assert!(TaskGraph::new(names(), Costs::Uniform(vec![1.0, 2.0]), &[(0, 1, 3.0)]).is_ok());
    let err = TaskGraph::new(names(), Costs::Uniform(vec![1.0, f64::NAN]), &[]).unwrap_err();
    assert!(err.message.contains("task b has cost NaN"), "{err}");
    let err = TaskGraph::new(names(), Costs::Uniform(vec![1.0, 2.0]), &[(0, 2, 1.0)]).unwrap_err();
    assert!(err.message.contains("does not exist"), "{err}");
    let err = TaskGraph::new(names(), Costs::Uniform(vec![1.0, 2.0]), &[(0, 1, 1.0), (0, 1, 2.0)]).unwrap_err();
    assert!(err.message.contains("listed twice"), "{err}");
    let err = TaskGraph::new(names(), Costs::Uniform(vec![1.0]), &[]).unwrap_err();
    assert!(err.message.contains("1 costs for 2 tasks"), "{err}");
}

/// A DAG from proptest's numbers: task costs, and links (a, b, cost) kept
/// as an edge a → b when a < b (so no cycle) and not seen before.
fn random_graph(costs: &[u32], links: &[(usize, usize, u32)]) -> (TaskGraph, Vec<(usize, usize, f64)>) {
    let n = costs.len();
    let mut edges: Vec<(usize, usize, f64)> = Vec::new();
    for &(a, b, c) in links {
        let (a, b) = (a % n, b % n);
        if a < b && !edges.iter().any(|e| e.0 == a && e.1 == b) {
            edges.push((a, b, c as f64));
        }
    }
    let names = (0..n).map(|i| i.to_string()).collect();
    let g = TaskGraph::new(names, Costs::Uniform(costs.iter().map(|&c| c as f64).collect()), &edges).unwrap();
    (g, edges)
}

proptest! {
    /// Any text is a graph or an error, never a panic; a graph read from
    /// any text schedules validly.
    #[test]
    fn any_text_is_a_graph_or_an_error(text in "[0-9 \\-\\n#x.]{0,120}") {
        if let Ok(g) = stg::parse(&text) {
            let s = heft(&g, 3);
            prop_assert!(s.check(&g).is_ok());
        }
    }

    /// HEFT on random layered graphs is always valid, never shorter than
    /// the critical path nor than the work spread over every processor.
    #[test]
    fn heft_is_valid_on_random_graphs(
        costs in proptest::collection::vec(0u32..20, 1..40),
        links in proptest::collection::vec((0usize..40, 0usize..40, 0u32..15), 0..80),
        procs in 1usize..6,
    ) {
        let (g, edges) = random_graph(&costs, &links);
        let s = heft(&g, procs);
        prop_assert!(s.check(&g).is_ok(), "{:?}", s.check(&g));
        prop_assert!(s.makespan() + 1e-9 >= g.total_work() / procs as f64);
        prop_assert!(s.makespan() <= g.total_work() + edges.iter().map(|e| e.2).sum::<f64>() + 1e-9);
    }
}

use satin_dag::{ft_schedule, simulate, Crash, FtParams};

/// Crash times spread over a run of `makespan`: the start, nine points
/// inside, the end.
fn crash_times(makespan: f64) -> Vec<f64> {
    (0..=10).map(|k| makespan * k as f64 / 10.0).collect()
}

/// Checks the fault-tolerant schedule of `g` on `procs`: valid, fault-free
/// as long as HEFT, and complete after any one processor's crash at any of
/// the crash times. Returns the worst crash makespan.
fn survives_every_crash(g: &TaskGraph, procs: usize, what: &str) -> f64 {
    let ft = ft_schedule(g, procs, FtParams::default());
    ft.check(g).unwrap_or_else(|v| panic!("{what} on {procs}: {v}"));
    let plain = heft(g, procs);
    assert_eq!(ft.makespan(), plain.makespan(), "{what} on {procs}: duplicates cost nothing fault-free");
    let free = simulate(g, &ft, &[]).unwrap_or_else(|s| panic!("{what} on {procs}: fault-free run stalls at {s:?}"));
    assert!(
        (free.makespan - ft.makespan()).abs() < 1e-9,
        "{what} on {procs}: ran {} planned {}",
        free.makespan,
        ft.makespan()
    );
    assert_eq!(free.duplicates_completed, 0, "{what} on {procs}: fault-free, every duplicate is aborted");
    let mut worst = free.makespan;
    for proc in 0..ft.originals.procs() {
        for at in crash_times(ft.makespan()) {
            let run = simulate(g, &ft, &[Crash { proc, at }]).unwrap_or_else(|s| {
                panic!("{what} on {procs}: processor {proc} crashing at {at} loses task {}", s.task)
            });
            worst = worst.max(run.makespan);
        }
    }
    worst
}

#[test]
fn the_fault_tolerant_schedule_costs_nothing_fault_free_and_survives_any_crash() {
    let g = canonical();
    let worst = survives_every_crash(&g, 3, "the HEFT example");
    assert!(worst > 80.0, "a crash costs something: {worst}");
    for file in
        ["kasahara50/rand0000.stg", "kasahara50/rand0005.stg", "application/robot.stg", "application/sparse.stg"]
    {
        let g = stg::parse(&read(file)).unwrap();
        for procs in [2, 4, 8, 16] {
            survives_every_crash(&g, procs, file);
        }
    }
}

#[test]
fn without_duplicates_a_crash_loses_tasks() {
    // The same run with every duplicate moved onto its original's
    // processor (an invalid schedule): the crash of that processor at the
    // start leaves tasks with no copy, which the simulator reports.
    let g = canonical();
    let mut ft = ft_schedule(&g, 3, FtParams::default());
    let proc = ft.originals.placements()[0].proc;
    for d in &mut ft.duplicates {
        d.proc = ft.originals.of(d.task).unwrap().proc;
    }
    assert!(ft.check(&g).is_err());
    assert!(simulate(&g, &ft, &[Crash { proc, at: 0.0 }]).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// On random graphs, with any processor crashing at any time, every
    /// task completes; fault-free, the run is HEFT's; a replan at that
    /// crash is valid (`checked_replan`).
    #[test]
    fn random_graphs_survive_any_single_crash(
        costs in proptest::collection::vec(0u32..20, 1..30),
        links in proptest::collection::vec((0usize..30, 0usize..30, 0u32..15), 0..60),
        procs in 2usize..6,
        crash in (0usize..6, 0.0f64..1.2),
    ) {
        let (g, _) = random_graph(&costs, &links);
        let ft = ft_schedule(&g, procs, FtParams::default());
        prop_assert!(ft.check(&g).is_ok(), "{:?}", ft.check(&g));
        let free = simulate(&g, &ft, &[]).unwrap();
        prop_assert!((free.makespan - heft(&g, procs).makespan()).abs() < 1e-9);
        let run = simulate(&g, &ft, &[Crash { proc: crash.0 % procs, at: crash.1 * ft.makespan() }]);
        prop_assert!(run.is_ok(), "{:?}", run);
        checked_replan(&g, &ft, crash.0 % procs, crash.1 * ft.makespan());
    }
}

/// The example of docs/guide.md, "Task graphs".
#[test]
fn the_guide_example_runs() -> Result<(), Box<dyn std::error::Error>> {
    let names = ["a", "b", "c", "d"].map(String::from).to_vec();
    let graph = TaskGraph::new(
        names,
        Costs::Uniform(vec![3.0, 5.0, 4.0, 2.0]),
        &[(0, 1, 2.0), (0, 2, 2.0), (1, 3, 2.0), (2, 3, 2.0)],
    )?;
    let plain = heft(&graph, 2);
    plain.check(&graph)?;
    let ft = ft_schedule(&graph, 2, FtParams::default());
    assert_eq!(ft.makespan(), plain.makespan());
    let run = simulate(&graph, &ft, &[Crash { proc: 0, at: 4.0 }]).expect("every task completes");
    assert!(run.makespan >= ft.makespan());
    Ok(())
}

use satin_dag::{replicate, reschedule_after};

#[test]
fn the_alternatives_are_valid_and_survive_crashes() {
    // The last graph has communication costs: there, the survivors of a
    // crash must take inputs from second copies out of their planned order
    // (they once waited for each other in order, forever).
    for file in ["kasahara50/rand0001.stg", "application/robot.stg", "generated/narrow236_comm.stg"] {
        let g = stg::parse(&read(file)).unwrap();
        for procs in [2, 4, 8] {
            // Replication: two copies, never aborted: a valid schedule whose
            // every run completes, fault-free at least HEFT's length.
            let rep = replicate(&g, procs);
            rep.check(&g).unwrap_or_else(|v| panic!("{file} on {procs}: {v}"));
            let free = simulate(&g, &rep, &[]).unwrap();
            assert_eq!(free.duplicates_completed, g.len(), "{file} on {procs}: both copies run");
            for proc in 0..procs {
                for at in [0.0, rep.makespan() / 3.0] {
                    let run = simulate(&g, &rep, &[Crash { proc, at }]);
                    assert!(run.is_ok(), "{file} on {procs}, processor {proc} crashing at {at}: {run:?}");
                }
            }
            // Rescheduling: no crash after the end changes nothing; a crash
            // at the start is the plan on one processor fewer, at most.
            let plan = heft(&g, procs);
            let late = reschedule_after(&g, &plan, Crash { proc: 0, at: plan.makespan() }, 1.0);
            assert_eq!(late, plan.makespan(), "{file} on {procs}");
            let early = reschedule_after(&g, &plan, Crash { proc: 0, at: 0.0 }, 1.0);
            assert!(early >= plan.makespan() - 1e-9 || procs > 2, "{file} on {procs}: {early}");
            // About the plan on one processor fewer (list scheduling is a
            // heuristic: the rest of a graph can come out a little longer
            // than the whole of it).
            assert!(early <= 1.05 * heft(&g, procs - 1).makespan() + 1.0, "{file} on {procs}: {early}");
        }
    }
}

#[test]
fn the_adaptive_choice_is_never_worse_than_either_continuation() {
    let g = stg::parse(&read("application/fpppp.stg")).unwrap();
    for procs in [4, 16] {
        let ft = ft_schedule(&g, procs, FtParams::default());
        for proc in [0, procs - 1] {
            for at in crash_times(ft.makespan()) {
                let crash = Crash { proc, at };
                let a = satin_dag::adaptive_after(&g, &ft, crash).expect("completes");
                let d = simulate(&g, &ft, &[crash]).unwrap().makespan;
                let r = reschedule_after(&g, &ft.originals, crash, ft.params.abort_delay);
                assert_eq!(a, d.min(r), "fpppp on {procs}, {crash:?}");
            }
        }
    }
}

#[test]
fn a_processor_follows_its_plan_skips_aborted_duplicates_and_puts_lost_ones_first() {
    use satin_dag::processor::{Item, Processor};
    // a -> b, a -> c; a and b on processor 0, c on processor 1; processor 1
    // also holds the duplicates of a and b.
    let g = TaskGraph::new(
        vec!["a".into(), "b".into(), "c".into()],
        Costs::Uniform(vec![2.0, 3.0, 4.0]),
        &[(0, 1, 1.0), (0, 2, 1.0)],
    )
    .unwrap();
    let item = |task, duplicate, planned, len| Item { task, duplicate, planned, len };
    let plan = vec![item(2, false, 3.0, 4.0), item(0, true, 3.0, 2.0), item(1, true, 7.0, 3.0)];
    let mut p1 = Processor::new(1, plan, 3, 2, vec![0, 0, 1], 1.0);
    assert_eq!(p1.next(&g, 0.0), None, "c waits for a's output");
    p1.copy_finished(0, 0, 2.0, true);
    assert_eq!(p1.next(&g, 2.5), None, "a's output arrives at 3 (edge cost 1)");
    assert_eq!(p1.next(&g, 3.0).map(|i| (i.task, i.duplicate)), Some((2, false)), "c, then");
    // The duplicate of a was aborted at 3 (a ended at 2, abort after 1):
    // skipped. The duplicate of b waits for its planned start.
    assert_eq!(p1.next(&g, 6.0), None);
    // Processor 0 crashes at 5 with b unfinished; known here at 6.
    p1.peer_down(0, 5.0);
    assert_eq!(p1.next(&g, 5.5), None, "not known yet, and b's duplicate is planned at 7");
    assert_eq!(p1.next(&g, 6.0).map(|i| (i.task, i.duplicate)), Some((1, true)), "lost: b's duplicate goes now");
    assert_eq!(p1.next(&g, 9.0), None, "nothing left");

    // A real run tells it when news arrives, and arrival is what counts:
    // the message carried the output and, for an original, the abort.
    let plan = vec![item(2, false, 3.0, 4.0), item(0, true, 3.0, 2.0), item(1, true, 7.0, 3.0)];
    let mut p1 = Processor::new(1, plan, 3, 2, vec![0, 0, 1], 1.0);
    p1.copy_arrived(0, 0, 2.2, true);
    assert!(p1.finished(0) && p1.original_finished(0));
    assert_eq!(p1.next(&g, 2.2).map(|i| i.task), Some(2), "a's output is in on arrival, no edge cost added");
    assert_eq!(p1.remaining().count(), 1, "a's duplicate is aborted on arrival of the news");
    p1.peer_down_known(0, 4.0);
    assert_eq!(p1.next(&g, 4.0).map(|i| (i.task, i.duplicate)), Some((1, true)), "b is lost: known now");

    // An original never waits for a duplicate ahead of it; a run behind
    // its plan starts duplicates that much later; `wake_at` says when
    // something may become startable.
    let plan = vec![item(0, true, 1.0, 2.0), item(2, false, 3.0, 4.0)];
    let mut p1 = Processor::new(1, plan, 3, 2, vec![1, 0, 1], 1.0);
    p1.copy_finished(0, 0, 0.0, false);
    assert_eq!(p1.wake_at(&g, 0.0), Some(1.0), "c's input is in at 1 (edge cost 1), the duplicate planned at 1");
    p1.running_late(5.0);
    assert_eq!(p1.next(&g, 1.0).map(|i| (i.task, i.duplicate)), Some((2, false)), "c passes the waiting duplicate");
    assert_eq!(p1.wake_at(&g, 1.0), Some(6.0), "the duplicate: planned at 1, the run 5 late");
    assert_eq!(p1.next(&g, 5.9), None);
    assert_eq!(p1.next(&g, 6.0).map(|i| (i.task, i.duplicate)), Some((0, true)));
}

/// The workflow of an STG graph: each task's output is a hash of its name
/// and its inputs, so any wrong, missing or reordered input shows.
fn hashing_workflow(g: &TaskGraph) -> satin_dag::Workflow {
    let mut b = satin_dag::WorkflowBuilder::new();
    for &t in g.topological_order() {
        assert!(g.preds(t).iter().all(|&(u, _)| u < t), "STG ids are topological");
    }
    for t in 0..g.len() {
        let inputs: Vec<usize> = g.preds(t).iter().map(|&(u, _)| u).collect();
        let name = g.name(t).to_string();
        b.task(&name.clone(), g.cost(t, 0), &inputs, 0.0, move |ins: &[&[u8]]| {
            let mut h: u64 = 0xcbf2_9ce4_8422_2325;
            for byte in name.bytes().chain(ins.iter().flat_map(|i| i.iter().copied())) {
                h = (h ^ byte as u64).wrapping_mul(0x100_0000_01b3);
            }
            h.to_le_bytes().to_vec()
        });
    }
    b.build().unwrap()
}

#[test]
fn a_workflow_on_threads_gives_the_sequential_outputs_with_and_without_a_crash() {
    let g = stg::parse(&read("kasahara50/rand0000.stg")).unwrap();
    let wf = hashing_workflow(&g);
    let expected = wf.run_sequential();
    let ft = ft_schedule(wf.graph(), 3, FtParams::default());
    let unit = std::time::Duration::from_micros(300);
    let free = wf.run_threads(&ft, unit, None).expect("completes");
    assert_eq!(free.outputs, expected);
    for proc in 0..3 {
        let crash = Crash { proc, at: 0.3 * ft.makespan() };
        let run = wf.run_threads(&ft, unit, Some(crash)).unwrap_or_else(|s| panic!("{crash:?} lost task {}", s.task));
        assert_eq!(run.outputs, expected, "{crash:?}");
    }
    // The processor of the entry task crashing at the start: no original of
    // it ever runs, its duplicate must.
    let entry = ft.originals.of(0).unwrap().proc;
    let run = wf.run_threads(&ft, unit, Some(Crash { proc: entry, at: 0.0 })).expect("completes");
    assert_eq!(run.outputs, expected);
    assert!(run.duplicates_completed > 0, "the entry's duplicate ran");
}

#[test]
fn a_workflow_refuses_a_bad_graph() {
    let mut b = satin_dag::WorkflowBuilder::new();
    let a = b.task("a", 1.0, &[], 0.0, |_: &[&[u8]]| vec![1]);
    b.task("b", -1.0, &[a], 0.0, |_: &[&[u8]]| vec![2]);
    assert!(b.build().is_err());
    let mut b = satin_dag::WorkflowBuilder::new();
    b.task("a", 1.0, &[7], 0.0, |_: &[&[u8]]| vec![1]);
    assert!(b.build().is_err());
}

/// The workflow example of docs/guide.md, "Task graphs".
#[test]
fn the_guide_workflow_example_runs() -> Result<(), Box<dyn std::error::Error>> {
    use satin_dag::WorkflowBuilder;
    use std::time::Duration;
    let mut b = WorkflowBuilder::new();
    let load = b.task("load", 2.0, &[], 1.0, |_| b"data".to_vec());
    let up = b.task("upper", 3.0, &[load], 1.0, |i| i[0].to_ascii_uppercase());
    let len = b.task("len", 3.0, &[load], 1.0, |i| vec![i[0].len() as u8]);
    b.task("join", 1.0, &[up, len], 1.0, |i| [i[0], i[1]].concat());
    let wf = b.build()?;
    let ft = ft_schedule(wf.graph(), 2, FtParams::default());
    let run = wf.run_threads(&ft, Duration::from_millis(1), Some(Crash { proc: 1, at: 3.0 }))?;
    assert_eq!(run.outputs, wf.run_sequential());
    assert_eq!(run.outputs[3], b"DATA\x04".to_vec());
    Ok(())
}

/// Replans `ft` of `g` with processor `crashed` down at `now` (the plan
/// ran as planned until then) and checks the new plan: every unfinished
/// task once, on a live processor, after its inputs (with the edges'
/// costs), never two at once on a processor.
fn checked_replan(g: &TaskGraph, ft: &satin_dag::FtSchedule, crashed: usize, now: f64) -> satin_dag::Replan {
    use satin_dag::{replan, Known};
    let procs = ft.originals.procs();
    let finished: Vec<Option<(usize, f64)>> =
        (0..g.len()).map(|t| ft.originals.of(t).filter(|p| p.finish <= now).map(|p| (p.proc, p.finish))).collect();
    let mut down = vec![None; procs];
    down[crashed] = Some(now);
    let r = replan(g, ft, Known { finished: &finished, down: &down, now });
    let mut end: Vec<Option<(usize, f64)>> = finished.clone();
    let mut placed = vec![0; g.len()];
    for p in &r.placements {
        placed[p.task] += 1;
        assert_ne!(p.proc, crashed, "nothing on the crashed processor");
        assert!(p.finish >= now - 1e-9);
        end[p.task] = Some((p.proc, p.finish));
    }
    for t in 0..g.len() {
        assert_eq!(placed[t] + usize::from(finished[t].is_some()), 1, "task {t} once");
    }
    for p in &r.placements {
        for &(u, comm) in g.preds(p.task) {
            let (q, f) = end[u].unwrap();
            let ready = f + if q == p.proc { 0.0 } else { comm };
            // A kept task (started as planned) was ready by the plan.
            assert!(p.start + 1e-9 >= ready || p.start < now, "task {} before its input {u}", p.task);
        }
    }
    for proc in 0..procs {
        let mut spans: Vec<(f64, f64)> =
            r.placements.iter().filter(|p| p.proc == proc).map(|p| (p.start, p.finish)).collect();
        spans.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
        assert!(spans.windows(2).all(|w| w[0].1 <= w[1].0 + 1e-9), "overlap on {proc}: {spans:?}");
    }
    assert!(r.makespan + 1e-9 >= end.iter().flatten().map(|e| e.1).fold(now, f64::max));
    r
}

/// On a narrow graph with costly edges, replanning beats continuing with
/// the duplicates (a lost chain's duplicates sit on different processors).
#[test]
fn a_replan_after_a_crash_places_the_rest_validly_and_beats_the_duplicates_where_edges_cost() {
    let g = stg::parse(&read("generated/narrow236_comm.stg")).unwrap();
    let ft = ft_schedule(&g, 4, FtParams::default());
    for (crashed, now) in [(1, 1300.0), (0, 10.0), (3, 3000.0)] {
        let r = checked_replan(&g, &ft, crashed, now);
        assert!(r.is_better(), "crash of {crashed} at {now}: {} against {}", r.makespan, r.with_duplicates);
    }
}
