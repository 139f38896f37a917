//! Exact oracle of the operations on an argument's enclosure: IEEE 1788's numeric functions
//! (inf, sup, mid, rad, wid, mag, mig; §10.5.9) and cancellative subtraction (cancelMinus,
//! cancelPlus; §9.2), from their definitions in exact rational arithmetic rounded once in the
//! format, independent of ivjit's lowering (`src/lower/enclosure.rs`). Boxes are `(lo, hi)`,
//! the empty set `(NaN, NaN)`.
//!
//! ivjit holds a number v as the interval `[v, v]`, +inf as `[max, inf]`, -inf as
//! `[-inf, -max]` and NaN (the number of the empty set) as the empty set: [`as_interval`].
#![allow(dead_code)]

use super::oracle::{q_of, round_down, round_up, Fmt, Q};
use num_traits::Zero;

/// The operations of this oracle, by their ivjit names.
pub const OPERATIONS: &[&str] = &[
    "inf",
    "sup",
    "mid",
    "rad",
    "wid",
    "mag",
    "mig",
    "cancelMinus",
    "cancelPlus",
];

/// Whether `name` is one of [`OPERATIONS`].
pub fn is_enclosure_op(name: &str) -> bool {
    OPERATIONS.contains(&name)
}

/// q rounded to the nearest value of the format, ties to even (no overflow: the callers'
/// values lie between two floats of the format).
pub fn round_nearest(q: &Q, fmt: Fmt) -> f64 {
    let d = round_down(q, fmt);
    let u = round_up(q, fmt);
    if d == u {
        return d;
    }
    let below = q - q_of(d);
    let above = q_of(u) - q;
    if below < above {
        d
    } else if above < below {
        u
    } else {
        let even = |x: f64| match fmt {
            Fmt::F64 => x.to_bits() & 1 == 0,
            Fmt::F32 => (x as f32).to_bits() & 1 == 0,
        };
        if even(d) {
            d
        } else {
            u
        }
    }
}

/// The standard's number `name(x)` in the format: NaN for the empty set, infinite where it
/// says so (the width of an unbounded interval).
pub fn numeric(name: &str, x: (f64, f64), fmt: Fmt) -> f64 {
    let (lo, hi) = x;
    if lo.is_nan() {
        // IEEE 1788: the bounds of the empty set are +inf (inf) and -inf (sup).
        return match name {
            "inf" => f64::INFINITY,
            "sup" => f64::NEG_INFINITY,
            _ => f64::NAN,
        };
    }
    let bounded = lo.is_finite() && hi.is_finite();
    match name {
        "inf" => lo,
        "sup" => hi,
        "mid" => mid(x, fmt),
        "wid" if !bounded => f64::INFINITY,
        "wid" => round_up(&(q_of(hi) - q_of(lo)), fmt),
        "rad" if !bounded => f64::INFINITY,
        "rad" => {
            let m = q_of(mid(x, fmt));
            let a = &m - q_of(lo);
            let b = q_of(hi) - &m;
            round_up(if a > b { &a } else { &b }, fmt)
        }
        "mag" => lo.abs().max(hi.abs()),
        "mig" if lo <= 0.0 && hi >= 0.0 => 0.0,
        "mig" => lo.abs().min(hi.abs()),
        other => panic!("{other} is not a numeric function"),
    }
}

fn mid(x: (f64, f64), fmt: Fmt) -> f64 {
    match (x.0.is_finite(), x.1.is_finite()) {
        (false, false) => 0.0,
        (false, true) => -fmt.max(),
        (true, false) => fmt.max(),
        (true, true) => round_nearest(&((q_of(x.0) + q_of(x.1)) / Q::from_integer(2.into())), fmt),
    }
}

/// A number as ivjit holds it (see the module documentation).
pub fn as_interval(v: f64, fmt: Fmt) -> (f64, f64) {
    if v.is_nan() {
        (f64::NAN, f64::NAN)
    } else if v == f64::INFINITY {
        (fmt.max(), v)
    } else if v == f64::NEG_INFINITY {
        (v, -fmt.max())
    } else {
        (v, v)
    }
}

/// `cancelMinus(x, y)`: `[x.lo - y.lo, x.hi - y.hi]` outward in the format where x and y are
/// bounded and nonempty and wid(x) >= wid(y) exactly; empty where x is empty and y is empty
/// or bounded; the whole line otherwise.
pub fn cancel_minus(x: (f64, f64), y: (f64, f64), fmt: Fmt) -> (f64, f64) {
    let bounded = |b: (f64, f64)| b.0.is_finite() && b.1.is_finite();
    let (x_empty, y_empty) = (x.0.is_nan(), y.0.is_nan());
    if x_empty && (y_empty || bounded(y)) {
        return (f64::NAN, f64::NAN);
    }
    let entire = (f64::NEG_INFINITY, f64::INFINITY);
    if !(bounded(x) && bounded(y)) {
        return entire;
    }
    let lo = q_of(x.0) - q_of(y.0);
    let hi = q_of(x.1) - q_of(y.1);
    if hi < lo {
        return entire;
    }
    (round_down(&lo, fmt), round_up(&hi, fmt))
}

/// The expected result of operation `name` (one of [`OPERATIONS`]) on `boxes`.
pub fn expected(name: &str, boxes: &[(f64, f64)], fmt: Fmt) -> (f64, f64) {
    match name {
        "cancelMinus" => cancel_minus(boxes[0], boxes[1], fmt),
        "cancelPlus" => {
            let y = boxes[1];
            cancel_minus(boxes[0], (-y.1, -y.0), fmt)
        }
        _ => as_interval(numeric(name, boxes[0], fmt), fmt),
    }
}

/// Whether `got` is exactly `want` (both empty, or equal bounds; -0 equals +0).
pub fn same(want: (f64, f64), got: (f64, f64)) -> bool {
    if want.0.is_nan() || got.0.is_nan() {
        return want.0.is_nan() && want.1.is_nan() && got.0.is_nan() && got.1.is_nan();
    }
    want.0 == got.0 && want.1 == got.1
}
