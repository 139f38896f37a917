//! The HC4Revise contractor (`Expression::contractor`, `src/ir/contract.rs`): it never loses a
//! point of the feasible set, checked against exact rational arithmetic, and it narrows.
//!
//! Soundness: polynomial and rational constraints `g(x) ∈ [a, b]` on random boxes, at random
//! float points of each box and at its corners: where `g(point)` computed exactly (rationals)
//! lies in `[a, b]`, the narrowed box must hold the point; the narrowed box lies in the box.
//! Both precisions (f32 boxes and points are f32 values), one and three sweeps. Narrowing: the
//! circle, a box the constraint excludes, and a second sweep never wider than the first.

use crate::common::oracle::{q_of, Q};
use crate::common::rng::splitmix64;
use ivjit::{BackendChoice, Evaluator, Expression, Interval, Precision};
use num_traits::Zero;

/// A constraint: its expression, the allowed range, and the exact value at a point (`None`
/// where it is undefined: a zero divisor).
struct Constraint {
    src: &'static str,
    range: (f64, f64),
    exact: fn(&[Q]) -> Option<Q>,
}

fn int(k: i64) -> Q {
    Q::from_integer(k.into())
}

const CONSTRAINTS: &[Constraint] = &[
    Constraint {
        src: "x^2 + y^2",
        range: (1.0, 4.0),
        exact: |v| Some(&v[0] * &v[0] + &v[1] * &v[1]),
    },
    Constraint {
        src: "x*y - z",
        range: (-1.0, 0.5),
        exact: |v| Some(&v[0] * &v[1] - &v[2]),
    },
    Constraint {
        src: "x^3 - 2*x*y + abs(y)",
        range: (0.0, 0.75),
        exact: |v| {
            let y_abs = if v[1] < Q::zero() {
                -&v[1]
            } else {
                v[1].clone()
            };
            Some(&v[0] * &v[0] * &v[0] - int(2) * &v[0] * &v[1] + y_abs)
        },
    },
    Constraint {
        src: "(x - y) / (1 + x^2)",
        range: (0.125, 1.0),
        exact: |v| Some((&v[0] - &v[1]) / (int(1) + &v[0] * &v[0])),
    },
    Constraint {
        src: "x / y + y^-2",
        range: (-3.0, 2.0),
        exact: |v| {
            if v[1].is_zero() {
                return None;
            }
            Some(&v[0] / &v[1] + int(1) / (&v[1] * &v[1]))
        },
    },
    Constraint {
        src: "fma(x, y, z^4) - 4*x",
        range: (-2.0, 1.0),
        exact: |v| {
            let z2 = &v[2] * &v[2];
            Some(&v[0] * &v[1] + &z2 * &z2 - int(4) * &v[0])
        },
    },
];

/// A float of `p` uniform-ish in [lo, hi] (endpoints included now and then).
fn point(state: &mut u64, lo: f64, hi: f64, p: Precision) -> f64 {
    let r = splitmix64(state);
    let t = (r >> 11) as f64 / (1u64 << 53) as f64;
    let x = match r % 16 {
        0 => lo,
        1 => hi,
        _ => lo + (hi - lo) * t,
    };
    let x = match p {
        Precision::F64 => x,
        Precision::F32 => x as f32 as f64,
    };
    x.clamp(lo, hi)
}

/// A random box of `p` (bounds of `p`): in [-3, 3], sometimes a point or a narrow one.
fn random_box(state: &mut u64, p: Precision) -> Interval {
    let a = point(state, -3.0, 3.0, p);
    let b = match splitmix64(state) % 8 {
        0 => a,
        1 => match p {
            Precision::F64 => a + 0.01,
            Precision::F32 => (a + 0.01) as f32 as f64,
        },
        _ => point(state, -3.0, 3.0, p),
    };
    Interval::new(a.min(b), a.max(b)).unwrap()
}

