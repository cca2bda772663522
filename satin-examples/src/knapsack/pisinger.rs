//! Pisinger's knapsack instance families ("Where are the hard knapsack
//! problems?", Computers & Operations Research 32, 2005), generated as his
//! `genhard` generator does — the same random numbers (a 48-bit linear
//! congruential generator seeded with the instance number), so
//! `generate(Family::Uncorrelated, 100, 1000, 1, 100)` is the
//! published `knapPI_1_100_1000_1`.
//!
//! The hard ones for branch and bound are the strongly correlated (profit =
//! weight + R/10: every item has almost the same density, so Dantzig's
//! bound barely separates packings) and the spanner families (every item a
//! small multiple of one of two "spanner" items: many packings tie).
//! Instance `i` of a series of `s` has capacity `i / (s + 1)` of the total
//! weight.

use std::fmt::Write;

/// An instance family, by Pisinger's type number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Uncorrelated = 1,
    WeaklyCorrelated = 2,
    StronglyCorrelated = 3,
    InverseStronglyCorrelated = 4,
    AlmostStronglyCorrelated = 5,
    SubsetSum = 6,
    UncorrelatedSpanner = 11,
    WeaklyCorrelatedSpanner = 12,
    StronglyCorrelatedSpanner = 13,
    MultipleStronglyCorrelated = 14,
    ProfitCeiling = 15,
    Circle = 16,
}

impl Family {
    /// The family of type number `t`.
    pub fn from_type(t: u32) -> Option<Family> {
        use Family::*;
        Some(match t {
            1 => Uncorrelated,
            2 => WeaklyCorrelated,
            3 => StronglyCorrelated,
            4 => InverseStronglyCorrelated,
            5 => AlmostStronglyCorrelated,
            6 => SubsetSum,
            11 => UncorrelatedSpanner,
            12 => WeaklyCorrelatedSpanner,
            13 => StronglyCorrelatedSpanner,
            14 => MultipleStronglyCorrelated,
            15 => ProfitCeiling,
            16 => Circle,
            _ => return None,
        })
    }

    fn spanner(self) -> bool {
        matches!(
            self,
            Family::UncorrelatedSpanner | Family::WeaklyCorrelatedSpanner | Family::StronglyCorrelatedSpanner
        )
    }
}

/// The generator's random numbers: the classic `lrand48` recurrence in two
/// 32-bit halves (`x ← 0x5DEECE66D·x + 0xB mod 2⁴⁸`, the high 31 bits out).
struct Lrand48 {
    high: u32,
    low: u32,
}

impl Lrand48 {
    fn seeded(seed: u32) -> Lrand48 {
        Lrand48 { high: seed, low: 0x330E }
    }

    fn next(&mut self) -> u32 {
        self.high = self.high.wrapping_mul(0xDEEC_E66D).wrapping_add(self.low.wrapping_mul(0x5DEEC));
        self.low = self.low.wrapping_mul(0xE66D).wrapping_add(0xB);
        self.high = self.high.wrapping_add(self.low >> 16);
        self.low &= 0xFFFF;
        self.high >> 1
    }

    /// Uniform in `0..bound` (as the generator draws it: a remainder).
    fn below(&mut self, bound: i64) -> i64 {
        i64::from(self.next()) % bound
    }
}

/// Items `(profit, weight)` and the capacity of instance `instance` (1 ≤
/// `instance` ≤ `series`) of `family` with `n` items and coefficients up
/// to `range`.
pub fn generate(
    family: Family,
    n: usize,
    range: i64,
    instance: u32,
    series: u32,
) -> Result<(Vec<(i64, i64)>, i64), String> {
    if !(10..=10_000_000).contains(&range) {
        return Err(format!("the range must be 10 to 10000000, not {range}"));
    }
    if n == 0 || n > 10_000 {
        return Err(format!("the item count must be 1 to 10000, not {n}"));
    }
    if instance == 0 || instance > series {
        return Err(format!("the instance number must be 1 to the series length {series}, not {instance}"));
    }
    let mut rng = Lrand48::seeded(instance);
    let (r, r1) = (range, range / 10);
    let mut spanners = Vec::new();
    if family.spanner() {
        for _ in 0..2 {
            let w = rng.below(r) + 1;
            let p = match family {
                Family::UncorrelatedSpanner => rng.below(r) + 1,
                Family::WeaklyCorrelatedSpanner => rng.below(2 * r1 + 1) + w - r1,
                _ => w + r1,
            };
            // Scaled down so that multiples up to 10 stay in range.
            spanners.push(((p.max(1) + 4) / 5, (w + 4) / 5));
        }
    }
    let mut items = Vec::with_capacity(n);
    for _ in 0..n {
        let mut w = rng.below(r) + 1;
        let p = match family {
            Family::Uncorrelated => rng.below(r) + 1,
            Family::WeaklyCorrelated => (rng.below(2 * r1 + 1) + w - r1).max(1),
            Family::StronglyCorrelated => w + r1,
            Family::InverseStronglyCorrelated => {
                let p = w;
                w = p + r1;
                p
            }
            Family::AlmostStronglyCorrelated => w + r1 + rng.below(2 * r / 1000 + 1) - r / 1000,
            Family::SubsetSum => w,
            Family::UncorrelatedSpanner | Family::WeaklyCorrelatedSpanner | Family::StronglyCorrelatedSpanner => {
                let k = rng.below(10) + 1;
                let (sp, sw) = spanners[rng.below(2) as usize];
                w = k * sw;
                k * sp
            }
            Family::MultipleStronglyCorrelated => {
                w = rng.below(r) + 1;
                w + if w % 6 == 0 { 3 * r1 } else { 2 * r1 }
            }
            Family::ProfitCeiling => {
                w = rng.below(r) + 1;
                3 * ((w + 2) / 3)
            }
            Family::Circle => {
                w = rng.below(r) + 1;
                let d = w - 2 * r;
                (2.0 * ((4 * r * r - d * d) as f64).sqrt() / 3.0) as i64
            }
        };
        items.push((p, w));
    }
    let total: i64 = items.iter().map(|&(_, w)| w).sum();
    let heaviest = items.iter().map(|&(_, w)| w).max().unwrap_or(0);
    let capacity = (i64::from(instance) * total / (i64::from(series) + 1)).max(heaviest);
    Ok((items, capacity))
}

/// An instance in the bundled files' format: `n capacity`, then a line
/// `profit weight` per item.
pub fn to_text(items: &[(i64, i64)], capacity: i64) -> String {
    let mut text = format!("{} {capacity}\n", items.len());
    for (p, w) in items {
        let _ = writeln!(text, "{p} {w}");
    }
    text
}
