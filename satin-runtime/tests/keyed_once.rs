//! A borrowed value enters a call's key as its digest, and a pinned one
//! (what a call that stays put borrows) is hashed once however many keys
//! carry it. One test in this binary: the byte counters are the process's.

use satin::{divide_and_conquer, Job};

#[divide_and_conquer]
fn total(xs: &[u64], scale: u64) -> u64 {
    if xs.len() <= 1 {
        return xs.first().copied().unwrap_or(0) * scale;
    }
    let (left, right) = xs.split_at(xs.len() / 2);
    total(left, scale) + total(right, scale)
}

fn hashed() -> u64 {
    satin::proto::values::counts().hashed
}

#[test]
fn a_pinned_value_is_hashed_once_for_every_key_that_carries_it() {
    let xs: Vec<u64> = (0..200_000u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).collect();
    let size = satin::proto::values::encoded_len(&xs[..]).unwrap() as u64;
    // Unpinned: every key reads the data again.
    let before = hashed();
    let plain = (1..=4).map(|s| __SatinJob_total(&xs, s).key()).collect::<Vec<_>>();
    assert!(hashed() - before >= 4 * size, "{} bytes hashed for 4 keys of {size}", hashed() - before);
    // Pinned: once, and the keys are the same.
    let job = __SatinJob_total(&xs, 1);
    let pinned = satin::__private::pin(&job);
    let before = hashed();
    let again = (1..=4).map(|s| __SatinJob_total(&xs, s).key()).collect::<Vec<_>>();
    let spent = hashed() - before;
    assert_eq!(again, plain, "pinning changes no key");
    assert!(spent >= size && spent < size + 4096, "{spent} bytes hashed for 4 keys of a pinned {size}");
    // A part of it is another value: hashed for itself.
    assert_ne!(__SatinJob_total(&xs[1..], 1).key(), plain[0]);
    drop(pinned);
    let before = hashed();
    assert_eq!(job.key(), plain[0]);
    assert!(hashed() - before >= size, "unpinned again: hashed again");
}
