use satin::divide_and_conquer;

#[divide_and_conquer]
fn count(xs: impl Iterator<Item = u32>) -> usize {
    xs.count()
}

fn main() {}
