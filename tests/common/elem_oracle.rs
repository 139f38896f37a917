//! Rigorous point oracle for the elementary functions, on astro-float (pinned `=0.9.6`).
//!
//! For a function and a point (f64 arguments, taken exactly), `point(f, args, p)` returns an
//! enclosure `[lo, hi]` of the exact real value as a pair of big floats, or `Out` when the point
//! is outside the function's domain.
//!
//! What the enclosure rests on:
//! - astro-float documents that "results of all arithmetic operations, mathematical functions,
//!   radix conversion, and constant values are correctly rounded". We do not take that on faith
//!   to the last bit: every value it returns for a transcendental function or constant is taken
//!   with directed rounding (Down for a lower bound, Up for an upper bound) and then widened by a
//!   relative margin of 2^-(p-24) where p is the working precision (>= 192 bits), i.e. we allow
//!   an error of about 2^24 of its ulps. Basic operations (+ - * /) are used with directed
//!   rounding and exact (full-precision) products where possible.
//! - Trigonometric arguments are reduced here, not by the library: k = round(x / (pi/2)) and
//!   r = x - k*pi/2 with an enclosure of pi of p + exponent(x) + 64 bits, so r is enclosed to
//!   ~p bits even for x = 2^1023; sin and cos are then only called on |r| <= pi/4 + tiny.
//! - sinpi / cospi reduce exactly (x - round(x) is exact for dyadic x) and use an enclosure of pi.
//! - exp of an argument beyond +-10^4 is not evaluated: the value is then certainly above 2^1100
//!   (enclosure [2^1100, +inf]) or below 2^-1100 (enclosure [0, 2^-1100]), rigorous statements
//!   that decide every comparison with f64 bounds.
//! - Values that are exactly representable (exp(0) = 1, log2(2^k) = k, sinpi(k/2), ...) are
//!   returned as points; that these are the only exact cases at dyadic (float) arguments is
//!   classical (Lindemann-Weierstrass, Gelfond-Schneider, Niven). For the algebraic functions
//!   (pow, rootn, cbrt, hypot) a candidate exact value is checked by exact rational arithmetic
//!   (`is_exact`).
//! - `f64` <-> big float conversions are our own and exact (astro-float's `from_f64` is not used:
//!   its subnormal handling is undocumented), rounding back to f64 is checked by exact
//!   comparisons.
//!
//! The test `oracle_self_check` in tests/cpu/elementary.rs evaluates every function at a few thousand
//! points at two precisions and checks that the enclosures overlap and are tight.
#![allow(dead_code)]

use astro_float::{BigFloat, Consts, RoundingMode as RM, INF_NEG, INF_POS};
use num_bigint::BigInt;
use num_traits::{One, Signed, Zero};
use std::cell::RefCell;
use std::cmp::Ordering;

use super::oracle::{q_of, Q};

thread_local! {
    static CC: RefCell<Consts> = RefCell::new(Consts::new().expect("astro-float constants"));
}

pub fn with_cc<T>(f: impl FnOnce(&mut Consts) -> T) -> T {
    CC.with(|c| f(&mut c.borrow_mut()))
}

/// The exact value of a finite f64 (or +-inf) as a big float.
pub fn bf(x: f64) -> BigFloat {
    if x.is_infinite() {
        return if x > 0.0 { INF_POS } else { INF_NEG };
    }
    assert!(!x.is_nan());
    if x == 0.0 {
        return BigFloat::new(64);
    }
    let bits = x.to_bits();
    let ef = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    let (m, e) = if ef == 0 {
        (frac, -1074)
    } else {
        (frac | (1u64 << 52), ef - 1075)
    };
    let mut b = BigFloat::from_u64(m, 64);
    let be = b.exponent().unwrap();
    b.set_exponent(be + e);
    if x < 0.0 {
        b.inv_sign();
    }
    b
}

/// 2^e exactly.
pub fn two_pow(e: i32) -> BigFloat {
    let mut b = BigFloat::from_u64(1, 64);
    b.set_exponent(e + 1);
    b
}

pub fn cmp(a: &BigFloat, b: &BigFloat) -> Ordering {
    match a.cmp(b).expect("comparison with NaN") {
        x if x < 0 => Ordering::Less,
        0 => Ordering::Equal,
        _ => Ordering::Greater,
    }
}

pub fn le(a: &BigFloat, b: &BigFloat) -> bool {
    cmp(a, b) != Ordering::Greater
}

pub fn min_b(a: BigFloat, b: BigFloat) -> BigFloat {
    if le(&a, &b) {
        a
    } else {
        b
    }
}

pub fn max_b(a: BigFloat, b: BigFloat) -> BigFloat {
    if le(&a, &b) {
        b
    } else {
        a
    }
}

