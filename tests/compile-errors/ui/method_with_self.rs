use satin::divide_and_conquer;

struct Solver;

impl Solver {
    #[divide_and_conquer]
    fn solve(&self, n: u32) -> u64 {
        n as u64
    }
}

fn main() {}
