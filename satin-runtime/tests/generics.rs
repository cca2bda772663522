//! Generic functions as written: any type argument that can travel works
//! locally and in parallel; each instantiation is a function of its own
//! on the wire (its own id and keys), registered when first keyed or
//! encoded; an instantiation a process has not registered is refused,
//! not failed.

use satin::{check_call, divide_and_conquer, encode_job, knows_call, Job, Runtime};
use serde::{Deserialize, Serialize};

/// Merge sort over any ordered type: borrowed input, owned output.
#[divide_and_conquer]
fn msort<T: Ord + Clone>(v: &[T]) -> Vec<T> {
    if v.len() <= 1 {
        return v.to_vec();
    }
    let (a, b) = v.split_at(v.len() / 2);
    let left = msort(a);
    let right = msort(b);
    merge(left, right)
}

fn merge<T: Ord>(a: Vec<T>, b: Vec<T>) -> Vec<T> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut a, mut b) = (a.into_iter().peekable(), b.into_iter().peekable());
    while let (Some(x), Some(y)) = (a.peek(), b.peek()) {
        out.push(if x <= y { a.next() } else { b.next() }.expect("peeked"));
    }
    out.extend(a);
    out.extend(b);
    out
}

/// Owned parameters, two type parameters, a `where` clause, and the
/// recursive calls written with a turbofish.
#[divide_and_conquer]
fn fold_pairs<K, V>(items: Vec<(K, V)>) -> (usize, Option<K>)
where
    K: Ord + Clone,
    V: Clone,
{
    if items.len() <= 2 {
        return (items.len(), items.iter().map(|(k, _)| k.clone()).max());
    }
    let right = items[items.len() / 2..].to_vec();
    let left = items[..items.len() / 2].to_vec();
    let (n, a) = fold_pairs::<K, V>(left);
    let (m, b) = fold_pairs::<K, V>(right);
    (n + m, a.max(b))
}

/// A user type as the type argument.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Debug, Serialize, Deserialize)]
struct Word(String);

fn words(n: usize) -> Vec<Word> {
    (0..n).map(|i| Word(format!("w{:05}", (i * 7919) % n))).collect()
}

#[test]
fn a_generic_function_sorts_any_type_in_parallel() {
    let rt = Runtime::builder().workers(2).build().unwrap();
    let ints: Vec<i64> = (0..20_000).map(|i| (i * 7919) % 20_011 - 10_000).collect();
    let mut expected = ints.clone();
    expected.sort();
    assert_eq!(rt.run(|| msort(&ints)), expected);
    assert_eq!(msort(&ints), expected, "no runtime: the sequential function");
    let spawns = rt.stats().spawns;
    assert!(spawns > 0, "msort::<i64> spawned nothing: {:?}", rt.stats());
    let ws = words(3_000);
    let mut expected = ws.clone();
    expected.sort();
    assert_eq!(rt.run(|| msort(&ws)), expected);
    assert!(rt.stats().spawns > spawns, "msort::<Word> spawned nothing: {:?}", rt.stats());
}

#[test]
fn turbofish_calls_and_where_clauses_spawn() {
    let rt = Runtime::builder().workers(2).build().unwrap();
    let items: Vec<(u32, String)> = (0..5_000u32).map(|i| ((i * 31) % 4_999, i.to_string())).collect();
    let plain = (items.len(), items.iter().map(|(k, _)| *k).max());
    assert_eq!(rt.run(|| fold_pairs(items.clone())), plain);
    assert!(rt.stats().spawns > 0, "fold_pairs::<K, V>(..) spawned nothing: {:?}", rt.stats());
    assert_eq!(fold_pairs(items), plain);
}