#[test]
fn contraction_never_loses_a_feasible_point() {
    let mut state = 0x1788_c0de_u64;
    let mut feasible_points = 0usize;
    let mut narrowed_boxes = 0usize;
    for c in CONSTRAINTS {
        let expr = Expression::parse(c.src).unwrap();
        let nv = expr.vars().len();
        let range = Interval::new(c.range.0, c.range.1).unwrap();
        for sweeps in [1, 3] {
            let contractor = expr.contractor(&[range], sweeps).unwrap();
            assert_eq!(contractor.vars(), expr.vars(), "{}", c.src);
            for p in [Precision::F64, Precision::F32] {
                let eval = Evaluator::new(&contractor, p, BackendChoice::Cpu).unwrap();
                let boxes: Vec<Vec<Interval>> = (0..400)
                    .map(|_| (0..nv).map(|_| random_box(&mut state, p)).collect())
                    .collect();
                let out = eval.eval_many(&boxes).unwrap();
                for (b, got) in boxes.iter().zip(&out) {
                    for (k, (g, x)) in got.iter().zip(b).enumerate() {
                        assert!(
                            g.is_empty() || (g.lo >= x.lo && g.hi <= x.hi),
                            "{} ({sweeps} sweeps, {p:?}): variable {k} widened from {x} to {g}",
                            c.src
                        );
                    }
                    if got.iter().zip(b).any(|(g, x)| *g != *x) {
                        narrowed_boxes += 1;
                    }
                    for _ in 0..40 {
                        let pt: Vec<f64> =
                            b.iter().map(|x| point(&mut state, x.lo, x.hi, p)).collect();
                        let q: Vec<Q> = pt.iter().map(|&v| q_of(v)).collect();
                        let Some(v) = (c.exact)(&q) else { continue };
                        if v < q_of(c.range.0) || v > q_of(c.range.1) {
                            continue;
                        }
                        feasible_points += 1;
                        for (k, (g, &t)) in got.iter().zip(&pt).enumerate() {
                            assert!(
                                !g.is_empty() && g.lo <= t && t <= g.hi,
                                "{} in {range} ({sweeps} sweeps, {p:?}) on {b:?}: the feasible \
                                 point {pt:?} has variable {k} outside the narrowed {g}",
                                c.src
                            );
                        }
                    }
                }
            }
        }
    }
    // The test checks something: many feasible points, many boxes narrowed.
    assert!(
        feasible_points > 20_000,
        "only {feasible_points} feasible points"
    );
    assert!(
        narrowed_boxes > 2_000,
        "only {narrowed_boxes} boxes narrowed"
    );
}

#[test]
fn the_circle_is_contracted_tightly_and_a_far_box_emptied() {
    let circle = Expression::parse("x^2 + y^2").unwrap();
    let one = Interval::point(1.0).unwrap();
    for p in [Precision::F64, Precision::F32] {
        let eval = Evaluator::new(
            &circle.contractor(&[one], 1).unwrap(),
            p,
            BackendChoice::Cpu,
        )
        .unwrap();
        // x in [0.6, 2]: y^2 <= 1 - 0.36 = 0.64, x <= 1.
        let b = [
            Interval::new(0.6, 2.0).unwrap(),
            Interval::new(-2.0, 2.0).unwrap(),
        ];
        let out = eval.eval(&b).unwrap();
        let tol = if p == Precision::F64 { 1e-12 } else { 1e-5 };
        // (In f32 the box is 0.6 rounded outward.)
        let lo = b[0].to_f32_enclosure().lo;
        let lo = if p == Precision::F64 { 0.6 } else { lo };
        assert!(
            out[0].lo == lo && (out[0].hi - 1.0).abs() < tol,
            "{p:?}: {}",
            out[0]
        );
        assert!(
            (out[1].hi - 0.8).abs() < tol && out[1].lo == -out[1].hi,
            "{p:?}: {}",
            out[1]
        );
        // Outside the circle.
        let far = [
            Interval::new(1.5, 2.0).unwrap(),
            Interval::new(-2.0, 2.0).unwrap(),
        ];
        let out = eval.eval(&far).unwrap();
        assert!(out.iter().all(Interval::is_empty), "{p:?}: {out:?}");
    }
}

