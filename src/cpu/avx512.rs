//! Directed f64 arithmetic with AVX-512's embedded rounding (`vaddpd {rd-sae}` and friends):
//! one instruction per operation and direction over eight lanes, with no change of the
//! floating-point mode. Each gives the IEEE 754 result rounded in the asked direction, which is
//! what the software path ([`super::lanes`], [`crate::round`]) computes by error-free
//! transformations: the same bits (`tests::embedded_rounding_equals_the_software_path`).
//! Subnormals are kept: Rust leaves MXCSR's flush-to-zero and denormals-are-zero off, and
//! embedded rounding changes only the rounding.
//!
//! [`super::eval`] uses these when the processor has AVX-512F (checked at run time) and
//! `IVJIT_CPU_ROUNDING` is not `software`.

use std::arch::x86_64::*;

use super::LANES;
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
pub(crate) fn binary(out: &mut [f64; LANES], x: &[f64; LANES], y: &[f64; LANES], r: Round, op: Op) {
    macro_rules! each {
        ($f:ident, $mode:expr) => {
            for v in 0..LANES / 8 {
                // SAFETY: lanes 8v..8v+8 lie inside the three arrays of LANES values.
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
pub(crate) fn fma(
    out: &mut [f64; LANES],
    x: &[f64; LANES],
    y: &[f64; LANES],
    z: &[f64; LANES],
    r: Round,
) {
    macro_rules! each {
        ($mode:expr) => {
            for v in 0..LANES / 8 {
                // SAFETY: lanes 8v..8v+8 lie inside the four arrays of LANES values.
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
pub(crate) fn sqrt(out: &mut [f64; LANES], x: &[f64; LANES], r: Round) {
    macro_rules! each {
        ($mode:expr) => {
            for v in 0..LANES / 8 {
                // SAFETY: lanes 8v..8v+8 lie inside both arrays of LANES values.
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

#[cfg(test)]
mod tests {
    use super::*;
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

    fn same(a: f64, b: f64) -> bool {
        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
    }

    /// Every operation in both directions gives the software path's bits on pairs (and
    /// triples) of special and random values.
    #[test]
    fn embedded_rounding_equals_the_software_path() {
        if !std::arch::is_x86_feature_detected!("avx512f") {
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
