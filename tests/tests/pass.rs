//! Programs the attribute must accept, each run to its end: the files in
//! `pass/`, compiled here as modules of one test (with the release build
//! of the rest of the suite) rather than by `trybuild` one by one, each
//! file's `main` one test. Their `main`s assert the plain function's
//! results.

#[path = "../pass/adapters.rs"]
mod adapters;
#[path = "../pass/borrowed.rs"]
mod borrowed;
#[path = "../pass/copy_make.rs"]
mod copy_make;
#[path = "../pass/early_errors.rs"]
mod early_errors;
#[path = "../pass/forms.rs"]
mod forms;
#[path = "../pass/generics.rs"]
mod generics;
#[path = "../pass/local_marked.rs"]
mod local_marked;
#[path = "../pass/siblings.rs"]
mod siblings;

#[test]
fn iterator_adapters_spawn_every_call() {
    adapters::main();
}

#[test]
fn borrowed_parameters_compile_and_run() {
    borrowed::main();
}

#[test]
fn copy_and_make_compile_without_deprecations() {
    copy_make::main();
}

#[test]
fn the_forms_of_the_guide_compile_and_run() {
    forms::main();
}

#[test]
fn generic_functions_compile_and_run() {
    generics::main();
}

#[test]
fn functions_marked_local_compile_without_deprecations() {
    local_marked::main();
}

#[test]
fn functions_each_with_the_attribute_alone_spawn_each_other() {
    siblings::main();
}

#[test]
fn a_loop_that_question_marks_its_calls_stops_at_the_first_failure() {
    early_errors::main();
}
