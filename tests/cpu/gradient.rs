//! Gradients (`Expression::gradient`) checked against exact oracles:
//! - random rational expressions in x and y (+, -, *, /, sqr, pown, neg, abs, min, max): at
//!   random points of random boxes the exact partial derivatives (dual numbers in rational
//!   arithmetic) lie in the enclosures, in f64 and f32;
//! - every elementary function: by the mean value theorem, (f(q) - f(p)) / (q - p) is the
//!   derivative at some point between p and q, so the quotient (f at both ends from the
//!   high-precision oracle, rounded outward) must meet the derivative's enclosure over [p, q];
//! - functions with jumps: derivative 0 and *defined* [1, 1] on a box without a jump, the flag
//!   below 1 on a box with one.

use crate::common::elem_oracle::{self, Val};
use crate::common::rng::splitmix64;

use ivjit::internals::ir::diff::Gradient;
use ivjit::{BackendChoice, Evaluator, Expression, Interval, Precision};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{Signed, Zero};

struct Gen(u64);

impl Gen {
    fn below(&mut self, n: u64) -> u64 {
        splitmix64(&mut self.0) % n
    }
    fn unit(&mut self) -> f64 {
        (splitmix64(&mut self.0) >> 11) as f64 / (1u64 << 53) as f64
    }
}

enum Tree {
    X,
    Y,
    Const(i64),
    Add(Box<Tree>, Box<Tree>),
    Sub(Box<Tree>, Box<Tree>),
    Mul(Box<Tree>, Box<Tree>),
    Div(Box<Tree>, Box<Tree>),
    Min(Box<Tree>, Box<Tree>),
    Max(Box<Tree>, Box<Tree>),
    Sqr(Box<Tree>),
    Pown(Box<Tree>, i32),
    Neg(Box<Tree>),
    Abs(Box<Tree>),
}

fn tree(g: &mut Gen, depth: u32) -> Tree {
    if depth == 0 || g.below(5) == 0 {
        return match g.below(3) {
            0 => Tree::X,
            1 => Tree::Y,
            _ => Tree::Const(g.below(9) as i64 - 4),
        };
    }
    let a = Box::new(tree(g, depth - 1));
    let b = Box::new(tree(g, depth - 1));
    match g.below(11) {
        0 => Tree::Add(a, b),
        1 => Tree::Sub(a, b),
        2 | 3 => Tree::Mul(a, b),
        4 => Tree::Div(a, b),
        5 => Tree::Min(a, b),
        6 => Tree::Max(a, b),
        7 => Tree::Sqr(a),
        8 => Tree::Pown(a, g.below(7) as i32 - 2),
        9 => Tree::Neg(a),
        _ => Tree::Abs(a),
    }
}

fn text(t: &Tree) -> String {
    match t {
        Tree::X => "x".into(),
        Tree::Y => "y".into(),
        Tree::Const(k) => format!("({k}/2)"),
        Tree::Add(a, b) => format!("({} + {})", text(a), text(b)),
        Tree::Sub(a, b) => format!("({} - {})", text(a), text(b)),
        Tree::Mul(a, b) => format!("({} * {})", text(a), text(b)),
        Tree::Div(a, b) => format!("({} / {})", text(a), text(b)),
        Tree::Min(a, b) => format!("min({}, {})", text(a), text(b)),
        Tree::Max(a, b) => format!("max({}, {})", text(a), text(b)),
        Tree::Sqr(a) => format!("sqr({})", text(a)),
        Tree::Pown(a, n) => format!("({})^({n})", text(a)),
        Tree::Neg(a) => format!("(-{})", text(a)),
        Tree::Abs(a) => format!("abs({})", text(a)),
    }
}

type Q = BigRational;

