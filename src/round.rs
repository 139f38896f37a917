//! Correctly rounded scalar float operations with a chosen rounding direction: the crate's
//! directed-rounding float library, used by the interval type, the lowering (outward constants),
//! the scalar IR's reference interpreter and the CPU evaluator. It depends on nothing else in the
//! crate; [`Precision`] and [`Round`] are its vocabulary (the scalar IR re-exports them).
//!
//! Rust (LLVM) always runs the FPU in round-to-nearest-even, so directed rounding
//! is emulated *exactly*:
//!
//! * the hardware computes the round-to-nearest result `s = RN(x)` of the exact
//!   value `x`;
//! * an error-free transformation (TwoSum, FMA-based TwoProduct, the FMA
//!   remainder of a division or square root) gives the *sign* of `x - s`
//!   exactly;
//! * the directed result is then `s` or its neighbour one ulp away.
//!
//! The error-free transformations are only exact away from the subnormal range
//! and from overflow, so every fast path is guarded by cheap range checks; the
//! rare inputs outside them go to exact slow paths (integer arithmetic on the
//! significands, and a fixed-point big accumulator for sums) or are scaled by
//! exact powers of two.
//!
//! `f32` operations are computed exactly or as `(s, sign of error)` in `f64`,
//! turned into the round-to-odd `f64` value (53 >= 24 + 2 bits, so a second
//! rounding of it to `f32` in any direction is correct), then rounded once to
//! `f32` in the requested direction.
//!
//! Why one file (~730 lines before its tests): each fast path and the exact slow path its guards
//! send the rare inputs to must be read together to check that no input falls between them.
//!
//! Semantics are IEEE 754-2008 (and PTX `.rn/.rm/.rp` without `.ftz`):
//! gradual underflow, overflow to +-inf or +-MAX by direction, signed zeros.

use std::fmt;

/// Floating-point format a program computes in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Precision {
    /// IEEE 754 binary64 (double).
    F64,
    /// IEEE 754 binary32 (single); inputs are rounded outward to f32.
    F32,
}

impl Precision {
    /// `"f64"` or `"f32"`, as the CLI spells it.
    pub fn name(self) -> &'static str {
        match self {
            Precision::F64 => "f64",
            Precision::F32 => "f32",
        }
    }
}

impl fmt::Display for Precision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Rounding direction of one float operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Round {
    /// Toward -infinity (PTX `.rm`).
    Down,
    /// Toward +infinity (PTX `.rp`).
    Up,
    /// To nearest, ties to even (PTX `.rn`).
    Nearest,
}

impl Round {
    /// The suffix the scalar IR text (`ivjit scalar`) uses: `rd`, `ru` or `rn`.
    pub fn suffix(self) -> &'static str {
        match self {
            Round::Down => "rd",
            Round::Up => "ru",
            Round::Nearest => "rn",
        }
    }
}

/// Smallest positive subnormal f64 (the tests' reference points).
#[cfg(test)]
const MIN_SUB: f64 = f64::from_bits(1);
/// 2^-960: above this magnitude, products/remainders of the fast paths are exact
/// (or at least have an exactly known sign): e_a + e_b >= e_min + p - 1 holds.
const TWO_M960: f64 = f64::from_bits(63 << 52);
/// 2^1000: below this, no intermediate of the fast FMA path overflows.
const TWO_P1000: f64 = f64::from_bits(2023 << 52);
/// 2^200 and 2^-100 (exact scale factors for sqrt of tiny numbers).
const TWO_P200: f64 = f64::from_bits(1223 << 52);
const TWO_M100: f64 = f64::from_bits(923 << 52);

// ---------------------------------------------------------------------------
// Bit-level helpers
// ---------------------------------------------------------------------------

/// Next representable f64 toward +inf (NaN and +inf unchanged, -0/+0 -> MIN_SUB): std's
/// `f64::next_up` (stable since Rust 1.86, the crate's MSRV), named here for the call sites.
#[inline]
pub fn next_up(x: f64) -> f64 {
    x.next_up()
}

/// Next representable f64 toward -inf.
#[inline]
pub fn next_down(x: f64) -> f64 {
    x.next_down()
}

/// Next representable f32 toward +inf.
#[inline]
pub fn next_up_f32(x: f32) -> f32 {
    x.next_up()
}

/// Next representable f32 toward -inf.
#[inline]
pub fn next_down_f32(x: f32) -> f32 {
    x.next_down()
}

/// Error of `s = RN(a + b)` (Knuth's TwoSum): `a + b = s + e` exactly unless an
/// intermediate overflows (then `e` is not finite).
#[inline(always)]
pub(crate) fn two_sum_err(a: f64, b: f64, s: f64) -> f64 {
    let bb = s - a;
    let aa = s - bb;
    (a - aa) + (b - bb)
}

