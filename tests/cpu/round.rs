//! Oracle tests for the directed-rounding scalar operations.
//!
//! Oracle: `rustc_apfloat` (a software IEEE 754 implementation, port of LLVM
//! APFloat) for add/sub/mul/div/fma/narrowing in both precisions and all three
//! directions; for sqrt (which apfloat lacks) an exact check with squares
//! computed exactly in a wider apfloat format (Quad for f64, Double for f32).
//! Results are compared bit for bit (NaN results only as "both NaN").
//!
//! Inputs: dense hand-made special values in all pairs/triples, seeded random
//! loops (~10^6 cases per op, each in 3 directions) with distributions that aim
//! at cancellation, ties, subnormal and overflow boundaries, and proptest over
//! raw bit patterns / all float classes.
//!
//! ~17 s with `opt-level = 3` (as in the scratch crate where this was written);
//! unoptimized debug builds are several times slower: use `--release` or set
//! ROUND_TEST_SCALE (a float, default 1) to scale the number of random cases.

use crate::common::rng;

use ivjit::internals::round::*;
use ivjit::internals::scalar::Round;

use proptest::prelude::*;
use rustc_apfloat::ieee::{Double, Quad, Single};
use rustc_apfloat::{Float, FloatConvert, Round as AR, Status};

const DIRS: [Round; 3] = [Round::Down, Round::Up, Round::Nearest];

// ---------------------------------------------------------------------------
// Oracle
// ---------------------------------------------------------------------------

fn ar(r: Round) -> AR {
    match r {
        Round::Down => AR::TowardNegative,
        Round::Up => AR::TowardPositive,
        Round::Nearest => AR::NearestTiesToEven,
    }
}
fn d(x: f64) -> Double {
    Double::from_bits(u128::from(x.to_bits()))
}
fn fd(x: Double) -> f64 {
    f64::from_bits(x.to_bits() as u64)
}
fn s(x: f32) -> Single {
    Single::from_bits(u128::from(x.to_bits()))
}
fn fs(x: Single) -> f32 {
    f32::from_bits(x.to_bits() as u32)
}

fn o_add64(a: f64, b: f64, r: Round) -> f64 {
    fd(d(a).add_r(d(b), ar(r)).value)
}
fn o_sub64(a: f64, b: f64, r: Round) -> f64 {
    fd(d(a).sub_r(d(b), ar(r)).value)
}
fn o_mul64(a: f64, b: f64, r: Round) -> f64 {
    fd(d(a).mul_r(d(b), ar(r)).value)
}
fn o_div64(a: f64, b: f64, r: Round) -> f64 {
    fd(d(a).div_r(d(b), ar(r)).value)
}
fn o_fma64(a: f64, b: f64, c: f64, r: Round) -> f64 {
    fd(d(a).mul_add_r(d(b), d(c), ar(r)).value)
}
fn o_add32(a: f32, b: f32, r: Round) -> f32 {
    fs(s(a).add_r(s(b), ar(r)).value)
}
fn o_sub32(a: f32, b: f32, r: Round) -> f32 {
    fs(s(a).sub_r(s(b), ar(r)).value)
}
fn o_mul32(a: f32, b: f32, r: Round) -> f32 {
    fs(s(a).mul_r(s(b), ar(r)).value)
}
fn o_div32(a: f32, b: f32, r: Round) -> f32 {
    fs(s(a).div_r(s(b), ar(r)).value)
}
fn o_fma32(a: f32, b: f32, c: f32, r: Round) -> f32 {
    fs(s(a).mul_add_r(s(b), s(c), ar(r)).value)
}
fn o_narrow(x: f64, r: Round) -> f32 {
    let mut loses = false;
    let y: Single = d(x).convert_r(ar(r), &mut loses).value;
    fs(y)
}

fn same64(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
}
fn same32(a: f32, b: f32) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
}

type Op2_64 = fn(f64, f64, Round) -> f64;
type Op2_32 = fn(f32, f32, Round) -> f32;
type Op3_32 = fn(f32, f32, f32, Round) -> f32;

const OPS2_64: [(&str, Op2_64, Op2_64); 4] = [
    ("add_f64", add_f64, o_add64),
    ("sub_f64", sub_f64, o_sub64),
    ("mul_f64", mul_f64, o_mul64),
    ("div_f64", div_f64, o_div64),
];
const OPS2_32: [(&str, Op2_32, Op2_32); 4] = [
    ("add_f32", add_f32, o_add32),
    ("sub_f32", sub_f32, o_sub32),
    ("mul_f32", mul_f32, o_mul32),
    ("div_f32", div_f32, o_div32),
];