/// (value, d/dx, d/dy) exactly; `None` where the expression or its derivative is undefined
/// (a division by 0, a non-smooth point: abs at 0, min/max where the sides are equal but
/// their derivatives differ).
fn dual(t: &Tree, x: &Q, y: &Q) -> Option<(Q, Q, Q)> {
    let one = || Q::from_integer(BigInt::from(1));
    let zero = Q::zero;
    Some(match t {
        Tree::X => (x.clone(), one(), zero()),
        Tree::Y => (y.clone(), zero(), one()),
        Tree::Const(k) => (Q::new(BigInt::from(*k), BigInt::from(2)), zero(), zero()),
        Tree::Add(a, b) => {
            let (a, b) = (dual(a, x, y)?, dual(b, x, y)?);
            (a.0 + b.0, a.1 + b.1, a.2 + b.2)
        }
        Tree::Sub(a, b) => {
            let (a, b) = (dual(a, x, y)?, dual(b, x, y)?);
            (a.0 - b.0, a.1 - b.1, a.2 - b.2)
        }
        Tree::Mul(a, b) => {
            let (a, b) = (dual(a, x, y)?, dual(b, x, y)?);
            (
                &a.0 * &b.0,
                &a.1 * &b.0 + &a.0 * &b.1,
                &a.2 * &b.0 + &a.0 * &b.2,
            )
        }
        Tree::Div(a, b) => {
            let (a, b) = (dual(a, x, y)?, dual(b, x, y)?);
            if b.0.is_zero() {
                return None;
            }
            let q = &a.0 / &b.0;
            let dx = (&a.1 - &q * &b.1) / &b.0;
            let dy = (&a.2 - &q * &b.2) / &b.0;
            (q, dx, dy)
        }
        Tree::Min(a, b) | Tree::Max(a, b) => {
            let (a, b) = (dual(a, x, y)?, dual(b, x, y)?);
            if a.0 == b.0 {
                if a.1 != b.1 || a.2 != b.2 {
                    return None;
                }
                return Some(a);
            }
            let a_wins = (a.0 < b.0) == matches!(t, Tree::Min(..));
            if a_wins {
                a
            } else {
                b
            }
        }
        Tree::Sqr(a) => {
            let a = dual(a, x, y)?;
            let two = Q::from_integer(BigInt::from(2));
            (&a.0 * &a.0, &two * &a.0 * &a.1, &two * &a.0 * &a.2)
        }
        Tree::Pown(a, n) => {
            let a = dual(a, x, y)?;
            if *n < 0 && a.0.is_zero() {
                return None;
            }
            let pw = |k: i32| -> Q {
                if k >= 0 {
                    num_traits::pow(a.0.clone(), k as usize)
                } else {
                    one() / num_traits::pow(a.0.clone(), (-k) as usize)
                }
            };
            if *n == 0 {
                return Some((one(), zero(), zero()));
            }
            let c = Q::from_integer(BigInt::from(*n)) * pw(n - 1);
            (pw(*n), &c * &a.1, &c * &a.2)
        }
        Tree::Neg(a) => {
            let a = dual(a, x, y)?;
            (-a.0, -a.1, -a.2)
        }
        Tree::Abs(a) => {
            let a = dual(a, x, y)?;
            if a.0.is_zero() {
                if a.1.is_zero() && a.2.is_zero() {
                    return Some((a.0, a.1, a.2));
                }
                return None;
            }
            if a.0.is_negative() {
                (-a.0, -a.1, -a.2)
            } else {
                a
            }
        }
    })
}

fn q(v: f64) -> Q {
    Q::from_float(v).expect("finite")
}

fn contains(iv: Interval, v: &Q) -> bool {
    (iv.lo == f64::NEG_INFINITY || q(iv.lo) <= *v) && (iv.hi == f64::INFINITY || *v <= q(iv.hi))
}

fn eval_gradient(expr: &Expression, p: Precision, b: &[Interval]) -> (Vec<Interval>, Gradient) {
    let (g, at) = expr.gradient().unwrap();
    let e = Evaluator::new(&g, p, BackendChoice::Cpu).unwrap();
    (e.eval(b).unwrap(), at)
}