/// The largest f64 <= b (directed rounding down, exact).
pub fn round_down(b: &BigFloat) -> f64 {
    if b.is_inf_pos() {
        return f64::INFINITY;
    }
    if b.is_inf_neg() {
        return f64::NEG_INFINITY;
    }
    assert!(!b.is_nan(), "rounding NaN");
    if b.is_zero() {
        return 0.0;
    }
    let e = b.exponent().unwrap();
    let neg = b.is_negative();
    if e > 1100 {
        return if neg { f64::NEG_INFINITY } else { f64::MAX };
    }
    if e < -1100 {
        return if neg { -f64::from_bits(1) } else { 0.0 };
    }
    // Approximation from the top word, then exact correction.
    let digits = b.mantissa_digits().unwrap();
    let top = *digits.last().unwrap();
    let mut f = top as f64;
    let mut s = e - 64;
    while s > 500 {
        f *= 2f64.powi(500);
        s -= 500;
    }
    while s < -500 {
        f *= 2f64.powi(-500);
        s += 500;
    }
    f *= 2f64.powi(s);
    if neg {
        f = -f;
    }
    if f.is_infinite() {
        f = if f > 0.0 { f64::MAX } else { -f64::MAX };
    }
    while !le(&bf(f), b) {
        f = f.next_down();
    }
    loop {
        let n = f.next_up();
        if n.is_finite() && le(&bf(n), b) {
            f = n;
        } else {
            break;
        }
    }
    f
}

/// The smallest f64 >= b.
pub fn round_up(b: &BigFloat) -> f64 {
    -round_down(&b.neg())
}

/// An enclosure of one real value.
#[derive(Debug)]
pub struct Enc {
    pub lo: BigFloat,
    pub hi: BigFloat,
}

impl Clone for Enc {
    fn clone(&self) -> Self {
        Enc {
            lo: self.lo.clone(),
            hi: self.hi.clone(),
        }
    }
}

impl Enc {
    pub fn point(b: BigFloat) -> Enc {
        Enc {
            lo: b.clone(),
            hi: b,
        }
    }
    pub fn exact(x: f64) -> Enc {
        Enc::point(bf(x))
    }
    pub fn neg(&self) -> Enc {
        Enc {
            lo: self.hi.neg(),
            hi: self.lo.neg(),
        }
    }
    pub fn to_f64(&self) -> (f64, f64) {
        (round_down(&self.lo), round_up(&self.hi))
    }
    pub fn describe(&self) -> String {
        let (d, u) = self.to_f64();
        format!(
            "[{}, {}] (outward to f64: [{}, {}])",
            approx(&self.lo),
            approx(&self.hi),
            super::oracle::hex(d),
            super::oracle::hex(u)
        )
    }
}

fn approx(b: &BigFloat) -> String {
    if b.is_inf_pos() {
        return "inf".into();
    }
    if b.is_inf_neg() {
        return "-inf".into();
    }
    let mut c = b.clone();
    let _ = c.set_precision(128, RM::ToEven);
    let s = with_cc(|cc| c.format(astro_float::Radix::Dec, RM::ToEven, cc));
    s.unwrap_or_else(|_| "?".into())
}

/// Intersects with [lo, hi] (known bounds of the function's range), e.g. |cos x| <= 1: the
/// relative widening must not push a bound past a value the function cannot exceed.
pub fn clip(mut en: Enc, lo: f64, hi: f64) -> Enc {
    let (l, h) = (bf(lo), bf(hi));
    if le(&en.lo, &l) {
        en.lo = l;
    }
    if le(&h, &en.hi) {
        en.hi = h;
    }
    en
}

/// Point value or outside the domain.
pub enum Val {
    Out,
    In(Enc),
}

/// Lower bound of a library result: taken rounded down, then widened by 2^-(p-24) relative.
pub fn lo_of(d: BigFloat, p: usize) -> BigFloat {
    if d.is_inf() || d.is_zero() {
        return d;
    }
    assert!(!d.is_nan(), "astro-float returned NaN: {:?}", d.err());
    let mut m = d.abs();
    let e = m.exponent().unwrap();
    m.set_exponent(e - (p as i32 - 24));
    d.sub(&m, p + 64, RM::Down)
}

pub fn hi_of(u: BigFloat, p: usize) -> BigFloat {
    lo_of(u.neg(), p).neg()
}

pub type LibFn = fn(&BigFloat, usize, RM, &mut Consts) -> BigFloat;

/// A monotone increasing library function on an enclosed argument.
pub fn incr(f: LibFn, a: &Enc, p: usize) -> Enc {
    with_cc(|cc| Enc {
        lo: lo_of(f(&a.lo, p, RM::Down, cc), p),
        hi: hi_of(f(&a.hi, p, RM::Up, cc), p),
    })
}

/// A monotone decreasing library function on an enclosed argument.
pub fn decr(f: LibFn, a: &Enc, p: usize) -> Enc {
    with_cc(|cc| Enc {
        lo: lo_of(f(&a.hi, p, RM::Down, cc), p),
        hi: hi_of(f(&a.lo, p, RM::Up, cc), p),
    })
}

