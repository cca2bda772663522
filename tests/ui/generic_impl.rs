use satin::divide_and_conquer;

struct Tree<T>(Vec<T>);

#[divide_and_conquer]
impl<T> Tree<T> {
    #[divide_and_conquer]
    fn count(&self) -> u64 {
        1
    }
}

fn main() {}
