//! Functions annotated as they are written: borrowed and `&mut`
//! parameters, calls as statements — on 1, 2 and 4 workers, against the
//! same body without the annotation.

use satin::{divide_and_conquer, encode_job, Job, Runtime};
use serde::{Deserialize, Serialize};

#[divide_and_conquer]
fn sum(xs: &[u64]) -> u64 {
    if xs.len() <= 1 {
        return xs.first().copied().unwrap_or(0);
    }
    let (left, right) = xs.split_at(xs.len() / 2);
    sum(left) + sum(right)
}

fn partition(v: &mut [u64]) -> usize {
    let last = v.len() - 1;
    v.swap(v.len() / 2, last);
    let mut store = 0;
    for i in 0..last {
        if v[i] < v[last] {
            v.swap(i, store);
            store += 1;
        }
    }
    v.swap(store, last);
    store
}

#[divide_and_conquer]
fn quicksort(v: &mut [u64]) {
    if v.len() <= 1 {
        return;
    }
    let p = partition(v);
    let (lo, hi) = v.split_at_mut(p);
    quicksort(lo);
    quicksort(&mut hi[1..]);
}

#[derive(Serialize, Deserialize, Clone, Debug)]
enum Tree {
    Leaf(u64),
    Node(Box<Tree>, Box<Tree>),
}

fn build(depth: u32, seed: u64) -> Tree {
    if depth == 0 {
        return Tree::Leaf(seed % 1000);
    }
    Tree::Node(Box::new(build(depth - 1, seed * 3 + 1)), Box::new(build(depth - 1, seed * 7 + 2)))
}

#[divide_and_conquer]
fn tree_sum(t: &Tree) -> u64 {
    match t {
        Tree::Leaf(v) => *v,
        Tree::Node(l, r) => {
            let a = tree_sum(l);
            let b = tree_sum(r);
            a + b
        }
    }
}

#[divide_and_conquer]
fn count_vowels(s: &str) -> usize {
    if s.len() <= 8 {
        return s.chars().filter(|c| "aeiou".contains(*c)).count();
    }
    let mid = (0..=s.len() / 2).rev().find(|&i| s.is_char_boundary(i)).unwrap_or(0);
    count_vowels(&s[..mid]) + count_vowels(&s[mid..])
}

/// `&mut T` with an owned parameter beside it.
#[divide_and_conquer]
fn fill(v: &mut Vec<u32>, n: u32) -> u32 {
    if n == 0 {
        return 0;
    }
    v.push(n);
    fill(v, n - 1) + 1
}

fn data(n: usize) -> Vec<u64> {
    let mut x = 88172645463325252u64;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % 1_000_000
        })
        .collect()
}

#[test]
fn borrowed_parameters_give_the_plain_results_on_any_number_of_workers() {
    let xs = data(100_000);
    let text: String = (0..5_000).map(|i| ["ab", "ei", "xyz", "ou", "é"][i % 5]).collect();
    let tree = build(14, 1);
    let plain_tree = tree_sum(&tree);
    for workers in [1, 2, 4] {
        let rt = Runtime::builder().workers(workers).build().unwrap();
        assert_eq!(rt.run(|| sum(&xs)), xs.iter().sum::<u64>(), "{workers} workers");
        assert_eq!(rt.run(|| tree_sum(&tree)), plain_tree);
        assert_eq!(rt.run(|| count_vowels(&text)), text.chars().filter(|c| "aeiou".contains(*c)).count());
        let mut v = xs.clone();
        rt.run(|| quicksort(&mut v));
        let mut sorted = xs.clone();
        sorted.sort_unstable();
        assert_eq!(v, sorted, "{workers} workers");
        let mut filled = Vec::new();
        assert_eq!(rt.run(|| fill(&mut filled, 50)), 50);
        assert_eq!(filled, (1..=50).rev().collect::<Vec<u32>>());
    }
}

