//! Directed f64 and f32 arithmetic with AVX-512's embedded rounding (`vaddpd {rd-sae}` and friends):
//! one instruction per operation and direction over eight lanes, with no change of the
//! floating-point mode. Each gives the IEEE 754 result rounded in the asked direction, which is
//! what the software path ([`super::lanes`], [`crate::round`]) computes by error-free
//! transformations: the same bits (`tests::embedded_rounding_equals_the_software_path`).
//! Subnormals are kept: Rust leaves MXCSR's flush-to-zero and denormals-are-zero off, and
//! embedded rounding changes only the rounding. An f32 program's values are f32 values stored
//! as f64: they are narrowed and widened exactly around the f32 instruction.
//!
//! [`super::eval`] uses these when the processor has AVX-512F (checked at run time) and
//! `IVJIT_CPU_ROUNDING` is not `software`.

use std::arch::x86_64::*;

use crate::scalar::Round;

/// Which binary operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    Add,
    Sub,
    Mul,
    Div,
}

const DOWN: i32 = _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC;
const UP: i32 = _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC;

/// `out[l] = x[l] op y[l]` rounded down or up (`r` is not `Nearest`), every lane.
#[target_feature(enable = "avx512f")]
pub(crate) fn binary<const N: usize>(
    out: &mut [f64; N],
    x: &[f64; N],
    y: &[f64; N],
    r: Round,
    op: Op,
) {
    macro_rules! each {
        ($f:ident, $mode:expr) => {
            for v in 0..N / 8 {
                // SAFETY: lanes 8v..8v+8 lie inside the three arrays of N values.
                unsafe {
                    let a = _mm512_loadu_pd(x.as_ptr().add(8 * v));
                    let b = _mm512_loadu_pd(y.as_ptr().add(8 * v));
                    _mm512_storeu_pd(out.as_mut_ptr().add(8 * v), $f::<$mode>(a, b));
                }
            }
        };
    }
    match (op, r == Round::Up) {
        (Op::Add, false) => each!(_mm512_add_round_pd, DOWN),
        (Op::Add, true) => each!(_mm512_add_round_pd, UP),
        (Op::Sub, false) => each!(_mm512_sub_round_pd, DOWN),
        (Op::Sub, true) => each!(_mm512_sub_round_pd, UP),
        (Op::Mul, false) => each!(_mm512_mul_round_pd, DOWN),
        (Op::Mul, true) => each!(_mm512_mul_round_pd, UP),
        (Op::Div, false) => each!(_mm512_div_round_pd, DOWN),
        (Op::Div, true) => each!(_mm512_div_round_pd, UP),
    }
}

/// `out[l] = x[l] * y[l] + z[l]` with one rounding, down or up, every lane.
#[target_feature(enable = "avx512f")]
pub(crate) fn fma<const N: usize>(
    out: &mut [f64; N],
    x: &[f64; N],
    y: &[f64; N],
    z: &[f64; N],
    r: Round,
) {
    macro_rules! each {
        ($mode:expr) => {
            for v in 0..N / 8 {
                // SAFETY: lanes 8v..8v+8 lie inside the four arrays of N values.
                unsafe {
                    let a = _mm512_loadu_pd(x.as_ptr().add(8 * v));
                    let b = _mm512_loadu_pd(y.as_ptr().add(8 * v));
                    let c = _mm512_loadu_pd(z.as_ptr().add(8 * v));
                    let d = _mm512_fmadd_round_pd::<$mode>(a, b, c);
                    _mm512_storeu_pd(out.as_mut_ptr().add(8 * v), d);
                }
            }
        };
    }
    if r == Round::Up {
        each!(UP)
    } else {
        each!(DOWN)
    }
}

/// `out[l] = sqrt(x[l])` rounded down or up, every lane.
#[target_feature(enable = "avx512f")]
pub(crate) fn sqrt<const N: usize>(out: &mut [f64; N], x: &[f64; N], r: Round) {
    macro_rules! each {
        ($mode:expr) => {
            for v in 0..N / 8 {
                // SAFETY: lanes 8v..8v+8 lie inside both arrays of N values.
                unsafe {
                    let a = _mm512_loadu_pd(x.as_ptr().add(8 * v));
                    _mm512_storeu_pd(
                        out.as_mut_ptr().add(8 * v),
                        _mm512_sqrt_round_pd::<$mode>(a),
                    );
                }
            }
        };
    }
    if r == Round::Up {
        each!(UP)
    } else {
        each!(DOWN)
    }
}