pub fn lib_exp(x: &BigFloat, p: usize, rm: RM, cc: &mut Consts) -> BigFloat {
    x.exp(p, rm, cc)
}
pub fn lib_ln(x: &BigFloat, p: usize, rm: RM, cc: &mut Consts) -> BigFloat {
    x.ln(p, rm, cc)
}
pub fn lib_log2(x: &BigFloat, p: usize, rm: RM, cc: &mut Consts) -> BigFloat {
    x.log2(p, rm, cc)
}
pub fn lib_log10(x: &BigFloat, p: usize, rm: RM, cc: &mut Consts) -> BigFloat {
    x.log10(p, rm, cc)
}
pub fn lib_sin(x: &BigFloat, p: usize, rm: RM, cc: &mut Consts) -> BigFloat {
    x.sin(p, rm, cc)
}
pub fn lib_cos(x: &BigFloat, p: usize, rm: RM, cc: &mut Consts) -> BigFloat {
    x.cos(p, rm, cc)
}
pub fn lib_asin(x: &BigFloat, p: usize, rm: RM, cc: &mut Consts) -> BigFloat {
    x.asin(p, rm, cc)
}
pub fn lib_acos(x: &BigFloat, p: usize, rm: RM, cc: &mut Consts) -> BigFloat {
    x.acos(p, rm, cc)
}
pub fn lib_atan(x: &BigFloat, p: usize, rm: RM, cc: &mut Consts) -> BigFloat {
    x.atan(p, rm, cc)
}
pub fn lib_sinh(x: &BigFloat, p: usize, rm: RM, cc: &mut Consts) -> BigFloat {
    x.sinh(p, rm, cc)
}
pub fn lib_tanh(x: &BigFloat, p: usize, rm: RM, cc: &mut Consts) -> BigFloat {
    x.tanh(p, rm, cc)
}
pub fn lib_asinh(x: &BigFloat, p: usize, rm: RM, cc: &mut Consts) -> BigFloat {
    x.asinh(p, rm, cc)
}
pub fn lib_acosh(x: &BigFloat, p: usize, rm: RM, cc: &mut Consts) -> BigFloat {
    x.acosh(p, rm, cc)
}
pub fn lib_atanh(x: &BigFloat, p: usize, rm: RM, cc: &mut Consts) -> BigFloat {
    x.atanh(p, rm, cc)
}
pub fn lib_sqrt(x: &BigFloat, p: usize, rm: RM, _cc: &mut Consts) -> BigFloat {
    x.sqrt(p, rm)
}

fn big(x: f64) -> BigFloat {
    bf(x)
}

/// An enclosure of pi with p bits.
pub fn pi_enc(p: usize) -> Enc {
    with_cc(|cc| Enc {
        lo: lo_of(cc.pi(p, RM::Down), p),
        hi: hi_of(cc.pi(p, RM::Up), p),
    })
}

// ---- interval arithmetic on enclosures (directed rounding, precision p) ----

pub fn mul_e(a: &Enc, b: &Enc, p: usize) -> Enc {
    let c = [
        (&a.lo, &b.lo),
        (&a.lo, &b.hi),
        (&a.hi, &b.lo),
        (&a.hi, &b.hi),
    ];
    let mut lo: Option<BigFloat> = None;
    let mut hi: Option<BigFloat> = None;
    for (x, y) in c {
        let d = x.mul(y, p, RM::Down);
        let u = x.mul(y, p, RM::Up);
        lo = Some(match lo {
            None => d,
            Some(l) => min_b(l, d),
        });
        hi = Some(match hi {
            None => u,
            Some(h) => max_b(h, u),
        });
    }
    Enc {
        lo: lo.unwrap(),
        hi: hi.unwrap(),
    }
}

/// a / b, or None when b contains 0.
pub fn div_e(a: &Enc, b: &Enc, p: usize) -> Option<Enc> {
    if !b.lo.is_positive() && !b.hi.is_negative() {
        return None;
    }
    if b.lo.is_zero() || b.hi.is_zero() {
        return None;
    }
    let c = [
        (&a.lo, &b.lo),
        (&a.lo, &b.hi),
        (&a.hi, &b.lo),
        (&a.hi, &b.hi),
    ];
    let mut lo: Option<BigFloat> = None;
    let mut hi: Option<BigFloat> = None;
    for (x, y) in c {
        let d = x.div(y, p, RM::Down);
        let u = x.div(y, p, RM::Up);
        lo = Some(match lo {
            None => d,
            Some(l) => min_b(l, d),
        });
        hi = Some(match hi {
            None => u,
            Some(h) => max_b(h, u),
        });
    }
    Some(Enc {
        lo: lo.unwrap(),
        hi: hi.unwrap(),
    })
}

pub fn add_e(a: &Enc, b: &Enc, p: usize) -> Enc {
    Enc {
        lo: a.lo.add(&b.lo, p, RM::Down),
        hi: a.hi.add(&b.hi, p, RM::Up),
    }
}

pub fn entire() -> Enc {
    Enc {
        lo: INF_NEG,
        hi: INF_POS,
    }
}

pub const EXP_CUT: f64 = 1.0e4;

/// exp on an enclosed argument, with the overflow / underflow statements beyond +-10^4.
pub fn exp_e(t: &Enc, p: usize) -> Enc {
    let cut = big(EXP_CUT);
    let ncut = big(-EXP_CUT);
    if le(&cut, &t.lo) {
        return Enc {
            lo: two_pow(1100),
            hi: INF_POS,
        };
    }
    if le(&t.hi, &ncut) {
        return Enc {
            lo: BigFloat::new(64),
            hi: two_pow(-1100),
        };
    }
    let lo = if le(&t.lo, &ncut) {
        BigFloat::new(64)
    } else {
        with_cc(|cc| lo_of(t.lo.exp(p, RM::Down, cc), p))
    };
    let hi = if le(&cut, &t.hi) {
        INF_POS
    } else {
        with_cc(|cc| hi_of(t.hi.exp(p, RM::Up, cc), p))
    };
    Enc { lo, hi }
}