#[test]
fn rational_expressions_contain_the_exact_partial_derivatives() {
    let mut g = Gen(0x9ad1e47);
    let (mut checked, mut exprs) = (0usize, 0usize);
    for case in 0..250 {
        let t = tree(&mut g, 5);
        let src = text(&t);
        let expr = Expression::parse(&src).unwrap();
        if expr.vars().len() != 2 {
            continue;
        }
        exprs += 1;
        let (grad, at) = expr.gradient().unwrap();
        let xi = expr.vars().iter().position(|v| v == "x").unwrap();
        for p in [Precision::F64, Precision::F32] {
            let eval = Evaluator::new(&grad, p, BackendChoice::Cpu).unwrap();
            for _ in 0..6 {
                let mut bx = [Interval::new(0.0, 0.0).unwrap(); 2];
                for iv in &mut bx {
                    let c = -3.0 + 6.0 * g.unit();
                    let h = 2f64.powi(-(g.below(10) as i32)) * g.unit();
                    let (lo, hi) = match p {
                        Precision::F64 => (c - h, c + h),
                        Precision::F32 => (((c - h) as f32) as f64, ((c + h) as f32) as f64),
                    };
                    *iv = Interval::new(lo.min(hi), lo.max(hi)).unwrap();
                }
                // Box in the expression's variable order.
                let b = if xi == 0 { bx } else { [bx[1], bx[0]] };
                let out = eval.eval(&b).unwrap();
                let defined = out[at.defined(0)];
                assert_eq!((defined.lo, defined.hi), (1.0, 1.0), "{src}: no jumps");
                for _ in 0..4 {
                    let (px, py) = (
                        bx[0].lo + g.unit() * (bx[0].hi - bx[0].lo),
                        bx[1].lo + g.unit() * (bx[1].hi - bx[1].lo),
                    );
                    let (px, py) = (px.clamp(bx[0].lo, bx[0].hi), py.clamp(bx[1].lo, bx[1].hi));
                    let Some((f, dx, dy)) = dual(&t, &q(px), &q(py)) else {
                        continue;
                    };
                    let (gx, gy) = (out[at.partial(0, xi)], out[at.partial(0, 1 - xi)]);
                    let (value, dgx, dgy) = (out[at.value(0)], gx, gy);
                    for (name, iv, v) in
                        [("f", value, &f), ("df/dx", dgx, &dx), ("df/dy", dgy, &dy)]
                    {
                        assert!(
                            !iv.lo.is_nan() && contains(iv, v),
                            "case {case} {p}: {src} on {bx:?} at ({px}, {py}): {name} = {v} \
                             not in {iv:?}"
                        );
                    }
                    checked += 1;
                }
            }
        }
    }
    println!("{exprs} expressions, {checked} points: value and both partials contained");
    assert!(checked > 5_000, "{checked}");
}

/// Domain-suited ranges for the elementary functions (x, and y for binary ones).
fn range(f: &str) -> ((f64, f64), (f64, f64)) {
    let r = match f {
        "log" | "log2" | "log10" | "rootn2" | "rootn4" => (0.05, 8.0),
        "log1p" => (-0.9, 8.0),
        "asin" | "acos" => (-0.95, 0.95),
        "atanh" => (-0.9, 0.9),
        "acosh" => (1.05, 6.0),
        "tan" | "sec" => (-1.4, 1.4),
        "cot" | "csc" | "coth" | "csch" | "acsch" => (0.2, 3.0),
        "acoth" => (1.1, 6.0),
        "asech" => (0.05, 0.95),
        "exp" | "exp2" | "exp10" | "expm1" | "sinh" | "cosh" => (-5.0, 5.0),
        "pow" => (0.2, 3.0),
        "atan2" => (0.2, 2.0),
        _ => (-4.0, 4.0),
    };
    (r, (-2.0, 2.0))
}

fn source(f: &str) -> String {
    match f {
        "rootn2" | "rootn3" | "rootn4" | "rootn5" => format!("rootn(x, {})", &f[5..]),
        "atan2" => "atan2(x, y)".into(),
        "pow" | "hypot" => format!("{f}(x, y)"),
        _ => format!("{f}(x)"),
    }
}

/// f at a point from the oracle, as outward f64 bounds (`None` outside the domain).
fn oracle(f: &str, args: &[f64]) -> Option<(f64, f64)> {
    match elem_oracle::point(f, args, 256) {
        Val::In(e) => Some(e.to_f64()),
        Val::Out => None,
    }
}

