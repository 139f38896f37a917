//! Constrained global optimization (`ivjit::search::constrained`), checked exactly: the
//! certified enclosure holds the known minimum (compared in rational arithmetic, never with the
//! same formula in floats), is as narrow as asked, and its best point satisfies the (relaxed)
//! constraints exactly; an infeasible problem is proven so. Both precisions.

use crate::common::oracle::{q_of, Q};
use ivjit::search::constrained::{
    minimize_subject_to, problem_expression, ConstrainedMinimum, ConstrainedOptions, Stopped,
};
use ivjit::search::pave::Constraints;
use ivjit::{BackendChoice, Interval, Precision};
use num_traits::{One, Zero};

fn iv(lo: f64, hi: f64) -> Interval {
    Interval::new(lo, hi).unwrap()
}

fn solve(
    f: &str,
    c: &str,
    side: f64,
    p: Precision,
    options: ConstrainedOptions,
) -> ConstrainedMinimum {
    let constraints = Constraints::parse(c).unwrap();
    let n = problem_expression(f, &constraints).unwrap().vars().len();
    let root = vec![iv(-side, side); n];
    minimize_subject_to(f, &constraints, &root, options, p, BackendChoice::Cpu).unwrap()
}

fn options(tol: f64) -> ConstrainedOptions {
    ConstrainedOptions {
        tol,
        ..ConstrainedOptions::default()
    }
}

fn tol(p: Precision) -> f64 {
    match p {
        Precision::F64 => 1e-6,
        Precision::F32 => 1e-3,
    }
}

fn qs(x: &[f64]) -> Vec<Q> {
    x.iter().map(|&v| q_of(v)).collect()
}

#[test]
fn a_linear_objective_on_the_disk_encloses_minus_root_two() {
    // min x + y on x^2 + y^2 <= 1: -sqrt(2) at (-1/sqrt 2, -1/sqrt 2).
    for p in [Precision::F64, Precision::F32] {
        let m = solve("x + y", "x^2 + y^2 <= 1", 2.0, p, options(tol(p)));
        assert_eq!(m.stopped, Stopped::Converged, "{p:?}: {m:?}");
        let (l, u) = (q_of(m.lower), q_of(m.upper));
        let two = Q::from_integer(2.into());
        // lower <= -sqrt 2 <= upper, exactly.
        assert!(l < Q::zero() && &l * &l >= two, "{p:?}: lower {}", m.lower);
        assert!(u >= Q::zero() || &u * &u <= two, "{p:?}: upper {}", m.upper);
        assert!(m.upper - m.lower <= tol(p), "{p:?}: {m:?}");
        // The best point is feasible and gives the upper bound, exactly.
        let x = qs(m.argmin.as_ref().unwrap());
        assert!(&x[0] * &x[0] + &x[1] * &x[1] <= Q::one());
        assert!(&x[0] + &x[1] <= u);
    }
}

#[test]
fn two_inequalities_meet_at_the_minimizer() {
    // min (x-2)^2 + (y-1)^2 on x^2 <= y, x + y <= 2: 1 at (1, 1), where both are active.
    for p in [Precision::F64, Precision::F32] {
        let m = solve(
            "(x - 2)^2 + (y - 1)^2",
            "x^2 - y <= 0, x + y <= 2",
            3.0,
            p,
            options(tol(p)),
        );
        assert_eq!(m.stopped, Stopped::Converged, "{p:?}: {m:?}");
        assert!(m.lower <= 1.0 && 1.0 <= m.upper, "{p:?}: {m:?}");
        assert!(m.upper - m.lower <= tol(p));
        let x = qs(m.argmin.as_ref().unwrap());
        assert!(&x[0] * &x[0] - &x[1] <= Q::zero() && &x[0] + &x[1] <= Q::from_integer(2.into()));
    }
}

