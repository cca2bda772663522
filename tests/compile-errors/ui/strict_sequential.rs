use satin::divide_and_conquer;

#[divide_and_conquer(strict)]
fn count(n: u32) -> u64 {
    if n < 2 {
        return 1;
    }
    let total = { count(n - 1) } + { count(n - 2) };
    total
}

fn main() {}