/// Given `s = RN(x)` (finite) and `e` with the sign of `x - s`, the result of
/// rounding `x` in direction `r`.
#[inline(always)]
fn adjust(s: f64, e: f64, r: Round) -> f64 {
    match r {
        Round::Up if e > 0.0 => next_up(s),
        Round::Down if e < 0.0 => next_down(s),
        _ => s,
    }
}

/// Given `s = RN(x)` (finite) and `e` with the sign of `x - s`, the
/// round-to-odd value of `x` at 53 bits.
#[inline(always)]
fn round_to_odd(s: f64, e: f64) -> f64 {
    if e != 0.0 && s.to_bits() & 1 == 0 {
        if e > 0.0 {
            next_up(s)
        } else {
            next_down(s)
        }
    } else {
        s
    }
}

/// Result of an exact value whose magnitude exceeds f64::MAX (so that rounding
/// to nearest gives infinity), in direction `r`.
#[inline]
fn overflow(positive: bool, r: Round) -> f64 {
    match (r, positive) {
        (Round::Nearest, true) | (Round::Up, true) => f64::INFINITY,
        (Round::Nearest, false) | (Round::Down, false) => f64::NEG_INFINITY,
        (Round::Down, true) => f64::MAX,
        (Round::Up, false) => -f64::MAX,
    }
}

/// Signed zero for an exact zero sum of operands that are not both zeros of
/// the same sign: -0 when rounding down, +0 otherwise.
#[inline]
fn exact_zero_sum(r: Round) -> f64 {
    if r == Round::Down {
        -0.0
    } else {
        0.0
    }
}

// ---------------------------------------------------------------------------
// f64
// ---------------------------------------------------------------------------

/// `a + b` rounded in direction `r`.
#[inline]
pub fn add_f64(a: f64, b: f64, r: Round) -> f64 {
    let s = a + b;
    if r == Round::Nearest {
        return s;
    }
    if s == 0.0 {
        // Sums never underflow: the exact sum is zero.
        if r == Round::Down {
            // -0, except +0 + +0.
            return if a == 0.0 && b == 0.0 {
                f64::from_bits(a.to_bits() | b.to_bits())
            } else {
                -0.0
            };
        }
        return s; // round-to-nearest zero signs coincide with round-up ones
    }
    let e = two_sum_err(a, b, s);
    if e.is_finite() {
        return adjust(s, e, r);
    }
    if !(a.is_finite() && b.is_finite()) {
        return s; // inf/NaN operands: exact IEEE result
    }
    if s.is_infinite() {
        return overflow(s > 0.0, r);
    }
    // Finite sum but an intermediate of TwoSum overflowed.
    add_slow(a, b, r)
}

/// `a - b` rounded in direction `r`.
#[inline]
pub fn sub_f64(a: f64, b: f64, r: Round) -> f64 {
    add_f64(a, -b, r)
}

/// `a * b` rounded in direction `r`.
#[inline]
pub fn mul_f64(a: f64, b: f64, r: Round) -> f64 {
    let p = a * b;
    if r == Round::Nearest {
        return p;
    }
    let ap = p.abs();
    if (TWO_M960..=f64::MAX).contains(&ap) {
        // TwoProduct: a*b - p has a nonzero magnitude >= 2^-1066 whenever it
        // is nonzero, so its FMA-rounded value has the exact sign.
        let e = a.mul_add(b, -p);
        return adjust(p, e, r);
    }
    if p.is_nan() || !(a.is_finite() && b.is_finite()) || a == 0.0 || b == 0.0 {
        return p; // NaN, exact infinities, exact signed zeros
    }
    if p.is_infinite() {
        return overflow(p > 0.0, r);
    }
    mul_slow(a, b, r)
}

/// `a / b` rounded in direction `r`.
#[inline]
pub fn div_f64(a: f64, b: f64, r: Round) -> f64 {
    let q = a / b;
    if r == Round::Nearest {
        return q;
    }
    let aa = a.abs();
    if (TWO_M960..=f64::MAX).contains(&aa) && q.is_finite() && b.is_finite() {
        // Remainder a - q*b: nonzero magnitude >= |a| 2^-108 > 2^-1075, so the
        // FMA gives its exact sign; x - q has the sign of rem / b.
        let rem = (-q).mul_add(b, a);
        let e = if b < 0.0 { -rem } else { rem };
        return adjust(q, e, r);
    }
    if q.is_nan() || !(a.is_finite() && b.is_finite()) || a == 0.0 || b == 0.0 {
        return q; // NaN, exact infinities and zeros, division by zero
    }
    if q.is_infinite() {
        return overflow(q > 0.0, r);
    }
    div_slow(a, b, r)
}

