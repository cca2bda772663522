//! Barnes-Hut: the Plummer sphere is one, the tree's accelerations are the
//! direct sum's to the stated tolerance (exactly so with θ = 0), and the
//! parallel runs — satin on 2 workers, rayon, node processes, the bodies
//! passed as a tree or kept in a shared object — give the sequential run's
//! numbers to the last bit.

use crate::common;

use satin_examples::barnes_hut::{self, plummer, Body};

fn runtime() -> satin::Runtime {
    satin::Runtime::builder().workers(2).build().unwrap()
}

#[test]
fn the_initial_condition_is_a_plummer_sphere_in_henon_units() {
    let bodies = plummer::sphere(20_000, 7);
    assert_eq!(bodies, plummer::sphere(20_000, 7), "a fixed seed gives the same bodies");
    assert_ne!(bodies, plummer::sphere(20_000, 8));
    let mass: f64 = bodies.iter().map(|b| b.mass).sum();
    assert!((mass - 1.0).abs() < 1e-9);
    // In virial equilibrium with total energy −1/4: kinetic energy 1/4.
    let kinetic = barnes_hut::kinetic_energy(&bodies);
    assert!((kinetic - 0.25).abs() < 0.01, "kinetic energy {kinetic}");
    // Half the mass within 1.305 Plummer radii (3π/16 each): 0.769.
    let mut radii: Vec<f64> = bodies.iter().map(|b| b.pos.iter().map(|x| x * x).sum::<f64>().sqrt()).collect();
    radii.sort_by(f64::total_cmp);
    let half_mass = radii[radii.len() / 2];
    assert!((half_mass - 0.769).abs() < 0.03, "half-mass radius {half_mass}");
}

#[test]
fn tree_accelerations_match_the_direct_sum_to_the_stated_tolerance() {
    let bodies = plummer::sphere(3_000, 1);
    // θ = 0 opens every cell: the direct sum, up to summation order.
    let (ordered, exact_tree) = barnes_hut::tree_accelerations(bodies.clone(), 0.0);
    let direct = barnes_hut::direct(&ordered);
    let (rms, max) = barnes_hut::relative_errors(&exact_tree, &direct);
    assert!(max < 1e-10, "θ = 0: rms {rms:e}, max {max:e}");
    // The documented tolerance at θ = 0.5: rms ≤ 0.5 %, every body ≤ 5 %.
    let (ordered, approx) = barnes_hut::tree_accelerations(bodies.clone(), 0.5);
    let (rms, max) = barnes_hut::relative_errors(&approx, &barnes_hut::direct(&ordered));
    assert!(rms <= 5e-3 && max <= 5e-2, "θ = 0.5: rms {rms:e}, max {max:e}");
    // A wider angle is coarser.
    let (ordered, coarse) = barnes_hut::tree_accelerations(bodies.clone(), 1.0);
    let (rms_coarse, _) = barnes_hut::relative_errors(&coarse, &barnes_hut::direct(&ordered));
    assert!(rms_coarse > rms, "θ = 1 ({rms_coarse:e}) against θ = 0.5 ({rms:e})");
    // Every body comes back once.
    let mut ids: Vec<u32> = ordered.iter().map(|b| b.id).collect();
    ids.sort_unstable();
    assert_eq!(ids, (0..3_000).collect::<Vec<_>>());
}

#[test]
fn parallel_runs_give_the_sequential_numbers_to_the_last_bit() {
    let bodies = plummer::sphere(10_000, 3);
    let sequential = barnes_hut::simulate(bodies.clone(), 2, 1e-3, 0.5);
    let b = bodies.clone();
    let parallel: Vec<Body> = runtime().run(move || barnes_hut::simulate(b, 2, 1e-3, 0.5));
    assert_eq!(parallel, sequential);
    // The bodies as a shared object, the tree built from each replica.
    let b = bodies.clone();
    let shared: Vec<Body> = runtime().run(move || barnes_hut::shared::simulate(b, 2, 1e-3, 0.5));
    assert_eq!(shared, sequential);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let (rayon_bodies, rayon_acc) = pool.install(|| barnes_hut::rayon_version::tree_accelerations(bodies.clone(), 0.5));
    assert_eq!((rayon_bodies, rayon_acc), barnes_hut::tree_accelerations(bodies, 0.5));
}

fn run(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_barnes_hut")).args(args).output().unwrap()
}

#[test]
fn the_binary_prints_the_same_energy_on_one_or_several_nodes_and_refuses_bad_input() {
    let first = |args: &[&str]| {
        let out = run(args);
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).lines().next().unwrap().to_string()
    };
    let base = ["--bodies", "3000", "--steps", "2"];
    let sequential = first(&[&base[..], &["--sequential"]].concat());
    assert_eq!(first(&[&base[..], &["--workers", "2"]].concat()), sequential);
    assert_eq!(first(&[&base[..], &["--local-nodes", "2", "--no-progress"]].concat()), sequential);
    // Across nodes the bodies travel as a shared object: every job that
    // lands on the other node finds its step's bodies there (or waits for
    // them in its guard).
    let shared = ["--bodies", "20000", "--steps", "2", "--shared-bodies", "--local-nodes", "3", "--no-progress"];
    let (out, stats) = common::run_with_stats(env!("CARGO_BIN_EXE_barnes_hut"), &shared, &[]);
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{log}");
    let want = first(&["--bodies", "20000", "--steps", "2", "--sequential"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().next(), Some(want.as_str()));
    assert!(stats.others(0, "jobs_stolen") > 0, "no job ran on another node:\n{log}");
    let out = run(&["--bodies", "2000", "--steps", "0", "--check", "--sequential"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("relative error"));
    for bad in [&["--bodies", "1"][..], &["--theta", "-1"], &["--steps", "x"]] {
        let out = run(bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(!out.stderr.is_empty());
    }
}
