//! Checks of the library's parts one at a time (a k-d tree against brute
//! force, Strassen against the direct product, the TSP bound's 1-trees,
//! the campaign's draws, …): here, in the one test binary, rather than as
//! unit tests, which would build the whole library a second time.

mod campaign_draw {
    use satin_examples::campaign::draw::*;

    #[test]
    fn a_seed_draws_the_same_run_and_every_word_comes_up() {
        assert_eq!(draw(7), draw(7));
        let specs: Vec<String> = (0..400)
            .filter_map(|s| match draw(s).layout {
                Layout::Supervised { chaos, .. } => Some(chaos),
                Layout::ByHand { .. } => None,
            })
            .collect();
        for word in [
            "kill:",
            "leave:",
            "vanish:",
            "join:",
            "slow:",
            "hang:",
            "fail:",
            "partition:",
            "cut:",
            "split:",
            "loss:",
            "delay:",
            "suspend:",
            "kill:node=all",
        ] {
            assert!(specs.iter().any(|s| s.contains(word)), "{word} never drawn");
        }
        for spec in specs {
            assert!(satin::net::parse_chaos(&spec).is_ok(), "{spec}");
        }
    }
}

mod forms {
    use satin_examples::forms::*;

    #[test]
    fn every_form_gives_the_plain_answer() {
        let rt = satin::Runtime::builder().workers(2).build().unwrap();
        let mut xs = numbers(10_000, 1);
        assert_eq!(rt.run(|| checked_sum(&xs, 0)), checked_sum_plain(&xs, 0));
        xs[9_000] = -5;
        xs[9_500] = -7;
        assert_eq!(rt.run(|| checked_sum(&xs, 0)), Err(Negative { at: 9_000, value: -5 }));
        let tree = rt.run(|| Node::grow(7, 4, 1));
        assert_eq!(tree, grow_plain(7, 4, 1));
        assert_eq!(rt.run(|| tree.total()), tree.total_plain());
        assert_eq!(rt.run(|| minimax::max_value(0, 7, 4)), max_value_plain(0, 7, 4));
        let (mut a, mut b) = (numbers(5_000, 2), numbers(5_000, 2));
        assert_eq!(rt.run(|| count_inversions(&mut a)), count_inversions_plain(&mut b));
        assert_eq!(a, b);
    }
}

mod kdtree {
    use satin_examples::kdtree::*;

    #[test]
    fn the_tree_holds_every_point_and_the_count_matches_brute_force() {
        let points = random_points(3000, 7);
        let tree = build_plain(points.clone(), 0);
        assert_eq!(size(&tree), points.len());
        assert_eq!(build_kdtree(points.clone(), 0), tree);
        let r = 0.03;
        let brute: u64 = points
            .iter()
            .map(|p| {
                points.iter().filter(|q| (p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2) <= r * r).count() as u64 - 1
            })
            .sum();
        assert!(brute > 0);
        assert_eq!(count_close_plain(&tree, &tree, r), brute);
        assert_eq!(count_close(&tree, &tree, r), brute);
    }
}

mod as_written {
    use satin_examples::as_written::*;

    #[test]
    fn every_shape_gives_the_plain_answer_on_two_workers() {
        let rt = satin::Runtime::builder().workers(2).build().unwrap();
        let tree = Node::build(16).unwrap();
        assert_eq!(rt.run(|| sum(&tree)), sum_plain(&tree));
        assert_eq!(rt.run(|| grid_paths(0, 0, 12, (20, 20))), grid_paths_plain(0, 0, 12, (20, 20)));
        assert_eq!(rt.run(|| grid_paths(0, 0, 12, (9, 2))), Err((9, 2)));
        let game = Position::build(200_000, 3);
        let before = rt.stats().spawns;
        assert_eq!(rt.run(|| max_value(&game)), max_value_plain(&game));
        assert!(rt.stats().spawns > before, "functions that call each other spawned nothing");
        assert_eq!(sum_plain(&tree), (1 << 16) - 1);
        let owned = Owned::build(14, 5);
        assert_eq!(rt.run(|| total(owned.clone())), total_plain(owned));
        assert_eq!(rt.run(|| dac(Primes { lo: 0, hi: 100_000 })), 9592);
        let data: Vec<u32> = (0..5000u32).map(|i| i.wrapping_mul(2_654_435_761) % 1000).collect();
        assert_eq!(rt.run(|| dac_here(Inversions(&data))), dac_plain(Inversions(&data)));
        let before = rt.stats().spawns;
        assert!(before > 0);
        let want = negamax_plain(&mut Board::new(8), 6, 1);
        assert_eq!(rt.run(|| negamax(&mut Board::new(8), 6, 1)), want);
        assert_eq!(rt.run(|| negamax_copies(&Board::new(8), 6, 1)), want);
        assert!(rt.stats().spawns > before, "copy-make spawned nothing");
        let mut memo = std::collections::HashMap::new();
        let want = climbs_plain(60, &mut std::collections::HashMap::new());
        assert_eq!(rt.run(|| climbs(60, &mut memo)), want);
    }
}

