use satin::divide_and_conquer;

#[divide_and_conquer]
fn build<T: Default + Clone>(n: u32) -> Vec<T> {
    if n == 0 {
        return Vec::new();
    }
    let mut v = build(n - 1);
    v.push(T::default());
    v
}

fn main() {}