const JUMPS: &[&str] = &["floor", "ceil", "trunc", "round", "rint", "sign"];

#[test]
fn elementary_derivatives_meet_every_difference_quotient() {
    let mut g = Gen(0xd1ff);
    let names: Vec<&str> = elem_oracle::UNARY
        .iter()
        .chain(elem_oracle::BINARY)
        .copied()
        .filter(|f| !JUMPS.contains(f))
        .collect();
    let mut checked = 0;
    for f in names {
        let expr = Expression::parse(&source(f)).unwrap();
        let binary = expr.vars().len() == 2;
        let ((x0, x1), (y0, y1)) = range(f);
        for p in [Precision::F64, Precision::F32] {
            for k in 0..120 {
                let width = (x1 - x0) * 2f64.powi(-(g.below(14) as i32)) * (0.25 + 0.75 * g.unit());
                let mut a = x0 + g.unit() * (x1 - x0 - width);
                let mut b = a + width;
                let mut y = y0 + g.unit() * (y1 - y0);
                if p == Precision::F32 {
                    (a, b, y) = ((a as f32) as f64, (b as f32) as f64, (y as f32) as f64);
                }
                if a >= b {
                    continue;
                }
                // Along x with y fixed (binary), or along x.
                let mut bx = vec![Interval::new(a, b).unwrap()];
                if binary {
                    bx.push(Interval::new(y, y).unwrap());
                }
                let (out, at) = eval_gradient(&expr, p, &bx);
                let d = out[at.partial(0, 0)];
                let args = |x: f64| if binary { vec![x, y] } else { vec![x] };
                let (Some(fa), Some(fb)) = (oracle(f, &args(a)), oracle(f, &args(b))) else {
                    continue;
                };
                if !(fa.0.is_finite() && fa.1.is_finite() && fb.0.is_finite() && fb.1.is_finite()) {
                    continue;
                }
                let h = q(b) - q(a);
                let (qlo, qhi) = ((q(fb.0) - q(fa.1)) / &h, (q(fb.1) - q(fa.0)) / &h);
                let meets = !d.lo.is_nan()
                    && (d.hi == f64::INFINITY || qlo <= q(d.hi))
                    && (d.lo == f64::NEG_INFINITY || q(d.lo) <= qhi);
                assert!(
                    meets,
                    "{f} {p} #{k} on [{a}, {b}] (y = {y}): derivative {d:?}, difference \
                     quotient in [{}, {}]",
                    f64_of(&qlo),
                    f64_of(&qhi)
                );
                checked += 1;
            }
        }
    }
    println!("{checked} boxes: every difference quotient meets the derivative's enclosure");
    assert!(checked > 8_000, "{checked}");
}

fn f64_of(v: &Q) -> f64 {
    use num_traits::ToPrimitive;
    v.to_f64().unwrap_or(f64::NAN)
}

#[test]
fn jumps_make_the_derivative_undefined_where_they_may_lie() {
    for f in JUMPS {
        let expr = Expression::parse(&format!("{f}(x) * 3 + x")).unwrap();
        for p in [Precision::F64, Precision::F32] {
            // Between jumps: the derivative of the smooth part, defined.
            let (out, at) = eval_gradient(&expr, p, &[Interval::new(0.2, 0.4).unwrap()]);
            assert_eq!(out[at.defined(0)], Interval::new(1.0, 1.0).unwrap(), "{f}");
            assert_eq!(
                out[at.partial(0, 0)],
                Interval::new(1.0, 1.0).unwrap(),
                "{f}"
            );
            // Across a jump (every one of them jumps at 0 or at 0.5... or 1): flagged.
            let (out, at) = eval_gradient(&expr, p, &[Interval::new(-0.6, 1.2).unwrap()]);
            let flag = out[at.defined(0)];
            assert!(flag.lo < 1.0, "{f} {p}: {flag:?}");
        }
    }
    // Smooth functions are never flagged, nor are abs, min and max (generalized gradients).
    let expr = Expression::parse("abs(x) + min(x, 1 - x) + max(exp(x), 2)").unwrap();
    let (out, at) = eval_gradient(&expr, Precision::F64, &[Interval::new(-1.0, 1.0).unwrap()]);
    assert_eq!(out[at.defined(0)], Interval::new(1.0, 1.0).unwrap());
    // d/dx on [-1, 1]: sign(x) in [-1, 1], min's in [-1, 1], max's in [0, e]: at least [-2, ..].
    let d = out[at.partial(0, 0)];
    assert!(
        d.lo <= -2.0 && d.hi >= 1.0 + 1.0 + std::f64::consts::E,
        "{d:?}"
    );
}

