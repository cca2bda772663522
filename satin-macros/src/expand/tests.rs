//! Expansion snapshots: one per recognised form. `cargo insta review` (or
//! `INSTA_UPDATE=always`) updates them after an intended change.

use quote::quote;

fn expand(item: proc_macro2::TokenStream) -> String {
    let out = crate::expand_item(quote!(), item);
    let file: syn::File = syn::parse2(out).expect("expansion parses as a file");
    prettyplease::unparse(&file)
}

macro_rules! snapshot {
    ($name:ident, $($item:tt)*) => {
        #[test]
        fn $name() {
            insta::assert_snapshot!(expand(quote!($($item)*)));
        }
    };
}

snapshot!(
    let_spawns_with_last_inline,
    pub fn fib(n: u32) -> u64 {
        if n < 2 {
            return n as u64;
        }
        let x = fib(n - 1);
        let y = fib(n - 2);
        x + y
    }
);

snapshot!(
    expression_with_two_calls,
    fn fib(n: u32) -> u64 {
        if n < 2 {
            n as u64
        } else {
            fib(n - 1) + fib(n - 2)
        }
    }
);

snapshot!(
    match_arm_expression,
    fn fib(n: u32) -> u64 {
        match n {
            0 | 1 => n as u64,
            _ => fib(n - 1) + fib(n - 2),
        }
    }
);

snapshot!(
    speculative_early_return,
    fn search(depth: u32, goal: u32) -> bool {
        if depth == goal {
            return true;
        }
        if depth > 20 {
            return false;
        }
        let left = search(depth + 1, goal);
        let right = search(depth + 2, goal);
        if left {
            return true;
        }
        right
    }
);

snapshot!(
    loop_accumulate,
    fn count(n: u32, row: u32) -> u64 {
        if row == n {
            return 1;
        }
        let mut total = 0;
        for col in 0..n {
            if col != row {
                total += count(n, row + 1);
            }
        }
        total
    }
);

snapshot!(
    loop_push,
    fn squares(n: u32) -> Vec<u64> {
        if n == 0 {
            return vec![];
        }
        let mut parts = Vec::new();
        let mut i = 0;
        while i < 2 {
            parts.push(squares(n / 2));
            i += 1;
        }
        parts.concat()
    }
);

snapshot!(
    iterator_sum_and_collect,
    fn tree(n: u32) -> u64 {
        if n == 0 {
            return 1;
        }
        let s: u64 = (0..3).map(|i| tree(n - 1 + i * 0)).sum();
        let v: Vec<u64> = (0..2).map(|_| tree(n - 1)).collect();
        s + v.iter().sum::<u64>()
    }
);

snapshot!(
    unrecognised_form_stays_a_call,
    fn depth(n: u32) -> u32 {
        if n == 0 {
            0
        } else {
            1 + depth(n - 1)
        }
    }
);

snapshot!(
    borrowed_and_mut_parameters_with_statement_calls,
    fn quicksort(v: &mut [u64], cut: &Cut) {
        if v.len() <= cut.0 {
            return v.sort();
        }
        let p = partition(v);
        let (lo, hi) = v.split_at_mut(p);
        quicksort(lo, cut);
        quicksort(&mut hi[1..], cut);
    }
);

snapshot!(
    calls_holding_the_same_mut_borrow_stay_in_order,
    fn twice(v: &mut Vec<u8>, n: u32) {
        if n == 0 {
            return;
        }
        twice(v, n - 1);
        twice(v, n - 1);
    }
);

snapshot!(
    or_spawns_its_right_call_speculatively,
    fn found(lo: u64, hi: u64) -> bool {
        if hi - lo == 1 {
            return lo == 7;
        }
        let mid = (lo + hi) / 2;
        found(lo, mid) || found(mid, hi)
    }
);

snapshot!(
    any_over_children_is_a_race,
    fn reachable(node: u32, depth: u32) -> bool {
        if depth == 0 {
            return node == 7;
        }
        (0..3).any(|k| reachable(node * 3 + k, depth - 1))
    }
);

snapshot!(
    or_else_is_a_race,
    fn first_model(lo: u32, hi: u32) -> Option<u32> {
        if hi - lo <= 1 {
            return (lo % 5 == 3).then_some(lo);
        }
        let mid = (lo + hi) / 2;
        first_model(lo, mid).or_else(|| first_model(mid, hi))
    }
);

