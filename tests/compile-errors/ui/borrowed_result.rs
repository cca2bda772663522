use satin::divide_and_conquer;

#[divide_and_conquer]
fn name(n: u32) -> &'static str {
    if n == 0 { "zero" } else { "more" }
}

fn main() {}