#[test]
fn more_sweeps_are_never_wider_and_can_be_narrower() {
    // y = x + 1, z = y + 1 and w = z + 1 on x in [0, 1]. HC4's backward sweep visits z - y
    // first (it is built last), before y is narrowed; the centered step takes the outputs in
    // order, w - z first, before z is narrowed: one sweep leaves w wide, a second reaches
    // [3, 4].
    let expr = Expression::parse("w - z, y - x, z - y").unwrap();
    let one_one = Interval::point(1.0).unwrap();
    let ranges = [one_one, one_one, one_one];
    let eval = |sweeps: usize| {
        let c = expr.contractor(&ranges, sweeps).unwrap();
        let e = Evaluator::new(&c, Precision::F64, BackendChoice::Cpu).unwrap();
        let vars = c.vars().to_vec();
        let b: Vec<Interval> = vars
            .iter()
            .map(|v| match v.as_str() {
                "x" => Interval::new(0.0, 1.0).unwrap(),
                _ => Interval::new(-10.0, 10.0).unwrap(),
            })
            .collect();
        let out = e.eval(&b).unwrap();
        let w = vars.iter().position(|v| v == "w").unwrap();
        (out, w)
    };
    let (one, w) = eval(1);
    let (two, _) = eval(2);
    let (four, _) = eval(4);
    for ((a, b), c) in one.iter().zip(&two).zip(&four) {
        assert!(
            b.lo >= a.lo && b.hi <= a.hi && c.lo >= b.lo && c.hi <= b.hi,
            "{a} {b} {c}"
        );
    }
    assert!(one[w].hi > 4.5, "one sweep: w = {}", one[w]);
    assert_eq!(two[w], Interval::new(3.0, 4.0).unwrap(), "two sweeps");
}

#[test]
fn a_contractor_needs_one_range_per_output() {
    let expr = Expression::parse("x + y, x - y").unwrap();
    let e = expr.contractor(&[Interval::ENTIRE], 1).unwrap_err();
    assert!(e.to_string().contains("one range per output"), "{e}");
}

#[test]
fn a_function_without_a_reverse_rule_still_passes_on_emptiness() {
    // sinpi has no projection in the contractor, but where sinpi(x) cannot reach its range on
    // the box the box holds no feasible point, and every variable is emptied.
    let expr = Expression::parse("sinpi(x) + y").unwrap();
    let c = expr
        .contractor(&[Interval::new(0.5, 1.0).unwrap()], 1)
        .unwrap();
    let eval = Evaluator::new(&c, Precision::F64, BackendChoice::Cpu).unwrap();
    // x in [-1, 0]: sinpi(x) <= 0, and y in [-0.25, 0.25]: the sum stays below 0.5.
    let out = eval
        .eval(&[
            Interval::new(-1.0, 0.0).unwrap(),
            Interval::new(-0.25, 0.25).unwrap(),
        ])
        .unwrap();
    assert!(out.iter().all(Interval::is_empty), "{out:?}");
    // x in [0.25, 0.5]: sinpi(x) is in [0.70, 1], so y may be in [-0.5, 0.30]: y narrows, x
    // stays.
    let b = [
        Interval::new(0.25, 0.5).unwrap(),
        Interval::new(-2.0, 2.0).unwrap(),
    ];
    let out = eval.eval(&b).unwrap();
    assert_eq!(out[0], b[0]);
    assert!(
        out[1].lo >= -0.5 && out[1].lo < -0.49 && out[1].hi < 0.3,
        "{}",
        out[1]
    );
}