/// x - k*(pi/2) for an integer k near x/(pi/2): (k mod 4, enclosure of r).
pub fn reduce_half_pi(x: &BigFloat, p: usize) -> (u32, Enc) {
    let ex = x.exponent().unwrap();
    if ex <= 0 {
        // |x| < 1
        return (0, Enc::point(x.clone()));
    }
    let pp = p + ex as usize + 64;
    let pi = pi_enc(pp);
    let mut hlo = pi.lo.clone();
    hlo.set_exponent(hlo.exponent().unwrap() - 1);
    let mut hhi = pi.hi.clone();
    hhi.set_exponent(hhi.exponent().unwrap() - 1);
    let q = x.div(&hlo, pp, RM::ToEven);
    let half = two_pow(-1);
    let k = q.add(&half, pp, RM::ToEven).floor();
    // k mod 4, exactly (k is an integer below 2^(ex+2) and pp > ex + 64 bits: no rounding).
    // (astro-float's *_full_prec operations are avoided: they mishandle a zero operand.)
    let mut k4 = k.clone();
    if !k4.is_zero() {
        k4.set_exponent(k4.exponent().unwrap() - 2);
    }
    let fl = k4.floor();
    let mut fl4 = fl.clone();
    if !fl4.is_zero() {
        fl4.set_exponent(fl4.exponent().unwrap() + 2);
    }
    let m = k.sub(&fl4, pp, RM::ToEven);
    let mut kmod = 4;
    for i in 0..4u64 {
        if cmp(&m, &BigFloat::from_u64(i, 64)) == Ordering::Equal {
            kmod = i as u32;
        }
    }
    assert!(kmod < 4, "k mod 4 failed");
    // k * [hlo, hhi] with outward rounding, then r = x - k*pi/2.
    let pm = 2 * pp + 64;
    let a = max_b(k.mul(&hlo, pm, RM::Up), k.mul(&hhi, pm, RM::Up));
    let b = min_b(k.mul(&hlo, pm, RM::Down), k.mul(&hhi, pm, RM::Down));
    let r = Enc {
        lo: x.sub(&a, p + 64, RM::Down),
        hi: x.sub(&b, p + 64, RM::Up),
    };
    (kmod, r)
}

/// sin on an enclosure inside [-pi/2, pi/2] (increasing there).
pub fn sin_small(r: &Enc, p: usize) -> Enc {
    incr(lib_sin, r, p)
}

/// cos on an enclosure inside [-pi/2, pi/2].
pub fn cos_small(r: &Enc, p: usize) -> Enc {
    if !r.lo.is_negative() {
        decr(lib_cos, r, p)
    } else if !r.hi.is_positive() {
        incr(lib_cos, r, p)
    } else {
        let a = decr(lib_cos, &Enc::point(r.hi.clone()), p);
        let b = incr(lib_cos, &Enc::point(r.lo.clone()), p);
        Enc {
            lo: min_b(a.lo, b.lo),
            hi: BigFloat::from_u64(1, 64),
        }
    }
}

fn sin_enc(x: f64, p: usize) -> Enc {
    let (k, r) = reduce_half_pi(&big(x), p);
    match k {
        0 => sin_small(&r, p),
        1 => cos_small(&r, p),
        2 => sin_small(&r, p).neg(),
        _ => cos_small(&r, p).neg(),
    }
}

fn cos_enc(x: f64, p: usize) -> Enc {
    let (k, r) = reduce_half_pi(&big(x), p);
    match k {
        0 => cos_small(&r, p),
        1 => sin_small(&r, p).neg(),
        2 => cos_small(&r, p).neg(),
        _ => sin_small(&r, p),
    }
}

/// (k mod 2, r) with x = k + r, k integer, |r| <= 1/2; exact.
fn reduce_int(x: f64) -> (u32, f64) {
    let a = x.abs();
    if a >= 2f64.powi(53) {
        return (0, 0.0);
    }
    if a >= 2f64.powi(52) {
        return (((a as u64) & 1) as u32, 0.0);
    }
    // For |x| < 2^52 round() and the subtraction are exact.
    let k = x.round();
    let r = x - k;
    (((k.abs() as u64) & 1) as u32, r)
}

pub fn ln_e(x: &Enc, p: usize) -> Enc {
    incr(lib_ln, x, p)
}

/// Whether an f64 is an integer.
fn is_int(x: f64) -> bool {
    x.is_finite() && x == x.trunc()
}

pub const UNARY: &[&str] = &[
    "exp", "exp2", "exp10", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "asin",
    "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "cbrt", "sinpi", "cospi",
    "erf", "erfc", "sec", "csc", "cot", "acot", "sech", "csch", "coth", "acoth", "asech", "acsch",
    "floor", "ceil", "trunc", "round", "rint", "sign", "rootn2", "rootn3", "rootn4", "rootn5",
];
pub const BINARY: &[&str] = &["atan2", "pow", "hypot"];

