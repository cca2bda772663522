use std::rc::Rc;

use satin::divide_and_conquer;

#[divide_and_conquer]
fn largest<T: Ord + Clone>(v: &[T]) -> T {
    if v.len() == 1 {
        return v[0].clone();
    }
    let (a, b) = v.split_at(v.len() / 2);
    let x = largest(a);
    let y = largest(b);
    x.max(y)
}

fn main() {
    let shared: Vec<Rc<u32>> = vec![Rc::new(1), Rc::new(2)];
    let _ = largest(&shared);
}
