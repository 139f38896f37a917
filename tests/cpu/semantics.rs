//! IEEE 1788 set-based semantics on the examples the project promises, on the CPU evaluator in
//! both precisions, plus the edge cases every test set needs: empty, entire, half-unbounded,
//! [0,0], -0, subnormals, the largest finite values.

use crate::common::elem_oracle as eo;
use ivjit::{BackendChoice, Evaluator, Expression, Interval, Precision};

fn iv(lo: f64, hi: f64) -> Interval {
    Interval::new(lo, hi).unwrap()
}

const INF: f64 = f64::INFINITY;
const MAX: f64 = f64::MAX;
const TINY: f64 = f64::from_bits(1); // smallest subnormal

fn eval_with(src: &str, p: Precision, args: &[Interval]) -> Vec<Interval> {
    let e = Expression::parse(src).unwrap_or_else(|e| panic!("{src}: {e}"));
    Evaluator::new(&e, p, BackendChoice::Cpu)
        .unwrap()
        .eval(args)
        .unwrap()
}

/// Checks one result in f64 exactly, and in f32 that the result encloses the f64 one's
/// rounding (f32 bounds are f32 values, so compare after outward rounding).
#[track_caller]
fn check(src: &str, args: &[Interval], want: Interval) {
    let got = eval_with(src, Precision::F64, args);
    assert_eq!(
        got[0], want,
        "{src} on {args:?}: got {}, want {want}",
        got[0]
    );
    let args32: Vec<Interval> = args.iter().map(|a| a.to_f32_enclosure()).collect();
    let got32 = eval_with(src, Precision::F32, &args32);
    // The f32 result must hold the f32 hull of the exact answer (want is tightest in f64, and
    // outward rounding composes: rounding want outward to f32 is the f32 hull of the answer).
    if want.is_empty() {
        assert!(
            got32[0].is_empty(),
            "{src} f32 on {args:?}: got {}",
            got32[0]
        );
    } else {
        assert!(
            got32[0].contains_interval(&want.to_f32_enclosure()),
            "{src} f32 on {args:?}: got {}, want at least {want}",
            got32[0]
        );
    }
}

#[test]
fn issue_examples() {
    check("x / y", &[iv(1.0, 2.0), iv(-1.0, 1.0)], Interval::ENTIRE);
    check("x / y", &[iv(1.0, 2.0), iv(0.0, 1.0)], iv(1.0, INF));
    check("x / y", &[iv(1.0, 2.0), iv(0.0, 0.0)], Interval::EMPTY);
    check("sqrt(x)", &[iv(-4.0, 0.0)], iv(0.0, 0.0));
    check("sqrt(x)", &[iv(-2.0, -1.0)], Interval::EMPTY);
    check("x * y", &[iv(0.0, 0.0), Interval::ENTIRE], iv(0.0, 0.0));
    check("x^2", &[iv(-1.0, 2.0)], iv(0.0, 4.0));
    check("x*x", &[iv(-1.0, 2.0)], iv(0.0, 4.0));
    check("x*y", &[iv(-1.0, 2.0), iv(-1.0, 2.0)], iv(-2.0, 4.0));
}

#[test]
fn literals_are_tight_enclosures() {
    let e = Expression::parse("0.1").unwrap();
    let out = Evaluator::new(&e, Precision::F64, BackendChoice::Cpu)
        .unwrap()
        .eval(&[])
        .unwrap();
    assert_eq!(out[0], iv(0.09999999999999999, 0.1));
    assert!(out[0].lo < out[0].hi);
    // pi and e are enclosed, not rounded.
    let out = eval_with("pi, e", Precision::F64, &[]);
    // The nearest doubles to pi and e are both below the real constants, so the tightest
    // enclosures are [nearest, next double up].
    let up = |x: f64| f64::from_bits(x.to_bits() + 1);
    use std::f64::consts::{E, PI};
    assert_eq!(out[0], iv(PI, up(PI)));
    assert_eq!(out[1], iv(E, up(E)));
}

