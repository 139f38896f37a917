//! Directed f64 add, sub, mul, div and fma, and directed f32 products and fmas, over a whole
//! chunk of lanes, written so that the compiler vectorizes them.
//!
//! The scalar functions of [`crate::round`] branch on every special case; over a chunk that
//! keeps each lane apart. Here each operation runs in two passes: a branch-free pass over every
//! lane that computes the round-to-nearest result, its error term (TwoSum, or the FMA residual
//! for products and quotients, Boldo-Melquiond's rounding to odd for the fma), the one-ulp step
//! in the asked direction as an integer add on the bits, exact zeros with their IEEE signs, and
//! a flag for the lanes this fast path does not cover (overflow, tiny magnitudes, infinities,
//! NaN); then a scalar pass that recomputes only the flagged lanes with the scalar function.
//! The fast path is the scalar functions' own first branch, so both give the same bits
//! (`tests::lanes_equal_scalar_functions` and `tests::fma_lanes_equal_the_scalar_function`
//! check it on special and random values). Zeros are in the fast path because boxes that touch
//! 0 make them common (a power's mignitude, `x^4 - 5*x^2` at 0): flagged, most chunks of such
//! a batch took the scalar pass.
//!
//! The FMA residual must be a real fused multiply-add: [`super::eval`] runs chunks through a
//! copy of its loop compiled for AVX2 + FMA when the processor has them (`f64::mul_add` is
//! then one instruction; without them it is a library call, still exact).

use crate::round;
use crate::round::two_sum_err;
use crate::scalar::Round;

/// 2^-960: products and dividends at least this large have an exactly representable error
/// sign through one FMA (see [`round::mul_f64`] and [`round::div_f64`]).
const TWO_M960: f64 = f64::from_bits(63 << 52);

/// 2^1000: the bound of [`round::fma_f64`]'s fast branch on the product and the addend.
const TWO_P1000: f64 = f64::from_bits(2023 << 52);

/// The bits of `s` moved one ulp up (`e > 0`, rounding up) or down (`e < 0`, rounding down);
/// `s` finite and nonzero, so the step never crosses zero or reaches a NaN.
#[inline(always)]
fn step(s: f64, e: f64, up: bool) -> f64 {
    let b = s.to_bits() as i64;
    // +1 on the bits moves a positive value away from zero, -1 a negative one.
    let away = (b >> 63) | 1;
    let moved = if up {
        if e > 0.0 {
            b + away
        } else {
            b
        }
    } else if e < 0.0 {
        b - away
    } else {
        b
    };
    f64::from_bits(moved as u64)
}

/// Which operation a chunk runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    Add,
    Sub,
    Mul,
    Div,
}

/// `out[l] = x[l] op y[l]` rounded in direction `r`, for the first `len` lanes (the others
/// are computed too, and ignored).
#[inline(always)]
pub(crate) fn binary_f64<const N: usize>(
    out: &mut [f64; N],
    x: &[f64; N],
    y: &[f64; N],
    len: usize,
    r: Round,
    op: Op,
) {
    match (op, r) {
        (Op::Add, Round::Nearest) => each(out, x, y, |a, b| a + b),
        (Op::Sub, Round::Nearest) => each(out, x, y, |a, b| a - b),
        (Op::Mul, Round::Nearest) => each(out, x, y, |a, b| a * b),
        (Op::Div, Round::Nearest) => each(out, x, y, |a, b| a / b),
        (_, Round::Up | Round::Down) => {
            let up = r == Round::Up;
            let (slow, scalar): (Slow<N>, fn(f64, f64, Round) -> f64) = match op {
                Op::Add => (add(x, y, out, up), round::add_f64),
                Op::Sub => (sub(x, y, out, up), round::sub_f64),
                Op::Mul => (mul(x, y, out, up), round::mul_f64),
                Op::Div => (div(x, y, out, up), round::div_f64),
            };
            fix(out, x, y, len, r, slow, scalar);
        }
    }
}

/// `out[l] = f(x[l], y[l])`, every lane (as [`map`]).
#[inline(always)]
pub(crate) fn each<const N: usize>(
    out: &mut [f64; N],
    x: &[f64; N],
    y: &[f64; N],
    f: impl Fn(f64, f64) -> f64,
) {
    for l in 0..N {
        out[l] = f(x[l], y[l]);
    }
}

/// `out[l] = f(x[l])`, every lane. Over a whole chunk of fixed length (the lanes past a last
/// chunk's end hold earlier values and are computed too, harmlessly: every operation is lane
/// by lane), so the compiler vectorizes what `f` allows.
#[inline(always)]
pub(crate) fn map<const N: usize>(out: &mut [f64; N], x: &[f64; N], f: impl Fn(f64) -> f64) {
    for l in 0..N {
        out[l] = f(x[l]);
    }
}

/// `out[l] = 1.0` where `t(x[l], y[l])` holds, else `0.0` (the IR's booleans), every lane.
#[inline(always)]
pub(crate) fn test2<const N: usize>(
    out: &mut [f64; N],
    x: &[f64; N],
    y: &[f64; N],
    t: impl Fn(f64, f64) -> bool,
) {
    each(out, x, y, |a, b| if t(a, b) { 1.0 } else { 0.0 })
}

