//! Correctly rounded reductions of f64 vectors (IEEE 1788 §12.12.12, after IEEE 754 §9.4):
//! [`sum`], [`sum_abs`], [`sum_sqr`] and [`dot`], each the exact real result rounded once in
//! the direction asked for. Every finite term is accumulated exactly as an integer multiple of
//! 2^-2148 (the smallest power of two a product of two doubles can hold), so no term is lost
//! however the terms cancel; the one rounding happens at the end.
//!
//! Special values follow IEEE 754: NaN anywhere gives NaN, as do infinities of both signs in a
//! sum and `0 * inf` in a dot product; otherwise an infinite term gives that infinity
//! (`sum_abs` and `sum_sqr` give +inf). An exact zero is +0, or -0 where every term is -0 or
//! the rounding is downward (as IEEE 754's addition signs its zeros).
//!
//! ```
//! use ivjit::{reduction, Round};
//! // 0.1 + 0.2 - 0.3 as doubles is 2^-54 exactly; chained additions give 5.55e-17 too,
//! // but 1e308 + 1e308 - 1e308 overflows in a chain and not here.
//! assert_eq!(reduction::sum(&[1e308, 1e308, -1e308], Round::Nearest), 1e308);
//! assert_eq!(reduction::dot(&[1.0, 2.0, 3.0], &[1.0, 2.0, 3.0], Round::Nearest), 14.0);
//! ```

use crate::round::{self, Round};
use num_bigint::{BigInt, BigUint, Sign};
use num_traits::{ToPrimitive, Zero};

/// The exact accumulator's unit: 2^-2148.
const UNIT: i32 = -2148;

/// The exact value of the product `x * y` of finite doubles, in units of 2^-2148.
fn exact_product(x: f64, y: f64) -> BigInt {
    let (nx, mx, ex) = round::decompose(x);
    let (ny, my, ey) = round::decompose(y);
    let m = BigInt::from(u128::from(mx) * u128::from(my)) << ((ex + ey - UNIT) as usize);
    if nx != ny {
        -m
    } else {
        m
    }
}

/// The exact value of a finite double, in units of 2^-2148.
fn exact(x: f64) -> BigInt {
    exact_product(x, 1.0)
}

/// `(-1)^negative * mag * 2^e` (mag != 0) rounded in direction `r` by the crate's one rounding
/// of a significand (`round::round_bits`): the top 128 bits, and a sticky bit for the rest.
fn round_big(negative: bool, mag: &BigUint, e: i32, r: Round) -> f64 {
    let bits = mag.bits();
    if bits <= 128 {
        let m = mag.to_u128().expect("at most 128 bits");
        return round::round_bits(negative, m, e, false, r);
    }
    let shift = bits - 128;
    let m = (mag >> shift).to_u128().expect("128 bits");
    let sticky = mag.trailing_zeros().is_some_and(|z| z < shift);
    round::round_bits(negative, m, e + shift as i32, sticky, r)
}

/// The rational `p / q` (q != 0) rounded to a double in direction `r`, exactly: a quotient of
/// 125 to 127 bits and a sticky bit for its remainder, rounded once.
pub(crate) fn round_rational(p: &BigInt, q: &BigInt, r: Round) -> f64 {
    if p.is_zero() {
        return 0.0;
    }
    let negative = (p.sign() == Sign::Minus) != (q.sign() == Sign::Minus);
    let (p, q) = (p.magnitude(), q.magnitude());
    // p / q * 2^s lies in [2^125, 2^127).
    let s = 126 + q.bits() as i64 - p.bits() as i64;
    let (num, den) = if s >= 0 {
        (p << (s as u64), q.clone())
    } else {
        (p.clone(), q << ((-s) as u64))
    };
    let (t, rem) = (&num / &den, &num % &den);
    let m = t.to_u128().expect("at most 127 bits");
    // Exponents past i32 are past every double: round_bits sees them as far out of range.
    let e = (-s).clamp(i64::from(i32::MIN / 2), i64::from(i32::MAX / 2)) as i32;
    round::round_bits(negative, m, e, !rem.is_zero(), r)
}