/// The enclosure of f(args) computed with working precision p (>= 192).
pub fn point(f: &str, args: &[f64], p: usize) -> Val {
    let x = args[0];
    let e = |v: f64| Val::In(Enc::exact(v));
    let inn = Val::In;
    match f {
        "exp" | "exp2" | "exp10" => {
            if x == 0.0 {
                return e(1.0);
            }
            if f == "exp2" && is_int(x) && x.abs() <= 1074.0 {
                return inn(Enc::point(two_pow(x as i32)));
            }
            if f == "exp10" && is_int(x) && (0.0..=22.0).contains(&x) {
                return e(10f64.powi(x as i32)); // exact: 10^22 < 2^53 * 2^22
            }
            let t = match f {
                "exp" => Enc::exact(x),
                _ => {
                    let c = with_cc(|cc| {
                        if f == "exp2" {
                            Enc {
                                lo: lo_of(cc.ln_2(p + 64, RM::Down), p + 64),
                                hi: hi_of(cc.ln_2(p + 64, RM::Up), p + 64),
                            }
                        } else {
                            Enc {
                                lo: lo_of(cc.ln_10(p + 64, RM::Down), p + 64),
                                hi: hi_of(cc.ln_10(p + 64, RM::Up), p + 64),
                            }
                        }
                    });
                    mul_e(&Enc::exact(x), &c, p + 64)
                }
            };
            inn(exp_e(&t, p))
        }
        "expm1" => {
            if x == 0.0 {
                return e(0.0);
            }
            if x < -EXP_CUT {
                return inn(Enc {
                    lo: big(-1.0),
                    hi: big(-1.0).add(&two_pow(-1100), 1200, RM::Up),
                });
            }
            // exp at a precision that keeps p bits after the cancellation of 1.
            let ex = big(x).exponent().unwrap();
            let pp = p + (-(ex.min(0))) as usize + 64;
            let t = exp_e(&Enc::exact(x), pp);
            let one = big(1.0);
            inn(Enc {
                lo: t.lo.sub(&one, pp, RM::Down),
                hi: if t.hi.is_inf() {
                    INF_POS
                } else {
                    t.hi.sub(&one, pp, RM::Up)
                },
            })
        }
        "log" | "log2" | "log10" | "log1p" => {
            let (arg, special) = if f == "log1p" {
                if x <= -1.0 {
                    return Val::Out;
                }
                (big(x), x == 0.0)
            } else {
                if x <= 0.0 {
                    return Val::Out;
                }
                (big(x), x == 1.0)
            };
            if special {
                return e(0.0);
            }
            if f == "log2" {
                let b = x.to_bits();
                if x.is_normal() && b & ((1u64 << 52) - 1) == 0 {
                    return e((((b >> 52) & 0x7ff) as i64 - 1023) as f64);
                }
                if !x.is_normal() && (b & (b - 1)) == 0 {
                    return e(-1074.0 + b.trailing_zeros() as f64);
                }
            }
            if f == "log10" {
                for k in 1..=22 {
                    if x == 10f64.powi(k) {
                        return e(k as f64);
                    }
                }
            }
            let a = if f == "log1p" {
                // 1 + x, enclosed (exact in practice at this precision)
                let one = big(1.0);
                Enc {
                    lo: arg.add(&one, p + 1200, RM::Down),
                    hi: arg.add(&one, p + 1200, RM::Up),
                }
            } else {
                Enc::point(arg)
            };
            inn(match f {
                "log2" => incr(lib_log2, &a, p),
                "log10" => incr(lib_log10, &a, p),
                _ => ln_e(&a, p),
            })
        }
        "sin" => {
            if x == 0.0 {
                return e(0.0);
            }
            inn(clip(sin_enc(x, p), -1.0, 1.0))
        }
        "cos" => {
            if x == 0.0 {
                return e(1.0);
            }
            inn(clip(cos_enc(x, p), -1.0, 1.0))
        }
        "tan" => {
            if x == 0.0 {
                return e(0.0);
            }
            let s = sin_enc(x, p);
            let c = cos_enc(x, p);
            inn(div_e(&s, &c, p).unwrap_or_else(entire))
        }
        "asin" | "acos" => {
            if !(-1.0..=1.0).contains(&x) {
                return Val::Out;
            }
            if f == "asin" && x == 0.0 {
                return e(0.0);
            }
            if f == "acos" && x == 1.0 {
                return e(0.0);
            }
            if f == "asin" {
                inn(incr(lib_asin, &Enc::exact(x), p))
            } else {
                inn(decr(lib_acos, &Enc::exact(x), p))
            }
        }
        "atan" => {
            if x == 0.0 {
                return e(0.0);
            }
            inn(incr(lib_atan, &Enc::exact(x), p))
        }
        "sinh" | "cosh" | "tanh" => {
            if x == 0.0 {
                return e(if f == "cosh" { 1.0 } else { 0.0 });
            }
            if x.abs() > EXP_CUT {
                let neg = x < 0.0;
                return inn(match f {
                    "sinh" | "cosh" => {
                        let en = Enc {
                            lo: two_pow(1100),
                            hi: INF_POS,
                        };
                        if neg && f == "sinh" {
                            en.neg()
                        } else {
                            en
                        }
                    }
                    _ => {
                        let en = Enc {
                            lo: big(1.0).sub(&two_pow(-1000), 1200, RM::Down),
                            hi: big(1.0),
                        };
                        if neg {
                            en.neg()
                        } else {
                            en
                        }
                    }
                });
            }
            inn(match f {
                "sinh" => incr(lib_sinh, &Enc::exact(x), p),
                "tanh" => {
                    // |tanh x| < 1: clip the widened library bound (tanh(20) is 1 - 8.5e-18,
                    // tanh(7000) is 1 - 10^-6080, no working precision separates it from 1).
                    let mut en = incr(lib_tanh, &Enc::exact(x), p);
                    let one = big(1.0);
                    if x > 0.0 && le(&one, &en.hi) {
                        en.hi = one;
                    } else if x < 0.0 && le(&en.lo, &one.neg()) {
                        en.lo = one.neg();
                    }
                    en
                }
                _ => {
                    // cosh is decreasing on x < 0: use cosh(|x|).
                    let a = Enc::exact(x.abs());
                    let en = with_cc(|cc| Enc {
                        lo: lo_of(a.lo.cosh(p, RM::Down, cc), p),
                        hi: hi_of(a.hi.cosh(p, RM::Up, cc), p),
                    });
                    clip(en, 1.0, f64::INFINITY)
                }
            })
        }
        "asinh" => {
            if x == 0.0 {
                return e(0.0);
            }
            inn(incr(lib_asinh, &Enc::exact(x), p))
        }
        "acosh" => {
            if x < 1.0 {
                return Val::Out;
            }
            if x == 1.0 {
                return e(0.0);
            }
            inn(incr(lib_acosh, &Enc::exact(x), p))
        }
        "atanh" => {
            if x <= -1.0 || x >= 1.0 {
                return Val::Out;
            }
            if x == 0.0 {
                return e(0.0);
            }
            inn(incr(lib_atanh, &Enc::exact(x), p))
        }
        "cbrt" => rootn(x, 3, p),
        "erf" | "erfc" => inn(erf_family(f == "erfc", x, p)),
        "sec" | "csc" | "cot" | "sech" | "csch" | "coth" => reciprocal_of(f, x, p),
        "acot" | "acoth" | "asech" | "acsch" => of_reciprocal(f, x, p),
        "rootn2" => rootn(x, 2, p),
        "rootn3" => rootn(x, 3, p),
        "rootn4" => rootn(x, 4, p),
        "rootn5" => rootn(x, 5, p),
        "sinpi" | "cospi" => {
            let (odd, r) = reduce_int(x);
            let sgn = |en: Enc| if odd == 1 { en.neg() } else { en };
            if f == "sinpi" {
                if r == 0.0 {
                    return e(0.0);
                }
                if r.abs() == 0.5 {
                    return inn(sgn(Enc::exact(r * 2.0)));
                }
                let t = mul_e(&pi_enc(p + 64), &Enc::exact(r), p + 64);
                inn(sgn(clip(sin_small(&t, p), -1.0, 1.0)))
            } else {
                if r.abs() == 0.5 {
                    return e(0.0);
                }
                if r == 0.0 {
                    return inn(sgn(Enc::exact(1.0)));
                }
                let t = mul_e(&pi_enc(p + 64), &Enc::exact(r.abs()), p + 64);
                inn(sgn(clip(cos_small(&t, p), -1.0, 1.0)))
            }
        }
        // Exact operations on floats (no rounding happens in any of them).
        "floor" => e(x.floor()),
        "ceil" => e(x.ceil()),
        "trunc" => e(x.trunc()),
        "round" => e(x.round()), // ties away from zero
        "rint" => e(x.round_ties_even()),
        "sign" => e(if x > 0.0 {
            1.0
        } else if x < 0.0 {
            -1.0
        } else {
            0.0
        }),
        "atan2" => {
            let (y, x) = (args[0], args[1]);
            if y == 0.0 && x == 0.0 {
                return Val::Out;
            }
            if y == 0.0 {
                return if x > 0.0 { e(0.0) } else { inn(pi_enc(p)) };
            }
            if x == 0.0 {
                let mut h = pi_enc(p);
                h.lo.set_exponent(h.lo.exponent().unwrap() - 1);
                h.hi.set_exponent(h.hi.exponent().unwrap() - 1);
                return inn(if y > 0.0 { h } else { h.neg() });
            }
            let q = div_e(&Enc::exact(y), &Enc::exact(x), p + 64).unwrap();
            let a = incr(lib_atan, &q, p + 64);
            if x > 0.0 {
                return inn(a);
            }
            let pi = pi_enc(p + 64);
            inn(if y > 0.0 {
                add_e(&a, &pi, p + 64)
            } else {
                add_e(&a, &pi.neg(), p + 64)
            })
        }
        "hypot" => {
            let (a, b) = (big(args[0]), big(args[1]));
            if args[0] == 0.0 && args[1] == 0.0 {
                return e(0.0);
            }
            let pp = p + 64;
            let s = Enc {
                lo: a
                    .mul(&a, pp, RM::Down)
                    .add(&b.mul(&b, pp, RM::Down), pp, RM::Down),
                hi: a
                    .mul(&a, pp, RM::Up)
                    .add(&b.mul(&b, pp, RM::Up), pp, RM::Up),
            };
            inn(incr(lib_sqrt, &s, p))
        }
        "pow" => {
            let (x, y) = (args[0], args[1]);
            if x < 0.0 || (x == 0.0 && y <= 0.0) {
                return Val::Out;
            }
            if x == 0.0 {
                return e(0.0);
            }
            if x == 1.0 || y == 0.0 {
                return e(1.0);
            }
            let l = ln_e(&Enc::exact(x), p + 128);
            let t = mul_e(&l, &Enc::exact(y), p + 128);
            inn(exp_e(&t, p))
        }
        _ => panic!("oracle: unknown function {f}"),
    }
}