/// `out[l] = if c[l] != 0 { x[l] } else { y[l] }`, every lane, as a mask on the bits: written
/// as a choice, the compiler chooses an address per lane instead of blending vectors.
#[inline(always)]
pub(crate) fn select<const N: usize>(out: &mut [f64; N], c: &[f64; N], x: &[f64; N], y: &[f64; N]) {
    for l in 0..N {
        let m = 0u64.wrapping_sub(u64::from(c[l] != 0.0));
        out[l] = f64::from_bits((x[l].to_bits() & m) | (y[l].to_bits() & !m));
    }
}

/// [`round::min_f64`] without branches (the same result: a NaN operand yields the other, equal
/// values their bitwise or, so -0 wins over +0).
#[inline(always)]
pub(crate) fn min(a: f64, b: f64) -> f64 {
    let mut r = f64::from_bits(a.to_bits() | b.to_bits());
    r = if a < b { a } else { r };
    r = if b < a { b } else { r };
    r = if b.is_nan() { a } else { r };
    if a.is_nan() {
        b
    } else {
        r
    }
}

/// [`round::max_f64`] without branches (equal values give their bitwise and: +0 wins).
#[inline(always)]
pub(crate) fn max(a: f64, b: f64) -> f64 {
    let mut r = f64::from_bits(a.to_bits() & b.to_bits());
    r = if a > b { a } else { r };
    r = if b > a { b } else { r };
    r = if b.is_nan() { a } else { r };
    if a.is_nan() {
        b
    } else {
        r
    }
}

/// `next_up` of a float type without branches (so that a loop of it compiles to vector
/// code): the same bits as the standard library's for every input, NaN and the infinities
/// included. Written once for f64 and f32: `$int` is the signed integer of the float's width.
macro_rules! branch_free_next_up {
    ($name:ident, $float:ty, $int:ty) => {
        #[doc = concat!("`", stringify!($float), "::next_up` without branches.")]
        #[inline(always)]
        pub(crate) fn $name(x: $float) -> $float {
            let bits = x.to_bits();
            let stepped = if (bits as $int) < 0 {
                bits.wrapping_sub(1)
            } else {
                bits.wrapping_add(1)
            };
            // ±0 steps to the smallest positive subnormal.
            let r = if bits << 1 == 0 { 1 } else { stepped };
            let keep = x.is_nan() | (x == <$float>::INFINITY);
            <$float>::from_bits(if keep { bits } else { r })
        }
    };
}

branch_free_next_up!(next_up_f64, f64, i64);
branch_free_next_up!(next_up_f32, f32, i32);

/// `f64::next_down` without branches: `-next_up(-x)`, bit for bit (negation flips the sign
/// bit only, NaN's included).
#[inline(always)]
pub(crate) fn next_down_f64(x: f64) -> f64 {
    -next_up_f64(-x)
}

/// `f32::next_down` without branches (see [`next_down_f64`]).
#[inline(always)]
pub(crate) fn next_down_f32(x: f32) -> f32 {
    -next_up_f32(-x)
}

/// Recomputes with the scalar function the lanes `slow` flags (only when there are any).
#[inline(always)]
fn fix<const N: usize>(
    out: &mut [f64; N],
    x: &[f64; N],
    y: &[f64; N],
    len: usize,
    r: Round,
    slow: Slow<N>,
    scalar: fn(f64, f64, Round) -> f64,
) {
    if slow.any {
        for l in 0..len {
            if slow.lane[l] {
                out[l] = scalar(x[l], y[l], r);
            }
        }
    }
}

/// The lanes the fast path did not cover.
struct Slow<const N: usize> {
    lane: [bool; N],
    any: bool,
}

#[inline(always)]
fn slow_lanes<const N: usize>(ok: impl Fn(usize) -> bool) -> Slow<N> {
    let mut lane = [false; N];
    let mut count = 0u32;
    for (l, s) in lane.iter_mut().enumerate() {
        *s = !ok(l);
        count += u32::from(*s);
    }
    Slow {
        lane,
        any: count > 0,
    }
}

/// TwoSum fast path of [`round::add_f64`]: a finite nonzero sum with a finite error.
#[inline(always)]
fn add<const N: usize>(x: &[f64; N], y: &[f64; N], out: &mut [f64; N], up: bool) -> Slow<N> {
    let mut ok = [false; N];
    for l in 0..N {
        let (a, b) = (x[l], y[l]);
        let s = a + b;
        let bb = s - a;
        let aa = s - bb;
        let e = (a - aa) + (b - bb);
        // A zero sum of finite operands is exact (a sum that rounds to zero is zero): -0
        // rounding down unless both are +0, +0 rounding up unless both are -0.
        ok[l] = e.is_finite();
        let (zero, stepped) = (zero_sum(a, b, up), step(s, e, up));
        out[l] = if s == 0.0 { zero } else { stepped };
    }
    slow_lanes(|l| ok[l])
}

/// `a - b` as `a + (-b)`, as [`round::sub_f64`] does.
#[inline(always)]
fn sub<const N: usize>(x: &[f64; N], y: &[f64; N], out: &mut [f64; N], up: bool) -> Slow<N> {
    let mut neg = [0.0; N];
    for l in 0..N {
        neg[l] = -y[l];
    }
    add(x, &neg, out, up)
}

