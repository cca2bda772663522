//! A divide-and-conquer skeleton over a trait, as written: the result is
//! the problem's associated type, whose bounds the attribute adds; an
//! instance that owns its data travels, an instance that borrows runs
//! through the same skeleton marked `local`.
#![allow(deprecated)]

use satin::{divide_and_conquer, Job, Runtime};
use serde::{Deserialize, Serialize};

/// A problem that splits into two of itself, or is solved directly.
pub trait Problem: Sized {
    type Out;
    fn small(&self) -> bool;
    fn solve(&self) -> Self::Out;
    fn split(&self) -> (Self, Self);
    fn combine(a: Self::Out, b: Self::Out) -> Self::Out;
}

#[divide_and_conquer]
fn dac<P: Problem>(p: P) -> P::Out {
    if p.small() {
        return p.solve();
    }
    let (l, r) = p.split();
    let a = dac(l);
    let b = dac(r);
    P::combine(a, b)
}

/// The same skeleton for problems that borrow: its calls stay local.
#[divide_and_conquer(local)]
fn dac_here<P: Problem>(p: P) -> P::Out {
    if p.small() {
        return p.solve();
    }
    let (l, r) = p.split();
    let a = dac_here(l);
    let b = dac_here(r);
    P::combine(a, b)
}

fn dac_plain<P: Problem>(p: P) -> P::Out {
    if p.small() {
        return p.solve();
    }
    let (l, r) = p.split();
    P::combine(dac_plain(l), dac_plain(r))
}

/// Sums of squares over a range: owns what it needs, travels.
#[derive(Serialize, Deserialize)]
struct Squares {
    lo: u64,
    hi: u64,
}

impl Problem for Squares {
    type Out = u64;
    fn small(&self) -> bool {
        self.hi - self.lo <= 1000
    }
    fn solve(&self) -> u64 {
        (self.lo..self.hi).map(|x| x * x % 1_000_003).sum()
    }
    fn split(&self) -> (Self, Self) {
        let mid = (self.lo + self.hi) / 2;
        (Squares { lo: self.lo, hi: mid }, Squares { lo: mid, hi: self.hi })
    }
    fn combine(a: u64, b: u64) -> u64 {
        a + b
    }
}

/// The largest element of a slice and how often it occurs: borrows.
struct MaxCount<'a>(&'a [u32]);

impl Problem for MaxCount<'_> {
    type Out = (u32, usize);
    fn small(&self) -> bool {
        self.0.len() <= 256
    }
    fn solve(&self) -> (u32, usize) {
        let m = self.0.iter().copied().max().unwrap_or(0);
        (m, self.0.iter().filter(|&&x| x == m).count())
    }
    fn split(&self) -> (Self, Self) {
        let (a, b) = self.0.split_at(self.0.len() / 2);
        (MaxCount(a), MaxCount(b))
    }
    fn combine(a: (u32, usize), b: (u32, usize)) -> (u32, usize) {
        match a.0.cmp(&b.0) {
            std::cmp::Ordering::Greater => a,
            std::cmp::Ordering::Less => b,
            std::cmp::Ordering::Equal => (a.0, a.1 + b.1),
        }
    }
}

#[test]
fn a_skeleton_over_a_trait_runs_an_owning_instance_and_a_borrowing_one_in_parallel() {
    let rt = Runtime::builder().workers(2).build().unwrap();
    let want = dac_plain(Squares { lo: 0, hi: 1_000_000 });
    assert_eq!(rt.run(|| dac(Squares { lo: 0, hi: 1_000_000 })), want);
    let spawns = rt.stats().spawns;
    assert!(spawns > 0, "dac::<Squares> spawned nothing");
    // The owning instance's calls travel: they are keyed and encoded.
    let call = __SatinJob_dac(Squares { lo: 0, hi: 10 });
    assert_ne!(call.key(), __SatinJob_dac(Squares { lo: 0, hi: 11 }).key());
    assert_eq!(<__SatinJob_dac<Squares> as Job>::LOCAL, None);

    let data: Vec<u32> = (0..200_000u32).map(|i| i.wrapping_mul(2_654_435_761) % 50_000).collect();
    let want = dac_plain(MaxCount(&data));
    assert_eq!(rt.run(|| dac_here(MaxCount(&data))), want);
    assert!(rt.stats().spawns > spawns, "dac_here::<MaxCount> spawned nothing");
    assert_eq!(<__SatinJob_dac_here<MaxCount<'_>> as Job>::LOCAL, Some("is marked `local`"));
}
