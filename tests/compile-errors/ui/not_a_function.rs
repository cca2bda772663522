use satin::divide_and_conquer;

#[divide_and_conquer]
struct Tree {
    depth: u32,
}

fn main() {}
