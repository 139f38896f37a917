//! Contractors and paving on the interval classes (`tests/common/classes.rs`: entire,
//! half-lines, [MAX, inf], [-MAX, MAX], adjacent floats at the top and at binade edges, many
//! periods at huge magnitude, subnormals, signed zeros, points, empty), not only on ordinary
//! boxes: the HC4 projections, the periodic reverse operations, the centered step (whose
//! midpoint of an unbounded side is 0 or ±MAX) and the paving's bisection all meet infinite and
//! huge bounds here.
//!
//! Soundness, with exact or rigorous oracles: at float points of each box (its finite ends and
//! their neighbours, 0 and -0, ±1, ±MAX, the smallest subnormal, ... where inside), a point
//! whose constraint value lies in the range — computed exactly in rationals for the polynomial
//! and rational constraints, enclosed in astro-float (`real_oracle`) for the trigonometric
//! ones, a point counted only where the enclosure decides — must stay in the narrowed box, and
//! the narrowed box must lie in the box. Paving: every inner box's points satisfy every
//! constraint and every outer box's interior points violate one. CPU evaluator, f64 and f32;
//! the GPU runs the same contractors in `tests/gpu` (contractors_equal_cpu).

use crate::common::classes::{self as cl, Class};
use crate::common::elem_oracle::{self as eo, bf, le, Val};
use crate::common::oracle::{q_of, Fmt, Q};
use crate::common::real_oracle as ro;
use ivjit::search::pave::{pave, Constraints};
use ivjit::{BackendChoice, Evaluator, Expression, Interval, Precision};
use num_traits::{One, Zero};

/// Whether a point satisfies a constraint: `Some(true)` feasible, `Some(false)` not (or outside
/// the function's domain), `None` undecided (an enclosure straddling the range's end).
type Feasible = fn(&[f64]) -> Option<bool>;

fn int(k: i64) -> Q {
    Q::from_integer(k.into())
}

fn within(v: &Q, lo: f64, hi: f64) -> bool {
    (lo == f64::NEG_INFINITY || *v >= q_of(lo)) && (hi == f64::INFINITY || *v <= q_of(hi))
}

fn qs(x: &[f64]) -> Vec<Q> {
    x.iter().map(|&v| q_of(v)).collect()
}

/// An enclosure of `f` at the float x (astro-float), or `None` outside its domain.
fn enc(f: &str, x: f64) -> Option<eo::Enc> {
    match ro::value(f, &[bf(x)], cl::P) {
        Val::In(e) => Some(e),
        Val::Out => None,
    }
}

/// Whether the enclosure `e` decides `e ∈ [lo, hi]`.
fn decide(e: &eo::Enc, lo: f64, hi: f64) -> Option<bool> {
    let (l, h) = (bf(lo), bf(hi));
    if le(&l, &e.lo) && le(&e.hi, &h) {
        Some(true)
    } else if !le(&l, &e.hi) || !le(&e.lo, &h) {
        Some(false)
    } else {
        None
    }
}

/// (source, range, oracle). The first two are trees (HC4 alone); the others repeat a
/// variable, so the centered step runs on them too.
const CONSTRAINTS: &[(&str, (f64, f64), Feasible)] = &[
    ("x^2 + y^2", (1.0, 4.0), |x| {
        let q = qs(x);
        Some(within(&(&q[0] * &q[0] + &q[1] * &q[1]), 1.0, 4.0))
    }),
    ("x*y - 1/y", (-1.0, 0.5), |x| {
        if x[1] == 0.0 {
            return Some(false);
        }
        let q = qs(x);
        Some(within(&(&q[0] * &q[1] - int(1) / &q[1]), -1.0, 0.5))
    }),
    ("x^3 - 2*x*y + abs(y)", (0.0, 0.75), |x| {
        let q = qs(x);
        let a = if q[1] < Q::zero() {
            -&q[1]
        } else {
            q[1].clone()
        };
        Some(within(
            &(&q[0] * &q[0] * &q[0] - int(2) * &q[0] * &q[1] + a),
            0.0,
            0.75,
        ))
    }),
    ("(x - y) / (1 + x^2)", (0.125, f64::INFINITY), |x| {
        let q = qs(x);
        Some(within(
            &((&q[0] - &q[1]) / (int(1) + &q[0] * &q[0])),
            0.125,
            f64::INFINITY,
        ))
    }),
    ("sin(x) + cos(y)", (0.5, 1.5), |x| {
        let s = enc("sin", x[0])?;
        let c = enc("cos", x[1])?;
        decide(&eo::add_e(&s, &c, cl::P), 0.5, 1.5)
    }),
    ("tan(x) - y", (-1.0, 1.0), |x| {
        let t = enc("tan", x[0])?;
        decide(&eo::add_e(&t, &eo::Enc::exact(-x[1]), cl::P), -1.0, 1.0)
    }),
    ("sin(x) * x", (0.25, 2.0), |x| {
        let s = enc("sin", x[0])?;
        decide(&eo::mul_e(&s, &eo::Enc::exact(x[0]), cl::P), 0.25, 2.0)
    }),
];

