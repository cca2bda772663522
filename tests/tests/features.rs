//! A local-only user turns the `net` feature off: `satin` must still build,
//! and then without quinn, rustls, tokio or clap.

use std::process::Command;

#[test]
fn satin_builds_without_the_net_feature_and_without_its_crates() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let cargo = env!("CARGO");
    let target = root.join("target/no-net");
    let check = Command::new(cargo)
        .args(["check", "-q", "-p", "satin", "--no-default-features", "--target-dir"])
        .arg(&target)
        .current_dir(&root)
        .output()
        .expect("cargo runs");
    assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stderr));
    let tree = Command::new(cargo)
        .args(["tree", "-q", "-p", "satin", "--no-default-features", "-e", "normal", "--prefix", "none"])
        .current_dir(&root)
        .output()
        .expect("cargo runs");
    assert!(tree.status.success(), "{}", String::from_utf8_lossy(&tree.stderr));
    let tree = String::from_utf8_lossy(&tree.stdout);
    for heavy in ["quinn ", "rustls ", "tokio ", "clap ", "indicatif "] {
        assert!(!tree.contains(heavy), "{heavy}in a build without `net`:\n{tree}");
    }
    assert!(tree.contains("crossbeam-deque "), "{tree}");
}