/// `sqrt(a)` rounded in direction `r`.
#[inline]
pub fn sqrt_f64(a: f64, r: Round) -> f64 {
    let s = a.sqrt();
    if r == Round::Nearest {
        return s;
    }
    if (TWO_M960..=f64::MAX).contains(&a) {
        // sqrt(a) - s has the sign of a - s^2, computed with exact sign.
        let rem = (-s).mul_add(s, a);
        return adjust(s, rem, r);
    }
    if a.is_nan() || a <= 0.0 || a == f64::INFINITY {
        return s; // NaN, negative -> NaN, +-0 -> +-0, +inf
    }
    // 0 < a < 2^-960: scale by an even power of two (exact both ways since
    // a * 2^200 and the result stay normal).
    sqrt_f64(a * TWO_P200, r) * TWO_M100
}

/// `a * b + c` with a single rounding in direction `r`.
#[inline]
pub fn fma_f64(a: f64, b: f64, c: f64, r: Round) -> f64 {
    if r == Round::Nearest {
        return a.mul_add(b, c);
    }
    if !(a.is_finite() && b.is_finite() && c.is_finite()) {
        return a.mul_add(b, c); // infinities and NaN: exact IEEE results
    }
    if a == 0.0 || b == 0.0 {
        return add_f64(a * b, c, r); // exact signed-zero product
    }
    if c == 0.0 {
        return mul_f64(a, b, r); // a*b != 0, so the result is RD/RU(a*b)
    }
    let uh = a * b;
    let au = uh.abs();
    if !((TWO_M960..=TWO_P1000).contains(&au) && c.abs() <= TWO_P1000) {
        return fma_slow(a, b, c, r);
    }
    // Boldo-Melquiond emulation with round-to-odd:
    //   a*b = uh + ul, c + uh = th + tl (exact), v = RO(tl + ul),
    //   then dir(a*b + c) = dir(th + v).
    let ul = a.mul_add(b, -uh);
    let th = c + uh;
    let tl = two_sum_err(c, uh, th);
    let v0 = tl + ul;
    let v = round_to_odd(v0, two_sum_err(tl, ul, v0));
    let s = th + v;
    if s == 0.0 {
        // th + v == 0 only when a*b + c == 0 exactly (nonzero terms).
        return exact_zero_sum(r);
    }
    adjust(s, two_sum_err(th, v, s), r)
}

// ---------------------------------------------------------------------------
// f32
// ---------------------------------------------------------------------------

/// `a + b` rounded once to f32 in direction `r`.
#[inline]
pub fn add_f32(a: f32, b: f32, r: Round) -> f32 {
    if r == Round::Nearest {
        return a + b;
    }
    let (x, y) = (f64::from(a), f64::from(b));
    let s = x + y;
    if s == 0.0 || !s.is_finite() {
        // Exact zero (signed per r), infinity or NaN.
        return add_f64(x, y, r) as f32;
    }
    narrow_f32(round_to_odd(s, two_sum_err(x, y, s)), r)
}

/// `a - b` rounded once to f32 in direction `r`.
#[inline]
pub fn sub_f32(a: f32, b: f32, r: Round) -> f32 {
    add_f32(a, -b, r)
}

/// `a * b` rounded once to f32 in direction `r`.
#[inline]
pub fn mul_f32(a: f32, b: f32, r: Round) -> f32 {
    if r == Round::Nearest {
        return a * b;
    }
    // The f64 product of two f32 is exact (48 bits, exponent in f64 range).
    narrow_f32(f64::from(a) * f64::from(b), r)
}

/// `a / b` rounded once to f32 in direction `r`.
#[inline]
pub fn div_f32(a: f32, b: f32, r: Round) -> f32 {
    if r == Round::Nearest {
        return a / b;
    }
    let (x, y) = (f64::from(a), f64::from(b));
    let q = x / y;
    if q.is_finite() && q != 0.0 && y.is_finite() {
        let rem = (-q).mul_add(y, x); // exact (far from f64 underflow)
        let e = if y < 0.0 { -rem } else { rem };
        return narrow_f32(round_to_odd(q, e), r);
    }
    narrow_f32(q, r) // exact zeros, infinities, NaN
}

/// `sqrt(a)` rounded once to f32 in direction `r`.
#[inline]
pub fn sqrt_f32(a: f32, r: Round) -> f32 {
    if r == Round::Nearest {
        return a.sqrt();
    }
    let x = f64::from(a);
    let s = x.sqrt();
    if x > 0.0 && x.is_finite() {
        let rem = (-s).mul_add(s, x); // sign of sqrt(x) - s
        return narrow_f32(round_to_odd(s, rem), r);
    }
    s as f32 // NaN, +-0, +inf
}

