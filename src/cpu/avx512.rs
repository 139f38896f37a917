//! Directed f64 and f32 arithmetic with AVX-512's embedded rounding (`vaddpd {rd-sae}` and friends):
//! one instruction per operation and direction over eight lanes, with no change of the
//! floating-point mode. Each gives the IEEE 754 result rounded in the asked direction, which is
//! what the software path ([`super::lanes`], [`crate::round`]) computes by error-free
//! transformations: the same bits (`tests::rounding_equals_the_software_path` and its f32 and narrowing forms).
//! Subnormals are kept: Rust leaves MXCSR's flush-to-zero and denormals-are-zero off, and
//! embedded rounding changes only the rounding. An f32 program's values are f32 values stored
//! as f64: they are narrowed and widened exactly around the f32 instruction.
//!
//! [`super::eval`] uses these when the processor has AVX-512F (checked at run time) and
//! `IVJIT_CPU_ROUNDING` is not `software`.

use std::arch::x86_64::*;

use super::lanes::Op;
use crate::scalar::Round;

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
    use crate::cpu::same_bits;

    /// Whether the processor has AVX-512F; where it has not, the evaluator must take another
    /// path, and there is nothing to compare.
    fn present() -> bool {
        if std::arch::is_x86_feature_detected!("avx512f") {
            return true;
        }
        assert!(!super::super::hardware_rounding());
        println!("skipped: this processor has no AVX-512F");
        false
    }

    same_bits::tests_against_the_software_path!(present);
}
