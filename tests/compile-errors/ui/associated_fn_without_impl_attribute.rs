use satin::divide_and_conquer;

struct Tree;

impl Tree {
    #[divide_and_conquer]
    fn count(depth: u32) -> u64 {
        if depth == 0 {
            return 1;
        }
        Self::count(depth - 1) + Self::count(depth - 1)
    }
}

fn main() {}