#[test]
fn division_cases() {
    let z = iv(0.0, 0.0);
    check("x / y", &[z, iv(-1.0, 1.0)], z);
    check("x / y", &[z, z], Interval::EMPTY);
    check("x / y", &[iv(0.0, 1.0), iv(0.0, 1.0)], iv(0.0, INF));
    check("x / y", &[iv(-1.0, 1.0), iv(0.0, 1.0)], Interval::ENTIRE);
    check("x / y", &[iv(-2.0, -1.0), iv(0.0, 1.0)], iv(-INF, -1.0));
    check("x / y", &[iv(-2.0, 0.0), iv(0.0, 1.0)], iv(-INF, 0.0));
    check("x / y", &[iv(1.0, 2.0), iv(-1.0, 0.0)], iv(-INF, -1.0));
    check("x / y", &[iv(-2.0, -1.0), iv(-1.0, -0.0)], iv(1.0, INF));
    check("x / y", &[iv(1.0, 2.0), iv(-0.0, 4.0)], iv(0.25, INF));
    check("x / y", &[iv(1.0, 2.0), iv(-4.0, -2.0)], iv(-1.0, -0.25));
    check("x / y", &[iv(-1.0, 2.0), iv(2.0, INF)], iv(-0.5, 1.0));
    check("x / y", &[iv(-INF, 2.0), iv(2.0, 4.0)], iv(-INF, 1.0));
    check("x / y", &[Interval::EMPTY, iv(1.0, 2.0)], Interval::EMPTY);
    check("x / y", &[iv(1.0, 2.0), Interval::EMPTY], Interval::EMPTY);
    // 1/MAX is just above 2^-1024, a subnormal: the bounds are 2^-1024 and the next float up.
    let p = 2f64.powi(-1024);
    check(
        "1 / x",
        &[iv(MAX, MAX)],
        iv(p, f64::from_bits(p.to_bits() + 1)),
    );
}

#[test]
fn multiplication_cases() {
    check("x * y", &[iv(0.0, 1.0), iv(1.0, INF)], iv(0.0, INF));
    check("x * y", &[iv(-INF, 0.0), iv(0.0, INF)], iv(-INF, 0.0));
    check("x * y", &[iv(-2.0, 3.0), iv(-5.0, 7.0)], iv(-15.0, 21.0));
    check("x * y", &[iv(-2.0, -1.0), iv(-5.0, 7.0)], iv(-14.0, 10.0));
    check("x * y", &[iv(MAX, MAX), iv(2.0, 2.0)], iv(MAX, INF));
    check("x * y", &[iv(TINY, TINY), iv(0.5, 0.5)], iv(0.0, TINY));
    check(
        "x * y",
        &[Interval::EMPTY, Interval::ENTIRE],
        Interval::EMPTY,
    );
    check(
        "x * y",
        &[Interval::ENTIRE, Interval::ENTIRE],
        Interval::ENTIRE,
    );
    check("x * y", &[iv(-0.0, -0.0), iv(-INF, INF)], iv(0.0, 0.0));
}

#[test]
fn powers_abs_sqrt() {
    check("x^3", &[iv(-2.0, 3.0)], iv(-8.0, 27.0));
    check("x^4", &[iv(-2.0, 1.0)], iv(0.0, 16.0));
    check("x^4", &[iv(-3.0, -2.0)], iv(16.0, 81.0));
    check("x^-2", &[iv(-1.0, 1.0)], iv(1.0, INF));
    check("x^-1", &[iv(-1.0, 1.0)], Interval::ENTIRE);
    check("x^0", &[iv(-1.0, 1.0)], iv(1.0, 1.0));
    check("x^0", &[Interval::EMPTY], Interval::EMPTY);
    check("x^2", &[Interval::EMPTY], Interval::EMPTY);
    check("x^2", &[iv(-INF, 1.0)], iv(0.0, INF));
    check("x^3", &[iv(-INF, 1.0)], iv(-INF, 1.0));
    check("x^1000000001", &[iv(1.0, 1.0)], iv(1.0, 1.0));
    check("x^1000000001", &[iv(-1.0, 1.0)], iv(-1.0, 1.0));
    check("x^0.5", &[iv(4.0, 9.0)], iv(2.0, 3.0));
    check("abs(x)", &[iv(-3.0, 2.0)], iv(0.0, 3.0));
    check("abs(x)", &[iv(-3.0, -2.0)], iv(2.0, 3.0));
    check("abs(x)", &[Interval::EMPTY], Interval::EMPTY);
    check("sqrt(x)", &[iv(0.0, INF)], iv(0.0, INF));
    check("sqrt(x)", &[Interval::EMPTY], Interval::EMPTY);
}

