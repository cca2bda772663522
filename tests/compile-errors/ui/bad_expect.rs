use satin::divide_and_conquer;

#[divide_and_conquer(expect = "soon")]
fn fib(n: u32) -> u64 {
    n as u64
}

#[divide_and_conquer(retries = -1)]
fn fob(n: u32) -> u64 {
    n as u64
}

fn main() {}
