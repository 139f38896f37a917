//! Eight f64 lanes ([`F64x8`]) or sixteen f32 lanes ([`F32x16`]) of one AVX-512 register as an
//! [`Ops`] value, so that the operations generated from the lowering (`crate::lower::generated`,
//! generic over [`Ops`]) run on a vector of boxes at once: the tape interpreter's lanes
//! (`crate::search::tape`).
//!
//! Each method is the scalar row of [`crate::round`] lane by lane, with the same bits: directed
//! operations by embedded rounding (`vaddpd {rd-sae}`; the scalar rows use the same
//! instructions on one lane when the processor has AVX-512F, and the software path equals them,
//! `round::tests::embedded_scalars_equal_the_software_ones`), comparisons ordered (false on
//! NaN), and `min`/`max` with [`crate::round::min_f64`]'s rules (a NaN operand gives the other,
//! equal values their bitwise or/and so that -0 < +0). The tape's lanes test compares vector
//! and one-box evaluation bit for bit.
//!
//! # Safety
//! Every method executes AVX-512F instructions. The types are used only inside functions
//! compiled for AVX-512F (`#[target_feature(enable = "avx512f")]`) that are called after
//! [`crate::round::hardware`] said the processor has it; the methods are `#[inline(always)]`
//! so that they compile into those functions.

use std::arch::x86_64::*;

use crate::round::Round;
use crate::scalar::emit::Ops;

/// Eight f64 values.
#[derive(Clone, Copy)]
pub(crate) struct F64x8(pub(crate) __m512d);

/// Sixteen f32 values.
#[derive(Clone, Copy)]
pub(crate) struct F32x16(pub(crate) __m512);

const DOWN: i32 = _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC;
const UP: i32 = _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC;
const NEAREST: i32 = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

/// `$f::<MODE>(args)` with the mode of the rounding `$r`.
macro_rules! rounded {
    ($f:ident($($arg:expr),*), $r:expr) => {
        match $r {
            Round::Down => $f::<DOWN>($($arg),*),
            Round::Up => $f::<UP>($($arg),*),
            Round::Nearest => $f::<NEAREST>($($arg),*),
        }
    };
}

impl Ops for F64x8 {
    type Mask = __mmask8;
    #[inline(always)]
    fn exact(x: f64) -> F64x8 {
        // SAFETY: AVX-512F (module docs).
        unsafe { F64x8(_mm512_set1_pd(x)) }
    }
    #[inline(always)]
    fn mask(b: bool) -> __mmask8 {
        if b {
            0xff
        } else {
            0
        }
    }
    #[inline(always)]
    fn is_nan(self) -> __mmask8 {
        // SAFETY: AVX-512F (module docs).
        unsafe { _mm512_cmp_pd_mask::<_CMP_UNORD_Q>(self.0, self.0) }
    }
    #[inline(always)]
    fn less(self, b: F64x8) -> __mmask8 {
        // SAFETY: AVX-512F (module docs).
        unsafe { _mm512_cmp_pd_mask::<_CMP_LT_OQ>(self.0, b.0) }
    }
    #[inline(always)]
    fn less_eq(self, b: F64x8) -> __mmask8 {
        // SAFETY: AVX-512F (module docs).
        unsafe { _mm512_cmp_pd_mask::<_CMP_LE_OQ>(self.0, b.0) }
    }
    #[inline(always)]
    fn greater(self, b: F64x8) -> __mmask8 {
        // SAFETY: AVX-512F (module docs).
        unsafe { _mm512_cmp_pd_mask::<_CMP_GT_OQ>(self.0, b.0) }
    }
    #[inline(always)]
    fn greater_eq(self, b: F64x8) -> __mmask8 {
        // SAFETY: AVX-512F (module docs).
        unsafe { _mm512_cmp_pd_mask::<_CMP_GE_OQ>(self.0, b.0) }
    }
    #[inline(always)]
    fn equal(self, b: F64x8) -> __mmask8 {
        // SAFETY: AVX-512F (module docs).
        unsafe { _mm512_cmp_pd_mask::<_CMP_EQ_OQ>(self.0, b.0) }
    }
    #[inline(always)]
    fn select(m: __mmask8, a: F64x8, b: F64x8) -> F64x8 {
        // SAFETY: AVX-512F (module docs). The blend takes its second operand where m is set.
        unsafe { F64x8(_mm512_mask_blend_pd(m, b.0, a.0)) }
    }
    #[inline(always)]
    fn add(self, b: F64x8, r: Round) -> F64x8 {
        // SAFETY: AVX-512F (module docs).
        unsafe { F64x8(rounded!(_mm512_add_round_pd(self.0, b.0), r)) }
    }
    #[inline(always)]
    fn sub(self, b: F64x8, r: Round) -> F64x8 {
        // SAFETY: AVX-512F (module docs).
        unsafe { F64x8(rounded!(_mm512_sub_round_pd(self.0, b.0), r)) }
    }
    #[inline(always)]
    fn mul(self, b: F64x8, r: Round) -> F64x8 {
        // SAFETY: AVX-512F (module docs).
        unsafe { F64x8(rounded!(_mm512_mul_round_pd(self.0, b.0), r)) }
    }
    #[inline(always)]
    fn div(self, b: F64x8, r: Round) -> F64x8 {
        // SAFETY: AVX-512F (module docs).
        unsafe { F64x8(rounded!(_mm512_div_round_pd(self.0, b.0), r)) }
    }
    #[inline(always)]
    fn sqrt(self, r: Round) -> F64x8 {
        // SAFETY: AVX-512F (module docs).
        unsafe { F64x8(rounded!(_mm512_sqrt_round_pd(self.0), r)) }
    }
    #[inline(always)]
    fn neg(self) -> F64x8 {
        // SAFETY: AVX-512F (module docs).
        unsafe {
            let sign = _mm512_set1_epi64(i64::MIN);
            F64x8(_mm512_castsi512_pd(_mm512_xor_si512(
                _mm512_castpd_si512(self.0),
                sign,
            )))
        }
    }
    #[inline(always)]
    fn min(self, b: F64x8) -> F64x8 {
        // SAFETY: AVX-512F (module docs).
        let either = unsafe {
            F64x8(_mm512_castsi512_pd(_mm512_or_si512(
                _mm512_castpd_si512(self.0),
                _mm512_castpd_si512(b.0),
            )))
        };
        min_max(self, b, self.less(b), b.less(self), either)
    }
    #[inline(always)]
    fn max(self, b: F64x8) -> F64x8 {
        // SAFETY: AVX-512F (module docs).
        let both = unsafe {
            F64x8(_mm512_castsi512_pd(_mm512_and_si512(
                _mm512_castpd_si512(self.0),
                _mm512_castpd_si512(b.0),
            )))
        };
        min_max(self, b, self.greater(b), b.greater(self), both)
    }
}

