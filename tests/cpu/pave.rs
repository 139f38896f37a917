//! Paving (`ivjit::search::pave`): checked with exact rational arithmetic.
//!
//! The lists partition the root box (their volumes, summed exactly, are the root box's, and no
//! two boxes overlap in more than a face); every inner box's corners and random points satisfy
//! every constraint, every outer box's random points violate one (values computed exactly);
//! boundary boxes are at most `eps` wide. In both precisions; on the circle the inner and inner
//! plus boundary volumes bracket pi. Points outside a function's domain are never inner.

use crate::common::oracle::{q_of, Q};
use crate::common::rng::splitmix64;
use ivjit::search::pave::{pave, ConstraintError, Constraints, Paver};
use ivjit::{BackendChoice, Interval, Precision};
use num_traits::{One, Zero};

fn iv(lo: f64, hi: f64) -> Interval {
    Interval::new(lo, hi).unwrap()
}

/// The exact volume of a box.
fn volume(b: &[Interval]) -> Q {
    b.iter()
        .map(|i| q_of(i.hi) - q_of(i.lo))
        .fold(Q::one(), |a, w| a * w)
}

/// Whether two boxes share interior points.
fn overlap(a: &[Interval], b: &[Interval]) -> bool {
    a.iter().zip(b).all(|(x, y)| x.lo < y.hi && y.lo < x.hi)
}

/// Points of a box: its corners and a few random points (floats of `p`).
fn points(b: &[Interval], state: &mut u64, p: Precision) -> Vec<Vec<f64>> {
    let n = b.len();
    let mut out: Vec<Vec<f64>> = (0..1usize << n)
        .map(|m| {
            (0..n)
                .map(|k| if m >> k & 1 == 1 { b[k].hi } else { b[k].lo })
                .collect()
        })
        .collect();
    for _ in 0..6 {
        out.push(
            b.iter()
                .map(|i| {
                    let t = (splitmix64(state) >> 11) as f64 / (1u64 << 53) as f64;
                    let x = i.lo + (i.hi - i.lo) * t;
                    let x = match p {
                        Precision::F64 => x,
                        Precision::F32 => x as f32 as f64,
                    };
                    x.clamp(i.lo, i.hi)
                })
                .collect(),
        );
    }
    out
}

/// The disk intersected with the region above the cubic: x^2 + y^2 <= 1, y >= x^3.
fn disk_and_cubic(x: &[Q]) -> bool {
    let (a, b) = (&x[0], &x[1]);
    a * a + b * b <= Q::one() && *b >= a * a * a
}

fn check_paving(text: &str, feasible: fn(&[Q]) -> bool, root: &[Interval], eps: f64) {
    let c = Constraints::parse(text).unwrap();
    let mut state = 0x9a7e_u64;
    // (Ratio 0.2: boxes narrowed by more than a fifth of a side are contracted again, uncut.)
    for (p, ratio) in [Precision::F64, Precision::F32]
        .into_iter()
        .flat_map(|p| [(p, 0.0), (p, 0.2)])
    {
        let paving = Paver::new(&c, p, BackendChoice::Cpu)
            .unwrap()
            .with_ratio(ratio)
            .pave(root, eps, 1 << 20)
            .unwrap();
        assert!(!paving.truncated, "{text} {p:?} ratio {ratio}");
        assert!(
            !paving.inner.is_empty() && !paving.outer.is_empty() && !paving.boundary.is_empty(),
            "{text} {p:?} ratio {ratio}: {} inner, {} boundary, {} outer",
            paving.inner.len(),
            paving.boundary.len(),
            paving.outer.len()
        );
        // A partition of the root box.
        let all: Vec<&Vec<Interval>> = paving
            .inner
            .iter()
            .chain(&paving.boundary)
            .chain(&paving.outer)
            .collect();
        let total: Q = all.iter().map(|b| volume(b)).fold(Q::zero(), |a, v| a + v);
        assert_eq!(
            total,
            volume(root),
            "{text} {p:?} ratio {ratio}: the volumes add up to the root box's"
        );
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                assert!(
                    !overlap(a, b),
                    "{text} {p:?} ratio {ratio}: {a:?} and {b:?} overlap"
                );
            }
        }
        for b in &paving.inner {
            for x in points(b, &mut state, p) {
                let q: Vec<Q> = x.iter().map(|&v| q_of(v)).collect();
                assert!(
                    feasible(&q),
                    "{text} {p:?} ratio {ratio}: inner box {b:?} holds {x:?}, infeasible"
                );
            }
        }
        for b in &paving.outer {
            for x in points(b, &mut state, p).into_iter().skip(1 << b.len()) {
                let q: Vec<Q> = x.iter().map(|&v| q_of(v)).collect();
                // (Corners lie on faces shared with other boxes: only interior points count.)
                assert!(
                    !feasible(&q),
                    "{text} {p:?} ratio {ratio}: outer box {b:?} holds {x:?}, feasible"
                );
            }
        }
        for b in &paving.boundary {
            assert!(
                b.iter().all(|i| i.hi - i.lo <= eps),
                "{text} {p:?} ratio {ratio}: boundary box {b:?} wider than {eps}"
            );
        }
    }
}