/// `out[l]` = `x[l]` rounded down or up to f32 (stored widened to f64), every lane: one
/// converting instruction with embedded rounding, the bits of [`crate::round::narrow_f32`]
/// (overflow to MAX or infinity as the direction says, gradual underflow, NaN kept; a unit test).
#[target_feature(enable = "avx512f")]
pub(crate) fn narrow_f32<const N: usize>(out: &mut [f64; N], x: &[f64; N], r: Round) {
    macro_rules! each {
        ($mode:expr) => {
            for v in 0..N / 8 {
                // SAFETY: lanes 8v..8v+8 lie inside both arrays of N values.
                unsafe {
                    let a = _mm512_loadu_pd(x.as_ptr().add(8 * v));
                    let f = _mm512_cvt_roundpd_ps::<$mode>(a);
                    _mm512_storeu_pd(out.as_mut_ptr().add(8 * v), _mm512_cvtps_pd(f));
                }
            }
        };
    }
    if r == Round::Up {
        each!(UP)
    } else {
        each!(DOWN)
    }
}

/// Eight lanes of f32 values stored as f64, as a 512-bit f32 vector (upper half zero): every
/// value of an f32 program is an f32 value, so the conversion is exact.
#[target_feature(enable = "avx512f")]
fn load_f32<const N: usize>(p: &[f64; N], v: usize) -> __m512 {
    // SAFETY: lanes 8v..8v+8 lie inside the array of N values.
    let d = unsafe { _mm512_loadu_pd(p.as_ptr().add(8 * v)) };
    _mm512_zextps256_ps512(_mm512_cvtpd_ps(d))
}

/// Stores the low eight f32 lanes of `r` widened to f64 (exact) at lanes 8v..8v+8 of `out`.
#[target_feature(enable = "avx512f")]
fn store_f32<const N: usize>(out: &mut [f64; N], v: usize, r: __m512) {
    let d = _mm512_cvtps_pd(_mm512_castps512_ps256(r));
    // SAFETY: lanes 8v..8v+8 lie inside the array of N values.
    unsafe { _mm512_storeu_pd(out.as_mut_ptr().add(8 * v), d) }
}

/// [`binary`] for an f32 program (values stored as f64): the f32 operation rounded down or up.
#[target_feature(enable = "avx512f")]
pub(crate) fn binary_f32<const N: usize>(
    out: &mut [f64; N],
    x: &[f64; N],
    y: &[f64; N],
    r: Round,
    op: Op,
) {
    macro_rules! each {
        ($f:ident, $mode:expr) => {
            for v in 0..N / 8 {
                let (a, b) = (load_f32(x, v), load_f32(y, v));
                store_f32(out, v, $f::<$mode>(a, b));
            }
        };
    }
    match (op, r == Round::Up) {
        (Op::Add, false) => each!(_mm512_add_round_ps, DOWN),
        (Op::Add, true) => each!(_mm512_add_round_ps, UP),
        (Op::Sub, false) => each!(_mm512_sub_round_ps, DOWN),
        (Op::Sub, true) => each!(_mm512_sub_round_ps, UP),
        (Op::Mul, false) => each!(_mm512_mul_round_ps, DOWN),
        (Op::Mul, true) => each!(_mm512_mul_round_ps, UP),
        (Op::Div, false) => each!(_mm512_div_round_ps, DOWN),
        (Op::Div, true) => each!(_mm512_div_round_ps, UP),
    }
}

/// [`fma`] for an f32 program: one f32 rounding, down or up.
#[target_feature(enable = "avx512f")]
pub(crate) fn fma_f32<const N: usize>(
    out: &mut [f64; N],
    x: &[f64; N],
    y: &[f64; N],
    z: &[f64; N],
    r: Round,
) {
    for v in 0..N / 8 {
        let (a, b, c) = (load_f32(x, v), load_f32(y, v), load_f32(z, v));
        let d = if r == Round::Up {
            _mm512_fmadd_round_ps::<UP>(a, b, c)
        } else {
            _mm512_fmadd_round_ps::<DOWN>(a, b, c)
        };
        store_f32(out, v, d);
    }
}