fn check2_64(name: &str, f: Op2_64, o: Op2_64, a: f64, b: f64) {
    for r in DIRS {
        let (got, want) = (f(a, b, r), o(a, b, r));
        assert!(
            same64(got, want),
            "{name}({a:e} [{:#018x}], {b:e} [{:#018x}], {r:?}) = {got:e} [{:#018x}], want {want:e} [{:#018x}]",
            a.to_bits(),
            b.to_bits(),
            got.to_bits(),
            want.to_bits()
        );
    }
}
fn check_fma64(a: f64, b: f64, c: f64) {
    for r in DIRS {
        let (got, want) = (fma_f64(a, b, c, r), o_fma64(a, b, c, r));
        assert!(
            same64(got, want),
            "fma_f64({a:e} [{:#018x}], {b:e} [{:#018x}], {c:e} [{:#018x}], {r:?}) = {got:e} [{:#018x}], want {want:e} [{:#018x}]",
            a.to_bits(),
            b.to_bits(),
            c.to_bits(),
            got.to_bits(),
            want.to_bits()
        );
    }
}
fn check2_32(name: &str, f: Op2_32, o: Op2_32, a: f32, b: f32) {
    for r in DIRS {
        let (got, want) = (f(a, b, r), o(a, b, r));
        assert!(
            same32(got, want),
            "{name}({a:e} [{:#010x}], {b:e} [{:#010x}], {r:?}) = {got:e} [{:#010x}], want {want:e} [{:#010x}]",
            a.to_bits(),
            b.to_bits(),
            got.to_bits(),
            want.to_bits()
        );
    }
}
fn check_fma32(a: f32, b: f32, c: f32) {
    let f: Op3_32 = fma_f32;
    for r in DIRS {
        let (got, want) = (f(a, b, c, r), o_fma32(a, b, c, r));
        assert!(
            same32(got, want),
            "fma_f32({a:e} [{:#010x}], {b:e} [{:#010x}], {c:e} [{:#010x}], {r:?}) = {got:e} [{:#010x}], want {want:e} [{:#010x}]",
            a.to_bits(),
            b.to_bits(),
            c.to_bits(),
            got.to_bits(),
            want.to_bits()
        );
    }
}
fn check_narrow(x: f64) {
    for r in DIRS {
        let (got, want) = (narrow_f32(x, r), o_narrow(x, r));
        assert!(
            same32(got, want),
            "narrow_f32({x:e} [{:#018x}], {r:?}) = {got:e} [{:#010x}], want {want:e} [{:#010x}]",
            x.to_bits(),
            got.to_bits(),
            want.to_bits()
        );
    }
}

// --- sqrt: exact check of the bracketing squares -------------------------

fn nu64(x: f64) -> f64 {
    if x.is_nan() || x == f64::INFINITY {
        x
    } else if x == 0.0 {
        f64::from_bits(1)
    } else if x > 0.0 {
        f64::from_bits(x.to_bits() + 1)
    } else {
        f64::from_bits(x.to_bits() - 1)
    }
}
fn nd64(x: f64) -> f64 {
    -nu64(-x)
}
fn nu32(x: f32) -> f32 {
    if x.is_nan() || x == f32::INFINITY {
        x
    } else if x == 0.0 {
        f32::from_bits(1)
    } else if x > 0.0 {
        f32::from_bits(x.to_bits() + 1)
    } else {
        f32::from_bits(x.to_bits() - 1)
    }
}
fn nd32(x: f32) -> f32 {
    -nu32(-x)
}

fn exact<T: Float>(x: rustc_apfloat::StatusAnd<T>) -> T {
    assert_eq!(x.status, Status::OK, "wide arithmetic must be exact");
    x.value
}

/// Checks that `got` is sqrt(x) rounded in direction r, with exact
/// arithmetic in a wider format W (squares of (p+1)-bit numbers fit in W).
fn check_sqrt_generic<W: Float>(
    name: &str,
    x_w: W,
    x_desc: String,
    got_w: W,
    below_w: W,
    above_w: W,
    r: Round,
) {
    let sq = |v: W| exact(v.mul_r(v, AR::NearestTiesToEven));
    let half = |a: W, b: W| {
        exact(
            exact(a.add_r(b, AR::NearestTiesToEven))
                .div_r(W::from_u128(2).value, AR::NearestTiesToEven),
        )
    };
    let ok = match r {
        Round::Down => sq(got_w) <= x_w && sq(above_w) > x_w,
        Round::Up => sq(got_w) >= x_w && sq(below_w) < x_w,
        Round::Nearest => sq(half(below_w, got_w)) < x_w && x_w < sq(half(got_w, above_w)),
    };
    assert!(
        ok,
        "{name}({x_desc}, {r:?}) = {got_w} is not correctly rounded"
    );
}