/// The exact sum of `terms` (finite, each given as its exact value) rounded in direction `r`;
/// `all_negative_zero`: every term is -0 (the sum of no terms is +0).
fn finish(total: BigInt, all_negative_zero: bool, r: Round) -> f64 {
    if total.is_zero() {
        if all_negative_zero || r == Round::Down {
            -0.0
        } else {
            0.0
        }
    } else {
        round_big(total.sign() == Sign::Minus, total.magnitude(), UNIT, r)
    }
}

/// The infinity or NaN that special terms give, if any: NaN for a NaN or both infinities.
fn special(terms: impl Iterator<Item = f64>) -> Option<f64> {
    let (mut pos, mut neg) = (false, false);
    for t in terms {
        if t.is_nan() {
            return Some(f64::NAN);
        }
        pos |= t == f64::INFINITY;
        neg |= t == f64::NEG_INFINITY;
    }
    match (pos, neg) {
        (true, true) => Some(f64::NAN),
        (true, false) => Some(f64::INFINITY),
        (false, true) => Some(f64::NEG_INFINITY),
        (false, false) => None,
    }
}

/// `x[0] + x[1] + ...`, correctly rounded in direction `r`.
pub fn sum(x: &[f64], r: Round) -> f64 {
    if let Some(s) = special(x.iter().copied()) {
        return s;
    }
    let total = x.iter().map(|&t| exact(t)).sum();
    let all_neg_zero = !x.is_empty() && x.iter().all(|t| *t == 0.0 && t.is_sign_negative());
    finish(total, all_neg_zero, r)
}

/// `|x[0]| + |x[1]| + ...`, correctly rounded in direction `r`.
pub fn sum_abs(x: &[f64], r: Round) -> f64 {
    if let Some(s) = special(x.iter().map(|t| t.abs())) {
        return s;
    }
    finish(x.iter().map(|&t| exact(t.abs())).sum(), false, r)
}

/// `x[0]^2 + x[1]^2 + ...`, correctly rounded in direction `r`.
pub fn sum_sqr(x: &[f64], r: Round) -> f64 {
    // t^2 is infinite exactly where |t| is (a finite square that overflows is exact here).
    if let Some(s) = special(x.iter().map(|t| t.abs())) {
        return s;
    }
    finish(x.iter().map(|&t| exact_product(t, t)).sum(), false, r)
}