#[test]
fn a_disk_above_a_cubic_is_paved_soundly() {
    check_paving(
        "x^2 + y^2 <= 1, y >= x^3",
        disk_and_cubic,
        &[iv(-2.0, 2.0), iv(-2.0, 2.0)],
        0.02,
    );
}

#[test]
fn an_annulus_with_a_rational_constraint_is_paved_soundly() {
    fn feasible(x: &[Q]) -> bool {
        let r = &x[0] * &x[0] + &x[1] * &x[1];
        let one = Q::one();
        // x / (1 + y^2) in [-0.5, 1]
        let f = &x[0] / (&one + &x[1] * &x[1]);
        r >= one && r <= Q::from_integer(4.into()) && f >= q_of(-0.5) && f <= one
    }
    check_paving(
        "x^2 + y^2 in [1, 4], x / (1 + y^2) in [-0.5, 1]",
        feasible,
        &[iv(-3.0, 3.0), iv(-3.0, 3.0)],
        0.05,
    );
}

#[test]
fn a_band_behind_a_square_root_is_paved_soundly() {
    // sqrt(x - y) <= 1 holds on 0 <= x - y <= 1; where x < y sqrt is undefined, and the
    // complement's contractor (sqrt(x - y) >= 1) drops those points as outside the domain:
    // its slabs must not be taken as inner where the function may be undefined.
    fn feasible(x: &[Q]) -> bool {
        let d = &x[0] - &x[1];
        d >= Q::zero() && d <= Q::one()
    }
    check_paving(
        "sqrt(x - y) <= 1",
        feasible,
        &[iv(0.0, 2.0), iv(0.0, 2.0)],
        0.02,
    );
}

#[test]
fn a_fixpoint_ratio_contracts_boxes_again_before_cutting() {
    // Two curves meeting at two points: each box the contractor narrows a lot is contracted
    // again instead of cut, which takes fewer boxes here; the two solutions' boxes (within
    // eps) stay, and the lists still partition the root (check_paving runs both ratios).
    let c = Constraints::parse("y == x^2, x == y^2 - 0.5").unwrap();
    let root = [iv(-2.0, 2.0), iv(-2.0, 2.0)]; // (x and y alike)
    let run = |ratio: f64| {
        Paver::new(&c, Precision::F64, BackendChoice::Cpu)
            .unwrap()
            .with_ratio(ratio)
            .pave(&root, 1e-6, 1 << 20)
            .unwrap()
    };
    let (once, again) = (run(0.0), run(0.1));
    assert_eq!(once.boundary.len(), 2);
    assert_eq!(again.boundary.len(), 2);
    assert!(
        again.evaluated < once.evaluated,
        "{} boxes with the ratio, {} without",
        again.evaluated,
        once.evaluated
    );
    // x = x^4 - 1/2 has two real roots; each box's x side brackets one.
    let at = again.vars.iter().position(|v| v == "x").unwrap();
    let mut xs: Vec<Interval> = again.boundary.iter().map(|b| b[at]).collect();
    xs.sort_by(|a, b| a.lo.total_cmp(&b.lo));
    let f = |x: f64| {
        let q = q_of(x);
        &q * &q * &q * &q - &q - Q::new(1.into(), 2.into())
    };
    for x in xs {
        assert!(x.hi - x.lo <= 1e-6);
        assert!(f(x.lo) * f(x.hi) <= Q::zero(), "{x:?} brackets a root");
    }
}