/// [`sqrt`] for an f32 program: the f32 root, rounded down or up.
#[target_feature(enable = "avx512f")]
pub(crate) fn sqrt_f32<const N: usize>(out: &mut [f64; N], x: &[f64; N], r: Round) {
    for v in 0..N / 8 {
        let a = load_f32(x, v);
        let d = if r == Round::Up {
            _mm512_sqrt_round_ps::<UP>(a)
        } else {
            _mm512_sqrt_round_ps::<DOWN>(a)
        };
        store_f32(out, v, d);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::LANES;
    use crate::round;

    /// Special values (zeros of both signs, subnormals, the extremes of the normal range,
    /// infinities, NaN, values whose sums and products are exact, tie cases) and random ones.
    fn values() -> Vec<f64> {
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

    /// The narrowing to f32 by embedded rounding gives `round::narrow_f32`'s bits: special
    /// values (NaN, infinities, f32::MAX and the f64 values around and beyond it, f32
    /// subnormals and values below them, signed zeros) and random bit patterns, both
    /// directions.
    #[test]
    fn embedded_narrowing_equals_the_software_path() {
        if !crate::round::hardware() {
            eprintln!("skipped: the processor has no AVX-512F");
            return;
        }
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
                // SAFETY: hardware() says the processor has AVX-512F.
                unsafe { narrow_f32(&mut out, &x, r) };
                for l in 0..chunk.len() {
                    let want = crate::round::narrow_f32(x[l], r) as f64;
                    assert!(
                        out[l].to_bits() == want.to_bits() || (out[l].is_nan() && want.is_nan()),
                        "{r:?} {:e}: {:e} embedded, {:e} software",
                        x[l],
                        out[l],
                        want
                    );
                }
            }
        }
    }

    /// The f32 operations in both directions give the software path's bits (the scalar f32
    /// functions, widened) on pairs and triples of special and random f32 values.
    #[test]
    fn embedded_f32_rounding_equals_the_software_path() {
        if !std::arch::is_x86_feature_detected!("avx512f") {
            // Nothing to compare here; the evaluator must then take the software path.
            assert!(!super::super::hardware_rounding());
            println!("skipped: this processor has no AVX-512F");
            return;
        }
        let v = values_f32();
        let n = v.len();
        let f = |x: f64| x as f32;
        for r in [Round::Down, Round::Up] {
            for (op, soft) in [
                (Op::Add, round::add_f32 as fn(f32, f32, Round) -> f32),
                (Op::Sub, round::sub_f32),
                (Op::Mul, round::mul_f32),
                (Op::Div, round::div_f32),
            ] {
                for s in 0..n {
                    let (mut x, mut y, mut out) = ([0.0; LANES], [0.0; LANES], [0.0; LANES]);
                    for l in 0..LANES {
                        x[l] = v[(s + l) % n];
                        y[l] = v[(s * 7 + 3 * l) % n];
                    }
                    // SAFETY: the processor has AVX-512F (checked above).
                    unsafe { binary_f32(&mut out, &x, &y, r, op) };
                    for l in 0..LANES {
                        let want = soft(f(x[l]), f(y[l]), r) as f64;
                        assert!(same(out[l], want), "{op:?} {r:?} f32 {:e} {:e}", x[l], y[l]);
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
                // SAFETY: as above.
                unsafe { fma_f32(&mut out, &x, &y, &z, r) };
                for l in 0..LANES {
                    let want = round::fma_f32(f(x[l]), f(y[l]), f(z[l]), r) as f64;
                    assert!(
                        same(out[l], want),
                        "fma {r:?} f32 {:e} {:e} {:e}",
                        x[l],
                        y[l],
                        z[l]
                    );
                }
                // SAFETY: as above.
                unsafe { sqrt_f32(&mut out, &x, r) };
                for l in 0..LANES {
                    let want = round::sqrt_f32(f(x[l]), r) as f64;
                    assert!(same(out[l], want), "sqrt {r:?} f32 {:e}", x[l]);
                }
            }
        }
    }

    fn same(a: f64, b: f64) -> bool {
        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
    }

    /// Every operation in both directions gives the software path's bits on pairs (and
    /// triples) of special and random values.
    #[test]
    fn embedded_rounding_equals_the_software_path() {
        if !std::arch::is_x86_feature_detected!("avx512f") {
            // Nothing to compare here; the evaluator must then take the software path.
            assert!(!super::super::hardware_rounding());
            println!("skipped: this processor has no AVX-512F");
            return;
        }
        let v = values();
        let n = v.len();
        for r in [Round::Down, Round::Up] {
            for (op, soft) in [
                (Op::Add, round::add_f64 as fn(f64, f64, Round) -> f64),
                (Op::Sub, round::sub_f64),
                (Op::Mul, round::mul_f64),
                (Op::Div, round::div_f64),
            ] {
                for s in 0..n {
                    let (mut x, mut y, mut out) = ([0.0; LANES], [0.0; LANES], [0.0; LANES]);
                    for l in 0..LANES {
                        x[l] = v[(s + l) % n];
                        y[l] = v[(s * 7 + 3 * l) % n];
                    }
                    // SAFETY: the processor has AVX-512F (checked above).
                    unsafe { binary(&mut out, &x, &y, r, op) };
                    for l in 0..LANES {
                        let want = soft(x[l], y[l], r);
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
                // SAFETY: as above.
                unsafe { fma(&mut out, &x, &y, &z, r) };
                for l in 0..LANES {
                    let want = round::fma_f64(x[l], y[l], z[l], r);
                    assert!(
                        same(out[l], want),
                        "fma {r:?} {:e} {:e} {:e}",
                        x[l],
                        y[l],
                        z[l]
                    );
                }
                // SAFETY: as above.
                unsafe { sqrt(&mut out, &x, r) };
                for l in 0..LANES {
                    let want = round::sqrt_f64(x[l], r);
                    assert!(same(out[l], want), "sqrt {r:?} {:e}", x[l]);
                }
            }
        }
    }
}
