//! A local-only user turns the default features off: `satin-runtime` must still
//! build, and then without quinn, rustls, tokio or clap, and without the
//! simulator or the task graphs (crates of their own).

use std::process::Command;

#[test]
fn the_runtime_builds_without_default_features_and_without_the_other_layers() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let cargo = env!("CARGO");
    let target = root.join("target/no-net");
    let check = Command::new(cargo)
        .args(["check", "-q", "-p", "satin-runtime", "--no-default-features", "--target-dir"])
        .arg(&target)
        .current_dir(&root)
        .output()
        .expect("cargo runs");
    assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stderr));
    let tree = Command::new(cargo)
        .args(["tree", "-q", "-p", "satin-runtime", "--no-default-features", "-e", "normal", "--prefix", "none"])
        .current_dir(&root)
        .output()
        .expect("cargo runs");
    assert!(tree.status.success(), "{}", String::from_utf8_lossy(&tree.stderr));
    let tree = String::from_utf8_lossy(&tree.stdout);
    for heavy in ["quinn ", "rustls ", "tokio ", "clap ", "indicatif ", "satin-net ", "satin-sim ", "satin-dag "] {
        assert!(!tree.contains(heavy), "{heavy}in a build without `net`:\n{tree}");
    }
    for layer in ["crossbeam-deque ", "satin-core ", "satin-proto "] {
        assert!(tree.contains(layer), "{layer}missing:\n{tree}");
    }
}