#[test]
fn sin_cos_and_tan_project_through_their_periodic_reverse_operations() {
    // sin(x) >= 1/2 on [-9, 10]: x in [pi/6 + 2k pi, 5 pi/6 + 2k pi]; the pieces meeting the
    // box are k = -1, 0, 1, so x narrows to [pi/6 - 2 pi, 5 pi/6 + 2 pi] = [-11 pi/6, 17 pi/6].
    // cos(x) <= -1/2 on [0, 10]: [2 pi/3, 4 pi/3] and [8 pi/3, ...]: x in [2 pi/3, 10].
    // tan(x) in [1, 2] on [2, 5]: [pi/4 + pi, atan(2) + pi].
    // The bounds are checked within 1e-9 of the exact values (which the f64 formulas give to
    // 1e-15): a bound that took the wrong piece, or none, is off by far more. That no point is
    // lost at all is the class matrix's check (sinRev, cosRev, tanRev against the reverse
    // oracle).
    let pi = std::f64::consts::PI;
    type Bounds = (f64, f64);
    // (constraint function, its range, the box, the narrowed box)
    let cases: [(&str, Bounds, Bounds, Bounds); 3] = [
        (
            "sin(x)",
            (0.5, 1.0),
            (-9.0, 10.0),
            (-11.0 * pi / 6.0, 17.0 * pi / 6.0),
        ),
        ("cos(x)", (-1.0, -0.5), (0.0, 10.0), (2.0 * pi / 3.0, 10.0)),
        (
            "tan(x)",
            (1.0, 2.0),
            (2.0, 5.0),
            (pi / 4.0 + pi, 2f64.atan() + pi),
        ),
    ];
    for (src, c, x, want) in cases {
        let expr = Expression::parse(src).unwrap();
        let ctc = expr
            .contractor(&[Interval::new(c.0, c.1).unwrap()], 1)
            .unwrap();
        let eval = Evaluator::new(&ctc, Precision::F64, BackendChoice::Cpu).unwrap();
        let out = eval.eval(&[Interval::new(x.0, x.1).unwrap()]).unwrap()[0];
        let tol = 1e-9;
        assert!(
            out.lo <= want.0 + tol && out.lo >= want.0 - tol,
            "{src} in {c:?} on {x:?}: {out:?}, want {want:?}"
        );
        assert!(
            out.hi >= want.1 - tol && out.hi <= want.1 + tol,
            "{src} in {c:?} on {x:?}: {out:?}, want {want:?}"
        );
    }
}

#[test]
fn the_centered_step_narrows_where_hc4_cannot_and_only_where_the_mean_value_theorem_holds() {
    let contract = |src: &str, range: Interval, x: Interval| {
        let c = Expression::parse(src)
            .unwrap()
            .contractor(&[range], 1)
            .unwrap();
        let e = Evaluator::new(&c, Precision::F64, BackendChoice::Cpu).unwrap();
        e.eval(&[x]).unwrap()[0]
    };
    // x^2 - x = 0 on [0.9, 1.2]: HC4 alone stops at [sqrt(0.9), sqrt(1.2)] (0.147 wide); the
    // linear form at the midpoint 1.05 with slope 2x - 1 in [0.8, 1.4] leaves
    // 1.05 - [0.0525 / 0.8, 0.0525 / 1.4] = [0.984, 1.0125].
    let zero = Interval::point(0.0).unwrap();
    let x = contract("x^2 - x", zero, Interval::new(0.9, 1.2).unwrap());
    assert!(x.contains(1.0), "{x}");
    assert!(x.lo > 0.98 && x.hi < 1.02, "{x}");
    // x - sign(x) = 0 on [-0.5, 2] holds at 0 and 1. sign jumps at 0: the mean value theorem
    // does not hold on the box (at the midpoint 0.75 the linear form would give x = 1 alone),
    // and the step must leave x to HC4, which keeps both.
    let x = contract("x - sign(x)", zero, Interval::new(-0.5, 2.0).unwrap());
    assert!(x.contains(0.0) && x.contains(1.0), "{x}");
}