fn check_sqrt64(x: f64) {
    for r in DIRS {
        let got = sqrt_f64(x, r);
        if x.is_nan() || x < 0.0 {
            assert!(got.is_nan(), "sqrt_f64({x:e}, {r:?}) = {got:e}, want NaN");
        } else if x == 0.0 || x == f64::INFINITY {
            assert_eq!(
                got.to_bits(),
                x.to_bits(),
                "sqrt_f64({x:e}, {r:?}) = {got:e}"
            );
        } else {
            assert!(
                got.is_finite() && got > 0.0,
                "sqrt_f64({x:e}, {r:?}) = {got:e}"
            );
            let q = |v: f64| -> Quad {
                let mut l = false;
                exact(d(v).convert(&mut l))
            };
            check_sqrt_generic(
                "sqrt_f64",
                q(x),
                format!("{x:e} [{:#018x}]", x.to_bits()),
                q(got),
                q(nd64(got)),
                q(nu64(got)),
                r,
            );
        }
    }
    // Down <= Nearest <= Up, Down == Up iff exact (Down^2 == x).
    let (lo, mid, hi) = (
        sqrt_f64(x, Round::Down),
        sqrt_f64(x, Round::Nearest),
        sqrt_f64(x, Round::Up),
    );
    if x > 0.0 && x.is_finite() {
        assert!(
            lo <= mid && mid <= hi && (lo == hi || nu64(lo) == hi),
            "sqrt_f64({x:e}) brackets"
        );
    }
}

fn check_sqrt32(x: f32) {
    for r in DIRS {
        let got = sqrt_f32(x, r);
        if x.is_nan() || x < 0.0 {
            assert!(got.is_nan(), "sqrt_f32({x:e}, {r:?}) = {got:e}, want NaN");
        } else if x == 0.0 || x == f32::INFINITY {
            assert_eq!(
                got.to_bits(),
                x.to_bits(),
                "sqrt_f32({x:e}, {r:?}) = {got:e}"
            );
        } else {
            assert!(
                got.is_finite() && got > 0.0,
                "sqrt_f32({x:e}, {r:?}) = {got:e}"
            );
            let w = |v: f32| -> Double { d(f64::from(v)) };
            check_sqrt_generic(
                "sqrt_f32",
                w(x),
                format!("{x:e} [{:#010x}]", x.to_bits()),
                w(got),
                w(nd32(got)),
                w(nu32(got)),
                r,
            );
        }
    }
}

// ---------------------------------------------------------------------------
// Special values
// ---------------------------------------------------------------------------

fn p2(e: i32) -> f64 {
    // exact 2^e for e in [-1074, 1023]
    if e >= -1022 {
        f64::from_bits(((e + 1023) as u64) << 52)
    } else {
        f64::from_bits(1u64 << (e + 1074))
    }
}

fn specials64() -> Vec<f64> {
    let mut pos = vec![
        0.0,
        f64::from_bits(1),
        f64::from_bits(2),
        f64::from_bits(3),
        f64::from_bits(0x0008_0000_0000_0000),
        f64::from_bits(0x0008_0000_0000_0001),
        f64::from_bits(0x000F_FFFF_FFFF_FFFF),
        f64::MIN_POSITIVE,
        nu64(f64::MIN_POSITIVE),
        f64::MIN_POSITIVE * 1.5,
        p2(-1021),
        p2(-1000),
        p2(-970),
        p2(-969),
        p2(-960),
        nd64(p2(-960)),
        p2(-537),
        p2(-538),
        nu64(p2(-537)),
        p2(-511),
        p2(-54),
        p2(-53),
        p2(-52),
        nd64(0.5),
        0.5,
        nd64(1.0),
        1.0,
        nu64(1.0),
        nu64(nu64(1.0)),
        1.5,
        nd64(2.0),
        3.0,
        0.1,
        1.0 / 3.0,
        2.0 / 3.0,
        std::f64::consts::SQRT_2,
        (1u64 << 26) as f64 + 1.0,
        ((1u64 << 27) - 1) as f64,
        p2(52),
        p2(53),
        p2(53) + 2.0,
        p2(54) - 2.0,
        1e300,
        p2(511),
        p2(512),
        p2(1000),
        p2(1001),
        p2(1023),
        1.5 * p2(1023),
        nd64(f64::MAX),
        f64::MAX,
        f64::INFINITY,
    ];
    let neg: Vec<f64> = pos.iter().map(|x| -x).collect();
    pos.extend(neg);
    pos.push(f64::NAN);
    pos
}

fn specials32() -> Vec<f32> {
    let p = |e: i32| -> f32 {
        if e >= -126 {
            f32::from_bits(((e + 127) as u32) << 23)
        } else {
            f32::from_bits(1u32 << (e + 149))
        }
    };
    let mut pos = vec![
        0.0,
        f32::from_bits(1),
        f32::from_bits(2),
        f32::from_bits(3),
        f32::from_bits(0x0040_0000),
        f32::from_bits(0x0040_0001),
        f32::from_bits(0x007F_FFFF),
        f32::MIN_POSITIVE,
        nu32(f32::MIN_POSITIVE),
        f32::MIN_POSITIVE * 1.5,
        p(-125),
        p(-100),
        p(-75),
        p(-74),
        nu32(p(-75)),
        p(-63),
        p(-25),
        p(-24),
        p(-23),
        nd32(0.5),
        0.5,
        nd32(1.0),
        1.0,
        nu32(1.0),
        nu32(nu32(1.0)),
        1.5,
        nd32(2.0),
        3.0,
        0.1,
        1.0 / 3.0,
        2.0 / 3.0,
        std::f32::consts::SQRT_2,
        4097.0,
        8191.0,
        p(23),
        p(24),
        p(24) + 2.0,
        1e30,
        p(63),
        p(64),
        p(100),
        p(127),
        1.5 * p(127),
        nd32(f32::MAX),
        f32::MAX,
        f32::INFINITY,
    ];
    let neg: Vec<f32> = pos.iter().map(|x| -x).collect();
    pos.extend(neg);
    pos.push(f32::NAN);
    pos
}