#[test]
fn the_linear_relaxation_removes_the_cluster_effect_on_an_active_constraint() {
    // min x y z on the unit ball: -1/(3 sqrt 3) at the four points (±1, ±1, ±1)/sqrt 3 with
    // an odd number of minus signs, where the constraint is active and f's gradient does not
    // vanish. Interval bounds of f alone lag by the gradient times a box's width there, and
    // the boxes around the minimizers multiply: over 2.6 million boxes without converging
    // (docs/constraints.md). Each box's linear program couples f with the constraint.
    for p in [Precision::F64, Precision::F32] {
        let budget = ConstrainedOptions {
            tol: tol(p),
            max_boxes: 100_000,
            ..ConstrainedOptions::default()
        };
        let m = solve("x*y*z", "x^2 + y^2 + z^2 <= 1", 2.0, p, budget);
        assert_eq!(m.stopped, Stopped::Converged, "{p:?}: {m:?}");
        // lower <= -1/sqrt 27 <= upper < 0: 27 lower^2 >= 1 >= 27 upper^2.
        let (l, u) = (q_of(m.lower), q_of(m.upper));
        let q27 = Q::from_integer(27.into());
        assert!(l < Q::zero() && &q27 * &l * &l >= Q::one(), "{p:?}: {m:?}");
        assert!(u < Q::zero() && &q27 * &u * &u <= Q::one(), "{p:?}: {m:?}");
        let x = qs(m.argmin.as_ref().unwrap());
        assert!(&x[0] * &x[0] + &x[1] * &x[1] + &x[2] * &x[2] <= Q::one());
        // Without the relaxation the same budget runs out.
        let without = ConstrainedOptions {
            linear_relaxation: false,
            ..budget
        };
        let w = solve("x*y*z", "x^2 + y^2 + z^2 <= 1", 2.0, p, without);
        assert_eq!(w.stopped, Stopped::Budget, "{p:?}: {w:?}");
    }
}

#[test]
fn an_equality_is_relaxed_and_the_relaxed_minimum_enclosed() {
    // min x y on x^2 + y^2 = 2, relaxed to |x^2 + y^2 - 2| <= d: the relaxed minimum is
    // -(2 + d) / 2 (x = -y, x^2 = (2 + d) / 2).
    let d = 1e-6;
    let m = solve(
        "x*y",
        "x^2 + y^2 == 2",
        3.0,
        Precision::F64,
        ConstrainedOptions {
            tol: 1e-6,
            eq_tol: d,
            ..ConstrainedOptions::default()
        },
    );
    assert_eq!(m.stopped, Stopped::Converged, "{m:?}");
    assert_eq!(m.relaxation, d);
    let want = -(Q::from_integer(2.into()) + q_of(d)) / Q::from_integer(2.into());
    assert!(q_of(m.lower) <= want && want <= q_of(m.upper), "{m:?}");
    let x = qs(m.argmin.as_ref().unwrap());
    let h = &x[0] * &x[0] + &x[1] * &x[1] - Q::from_integer(2.into());
    let h_abs = if h < Q::zero() { -h } else { h };
    assert!(h_abs <= q_of(d), "the best point is outside the relaxation");
}

#[test]
fn newton_steps_find_feasible_points_on_an_equality() {
    // min x + y + z on the sphere x^2 + y^2 + z^2 = 1, relaxed to |x^2 + y^2 + z^2 - 1| <= d:
    // -sqrt(3 (1 + d)), at x = y = z. Box midpoints almost never land in the shell, so
    // without a point proven feasible `upper` stays +inf (the search ran out of 200,000 boxes
    // that way); Newton steps from the best boxes' midpoints reach it.
    let d = 1e-6;
    for p in [Precision::F64, Precision::F32] {
        let m = solve(
            "x + y + z",
            "x^2 + y^2 + z^2 == 1",
            2.0,
            p,
            ConstrainedOptions {
                tol: tol(p),
                eq_tol: d,
                max_boxes: 20_000,
                ..ConstrainedOptions::default()
            },
        );
        assert_eq!(m.stopped, Stopped::Converged, "{p:?}: {m:?}");
        // lower <= -sqrt(3 (1 + d)) <= upper < 0.
        let bound = Q::from_integer(3.into()) * (Q::one() + q_of(d));
        let (l, u) = (q_of(m.lower), q_of(m.upper));
        assert!(l < Q::zero() && &l * &l >= bound, "{p:?}: {m:?}");
        assert!(u < Q::zero() && &u * &u <= bound, "{p:?}: {m:?}");
        // The best point is inside the relaxation, exactly, and gives the upper bound.
        let x = qs(m.argmin.as_ref().unwrap());
        let h = &x[0] * &x[0] + &x[1] * &x[1] + &x[2] * &x[2] - Q::one();
        let h_abs = if h < Q::zero() { -h } else { h };
        assert!(
            h_abs <= q_of(d),
            "{p:?}: the best point is outside the relaxation"
        );
        assert!(&x[0] + &x[1] + &x[2] <= u, "{p:?}");
    }
}