#[test]
fn set_operations() {
    check("hull(x, y)", &[iv(1.0, 2.0), iv(5.0, 6.0)], iv(1.0, 6.0));
    check("hull(x, y)", &[Interval::EMPTY, iv(5.0, 6.0)], iv(5.0, 6.0));
    check(
        "intersect(x, y)",
        &[iv(1.0, 5.0), iv(3.0, 6.0)],
        iv(3.0, 5.0),
    );
    check(
        "intersect(x, y)",
        &[iv(1.0, 2.0), iv(3.0, 6.0)],
        Interval::EMPTY,
    );
    check(
        "intersect(x, y)",
        &[Interval::EMPTY, iv(3.0, 6.0)],
        Interval::EMPTY,
    );
    check("min(x, y)", &[iv(1.0, 5.0), iv(3.0, 4.0)], iv(1.0, 4.0));
    check("max(x, y)", &[iv(1.0, 5.0), iv(3.0, 4.0)], iv(3.0, 5.0));
    check(
        "min(x, y)",
        &[Interval::EMPTY, iv(3.0, 4.0)],
        Interval::EMPTY,
    );
    check(
        "fma(x, y, z)",
        &[iv(0.0, 0.0), Interval::ENTIRE, iv(1.0, 2.0)],
        iv(1.0, 2.0),
    );
    check(
        "fma(x, y, z)",
        &[iv(0.1, 0.1), iv(10.0, 10.0), iv(-1.0, -1.0)],
        iv(5.551115123125783e-17, 5.551115123125783e-17),
    );
}

#[test]
fn rewrites_keep_emptiness_and_domain() {
    // x^0 on an empty box stays empty; 1/sqrt(x) keeps the domain x > 0.
    check("x^-0.5", &[iv(4.0, 4.0)], iv(0.5, 0.5));
    check("x^-0.5", &[iv(-1.0, 0.0)], Interval::EMPTY);
    check("x*y*x", &[iv(-1.0, 2.0), iv(1.0, 1.0)], iv(0.0, 4.0));
}

#[test]
fn invalid_boxes_are_errors() {
    assert!(Interval::new(2.0, 1.0).is_err());
    assert!(Interval::new(f64::NAN, 1.0).is_err());
    assert!(Interval::new(INF, INF).is_err());
    assert!(Interval::new(-INF, -INF).is_err());
    let e = Expression::parse("x + 1").unwrap();
    let ev = Evaluator::new(&e, Precision::F64, BackendChoice::Cpu).unwrap();
    let bad = ev.eval_soa(&[2.0, 1.0], 1);
    assert!(bad.is_err(), "an inverted box is rejected");
    let nan = ev.eval_soa(&[f64::NAN, 1.0], 1);
    assert!(nan.is_err(), "a half-NaN box is rejected");
    let empty = ev.eval_soa(&[f64::NAN, f64::NAN], 1).unwrap();
    assert!(
        empty[0].is_nan() && empty[1].is_nan(),
        "(NaN, NaN) is the empty box"
    );
}

/// The next double above x (x finite).
fn up(x: f64) -> f64 {
    if x == 0.0 {
        f64::from_bits(1)
    } else if x > 0.0 {
        f64::from_bits(x.to_bits() + 1)
    } else {
        f64::from_bits(x.to_bits() - 1)
    }
}

/// `got` contains `exact` (a set of reals given by exact bounds) and each bound lies within
/// `ulps` steps of it.
#[track_caller]
fn within(got: Interval, exact: Interval, ulps: u32) {
    assert!(
        got.contains_interval(&exact),
        "{got} does not contain {exact}"
    );
    let mut hi = exact.hi;
    let mut lo = -exact.lo;
    for _ in 0..ulps {
        if hi.is_finite() {
            hi = up(hi);
        }
        if lo.is_finite() {
            lo = up(lo);
        }
    }
    assert!(
        got.hi <= hi && -got.lo <= lo,
        "{got} is more than {ulps} ulp wider than {exact}"
    );
}