#[test]
fn specials_pairs_f64() {
    let sp = specials64();
    for &a in &sp {
        for &b in &sp {
            for (name, f, o) in OPS2_64 {
                check2_64(name, f, o, a, b);
            }
        }
        check_sqrt64(a);
        check_narrow(a);
    }
}

#[test]
fn specials_triples_fma_f64() {
    let sp = specials64();
    for &a in &sp {
        for &b in &sp {
            for &c in &sp {
                check_fma64(a, b, c);
            }
        }
    }
}

#[test]
fn specials_pairs_and_triples_f32() {
    let sp = specials32();
    for &a in &sp {
        for &b in &sp {
            for (name, f, o) in OPS2_32 {
                check2_32(name, f, o, a, b);
            }
            for &c in &sp {
                check_fma32(a, b, c);
            }
        }
        check_sqrt32(a);
    }
}

#[test]
fn hand_written_cases() {
    use Round::*;
    let min_sub = f64::from_bits(1);
    // Signed zeros of exact sums.
    assert_eq!(add_f64(1.5, -1.5, Down).to_bits(), (-0.0f64).to_bits());
    assert_eq!(add_f64(1.5, -1.5, Up).to_bits(), 0.0f64.to_bits());
    assert_eq!(add_f64(1.5, -1.5, Nearest).to_bits(), 0.0f64.to_bits());
    assert_eq!(add_f64(0.0, -0.0, Down).to_bits(), (-0.0f64).to_bits());
    assert_eq!(add_f64(0.0, 0.0, Down).to_bits(), 0.0f64.to_bits());
    assert_eq!(sub_f64(0.0, 0.0, Down).to_bits(), (-0.0f64).to_bits());
    assert_eq!(sub_f64(0.0, 0.0, Up).to_bits(), 0.0f64.to_bits());
    assert_eq!(add_f32(2.5, -2.5, Down).to_bits(), (-0.0f32).to_bits());
    assert_eq!(fma_f64(2.0, 3.0, -6.0, Down).to_bits(), (-0.0f64).to_bits());
    assert_eq!(fma_f64(2.0, 3.0, -6.0, Up).to_bits(), 0.0f64.to_bits());
    assert_eq!(fma_f64(0.0, 3.0, -0.0, Down).to_bits(), (-0.0f64).to_bits());
    assert_eq!(fma_f64(0.0, 3.0, -0.0, Up).to_bits(), 0.0f64.to_bits());
    assert_eq!(fma_f32(2.0, 3.0, -6.0, Down).to_bits(), (-0.0f32).to_bits());
    // Products/quotients that underflow keep the sign.
    assert_eq!(mul_f64(-min_sub, 0.5, Up).to_bits(), (-0.0f64).to_bits());
    assert_eq!(mul_f64(-min_sub, 0.5, Down).to_bits(), (-min_sub).to_bits());
    assert_eq!(mul_f64(min_sub, 0.5, Up).to_bits(), min_sub.to_bits());
    assert_eq!(mul_f64(min_sub, 0.5, Down).to_bits(), 0.0f64.to_bits());
    assert_eq!(mul_f64(1e-300, 1e-300, Up).to_bits(), min_sub.to_bits());
    assert_eq!(
        div_f64(-1e-300, 1e300, Down).to_bits(),
        (-min_sub).to_bits()
    );
    assert_eq!(div_f64(-1e-300, 1e300, Up).to_bits(), (-0.0f64).to_bits());
    assert_eq!(mul_f32(-1e-30, 1e-30, Up).to_bits(), (-0.0f32).to_bits());
    assert_eq!(
        mul_f32(-1e-30, 1e-30, Down).to_bits(),
        (-f32::from_bits(1)).to_bits()
    );
    // Overflow by direction.
    assert_eq!(mul_f64(1e300, 1e300, Down), f64::MAX);
    assert_eq!(mul_f64(1e300, 1e300, Up), f64::INFINITY);
    assert_eq!(mul_f64(-1e300, 1e300, Up), -f64::MAX);
    assert_eq!(mul_f64(-1e300, 1e300, Down), f64::NEG_INFINITY);
    assert_eq!(add_f64(f64::MAX, f64::MAX, Down), f64::MAX);
    assert_eq!(add_f64(f64::MAX, 1.0, Up), f64::INFINITY);
    assert_eq!(add_f64(f64::MAX, 1.0, Down), f64::MAX);
    assert_eq!(div_f64(f64::MAX, 0.5, Down), f64::MAX);
    assert_eq!(mul_f32(1e30, 1e30, Down), f32::MAX);
    assert_eq!(mul_f32(1e30, 1e30, Up), f32::INFINITY);
    // Special values.
    assert!(mul_f64(0.0, f64::INFINITY, Down).is_nan());
    assert!(add_f64(f64::INFINITY, f64::NEG_INFINITY, Up).is_nan());
    assert!(sqrt_f64(-1.0, Up).is_nan());
    assert_eq!(sqrt_f64(-0.0, Down).to_bits(), (-0.0f64).to_bits());
    assert_eq!(sqrt_f32(-0.0, Up).to_bits(), (-0.0f32).to_bits());
    assert_eq!(div_f64(1.0, -0.0, Up), f64::NEG_INFINITY);
    // Directed results bracket the exact value.
    assert_eq!(add_f64(1.0, 1e-30, Up), nu64(1.0));
    assert_eq!(add_f64(1.0, 1e-30, Down), 1.0);
    assert_eq!(add_f64(1.0, -1e-30, Down), nd64(1.0));
    assert_eq!(div_f64(1.0, 3.0, Up), nu64(1.0 / 3.0));
    assert_eq!(div_f64(1.0, 3.0, Down), 1.0 / 3.0);
    // RN(sqrt 2) = 1.41421356237309514547... lies above sqrt 2.
    assert_eq!(sqrt_f64(2.0, Up), 2.0f64.sqrt());
    assert_eq!(sqrt_f64(2.0, Down), nd64(2.0f64.sqrt()));
    // 0.1f32 = 0.100000001490116... lies above 0.1f64.
    assert_eq!(narrow_f32(0.1, Up), 0.1f32);
    assert_eq!(narrow_f32(0.1, Down), nd32(0.1f32));
    assert_eq!(narrow_f32(1e-50, Up), f32::from_bits(1));
    assert_eq!(narrow_f32(-1e-50, Up).to_bits(), (-0.0f32).to_bits());
    assert_eq!(narrow_f32(1e50, Down), f32::MAX);
    assert_eq!(narrow_f32(-1e50, Up), -f32::MAX);
    // Double-rounding trap for f32 fma in round-to-nearest: 24929 * 673 =
    // 2^24 + 1 is an f32 midpoint; + 2^-40 is lost by an f64 rounding.
    assert_eq!(fma_f32(24929.0, 673.0, 2f32.powi(-40), Nearest), 16777218.0);
    assert_eq!(
        fma_f32(24929.0, 673.0, -(2f32.powi(-40)), Nearest),
        16777216.0
    );
    assert_eq!(fma_f32(24929.0, 673.0, 2f32.powi(-40), Down), 16777216.0);
    check_fma32(24929.0, 673.0, 2f32.powi(-40));
    check_fma32(24929.0, 673.0, -(2f32.powi(-40)));
    check_fma32(
        1.0 + 2f32.powi(-23),
        1.0 + 2f32.powi(-23),
        -(2f32.powi(-22)),
    );
}