#[test]
fn an_infeasible_problem_is_proven_so() {
    let m = solve(
        "x + y",
        "x^2 + y^2 <= 1, x + y >= 3",
        4.0,
        Precision::F64,
        options(1e-6),
    );
    assert_eq!(m.stopped, Stopped::Infeasible, "{m:?}");
    assert!(m.argmin.is_none());
}

#[test]
fn the_budget_leaves_a_wider_enclosure_that_still_holds() {
    let m = solve(
        "x + y",
        "x^2 + y^2 <= 1",
        2.0,
        Precision::F64,
        ConstrainedOptions {
            tol: 0.0,
            max_boxes: 20,
            ..ConstrainedOptions::default()
        },
    );
    assert_eq!(m.stopped, Stopped::Budget, "{m:?}");
    let two = Q::from_integer(2.into());
    let l = q_of(m.lower);
    assert!(l < Q::zero() && &l * &l >= two, "{m:?}");
    assert!(m.upper > -std::f64::consts::SQRT_2 && m.upper - m.lower > 1e-6);
}

#[test]
fn a_variable_over_the_whole_line_gets_no_relaxation_and_the_search_runs() {
    // x in [-inf, inf], y in [-1, 1], min x^4 + 6 y^2 subject to x y <= 1 (undecided on the
    // root box, and no contractor narrows x: y holds 0). Boxes with an unbounded side have no
    // corner to linearize at; once evaluated at such a corner, the search failed with an
    // invalid box (as IBEX's test_infinity2 did).
    for p in [Precision::F64, Precision::F32] {
        let constraints = Constraints::parse("x*y <= 1").unwrap();
        let root = [iv(f64::NEG_INFINITY, f64::INFINITY), iv(-1.0, 1.0)];
        let m = minimize_subject_to(
            "x^4 + 6*y^2",
            &constraints,
            &root,
            options(tol(p)),
            p,
            BackendChoice::Cpu,
        )
        .unwrap();
        assert_eq!(m.stopped, Stopped::Converged, "{p:?}: {m:?}");
        assert!(m.lower <= 0.0 && 0.0 <= m.upper, "{p:?}: {m:?}");
    }
}

#[test]
fn objective_and_constraints_share_variables_in_order_of_appearance() {
    let c = Constraints::parse("z >= x, y^2 <= 1").unwrap();
    let e = problem_expression("x - z", &c).unwrap();
    assert_eq!(e.vars(), ["x", "z", "y"]);
    // An objective of two outputs is an error that names it.
    let err = problem_expression("x, z", &c).unwrap_err().to_string();
    assert!(err.contains("one expression"), "{err}");
}

#[test]
fn an_unbounded_root_box_is_narrowed_by_the_constraints_first() {
    // The root box is the whole plane: the contractor cuts it to the disk's box, then the
    // search runs as on a bounded one (midpoints of unbounded sides are IEEE 1788's mid).
    let c = Constraints::parse("x^2 + y^2 <= 1").unwrap();
    for root in [
        vec![Interval::ENTIRE, Interval::ENTIRE],
        vec![iv(-1e300, f64::INFINITY), iv(f64::NEG_INFINITY, 0.5)],
    ] {
        let m = minimize_subject_to(
            "x + y",
            &c,
            &root,
            options(1e-6),
            Precision::F64,
            BackendChoice::Cpu,
        )
        .unwrap();
        assert_eq!(m.stopped, Stopped::Converged, "{root:?}: {m:?}");
        let (l, u) = (q_of(m.lower), q_of(m.upper));
        let two = Q::from_integer(2.into());
        assert!(l < Q::zero() && &l * &l >= two && (u >= Q::zero() || &u * &u <= two));
    }
}