impl Ops for F32x16 {
    type Mask = __mmask16;
    #[inline(always)]
    fn exact(x: f64) -> F32x16 {
        // SAFETY: AVX-512F (module docs).
        unsafe { F32x16(_mm512_set1_ps(x as f32)) }
    }
    #[inline(always)]
    fn mask(b: bool) -> __mmask16 {
        if b {
            0xffff
        } else {
            0
        }
    }
    #[inline(always)]
    fn is_nan(self) -> __mmask16 {
        // SAFETY: AVX-512F (module docs).
        unsafe { _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(self.0, self.0) }
    }
    #[inline(always)]
    fn less(self, b: F32x16) -> __mmask16 {
        // SAFETY: AVX-512F (module docs).
        unsafe { _mm512_cmp_ps_mask::<_CMP_LT_OQ>(self.0, b.0) }
    }
    #[inline(always)]
    fn less_eq(self, b: F32x16) -> __mmask16 {
        // SAFETY: AVX-512F (module docs).
        unsafe { _mm512_cmp_ps_mask::<_CMP_LE_OQ>(self.0, b.0) }
    }
    #[inline(always)]
    fn greater(self, b: F32x16) -> __mmask16 {
        // SAFETY: AVX-512F (module docs).
        unsafe { _mm512_cmp_ps_mask::<_CMP_GT_OQ>(self.0, b.0) }
    }
    #[inline(always)]
    fn greater_eq(self, b: F32x16) -> __mmask16 {
        // SAFETY: AVX-512F (module docs).
        unsafe { _mm512_cmp_ps_mask::<_CMP_GE_OQ>(self.0, b.0) }
    }
    #[inline(always)]
    fn equal(self, b: F32x16) -> __mmask16 {
        // SAFETY: AVX-512F (module docs).
        unsafe { _mm512_cmp_ps_mask::<_CMP_EQ_OQ>(self.0, b.0) }
    }
    #[inline(always)]
    fn select(m: __mmask16, a: F32x16, b: F32x16) -> F32x16 {
        // SAFETY: AVX-512F (module docs). The blend takes its second operand where m is set.
        unsafe { F32x16(_mm512_mask_blend_ps(m, b.0, a.0)) }
    }
    #[inline(always)]
    fn add(self, b: F32x16, r: Round) -> F32x16 {
        // SAFETY: AVX-512F (module docs).
        unsafe { F32x16(rounded!(_mm512_add_round_ps(self.0, b.0), r)) }
    }
    #[inline(always)]
    fn sub(self, b: F32x16, r: Round) -> F32x16 {
        // SAFETY: AVX-512F (module docs).
        unsafe { F32x16(rounded!(_mm512_sub_round_ps(self.0, b.0), r)) }
    }
    #[inline(always)]
    fn mul(self, b: F32x16, r: Round) -> F32x16 {
        // SAFETY: AVX-512F (module docs).
        unsafe { F32x16(rounded!(_mm512_mul_round_ps(self.0, b.0), r)) }
    }
    #[inline(always)]
    fn div(self, b: F32x16, r: Round) -> F32x16 {
        // SAFETY: AVX-512F (module docs).
        unsafe { F32x16(rounded!(_mm512_div_round_ps(self.0, b.0), r)) }
    }
    #[inline(always)]
    fn sqrt(self, r: Round) -> F32x16 {
        // SAFETY: AVX-512F (module docs).
        unsafe { F32x16(rounded!(_mm512_sqrt_round_ps(self.0), r)) }
    }
    #[inline(always)]
    fn neg(self) -> F32x16 {
        // SAFETY: AVX-512F (module docs).
        unsafe {
            let sign = _mm512_set1_epi32(i32::MIN);
            F32x16(_mm512_castsi512_ps(_mm512_xor_si512(
                _mm512_castps_si512(self.0),
                sign,
            )))
        }
    }
    #[inline(always)]
    fn min(self, b: F32x16) -> F32x16 {
        // SAFETY: AVX-512F (module docs).
        let either = unsafe {
            F32x16(_mm512_castsi512_ps(_mm512_or_si512(
                _mm512_castps_si512(self.0),
                _mm512_castps_si512(b.0),
            )))
        };
        min_max(self, b, self.less(b), b.less(self), either)
    }
    #[inline(always)]
    fn max(self, b: F32x16) -> F32x16 {
        // SAFETY: AVX-512F (module docs).
        let both = unsafe {
            F32x16(_mm512_castsi512_ps(_mm512_and_si512(
                _mm512_castps_si512(self.0),
                _mm512_castps_si512(b.0),
            )))
        };
        min_max(self, b, self.greater(b), b.greater(self), both)
    }
}

