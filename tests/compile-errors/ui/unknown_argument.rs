use satin::divide_and_conquer;

#[divide_and_conquer(cutoff = 3)]
fn fib(n: u32) -> u64 {
    n as u64
}

fn main() {}
