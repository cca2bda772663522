//! Compile-error tests of `#[divide_and_conquer]`: one failure per file in
//! `ui/`, with the expected message beside it. `TRYBUILD=overwrite`
//! regenerates the `.stderr` files after an intended change. (Programs
//! that must compile are in `tests/pass/`, run by `tests/tests/pass.rs`:
//! with no program to build, `trybuild` only checks, which spares it a
//! second build of every dependency; and this crate's dependencies, which
//! trybuild's project copies, leave out the network layer.)

#[test]
fn compile_errors_point_at_the_problem_and_say_what_to_do() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/*.rs");
}
