//! Exact oracle arithmetic shared by the containment and tightest tests.
//!
//! Everything here is independent of ivjit: floats are turned into the exact rationals they denote
//! (from their bits), arithmetic is exact (`BigRational`), square roots are either exact (perfect
//! squares) or enclosed by dyadic rationals, and rationals are rounded back to f64 / f32 with our
//! own directed rounding (checked by exact comparisons).
#![allow(dead_code)]

use num_bigint::{BigInt, Sign};
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};
use std::cmp::Ordering;

pub type Q = BigRational;

/// A floating-point format the evaluator works in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fmt {
    F64,
    F32,
}

impl Fmt {
    /// Significand bits, including the implicit one.
    pub fn precision(self) -> i64 {
        match self {
            Fmt::F64 => 53,
            Fmt::F32 => 24,
        }
    }
    /// Exponent of the smallest normal number.
    pub fn emin(self) -> i64 {
        match self {
            Fmt::F64 => -1022,
            Fmt::F32 => -126,
        }
    }
    /// Exponent of the largest finite number.
    pub fn emax(self) -> i64 {
        match self {
            Fmt::F64 => 1023,
            Fmt::F32 => 127,
        }
    }
    /// The largest finite value, as f64.
    pub fn max(self) -> f64 {
        match self {
            Fmt::F64 => f64::MAX,
            Fmt::F32 => f32::MAX as f64,
        }
    }
    /// The smallest positive subnormal, as f64.
    pub fn min_positive_subnormal(self) -> f64 {
        match self {
            Fmt::F64 => f64::from_bits(1),
            Fmt::F32 => f32::from_bits(1) as f64,
        }
    }
    /// Whether `x` (an f64) is a value of this format.
    pub fn holds(self, x: f64) -> bool {
        match self {
            Fmt::F64 => true,
            Fmt::F32 => x.is_nan() || (x as f32) as f64 == x,
        }
    }
    pub fn next_up(self, x: f64) -> f64 {
        match self {
            Fmt::F64 => next_up_f64(x),
            Fmt::F32 => next_up_f32(x as f32) as f64,
        }
    }
    pub fn next_down(self, x: f64) -> f64 {
        -self.next_up(-x)
    }
}

pub fn next_up_f64(x: f64) -> f64 {
    x.next_up()
}

pub fn next_up_f32(x: f32) -> f32 {
    x.next_up()
}

pub fn pow2(k: i64) -> Q {
    if k >= 0 {
        Q::from_integer(BigInt::one() << (k as usize))
    } else {
        Q::new_raw(BigInt::one(), BigInt::one() << ((-k) as usize))
    }
}

/// The exact rational value of a finite f64 (both zeros give 0).
pub fn q_of(x: f64) -> Q {
    assert!(x.is_finite(), "q_of({x}) needs a finite value");
    let bits = x.to_bits();
    let neg = bits >> 63 == 1;
    let biased = ((bits >> 52) & 0x7ff) as i64;
    let frac = bits & ((1u64 << 52) - 1);
    let (mut m, mut e) = if biased == 0 {
        (frac, -1074i64)
    } else {
        (frac | (1u64 << 52), biased - 1075)
    };
    if m == 0 {
        return Q::zero();
    }
    let tz = m.trailing_zeros() as i64;
    m >>= tz;
    e += tz;
    let mut n = BigInt::from(m);
    if neg {
        n = -n;
    }
    if e >= 0 {
        Q::from_integer(n << (e as usize))
    } else {
        // m is odd, so the fraction is already in lowest terms.
        Q::new_raw(n, BigInt::one() << ((-e) as usize))
    }
}

/// floor(log2(q)) for q > 0.
fn ilog2(q: &Q) -> i64 {
    let n = q.numer();
    let d = q.denom();
    let e0 = n.bits() as i64 - d.bits() as i64;
    // 2^(e0-1) < q < 2^(e0+1): decide whether q >= 2^e0.
    let ge = if e0 >= 0 {
        n >= &(d << (e0 as usize))
    } else {
        &(n << ((-e0) as usize)) >= d
    };
    if ge {
        e0
    } else {
        e0 - 1
    }
}

/// m * 2^k as f64, exact (the caller guarantees representability).
fn make_f64(m: u64, k: i64) -> f64 {
    assert!(m < (1u64 << 53));
    let p = if k >= -1022 {
        assert!(k <= 1023);
        f64::from_bits(((k + 1023) as u64) << 52)
    } else {
        assert!(k >= -1074);
        f64::from_bits(1u64 << (k + 1074))
    };
    m as f64 * p
}