/// The mean-value form (`Expression::mean_value_form`) and the monotone form
/// (`Expression::monotone_form`): on random rational expressions and random boxes they contain
/// the exact value at the box's corners and random points, the mean-value form is never wider
/// than the natural extension and the monotone form never wider than the mean-value form (f64
/// and f32); on small boxes of smooth expressions they are narrower.
#[test]
fn mean_value_form_contains_the_exact_values_and_is_never_wider() {
    let mut g = Gen(0x3ea1_5eed);
    let (mut checked, mut narrower, mut boxes, mut tighter) = (0usize, 0usize, 0usize, 0usize);
    for case in 0..200 {
        let t = tree(&mut g, 5);
        let src = text(&t);
        let expr = Expression::parse(&src).unwrap();
        if expr.vars().len() != 2 {
            continue;
        }
        let mvf = expr.mean_value_form().unwrap();
        let monf = expr.monotone_form().unwrap();
        let xi = expr.vars().iter().position(|v| v == "x").unwrap();
        for p in [Precision::F64, Precision::F32] {
            let natural = Evaluator::new(&expr, p, BackendChoice::Cpu).unwrap();
            let centered = Evaluator::new(&mvf, p, BackendChoice::Cpu).unwrap();
            let mono = Evaluator::new(&monf, p, BackendChoice::Cpu).unwrap();
            for _ in 0..8 {
                let mut bx = [Interval::new(0.0, 0.0).unwrap(); 2];
                for iv in &mut bx {
                    let c = -3.0 + 6.0 * g.unit();
                    let h = 2f64.powi(-(g.below(16) as i32)) * g.unit();
                    let (lo, hi) = match p {
                        Precision::F64 => (c - h, c + h),
                        Precision::F32 => (((c - h) as f32) as f64, ((c + h) as f32) as f64),
                    };
                    *iv = Interval::new(lo.min(hi), lo.max(hi)).unwrap();
                }
                let b = if xi == 0 { bx } else { [bx[1], bx[0]] };
                let nat = natural.eval(&b).unwrap()[0];
                let cen = centered.eval(&b).unwrap()[0];
                let mon = mono.eval(&b).unwrap()[0];
                boxes += 1;
                if nat.is_empty() {
                    assert!(cen.is_empty(), "case {case} {p}: {src} on {bx:?}: {cen:?}");
                    assert!(mon.is_empty(), "case {case} {p}: {src} on {bx:?}: {mon:?}");
                    continue;
                }
                assert!(
                    cen.lo <= mon.lo && mon.hi <= cen.hi,
                    "case {case} {p}: {src} on {bx:?}: monotone {mon:?} wider than {cen:?}"
                );
                if mon.hi - mon.lo < cen.hi - cen.lo {
                    tighter += 1;
                }
                assert!(
                    nat.lo <= cen.lo && cen.hi <= nat.hi,
                    "case {case} {p}: {src} on {bx:?}: centered {cen:?} wider than {nat:?}"
                );
                if cen.hi - cen.lo < 0.5 * (nat.hi - nat.lo) {
                    narrower += 1;
                }
                // The four corners (where a monotone function is extreme), then random points.
                for corner in 0..8 {
                    let mut pick = |k: usize| match (corner, k) {
                        (0 | 1, 0) | (0 | 2, 1) => bx[k].lo,
                        (2 | 3, 0) | (1 | 3, 1) => bx[k].hi,
                        _ => bx[k].lo + g.unit() * (bx[k].hi - bx[k].lo),
                    };
                    let (px, py) = (pick(0), pick(1));
                    let (px, py) = (px.clamp(bx[0].lo, bx[0].hi), py.clamp(bx[1].lo, bx[1].hi));
                    // The value only: a non-smooth point still has a value.
                    let Some(v) = value(&t, &q(px), &q(py)) else {
                        continue;
                    };
                    assert!(
                        contains(mon, &v),
                        "case {case} {p}: {src} on {bx:?} at ({px}, {py}): {v} not in monotone \
                         {mon:?}"
                    );
                    assert!(
                        contains(cen, &v),
                        "case {case} {p}: {src} on {bx:?} at ({px}, {py}): {v} not in {cen:?} \
                         (natural {nat:?})"
                    );
                    checked += 1;
                }
            }
        }
    }
    println!(
        "{boxes} boxes, {checked} exact points contained, {narrower} boxes at least 2x narrower, \
         {tighter} narrower still in the monotone form"
    );
    assert!(
        checked > 5_000 && narrower > 100 && tighter > 50,
        "{checked} {narrower} {tighter}"
    );
}