/// `a * b + c` rounded once to f32 in direction `r`.
#[inline]
pub fn fma_f32(a: f32, b: f32, c: f32, r: Round) -> f32 {
    let (x, y, z) = (f64::from(a), f64::from(b), f64::from(c));
    let p = x * y; // exact (or inf/NaN, which are exact too)
    let s = p + z;
    if s == 0.0 || !s.is_finite() {
        return add_f64(p, z, r) as f32; // exact zero / inf / NaN
    }
    // Even for Nearest: RN_f32(RN_f64(x)) may double-round; RO does not.
    narrow_f32(round_to_odd(s, two_sum_err(p, z, s)), r)
}

/// Rounds an f64 to f32 in the given direction (one rounding), used to narrow constants.
#[inline]
pub fn narrow_f32(x: f64, r: Round) -> f32 {
    let y = x as f32; // round to nearest even (gradual underflow, overflow to inf)
    match r {
        Round::Nearest => y,
        Round::Down if f64::from(y) > x => next_down_f32(y),
        Round::Up if f64::from(y) < x => next_up_f32(y),
        _ => y,
    }
}

// ---------------------------------------------------------------------------
// min / max
// ---------------------------------------------------------------------------

/// IEEE 754-2008 minNum: a NaN operand is ignored (both NaN -> NaN); -0 orders below +0.
#[inline]
pub fn min_f64(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        return b;
    }
    if b.is_nan() || a < b {
        return a;
    }
    if b < a {
        return b;
    }
    f64::from_bits(a.to_bits() | b.to_bits()) // equal: -0 wins over +0
}

/// IEEE 754-2008 maxNum: a NaN operand is ignored (both NaN -> NaN); +0 orders above -0.
#[inline]
pub fn max_f64(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        return b;
    }
    if b.is_nan() || a > b {
        return a;
    }
    if b > a {
        return b;
    }
    f64::from_bits(a.to_bits() & b.to_bits()) // equal: +0 wins over -0
}

/// IEEE 754-2008 minNum for f32.
#[inline]
pub fn min_f32(a: f32, b: f32) -> f32 {
    if a.is_nan() {
        return b;
    }
    if b.is_nan() || a < b {
        return a;
    }
    if b < a {
        return b;
    }
    f32::from_bits(a.to_bits() | b.to_bits()) // equal: -0 wins over +0
}

/// IEEE 754-2008 maxNum for f32.
#[inline]
pub fn max_f32(a: f32, b: f32) -> f32 {
    if a.is_nan() {
        return b;
    }
    if b.is_nan() || a > b {
        return a;
    }
    if b > a {
        return b;
    }
    f32::from_bits(a.to_bits() & b.to_bits()) // equal: +0 wins over -0
}

// ---------------------------------------------------------------------------
// Exact slow paths (finite, nonzero operands; rare: subnormal range, overflow)
// ---------------------------------------------------------------------------

/// Finite f64 -> (negative, significand, exponent) with |x| = m * 2^e.
#[inline]
pub(crate) fn decompose(x: f64) -> (bool, u64, i32) {
    let b = x.to_bits();
    let neg = b >> 63 != 0;
    let field = ((b >> 52) & 0x7ff) as i32;
    let frac = b & ((1u64 << 52) - 1);
    if field == 0 {
        (neg, frac, -1074)
    } else {
        (neg, frac | (1u64 << 52), field - 1075)
    }
}

/// Finite nonzero f64 -> (negative, significand in [2^52, 2^53), exponent).
#[inline]
fn decompose_normalized(x: f64) -> (bool, u64, i32) {
    let (neg, m, e) = decompose(x);
    let sh = m.leading_zeros() as i32 - 11;
    (neg, m << sh, e - sh)
}

/// Position of the exact value relative to the truncated significand.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Rest {
    Exact,
    Below,
    Half,
    Above,
}

