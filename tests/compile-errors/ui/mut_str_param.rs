use satin::divide_and_conquer;

// `&mut str` cannot be written back from another node.
#[divide_and_conquer]
fn shout(s: &mut str) {
    s.make_ascii_uppercase();
}

fn main() {}