/// The exact value at a rational point (`None` where undefined: a division by 0).
fn value(t: &Tree, x: &Q, y: &Q) -> Option<Q> {
    let v = |t: &Tree| value(t, x, y);
    Some(match t {
        Tree::X => x.clone(),
        Tree::Y => y.clone(),
        Tree::Const(k) => Q::new(BigInt::from(*k), BigInt::from(2)),
        Tree::Add(a, b) => v(a)? + v(b)?,
        Tree::Sub(a, b) => v(a)? - v(b)?,
        Tree::Mul(a, b) => v(a)? * v(b)?,
        Tree::Div(a, b) => {
            let d = v(b)?;
            if d.is_zero() {
                return None;
            }
            v(a)? / d
        }
        Tree::Min(a, b) => v(a)?.min(v(b)?),
        Tree::Max(a, b) => v(a)?.max(v(b)?),
        Tree::Sqr(a) => {
            let a = v(a)?;
            &a * &a
        }
        Tree::Pown(a, n) => {
            let a = v(a)?;
            if *n < 0 && a.is_zero() {
                return None;
            }
            if *n >= 0 {
                num_traits::pow(a, *n as usize)
            } else {
                Q::from_integer(BigInt::from(1)) / num_traits::pow(a, (-n) as usize)
            }
        }
        Tree::Neg(a) => -v(a)?,
        Tree::Abs(a) => v(a)?.abs(),
    })
}