#[test]
fn min_max() {
    let sp = specials64();
    for &a in &sp {
        for &b in &sp {
            let (mn, mx) = (min_f64(a, b), max_f64(a, b));
            if a.is_nan() && b.is_nan() {
                assert!(mn.is_nan() && mx.is_nan());
            } else if a.is_nan() || b.is_nan() {
                let other = if a.is_nan() { b } else { a };
                assert_eq!(mn.to_bits(), other.to_bits());
                assert_eq!(mx.to_bits(), other.to_bits());
            } else {
                let (lo, hi) = if a.total_cmp(&b).is_le() {
                    (a, b)
                } else {
                    (b, a)
                };
                assert_eq!(mn.to_bits(), lo.to_bits(), "min({a:e}, {b:e})");
                assert_eq!(mx.to_bits(), hi.to_bits(), "max({a:e}, {b:e})");
            }
        }
    }
    let sp = specials32();
    for &a in &sp {
        for &b in &sp {
            let (mn, mx) = (min_f32(a, b), max_f32(a, b));
            if a.is_nan() && b.is_nan() {
                assert!(mn.is_nan() && mx.is_nan());
            } else if a.is_nan() || b.is_nan() {
                let other = if a.is_nan() { b } else { a };
                assert_eq!(mn.to_bits(), other.to_bits());
                assert_eq!(mx.to_bits(), other.to_bits());
            } else {
                let (lo, hi) = if a.total_cmp(&b).is_le() {
                    (a, b)
                } else {
                    (b, a)
                };
                assert_eq!(mn.to_bits(), lo.to_bits(), "min({a:e}, {b:e})");
                assert_eq!(mx.to_bits(), hi.to_bits(), "max({a:e}, {b:e})");
            }
        }
    }
    assert_eq!(min_f64(0.0, -0.0).to_bits(), (-0.0f64).to_bits());
    assert_eq!(min_f64(-0.0, 0.0).to_bits(), (-0.0f64).to_bits());
    assert_eq!(max_f64(-0.0, 0.0).to_bits(), 0.0f64.to_bits());
    assert_eq!(max_f64(0.0, -0.0).to_bits(), 0.0f64.to_bits());
    assert_eq!(min_f64(f64::NAN, 1.0), 1.0);
    assert_eq!(max_f64(1.0, f64::NAN), 1.0);
    assert!(min_f64(f64::NAN, f64::NAN).is_nan());
    assert_eq!(min_f32(0.0, -0.0).to_bits(), (-0.0f32).to_bits());
    assert_eq!(max_f32(-0.0, 0.0).to_bits(), 0.0f32.to_bits());
    assert_eq!(min_f32(f32::NAN, -2.0), -2.0);
    assert!(max_f32(f32::NAN, f32::NAN).is_nan());
}