mod pipeline {
    use satin_examples::pipeline::*;

    #[test]
    fn merging_sorted_blocks_sorts_them_all() {
        let (a, b) = (sort(&generate(0, 1000)), sort(&generate(1, 777)));
        let merged = numbers(&merge(&a, &b));
        assert_eq!(merged.len(), 1777);
        assert!(merged.windows(2).all(|w| w[0] <= w[1]));
        let mut both = numbers(&generate(0, 1000));
        both.extend(numbers(&generate(1, 777)));
        both.sort_unstable();
        assert_eq!(merged, both);
    }
}

mod natural {
    use satin_examples::natural::*;

    #[test]
    fn the_rayon_and_chili_twins_give_the_plain_answers() {
        let tree = Tree::build(12, 7);
        let mut scope = chili::Scope::global();
        assert_eq!(tree_sum_chili(&tree, &mut scope), tree_sum_plain(&tree));
        assert_eq!(tree_sum_rayon(&tree), tree_sum_plain(&tree));
        assert_eq!(satin_examples::fib::fib_chili(20, &mut scope), 6765);
        assert_eq!(satin_examples::fib::fib_rayon(20), 6765);
    }
}

mod kernels {
    use satin_examples::kernels::*;

    #[test]
    fn each_kernel_gives_its_plain_twin_s_answer_on_the_runtime() {
        let rt = satin::Runtime::builder().workers(2).build().expect("a runtime");
        let (a, b) = (Matrix::random(512, 1), Matrix::random(512, 2));
        let plain = strassen_plain(a.clone(), b.clone());
        assert!(rt.run(|| strassen(a.clone(), b.clone())) == plain);
        let direct = a.times(&b);
        let off = plain.data.iter().zip(&direct.data).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max);
        assert!(off < 1e-9, "Strassen's product is the product: off by {off}");

        let x = random_signal(1 << 14, 3);
        let spectrum = fft_plain(x.clone());
        assert!(rt.run(|| fft(x.clone())) == spectrum);
        // The first bin is the sum of the samples.
        assert!((spectrum[0].0 - x.iter().map(|s| s.0).sum::<f64>()).abs() < 1e-9);

        let points = random_disc(200_000, 4);
        let hull = quickhull_plain(&points);
        assert!(rt.run(|| quickhull(&points)) == hull);
        assert!(hull.len() > 3);
        for i in 0..hull.len() {
            let (p, q, r) = (hull[i], hull[(i + 1) % hull.len()], hull[(i + 2) % hull.len()]);
            assert!(cross(p, q, r) > 0.0, "a hull turns left at every corner");
        }

        let xs = random_numbers(1 << 20, 5);
        let sums = prefix_sums_plain(&xs);
        assert!(rt.run(|| prefix_sums(&xs)) == sums);
        assert!(scan(&xs) == sums);
        assert_eq!(sums[9], xs[..10].iter().sum::<u64>());
    }
}

mod tsp_tour {
    use satin_examples::tsp::tour::*;
    use satin_examples::tsp::Matrix;

    fn ring(n: usize) -> Matrix {
        // Cities on a circle, shuffled: the optimal tour goes round it.
        let order: Vec<usize> = (0..n).map(|i| (i * 7) % n).collect();
        let xy: Vec<(f64, f64)> = order
            .iter()
            .map(|&k| {
                let t = k as f64 / n as f64 * std::f64::consts::TAU;
                (1000.0 * t.cos(), 1000.0 * t.sin())
            })
            .collect();
        let d = (0..n * n)
            .map(|k| {
                let (a, b) = (xy[k / n], xy[k % n]);
                ((a.0 - b.0).hypot(a.1 - b.1)).round() as u32
            })
            .collect();
        Matrix { n, d }
    }

    #[test]
    fn improved_tours_visit_every_city_once_and_find_the_circle() {
        let m = ring(30);
        let (len, tour) = good_tour(&m);
        let mut seen = tour.clone();
        seen.sort();
        assert_eq!(seen, (0..30).collect::<Vec<_>>());
        assert_eq!(len, length(&m, &tour));
        // Round the circle: 30 chords of 2·1000·sin(π/30), each rounded.
        let chord = (2000.0 * (std::f64::consts::PI / 30.0).sin()).round() as u64;
        assert_eq!(len, 30 * chord);
    }
}