/// The mean-value form on elementary functions, jumps and partial domains: the oracle's value
/// at random points of random boxes meets the enclosure, and the enclosure lies in the natural
/// extension.
#[test]
fn mean_value_form_of_elementary_functions_contains_their_values() {
    let mut g = Gen(0x7a11);
    let mut checked = 0;
    for f in elem_oracle::UNARY.iter().chain(elem_oracle::BINARY) {
        let expr = Expression::parse(&source(f)).unwrap();
        let mvf = expr.mean_value_form().unwrap();
        let mono = Evaluator::new(
            &expr.monotone_form().unwrap(),
            Precision::F64,
            BackendChoice::Cpu,
        )
        .unwrap();
        let binary = expr.vars().len() == 2;
        let ((x0, x1), (y0, y1)) = range(f);
        // Past the domain-suited range too, where the function may be undefined or jump.
        let (x0, x1) = (x0 - 0.5 * (x1 - x0), x1 + 0.5 * (x1 - x0));
        let natural = Evaluator::new(&expr, Precision::F64, BackendChoice::Cpu).unwrap();
        let centered = Evaluator::new(&mvf, Precision::F64, BackendChoice::Cpu).unwrap();
        for _ in 0..150 {
            let width = (x1 - x0) * 2f64.powi(-(g.below(16) as i32)) * g.unit();
            let a = x0 + g.unit() * (x1 - x0 - width);
            let mut b = vec![Interval::new(a, a + width).unwrap()];
            let y = y0 + g.unit() * (y1 - y0);
            if binary {
                let yw = (y1 - y0) * 2f64.powi(-(g.below(12) as i32)) * g.unit();
                b.push(Interval::new(y, y + yw).unwrap());
            }
            let nat = natural.eval(&b).unwrap()[0];
            let cen = centered.eval(&b).unwrap()[0];
            let mon = mono.eval(&b).unwrap()[0];
            if nat.is_empty() {
                assert!(cen.is_empty() && mon.is_empty(), "{f} on {b:?}");
                continue;
            }
            assert!(
                cen.lo <= mon.lo && mon.hi <= cen.hi,
                "{f} on {b:?}: monotone {mon:?} wider than {cen:?}"
            );
            assert!(
                nat.lo <= cen.lo && cen.hi <= nat.hi,
                "{f} on {b:?}: {cen:?} vs {nat:?}"
            );
            // Random points, and the box's corners, where a monotone function is extreme.
            for corner in 0..5 {
                let mut pick = |k: usize| match corner {
                    0 => b[k].lo,
                    1 => b[k].hi,
                    _ => b[k].lo + g.unit() * (b[k].hi - b[k].lo),
                };
                let mut args = vec![pick(0)];
                if binary {
                    args.push(pick(1));
                }
                for (k, a) in args.iter_mut().enumerate() {
                    *a = a.clamp(b[k].lo, b[k].hi);
                }
                let Some((lo, hi)) = oracle(f, &args) else {
                    continue;
                };
                assert!(
                    !cen.is_empty() && cen.lo <= hi && lo <= cen.hi,
                    "{f} on {b:?} at {args:?}: [{lo}, {hi}] misses {cen:?} (natural {nat:?})"
                );
                assert!(
                    !mon.is_empty() && mon.lo <= hi && lo <= mon.hi,
                    "{f} on {b:?} at {args:?}: [{lo}, {hi}] misses monotone {mon:?}"
                );
                checked += 1;
            }
        }
    }
    println!("{checked} points of elementary functions contained");
    assert!(checked > 10_000, "{checked}");
}

/// The minimization form (`Expression::minimization_form`: the mean-value form with the
/// monotonicity test and gradient-based exclusion) and the local descent in branch and bound:
/// on random rational expressions over random root boxes, the certified enclosure of the
/// minimum they give meets the natural extension's, its lower bound is at most the exact value
/// at the natural search's best point, and its upper bound is at least the exact value at its
/// own best point. A cut that dropped the box of the global minimizer, or a bound from a face
/// that is not the least, moves the lower bound above the minimum and fails here.
#[test]
fn minimization_form_keeps_the_global_minimum() {
    use ivjit::search::minimize::{minimize, minimize_with, Descent};
    let mut g = Gen(0x6d1f_0a7e);
    let (mut compared, mut fewer) = (0usize, 0usize);
    for case in 0..90 {
        let t = tree(&mut g, 4);
        let src = text(&t);
        let expr = Expression::parse(&src).unwrap();
        if expr.vars().len() != 2 {
            continue;
        }
        let root: Vec<(f64, f64)> = (0..2)
            .map(|_| {
                let c = (-2.0 + 4.0 * g.unit()) as f32 as f64;
                let h = (0.25 + 2.0 * g.unit()) as f32 as f64;
                (c - h, c + h)
            })
            .collect();
        let xi = expr.vars().iter().position(|v| v == "x").unwrap();
        let exact = |p: &[f64]| {
            if !p.iter().all(|v| v.is_finite()) {
                return None;
            }
            value(&t, &q(p[xi]), &q(p[1 - xi]))
        };
        let cpu = |e: &Expression| Evaluator::new(e, Precision::F64, BackendChoice::Cpu).unwrap();
        let natural = cpu(&expr);
        let Ok(nat) = minimize(&natural, &root, 1e-5, 100_000) else {
            continue; // undefined on the whole box
        };
        let form = cpu(&expr.minimization_form(&root).unwrap());
        let (grad, layout) = expr.gradient().unwrap();
        let grad = cpu(&grad);
        let descent = Descent {
            gradient: &grad,
            layout,
            steps: 50,
        };
        for with_descent in [false, true] {
            let d = with_descent.then_some(&descent);
            let m = minimize_with(&form, &root, 1e-5, 100_000, d).unwrap();
            let tag = format!("case {case}: {src} on {root:?}, descent {with_descent}");
            assert!(
                m.lower <= nat.upper && nat.lower <= m.upper,
                "{tag}: [{}, {}] and natural [{}, {}] are disjoint",
                m.lower,
                m.upper,
                nat.lower,
                nat.upper
            );
            if let (Some(v), true) = (exact(&nat.argmin), m.lower.is_finite()) {
                assert!(
                    q(m.lower) <= v,
                    "{tag}: lower {} above f(natural's best point)",
                    m.lower
                );
            }
            if let (Some(v), true) = (exact(&m.argmin), m.upper.is_finite()) {
                assert!(
                    v <= q(m.upper),
                    "{tag}: upper {} below f at its own point",
                    m.upper
                );
            }
            if m.boxes < nat.boxes {
                fewer += 1;
            }
            compared += 1;
        }
    }
    println!("{compared} searches compared, {fewer} with fewer boxes than the natural extension");
    assert!(compared > 50 && fewer > 20, "{compared} {fewer}");
}

