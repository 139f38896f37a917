//! Oracle for integer powers: an enclosure of x^n for a float x and any integer n, independent
//! of ivjit.
//!
//! |x|^|n| is computed by binary powering in astro-float (pinned `=0.9.6`) at 320 bits with every
//! product rounded down for the lower bound and up for the upper bound (basic operations with
//! directed rounding, the same trust as `elem_oracle`); all factors are positive, so the two
//! results enclose the exact power. Each product rounds once at 320 bits, so the enclosure is
//! about 2^-300 wide relative after at most 128 products: every f64/f32 rounding of x^n is
//! decided by it except within that distance of a float (such a case shows up as an enclosure
//! whose two ends round differently and is accepted either way by the tests). Exact powers
//! (fewer than 320 significant bits) come out as points. n < 0 takes the directed reciprocal.
//!
//! Powers far outside every float range are not computed: |x| >= 1 gives a value that is at
//! least each x^(2^j) with 2^j <= |n|, so one of those above 2^1300 proves the power is above
//! it; |x| < 1 likewise below 2^-1300.
#![allow(dead_code)]

use astro_float::{BigFloat, RoundingMode as RM};

use super::elem_oracle::{bf, le, round_down, round_up, two_pow};
use super::oracle::Fmt;

const P: usize = 320;

/// What the oracle knows about |x|^n for finite nonzero x.
#[derive(Debug)]
pub enum Pow {
    /// Above 2^1300 (every float format overflows).
    Huge,
    /// Positive and below 2^-1300 (every float format underflows).
    Tiny,
    /// Enclosed: lo <= |x|^n <= hi.
    Enc(BigFloat, BigFloat),
}

/// An enclosure of |x|^n (x finite and nonzero, n != 0).
pub fn pow_abs(x: f64, n: i64) -> Pow {
    assert!(x.is_finite() && x != 0.0 && n != 0);
    let m = n.unsigned_abs();
    let base = bf(x.abs());
    let one = bf(1.0);
    let ge1 = le(&one, &base);
    let big = two_pow(1300);
    let small = two_pow(-1300);
    let (mut acc_lo, mut acc_hi) = (one.clone(), one.clone());
    let (mut b_lo, mut b_hi) = (base.clone(), base);
    let mut k = m;
    let out = loop {
        if k & 1 == 1 {
            acc_lo = acc_lo.mul(&b_lo, P, RM::Down);
            acc_hi = acc_hi.mul(&b_hi, P, RM::Up);
        }
        k >>= 1;
        // b is x^(2^j) with 2^j <= m: a lower (x >= 1) or upper (x < 1) bound of the power.
        if ge1 && le(&big, &b_lo) {
            break Some(Pow::Huge);
        }
        if !ge1 && le(&b_hi, &small) {
            break Some(Pow::Tiny);
        }
        if k == 0 {
            break None;
        }
        b_lo = b_lo.mul(&b_lo, P, RM::Down);
        b_hi = b_hi.mul(&b_hi, P, RM::Up);
    };
    let p = out.unwrap_or(Pow::Enc(acc_lo, acc_hi));
    if n > 0 {
        return p;
    }
    match p {
        Pow::Huge => Pow::Tiny,
        Pow::Tiny => Pow::Huge,
        Pow::Enc(lo, hi) => {
            let one = bf(1.0);
            Pow::Enc(one.div(&hi, P, RM::Down), one.div(&lo, P, RM::Up))
        }
    }
}

/// A real bound of an interval result: an infinity or an enclosed real value.
#[derive(Debug)]
pub enum Bound {
    NegInf,
    PosInf,
    /// lo <= value <= hi.
    Real(BigFloat, BigFloat),
}

impl Bound {
    fn zero() -> Bound {
        Bound::Real(bf(0.0), bf(0.0))
    }

    fn neg(self) -> Bound {
        match self {
            Bound::NegInf => Bound::PosInf,
            Bound::PosInf => Bound::NegInf,
            Bound::Real(lo, hi) => Bound::Real(hi.neg(), lo.neg()),
        }
    }