// ---------------------------------------------------------------------------
// Seeded random loops
// ---------------------------------------------------------------------------

fn scale() -> f64 {
    std::env::var("ROUND_TEST_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0)
}
fn n_cases() -> usize {
    (1_000_000.0 * scale()) as usize
}

struct Rng(std::cell::Cell<u64>);
impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(std::cell::Cell::new(seed))
    }
    fn next(&self) -> u64 {
        let mut state = self.0.get();
        let bits = rng::splitmix64(&mut state);
        self.0.set(state);
        bits
    }
    fn below(&self, n: u64) -> u64 {
        self.next() % n
    }
    fn range(&self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }
    fn bool(&self) -> bool {
        self.next() & 1 == 1
    }
    /// A significand fraction of `bits` bits with varied structure.
    fn frac(&self, bits: u32) -> u64 {
        let mask = (1u64 << bits) - 1;
        match self.below(8) {
            0..=2 => self.next() & mask,
            3 => 0,
            4 => mask - self.below(4),
            5 => {
                // only the top k bits random (short significands: exact products, ties)
                let k = self.below(u64::from(bits) + 1) as u32;
                (self.next() & mask) & !((1u64 << (bits - k)) - 1) & mask
            }
            6 => self.next() & ((1u64 << self.below(8)) - 1),
            _ => 1u64 << self.below(u64::from(bits)),
        }
    }
    /// f64 with the given biased exponent field, random sign and structured fraction.
    fn f64_field(&self, field: i64) -> f64 {
        let field = field.clamp(0, 2046) as u64;
        let sign = self.next() & (1 << 63);
        f64::from_bits(sign | (field << 52) | self.frac(52))
    }
    fn f64_any(&self, sp: &[f64]) -> f64 {
        match self.below(16) {
            0..=3 => f64::from_bits(self.next()),
            4 => sp[self.below(sp.len() as u64) as usize],
            5 => self.f64_field(0),
            6 => self.f64_field(self.range(1, 3)),
            7..=8 => self.f64_field(self.range(1023 - 60, 1023 + 60)),
            9 => self.f64_field(self.range(2040, 2046)),
            10 => self.f64_field(self.range(1, 110)),
            _ => self.f64_field(self.range(0, 2046)),
        }
    }
    fn f32_field(&self, field: i64) -> f32 {
        let field = field.clamp(0, 254) as u32;
        let sign = (self.next() as u32) & (1 << 31);
        f32::from_bits(sign | (field << 23) | self.frac(23) as u32)
    }
    fn f32_any(&self, sp: &[f32]) -> f32 {
        match self.below(16) {
            0..=3 => f32::from_bits(self.next() as u32),
            4 => sp[self.below(sp.len() as u64) as usize],
            5 => self.f32_field(0),
            6 => self.f32_field(self.range(1, 3)),
            7..=8 => self.f32_field(self.range(127 - 30, 127 + 30)),
            9 => self.f32_field(self.range(248, 254)),
            10 => self.f32_field(self.range(1, 30)),
            _ => self.f32_field(self.range(0, 254)),
        }
    }
}

fn field64(x: f64) -> i64 {
    ((x.to_bits() >> 52) & 0x7ff) as i64
}
fn field32(x: f32) -> i64 {
    ((x.to_bits() >> 23) & 0xff) as i64
}
/// x moved by k ulps (bit pattern arithmetic, same sign).
fn ulps64(x: f64, k: i64) -> f64 {
    let b = (x.to_bits() as i64).wrapping_add(k);
    let y = f64::from_bits(b as u64);
    if (b as u64) >> 63 != x.to_bits() >> 63 || y.is_nan() || x.is_nan() {
        x
    } else {
        y
    }
}
fn ulps32(x: f32, k: i64) -> f32 {
    let b = i64::from(x.to_bits()) + k;
    if !(0..=u32::MAX as i64).contains(&b) {
        return x;
    }
    let y = f32::from_bits(b as u32);
    if y.to_bits() >> 31 != x.to_bits() >> 31 || y.is_nan() {
        x
    } else {
        y
    }
}

