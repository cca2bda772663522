use std::rc::Rc;

use satin::divide_and_conquer;

#[divide_and_conquer]
fn total(shared: Rc<Vec<u64>>) -> u64 {
    shared.iter().sum()
}

fn main() {}