#[test]
fn a_fixpoint_ratio_over_the_whole_plane_is_sound() {
    // Unbounded sides: the first contraction makes them bounded (a shrink), the boxes go round
    // again and are then cut; the paving ends, every inner box is bounded and inside the disk
    // (exact corners), and the inner volume is below the set's area and near it, with and
    // without.
    let c = Constraints::parse("x^2 + y^2 <= 1").unwrap();
    let root = [Interval::ENTIRE, iv(f64::NEG_INFINITY, 0.5)];
    for ratio in [0.0, 0.2] {
        let p = Paver::new(&c, Precision::F64, BackendChoice::Cpu)
            .unwrap()
            .with_ratio(ratio)
            .pave(&root, 0.01, 1 << 20)
            .unwrap();
        assert!(!p.truncated && !p.inner.is_empty(), "ratio {ratio}");
        let mut inner = Q::zero();
        for b in &p.inner {
            let (x, y) = (b[0], b[1]);
            for (a, b) in [(x.lo, y.lo), (x.lo, y.hi), (x.hi, y.lo), (x.hi, y.hi)] {
                let (a, b) = (q_of(a), q_of(b));
                assert!(&a * &a + &b * &b <= Q::one(), "ratio {ratio}: {x:?} {y:?}");
            }
            inner += volume(b);
        }
        // The part of the disk below y = 0.5 has area 2 pi / 3 + sqrt(3) / 4 = 2.52740...
        assert!(
            inner > q_of(2.5) && inner < q_of(2.5275),
            "ratio {ratio}: {inner}"
        );
        for b in &p.boundary {
            assert!(
                b.iter().all(|i| i.hi - i.lo <= 0.01),
                "ratio {ratio}: {b:?}"
            );
        }
    }
}

#[test]
fn the_disk_volumes_bracket_pi() {
    let c = Constraints::parse("x^2 + y^2 <= 1").unwrap();
    let paving = pave(
        &c,
        &[iv(-2.0, 2.0), iv(-2.0, 2.0)],
        0.01,
        1 << 20,
        Precision::F64,
        BackendChoice::Cpu,
    )
    .unwrap();
    let vol = |l: &[Vec<Interval>]| l.iter().map(|b| volume(b)).fold(Q::zero(), |a, v| a + v);
    let inner = vol(&paving.inner);
    let with_boundary = &inner + vol(&paving.boundary);
    let pi_lo = q_of(std::f64::consts::PI); // the double below pi
    let pi_hi = q_of(std::f64::consts::PI.next_up()); // the double above pi
    assert!(inner < pi_lo && with_boundary > pi_hi);
    // And close: the boundary is thin.
    assert!(with_boundary - inner < q_of(0.06));
}

#[test]
fn points_outside_a_domain_are_never_inner() {
    // sqrt(x) <= 1 holds on [0, 1]; x < 0 is outside sqrt's domain.
    let c = Constraints::parse("sqrt(x) <= 1").unwrap();
    let paving = pave(
        &c,
        &[iv(-1.0, 2.0)],
        1e-3,
        1 << 20,
        Precision::F64,
        BackendChoice::Cpu,
    )
    .unwrap();
    for b in &paving.inner {
        assert!(b[0].lo >= 0.0 && b[0].hi <= 1.0, "inner {b:?}");
    }
    let inner: f64 = paving.inner.iter().map(|b| b[0].hi - b[0].lo).sum();
    assert!(inner > 0.99, "inner length {inner}");
    // sqrt(x) >= 1 holds on [1, 4]: the complement's contractor (sqrt(x) <= 1) drops x < 0
    // as outside sqrt's domain, so its slabs may be taken as inner only on boxes where sqrt
    // is defined throughout.
    let c = Constraints::parse("sqrt(x) >= 1").unwrap();
    let paving = pave(
        &c,
        &[iv(-4.0, 4.0)],
        1e-3,
        1 << 20,
        Precision::F64,
        BackendChoice::Cpu,
    )
    .unwrap();
    for b in &paving.inner {
        assert!(b[0].lo >= 1.0, "inner {b:?}");
    }
    let inner: f64 = paving.inner.iter().map(|b| b[0].hi - b[0].lo).sum();
    assert!(inner > 2.99, "inner length {inner}");
}

#[test]
fn constraints_read_and_their_errors_name_the_constraint() {
    let c = Constraints::parse("x <= y, (x, y) ... ").err();
    assert!(
        matches!(c, Some(ConstraintError::NoRelation { index: 2, .. })),
        "{c:?}"
    );
    let c = Constraints::parse("x + y == 1, x in [2, 1]").unwrap_err();
    assert!(
        matches!(c, ConstraintError::Range { index: 2, .. }),
        "{c:?}"
    );
    assert!(c.to_string().contains("constraint 2"), "{c}");
    let c = Constraints::parse("x >= 0,, y <= 1").unwrap_err();
    assert_eq!(c, ConstraintError::Empty { index: 2 });
    // `=` is `==`; min(x, y) keeps its comma; `in` needs spaces around it.
    let c = Constraints::parse("min(x, y) = 1, sin(x) in [0, 1]").unwrap();
    assert_eq!(c.source, "(min(x, y)) - (1), sin(x)");
    assert_eq!(c.ranges, vec![iv(0.0, 0.0), iv(0.0, 1.0)]);
}
