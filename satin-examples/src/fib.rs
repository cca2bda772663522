//! Fibonacci numbers, with no cutoff: the spawn overhead benchmark.

use satin::divide_and_conquer;

/// The n-th Fibonacci number, every call a spawn.
#[divide_and_conquer]
pub fn fib(n: u32) -> u64 {
    if n < 2 {
        return n as u64;
    }
    let x = fib(n - 1);
    let y = fib(n - 2);
    x + y
}

/// The same function without the annotation.
pub fn fib_plain(n: u32) -> u64 {
    if n < 2 {
        return n as u64;
    }
    fib_plain(n - 1) + fib_plain(n - 2)
}

/// The same function with `rayon::join`.
pub fn fib_rayon(n: u32) -> u64 {
    if n < 2 {
        return n as u64;
    }
    let (x, y) = rayon::join(|| fib_rayon(n - 1), || fib_rayon(n - 2));
    x + y
}

/// [`fib`] with `chili` (heartbeat scheduling) on `scope`.
pub fn fib_chili(n: u32, scope: &mut chili::Scope<'_>) -> u64 {
    if n < 2 {
        return n as u64;
    }
    let (x, y) = scope.join(|s| fib_chili(n - 1, s), |s| fib_chili(n - 2, s));
    x + y
}
