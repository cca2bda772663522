use satin::divide_and_conquer;

#[divide_and_conquer]
fn sum<const N: usize>(v: [u64; N]) -> u64 {
    v.iter().sum()
}

fn main() {}