/// What travels is what the call reads: a borrowed slice encodes as the
/// owned vector would, after the tag that says its data comes along, and
/// enters the call's key as the digest of that encoding (a large value
/// passed down unchanged is keyed once, not at every call).
#[test]
fn a_borrowed_call_travels_as_its_data_and_keys_as_its_digest() {
    let xs = vec![3u64, 1, 2];
    let borrowed = __SatinJob_sum(&xs);
    let data = postcard::to_allocvec(&xs).unwrap();
    let mut travels = postcard::to_allocvec(&<__SatinJob_sum<'static> as Job>::FN_ID).unwrap();
    travels.push(0);
    travels.extend_from_slice(&data);
    assert_eq!(encode_job(&borrowed), travels);
    let digest = *blake3::hash(&data).as_bytes();
    assert_eq!(borrowed.key(), <__SatinJob_sum<'static> as Job>::key_of_params(&digest));
    let other = vec![3u64, 1, 2];
    assert_eq!(borrowed.key(), __SatinJob_sum(&other).key(), "the same data, the same key");
    assert_ne!(borrowed.key(), __SatinJob_sum(&xs[..2]).key());
    assert_eq!(satin::check_call(&encode_job(&borrowed)), Ok(<__SatinJob_sum<'static> as Job>::FN_ID));
}

/// A `&mut` call's outcome is its result and the new contents of what it
/// changed; taking the outcome writes them into the caller's borrow.
#[test]
fn a_mut_call_outcome_writes_back_into_the_borrow() {
    let mut v = vec![5u64, 4, 3];
    let outcome = postcard::to_allocvec(&((), vec![3u64, 4, 5])).unwrap();
    __SatinJob_quicksort(&mut v).accept(&outcome).expect("a well-formed outcome");
    assert_eq!(v, [3, 4, 5]);
    // Another length: refused, and the borrow is left alone.
    let short = postcard::to_allocvec(&((), vec![1u64])).unwrap();
    let e = __SatinJob_quicksort(&mut v).accept(&short).expect_err("a slice of another length");
    assert!(e.to_string().contains("3 elements"), "{e}");
    assert_eq!(v, [3, 4, 5]);
    let garbage = [0xffu8; 2];
    assert!(__SatinJob_quicksort(&mut v).accept(&garbage).is_err());
}

#[divide_and_conquer]
fn span(lo: u64, hi: u64, label: String) -> u64 {
    if hi - lo <= 1 {
        return lo + label.len() as u64;
    }
    let mid = (lo + hi) / 2;
    span(lo, mid, label.clone()) + span(mid, hi, label)
}

/// An owned call encodes as the tuple of its parameters — what serde's
/// derive wrote for the job type, so keys stay what they were — and decodes
/// back; bytes that end early are an error, not a panic.
#[test]
fn an_owned_call_encodes_as_the_tuple_of_its_parameters() {
    let job = __SatinJob_span(3, 9, "ab".to_string());
    let params = postcard::to_allocvec(&(3u64, 9u64, "ab")).unwrap();
    assert_eq!(postcard::to_allocvec(&job).unwrap(), params);
    assert_eq!(job.key(), <__SatinJob_span as satin::Job>::key_of_params(&params));
    let back: __SatinJob_span = postcard::from_bytes(&params).unwrap();
    assert_eq!((back.0, back.1, back.2.as_str()), (3, 9, "ab"));
    assert!(postcard::from_bytes::<__SatinJob_span>(&params[..2]).is_err());
    assert_eq!(Runtime::builder().workers(2).build().unwrap().run(|| span(0, 8, "x".into())), 28 + 8);
}

#[derive(Serialize, Deserialize)]
struct Branch {
    value: u64,
    left: Option<Box<Branch>>,
    right: Option<Box<Branch>>,
}

/// The fix the note for `Option<&T>` names (`tests/compile-errors/ui/optional_borrow_param.rs`):
/// a reference to the owned option, which travels as any `&T`.
#[divide_and_conquer]
fn branch_sum(node: &Option<Box<Branch>>) -> u64 {
    let Some(n) = node else { return 0 };
    n.value + branch_sum(&n.left) + branch_sum(&n.right)
}

fn branch(depth: u32, value: u64) -> Option<Box<Branch>> {
    (depth > 0).then(|| {
        Box::new(Branch { value, left: branch(depth - 1, 2 * value), right: branch(depth - 1, 2 * value + 1) })
    })
}

#[test]
fn a_reference_to_an_owned_option_travels_and_gives_the_plain_answer() {
    assert!(<__SatinJob_branch_sum<'static> as Job>::LOCAL.is_none(), "its calls may go to other nodes");
    let tree = branch(12, 1);
    let plain: u64 = (1..1u64 << 12).sum();
    for workers in [1, 2, 4] {
        let rt = Runtime::builder().workers(workers).build().unwrap();
        assert_eq!(rt.run(|| branch_sum(&tree)), plain, "{workers} workers");
    }
    let job = __SatinJob_branch_sum(&tree);
    assert_eq!(satin::check_call(&encode_job(&job)), Ok(<__SatinJob_branch_sum<'static> as Job>::FN_ID));
}