/// Rounds `(-1)^neg * (m + f) * 2^e` to f64 in direction `r`, where `f = 0`
/// if `!sticky` and `0 < f < 1` otherwise. When `sticky` is set, `m` must
/// have at least 55 significant bits (so `f` lies below the rounding bit).
pub(crate) fn round_bits(neg: bool, m: u128, e: i32, sticky: bool, r: Round) -> f64 {
    if m == 0 {
        debug_assert!(!sticky);
        return if neg { -0.0 } else { 0.0 };
    }
    let bl = 128 - m.leading_zeros() as i32;
    let top = e + bl - 1; // exponent of the leading bit
    let mut q = (top - 52).max(-1074); // exponent of the result's last bit
    let k = q - e; // bits to drop
    let (mut mant, rest) = if k <= 0 {
        debug_assert!(!sticky);
        (m << (-k) as u32, Rest::Exact)
    } else if k > 128 {
        (0u128, Rest::Below) // m < 2^128 <= 2^(k-1): below half an ulp
    } else {
        let (mant, rem) = if k == 128 {
            (0, m)
        } else {
            (m >> k, m & ((1u128 << k) - 1))
        };
        let half = 1u128 << (k - 1);
        let rest = if rem > half || (rem == half && sticky) {
            Rest::Above
        } else if rem == half {
            Rest::Half
        } else if rem == 0 && !sticky {
            Rest::Exact
        } else {
            Rest::Below
        };
        (mant, rest)
    };
    let inexact = rest != Rest::Exact;
    let inc = match r {
        Round::Nearest => rest == Rest::Above || (rest == Rest::Half && mant & 1 == 1),
        Round::Up => inexact && !neg,
        Round::Down => inexact && neg,
    };
    if inc {
        mant += 1;
        if mant == 1u128 << 53 {
            mant >>= 1;
            q += 1;
        }
    }
    if mant >= 1u128 << 52 && q > 971 {
        return overflow(!neg, r);
    }
    let mag = if mant < 1u128 << 52 {
        mant as u64 // subnormal (q == -1074) or zero
    } else {
        (((q + 1075) as u64) << 52) | (mant as u64 & ((1u64 << 52) - 1))
    };
    f64::from_bits(mag | (u64::from(neg) << 63))
}

#[cold]
#[inline(never)]
fn mul_slow(a: f64, b: f64, r: Round) -> f64 {
    let (na, ma, ea) = decompose(a);
    let (nb, mb, eb) = decompose(b);
    round_bits(na != nb, u128::from(ma) * u128::from(mb), ea + eb, false, r)
}

#[cold]
#[inline(never)]
fn div_slow(a: f64, b: f64, r: Round) -> f64 {
    let (na, ma, ea) = decompose_normalized(a);
    let (nb, mb, eb) = decompose_normalized(b);
    let num = u128::from(ma) << 75; // < 2^128
    let den = u128::from(mb);
    let (quot, rem) = (num / den, num % den); // quot in (2^74, 2^76)
    round_bits(na != nb, quot, ea - eb - 75, rem != 0, r)
}

/// Fixed-point accumulator: bit 0 of limb 0 weighs 2^ACC_BASE. Covers every
/// product of two finite f64 (2^-2148 .. 2^2048) and every f64.
const ACC_LIMBS: usize = 68;
const ACC_BASE: i32 = -2176;

type Acc = [u64; ACC_LIMBS];

fn acc_from(m: u128, e: i32) -> Acc {
    let mut acc = [0u64; ACC_LIMBS];
    let off = (e - ACC_BASE) as usize;
    let (li, sh) = (off / 64, (off % 64) as u32);
    let lo = m << sh; // low 128 bits of m * 2^sh
    let hi = if sh == 0 { 0 } else { m >> (128 - sh) };
    acc[li] = lo as u64;
    acc[li + 1] = (lo >> 64) as u64;
    acc[li + 2] = hi as u64;
    acc
}

fn acc_cmp(x: &Acc, y: &Acc) -> core::cmp::Ordering {
    for i in (0..ACC_LIMBS).rev() {
        match x[i].cmp(&y[i]) {
            core::cmp::Ordering::Equal => {}
            o => return o,
        }
    }
    core::cmp::Ordering::Equal
}

fn acc_add(x: &mut Acc, y: &Acc) {
    let mut carry = false;
    for i in 0..ACC_LIMBS {
        let (s1, c1) = x[i].overflowing_add(y[i]);
        let (s2, c2) = s1.overflowing_add(u64::from(carry));
        x[i] = s2;
        carry = c1 || c2;
    }
    debug_assert!(!carry);
}

/// x -= y, requires x >= y.
fn acc_sub(x: &mut Acc, y: &Acc) {
    let mut borrow = false;
    for i in 0..ACC_LIMBS {
        let (d1, b1) = x[i].overflowing_sub(y[i]);
        let (d2, b2) = d1.overflowing_sub(u64::from(borrow));
        x[i] = d2;
        borrow = b1 || b2;
    }
    debug_assert!(!borrow);
}