/// `x^y` (pow, variable exponent) projects through `powRev1` and `powRev2`: on random boxes of
/// [0, 4] x [-3, 3] (both precisions) every point whose power the real oracle encloses inside
/// the range (a certainly feasible point) stays in the narrowed box; and `x^y = 8` on
/// [1, 3] x [2, 4] narrows x to an outward enclosure of [8^(1/4), 8^(1/2)].
#[test]
fn pow_projects_through_its_reverse_operations() {
    use crate::common::elem_oracle::{bf, le, Val};
    use crate::common::real_oracle as ro;
    let in_range = |x: f64, y: f64, r: (f64, f64)| -> bool {
        if x < 0.0 || (x == 0.0 && y <= 0.0) {
            return false;
        }
        match ro::value("pow", &[bf(x), bf(y)], 256) {
            Val::In(e) => le(&bf(r.0), &e.lo) && le(&e.hi, &bf(r.1)),
            Val::Out => false,
        }
    };
    let mut state = 0x0907_75e7_u64;
    let ranges = [(0.5, 2.0), (3.0, 10.0), (0.0, 0.25)];
    let pow_box = |state: &mut u64, p: Precision| {
        let a = point(state, 0.0, 4.0, p);
        let b = point(state, 0.0, 4.0, p);
        let c = point(state, -3.0, 3.0, p);
        let d = point(state, -3.0, 3.0, p);
        vec![
            Interval::new(a.min(b), a.max(b)).unwrap(),
            Interval::new(c.min(d), c.max(d)).unwrap(),
        ]
    };
    feasible_points_stay("x^y", ["x", "y"], &ranges, &mut state, pow_box, in_range);
    let c = Expression::parse("x^y")
        .unwrap()
        .contractor(&[Interval::new(8.0, 8.0).unwrap()], 1)
        .unwrap();
    let eval = Evaluator::new(&c, Precision::F64, BackendChoice::Cpu).unwrap();
    let got = eval
        .eval(&[
            Interval::new(1.0, 3.0).unwrap(),
            Interval::new(2.0, 4.0).unwrap(),
        ])
        .unwrap();
    // The exact ends 8^(1/4) and 8^(1/2), enclosed by the real oracle: inside the result,
    // which is at most 1e-12 wider.
    let exact = |e: f64| match ro::value("pow", &[bf(8.0), bf(e)], 256) {
        Val::In(v) => v,
        Val::Out => unreachable!("8^e is defined"),
    };
    let (lo, hi) = (exact(0.25), exact(0.5));
    assert!(
        le(&bf(got[0].lo), &lo.lo) && le(&hi.hi, &bf(got[0].hi)),
        "x narrowed to {}: misses 8^(1/4) or 8^(1/2)",
        got[0]
    );
    assert!(
        le(&lo.lo, &bf(got[0].lo + 1e-12)) && le(&bf(got[0].hi - 1e-12), &hi.hi),
        "x narrowed to {}",
        got[0]
    );
}

