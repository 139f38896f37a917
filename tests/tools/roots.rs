//! The root-isolation example (`examples/roots.rs`) on known cases, CPU backend.
#[path = "../../examples/roots.rs"]
mod example;

use example::{isolate, Cluster, Report};
use ivjit::BackendChoice;

fn run(src: &str, lo: f64, hi: f64) -> Report {
    let r = isolate(src, lo, hi, 1e-12, BackendChoice::Cpu).unwrap();
    assert!(r.complete, "{src}: bisection stopped early");
    assert!(r.boxes > 0);
    r
}

/// The one cluster holding `x`, which must also be narrow (so "contains" means something).
fn cluster_with(r: &Report, x: f64) -> &Cluster {
    let hits: Vec<&Cluster> = r.clusters.iter().filter(|c| c.x.contains(x)).collect();
    assert_eq!(
        hits.len(),
        1,
        "{x} should be in exactly one cluster: {:?}",
        r.clusters
    );
    assert!(
        hits[0].x.hi - hits[0].x.lo < 1e-9,
        "cluster too wide: {:?}",
        hits[0]
    );
    hits[0]
}

#[test]
fn three_simple_roots_are_isolated_and_proven() {
    let r = run("(x-1)*(x-2)*(x-3)", 0.0, 4.0);
    assert_eq!(r.clusters.len(), 3, "{:?}", r.clusters);
    for root in [1.0, 2.0, 3.0] {
        assert!(cluster_with(&r, root).proven, "root {root} not proven");
    }
}

#[test]
fn close_roots_are_both_enclosed() {
    let r = run("(x-1)*(x-1.000001)", 0.0, 2.0);
    let (a, b) = (cluster_with(&r, 1.0), cluster_with(&r, 1.000001));
    // 1e-6 apart with tol 1e-12: two distinct clusters, each with a sign change.
    assert!(a.x.hi < b.x.lo, "{:?}", r.clusters);
    assert!(a.proven && b.proven);
    assert_eq!(r.clusters.len(), 2);
}

#[test]
fn double_root_is_enclosed_but_not_proven() {
    let r = run("(x-2)^2", 0.0, 4.0);
    assert_eq!(r.clusters.len(), 1, "{:?}", r.clusters);
    assert!(!cluster_with(&r, 2.0).proven, "no sign change, so no proof");
}

#[test]
fn transcendental_root_is_enclosed_and_proven() {
    let r = run("cos(x) - x", 0.0, 1.0);
    assert_eq!(r.clusters.len(), 1, "{:?}", r.clusters);
    assert!(cluster_with(&r, 0.7390851332151607).proven);
}

#[test]
fn no_real_roots_gives_no_clusters() {
    let r = run("x^2 + 1", -5.0, 5.0);
    assert!(r.clusters.is_empty(), "{:?}", r.clusters);
}

#[test]
fn bad_input_is_an_error() {
    assert!(isolate("x*y", 0.0, 1.0, 1e-12, BackendChoice::Cpu).is_err());
    assert!(isolate("x", 1.0, 0.0, 1e-12, BackendChoice::Cpu).is_err());
}