/// `out[l] = x[l] * y[l]` rounded to f32 in direction `r` (`Down` or `Up`), the operands f32
/// values carried in f64, for the first `len` lanes. The f64 product of two f32 is exact;
/// rounding it to nearest f32 and stepping one f32 ulp on the bits when that went the wrong
/// way is [`round::mul_f32`]'s own computation, for a finite nonzero f32 result. Zero,
/// infinite and NaN results take the scalar function.
///
/// Classes (issue 29's audit): the one rounding covers f32-subnormal results and ties; the
/// step toward 0 from +-2^-149 gives +-0 as `next_down`/`next_up` do. The operands must be f32
/// values: `scalar::verify` rejects an f32 program with a wider constant (which this loop
/// would multiply unrounded). Held by `cpu::lanes::tests::f32_products_equal_the_scalar_
/// function` and the class matrix's f32 products.
#[inline(always)]
pub(crate) fn mul_f32<const N: usize>(
    out: &mut [f64; N],
    x: &[f64; N],
    y: &[f64; N],
    len: usize,
    r: Round,
) {
    let up = r == Round::Up;
    let mut ok = [false; N];
    for l in 0..N {
        let p = x[l] * y[l];
        let (n, fine) = narrow_step(p, up);
        // An exact zero product (f32 products are exact in f64) is its own signed zero.
        (out[l], ok[l]) = (n, fine | (p == 0.0));
    }
    let slow = slow_lanes(|l| ok[l]);
    let scalar = |a: f64, b: f64, r| f64::from(round::mul_f32(a as f32, b as f32, r));
    fix(out, x, y, len, r, slow, scalar);
}

/// `p` rounded to f32 in direction `up` (else down) by rounding to nearest f32 and stepping one
/// f32 ulp on the bits when that went the wrong way, as an f64; false where the f32 result is
/// zero, infinite or NaN (which this step does not cover).
#[inline(always)]
fn narrow_step(p: f64, up: bool) -> (f64, bool) {
    let n = p as f32;
    let back = f64::from(n);
    let b = n.to_bits() as i32;
    // +1 on the bits moves a nonzero value away from zero, -1 towards it.
    let away = (b >> 31) | 1;
    let moved = if up {
        if back < p {
            b + away
        } else {
            b
        }
    } else if back > p {
        b - away
    } else {
        b
    };
    (
        f64::from(f32::from_bits(moved as u32)),
        n.is_finite() && n != 0.0,
    )
}

/// The exact zero sum of finite `a + b`: -0 rounding down unless both are +0, +0 rounding up
/// unless both are -0 (IEEE 754's signs, as [`round::add_f64`]).
#[inline(always)]
fn zero_sum(a: f64, b: f64, up: bool) -> f64 {
    const SIGN: u64 = 1 << 63;
    let (x, y) = (a.to_bits() & SIGN, b.to_bits() & SIGN);
    f64::from_bits(if up { x & y } else { x | y })
}

/// `v` rounded to odd at 53 bits given `e`, the sign of the exact value minus `v` (a round-to-
/// nearest result): an inexact `v` with an even last bit moves one ulp toward the exact value
/// ([`round`]'s `round_to_odd` without branches; never from zero: a sum of two floats that
/// rounds to zero is exact).
#[inline(always)]
fn odd(v: f64, e: f64) -> f64 {
    let b = v.to_bits() as i64;
    let away = (b >> 63) | 1;
    let moved = if e != 0.0 && b & 1 == 0 {
        if e > 0.0 {
            b + away
        } else {
            b - away
        }
    } else {
        b
    };
    f64::from_bits(moved as u64)
}

/// `out[l] = x[l] * y[l] + z[l]` rounded once in direction `r`, for the first `len` lanes:
/// [`round::fma_f64`]'s Boldo-Melquiond branch over every lane (`a*b = uh + ul` by one FMA,
/// `c + uh = th + tl` by TwoSum, `v` = `tl + ul` rounded to odd, then `th + v` rounded in the
/// direction, which is the exact result's), taken where that function takes it: a, b, c
/// finite and nonzero, `2^-960 <= |a*b| <= 2^1000`, `|c| <= 2^1000` (`c = 0` too: the branch
/// then is the product's TwoProduct rounding); and a zero operand times a finite one, whose
/// result is `c` or an exact signed zero. The other lanes (tiny or huge products, infinities,
/// NaN) take the scalar function. The
/// branch needs a fused multiply-add: the evaluator runs this in its AVX2 + FMA copy of the
/// loop where the processor has them (otherwise `mul_add` is a library call, still exact).
/// Held by `tests::fma_lanes_equal_the_scalar_function`.
#[inline(always)]
pub(crate) fn fma_f64<const N: usize>(
    out: &mut [f64; N],
    x: &[f64; N],
    y: &[f64; N],
    z: &[f64; N],
    len: usize,
    r: Round,
) {
    if r == Round::Nearest {
        for l in 0..N {
            out[l] = x[l].mul_add(y[l], z[l]);
        }
        return;
    }
    let up = r == Round::Up;
    let mut ok = [false; N];
    for l in 0..N {
        let (a, b, c) = (x[l], y[l], z[l]);
        let uh = a * b;
        let ul = a.mul_add(b, -uh);
        let th = c + uh;
        let tl = two_sum_err(c, uh, th);
        let v0 = tl + ul;
        let ev = two_sum_err(tl, ul, v0);
        let v = odd(v0, ev);
        let s = th + v;
        let e = two_sum_err(th, v, s);
        // A zero operand with a finite other: `c` exactly, or the signed zero of an exact zero
        // sum when c is zero too (the scalar function's `add_f64(a * b, c)`).
        // (Non-short-circuit operators and plain choices: the loop stays vectorized.)
        let zero_product = (uh == 0.0) & ((a == 0.0) | (b == 0.0));
        ok[l] = ((TWO_M960..=TWO_P1000).contains(&uh.abs()) & (c.abs() <= TWO_P1000))
            | (zero_product & c.is_finite());
        let by_zero = if c == 0.0 { zero_sum(uh, c, up) } else { c };
        // th + v is zero only when a*b + c is (nonzero terms): -0 down, +0 up.
        let exact_zero = if up { 0.0 } else { -0.0 };
        let stepped = step(s, e, up);
        let nonzero = if s == 0.0 { exact_zero } else { stepped };
        out[l] = if zero_product { by_zero } else { nonzero };
    }
    let slow: Slow<N> = slow_lanes(|l| ok[l]);
    if slow.any {
        for l in 0..len {
            if slow.lane[l] {
                out[l] = round::fma_f64(x[l], y[l], z[l], r);
            }
        }
    }
}