/// sec, csc, cot, sech, csch, coth as the reciprocal of the enclosure of cos, sin, tan, cosh,
/// sinh, tanh (cot as cos / sin, which keeps it finite near pi/2). Undefined where the inner
/// function is exactly 0 (only at x = 0 for float arguments).
fn reciprocal_of(f: &str, x: f64, p: usize) -> Val {
    if x.is_infinite() && matches!(f, "sec" | "csc" | "cot") {
        return Val::Out;
    }
    let inner = |g: &str| match point(g, &[x], p) {
        Val::In(e) => Some(e),
        Val::Out => None,
    };
    let (num, den) = match f {
        "cot" => (inner("cos"), inner("sin")),
        "sec" => (Some(Enc::exact(1.0)), inner("cos")),
        "csc" => (Some(Enc::exact(1.0)), inner("sin")),
        "sech" => (Some(Enc::exact(1.0)), inner("cosh")),
        "csch" => (Some(Enc::exact(1.0)), inner("sinh")),
        _ => (Some(Enc::exact(1.0)), inner("tanh")),
    };
    let (Some(num), Some(den)) = (num, den) else {
        return Val::Out;
    };
    if den.lo.is_zero() && den.hi.is_zero() {
        return Val::Out;
    }
    Val::In(div_e(&num, &den, p).unwrap_or_else(entire))
}

