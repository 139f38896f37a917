//! The root-isolation example (`examples/roots.rs`) on known cases, CPU backend.
#[path = "../../examples/roots.rs"]
mod example;

use example::{isolate, solve, Cluster, Report};
use ivjit::BackendChoice;

fn run(src: &str, lo: f64, hi: f64) -> Report {
    let r = isolate(src, lo, hi, 1e-12, BackendChoice::Cpu).unwrap();
    assert!(r.complete, "{src}: bisection stopped early");
    assert!(r.boxes > 0);
    r
}

/// The one cluster holding `x`, which must also be narrow (so "contains" means something).
fn cluster_with(r: &Report, x: f64) -> &Cluster {
    let hits: Vec<&Cluster> = r.clusters.iter().filter(|c| c.x().contains(x)).collect();
    assert_eq!(
        hits.len(),
        1,
        "{x} should be in exactly one cluster: {:?}",
        r.clusters
    );
    assert!(
        hits[0].x().hi - hits[0].x().lo < 1e-9,
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
        let c = cluster_with(&r, root);
        assert!(c.proven && c.unique, "root {root} not proven unique: {c:?}");
    }
}

#[test]
fn close_roots_are_both_enclosed() {
    let r = run("(x-1)*(x-1.000001)", 0.0, 2.0);
    let (a, b) = (cluster_with(&r, 1.0), cluster_with(&r, 1.000001));
    // 1e-6 apart with tol 1e-12: two distinct clusters, each with a sign change.
    assert!(a.x().hi < b.x().lo, "{:?}", r.clusters);
    assert!(a.proven && b.proven && a.unique && b.unique);
    assert_eq!(r.clusters.len(), 2);
}

#[test]
fn a_sign_change_at_a_discontinuity_proves_nothing() {
    // 1/x, tan at its pole, floor between its steps: f changes sign across the cluster, but is
    // not continuous there (decoration below dac), so no root is claimed.
    for (src, lo, hi, at, dec) in [
        ("1/x", -1.0, 2.0, 0.0, ivjit::Decoration::Trv),
        (
            "tan(x)",
            1.0,
            2.0,
            std::f64::consts::FRAC_PI_2,
            ivjit::Decoration::Trv,
        ),
        ("floor(x) - 0.5", 0.0, 2.0, 1.0, ivjit::Decoration::Def),
    ] {
        let r = isolate(src, lo, hi, 1e-12, BackendChoice::Cpu).unwrap();
        assert_eq!(r.clusters.len(), 1, "{src}: {:?}", r.clusters);
        let c = &r.clusters[0];
        assert!(c.x().contains(at), "{src}: {c:?}");
        assert!(c.sign_change && !c.proven && !c.unique, "{src}: {c:?}");
        assert_eq!(c.decoration, Some(dec), "{src}");
    }
    // A continuous function's sign change still proves its root (decoration com).
    let r = run("x^3 - 2", 0.0, 2.0);
    let c = cluster_with(&r, 2f64.cbrt());
    assert!(c.proven);
}

#[test]
fn double_root_is_enclosed_but_not_proven() {
    let r = run("(x-2)^2", 0.0, 4.0);
    assert_eq!(r.clusters.len(), 1, "{:?}", r.clusters);
    let c = cluster_with(&r, 2.0);
    // No sign change, and the derivative vanishes there: neither existence nor uniqueness.
    assert!(!c.proven && !c.unique, "{c:?}");
}

#[test]
fn transcendental_root_is_enclosed_and_proven() {
    let r = run("cos(x) - x", 0.0, 1.0);
    assert_eq!(r.clusters.len(), 1, "{:?}", r.clusters);
    let c = cluster_with(&r, 0.7390851332151607);
    assert!(c.proven && c.unique);
    assert!(c.x().hi - c.x().lo < 1e-12, "{c:?}");
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

/// Wilkinson's polynomial W_20 in product form: all twenty roots isolated, each proven unique
/// in a box of a few ulps.
#[test]
fn wilkinson_roots_are_proven_unique() {
    let w: Vec<String> = (1..=20).map(|i| format!("(x-{i})")).collect();
    let r = run(&w.join("*"), 0.0, 21.0);
    assert_eq!(r.clusters.len(), 20, "{:?}", r.clusters);
    for k in 1..=20 {
        let c = cluster_with(&r, k as f64);
        assert!(c.unique, "root {k}: {c:?}");
        assert!(c.x().hi - c.x().lo < 1e-12 * k as f64, "{c:?}");
    }
}

/// The circle and the cubic: both solutions of x^2 + y^2 = 1, y = x^3 proven unique, each in a
/// box narrower than 1e-12, and checked against the exact equations: x^6 + x^2 = 1 at the
/// box's ends changes sign (x^2 is the root of t^3 + t - 1).
#[test]
fn circle_and_cubic_solutions_are_proven_unique() {
    let boxes: Vec<(String, f64, f64)> = ["x", "y"]
        .iter()
        .map(|v| (v.to_string(), -2.0, 2.0))
        .collect();
    let r = solve("x^2 + y^2 - 1, y - x^3", &boxes, 1e-12, BackendChoice::Cpu).unwrap();
    assert!(r.complete);
    assert_eq!(r.clusters.len(), 2, "{:?}", r.clusters);
    for c in &r.clusters {
        assert!(c.unique, "{c:?}");
        for s in &c.sides {
            assert!(s.hi - s.lo < 1e-12, "{c:?}");
        }
        // |x| solves x^6 + x^2 - 1 = 0: the polynomial (exact in rationals) changes sign
        // between the box's ends.
        let x = c.sides[0];
        let p = |t: f64| {
            use num_rational::BigRational;
            let q = BigRational::from_float(t.abs()).unwrap();
            let q2 = &q * &q;
            let one = BigRational::from_integer(1.into());
            &q2 * &q2 * &q2 + q2 - one
        };
        let (a, b) = (p(x.lo), p(x.hi));
        use num_traits::Signed;
        assert!(a.is_negative() != b.is_negative(), "{c:?}");
        // The y side meets x's side cubed, [x.lo^3, x.hi^3] (exactly, in rationals).
        let q = |t: f64| num_rational::BigRational::from_float(t).unwrap();
        let cube = |t: f64| q(t) * q(t) * q(t);
        let y = c.sides[1];
        assert!(q(y.lo).max(cube(x.lo)) <= q(y.hi).min(cube(x.hi)), "{c:?}");
    }
    // Systems need as many equations as variables.
    assert!(solve("x + y", &boxes, 1e-9, BackendChoice::Cpu).is_err());
}