mod tsp_one_tree {
    use satin_examples::tsp::one_tree::*;
    use satin_examples::tsp::Matrix;

    fn square() -> Matrix {
        // Four corners of a unit square (scaled) and its centre: the
        // shortest tour is 100 + 100 + 71 + 71 + 100 = 442.
        let xy = [(0.0, 0.0), (100.0, 0.0), (100.0, 100.0), (0.0, 100.0), (50.0, 50.0)];
        let n = xy.len();
        let d = (0..n * n)
            .map(|k| {
                let (a, b): ((f64, f64), (f64, f64)) = (xy[k / n], xy[k % n]);
                (a.0 - b.0).hypot(a.1 - b.1).round() as u32
            })
            .collect();
        Matrix { n, d }
    }

    #[test]
    fn the_ascent_never_passes_the_optimum_and_finds_it_here() {
        let m = square();
        let edges = Edges::new(m.n, &Fixed::default()).unwrap();
        let plain = one_tree(&m, &edges, &[0.0; 5]).unwrap();
        assert_eq!(plain.edges.len(), 5);
        assert!(plain.bound <= 442.0);
        let up = ascend(&m, &edges, vec![0.0; 5], 442, Schedule::root(5)).unwrap();
        assert!(up.bound <= 442.0 + 1e-6, "{}", up.bound);
        assert!(up.bound > plain.bound, "the ascent raised the bound: {} -> {}", plain.bound, up.bound);
        assert_eq!(up.whole_bound(), 442);
    }

    #[test]
    fn fixed_edges_are_in_the_tree_or_out_of_it() {
        let m = square();
        // The diagonal 0-2 forced in; the edge 0-1 forced out.
        let fixed = Fixed { included: vec![(0, 2)], excluded: vec![(0, 1)] };
        let edges = Edges::new(m.n, &fixed).unwrap();
        let tree = one_tree(&m, &edges, &[0.0; 5]).unwrap();
        assert!(tree.edges.iter().any(|&(a, b)| (a.min(b), a.max(b)) == (0, 2)));
        assert!(!tree.edges.iter().any(|&(a, b)| (a.min(b), a.max(b)) == (0, 1)));
        // Three included edges at one city: no tour.
        let three = Fixed { included: vec![(0, 1), (0, 2), (0, 3)], excluded: vec![] };
        assert!(Edges::new(m.n, &three).is_none());
        // Included edges closing a triangle 1-2-3: no 1-tree holds them all.
        let cycle = Fixed { included: vec![(1, 2), (2, 3), (1, 3)], excluded: vec![] };
        assert!(one_tree(&m, &Edges::new(m.n, &cycle).unwrap(), &[0.0; 5]).is_none());
        // City 4 cut off from every other: none either.
        let cut = Fixed { included: vec![], excluded: (0..4).map(|c| (c, 4)).collect() };
        assert!(one_tree(&m, &Edges::new(m.n, &cut).unwrap(), &[0.0; 5]).is_none());
    }
}

mod knapsack_levels {
    use satin_examples::knapsack::levels::{merge, Pair};

    fn pairs(list: &[(f64, f64)]) -> Vec<Pair> {
        list.iter().map(|&(room, value)| Pair { room, value }).collect()
    }

    #[test]
    fn merging_keeps_exactly_the_pairs_no_other_beats() {
        let a = pairs(&[(1.0, 9.0), (3.0, 6.0), (7.0, 2.0)]);
        let b = pairs(&[(2.0, 9.5), (3.0, 7.0), (5.0, 1.0), (7.0, 2.0)]);
        // (1, 9) has less room and value than (2, 9.5); (3, 6) less value
        // than (3, 7) with the same room; (5, 1) less of both than (7, 2),
        // which is kept once.
        assert_eq!(merge(&a, &b), pairs(&[(2.0, 9.5), (3.0, 7.0), (7.0, 2.0)]));
        assert_eq!(merge(&[], &a), a);
        assert!(merge(&[], &[]).is_empty());
    }
}

mod negamax_twins {
    use satin_examples::forms::{max_value_plain, negamax, negamax_plain};

    #[test]
    fn negamax_and_its_plain_twin_score_the_minimax_tree() {
        let want = max_value_plain(0, 9, 4);
        assert_eq!(negamax_plain(0, 9, 4, 1), want);
        let rt = satin::Runtime::builder().workers(2).build().expect("a pool");
        assert_eq!(rt.run(|| negamax(0, 9, 4, 1)), want);
    }
}