/// `out[l] = x[l] * y[l] + z[l]` rounded once to f32 in direction `r` (`Down` or `Up`), the
/// operands f32 values carried in f64, for the first `len` lanes: [`round::fma_f32`]'s
/// computation (the f64 product of two f32 is exact, the sum rounded to odd at 53 bits, then
/// once to f32) over every lane, where the sum and the f32 result are finite and nonzero; the
/// scalar function takes the other lanes. Held by `tests::fma_lanes_equal_the_scalar_function`.
#[inline(always)]
pub(crate) fn fma_f32<const N: usize>(
    out: &mut [f64; N],
    x: &[f64; N],
    y: &[f64; N],
    z: &[f64; N],
    len: usize,
    r: Round,
) {
    if r == Round::Nearest {
        for l in 0..len {
            out[l] = f64::from(round::fma_f32(x[l] as f32, y[l] as f32, z[l] as f32, r));
        }
        return;
    }
    let up = r == Round::Up;
    let mut ok = [false; N];
    for l in 0..N {
        let p = x[l] * y[l];
        let s = p + z[l];
        let e = two_sum_err(p, z[l], s);
        let (n, fine) = narrow_step(odd(s, e), up);
        ok[l] = fine & (s != 0.0) & s.is_finite();
        out[l] = n;
    }
    let slow: Slow<N> = slow_lanes(|l| ok[l]);
    if slow.any {
        for l in 0..len {
            if slow.lane[l] {
                out[l] = f64::from(round::fma_f32(x[l] as f32, y[l] as f32, z[l] as f32, r));
            }
        }
    }
}

/// `out[l] = x[l] op y[l]` rounded once to f32 in direction `r` (`Down` or `Up`), the
/// operands f32 values carried in f64, for the first `len` lanes: the f64 result rounded in the
/// same direction ([`binary_f64`]), then rounded to f32 in that direction. Directed roundings
/// compose (every f32 is an f64, so rounding down to the f64 grid and then down to the f32 grid
/// is rounding down to the f32 grid once), so this is the one rounding [`round::add_f32`] and
/// friends compute (by rounding to odd). An f64 result of f32 operands is zero only when the
/// exact one is (sums are multiples of 2^-149, quotients at least 2^-277 in magnitude), so a
/// zero narrows to itself with its sign; f32 results that are zero from underflow or infinite,
/// and NaN, take the scalar function. Held by `tests::f32_operations_equal_the_scalar_functions`.
#[inline(always)]
pub(crate) fn binary_f32<const N: usize>(
    out: &mut [f64; N],
    x: &[f64; N],
    y: &[f64; N],
    len: usize,
    r: Round,
    op: Op,
) {
    if op == Op::Mul && r != Round::Nearest {
        return mul_f32(out, x, y, len, r);
    }
    type F32 = fn(f32, f32, Round) -> f32;
    let f: F32 = match op {
        Op::Add => round::add_f32,
        Op::Sub => round::sub_f32,
        Op::Mul => round::mul_f32,
        Op::Div => round::div_f32,
    };
    if r == Round::Nearest {
        for l in 0..len {
            out[l] = f64::from(f(x[l] as f32, y[l] as f32, r));
        }
        return;
    }
    binary_f64(out, x, y, len, r, op);
    let slow = narrow_lanes(out, r == Round::Up);
    if slow.any {
        for l in 0..len {
            if slow.lane[l] {
                out[l] = f64::from(f(x[l] as f32, y[l] as f32, r));
            }
        }
    }
}

/// Each lane's f64 value rounded to f32 in direction `up` (else down) in place; the lanes whose
/// f32 result this step does not cover (zero from underflow, infinite, NaN), flagged.
#[inline(always)]
fn narrow_lanes<const N: usize>(out: &mut [f64; N], up: bool) -> Slow<N> {
    let mut ok = [false; N];
    for l in 0..N {
        let p = out[l];
        let (n, fine) = narrow_step(p, up);
        (out[l], ok[l]) = (n, fine | (p == 0.0));
    }
    slow_lanes(|l| ok[l])
}