    /// The value of pown(x, n) at a point x (finite or infinite, not a pole: x = 0 needs n > 0).
    pub fn pown_at(x: f64, n: i64) -> Bound {
        assert!(n != 0);
        let neg = x < 0.0 && n % 2 != 0;
        let b = if x == 0.0 {
            assert!(n > 0, "pole");
            Bound::zero()
        } else if x.is_infinite() {
            if n > 0 {
                Bound::PosInf
            } else {
                Bound::zero()
            }
        } else {
            match pow_abs(x, n) {
                Pow::Huge => Bound::Real(two_pow(1300), two_pow(1300)), // rounds like any huge value
                Pow::Tiny => Bound::Real(two_pow(-1301), two_pow(-1300)),
                Pow::Enc(lo, hi) => Bound::Real(lo, hi),
            }
        };
        if neg {
            b.neg()
        } else {
            b
        }
    }

    /// The tightest float lower bound of this bound's value in the format, as a range
    /// [a, b] (a == b unless the enclosure straddles a float).
    pub fn round_down(&self, fmt: Fmt) -> (f64, f64) {
        match self {
            Bound::NegInf => (f64::NEG_INFINITY, f64::NEG_INFINITY),
            Bound::PosInf => (f64::INFINITY, f64::INFINITY),
            Bound::Real(lo, hi) => (
                to_fmt(round_down(lo), fmt, false),
                to_fmt(round_down(hi), fmt, false),
            ),
        }
    }

    /// The tightest float upper bound, as a range [a, b].
    pub fn round_up(&self, fmt: Fmt) -> (f64, f64) {
        match self {
            Bound::NegInf => (f64::NEG_INFINITY, f64::NEG_INFINITY),
            Bound::PosInf => (f64::INFINITY, f64::INFINITY),
            Bound::Real(lo, hi) => (
                to_fmt(round_up(lo), fmt, true),
                to_fmt(round_up(hi), fmt, true),
            ),
        }
    }

    /// Whether a float lower bound is below (or at) the value: `v <= lo-end` is certain.
    pub fn is_below(&self, v: f64) -> bool {
        match self {
            Bound::NegInf => v == f64::NEG_INFINITY,
            Bound::PosInf => true,
            Bound::Real(lo, _) => v == f64::NEG_INFINITY || (v.is_finite() && le(&bf(v), lo)),
        }
    }

    /// Whether a float upper bound is above (or at) the value.
    pub fn is_above(&self, v: f64) -> bool {
        match self {
            Bound::PosInf => v == f64::INFINITY,
            Bound::NegInf => true,
            Bound::Real(_, hi) => v == f64::INFINITY || (v.is_finite() && le(hi, &bf(v))),
        }
    }
}

/// Directed rounding of an f64 to the format (f64: itself; f32: the neighbour on that side).
pub fn to_fmt(x: f64, fmt: Fmt, up: bool) -> f64 {
    match fmt {
        Fmt::F64 => x,
        Fmt::F32 => {
            if x.is_nan() || x.is_infinite() {
                return x;
            }
            let f = x as f32; // round to nearest (overflows to inf only beyond MAX + half ulp)
            let mut f = if f.is_infinite() {
                f32::MAX.copysign(f)
            } else {
                f
            };
            if up && (f as f64) < x {
                f = f.next_up();
            } else if !up && (f as f64) > x {
                f = f.next_down();
            }
            f as f64
        }
    }
}

/// The position of a float among the floats of the format (-0 and +0 are the same place), so
/// that the difference of two positions counts ulps.
pub fn ordinal(x: f64, fmt: Fmt) -> i64 {
    // (i64 is wide enough: differences of two ordinals are taken in i128 by the callers.)
    match fmt {
        Fmt::F64 => {
            let b = x.to_bits();
            let m = (b & 0x7fff_ffff_ffff_ffff) as i64;
            if b >> 63 == 1 {
                -m
            } else {
                m
            }
        }
        Fmt::F32 => {
            let b = (x as f32).to_bits();
            let m = (b & 0x7fff_ffff) as i64;
            if b >> 31 == 1 {
                -m
            } else {
                m
            }
        }
    }
}
