//! Each application under the runtime against its plain sequential version,
//! on random inputs, and against published answers where they exist.

use std::sync::Arc;

use proptest::prelude::*;
use satin::Runtime;
use satin_examples::{data_dir, fib, knapsack, mergesort, montecarlo, natural, nqueens, raytracer, sat};

fn rt() -> Runtime {
    Runtime::builder().workers(2).build().expect("runtime starts")
}

/// Known answers from a two-column file with a header line.
fn table(path: &str, sep: char) -> Vec<(String, String)> {
    std::fs::read_to_string(data_dir().join(path))
        .expect("bundled data")
        .lines()
        .skip(1)
        .map(|l| {
            let mut f = l.split(sep);
            (f.next().unwrap().to_string(), f.next().unwrap().to_string())
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn fib_matches_plain(n in 0u32..26) {
        prop_assert_eq!(rt().run(|| fib::fib(n)), fib::fib_plain(n));
    }

    #[test]
    fn nqueens_matches_plain(n in 1u32..11, first in 0u32..10) {
        // Start from a random first queen to vary the tree shapes.
        let full = (1u32 << n) - 1;
        let bit = 1u32 << (first % n);
        let (l, r) = ((bit << 1) & full, bit >> 1);
        prop_assert_eq!(rt().run(|| nqueens::nqueens(n, bit, l, r)), nqueens::nqueens_plain(n, bit, l, r));
    }

    #[test]
    fn knapsack_matches_dynamic_programming(
        items in proptest::collection::vec((0u32..100, 1u32..60), 0..14),
        capacity in 0u32..300,
    ) {
        let text = format!(
            "{} {}\n{}",
            items.len(),
            capacity,
            items.iter().map(|(p, w)| format!("{p} {w}\n")).collect::<String>()
        );
        let inst = knapsack::parse(&text).unwrap();
        let expected = knapsack::dp_optimum(&inst).unwrap();
        let i2 = inst.clone();
        prop_assert_eq!(rt().run(move || knapsack::solve(&i2)), expected);
        prop_assert_eq!(knapsack::solve(&inst), expected);
        // The Martello–Toth search: shared, per branch and sequential.
        let i3 = inst.clone();
        prop_assert_eq!(rt().run(move || knapsack::strong::solve(&i3)), expected);
        let i4 = inst.clone();
        prop_assert_eq!(rt().run(move || knapsack::strong::solve_with(&i4, satin_examples::Bound::PerBranch)), expected);
        prop_assert_eq!(knapsack::strong::solve_plain(&inst), expected);
        // The level-by-level search: shared, per branch and sequential.
        let i5 = inst.clone();
        prop_assert_eq!(rt().run(move || knapsack::levels::solve(&i5)), expected);
        let i6 = inst.clone();
        prop_assert_eq!(rt().run(move || knapsack::levels::solve_with(&i6, satin_examples::Bound::PerBranch)), expected);
        prop_assert_eq!(knapsack::levels::solve_plain(&inst), expected);
    }

    #[test]
    fn mergesort_sorts(data in proptest::collection::vec(any::<u64>(), 0..20_000)) {
        let mut expected = data.clone();
        expected.sort_unstable();
        let d2 = data.clone();
        prop_assert_eq!(rt().run(move || mergesort::mergesort(d2)), expected.clone());
        prop_assert_eq!(mergesort::mergesort_plain(data), expected);
    }

    #[test]
    fn sat_agrees_with_brute_force(
        clauses in proptest::collection::vec(proptest::collection::vec((1i32..8, any::<bool>()), 1..4), 1..30),
    ) {
        let clauses: Vec<Vec<i32>> =
            clauses.into_iter().map(|c| c.into_iter().map(|(v, neg)| if neg { -v } else { v }).collect()).collect();
        let f = sat::Formula { vars: 7, clauses };
        let brute = (0u32..128).any(|bits| {
            let a: Vec<i8> = (0..8).map(|v| if v > 0 && bits >> (v - 1) & 1 == 1 { 1 } else { -1 }).collect();
            sat::satisfies(&f, &a)
        });
        let f2 = Arc::new(f.clone());
        let found = rt().run(move || sat::dpll(f2, vec![0; 8]));
        prop_assert_eq!(found.is_some(), brute);
        if let Some(model) = found {
            prop_assert!(sat::satisfies(&f, &model));
        }
    }

    #[test]
    fn raytracer_matches_plain(w in 1u32..90, h in 1u32..70, s in 1u32..4) {
        prop_assert_eq!(rt().run(move || raytracer::image_sampled(w, h, s)), raytracer::image_plain_sampled(w, h, s));
    }

    #[test]
    fn montecarlo_is_deterministic(n in 1u64..400, seed in any::<u64>()) {
        let direct: u64 = (0..n).map(|i| montecarlo::simulation(seed, i)).sum();
        prop_assert_eq!(rt().run(move || montecarlo::hits(0, n, seed)), direct);
        prop_assert_eq!(montecarlo::hits(0, n, seed), direct);
    }
}

#[test]
fn the_natural_functions_give_the_plain_functions_answers() {
    let rt = rt();
    let xs = natural::random(10_000, 5);
    assert_eq!(rt.run(|| natural::sum(&xs)), natural::sum_plain(&xs));
    let mut v = xs.clone();
    rt.run(|| natural::quicksort(&mut v));
    let mut sorted = xs.clone();
    sorted.sort_unstable();
    assert_eq!(v, sorted);
    let tree = natural::Tree::build(12, 1);
    assert_eq!(rt.run(|| natural::tree_sum(&tree)), natural::tree_sum_plain(&tree));
    let (items, target) = natural::subset_input(14);
    assert_eq!(rt.run(|| natural::subset_sum(&items, target)), natural::subset_sum_plain(&items, target));
    for at in [natural::Solution::ReadFirst, natural::Solution::ReadSecond, natural::Solution::None] {
        let (items, target) = natural::search_input(20, at);
        let expected = at != natural::Solution::None;
        assert_eq!(natural::has_subset_plain(&items, target), expected, "{at:?}");
        assert_eq!(rt.run(|| natural::has_subset(&items, target)), expected, "{at:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// A race gives the plain function's answer on any input.
    #[test]
    fn has_subset_races_to_the_plain_answer(items in proptest::collection::vec(1u64..50, 0..14), target in 0u64..200) {
        let rt = rt();
        let (i2, expected) = (items.clone(), natural::has_subset_plain(&items, target));
        prop_assert_eq!(rt.run(move || natural::has_subset(&i2, target)), expected);
    }
}

#[test]
fn nqueens_matches_oeis_a000170() {
    let rt = rt();
    for (n, count) in table("nqueens/A000170.tsv", '\t').into_iter().take(12) {
        let n: u32 = n.parse().unwrap();
        assert_eq!(rt.run(|| nqueens::solutions(n)).to_string(), count, "n = {n}");
    }
}

#[test]
fn knapsack_solves_every_bundled_instance_to_its_published_optimum() {
    let rt = rt();
    for (file, optimum) in table("knapsack/optima.csv", ',') {
        let path = data_dir().join("knapsack").join(&file);
        let Ok(text) = std::fs::read_to_string(&path) else { continue }; // not every listed file is bundled
        let inst = knapsack::parse(&text).unwrap();
        let i2 = inst.clone();
        let got = knapsack::format_value(rt.run(move || knapsack::solve(&i2)), inst.integral);
        assert_eq!(got, optimum, "{file}");
        let i3 = inst.clone();
        let strong = knapsack::format_value(rt.run(move || knapsack::strong::solve(&i3)), inst.integral);
        assert_eq!(strong, optimum, "{file} by the Martello–Toth search");
        let i4 = inst.clone();
        let levels = knapsack::format_value(rt.run(move || knapsack::levels::solve(&i4)), inst.integral);
        assert_eq!(levels, optimum, "{file} by the level-by-level search");
        if let Some(dp) = knapsack::dp_optimum(&inst) {
            assert_eq!(knapsack::format_value(dp, true), optimum, "{file} by dynamic programming");
        }
    }
}

#[test]
fn sat_matches_satlib_labels() {
    let rt = rt();
    for (file, label) in table("cnf/LABELS.tsv", '\t') {
        let f = sat::parse(&std::fs::read_to_string(data_dir().join("cnf").join(&file)).unwrap()).unwrap();
        let f2 = f.clone();
        let model = rt.run(move || sat::solve(&f2));
        assert_eq!(if model.is_some() { "SAT" } else { "UNSAT" }, label, "{file}");
        if let Some(m) = model {
            assert!(sat::satisfies(&f, &m), "{file}: the model must satisfy every clause");
        }
    }
}

#[test]
fn bad_inputs_are_clear_errors() {
    assert!(knapsack::parse("3 10\n1 2\n").unwrap_err().contains("unexpected end of input"));
    assert!(knapsack::parse("2 x").unwrap_err().contains("expected the capacity"));
    assert!(knapsack::parse("1 10 -5 3").unwrap_err().contains("≥ 0"));
    assert!(sat::parse("1 2 0\n").unwrap_err().contains("before the `p cnf` line"));
    assert!(sat::parse("p cnf 2 1\n1 3 0\n").unwrap_err().contains("above 2"));
    assert!(sat::parse("p cnf 2 2\n1 2 0\n").unwrap_err().contains("declares 2 clauses"));
    assert!(sat::parse("p cnf 2 1\n1 x 0\n").unwrap_err().contains("not a literal"));
    assert!(sat::parse("").unwrap_err().contains("no `p cnf"));
}

mod remote_calls {
    //! What a node does with a job that arrives as bytes: decode it or say
    //! why not, and never panic on bytes from a broken or hostile peer.

    use proptest::prelude::*;
    use satin::{check_call, encode_job, CallError};

    fn real_call(n: u32) -> Vec<u8> {
        // The annotated function's job (a hidden type the macro generates),
        // encoded as a remote steal sends it.
        let call = encode_job(&satin_examples::fib::__SatinJob_fib(n));
        assert_eq!(check_call(&call), Ok("satin_examples::fib::fib(u32) -> u64"));
        call
    }

    #[test]
    fn unknown_functions_and_bad_parameters_are_named() {
        let mut unknown = Vec::new();
        unknown.push(7u8);
        unknown.extend_from_slice(b"nothing");
        assert_eq!(check_call(&unknown), Err(CallError::UnknownFunction("nothing".into())));
        let good = real_call(20);
        assert!(matches!(check_call(&good[..good.len() - 1]), Err(CallError::BadParams { .. })));
        assert!(matches!(check_call(&[]), Err(CallError::Malformed(_))));
    }

    proptest! {
        #[test]
        fn arbitrary_and_mutated_calls_never_panic(
            garbage in proptest::collection::vec(any::<u8>(), 0..200),
            n in 0u32..40,
            at in any::<usize>(),
            flip in 1u8..,
        ) {
            let _ = check_call(&garbage);
            let mut call = real_call(n);
            let i = at % call.len();
            call[i] ^= flip;
            let _ = check_call(&call);
        }
    }
}