/// Pairs for add/sub: independent values, cancellation, alignment and ties.
fn pair_add64(g: &Rng, sp: &[f64]) -> (f64, f64) {
    let a = g.f64_any(sp);
    let b = match g.below(8) {
        0..=2 => g.f64_any(sp),
        3 => -ulps64(a, g.range(-3, 3)), // cancellation
        4 => ulps64(a, g.range(-3, 3)),
        5 => {
            // b about a * 2^-j: alignment, halfway cases, sticky bits
            let f = field64(a) - g.range(0, 120);
            let v = g.f64_field(f);
            if g.bool() {
                v
            } else {
                f64::from_bits(v.to_bits() & !((1u64 << 52) - 1)) // power of two
            }
        }
        6 => g.f64_field(field64(a) + g.range(-3, 3)),
        _ => -g.f64_field(field64(a) - g.range(0, 60)),
    };
    if g.bool() {
        (a, b)
    } else {
        (b, a)
    }
}

/// Pairs for mul: product exponents aimed at underflow, the fast-path gate and overflow.
fn pair_mul64(g: &Rng, sp: &[f64]) -> (f64, f64) {
    match g.below(8) {
        0..=2 => (g.f64_any(sp), g.f64_any(sp)),
        3..=6 => {
            // target product exponent (unbiased)
            let t = match g.below(5) {
                0 => g.range(-1140, -1070),
                1 => g.range(-1080, -1015),
                2 => g.range(-975, -955),
                3 => g.range(1015, 1025),
                _ => g.range(-1100, 1030),
            };
            let ea = g.range(-1074, 1023).clamp(t - 1023, t + 1074);
            let eb = t - ea;
            (g.f64_field(ea + 1023), g.f64_field(eb + 1023))
        }
        _ => {
            // short (27-bit) significands: exact products and exact ties
            let a = f64::from_bits(g.f64_field(g.range(900, 1150)).to_bits() & !((1u64 << 26) - 1));
            let b = f64::from_bits(g.f64_field(g.range(900, 1150)).to_bits() & !((1u64 << 26) - 1));
            (a, b)
        }
    }
}

/// Pairs for div: quotients near exact, aimed at underflow, the gate and overflow.
fn pair_div64(g: &Rng, sp: &[f64]) -> (f64, f64) {
    match g.below(8) {
        0..=2 => (g.f64_any(sp), g.f64_any(sp)),
        3..=4 => {
            let b = g.f64_any(sp);
            let q = g.f64_field(g.range(900, 1150));
            (ulps64(b * q, g.range(-2, 2)), b) // a = b*q: quotient q (+-) tiny
        }
        _ => {
            let t = match g.below(4) {
                0 => g.range(-1140, -1015),
                1 => g.range(1015, 1025),
                _ => g.range(-1100, 1030),
            };
            let ea = match g.below(3) {
                0 => g.range(-1074, -940),
                _ => g.range(-1074, 1023),
            };
            let eb = ea - t;
            (g.f64_field(ea + 1023), g.f64_field(eb + 1023))
        }
    }
}

fn triple_fma64(g: &Rng, sp: &[f64]) -> (f64, f64, f64) {
    let (a, b) = if g.below(3) == 0 {
        (g.f64_any(sp), g.f64_any(sp))
    } else {
        pair_mul64(g, sp)
    };
    let p = a * b;
    let c = match g.below(10) {
        0..=1 => g.f64_any(sp),
        2 => -ulps64(p, g.range(-2, 2)), // massive cancellation
        3 => -p * p2(g.range(-2, 2) as i32),
        4 => {
            // c near the low part of a*b
            let lo = a.mul_add(b, -p);
            if lo != 0.0 && lo.is_finite() {
                ulps64(if g.bool() { lo } else { -lo }, g.range(-2, 2))
            } else {
                g.f64_any(sp)
            }
        }
        5 => {
            // ties: c = +-ulp(p)/2 * odd
            let u = ulps64(p.abs(), 1) - p.abs();
            let v = u * 0.5 * (2 * g.range(0, 3) + 1) as f64;
            if g.bool() {
                v
            } else {
                -v
            }
        }
        6 => g.f64_field(field64(p) - g.range(-3, 110)),
        7 => g.f64_field(g.range(0, 3)),
        8 => -g.f64_field(field64(p) + g.range(-1, 1)),
        _ => g.f64_field(g.range(0, 2046)),
    };
    (a, b, c)
}

fn sqrt_arg64(g: &Rng, sp: &[f64]) -> f64 {
    match g.below(4) {
        0 => g.f64_any(sp),
        1 => {
            let r = g.f64_field(g.range(0, 2046)).abs();
            ulps64(r * r, g.range(-2, 2)) // near-exact squares
        }
        2 => g.f64_field(g.range(0, 70)).abs(),
        _ => g.f64_field(g.range(0, 2046)).abs(),
    }
}

