use satin::divide_and_conquer;

#[divide_and_conquer]
fn sum(xs: &[u64]) -> u64 {
    xs.iter().sum()
}

fn main() {}