/// Rounds `(-1)^neg * acc * 2^ACC_BASE` (acc != 0).
fn acc_round(neg: bool, acc: &Acc, r: Round) -> f64 {
    let top_limb = (0..ACC_LIMBS).rev().find(|&i| acc[i] != 0).unwrap_or(0);
    let top_bit = top_limb * 64 + 63 - acc[top_limb].leading_zeros() as usize;
    if top_bit < 128 {
        let m = u128::from(acc[0]) | (u128::from(acc[1]) << 64);
        return round_bits(neg, m, ACC_BASE, false, r);
    }
    // 128-bit window [lo, lo + 128) below the leading bit, plus sticky.
    let lo = top_bit - 127;
    let (li, sh) = (lo / 64, (lo % 64) as u32);
    let w = u128::from(acc[li]) | (u128::from(acc[li + 1]) << 64);
    let w2 = if li + 2 < ACC_LIMBS { acc[li + 2] } else { 0 };
    let m = if sh == 0 {
        w
    } else {
        (w >> sh) | (u128::from(w2) << (128 - sh))
    };
    let sticky =
        acc[..li].iter().any(|&x| x != 0) || (sh != 0 && acc[li] & ((1u64 << sh) - 1) != 0);
    round_bits(neg, m, ACC_BASE + lo as i32, sticky, r)
}

/// Exactly rounded `(-1)^n1 m1 2^e1 + (-1)^n2 m2 2^e2` (terms not both zero).
fn sum_slow(n1: bool, m1: u128, e1: i32, n2: bool, m2: u128, e2: i32, r: Round) -> f64 {
    let mut x = acc_from(m1, e1);
    let y = acc_from(m2, e2);
    if n1 == n2 {
        acc_add(&mut x, &y);
        return acc_round(n1, &x, r);
    }
    match acc_cmp(&x, &y) {
        core::cmp::Ordering::Equal => exact_zero_sum(r),
        core::cmp::Ordering::Greater => {
            acc_sub(&mut x, &y);
            acc_round(n1, &x, r)
        }
        core::cmp::Ordering::Less => {
            let mut y = y;
            acc_sub(&mut y, &x);
            acc_round(n2, &y, r)
        }
    }
}

#[cold]
#[inline(never)]
fn add_slow(a: f64, b: f64, r: Round) -> f64 {
    if a == 0.0 || b == 0.0 {
        return add_f64(a, b, r); // exact, never reaches the slow path again
    }
    let (na, ma, ea) = decompose(a);
    let (nb, mb, eb) = decompose(b);
    sum_slow(na, u128::from(ma), ea, nb, u128::from(mb), eb, r)
}

/// a*b + c for finite nonzero a, b, c.
#[cold]
#[inline(never)]
fn fma_slow(a: f64, b: f64, c: f64, r: Round) -> f64 {
    let (na, ma, ea) = decompose(a);
    let (nb, mb, eb) = decompose(b);
    let (nc, mc, ec) = decompose(c);
    sum_slow(
        na != nb,
        u128::from(ma) * u128::from(mb),
        ea + eb,
        nc,
        u128::from(mc),
        ec,
        r,
    )
}

/// Directed scalar operations with AVX-512's embedded rounding (`vaddsd {rd-sae}` and friends):
/// the IEEE 754 operation rounded in the asked direction in one instruction, so the same bits as
/// the software functions above (`tests::embedded_scalars_equal_the_software_ones`). The
/// interval operations that interpreters run one box at a time (`scalar::emit::Ops`: the pruned
/// render's tape, Newton's host-side sums and products) call these when [`hardware`] says so.
#[cfg(target_arch = "x86_64")]
pub(crate) mod embedded {
    use super::Round;
    use std::arch::x86_64::*;

    const DOWN: i32 = _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC;
    const UP: i32 = _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC;

    macro_rules! directed {
        ($name:ident, $t:ty, $set:ident, $get:ident, $op:ident, $what:literal) => {
            #[doc = concat!("`a ", $what, " b` rounded down or up (`r` is not `Nearest`).")]
            ///
            /// # Safety
            /// The processor has AVX-512F ([`super::hardware`]).
            #[target_feature(enable = "avx512f")]
            pub(crate) unsafe fn $name(a: $t, b: $t, r: Round) -> $t {
                let (a, b) = ($set(a), $set(b));
                if r == Round::Up {
                    $get($op::<UP>(a, b))
                } else {
                    $get($op::<DOWN>(a, b))
                }
            }
        };
    }
    directed!(
        add_f64,
        f64,
        _mm_set_sd,
        _mm_cvtsd_f64,
        _mm_add_round_sd,
        "+"
    );
    directed!(
        sub_f64,
        f64,
        _mm_set_sd,
        _mm_cvtsd_f64,
        _mm_sub_round_sd,
        "-"
    );
    directed!(
        mul_f64,
        f64,
        _mm_set_sd,
        _mm_cvtsd_f64,
        _mm_mul_round_sd,
        "*"
    );
    directed!(
        div_f64,
        f64,
        _mm_set_sd,
        _mm_cvtsd_f64,
        _mm_div_round_sd,
        "/"
    );
    directed!(
        div_f32,
        f32,
        _mm_set_ss,
        _mm_cvtss_f32,
        _mm_div_round_ss,
        "/"
    );
    directed!(
        add_f32,
        f32,
        _mm_set_ss,
        _mm_cvtss_f32,
        _mm_add_round_ss,
        "+"
    );
    directed!(
        sub_f32,
        f32,
        _mm_set_ss,
        _mm_cvtss_f32,
        _mm_sub_round_ss,
        "-"
    );
    directed!(
        mul_f32,
        f32,
        _mm_set_ss,
        _mm_cvtss_f32,
        _mm_mul_round_ss,
        "*"
    );

