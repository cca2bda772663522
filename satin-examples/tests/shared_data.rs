//! A structure every call borrows, as real processes: the k-d tree count
//! passes the whole tree down the recursion unchanged. On three local
//! nodes each node hashes it about once for keys (not once per keyed
//! call), and thieves borrow their own copy of the root's tree (named by
//! its digest) instead of receiving it: little is encoded or sent.

use crate::common;

use common::{run_with_stats, stderr, stdout, KDTREE};
use satin_examples::kdtree;

/// Counts the close pairs of 300 000 points (radius 0.002) on three local
/// nodes, with `extra` flags, and checks the count against the plain
/// function's: the tree's encoded size, the nodes' figures and the log.
fn count_on_three_nodes(extra: &[&str]) -> (u64, common::Stats, String) {
    let (n, r) = (300_000, 0.002);
    let tree = kdtree::build_plain(kdtree::random_points(n, 1), 0);
    let expected = kdtree::count_close_plain(&tree, &tree, r);
    let tree_bytes = postcard::to_stdvec(&tree).expect("encodes").len() as u64;
    let mut args = vec!["300000", "--radius", "0.002", "--local-nodes", "3", "--no-progress"];
    args.extend_from_slice(extra);
    let (out, stats) = run_with_stats(KDTREE, &args, &[]);
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    assert_eq!(stdout(&out).trim(), expected.to_string(), "{log}");
    assert_eq!(stats.nodes().len(), 3, "{log}");
    (tree_bytes, stats, log)
}

#[test]
fn a_tree_passed_down_unchanged_is_hashed_about_once_per_node_and_never_sent() {
    let (tree_bytes, stats, log) = count_on_three_nodes(&[]);
    assert!(stats.others(0, "jobs_stolen") > 0, "no node stole, nothing was tested:\n{log}");
    for node in stats.nodes() {
        // Its root's tree once, and the subtrees its keyed calls carry
        // (a level's subtrees add up to one tree): before, the whole tree
        // was hashed at every keyed call and encoded at every steal.
        let hashed = stats.of(node, "bytes_hashed");
        assert!(hashed <= 6 * tree_bytes, "node {node} hashed {hashed} bytes for a tree of {tree_bytes}:\n{log}");
        let sent = stats.of(node, "bytes_sent");
        assert!(sent <= tree_bytes / 4, "node {node} sent {sent} bytes for a tree of {tree_bytes}:\n{log}");
    }
}

/// Two runs of one program: the first builds the tree (on the master),
/// the second counts over it. The other nodes' programs wait in the first
/// call, so they do not hold the second run's tree: a thief gets it once,
/// with its digest, keeps it, and names it in its later steal requests —
/// before, every stolen job of the second run carried the whole tree.
#[test]
fn a_value_the_next_run_borrows_crosses_to_each_node_once() {
    // Steals are the scheduler's choice: on a busy machine a run may
    // steal too little to tell; such a run is made again (three at most).
    let mut attempts = 0;
    let (tree_bytes, log, (stolen, sent)) = loop {
        attempts += 1;
        let (tree_bytes, stats, log) = count_on_three_nodes(&["--build"]);
        for node in stats.nodes() {
            // The master's own file too, written as its program got the answer.
            assert_eq!(stats.runs(node), 2, "node {node}'s figures do not cover both runs:\n{log}");
        }
        // The second run alone: its figures less the first's.
        let second = |field: &str| -> u64 {
            stats.nodes().into_iter().map(|n| stats.in_run(n, 1, field) - stats.in_run(n, 0, field)).sum()
        };
        let stolen = second("jobs_stolen");
        if stolen >= 4 || attempts == 3 {
            assert!(
                stolen >= 4,
                "only {stolen} steals in the second run of each of {attempts} runs: too few to tell:\n{log}"
            );
            let sent = second("bytes_sent");
            break (tree_bytes, log, (stolen, sent));
        }
        eprintln!("only {stolen} steals in the second run: running it again");
    };
    // The tree once to each of the two thieves, and the subtrees stolen
    // calls are given (as data: a level's subtrees add up to one tree, a
    // few levels are stolen from). Before, each of these steals carried
    // the whole tree besides.
    assert!(
        sent <= 4 * tree_bytes,
        "{sent} bytes sent in the second run for a tree of {tree_bytes} ({stolen} steals):\n{log}"
    );
    eprintln!("tree {tree_bytes} bytes; the second run sent {sent}, {stolen} steals");
}
