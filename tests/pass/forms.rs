//! Every recognised form compiles and gives the sequential result, with the
//! runtime path named explicitly through `crate = "..."`.

mod reexport {
    pub use satin;
}

use reexport::satin::divide_and_conquer;

#[divide_and_conquer(crate = "reexport::satin")]
fn tree(depth: u32, (fan, _tag): (u32, u8)) -> u64 {
    if depth == 0 {
        return 1;
    }
    let first = tree(depth - 1, (fan, 0));
    let mut rest = 0;
    for _ in 1..fan {
        rest += tree(depth - 1, (fan, 1));
    }
    let listed: Vec<u64> = (0..fan).map(|_| tree(depth - 1, (fan, 2))).collect();
    let both = tree(depth - 1, (fan, 3)) + tree(depth - 1, (fan, 4));
    let shown = format!("{first}");
    first + rest + listed.iter().sum::<u64>() + both + shown.len() as u64
}

#[divide_and_conquer]
fn unit(n: u32) {
    if n > 0 {
        unit(n - 1)
    }
}

pub fn main() {
    let rt = reexport::satin::Runtime::builder().workers(2).build().unwrap();
    assert_eq!(rt.run(|| tree(4, (3, 0))), tree(4, (3, 0)));
    rt.run(|| unit(10));
}