/// acot, acoth, asech, acsch as atan, atanh, acosh, asinh of an enclosure of 1/x, with
/// acot(0) = pi/2 and the limits 0 at infinite x.
fn of_reciprocal(f: &str, x: f64, p: usize) -> Val {
    let defined = match f {
        "acot" => true,
        "acoth" => x.abs() > 1.0,
        "asech" => x > 0.0 && x <= 1.0,
        _ => x != 0.0,
    };
    if !defined {
        return Val::Out;
    }
    if f == "acot" && x == 0.0 {
        let pi = pi_enc(p);
        return Val::In(mul_e(&pi, &Enc::exact(0.5), p));
    }
    if x.is_infinite() || (f == "asech" && x == 1.0) {
        return Val::In(Enc::exact(0.0));
    }
    let r = div_e(&Enc::exact(1.0), &Enc::exact(x), p + 64).expect("x != 0");
    let g: LibFn = match f {
        "acot" => lib_atan,
        "acoth" => lib_atanh,
        "asech" => lib_acosh,
        _ => lib_asinh,
    };
    Val::In(incr(g, &r, p))
}

/// Beyond this |x|, erf and erfc are decided by the classical bound 0 < erfc(x) < e^(-x^2) /
/// (x sqrt(pi)) for x > 0: at x = 28 that is below 2^-1100, far under every f64 and f32.
pub const ERF_CUT: f64 = 28.0;

/// An enclosure of 2/sqrt(pi) with p bits.
pub fn two_over_sqrt_pi(p: usize) -> Enc {
    let pi = pi_enc(p + 64);
    let s = with_cc(|cc| Enc {
        lo: lo_of(lib_sqrt(&pi.lo, p + 64, RM::Down, cc), p + 64),
        hi: hi_of(lib_sqrt(&pi.hi, p + 64, RM::Up, cc), p + 64),
    });
    div_e(&Enc::exact(2.0), &s, p).expect("sqrt(pi) > 0")
}

/// Enclosure of S(x) = sum_{n>=0} 2^n x^(2n+1) / (1*3*...*(2n+1)) for x >= 0, the series of
/// erf(x) = 2/sqrt(pi) e^(-x^2) S(x) (Abramowitz & Stegun 7.1.6). Every term is positive, so
/// there is no cancellation; t_(n+1) = t_n * 2x^2 / (2n+3), and once that ratio is at most 1/2
/// (and it only falls afterwards) the tail after t_N is at most 2 t_(N+1). Terms are carried as
/// enclosures with directed rounding; the loop stops when that tail bound is below 2^-(p+8)
/// of the partial sum.
fn erf_series(x: f64, p: usize) -> Enc {
    let x = bf(x);
    let x2 = x.mul(&x, p, RM::Up); // exact: 106 bits
    let two_x2 = x2.mul(&bf(2.0), p, RM::Up); // exact
    let mut t = Enc::point(x.clone());
    let mut sum = t.clone();
    let mut n: u64 = 0;
    loop {
        let den = bf((2 * n + 3) as f64);
        t = Enc {
            lo: t.lo.mul(&two_x2, p, RM::Down).div(&den, p, RM::Down),
            hi: t.hi.mul(&two_x2, p, RM::Up).div(&den, p, RM::Up),
        };
        n += 1;
        // ratio 2x^2 / (2n+3) <= 1/2 for every later term: 4x^2 <= 2n+3.
        let ratio_small = le(&two_x2.mul(&bf(2.0), p, RM::Up), &den);
        if ratio_small {
            let mut limit = sum.lo.clone();
            let e = limit.exponent().unwrap();
            limit.set_exponent(e - (p as i32 + 8));
            let tail = t.hi.mul(&bf(2.0), p, RM::Up);
            if le(&tail, &limit) {
                // The tail (t_n onwards) is at most 2 t_n: add [0, 2 t_n] on top of [t_n.lo..].
                return Enc {
                    lo: sum.lo.add(&t.lo, p, RM::Down),
                    hi: sum.hi.add(&tail, p, RM::Up),
                };
            }
        }
        sum = add_e(&sum, &t, p);
    }
}

