//! The facade's tests that need nothing but the local runtime, as one
//! test binary: the runtime is linked once instead of once per file. Each
//! file is a module; `cargo test -p satin-runtime --test runtime fallible::`
//! runs one file's tests. Files whose tests touch what a whole process
//! shares (its replicas of shared values, its threads, its signals) stay
//! binaries of their own (`Cargo.toml`).

mod borrowed;
mod dist_executor;
mod fallible;
mod generics;
mod groups;
mod keyed_once;
mod latent_loops;
mod lent_root;
mod local;
mod local_calls;
mod loop_fission;
mod methods;
mod mut_then_merge;
mod play_undo;
mod progress;
mod skeleton;
mod wrapped_calls;
