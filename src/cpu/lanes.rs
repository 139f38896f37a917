//! Directed f64 add, sub, mul and div, and directed f32 products, over a whole chunk of lanes,
//! written so that the compiler vectorizes them.
//!
//! The scalar functions of [`crate::round`] branch on every special case; over a chunk that
//! keeps each lane apart. Here each operation runs in two passes: a branch-free pass over every
//! lane that computes the round-to-nearest result, its error term (TwoSum, or the FMA residual
//! for products and quotients), the one-ulp step in the asked direction as an integer add on
//! the bits, and a flag for the lanes this fast path does not cover (zero results, overflow,
//! tiny magnitudes, infinities, NaN); then a scalar pass that recomputes only the flagged lanes
//! with the scalar function. The fast path is the scalar functions' own first branch, so both
//! give the same bits (`tests::lanes_equal_scalar_functions` checks it on special and random
//! values).
//!
//! The FMA residual must be a real fused multiply-add: [`super::eval`] runs chunks through a
//! copy of its loop compiled for AVX2 + FMA when the processor has them (`f64::mul_add` is
//! then one instruction; without them it is a library call, still exact).

use crate::round;
use crate::scalar::Round;

/// 2^-960: products and dividends at least this large have an exactly representable error
/// sign through one FMA (see [`round::mul_f64`] and [`round::div_f64`]).
const TWO_M960: f64 = f64::from_bits(63 << 52);

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
        ok[l] = e.is_finite() && s != 0.0;
        out[l] = step(s, e, up);
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
        let n = p as f32;
        let back = f64::from(n);
        ok[l] = n.is_finite() && n != 0.0;
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
        out[l] = f64::from(f32::from_bits(moved as u32));
    }
    let slow = slow_lanes(|l| ok[l]);
    let scalar = |a: f64, b: f64, r| f64::from(round::mul_f32(a as f32, b as f32, r));
    fix(out, x, y, len, r, slow, scalar);
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
        ok[l] = (TWO_M960..=f64::MAX).contains(&ap);
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
        ok[l] = (TWO_M960..=f64::MAX).contains(&aa) && q.is_finite() && q != 0.0 && b.is_finite();
        out[l] = step(q, e, up);
    }
    slow_lanes(|l| ok[l])
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
                    for l in 0..len {
                        let want = f(x[l], y[l], r);
                        assert!(
                            same(out[l], want),
                            "{op:?} {r:?} chunk {c} lane {l}: {:e} , {:e} -> {:e}, scalar {:e}",
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