#[test]
fn elementary_examples_from_the_issue() {
    // The domain restricts: log([-1, 1]) = [-inf, 0].
    let out = eval_with("log(x)", Precision::F64, &[iv(-1.0, 1.0)]);
    within(out[0], iv(-INF, 0.0), 1);
    // Unbounded inputs give the limits: exp([-inf, 0]) = [0, 1].
    let out = eval_with("exp(x)", Precision::F64, &[iv(-INF, 0.0)]);
    within(out[0], iv(0.0, 1.0), 1);
    // atan([entire]) lies within an enclosure of [-pi/2, pi/2] and contains the open interval.
    let out = eval_with("atan(x)", Precision::F64, &[Interval::ENTIRE]);
    let half_pi_lo = std::f64::consts::FRAC_PI_2; // the nearest double, below pi/2
    assert!(
        out[0].hi >= half_pi_lo && out[0].hi <= up(half_pi_lo),
        "{}",
        out[0]
    );
    assert!(
        -out[0].lo >= half_pi_lo && -out[0].lo <= up(half_pi_lo),
        "{}",
        out[0]
    );
    // Outside the domain: empty.
    for src in [
        "log(x)",
        "sqrt(x)",
        "acosh(x)",
        "asin(x - 3)",
        "atanh(x - 1)",
        "log1p(x)",
    ] {
        let out = eval_with(src, Precision::F64, &[iv(-3.0, -1.0)]);
        assert!(out[0].is_empty(), "{src}: {}", out[0]);
    }
    // Empty in, empty out, for every function.
    for f in ivjit::internals::ir::functions::FUNCTIONS.iter() {
        let src = match (f.name, f.arity) {
            ("pown" | "rootn", _) => format!("{}(x, 3)", f.name),
            ("pownRev", _) => "pownRev(x, x, 3)".into(),
            (n, 1) => format!("{n}(x)"),
            (n, 2) => format!("{n}(x, x)"),
            (n, _) => format!("{n}(x, x, x)"),
        };
        let out = eval_with(&src, Precision::F64, &[Interval::EMPTY]);
        match f.name {
            // IEEE 1788: the bounds of the empty set are inf = +inf and sup = -inf, held as
            // the reals beyond the floats.
            "inf" => assert_eq!((out[0].lo, out[0].hi), (f64::MAX, f64::INFINITY)),
            "sup" => assert_eq!((out[0].lo, out[0].hi), (f64::NEG_INFINITY, -f64::MAX)),
            _ => assert!(out[0].is_empty(), "{src} of [empty] is {}", out[0]),
        }
    }
}

#[test]
fn trigonometric_extrema_and_asymptotes() {
    let pi_lo = std::f64::consts::PI; // below pi
                                      // sin over [0, pi_lo] reaches its maximum 1 inside.
    let out = eval_with("sin(x)", Precision::F64, &[iv(0.0, pi_lo)]);
    assert_eq!(out[0].hi, 1.0);
    assert!(out[0].lo <= 0.0 && out[0].lo > -1e-300, "{}", out[0]);
    // A tiny interval right at the maximum stays tight, not [-1, 1].
    let h = std::f64::consts::FRAC_PI_2;
    let out = eval_with("sin(x)", Precision::F64, &[iv(h, up(h))]);
    assert!(out[0].lo > 0.99 && out[0].hi == 1.0, "{}", out[0]);
    // tan: the doubles around pi/2 straddle the asymptote.
    let out = eval_with("tan(x)", Precision::F64, &[iv(h, up(h))]);
    assert_eq!(out[0], Interval::ENTIRE);
    let out = eval_with("tan(x)", Precision::F64, &[iv(h, h)]);
    assert!(out[0].lo > 1e16 && out[0].hi < 1.7e16, "{}", out[0]);
    // A huge argument, one double: a tight enclosure (CORE-MATH reduces exactly).
    let x = 1e300_f64;
    let out = eval_with("sin(x)", Precision::F64, &[iv(x, x)]);
    assert!(out[0].hi - out[0].lo < 1e-15, "{}", out[0]);
    // Two doubles of 1e300 are far more than a period apart.
    let out = eval_with("sin(x)", Precision::F64, &[iv(x, up(x))]);
    assert_eq!(out[0], iv(-1.0, 1.0));
}