/// minNum / maxNum from their parts: `a` where `a_wins`, `b` where `b_wins`, `tie` (the
/// bitwise or / and) where they are equal; where one operand is NaN, the other.
#[inline(always)]
pub(crate) fn min_max<T: Ops>(a: T, b: T, a_wins: T::Mask, b_wins: T::Mask, tie: T) -> T {
    let r = T::select(a_wins, a, tie);
    let r = T::select(b_wins, b, r);
    let r = T::select(b.is_nan(), a, r);
    T::select(a.is_nan(), b, r)
}

/// Lanes of interval pairs `(lo, hi)` in memory, as the tape interpreter stores them, to and
/// from a vector of lower bounds and one of upper bounds.
pub(crate) trait Pairs: Ops {
    /// Boxes per vector.
    const WIDTH: usize;
    /// The scalar of the pairs.
    type Scalar;
    /// `WIDTH` pairs from `p` (which holds `2 * WIDTH` scalars).
    ///
    /// # Safety
    /// `p` points to `2 * WIDTH` readable scalars; the processor has the vector type's
    /// instructions (AVX-512F; AVX2 and FMA for [`crate::cpu::avx2::F64x4`]).
    unsafe fn load(p: *const Self::Scalar) -> (Self, Self);
    /// The inverse of [`Pairs::load`].
    ///
    /// # Safety
    /// `p` points to `2 * WIDTH` writable scalars; the processor has the vector type's
    /// instructions.
    unsafe fn store(p: *mut Self::Scalar, v: (Self, Self));
}

impl Pairs for F64x8 {
    const WIDTH: usize = 8;
    type Scalar = f64;
    #[inline(always)]
    unsafe fn load(p: *const f64) -> (F64x8, F64x8) {
        // SAFETY: the caller's contract.
        unsafe {
            let (a, b) = (_mm512_loadu_pd(p), _mm512_loadu_pd(p.add(8)));
            let even = _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14);
            let odd = _mm512_setr_epi64(1, 3, 5, 7, 9, 11, 13, 15);
            (
                F64x8(_mm512_permutex2var_pd(a, even, b)),
                F64x8(_mm512_permutex2var_pd(a, odd, b)),
            )
        }
    }
    #[inline(always)]
    unsafe fn store(p: *mut f64, (lo, hi): (F64x8, F64x8)) {
        // SAFETY: the caller's contract.
        unsafe {
            let first = _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11);
            let second = _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15);
            _mm512_storeu_pd(p, _mm512_permutex2var_pd(lo.0, first, hi.0));
            _mm512_storeu_pd(p.add(8), _mm512_permutex2var_pd(lo.0, second, hi.0));
        }
    }
}

impl Pairs for F32x16 {
    const WIDTH: usize = 16;
    type Scalar = f32;
    #[inline(always)]
    unsafe fn load(p: *const f32) -> (F32x16, F32x16) {
        // SAFETY: the caller's contract.
        unsafe {
            let (a, b) = (_mm512_loadu_ps(p), _mm512_loadu_ps(p.add(16)));
            let even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
            let odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
            (
                F32x16(_mm512_permutex2var_ps(a, even, b)),
                F32x16(_mm512_permutex2var_ps(a, odd, b)),
            )
        }
    }
    #[inline(always)]
    unsafe fn store(p: *mut f32, (lo, hi): (F32x16, F32x16)) {
        // SAFETY: the caller's contract.
        unsafe {
            let first = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
            let second =
                _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
            _mm512_storeu_ps(p, _mm512_permutex2var_ps(lo.0, first, hi.0));
            _mm512_storeu_ps(p.add(16), _mm512_permutex2var_ps(lo.0, second, hi.0));
        }
    }
}
