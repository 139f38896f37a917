//! The check that a directed-rounding path over a chunk's lanes (AVX-512's embedded rounding,
//! [`super::avx512`]; the switched MXCSR mode, [`super::mxcsr`]) gives the software path's bits
//! ([`crate::round`]'s scalar rows): special values (zeros of both signs, subnormals, the
//! extremes of the normal range, infinities, NaN, exact and tie cases) and random bit
//! patterns, pairs and triples of them, in both directions; NaN matches any NaN.

use super::lanes::Op;
use super::LANES;
use crate::round::{self, Round};

/// A chunk-wide binary operation under test: `(out, x, y, r, op)`.
pub(super) type Binary<'a> = &'a dyn Fn(&mut [f64; LANES], &[f64; LANES], &[f64; LANES], Round, Op);
/// A chunk-wide fma under test: `(out, x, y, z, r)`.
pub(super) type Fma<'a> =
    &'a dyn Fn(&mut [f64; LANES], &[f64; LANES], &[f64; LANES], &[f64; LANES], Round);
/// A chunk-wide unary operation under test (square root, narrowing): `(out, x, r)`.
pub(super) type Unary<'a> = &'a dyn Fn(&mut [f64; LANES], &[f64; LANES], Round);

/// Special values (zeros of both signs, subnormals, the extremes of the normal range,
/// infinities, NaN, values whose sums and products are exact, tie cases) and random ones.
fn values_f64() -> Vec<f64> {
    let mut v = vec![
        0.0,
        -0.0,
        f64::from_bits(1),
        -f64::from_bits(1),
        f64::MIN_POSITIVE,
        -f64::MIN_POSITIVE,
        f64::MIN_POSITIVE / 3.0,
        f64::MAX,
        -f64::MAX,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        1.0,
        -1.0,
        0.1,
        -0.1,
        3.0,
        1.0 + f64::EPSILON,
        1e308,
        -1e-308,
        2f64.powi(-1000),
        2f64.powi(1000),
        2f64.powi(-537),
    ];
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..3000 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        // Random bits: every exponent, sign and payload, including subnormals and NaNs.
        v.push(f64::from_bits(state));
    }
    v
}

/// The values as f32 values (special f32 values, and random f32 bit patterns), widened.
fn values_f32() -> Vec<f64> {
    let mut v: Vec<f64> = vec![
        0.0,
        -0.0,
        f32::from_bits(1) as f64,
        -(f32::from_bits(1) as f64),
        f32::MIN_POSITIVE as f64,
        f32::MAX as f64,
        -(f32::MAX as f64),
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        1.0,
        -1.0,
        0.1f32 as f64,
        3.0,
        (1.0 + f32::EPSILON) as f64,
        2f32.powi(-120) as f64,
        2f32.powi(100) as f64,
    ];
    let mut state = 0x9e37_79b9u32;
    for _ in 0..3000 {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        v.push(f32::from_bits(state) as f64);
    }
    v
}

fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// `narrow` gives [`round::narrow_f32`]'s bits: NaN, infinities, f32::MAX and the f64 values
/// around and beyond it, f32 subnormals and values below them, signed zeros, random bits.
pub(super) fn narrowing(narrow: Unary) {
    let m = f32::MAX as f64;
    let tiny = f32::from_bits(1) as f64;
    let mut xs = vec![
        0.0,
        -0.0,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        m,
        f64::from_bits(m.to_bits() + 1),
        f64::from_bits(m.to_bits() - 1),
        m * 1.5,
        f64::MAX,
        tiny,
        tiny / 2.0,
        tiny * 1.5,
        1e-50,
        f32::MIN_POSITIVE as f64,
        0.1,
        1.0 / 3.0,
        1e30,
    ];
    let more: Vec<f64> = xs.iter().map(|x| -x).collect();
    xs.extend(more);
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..4096 {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        // Bit patterns, half of them with exponents near f32's range.
        let x = f64::from_bits(s);
        xs.push(x);
        xs.push(x.clamp(-1e40, 1e40) * 1e-30);
    }
    for r in [Round::Down, Round::Up] {
        for chunk in xs.chunks(LANES) {
            let mut x = [0.0; LANES];
            x[..chunk.len()].copy_from_slice(chunk);
            let mut out = [0.0; LANES];
            narrow(&mut out, &x, r);
            for l in 0..chunk.len() {
                let want = round::narrow_f32(x[l], r) as f64;
                assert!(
                    same(out[l], want),
                    "narrow {r:?} {:e}: {:e}, software {want:e}",
                    x[l],
                    out[l]
                );
            }
        }
    }
}

/// The scalar rows of one precision, as f64 functions.
struct Rows {
    binary: fn(f64, f64, Round, Op) -> f64,
    fma: fn(f64, f64, f64, Round) -> f64,
    sqrt: fn(f64, Round) -> f64,
}