fn prec(fmt: Fmt) -> Precision {
    match fmt {
        Fmt::F64 => Precision::F64,
        Fmt::F32 => Precision::F32,
    }
}

/// Float points of `p` in [lo, hi] (none for empty): the finite ends and their inner
/// neighbours, and 0, -0, ±0.5, ±1, ±3, ±MAX, ±1e30, the smallest subnormal and the midpoint
/// where inside. `interior`: only points strictly inside (the faces of a paving's boxes are
/// shared).
fn witnesses(lo: f64, hi: f64, fmt: Fmt, interior: bool) -> Vec<f64> {
    if lo.is_nan() {
        return Vec::new();
    }
    let (max, tiny) = match fmt {
        Fmt::F64 => (f64::MAX, 5e-324),
        Fmt::F32 => (f32::MAX as f64, f32::from_bits(1) as f64),
    };
    let step = |x: f64, up: bool| match fmt {
        Fmt::F64 => {
            if up {
                x.next_up()
            } else {
                x.next_down()
            }
        }
        Fmt::F32 => {
            let f = x as f32;
            (if up { f.next_up() } else { f.next_down() }) as f64
        }
    };
    let mut v = Vec::new();
    if lo.is_finite() {
        v.push(lo);
        v.push(step(lo, true));
    }
    if hi.is_finite() {
        v.push(hi);
        v.push(step(hi, false));
    }
    let mid = match fmt {
        Fmt::F64 => lo / 2.0 + hi / 2.0,
        Fmt::F32 => (lo / 2.0 + hi / 2.0) as f32 as f64,
    };
    for x in [
        0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 3.0, -3.0, max, -max, 1e30, -1e30, tiny, -tiny, mid,
    ] {
        v.push(x);
    }
    let mut out: Vec<f64> = Vec::new();
    for x in v {
        let inside = x.is_finite()
            && if interior {
                lo < x && x < hi
            } else {
                lo <= x && x <= hi
            };
        if inside && !out.iter().any(|y| y.to_bits() == x.to_bits()) {
            out.push(x);
        }
    }
    out.truncate(8);
    out
}

/// Every combination of the sides' points (at most 8 per side).
fn combos(sides: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let mut out: Vec<Vec<f64>> = vec![Vec::new()];
    for s in sides {
        out = out
            .into_iter()
            .flat_map(|p| {
                s.iter().map(move |&x| {
                    let mut q = p.clone();
                    q.push(x);
                    q
                })
            })
            .collect();
    }
    out
}

/// Boxes of `nv` sides from the classes: each class in each position, the other sides from
/// classes further along the list (so that every class meets several others).
fn class_boxes(classes: &[Class], nv: usize) -> Vec<Vec<Interval>> {
    let n = classes.len();
    let side = |c: &Class| {
        if c.lo.is_nan() {
            Interval::EMPTY
        } else {
            Interval { lo: c.lo, hi: c.hi }
        }
    };
    let mut out = Vec::new();
    for i in 0..n {
        for k in 0..nv {
            out.push(
                (0..nv)
                    .map(|j| {
                        let c = if j == k { i } else { (i * 7 + 3 + 5 * j) % n };
                        side(&classes[c])
                    })
                    .collect(),
            );
        }
    }
    out
}