/// For q > 0: (largest value of the format <= q, whether it is exact), ignoring overflow
/// (returns None when q >= 2^(emax+1)).
fn round_down_pos(q: &Q, fmt: Fmt) -> (Option<f64>, bool) {
    let e = ilog2(q);
    if e > fmt.emax() {
        return (None, false);
    }
    let e = e.max(fmt.emin());
    let s = fmt.precision() - 1 - e; // m = floor(q * 2^s)
    let (num, den) = if s >= 0 {
        (q.numer() << (s as usize), q.denom().clone())
    } else {
        (q.numer().clone(), q.denom() << ((-s) as usize))
    };
    let m = &num / &den;
    let exact = (&m * &den) == num;
    let m = m.to_u64().unwrap();
    (Some(make_f64(m, -s)), exact)
}

/// The largest value of the format that is <= q (may be -inf; a q above MAX gives MAX).
pub fn round_down(q: &Q, fmt: Fmt) -> f64 {
    let r = match q.numer().sign() {
        Sign::NoSign => 0.0,
        Sign::Plus => match round_down_pos(q, fmt) {
            (None, _) => fmt.max(),
            (Some(x), _) => x,
        },
        Sign::Minus => -round_up(&-q, fmt),
    };
    check_round(q, r, fmt, true);
    r
}

/// The smallest value of the format that is >= q (may be +inf; a q below -MAX gives -MAX).
pub fn round_up(q: &Q, fmt: Fmt) -> f64 {
    let r = match q.numer().sign() {
        Sign::NoSign => 0.0,
        Sign::Plus => match round_down_pos(q, fmt) {
            (None, _) => f64::INFINITY,
            (Some(x), true) => x,
            (Some(x), false) => fmt.next_up(x),
        },
        Sign::Minus => -round_down(&-q, fmt),
    };
    check_round(q, r, fmt, false);
    r
}

/// Verifies a directed rounding by exact comparisons: r is a value of the format on the right
/// side of q, and its neighbour towards q is on the other side.
fn check_round(q: &Q, r: f64, fmt: Fmt, down: bool) {
    assert!(
        fmt.holds(r),
        "rounding result {r:e} is not a value of {fmt:?}"
    );
    let (r, q) = if down { (r, q.clone()) } else { (-r, -q) };
    // Now r must be the largest value <= q.
    if r.is_finite() {
        assert!(q_of(r) <= q, "round_down({q}) = {r:e} is above q");
    } else {
        assert!(r == f64::NEG_INFINITY);
    }
    let up = fmt.next_up(r);
    if up.is_finite() {
        assert!(q_of(up) > q, "round_down({q}) = {r:e} is not the largest");
    }
}

/// Directed rounding of an extended-real bound.
pub fn round_x(x: &XR, fmt: Fmt, down: bool) -> f64 {
    match x {
        XR::NegInf => f64::NEG_INFINITY,
        XR::PosInf => f64::INFINITY,
        XR::Fin(q) => {
            if down {
                round_down(q, fmt)
            } else {
                round_up(q, fmt)
            }
        }
    }
}

/// An extended real: a rational or an infinity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum XR {
    NegInf,
    Fin(Q),
    PosInf,
}

impl XR {
    pub fn of(x: f64) -> XR {
        if x == f64::INFINITY {
            XR::PosInf
        } else if x == f64::NEG_INFINITY {
            XR::NegInf
        } else {
            XR::Fin(q_of(x))
        }
    }
    pub fn zero() -> XR {
        XR::Fin(Q::zero())
    }
    pub fn int(n: i64) -> XR {
        XR::Fin(Q::from_integer(BigInt::from(n)))
    }
    /// -1, 0 or 1.
    pub fn signum(&self) -> i32 {
        match self {
            XR::NegInf => -1,
            XR::PosInf => 1,
            XR::Fin(q) => match q.numer().sign() {
                Sign::Minus => -1,
                Sign::NoSign => 0,
                Sign::Plus => 1,
            },
        }
    }
    pub fn is_zero(&self) -> bool {
        self.signum() == 0
    }
    pub fn is_finite(&self) -> bool {
        matches!(self, XR::Fin(_))
    }
    pub fn neg(&self) -> XR {
        match self {
            XR::NegInf => XR::PosInf,
            XR::PosInf => XR::NegInf,
            XR::Fin(q) => XR::Fin(-q),
        }
    }
    /// Sum; panics on inf - inf (never needed by correct interval formulas).
    pub fn add(&self, o: &XR) -> XR {
        match (self, o) {
            (XR::Fin(a), XR::Fin(b)) => XR::Fin(a + b),
            (XR::PosInf, XR::NegInf) | (XR::NegInf, XR::PosInf) => panic!("inf - inf"),
            (XR::Fin(_), x) | (x, XR::Fin(_)) => x.clone(),
            (x, _) => x.clone(),
        }
    }
    /// Product with the convention 0 * inf = 0.
    pub fn mul(&self, o: &XR) -> XR {
        match (self, o) {
            (XR::Fin(a), XR::Fin(b)) => XR::Fin(a * b),
            _ => {
                let s = self.signum() * o.signum();
                match s {
                    0 => XR::zero(),
                    1 => XR::PosInf,
                    _ => XR::NegInf,
                }
            }
        }
    }
    /// Quotient by a nonzero divisor; finite / inf = 0; inf / inf panics.
    pub fn div(&self, o: &XR) -> XR {
        assert!(!o.is_zero(), "division by zero");
        match (self, o) {
            (XR::Fin(a), XR::Fin(b)) => XR::Fin(a / b),
            (XR::Fin(_), _) => XR::zero(),
            (_, XR::Fin(_)) => {
                if self.signum() * o.signum() > 0 {
                    XR::PosInf
                } else {
                    XR::NegInf
                }
            }
            _ => panic!("inf / inf"),
        }
    }
}

