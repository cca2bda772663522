use satin::divide_and_conquer;

pub struct Stats {
    pub nodes: u64,
}

#[divide_and_conquer]
fn walk(depth: u32) -> Stats {
    Stats { nodes: depth as u64 }
}

fn main() {}