#[test]
fn contractors_on_the_interval_classes_never_lose_a_feasible_point() {
    let mut feasible_points = 0usize;
    let mut narrowed = 0usize;
    for &(src, range, feasible) in CONSTRAINTS {
        let expr = Expression::parse(src).unwrap();
        let nv = expr.vars().len();
        let r = Interval::new(range.0, range.1).unwrap();
        for sweeps in [1, 2] {
            let contractor = expr.contractor(&[r], sweeps).unwrap();
            for fmt in [Fmt::F64, Fmt::F32] {
                let p = prec(fmt);
                let classes = cl::classes(fmt, cl::stride());
                let eval = Evaluator::new(&contractor, p, BackendChoice::Cpu).unwrap();
                let boxes = class_boxes(&classes, nv);
                let out = eval.eval_many(&boxes).unwrap();
                for (b, got) in boxes.iter().zip(&out) {
                    for (k, (g, x)) in got.iter().zip(b).enumerate() {
                        assert!(
                            g.is_empty() || (g.lo >= x.lo && g.hi <= x.hi),
                            "{src} ({sweeps} sweeps, {p:?}) on {b:?}: variable {k} widened \
                             from {x} to {g}"
                        );
                    }
                    if got.iter().zip(b).any(|(g, x)| g != x) {
                        narrowed += 1;
                    }
                    let sides: Vec<Vec<f64>> = b
                        .iter()
                        .map(|x| witnesses(x.lo, x.hi, fmt, false))
                        .collect();
                    for pt in combos(&sides) {
                        if feasible(&pt) != Some(true) {
                            continue;
                        }
                        feasible_points += 1;
                        for (k, (g, &t)) in got.iter().zip(&pt).enumerate() {
                            assert!(
                                !g.is_empty() && g.lo <= t && t <= g.hi,
                                "{src} in {r} ({sweeps} sweeps, {p:?}) on {b:?}: the feasible \
                                 point {pt:?} has variable {k} outside the narrowed {g}"
                            );
                        }
                    }
                }
            }
        }
    }
    // The test checks something.
    assert!(
        feasible_points > 5_000,
        "only {feasible_points} feasible points"
    );
    assert!(narrowed > 1_000, "only {narrowed} boxes narrowed");
}

#[test]
fn pavings_of_unbounded_and_huge_root_boxes_are_sound() {
    // Two 2-D problems on root boxes from the classes (every side nonempty, not a point):
    // inner boxes' points all feasible, outer boxes' interior points all infeasible.
    type Problem = (&'static str, fn(&[f64]) -> Option<bool>);
    let problems: [Problem; 2] = [
        ("x^2 + y^2 <= 1, y >= x^3", |x| {
            let q = qs(x);
            let r = &q[0] * &q[0] + &q[1] * &q[1];
            Some(r <= Q::one() && q[1] >= &q[0] * &q[0] * &q[0])
        }),
        ("sin(x) + cos(y) >= 0.5, x^2 + y^2 <= 9", |x| {
            let q = qs(x);
            if &q[0] * &q[0] + &q[1] * &q[1] > int(9) {
                return Some(false);
            }
            let s = enc("sin", x[0])?;
            let c = enc("cos", x[1])?;
            decide(&eo::add_e(&s, &c, cl::P), 0.5, f64::INFINITY)
        }),
    ];
    let mut checked = 0usize;
    for (text, feasible) in problems {
        let constraints = Constraints::parse(text).unwrap();
        for fmt in [Fmt::F64, Fmt::F32] {
            let p = prec(fmt);
            let classes: Vec<Class> = cl::classes(fmt, cl::stride())
                .into_iter()
                .filter(|c| !c.lo.is_nan() && c.lo < c.hi)
                .collect();
            // Every 3rd class against a few others: enough pairs to meet each group.
            for (i, a) in classes.iter().enumerate().step_by(3) {
                let b = &classes[(i * 5 + 1) % classes.len()];
                let root = [
                    Interval { lo: a.lo, hi: a.hi },
                    Interval { lo: b.lo, hi: b.hi },
                ];
                let paving = pave(&constraints, &root, 0.25, 400, p, BackendChoice::Cpu)
                    .unwrap_or_else(|e| panic!("{text} on {root:?}: {e}"));
                // Inner boxes: no point infeasible (faces included); outer boxes: no interior
                // point feasible.
                for (list, kind, interior, wrong) in [
                    (&paving.inner, "inner", false, Some(false)),
                    (&paving.outer, "outer", true, Some(true)),
                ] {
                    for bx in list {
                        let sides: Vec<Vec<f64>> = bx
                            .iter()
                            .map(|x| witnesses(x.lo, x.hi, fmt, interior))
                            .collect();
                        for pt in combos(&sides) {
                            checked += 1;
                            assert!(
                                feasible(&pt) != wrong,
                                "{text} {p:?} root {root:?}: {kind} box {bx:?} holds {pt:?}"
                            );
                        }
                    }
                }
            }
        }
    }
    assert!(checked > 5_000, "only {checked} points checked");
}