/// `binary`, `fma` and `sqrt` (f64 operations) give the scalar f64 rows' bits.
pub(super) fn operations_f64(binary: Binary, fma: Fma, sqrt: Unary) {
    let rows = Rows {
        binary: |x, y, r, op| match op {
            Op::Add => round::add_f64(x, y, r),
            Op::Sub => round::sub_f64(x, y, r),
            Op::Mul => round::mul_f64(x, y, r),
            Op::Div => round::div_f64(x, y, r),
        },
        fma: round::fma_f64,
        sqrt: round::sqrt_f64,
    };
    operations(&values_f64(), &rows, binary, fma, sqrt);
}

/// `binary`, `fma` and `sqrt` for an f32 program give the scalar f32 rows' bits.
pub(super) fn operations_f32(binary: Binary, fma: Fma, sqrt: Unary) {
    let rows = Rows {
        binary: |x, y, r, op| {
            let (x, y) = (x as f32, y as f32);
            f64::from(match op {
                Op::Add => round::add_f32(x, y, r),
                Op::Sub => round::sub_f32(x, y, r),
                Op::Mul => round::mul_f32(x, y, r),
                Op::Div => round::div_f32(x, y, r),
            })
        },
        fma: |x, y, z, r| f64::from(round::fma_f32(x as f32, y as f32, z as f32, r)),
        sqrt: |x, r| f64::from(round::sqrt_f32(x as f32, r)),
    };
    operations(&values_f32(), &rows, binary, fma, sqrt);
}

fn operations(v: &[f64], rows: &Rows, binary: Binary, fma: Fma, sqrt: Unary) {
    let n = v.len();
    for r in [Round::Down, Round::Up] {
        for op in [Op::Add, Op::Sub, Op::Mul, Op::Div] {
            for s in 0..n {
                let (mut x, mut y, mut out) = ([0.0; LANES], [0.0; LANES], [0.0; LANES]);
                for l in 0..LANES {
                    x[l] = v[(s + l) % n];
                    y[l] = v[(s * 7 + 3 * l) % n];
                }
                binary(&mut out, &x, &y, r, op);
                for l in 0..LANES {
                    let want = (rows.binary)(x[l], y[l], r, op);
                    assert!(
                        same(out[l], want),
                        "{op:?} {r:?} {:e} {:e}: {:e} against {want:e}",
                        x[l],
                        y[l],
                        out[l]
                    );
                }
            }
        }
        for s in 0..n {
            let (mut x, mut y, mut z, mut out) =
                ([0.0; LANES], [0.0; LANES], [0.0; LANES], [0.0; LANES]);
            for l in 0..LANES {
                x[l] = v[(s + l) % n];
                y[l] = v[(s * 5 + l) % n];
                z[l] = v[(s * 11 + 2 * l) % n];
            }
            fma(&mut out, &x, &y, &z, r);
            for l in 0..LANES {
                let want = (rows.fma)(x[l], y[l], z[l], r);
                assert!(
                    same(out[l], want),
                    "fma {r:?} {:e} {:e} {:e}",
                    x[l],
                    y[l],
                    z[l]
                );
            }
            sqrt(&mut out, &x, r);
            for l in 0..LANES {
                let want = (rows.sqrt)(x[l], r);
                assert!(same(out[l], want), "sqrt {r:?} {:e}", x[l]);
            }
        }
    }
}

/// The three tests of a module whose `narrow_f32`, `binary`, `binary_f32`, `fma`, `fma_f32`,
/// `sqrt` and `sqrt_f32` round over a chunk's lanes (AVX-512's embedded rounding, the switched
/// MXCSR mode), run where `$present()` says the processor has the module's instructions.
macro_rules! tests_against_the_software_path {
    ($present:ident) => {
        /// The narrowing to f32 gives `round::narrow_f32`'s bits.
        #[test]
        fn narrowing_equals_the_software_path() {
            if $present() {
                // SAFETY (each call): the processor has the instructions (checked above).
                same_bits::narrowing(&|out, x, r| unsafe { narrow_f32(out, x, r) });
            }
        }

        /// The f32 operations in both directions give the software path's bits.
        #[test]
        fn f32_rounding_equals_the_software_path() {
            if $present() {
                // SAFETY (each call): as above.
                same_bits::operations_f32(
                    &|out, x, y, r, op| unsafe { binary_f32(out, x, y, r, op) },
                    &|out, x, y, z, r| unsafe { fma_f32(out, x, y, z, r) },
                    &|out, x, r| unsafe { sqrt_f32(out, x, r) },
                );
            }
        }

        /// Every f64 operation in both directions gives the software path's bits.
        #[test]
        fn rounding_equals_the_software_path() {
            if $present() {
                // SAFETY (each call): as above.
                same_bits::operations_f64(
                    &|out, x, y, r, op| unsafe { binary(out, x, y, r, op) },
                    &|out, x, y, z, r| unsafe { fma(out, x, y, z, r) },
                    &|out, x, r| unsafe { sqrt(out, x, r) },
                );
            }
        }
    };
}
pub(super) use tests_against_the_software_path;
