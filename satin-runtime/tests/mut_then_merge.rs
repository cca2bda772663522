//! `&mut` with work after the calls: split, recurse on both parts, then
//! use the whole again (a merge). The calls still run in parallel, and
//! each part's borrow ends where its result is read.

use satin::{divide_and_conquer, Runtime};

/// Sorts `v` and counts its inversions: `let`s, then a merge over `v`.
#[divide_and_conquer]
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

/// The same with the merge in a `let` of its own, before the sum.
#[divide_and_conquer]
fn count_inversions_merge_let(v: &mut [i64]) -> u64 {
    if v.len() <= 1 {
        return 0;
    }
    let mid = v.len() / 2;
    let (left, right) = v.split_at_mut(mid);
    let a = count_inversions_merge_let(left);
    let b = count_inversions_merge_let(right);
    let c = merge(v, mid);
    a + b + c
}

/// Sorts `v`: calls as statements, then a merge.
#[divide_and_conquer]
fn merge_sort(v: &mut Vec<i64>) {
    if v.len() <= 1 {
        return;
    }
    let mut right = v.split_off(v.len() / 2);
    merge_sort(v);
    merge_sort(&mut right);
    v.append(&mut right);
    v.sort();
}

/// Merges the sorted halves `v[..mid]` and `v[mid..]`; returns the
/// inversions between them.
fn merge(v: &mut [i64], mid: usize) -> u64 {
    let (mut merged, mut inversions) = (Vec::with_capacity(v.len()), 0);
    let (mut i, mut j) = (0, mid);
    while i < mid && j < v.len() {
        if v[i] <= v[j] {
            merged.push(v[i]);
            i += 1;
        } else {
            merged.push(v[j]);
            inversions += (mid - i) as u64;
            j += 1;
        }
    }
    merged.extend_from_slice(&v[i..mid]);
    merged.extend_from_slice(&v[j..]);
    v.copy_from_slice(&merged);
    inversions
}

fn inversions_plain(v: &[i64]) -> u64 {
    let mut n = 0;
    for i in 0..v.len() {
        for j in i + 1..v.len() {
            n += u64::from(v[i] > v[j]);
        }
    }
    n
}

fn input(n: usize) -> Vec<i64> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 1000) as i64
        })
        .collect()
}

#[test]
fn calls_on_two_parts_then_a_merge_of_the_whole() {
    let data = input(3000);
    let mut sorted = data.clone();
    sorted.sort();
    let expected = inversions_plain(&data);
    for workers in [1, 2, 4] {
        let rt = Runtime::builder().workers(workers).spawn_limit(usize::MAX).plain_when_alone(false).build().unwrap();
        let mut v = data.clone();
        assert_eq!(rt.run(|| count_inversions(&mut v)), expected, "{workers} workers");
        assert_eq!(v, sorted);
        let mut v = data.clone();
        assert_eq!(rt.run(|| count_inversions_merge_let(&mut v)), expected, "{workers} workers");
        assert_eq!(v, sorted);
        let mut w = data.clone();
        rt.run(|| merge_sort(&mut w));
        assert_eq!(w, sorted);
        assert!(rt.stats().spawns > 2 * 1000, "the calls did not spawn: {:?}", rt.stats());
    }
}