/// `out[l] = sqrt(x[l])` rounded in direction `r`, f64 or (`f32`) f32 values carried in f64,
/// for the first `len` lanes: [`round::sqrt_f64`]'s first branch (`2^-960 <= x <= MAX`: the
/// remainder `x - s^2` by one FMA has the sign of the error), then for f32 the same one
/// rounding to f32 as [`binary_f32`] (a square root of an f32 is zero only at zero). Other
/// lanes take the scalar function. Held by `tests::f32_operations_equal_the_scalar_functions`
/// (the f64 square root too).
#[inline(always)]
pub(crate) fn sqrt<const N: usize>(
    out: &mut [f64; N],
    x: &[f64; N],
    len: usize,
    r: Round,
    f32p: bool,
) {
    let scalar = |v: f64| {
        if f32p {
            f64::from(round::sqrt_f32(v as f32, r))
        } else {
            round::sqrt_f64(v, r)
        }
    };
    if r == Round::Nearest {
        for l in 0..len {
            out[l] = scalar(x[l]);
        }
        return;
    }
    let up = r == Round::Up;
    let mut ok = [false; N];
    for l in 0..N {
        let a = x[l];
        let s = a.sqrt();
        let rem = (-s).mul_add(s, a);
        ok[l] = (TWO_M960..=f64::MAX).contains(&a);
        out[l] = step(s, rem, up);
    }
    let mut slow: Slow<N> = slow_lanes(|l| ok[l]);
    if f32p {
        let narrowed = narrow_lanes(out, up);
        for l in 0..N {
            slow.lane[l] |= narrowed.lane[l];
        }
        slow.any |= narrowed.any;
    }
    if slow.any {
        for l in 0..len {
            if slow.lane[l] {
                out[l] = scalar(x[l]);
            }
        }
    }
}

/// TwoProduct fast path of [`round::mul_f64`]: `2^-960 <= |a*b| <= MAX`.
#[inline(always)]
fn mul<const N: usize>(x: &[f64; N], y: &[f64; N], out: &mut [f64; N], up: bool) -> Slow<N> {
    let mut ok = [false; N];
    for l in 0..N {
        let (a, b) = (x[l], y[l]);
        let p = a * b;
        let ap = p.abs();
        let e = a.mul_add(b, -p);
        // A zero operand times a finite one is an exact signed zero (e = 0: no step).
        ok[l] = (TWO_M960..=f64::MAX).contains(&ap) | ((p == 0.0) & ((a == 0.0) | (b == 0.0)));
        out[l] = step(p, e, up);
    }
    slow_lanes(|l| ok[l])
}

/// Remainder fast path of [`round::div_f64`]: `2^-960 <= |a| <= MAX`, finite `b`, a finite
/// nonzero quotient (a zero quotient takes the scalar path, whose step crosses to the
/// smallest subnormal).
#[inline(always)]
fn div<const N: usize>(x: &[f64; N], y: &[f64; N], out: &mut [f64; N], up: bool) -> Slow<N> {
    let mut ok = [false; N];
    for l in 0..N {
        let (a, b) = (x[l], y[l]);
        let q = a / b;
        let aa = a.abs();
        let rem = (-q).mul_add(b, a);
        let e = if b < 0.0 { -rem } else { rem };
        // 0 / b for b nonzero (not NaN) is an exact signed zero (e is 0 or, for an infinite
        // b, NaN: no step either way).
        ok[l] = ((TWO_M960..=f64::MAX).contains(&aa) & q.is_finite() & (q != 0.0) & b.is_finite())
            | ((a == 0.0) & (q == 0.0));
        out[l] = step(q, e, up);
    }
    slow_lanes(|l| ok[l])
}