#[test]
fn errors_keep_the_item() {
    let out = crate::expand_item(
        quote!(),
        quote!(
            struct S;
        ),
    )
    .to_string();
    assert!(out.contains("struct S"), "{out}");
    assert!(out.contains("compile_error"), "{out}");
}

snapshot!(
    question_mark_lets_spawn_and_apply_their_marks_in_order,
    fn checked(lo: u64, hi: u64) -> Result<u64, String> {
        if hi - lo == 1 {
            return Ok(lo);
        }
        let mid = (lo + hi) / 2;
        let left = checked(lo, mid)?;
        let right = checked(mid, hi)?;
        Ok(left + right)
    }
);

snapshot!(
    question_mark_statements_and_loops,
    fn visit(node: u64, depth: u32) -> Option<u64> {
        if depth == 0 {
            return Some(node);
        }
        visit(node * 2, depth - 1)?;
        visit(node * 2 + 1, depth - 1)?;
        let mut total = 0;
        for k in 0..3 {
            total += visit(node * 3 + k, depth - 1)?;
        }
        Some(total)
    }
);

snapshot!(
    methods_of_an_impl_block,
    impl Tree {
        #[divide_and_conquer]
        pub fn total(&self) -> u64 {
            self.value + self.children.iter().map(|c| c.total()).sum::<u64>()
        }

        #[divide_and_conquer]
        fn add(&mut self, by: u64) {
            self.value += by;
            let (l, r) = self.children.split_at_mut(1);
            l[0].add(by);
            r[0].add(by);
        }

        fn untouched(&self) -> u64 {
            self.value
        }
    }
);

snapshot!(
    mut_parts_then_the_whole,
    fn count_inversions(v: &mut [i64]) -> u64 {
        if v.len() <= 1 {
            return 0;
        }
        let mid = v.len() / 2;
        let (left, right) = v.split_at_mut(mid);
        let a = count_inversions(left);
        let b = count_inversions(right);
        a + b + merge(v, mid)
    }
);

snapshot!(
    a_module_of_functions_that_call_each_other,
    mod game {
        #[divide_and_conquer]
        pub fn max_value(pos: u64, depth: u32) -> i64 {
            if depth == 0 {
                return 0;
            }
            (0..3).map(|m| min_value(pos * 3 + m, depth - 1)).max().unwrap()
        }

        #[divide_and_conquer]
        pub fn min_value(pos: u64, depth: u32) -> i64 {
            if depth == 0 {
                return 0;
            }
            let a = max_value(pos * 2, depth - 1);
            let b = max_value(pos * 2 + 1, depth - 1);
            a.min(b)
        }
    }
);

snapshot!(
    loop_reading_each_result_is_split,
    fn best(node: u64, depth: u32) -> u64 {
        if depth == 0 {
            return node;
        }
        let mut top = 0;
        for k in 0..4 {
            let child = node * 4 + k;
            let v = best(child, depth - 1);
            if v > top {
                top = v + child;
            }
        }
        top
    }
);

snapshot!(
    generic_function_with_a_turbofish_call,
    fn msort<T: Ord + Clone>(v: &[T]) -> Vec<T>
    where
        T: std::fmt::Debug,
    {
        if v.len() <= 1 {
            return v.to_vec();
        }
        let (a, b) = v.split_at(v.len() / 2);
        let (x, n) = (msort::<T>(a), 0);
        let y = msort(b);
        merge(x, y, n)
    }
);

snapshot!(
    destructuring_lets_spawn,
    fn min_max(v: &[i64]) -> (i64, i64) {
        if v.len() == 1 {
            return (v[0], v[0]);
        }
        let (a, b) = v.split_at(v.len() / 2);
        let (lo1, hi1) = min_max(a);
        let (lo2, hi2) = min_max(b);
        (lo1.min(lo2), hi1.max(hi2))
    }
);

snapshot!(
    match_lets_spawn_the_first_and_run_the_last_inline,
    fn sum(n: &Node) -> u64 {
        let l = match &n.left {
            Some(l) => sum(l),
            None => 0,
        };
        let r = match &n.right {
            Some(r) => sum(r),
            None => 0,
        };
        n.value + l + r
    }
);

snapshot!(
    conditional_lets_with_question_marks,
    fn paths(r: u32, c: u32, n: u32) -> Result<u64, u32> {
        if r == 3 && c == 2 {
            return Err(r);
        }
        let down = if r + 1 < n { paths(r + 1, c, n)? } else { 0 };
        let right = if c + 1 < n { paths(r, c + 1, n)? } else { 0 };
        Ok(down + right)
    }
);