/// `x[0] * y[0] + x[1] * y[1] + ...`, correctly rounded in direction `r`; the shorter vector's
/// length counts (IEEE 754 takes vectors of one length).
pub fn dot(x: &[f64], y: &[f64], r: Round) -> f64 {
    // A product is NaN for a NaN factor or an infinity times 0 (as IEEE 754 multiplies),
    // infinite for an infinite factor, and otherwise finite: exact here even where the
    // floating-point product would overflow.
    let kind = |(&a, &b): (&f64, &f64)| {
        if a.is_nan() || b.is_nan() {
            f64::NAN
        } else if a.is_infinite() || b.is_infinite() {
            a * b
        } else {
            0.0
        }
    };
    if let Some(s) = special(x.iter().zip(y).map(kind)) {
        return s;
    }
    let total = x.iter().zip(y).map(|(&a, &b)| exact_product(a, b)).sum();
    let negative_zero = |(a, b): (&f64, &f64)| {
        (*a == 0.0 || *b == 0.0) && (a.is_sign_negative() != b.is_sign_negative())
    };
    let all_neg_zero = x.iter().zip(y).all(negative_zero);
    finish(total, !x.is_empty() && !y.is_empty() && all_neg_zero, r)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rounding of exact values that lie between doubles, against the hardware's correctly
    /// rounded addition of two doubles (whose exact sum is what `sum` accumulates).
    #[test]
    fn two_terms_round_as_the_hardware_adds() {
        let xs = [
            1.0,
            f64::EPSILON / 2.0,
            f64::EPSILON / 4.0,
            3.0 * f64::EPSILON / 4.0,
            1e308,
            f64::MAX,
            f64::from_bits(1),
            f64::MIN_POSITIVE,
            -0.1,
            0.3,
            -1e-300,
        ];
        for &a in &xs {
            for &b in &xs {
                for s in [1.0, -1.0] {
                    let (a, b) = (a, s * b);
                    assert_eq!(
                        sum(&[a, b], Round::Nearest).to_bits(),
                        (a + b).to_bits(),
                        "{a:e} + {b:e}"
                    );
                    let down = crate::round::add_f64(a, b, Round::Down);
                    let up = crate::round::add_f64(a, b, Round::Up);
                    assert_eq!(sum(&[a, b], Round::Down), down, "{a:e} + {b:e} down");
                    assert_eq!(sum(&[a, b], Round::Up), up, "{a:e} + {b:e} up");
                }
            }
        }
    }

    /// A rational rounds to the doubles around it: against the decimal reader's enclosures
    /// (1/10 is 0.1's), exact quotients, signs, and values past the doubles' range.
    #[test]
    fn rationals_round_outward() {
        let q = |p: i64, q: i64, r: Round| round_rational(&BigInt::from(p), &BigInt::from(q), r);
        let tenth = crate::syntax::number::parse_enclosure("0.1").unwrap();
        assert_eq!(
            (q(1, 10, Round::Down), q(1, 10, Round::Up)),
            (tenth.lo, tenth.hi)
        );
        assert_eq!(
            (q(-1, 10, Round::Down), q(1, -10, Round::Up)),
            (-tenth.hi, -tenth.lo)
        );
        assert_eq!((q(-4, 2, Round::Down), q(-4, 2, Round::Up)), (-2.0, -2.0));
        let big = BigInt::from(1) << 1100;
        assert_eq!(
            round_rational(&big, &BigInt::from(1), Round::Down),
            f64::MAX
        );
        assert_eq!(
            round_rational(&big, &BigInt::from(1), Round::Up),
            f64::INFINITY
        );
        assert_eq!(
            round_rational(&BigInt::from(1), &big, Round::Up),
            f64::from_bits(1)
        );
        assert_eq!(round_rational(&BigInt::from(1), &big, Round::Down), 0.0);
    }

    #[test]
    fn cancellation_and_special_values() {
        // Chained: (1e16 + 1) - 1e16 = 0; exactly: 1.
        assert_eq!(sum(&[1e16, 1.0, -1e16], Round::Nearest), 1.0);
        assert_eq!(
            dot(&[f64::MAX, f64::MAX], &[2.0, -2.0], Round::Nearest),
            0.0
        );
        assert!(sum(&[1.0, f64::INFINITY, f64::NEG_INFINITY], Round::Up).is_nan());
        assert_eq!(
            sum_abs(&[1.0, f64::NEG_INFINITY], Round::Down),
            f64::INFINITY
        );
        assert_eq!(sum_sqr(&[1e200, -1e200], Round::Down), f64::MAX);
        assert!(dot(&[0.0], &[f64::INFINITY], Round::Nearest).is_nan());
        assert!(sum(&[-0.0, -0.0], Round::Nearest).is_sign_negative());
        assert!(sum(&[1.0, -1.0], Round::Down).is_sign_negative());
        assert!(sum(&[1.0, -1.0], Round::Up).is_sign_positive());
        assert_eq!(sum(&[f64::MAX, f64::MAX], Round::Down), f64::MAX);
        assert_eq!(sum(&[f64::MAX, f64::MAX], Round::Nearest), f64::INFINITY);
        // The smallest subnormal squared is 2^-2148: below every double, exact in the sum.
        let tiny = f64::from_bits(1);
        assert_eq!(sum_sqr(&[tiny], Round::Up), tiny);
        assert_eq!(sum_sqr(&[tiny], Round::Down), 0.0);
    }
}