#[test]
fn random_add_sub_f64() {
    let sp = specials64();
    let g = Rng::new(1);
    for _ in 0..n_cases() {
        let (a, b) = pair_add64(&g, &sp);
        check2_64("add_f64", add_f64, o_add64, a, b);
        check2_64("sub_f64", sub_f64, o_sub64, a, -b);
    }
}

#[test]
fn random_mul_f64() {
    let sp = specials64();
    let g = Rng::new(2);
    for _ in 0..n_cases() {
        let (a, b) = pair_mul64(&g, &sp);
        check2_64("mul_f64", mul_f64, o_mul64, a, b);
    }
}

#[test]
fn random_div_f64() {
    let sp = specials64();
    let g = Rng::new(3);
    for _ in 0..n_cases() {
        let (a, b) = pair_div64(&g, &sp);
        check2_64("div_f64", div_f64, o_div64, a, b);
    }
}

#[test]
fn random_fma_f64() {
    let sp = specials64();
    let g = Rng::new(4);
    for _ in 0..n_cases() {
        let (a, b, c) = triple_fma64(&g, &sp);
        check_fma64(a, b, c);
    }
}

#[test]
fn random_sqrt_f64() {
    let sp = specials64();
    let g = Rng::new(5);
    for _ in 0..n_cases() {
        check_sqrt64(sqrt_arg64(&g, &sp));
    }
}

#[test]
fn random_ops_f32() {
    let sp = specials32();
    let g = Rng::new(6);
    for _ in 0..n_cases() {
        let a = g.f32_any(&sp);
        let b = match g.below(6) {
            0..=2 => g.f32_any(&sp),
            3 => -ulps32(a, g.range(-3, 3)),
            4 => g.f32_field(field32(a) - g.range(-3, 40)),
            _ => g.f32_field(field32(a) - field32(g.f32_any(&sp)) + 127 + g.range(-3, 3)),
        };
        for (name, f, o) in OPS2_32 {
            check2_32(name, f, o, a, b);
        }
        check_sqrt32(a.abs());
        check_sqrt32(ulps32((a * a).abs(), g.range(-2, 2)));
    }
}

#[test]
fn random_fma_f32() {
    let sp = specials32();
    let g = Rng::new(7);
    for _ in 0..n_cases() {
        let a = g.f32_any(&sp);
        let b = g.f32_any(&sp);
        let p = f64::from(a) * f64::from(b);
        let c = match g.below(6) {
            0..=1 => g.f32_any(&sp),
            2 => -ulps32(p as f32, g.range(-2, 2)),
            3 => {
                // c cancels the high part of a*b: the result is the (tiny) low part
                let hi = p as f32;
                let lo = (p - f64::from(hi)) as f32;
                if g.bool() {
                    -hi
                } else {
                    -(hi + lo)
                }
            }
            4 => g.f32_field(field32(p as f32) - g.range(-3, 50)),
            _ => g.f32_field(g.range(0, 254)),
        };
        check_fma32(a, b, c);
    }
}

#[test]
fn random_narrow_f32() {
    let sp = specials64();
    let g = Rng::new(8);
    for _ in 0..n_cases() {
        let x = match g.below(6) {
            0 => g.f64_any(&sp),
            1..=2 => g.f64_field(g.range(1023 - 160, 1023 + 130)),
            3 => {
                // exact f32 values and f32 midpoints, nudged by a few f64 ulps
                let y = f64::from(f32::from_bits(g.next() as u32));
                let z = f64::from(f32::from_bits(g.next() as u32));
                let _ = z;
                ulps64(y, g.range(-2, 2))
            }
            4 => {
                let y = f32::from_bits(g.next() as u32);
                let mid = (f64::from(y) + f64::from(nu32(y))) / 2.0;
                ulps64(mid, g.range(-2, 2))
            }
            _ => g.f64_field(g.range(1023 - 152, 1023 - 120)), // f32 subnormal range
        };
        check_narrow(x);
    }
}

// ---------------------------------------------------------------------------
// proptest: raw bit patterns and all float classes
// ---------------------------------------------------------------------------

fn arb64() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<u64>().prop_map(f64::from_bits),
        proptest::num::f64::ANY,
        proptest::sample::select(specials64()),
    ]
}
fn arb32() -> impl Strategy<Value = f32> {
    prop_oneof![
        any::<u32>().prop_map(f32::from_bits),
        proptest::num::f32::ANY,
        proptest::sample::select(specials32()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(50_000))]

    #[test]
    fn prop_ops_f64(a in arb64(), b in arb64(), c in arb64()) {
        for (name, f, o) in OPS2_64 {
            check2_64(name, f, o, a, b);
        }
        check_fma64(a, b, c);
        check_sqrt64(a);
        check_narrow(a);
    }

    #[test]
    fn prop_ops_f32(a in arb32(), b in arb32(), c in arb32()) {
        for (name, f, o) in OPS2_32 {
            check2_32(name, f, o, a, b);
        }
        check_fma32(a, b, c);
        check_sqrt32(a);
    }
}