/// Issue 29: a box between two huge floats, or up to infinity, spans astronomically many
/// periods; reading each end's position in its period (both quarter indices overflowed to
/// +inf and compared equal) gave sinpi [-1e-45, 1e-45] on [0x1.fffffep+127, inf]. The true
/// range of every case is [-1, 1], which is also the tightest enclosure.
#[test]
fn periodic_functions_on_unbounded_and_huge_boxes() {
    let max32 = f32::MAX as f64;
    let below_max32 = f32::from_bits(f32::MAX.to_bits() - 1) as f64;
    let below_max = f64::from_bits(MAX.to_bits() - 1);
    let cases: &[(&str, Precision, Interval)] = &[
        ("sinpi(x)", Precision::F32, iv(max32, INF)),
        ("cospi(x)", Precision::F32, iv(max32, INF)),
        ("sinpi(x)", Precision::F32, iv(below_max32, max32)),
        ("cospi(x)", Precision::F32, iv(-max32, -below_max32)),
        ("sinpi(x)", Precision::F64, iv(-INF, -1e308)),
        ("cospi(x)", Precision::F64, iv(MAX, INF)),
        ("sinpi(x)", Precision::F64, iv(below_max, MAX)),
        ("cospi(x)", Precision::F64, iv(-INF, -MAX)),
        ("sin(x)", Precision::F64, iv(MAX, INF)),
        ("cos(x)", Precision::F32, iv(-INF, -max32)),
        ("sin(x)", Precision::F64, iv(below_max, MAX)),
        ("cos(x)", Precision::F32, iv(below_max32, max32)),
    ];
    for (src, p, x) in cases {
        let got = eval_with(src, *p, &[*x])[0];
        assert_eq!(got, iv(-1.0, 1.0), "{src} ({p:?}) on {x}");
    }
    // tan on a box just short of the pole at -pi/2 (the end is the double below -pi/2): the
    // range is bounded, about [-1, 6.2e15]. The high end's quarter index was rounded up past
    // the pole.
    let x = iv(-3.926_990_816_987_241_4, -1.570_796_326_794_896_8);
    assert!(x.hi < -std::f64::consts::FRAC_PI_2 && -std::f64::consts::FRAC_PI_2 - x.hi < 3e-16);
    let got = eval_with("tan(x)", Precision::F64, &[x])[0];
    // tan is increasing on the box: its range is [tan(lo), tan(hi)]; the CPU's bounds are
    // within one ulp of the correctly rounded ones (rigorous oracle: tests/common/elem_oracle).
    let bound = |v: f64, down: bool| match eo::point("tan", &[v], 256) {
        eo::Val::In(e) if down => eo::round_down(&e.lo),
        eo::Val::In(e) => eo::round_up(&e.hi),
        eo::Val::Out => panic!("tan({v}) undefined"),
    };
    let (lo, hi) = (bound(x.lo, true), bound(x.hi, false));
    assert!(hi > 6.2e15 && hi < 6.3e15, "oracle: tan({}) = {hi}", x.hi);
    assert!(
        got.lo <= lo
            && got.lo >= ivjit::internals::round::next_down(lo)
            && got.hi >= hi
            && got.hi <= ivjit::internals::round::next_up(hi),
        "tan on {x}: {got}, range [{lo}, {hi}]"
    );
    // And with the pole inside (the double nearest -pi/2 lies above it): the whole line.
    let x = iv(-3.926_990_816_987_241_4, -std::f64::consts::FRAC_PI_2);
    assert_eq!(
        eval_with("tan(x)", Precision::F64, &[x])[0],
        Interval::ENTIRE
    );
}
