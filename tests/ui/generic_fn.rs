use satin::divide_and_conquer;

#[divide_and_conquer]
fn largest<T: Ord + Copy>(a: T, b: T) -> T {
    a.max(b)
}

fn main() {}