/// f32's own special values for the tests of the f32 operations over lanes and vectors (the
/// tests add their negatives): subnormals, the smallest normal, MAX, 2^-75 and 2^64 (whose
/// squares underflow and overflow f32), and the neighbours of 1.
#[cfg(test)]
pub(super) fn f32_specials() -> [f32; 8] {
    [
        f32::from_bits(1),
        f32::from_bits(3),
        f32::MIN_POSITIVE,
        f32::MAX,
        2f32.powi(-75),
        2f32.powi(64),
        1.0 + f32::EPSILON,
        1.0 - f32::EPSILON / 2.0,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::LANES;

    /// Special values: zeros, subnormals, the 2^-960 threshold, near-overflow, infinities, NaN.
    fn specials() -> Vec<f64> {
        let mut v = vec![
            0.0,
            -0.0,
            f64::from_bits(1),
            -f64::from_bits(1),
            f64::MIN_POSITIVE,
            TWO_M960,
            f64::from_bits(TWO_M960.to_bits() - 1),
            f64::from_bits(TWO_M960.to_bits() + 1),
            1.0,
            -1.0,
            1.0 + f64::EPSILON,
            3.0,
            0.1,
            -0.7,
            1e300,
            -1e300,
            f64::MAX,
            -f64::MAX,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            2f64.powi(-500),
            2f64.powi(-520),
            2f64.powi(512),
            1e-310,
        ];
        let more: Vec<f64> = v.iter().map(|x| -x).collect();
        v.extend(more);
        v
    }

    #[test]
    fn branch_free_steps_equal_the_standard_ones() {
        let check_f32 = |y: f32| {
            let up = next_up_f32(y).to_bits();
            assert_eq!(up, y.next_up().to_bits(), "next_up({y:e})");
            let down = next_down_f32(y).to_bits();
            assert_eq!(down, y.next_down().to_bits(), "next_down({y:e})");
        };
        for x in specials().into_iter().chain(randoms(4000)) {
            assert_eq!(
                next_up_f64(x).to_bits(),
                x.next_up().to_bits(),
                "next_up({x:e})"
            );
            assert_eq!(
                next_down_f64(x).to_bits(),
                x.next_down().to_bits(),
                "next_down({x:e})"
            );
            check_f32(x as f32);
            check_f32(f32::from_bits(x.to_bits() as u32));
        }
        for y in f32_specials() {
            check_f32(y);
            check_f32(-y);
        }
    }

    /// splitmix64 bits as f64 values of every exponent, and values of moderate range.
    fn randoms(n: usize) -> Vec<f64> {
        let mut s = 0x1234_5678_9abc_def0u64;
        (0..n)
            .map(|i| {
                s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
                let mut z = s;
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                z ^= z >> 31;
                if i % 2 == 0 {
                    f64::from_bits(z)
                } else {
                    ((z >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 2f64.powi((z % 64) as i32 - 32)
                }
            })
            .collect()
    }

    /// [`crate::cpu::avx2::binary`] on a chunk (f32 values with `f32`) where the processor has
    /// AVX2 and FMA.
    fn avx2_binary(
        x: &[f64; LANES],
        y: &[f64; LANES],
        r: Round,
        op: Op,
        f32: bool,
    ) -> Option<[f64; LANES]> {
        #[cfg(target_arch = "x86_64")]
        {
            #[target_feature(enable = "avx2,fma")]
            fn run(
                x: &[f64; LANES],
                y: &[f64; LANES],
                r: Round,
                op: Op,
                f32: bool,
            ) -> [f64; LANES] {
                let mut out = [0.0; LANES];
                // SAFETY: compiled for AVX2 + FMA, called where the processor has them.
                unsafe { crate::cpu::avx2::binary(&mut out, x, y, r, op, f32) };
                out
            }
            // SAFETY: the processor has AVX2 and FMA (available).
            crate::cpu::avx2::available().then(|| unsafe { run(x, y, r, op, f32) })
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (x, y, r, op, f32);
            None
        }
    }

    /// [`crate::cpu::avx2::fma`] on a chunk where the processor has AVX2 and FMA.
    fn avx2_fma(
        x: &[f64; LANES],
        y: &[f64; LANES],
        z: &[f64; LANES],
        r: Round,
    ) -> Option<[f64; LANES]> {
        #[cfg(target_arch = "x86_64")]
        {
            #[target_feature(enable = "avx2,fma")]
            fn run(x: &[f64; LANES], y: &[f64; LANES], z: &[f64; LANES], r: Round) -> [f64; LANES] {
                let mut out = [0.0; LANES];
                // SAFETY: compiled for AVX2 + FMA, called where the processor has them.
                unsafe { crate::cpu::avx2::fma(&mut out, x, y, z, r) };
                out
            }
            // SAFETY: the processor has AVX2 and FMA (available).
            crate::cpu::avx2::available().then(|| unsafe { run(x, y, z, r) })
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (x, y, z, r);
            None
        }
    }

    fn same(a: f64, b: f64) -> bool {
        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
    }

    /// The f32 products over chunks give the scalar function's bits: every pair of special
    /// values (as f32: zeros, subnormals, MAX, infinities, NaN, and products that underflow or
    /// overflow f32) and 64k random pairs, both directions, ragged lengths.
    #[test]
    fn f32_products_equal_the_scalar_function() {
        let mut sp: Vec<f64> = specials().iter().map(|&v| f64::from(v as f32)).collect();
        sp.extend([
            f64::from(f32::from_bits(1)),
            f64::from(-f32::from_bits(1)),
            f64::from(f32::MIN_POSITIVE),
            f64::from(f32::MAX),
            f64::from(-f32::MAX),
            f64::from(2f32.powi(-75)),
            f64::from(2f32.powi(64)),
            f64::from(1.0f32 + f32::EPSILON),
        ]);
        let (mut xs, mut ys) = (Vec::new(), Vec::new());
        for &a in &sp {
            for &b in &sp {
                xs.push(a);
                ys.push(b);
            }
        }
        let r = randoms(2 * 65_536);
        xs.extend(r[..65_536].iter().map(|&v| f64::from(v as f32)));
        ys.extend(r[65_536..].iter().map(|&v| f64::from(v as f32)));
        for rd in [Round::Down, Round::Up] {
            for (c, (xc, yc)) in xs.chunks(LANES - 3).zip(ys.chunks(LANES - 3)).enumerate() {
                let len = xc.len();
                let (mut x, mut y, mut out) = ([0.0; LANES], [0.0; LANES], [0.0; LANES]);
                x[..len].copy_from_slice(xc);
                y[..len].copy_from_slice(yc);
                mul_f32(&mut out, &x, &y, len, rd);
                for l in 0..len {
                    let want = f64::from(round::mul_f32(x[l] as f32, y[l] as f32, rd));
                    assert!(
                        same(out[l], want),
                        "{rd:?} chunk {c} lane {l}: {:e} * {:e} -> {:e}, scalar {:e}",
                        x[l],
                        y[l],
                        out[l],
                        want
                    );
                }
            }
        }
    }

    /// The branch-free min and max give the scalar functions' bits (signed zeros, NaN on
    /// either side, infinities) on every pair of special values and 64k random pairs.
    #[test]
    fn branch_free_min_max_equal_the_scalar_functions() {
        let sp = specials();
        let r = randoms(2 * 65_536);
        let pairs = sp
            .iter()
            .flat_map(|&a| sp.iter().map(move |&b| (a, b)))
            .chain(r[..65_536].iter().copied().zip(r[65_536..].iter().copied()));
        for (a, b) in pairs {
            assert_eq!(
                min(a, b).to_bits(),
                round::min_f64(a, b).to_bits(),
                "min({a:e}, {b:e})"
            );
            assert_eq!(
                max(a, b).to_bits(),
                round::max_f64(a, b).to_bits(),
                "max({a:e}, {b:e})"
            );
        }
    }

    /// f32 add, sub, mul, div and sqrt over chunks give the scalar functions' bits in every
    /// direction (special values as f32 pairs: zeros, subnormals, MAX, infinities, NaN, sums
    /// and quotients that underflow or overflow f32; cancelling sums; 64k random pairs), and
    /// the f64 square root over chunks gives [`round::sqrt_f64`]'s.
    #[test]
    fn f32_operations_equal_the_scalar_functions() {
        let n = |v: f64| f64::from(v as f32);
        let mut sp: Vec<f64> = specials().iter().map(|&v| n(v)).collect();
        sp.extend(
            super::f32_specials()
                .iter()
                .flat_map(|&v| [f64::from(v), -f64::from(v)]),
        );
        let (mut xs, mut ys) = (Vec::new(), Vec::new());
        for &a in &sp {
            for &b in &sp {
                xs.push(a);
                ys.push(b);
            }
        }
        let r = randoms(2 * 65_536);
        for i in 0..65_536 {
            xs.push(n(r[i]));
            ys.push(n(r[65_536 + i]));
            xs.push(n(r[i]));
            ys.push(-n(r[i] * (1.0 + (i % 5) as f64 * 1e-7)));
        }
        type F32 = fn(f32, f32, Round) -> f32;
        let ops: [(Op, F32); 4] = [
            (Op::Add, round::add_f32),
            (Op::Sub, round::sub_f32),
            (Op::Mul, round::mul_f32),
            (Op::Div, round::div_f32),
        ];
        for rd in [Round::Down, Round::Up, Round::Nearest] {
            for (c, (xc, yc)) in xs.chunks(LANES - 3).zip(ys.chunks(LANES - 3)).enumerate() {
                let len = xc.len();
                let (mut x, mut y, mut out) = ([0.0; LANES], [0.0; LANES], [0.0; LANES]);
                x[..len].copy_from_slice(xc);
                y[..len].copy_from_slice(yc);
                for (op, f) in ops {
                    binary_f32(&mut out, &x, &y, len, rd, op);
                    // The AVX2 vectors' chunk function too, where the processor has them.
                    let vectors = (rd != Round::Nearest)
                        .then(|| avx2_binary(&x, &y, rd, op, true))
                        .flatten();
                    for (name, out) in [("lanes", Some(out)), ("avx2", vectors)] {
                        let Some(out) = out else { continue };
                        for l in 0..len {
                            let want = f64::from(f(x[l] as f32, y[l] as f32, rd));
                            assert!(
                                same(out[l], want),
                                "{name} {op:?} {rd:?} chunk {c} lane {l}: {:e}, {:e} -> {:e}, scalar {:e}",
                                x[l],
                                y[l],
                                out[l],
                                want
                            );
                        }
                    }
                }
                for (f32p, v) in [(true, &x), (false, &x), (false, &y)] {
                    let v = if f32p { *v } else { v.map(|a| a * 1.000_000_1) };
                    sqrt(&mut out, &v, len, rd, f32p);
                    for l in 0..len {
                        let want = if f32p {
                            f64::from(round::sqrt_f32(v[l] as f32, rd))
                        } else {
                            round::sqrt_f64(v[l], rd)
                        };
                        assert!(
                            same(out[l], want),
                            "sqrt f32 {f32p} {rd:?} chunk {c} lane {l}: {:e} -> {:e}, scalar {:e}",
                            v[l],
                            out[l],
                            want
                        );
                    }
                }
            }
        }
    }

    /// The FMA over chunks gives the scalar functions' bits, f64 and f32, in every direction:
    /// every triple of special values, random triples of every exponent, and the triples the
    /// fast branch is about: an addend cancelling the product to a few ulps (`c` near
    /// `-a*b`, `a*b + c` exactly zero, of the size of the product's error), addends far below
    /// and far above the product, and products at the branch's thresholds.
    #[test]
    fn fma_lanes_equal_the_scalar_function() {
        let sp = specials();
        let r = randoms(3 * 65_536);
        let mut t: Vec<(f64, f64, f64)> = Vec::new();
        for &a in &sp {
            for &b in &sp {
                for &c in &sp {
                    t.push((a, b, c));
                }
            }
        }
        for i in 0..65_536 {
            t.push((r[i], r[65_536 + i], r[131_072 + i]));
        }
        let (m, tiny) = (f64::EPSILON, 2f64.powi(-1000));
        for (i, w) in r.chunks(2).take(20_000).enumerate() {
            let (a, b) = (w[0], w[1]);
            let p = a * b;
            let e = a.mul_add(b, -p);
            let k = (i % 9) as f64 - 4.0;
            t.push((a, b, -p));
            t.push((a, b, -p * (1.0 + k * m)));
            t.push((a, b, -p - e));
            t.push((a, b, e * k));
            t.push((a, b, p * k * m * m));
            t.push((a, b, p * 2f64.powi(60 + i as i32 % 40)));
            t.push((a, b, tiny * k));
            t.push((TWO_M960 * (1.0 + k * m), 1.0 + m * i as f64, w[0]));
            t.push((TWO_P1000 * (1.0 - k * m), 1.0 - m * i as f64, w[1]));
            // Where only the rounding to odd keeps the direction: `a*b` halfway between two
            // floats (a = 1 + j*2^-52 with j odd, b = 3, so ul = +-ulp(uh)/2), and c just inside
            // ul: then c + uh = uh + c exactly (tl = c), tl + ul rounds to +-ulp(uh) as a tie
            // (inexact), and th + v would be a float: the lost bits decide the direction.
            let j = (2 * i + 1) as f64;
            let scale = 2f64.powi((i % 200) as i32 - 100) * if i % 2 == 0 { 1.0 } else { -1.0 };
            let (a, b) = ((1.0 + j * m) * scale, 3.0);
            let ul = a.mul_add(b, -(a * b));
            t.push((a, b, ul * (1.0 - m / 2.0)));
            t.push((a, b, ul * (1.0 + m)));
        }
        let check = |f32p: bool, t: &[(f64, f64, f64)]| {
            for rd in [Round::Down, Round::Up, Round::Nearest] {
                for (k, c) in t.chunks(LANES - 5).enumerate() {
                    let len = c.len();
                    let (mut x, mut y, mut z) = ([0.0; LANES], [0.0; LANES], [0.0; LANES]);
                    for (l, &(a, b, cc)) in c.iter().enumerate() {
                        (x[l], y[l], z[l]) = (a, b, cc);
                    }
                    let mut out = [0.0; LANES];
                    if f32p {
                        fma_f32(&mut out, &x, &y, &z, len, rd);
                    } else {
                        fma_f64(&mut out, &x, &y, &z, len, rd);
                    }
                    // The AVX2 vectors' fma too, where the processor has them.
                    let vectors = (!f32p && rd != Round::Nearest)
                        .then(|| avx2_fma(&x, &y, &z, rd))
                        .flatten();
                    for (l, v) in vectors.iter().flat_map(|v| v[..len].iter().enumerate()) {
                        let want = round::fma_f64(x[l], y[l], z[l], rd);
                        assert!(
                            same(*v, want),
                            "avx2 {rd:?} chunk {k} lane {l}: fma({:e}, {:e}, {:e}) -> {v:e}, scalar {want:e}",
                            x[l],
                            y[l],
                            z[l],
                        );
                    }
                    for l in 0..len {
                        let want = if f32p {
                            f64::from(round::fma_f32(x[l] as f32, y[l] as f32, z[l] as f32, rd))
                        } else {
                            round::fma_f64(x[l], y[l], z[l], rd)
                        };
                        assert!(
                            same(out[l], want),
                            "f32 {f32p} {rd:?} chunk {k} lane {l}: fma({:e}, {:e}, {:e}) -> {:e}, scalar {:e}",
                            x[l],
                            y[l],
                            z[l],
                            out[l],
                            want
                        );
                    }
                }
            }
        };
        check(false, &t);
        let f32s: Vec<(f64, f64, f64)> = t
            .iter()
            .map(|&(a, b, c)| {
                let n = |v: f64| f64::from(v as f32);
                (n(a), n(b), n(c))
            })
            .collect();
        check(true, &f32s);
    }

    /// Every pair of special values and 64k random pairs, every op and direction, ragged
    /// lengths: the chunk functions give the scalar functions' bits.
    #[test]
    fn lanes_equal_scalar_functions() {
        let sp = specials();
        let mut xs = Vec::new();
        let mut ys = Vec::new();
        for &a in &sp {
            for &b in &sp {
                xs.push(a);
                ys.push(b);
            }
        }
        let r = randoms(2 * 65_536);
        xs.extend_from_slice(&r[..65_536]);
        ys.extend_from_slice(&r[65_536..]);
        // Products and sums of nearby magnitudes (cancellation, exact results).
        for (i, &a) in r.iter().take(4096).enumerate() {
            xs.push(a);
            ys.push(-a * (1.0 + f64::EPSILON * (i % 7) as f64));
        }
        type Scalar = fn(f64, f64, Round) -> f64;
        let scalar: [(Op, Scalar); 4] = [
            (Op::Add, round::add_f64),
            (Op::Sub, round::sub_f64),
            (Op::Mul, round::mul_f64),
            (Op::Div, round::div_f64),
        ];
        for (op, f) in scalar {
            for r in [Round::Down, Round::Up, Round::Nearest] {
                for (c, (xc, yc)) in xs.chunks(LANES - 3).zip(ys.chunks(LANES - 3)).enumerate() {
                    let len = xc.len();
                    let mut x = [0.0; LANES];
                    let mut y = [0.0; LANES];
                    x[..len].copy_from_slice(xc);
                    y[..len].copy_from_slice(yc);
                    let mut out = [0.0; LANES];
                    binary_f64(&mut out, &x, &y, len, r, op);
                    // The AVX2 vectors' chunk function too, where the processor has them.
                    let vectors = (r != Round::Nearest).then(|| avx2_binary(&x, &y, r, op, false));
                    for (name, out) in [("lanes", Some(out)), ("avx2", vectors.flatten())] {
                        let Some(out) = out else { continue };
                        for l in 0..len {
                            let want = f(x[l], y[l], r);
                            assert!(
                                same(out[l], want),
                                "{name} {op:?} {r:?} chunk {c} lane {l}: {:e} , {:e} -> {:e}, scalar {:e}",
                                x[l],
                                y[l],
                                out[l],
                                want
                            );
                        }
                    }
                }
            }
        }
    }
}
