#![deny(deprecated)]

use satin::divide_and_conquer;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize)]
pub struct Node {
    value: u64,
    left: Option<Box<Node>>,
    right: Option<Box<Node>>,
}

// An optional borrow has no outer reference to keep: the note names the
// fix that fits it.
#[divide_and_conquer]
fn sum(node: Option<&Node>) -> u64 {
    let Some(n) = node else { return 0 };
    n.value + sum(n.left.as_deref()) + sum(n.right.as_deref())
}

fn main() {}