/// atan2 jumps from pi to -pi across its cut (y = 0, x < 0): a box that may cross it has no
/// derivative there and the gradient must say so (issue 30: it gave a finite d/dy), while a
/// box on one side of the cut, or with x > 0, keeps its flag [1, 1] and derivatives that hold
/// the difference quotients between its corners.
#[test]
fn atan2_across_its_cut_is_flagged() {
    let expr = Expression::parse("atan2(y, x)").unwrap();
    let (g, at) = expr.gradient().unwrap();
    let ev = Evaluator::new(&g, Precision::F64, BackendChoice::Cpu).unwrap();
    let iv = |lo: f64, hi: f64| Interval::new(lo, hi).unwrap();
    // y first: the expression's variables in order of appearance.
    assert_eq!(expr.vars(), ["y", "x"]);
    let flag = |y: Interval, x: Interval| ev.eval(&[y, x]).unwrap()[at.defined(0)];
    let crossing = flag(iv(-1.0, 1.0), iv(-2.0, -1.0));
    assert!(crossing.lo < 1.0, "{crossing}");
    let touching_below = flag(iv(-1.0, 0.0), iv(-2.0, -1.0));
    assert!(touching_below.lo < 1.0, "{touching_below}");
    for (y, x) in [
        (iv(0.0, 1.0), iv(-2.0, -1.0)),
        (iv(-1.0, -0.5), iv(-2.0, -1.0)),
        (iv(-1.0, 1.0), iv(1.0, 2.0)),
    ] {
        assert_eq!(flag(y, x), iv(1.0, 1.0), "y {y}, x {x}");
        // The derivative in y meets the difference quotient between two corners of the box
        // (mean value theorem), with atan2 from the rigorous oracle.
        let out = ev.eval(&[y, x]).unwrap();
        let dy = out[at.partial(0, 0)];
        let value =
            |yy: f64, xx: f64| match crate::common::elem_oracle::point("atan2", &[yy, xx], 256) {
                crate::common::elem_oracle::Val::In(e) => e.to_f64(),
                crate::common::elem_oracle::Val::Out => panic!("atan2 undefined"),
            };
        let (a, b) = (value(y.lo, x.lo), value(y.hi, x.lo));
        // The quotient enclosed with directed rounding (h = y.hi - y.lo is exact here).
        use ivjit::internals::round::{div_f64, sub_f64, Round};
        let h = y.hi - y.lo;
        let q_lo = div_f64(sub_f64(b.0, a.1, Round::Down), h, Round::Down);
        let q_hi = div_f64(sub_f64(b.1, a.0, Round::Up), h, Round::Up);
        assert!(
            dy.lo <= q_hi && q_lo <= dy.hi,
            "y {y}, x {x}: d/dy {dy}, quotient [{q_lo}, {q_hi}]"
        );
    }
}
