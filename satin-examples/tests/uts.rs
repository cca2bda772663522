//! Unbalanced Tree Search: the five published sample trees, each counted
//! with the annotated search on 2 workers, match their published sizes
//! (nodes, leaves, depth) — which checks the SHA-1 tree generation and
//! that no subtree is lost or counted twice however the work was split.

use satin::Runtime;
use satin_examples::uts;

#[test]
fn the_published_sample_trees_have_their_published_sizes() {
    let rt = Runtime::builder().workers(2).build().unwrap();
    for name in ["T1", "T2", "T3", "T4", "T5"] {
        let (params, published) = uts::sample(name).expect("a sample tree");
        let root = uts::Node::root(&params);
        assert_eq!(rt.run(|| uts::search(&params, root)), published, "{name}");
    }
    assert!(rt.stats().steals > 0, "nothing was stolen: {:?}", rt.stats());
    assert!(uts::sample("T6").is_none());
}

/// The `for`-loop form (children walked as the benchmark's C code walks
/// them) counts the same trees: its iterations are spawned and, in the
/// lazy version, a latent loop that thieves take from.
#[test]
fn the_loop_form_counts_the_same_trees() {
    let rt = Runtime::builder().workers(2).build().unwrap();
    for name in ["T1", "T3", "T5"] {
        let (params, published) = uts::sample(name).expect("a sample tree");
        let root = uts::Node::root(&params);
        let before = rt.stats().steals;
        assert_eq!(rt.run(|| uts::search_loop(&params, root)), published, "{name}");
        assert!(rt.stats().steals > before, "{name}: nothing was stolen: {:?}", rt.stats());
    }
    let (params, published) = uts::sample("T2").expect("a sample tree");
    assert_eq!(uts::search_loop_plain(&params, uts::Node::root(&params)), published);
}