#[test]
fn each_instantiation_travels_under_its_own_id_and_keys() {
    let small: &[u32] = &[3, 1, 2];
    let large: &[u64] = &[3, 1, 2];
    // The same bytes, different functions: different keys.
    assert_ne!(__SatinJob_msort(small).key(), __SatinJob_msort(large).key());
    assert_eq!(__SatinJob_msort(small).key(), __SatinJob_msort(small).key());
    let id = <__SatinJob_msort<'static, u32> as Job>::instance_id();
    assert_eq!(id, concat!(module_path!(), "::msort(& [T]) -> Vec < T >", "::<u32>"));
    assert_eq!(<__SatinJob_msort<'static, u32> as Job>::FN_ID, concat!(module_path!(), "::msort(& [T]) -> Vec < T >"));
    // Keyed, so registered: the encoded call decodes here.
    let payload = encode_job(&__SatinJob_msort(small));
    assert_eq!(check_call(&payload), Ok(id));
    assert!(knows_call(&payload));
}

#[test]
fn an_instantiation_this_process_never_used_is_refused_not_failed() {
    // What another process would send for `msort::<u8>`, which this test
    // program never calls, keys or encodes.
    let id = concat!(module_path!(), "::msort(& [T]) -> Vec < T >::<u8>");
    let payload = postcard::to_allocvec(&(id, (vec![3u8, 1, 2],))).unwrap();
    assert!(!knows_call(&payload), "an unregistered instantiation must be refused");
    assert_eq!(check_call(&payload), Err(satin::CallError::UnknownFunction(id.to_string())));
    // Used once outside a run, an instantiation is known from then on.
    let id16 = concat!(module_path!(), "::msort(& [T]) -> Vec < T >::<u16>");
    let payload16 = postcard::to_allocvec(&(id16, (vec![3u16, 1, 2],))).unwrap();
    assert!(!knows_call(&payload16));
    assert_eq!(msort(&[2u16, 1]), vec![1, 2]);
    assert!(knows_call(&payload16), "a call outside a run registers the instantiation");
    // The generic function itself is part of what nodes compare.
    assert!(satin::function_ids().contains(&concat!(module_path!(), "::msort(& [T]) -> Vec < T >")));
}

/// A generic type's methods: `#[divide_and_conquer]` on a generic `impl`.
#[derive(Clone, Debug, Serialize, Deserialize)]
enum Tree<T> {
    Leaf(T),
    Node(Box<Tree<T>>, Box<Tree<T>>),
}

#[divide_and_conquer]
impl<T: Clone + std::ops::Add<Output = T>> Tree<T> {
    /// The sum of the leaves (`&self`, recursing through `Box`es).
    #[divide_and_conquer]
    fn total(&self) -> T {
        match self {
            Tree::Leaf(v) => v.clone(),
            Tree::Node(l, r) => {
                let a = l.total();
                let b = r.total();
                a + b
            }
        }
    }

    /// A generic method of the generic type: the leaves mapped by `U`'s
    /// `From`, then summed.
    #[divide_and_conquer]
    fn total_as<U>(&self, zero: U) -> U
    where
        U: From<T> + std::ops::Add<Output = U> + Clone,
    {
        match self {
            Self::Leaf(v) => zero + U::from(v.clone()),
            Self::Node(l, r) => {
                let a = l.total_as(zero.clone());
                let b = r.total_as(zero);
                a + b
            }
        }
    }
}

fn tree(depth: u32, next: &mut u32) -> Tree<u32> {
    if depth == 0 {
        *next += 1;
        return Tree::Leaf(*next);
    }
    Tree::Node(Box::new(tree(depth - 1, next)), Box::new(tree(depth - 1, next)))
}

#[test]
fn methods_of_a_generic_type_spawn() {
    let rt = Runtime::builder().workers(2).build().unwrap();
    let t = tree(14, &mut 0);
    let n = 1u64 << 14;
    assert_eq!(rt.run(|| t.total()) as u64, n * (n + 1) / 2);
    let spawns = rt.stats().spawns;
    assert!(spawns > 0, "Tree::<u32>::total spawned nothing: {:?}", rt.stats());
    assert_eq!(rt.run(|| t.total_as(0u64)), n * (n + 1) / 2);
    assert!(rt.stats().spawns > spawns, "total_as::<u64> spawned nothing: {:?}", rt.stats());
    assert_eq!(t.total_as(0u64), n * (n + 1) / 2);
}

/// In place, through `&mut [T]`: the calls' changes come back into the
/// caller's slice (on another node, with the result).
#[divide_and_conquer]
fn quicksort<T: Ord>(v: &mut [T]) {
    if v.len() <= 1 {
        return;
    }
    let last = v.len() - 1;
    let mut store = 0;
    for i in 0..last {
        if v[i] < v[last] {
            v.swap(i, store);
            store += 1;
        }
    }
    v.swap(store, last);
    let (lo, hi) = v.split_at_mut(store);
    quicksort(lo);
    quicksort(&mut hi[1..]);
}

#[test]
fn a_generic_in_place_sort_changes_the_callers_slice() {
    let rt = Runtime::builder().workers(2).build().unwrap();
    let mut xs: Vec<i32> = (0..50_000).map(|i| (i * 7919) % 50_021).collect();
    let mut expected = xs.clone();
    expected.sort();
    rt.run(|| quicksort(&mut xs));
    assert_eq!(xs, expected);
    let mut ws = words(2_000);
    let mut expected = ws.clone();
    expected.sort();
    rt.run(|| quicksort(&mut ws));
    assert_eq!(ws, expected);
    // The outcome of a call run elsewhere: the value, then the slice.
    let mut part = vec![3i32, 1, 2];
    let outcome = postcard::to_allocvec(&((), vec![1i32, 2, 3])).unwrap();
    Job::accept(__SatinJob_quicksort(&mut part), &outcome).unwrap();
    assert_eq!(part, vec![1, 2, 3]);
}