impl PartialOrd for XR {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for XR {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (XR::Fin(a), XR::Fin(b)) => a.cmp(b),
            (XR::NegInf, XR::NegInf) | (XR::PosInf, XR::PosInf) => Ordering::Equal,
            (XR::NegInf, _) | (_, XR::PosInf) => Ordering::Less,
            (XR::PosInf, _) | (_, XR::NegInf) => Ordering::Greater,
        }
    }
}

/// Whether a nonnegative integer is a perfect square; returns its root if so.
fn exact_isqrt(n: &BigInt) -> Option<BigInt> {
    let r = n.sqrt();
    if &(&r * &r) == n {
        Some(r)
    } else {
        None
    }
}

/// The exact square root of q >= 0 when q is the square of a rational.
pub fn sqrt_exact(q: &Q) -> Option<Q> {
    assert!(!q.is_negative());
    let n = exact_isqrt(q.numer())?;
    let d = exact_isqrt(q.denom())?;
    Some(Q::new_raw(n, d))
}

/// An enclosure [l, u] of sqrt(q) for q >= 0: exact (l == u) when q is a rational square,
/// otherwise dyadic bounds with u - l <= sqrt(q) * 2^-prec roughly.
pub fn sqrt_enclosure(q: &Q, prec: i64) -> (Q, Q) {
    if q.is_zero() {
        return (Q::zero(), Q::zero());
    }
    if let Some(r) = sqrt_exact(q) {
        return (r.clone(), r);
    }
    let e = ilog2(q);
    let k = (prec - e.div_euclid(2) + 2).max(0);
    // r = floor(sqrt(q * 4^k)) = floor(sqrt(floor(n * 4^k / d)))
    let scaled = (q.numer() << ((2 * k) as usize)) / q.denom();
    let r = scaled.sqrt();
    let l = Q::new(r.clone(), BigInt::one() << (k as usize));
    let u = Q::new(r + 1, BigInt::one() << (k as usize));
    debug_assert!(&(&l * &l) <= q && q < &(&u * &u));
    (l, u)
}

/// Tightest directed roundings of sqrt(x) for a float x >= 0 of the format (x may be +inf).
pub fn sqrt_round(x: f64, fmt: Fmt, down: bool) -> f64 {
    assert!(x >= 0.0);
    if x == f64::INFINITY {
        return x;
    }
    let q = q_of(x);
    // Start from an approximation and step with exact comparisons.
    let mut f = match fmt {
        Fmt::F64 => x.sqrt(),
        Fmt::F32 => (x as f32).sqrt() as f64,
    };
    let sq = |f: f64| {
        let v = q_of(f);
        &v * &v
    };
    // Largest f with f^2 <= q.
    while sq(f) > q {
        f = fmt.next_down(f);
    }
    loop {
        let g = fmt.next_up(f);
        if sq(g) <= q {
            f = g;
        } else {
            break;
        }
    }
    if down || sq(f) == q {
        f
    } else {
        fmt.next_up(f)
    }
}

/// Compares a float (possibly infinite) with a rational.
pub fn cmp_f_q(x: f64, q: &Q) -> Ordering {
    if x == f64::INFINITY {
        Ordering::Greater
    } else if x == f64::NEG_INFINITY {
        Ordering::Less
    } else {
        q_of(x).cmp(q)
    }
}

/// Hex-float text for failure messages (ivjit's own `%a` formatter).
pub fn hex(x: f64) -> String {
    ivjit::internals::syntax::number::hexf64(x)
}

/// An ivjit interval in hex-float.
pub fn hex_iv(iv: &ivjit::Interval) -> String {
    if iv.is_empty() {
        "[empty]".into()
    } else {
        format!("[{}, {}]", hex(iv.lo), hex(iv.hi))
    }
}

/// A short decimal approximation of a rational, for messages.
pub fn approx(q: &Q) -> String {
    let f = q.to_f64().unwrap_or(f64::NAN);
    if f.is_finite() && (f != 0.0 || q.is_zero()) {
        format!("{f:e}")
    } else {
        format!("~2^{}", if q.is_zero() { 0 } else { ilog2(&q.abs()) })
    }
}