/// `atan2(y, x)` projects through `atan2Rev1` and `atan2Rev2`: on random boxes of [-3, 3]²
/// (both precisions) every point whose atan2 the real oracle encloses inside the range (a
/// certainly feasible point) stays in the narrowed box, for ranges in each quadrant and across
/// the cut at ±pi; and `atan2(y, x) in [0.5, 1]` on y in [0, 2], x in [1, 2] narrows y to an
/// outward enclosure of [tan(0.5), 2] (y = x tan(t) with x >= 1, t >= 0.5; its upper end
/// 2 tan(1) is beyond 2) and leaves x (y cot(t) reaches below 1 and above 2).
#[test]
fn atan2_projects_through_its_reverse_operations() {
    use crate::common::elem_oracle::{bf, le, Val};
    use crate::common::real_oracle as ro;
    let in_range = |y: f64, x: f64, r: (f64, f64)| -> bool {
        if y == 0.0 && x == 0.0 {
            return false;
        }
        match ro::value("atan2", &[bf(y), bf(x)], 256) {
            Val::In(e) => le(&bf(r.0), &e.lo) && le(&e.hi, &bf(r.1)),
            Val::Out => false,
        }
    };
    let mut state = 0x0a7a_2c07_u64;
    let ranges = [
        (0.5, 1.0),
        (2.0, 4.0),
        (-3.0, -2.0),
        (-0.25, 0.25),
        (1.5, 1.6),
    ];
    let two_boxes =
        |state: &mut u64, p: Precision| vec![random_box(state, p), random_box(state, p)];
    feasible_points_stay(
        "atan2(y, x)",
        ["y", "x"],
        &ranges,
        &mut state,
        two_boxes,
        in_range,
    );
    let c = Expression::parse("atan2(y, x)")
        .unwrap()
        .contractor(&[Interval::new(0.5, 1.0).unwrap()], 1)
        .unwrap();
    let eval = Evaluator::new(&c, Precision::F64, BackendChoice::Cpu).unwrap();
    let got = eval
        .eval(&[
            Interval::new(0.0, 2.0).unwrap(),
            Interval::new(1.0, 2.0).unwrap(),
        ])
        .unwrap();
    let tan_half = match ro::value("tan", &[bf(0.5)], 256) {
        Val::In(v) => v,
        Val::Out => unreachable!("tan(0.5) is defined"),
    };
    // y: [tan(0.5), 2], its lower end within 1e-15 outside the exact one; x untouched.
    assert!(
        le(&bf(got[0].lo), &tan_half.lo) && le(&tan_half.hi, &bf(got[0].lo + 1e-15)),
        "y narrowed to {}: its lower end is not tan(0.5)",
        got[0]
    );
    assert_eq!(got[0].hi, 2.0, "y narrowed to {}", got[0]);
    assert_eq!(
        (got[1].lo, got[1].hi),
        (1.0, 2.0),
        "x narrowed to {}",
        got[1]
    );
}

/// The check both projections above share: for each range r, the contractor of `src` in r
/// (variables in the order `vars`) on 300 boxes from `make_box` in each precision keeps every
/// one of 20 random points of each box that `in_range` proves feasible (its value certainly
/// in r); over all, more than 1,000 feasible points are checked and more than 300 boxes
/// narrowed (so the test cannot pass by never narrowing or never finding a point).
fn feasible_points_stay(
    src: &str,
    vars: [&str; 2],
    ranges: &[(f64, f64)],
    state: &mut u64,
    mut make_box: impl FnMut(&mut u64, Precision) -> Vec<Interval>,
    in_range: impl Fn(f64, f64, (f64, f64)) -> bool,
) {
    let mut feasible = 0usize;
    let mut narrowed = 0usize;
    for &range in ranges {
        let r = Interval::new(range.0, range.1).unwrap();
        let contractor = Expression::parse(src).unwrap().contractor(&[r], 1).unwrap();
        for p in [Precision::F64, Precision::F32] {
            let eval = Evaluator::new(&contractor, p, BackendChoice::Cpu).unwrap();
            assert_eq!(eval.program().var_names, vars, "{src}'s variables");
            let boxes: Vec<Vec<Interval>> = (0..300).map(|_| make_box(state, p)).collect();
            let out = eval.eval_many(&boxes).unwrap();
            for (b, got) in boxes.iter().zip(&out) {
                if got.iter().zip(b).any(|(g, x)| *g != *x) {
                    narrowed += 1;
                }
                for _ in 0..20 {
                    let (u, v) = (
                        point(state, b[0].lo, b[0].hi, p),
                        point(state, b[1].lo, b[1].hi, p),
                    );
                    if !in_range(u, v, range) {
                        continue;
                    }
                    feasible += 1;
                    assert!(
                        got[0].contains(u) && got[1].contains(v),
                        "{src} in {r} ({p:?}) on {b:?}: the feasible point ({u}, {v}) left \
                         the narrowed box {got:?}"
                    );
                }
            }
        }
    }
    assert!(feasible > 1_000, "{src}: only {feasible} feasible points");
    assert!(narrowed > 300, "{src}: only {narrowed} boxes narrowed");
}