/// erf(x) (or erfc(x) when `complement`) as an enclosure. erf is odd and erfc(-x) = 2 - erfc(x),
/// so the work is for a = |x| > 0: erf(a) = 2/sqrt(pi) e^(-a^2) S(a). erfc(a) = 1 - erf(a) is
/// computed with p + 1.45 a^2 + 64 bits, since erfc(a) < e^(-a^2) loses about a^2 / ln 2 bits to
/// the cancellation; erf itself needs no extra bits (no subtraction).
fn erf_family(complement: bool, x: f64, p: usize) -> Enc {
    if x == 0.0 {
        return Enc::exact(if complement { 1.0 } else { 0.0 });
    }
    let a = x.abs();
    let neg = x < 0.0;
    let one = Enc::exact(1.0);
    let q = if complement && !neg {
        p + (1.45 * a.min(ERF_CUT) * a.min(ERF_CUT)) as usize + 64
    } else {
        p + 64
    };
    let erf_pos = if a >= ERF_CUT {
        // 1 - erfc(a) with 0 < erfc(a) < 2^-1100.
        Enc {
            lo: bf(1.0).sub(&two_pow(-1100), 1200, RM::Down),
            hi: bf(1.0),
        }
    } else {
        let x2 = bf(a).mul(&bf(a), q, RM::Up); // exact
        let e = exp_e(&Enc::point(x2.neg()), q);
        let erf = mul_e(&mul_e(&two_over_sqrt_pi(q), &e, q), &erf_series(a, q), q);
        clip(erf, 0.0, 1.0)
    };
    let erfc_pos = || {
        if a >= ERF_CUT {
            Enc {
                lo: BigFloat::new(64),
                hi: two_pow(-1100),
            }
        } else {
            clip(add_e(&one, &erf_pos.neg(), q), 0.0, 1.0)
        }
    };
    match (complement, neg) {
        (false, false) => erf_pos,
        (false, true) => erf_pos.neg(),
        (true, false) => erfc_pos(),
        // erfc(-a) = 1 + erf(a)
        (true, true) => add_e(&one, &erf_pos, q),
    }
}

fn rootn(x: f64, n: u32, p: usize) -> Val {
    if n.is_multiple_of(2) && x < 0.0 {
        return Val::Out;
    }
    if x == 0.0 {
        return Val::In(Enc::exact(0.0));
    }
    let l = ln_e(&Enc::exact(x.abs()), p + 64);
    let nn = BigFloat::from_u64(n as u64, 64);
    let t = Enc {
        lo: l.lo.div(&nn, p + 64, RM::Down),
        hi: l.hi.div(&nn, p + 64, RM::Up),
    };
    let r = exp_e(&t, p);
    Val::In(if x < 0.0 { r.neg() } else { r })
}

fn qpow(q: &Q, n: u32) -> Q {
    num_traits::pow(q.clone(), n as usize)
}

/// Whether f(args) is exactly the float b (only for the algebraic functions; the exact cases of
/// the others are returned as points by `point`).
pub fn is_exact(f: &str, args: &[f64], b: f64) -> bool {
    if !b.is_finite() {
        return false;
    }
    let qb = q_of(b);
    let x = args[0];
    match f {
        "cbrt" | "rootn3" => qpow(&qb, 3) == q_of(x),
        "rootn2" => b >= 0.0 && qpow(&qb, 2) == q_of(x),
        "rootn4" => b >= 0.0 && qpow(&qb, 4) == q_of(x),
        "rootn5" => qpow(&qb, 5) == q_of(x),
        "hypot" => {
            let (a, c) = (q_of(args[0]), q_of(args[1]));
            b >= 0.0 && qpow(&qb, 2) == &a * &a + &c * &c
        }
        "pow" => pow_exact(args[0], args[1], b),
        _ => false,
    }
}

/// x^y == b exactly, for x > 0, y != 0 (the other cases are points in `point`).
fn pow_exact(x: f64, y: f64, b: f64) -> bool {
    if x.is_nan() || x <= 0.0 || b <= 0.0 {
        return false;
    }
    // y = num / 2^k
    let qy = q_of(y);
    let den = qy.denom().clone();
    let num = qy.numer().clone();
    let k = den.bits() - 1; // den is a power of two
    let qx = q_of(x);
    // x a power of two: x = 2^ex, x^y = 2^(ex*y)
    let xb = x.to_bits();
    let pow2 = |v: f64| -> Option<i64> {
        let q = q_of(v);
        let (n, d) = (q.numer().clone(), q.denom().clone());
        if n.is_one() && (&d & (&d - BigInt::one())).is_zero() {
            Some(-((d.bits() - 1) as i64))
        } else if d.is_one() && (&n & (&n - BigInt::one())).is_zero() {
            Some((n.bits() - 1) as i64)
        } else {
            None
        }
    };
    let _ = xb;
    if let Some(ex) = pow2(x) {
        // ex * y must be an integer e, and b = 2^e
        let prod = Q::from_integer(BigInt::from(ex)) * &qy;
        if !prod.is_integer() {
            return false;
        }
        return match pow2(b) {
            Some(eb) => prod.to_integer() == BigInt::from(eb),
            None => false,
        };
    }
    // x has an odd part > 1: exactness needs num > 0, 2^k <= 32, num < 1100 (see module doc).
    if num.is_negative() || k > 5 || num > BigInt::from(1100) {
        return false;
    }
    let n: u32 = num.try_into().unwrap();
    qpow(&q_of(b), 1 << k) == qpow(&qx, n)
}