    /// The square root rounded down or up (`r` is not `Nearest`).
    ///
    /// # Safety
    /// The processor has AVX-512F ([`super::hardware`]).
    #[target_feature(enable = "avx512f")]
    pub(crate) unsafe fn sqrt_f64(x: f64, r: Round) -> f64 {
        let x = _mm_set_sd(x);
        if r == Round::Up {
            _mm_cvtsd_f64(_mm_sqrt_round_sd::<UP>(x, x))
        } else {
            _mm_cvtsd_f64(_mm_sqrt_round_sd::<DOWN>(x, x))
        }
    }

    /// The square root rounded down or up (`r` is not `Nearest`).
    ///
    /// # Safety
    /// The processor has AVX-512F ([`super::hardware`]).
    #[target_feature(enable = "avx512f")]
    pub(crate) unsafe fn sqrt_f32(x: f32, r: Round) -> f32 {
        let x = _mm_set_ss(x);
        if r == Round::Up {
            _mm_cvtss_f32(_mm_sqrt_round_ss::<UP>(x, x))
        } else {
            _mm_cvtss_f32(_mm_sqrt_round_ss::<DOWN>(x, x))
        }
    }
}

/// Whether directed operations may use AVX-512's embedded rounding (`embedded`, and the CPU
/// evaluator's lanes): the processor has AVX-512F and `IVJIT_CPU_ROUNDING` is not `software`
/// (which forces the software path that every processor runs, for tests and comparisons). Read
/// once per process.
// Only x86-64 has the instructions; elsewhere nothing asks.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(crate) fn hardware() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *ON.get_or_init(|| !forced_software() && std::arch::is_x86_feature_detected!("avx512f"))
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether `IVJIT_CPU_ROUNDING=software` asks for the software directed rounding (for tests
/// and comparisons: the path every processor can run).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(crate) fn forced_software() -> bool {
    std::env::var("IVJIT_CPU_ROUNDING").is_ok_and(|v| v.trim().eq_ignore_ascii_case("software"))
}

#[cfg(test)]
mod tests {
    //! Cross-checks of the fast paths against the independent exact slow paths.
    use super::*;

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            // splitmix64
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }
        /// Finite nonzero value with exponent field in [lo, hi].
        fn finite(&mut self, lo: u64, hi: u64) -> f64 {
            loop {
                let x = self.next();
                let field = lo + (x >> 1) % (hi - lo + 1);
                let frac = match x % 4 {
                    0 => self.next() >> 12,
                    1 => (self.next() >> 12) & !((1u64 << (self.next() % 52)) - 1),
                    2 => (1u64 << 52) - 1 - (self.next() % 8),
                    _ => self.next() % 16,
                };
                let v = f64::from_bits((x & (1 << 63)) | (field << 52) | frac);
                if v != 0.0 {
                    return v;
                }
            }
        }
    }

    fn same(a: f64, b: f64) -> bool {
        a.to_bits() == b.to_bits()
    }

    const DIRS: [Round; 3] = [Round::Down, Round::Up, Round::Nearest];

    #[test]
    fn fast_paths_agree_with_slow_paths() {
        let mut g = Rng(12345);
        for i in 0..300_000 {
            let (a, b, c) = if i % 2 == 0 {
                (g.finite(0, 2046), g.finite(0, 2046), g.finite(0, 2046))
            } else {
                (
                    g.finite(800, 1250),
                    g.finite(800, 1250),
                    g.finite(700, 1350),
                )
            };
            let c2 = if i % 3 == 0 {
                -(a * b) * (1.0 + (g.next() % 5) as f64 * f64::EPSILON)
            } else {
                c
            };
            for r in DIRS {
                let x = add_f64(a, b, r);
                let y = add_slow(a, b, r);
                assert!(same(x, y), "add {a:e} {b:e} {r:?}: {x:e} vs {y:e}");
                let x = mul_f64(a, b, r);
                let y = mul_slow(a, b, r);
                assert!(same(x, y), "mul {a:e} {b:e} {r:?}: {x:e} vs {y:e}");
                let x = div_f64(a, b, r);
                let y = div_slow(a, b, r);
                assert!(same(x, y), "div {a:e} {b:e} {r:?}: {x:e} vs {y:e}");
                if c2 != 0.0 && c2.is_finite() {
                    let x = fma_f64(a, b, c2, r);
                    let y = fma_slow(a, b, c2, r);
                    assert!(same(x, y), "fma {a:e} {b:e} {c2:e} {r:?}: {x:e} vs {y:e}");
                }
            }
        }
    }

    #[test]
    fn next_up_down() {
        assert!(same(next_up(0.0), MIN_SUB));
        assert!(same(next_up(-0.0), MIN_SUB));
        assert!(same(next_down(0.0), -MIN_SUB));
        assert!(same(next_up(-MIN_SUB), -0.0));
        assert!(same(next_up(f64::MAX), f64::INFINITY));
        assert!(same(next_up(f64::NEG_INFINITY), -f64::MAX));
        assert!(same(next_down(1.0), 1.0 - f64::EPSILON / 2.0));
        assert!(same(next_up(1.0), 1.0 + f64::EPSILON));
        assert!(same(next_up(f64::INFINITY), f64::INFINITY));
        assert!(next_up(f64::NAN).is_nan());
        assert_eq!(next_up_f32(0.0).to_bits(), 1);
        assert_eq!(next_down_f32(f32::INFINITY), f32::MAX);
    }

    /// The embedded-rounding scalars give the software functions' bits: special values and
    /// random bit patterns, both directions, both precisions (where the processor has AVX-512F).
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn embedded_scalars_equal_the_software_ones() {
        if !std::arch::is_x86_feature_detected!("avx512f") {
            return; // nothing to compare: `hardware()` is false, the software path runs
        }
        let specials = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.1,
            3.0,
            f64::MIN_POSITIVE,
            5e-324,
            -5e-324,
            f64::MAX,
            -f64::MAX,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            1e300,
            1e-300,
            2f64.powi(52) + 1.0,
        ];
        let mut state = 0x9e3779b97f4a7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut xs: Vec<f64> = specials.to_vec();
        xs.extend((0..300).map(|_| f64::from_bits(next())));
        let same64 = |a: f64, b: f64| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
        let same32 = |a: f32, b: f32| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
        for &a in &xs {
            for &b in &xs {
                for r in [Round::Down, Round::Up] {
                    // SAFETY: the processor has AVX-512F (checked above).
                    unsafe {
                        assert!(
                            same64(embedded::add_f64(a, b, r), add_f64(a, b, r)),
                            "{a} + {b} {r:?}"
                        );
                        assert!(
                            same64(embedded::sub_f64(a, b, r), sub_f64(a, b, r)),
                            "{a} - {b} {r:?}"
                        );
                        assert!(
                            same64(embedded::mul_f64(a, b, r), mul_f64(a, b, r)),
                            "{a} * {b} {r:?}"
                        );
                        assert!(
                            same64(embedded::div_f64(a, b, r), div_f64(a, b, r)),
                            "{a} / {b} {r:?}"
                        );
                        let (a32, b32) = (a as f32, b as f32);
                        assert!(
                            same32(embedded::add_f32(a32, b32, r), add_f32(a32, b32, r)),
                            "{a32} + {b32} {r:?}"
                        );
                        assert!(
                            same32(embedded::sub_f32(a32, b32, r), sub_f32(a32, b32, r)),
                            "{a32} - {b32} {r:?}"
                        );
                        assert!(
                            same32(embedded::mul_f32(a32, b32, r), mul_f32(a32, b32, r)),
                            "{a32} * {b32} {r:?}"
                        );
                        assert!(
                            same32(embedded::div_f32(a32, b32, r), div_f32(a32, b32, r)),
                            "{a32} / {b32} {r:?}"
                        );
                    }
                }
            }
            for r in [Round::Down, Round::Up] {
                // SAFETY: as above.
                unsafe {
                    assert!(
                        same64(embedded::sqrt_f64(a, r), sqrt_f64(a, r)),
                        "sqrt {a} {r:?}"
                    );
                    assert!(
                        same32(embedded::sqrt_f32(a as f32, r), sqrt_f32(a as f32, r)),
                        "sqrt {a} {r:?}"
                    );
                }
            }
        }
    }
}
