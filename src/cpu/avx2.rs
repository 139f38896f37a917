//! Four f64 lanes of one AVX2 register as an [`Ops`] value ([`F64x4`]): the tape interpreter's
//! vectors on processors with AVX2 and FMA but not AVX-512 (most x86-64 processors before 2022;
//! with AVX-512 the interpreter runs [`super::simd::F64x8`], rounding by embedded rounding)
//! where the rounding mode is not switched (`IVJIT_CPU_ROUNDING=software`, or the start-up
//! check failed), and [`F32x4`] likewise for f32 programs; where it is, f64 tapes run [`super::upward::F64x4Up`] and f32 tapes
//! [`super::upward::F32x8Up`] inside an upward-rounding region per instruction instead.
//!
//! AVX2 has no directed rounding that does not switch the MXCSR mode, and these vectors are
//! values that Rust code computes with (the tape interpreter's generated interval operations),
//! which must run in round-to-nearest; so each directed operation is [`super::lanes`]' software
//! fast path on four lanes at once. (The chunked evaluator, whose instructions each run over a
//! whole chunk, switches the mode inside one assembly block per instruction instead,
//! `super::mxcsr`, and runs these vectors only where that is not used.) The fast path: the
//! round-to-nearest result, its error term (TwoSum for sums, the FMA residual for products,
//! quotients and square roots), and a one-ulp step on the bits in the asked direction where the
//! error says the nearest result went the wrong way; exact zeros with their IEEE signs. A lane the fast path
//! does not cover (overflow, magnitudes below 2^-960, infinities, NaN) is recomputed by the
//! scalar row ([`Ops`] for f64, `crate::round`): the fast path is that row's own first branch,
//! so every lane has the scalar row's bits (`tests::vector_operations_equal_the_scalar_rows`
//! checks it on special and random values). Comparisons are ordered (false on NaN) and
//! `min`/`max` follow [`crate::round::min_f64`]'s rules, as in `simd`.
//!
//! # Safety
//! Every method executes AVX, AVX2 and FMA instructions. The type is used only inside functions
//! compiled for them (`#[target_feature(enable = "avx2,fma")]`) that are called after the
//! processor was found to have them; the methods are `#[inline(always)]` so that they compile
//! into those functions.

use std::arch::x86_64::*;

use crate::round::Round;
use crate::scalar::emit::Ops;

/// Four f64 values.
#[derive(Clone, Copy)]
pub(crate) struct F64x4(pub(crate) __m256d);

/// A comparison's outcome per lane: all bits set where it holds, none elsewhere.
#[derive(Clone, Copy)]
pub(crate) struct Mask4(__m256d);

/// 2^-960: the magnitude from which `crate::round`'s fast paths know the error's sign from one
/// FMA (as `lanes::TWO_M960`).
const TWO_M960: f64 = f64::from_bits(63 << 52);

/// 2^1000: the bound of [`crate::round::fma_f64`]'s fast branch on the product and the addend.
const TWO_P1000: f64 = f64::from_bits(2023 << 52);

impl std::ops::BitAnd for Mask4 {
    type Output = Mask4;
    #[inline(always)]
    fn bitand(self, b: Mask4) -> Mask4 {
        // SAFETY: AVX (module docs).
        unsafe { Mask4(_mm256_and_pd(self.0, b.0)) }
    }
}

impl std::ops::BitOr for Mask4 {
    type Output = Mask4;
    #[inline(always)]
    fn bitor(self, b: Mask4) -> Mask4 {
        // SAFETY: AVX (module docs).
        unsafe { Mask4(_mm256_or_pd(self.0, b.0)) }
    }
}

impl std::ops::Not for Mask4 {
    type Output = Mask4;
    #[inline(always)]
    fn not(self) -> Mask4 {
        // SAFETY: AVX (module docs).
        unsafe {
            Mask4(_mm256_xor_pd(
                self.0,
                _mm256_castsi256_pd(_mm256_set1_epi64x(-1)),
            ))
        }
    }
}

/// `v` compared with `w` by predicate `P` (an `_CMP_*` constant), as a vector of masks.
#[inline(always)]
fn cmp<const P: i32>(v: __m256d, w: __m256d) -> __m256d {
    // SAFETY: AVX (module docs).
    unsafe { _mm256_cmp_pd::<P>(v, w) }
}

/// The bits of `s` moved one ulp up where `e > 0` (`up`) or down where `e < 0`: `lanes`' step
/// on four lanes (+1 on the bits moves a positive value away from zero, -1 a negative one).
/// Lanes where `s` is zero or not finite are taken care of by the caller.
#[inline(always)]
fn step(s: __m256d, e: __m256d, up: bool) -> __m256d {
    // SAFETY: AVX and AVX2 (module docs).
    unsafe {
        let b = _mm256_castpd_si256(s);
        // -1 where the sign bit is set, +1 elsewhere.
        let negative = _mm256_cmpgt_epi64(_mm256_setzero_si256(), b);
        let away = _mm256_or_si256(negative, _mm256_set1_epi64x(1));
        let zero = _mm256_setzero_pd();
        let moved = if up {
            let wrong = _mm256_castpd_si256(_mm256_cmp_pd::<_CMP_GT_OQ>(e, zero));
            _mm256_add_epi64(b, _mm256_and_si256(wrong, away))
        } else {
            let wrong = _mm256_castpd_si256(_mm256_cmp_pd::<_CMP_LT_OQ>(e, zero));
            _mm256_sub_epi64(b, _mm256_and_si256(wrong, away))
        };
        _mm256_castsi256_pd(moved)
    }
}

/// `|v|`.
#[inline(always)]
fn abs(v: __m256d) -> __m256d {
    // SAFETY: AVX (module docs).
    unsafe { _mm256_andnot_pd(_mm256_set1_pd(-0.0), v) }
}

/// Where `lo <= v <= hi` (false on NaN).
#[inline(always)]
fn within(v: __m256d, lo: f64, hi: f64) -> __m256d {
    // SAFETY: AVX (module docs).
    unsafe {
        _mm256_and_pd(
            _mm256_cmp_pd::<_CMP_GE_OQ>(v, _mm256_set1_pd(lo)),
            _mm256_cmp_pd::<_CMP_LE_OQ>(v, _mm256_set1_pd(hi)),
        )
    }
}

/// `fast` where `ok` holds; the lanes where it does not, recomputed by the scalar row `row` of
/// the operands `x` (only when there are such lanes).
#[inline(always)]
fn fixed<const K: usize>(
    fast: __m256d,
    ok: __m256d,
    x: [__m256d; K],
    row: fn([f64; K]) -> f64,
) -> F64x4 {
    // SAFETY: AVX (module docs); the arrays hold four f64 each.
    unsafe {
        let bad = !_mm256_movemask_pd(ok) & 0xf;
        if bad == 0 {
            return F64x4(fast);
        }
        let mut out = [0.0; 4];
        let mut operands = [[0.0; 4]; K];
        _mm256_storeu_pd(out.as_mut_ptr(), fast);
        for (o, v) in operands.iter_mut().zip(x) {
            _mm256_storeu_pd(o.as_mut_ptr(), v);
        }
        slow_lanes(&mut out, &operands, bad, row);
        F64x4(_mm256_loadu_pd(out.as_ptr()))
    }
}

/// The lanes of `bad` (a bit per lane) recomputed by `row`: rare, kept out of the vector code.
#[cold]
#[inline(never)]
fn slow_lanes<const K: usize>(
    out: &mut [f64; 4],
    operands: &[[f64; 4]; K],
    bad: i32,
    row: fn([f64; K]) -> f64,
) {
    for (l, o) in out.iter_mut().enumerate() {
        if bad >> l & 1 != 0 {
            *o = row(std::array::from_fn(|k| operands[k][l]));
        }
    }
}

/// The scalar row of a directed operation as a function of two operands.
macro_rules! row {
    ($f:ident, $r:expr) => {
        match $r {
            Round::Down => |[a, b]: [f64; 2]| <f64 as Ops>::$f(a, b, Round::Down),
            _ => |[a, b]: [f64; 2]| <f64 as Ops>::$f(a, b, Round::Up),
        }
    };
}

impl F64x4 {
    /// `a + b` rounded in direction `up` (else down): [`crate::round::add_f64`]'s TwoSum branch
    /// and its exact zero sums; and where that covers the lane (a finite error: finite
    /// operands, no overflow).
    #[inline(always)]
    fn directed_add(a: __m256d, b: __m256d, up: bool) -> (__m256d, __m256d) {
        // SAFETY: AVX (module docs).
        unsafe {
            let s = _mm256_add_pd(a, b);
            let e = two_sum_err(a, b, s);
            // A zero sum of finite operands is exact: -0 rounding down unless both are +0,
            // +0 rounding up unless both are -0.
            let sign = _mm256_set1_pd(-0.0);
            let zero = if up {
                _mm256_and_pd(_mm256_and_pd(a, b), sign)
            } else {
                _mm256_and_pd(_mm256_or_pd(a, b), sign)
            };
            let is_zero = cmp::<_CMP_EQ_OQ>(s, _mm256_setzero_pd());
            let value = _mm256_blendv_pd(step(s, e, up), zero, is_zero);
            (value, within(abs(e), 0.0, f64::MAX))
        }
    }

    /// `self * b + c` rounded once in direction `r`: [`crate::round::fma_f64`]'s
    /// Boldo-Melquiond branch on four lanes, as `lanes::fma_f64` (`a*b = uh + ul` by one FMA,
    /// `c + uh = th + tl` by TwoSum, `tl + ul` rounded to odd, then `th` plus that rounded in
    /// the direction), where that function takes it (finite nonzero operands with
    /// `2^-960 <= |a*b| <= 2^1000` and `|c| <= 2^1000`), and a zero factor times a finite one;
    /// the scalar function elsewhere.
    #[inline(always)]
    pub(crate) fn fma(self, b: F64x4, c: F64x4, r: Round) -> F64x4 {
        let (x, y, z) = (self.0, b.0, c.0);
        // SAFETY: AVX, AVX2 and FMA (module docs).
        unsafe {
            if r == Round::Nearest {
                return F64x4(_mm256_fmadd_pd(x, y, z));
            }
            let up = r == Round::Up;
            let uh = _mm256_mul_pd(x, y);
            let ul = _mm256_fmsub_pd(x, y, uh);
            let th = _mm256_add_pd(z, uh);
            let tl = two_sum_err(z, uh, th);
            let v0 = _mm256_add_pd(tl, ul);
            let v = odd(v0, two_sum_err(tl, ul, v0));
            let s = _mm256_add_pd(th, v);
            let e = two_sum_err(th, v, s);
            let zero = _mm256_setzero_pd();
            let zero_factor = _mm256_or_pd(cmp::<_CMP_EQ_OQ>(x, zero), cmp::<_CMP_EQ_OQ>(y, zero));
            let zero_product = _mm256_and_pd(cmp::<_CMP_EQ_OQ>(uh, zero), zero_factor);
            let finite_c = within(abs(z), 0.0, f64::MAX);
            let ok = _mm256_or_pd(
                _mm256_and_pd(
                    within(abs(uh), TWO_M960, TWO_P1000),
                    within(abs(z), 0.0, TWO_P1000),
                ),
                _mm256_and_pd(zero_product, finite_c),
            );
            // A zero factor with a finite other: `c` exactly, or the signed zero of an exact
            // zero sum when c is zero too.
            let sign = _mm256_set1_pd(-0.0);
            let zero_sum = if up {
                _mm256_and_pd(_mm256_and_pd(uh, z), sign)
            } else {
                _mm256_and_pd(_mm256_or_pd(uh, z), sign)
            };
            let by_zero = _mm256_blendv_pd(z, zero_sum, cmp::<_CMP_EQ_OQ>(z, zero));
            // th + v is zero only when a*b + c is (nonzero terms): -0 down, +0 up.
            let exact_zero = _mm256_set1_pd(if up { 0.0 } else { -0.0 });
            let nonzero = _mm256_blendv_pd(step(s, e, up), exact_zero, cmp::<_CMP_EQ_OQ>(s, zero));
            let fast = _mm256_blendv_pd(nonzero, by_zero, zero_product);
            let row = match r {
                Round::Down => |[a, b, c]: [f64; 3]| crate::round::fma_f64(a, b, c, Round::Down),
                _ => |[a, b, c]: [f64; 3]| crate::round::fma_f64(a, b, c, Round::Up),
            };
            fixed(fast, ok, [x, y, z], row)
        }
    }
}

/// The error of `s = a + b` (TwoSum, as [`crate::round::two_sum_err`]).
#[inline(always)]
fn two_sum_err(a: __m256d, b: __m256d, s: __m256d) -> __m256d {
    // SAFETY: AVX (module docs).
    unsafe {
        let bb = _mm256_sub_pd(s, a);
        let aa = _mm256_sub_pd(s, bb);
        _mm256_add_pd(_mm256_sub_pd(a, aa), _mm256_sub_pd(b, bb))
    }
}

/// `v` rounded to odd at 53 bits given `e`, the sign of the exact value minus `v`: an inexact
/// `v` with an even last bit moves one ulp toward the exact value (`lanes`' `odd`).
#[inline(always)]
fn odd(v: __m256d, e: __m256d) -> __m256d {
    // SAFETY: AVX and AVX2 (module docs).
    unsafe {
        let b = _mm256_castpd_si256(v);
        let one = _mm256_set1_epi64x(1);
        let negative = _mm256_cmpgt_epi64(_mm256_setzero_si256(), b);
        let away = _mm256_or_si256(negative, one);
        let zero = _mm256_setzero_pd();
        // Toward the exact value: away from zero where e has v's sign, else toward it.
        let toward = _mm256_blendv_pd(
            _mm256_castsi256_pd(_mm256_sub_epi64(_mm256_setzero_si256(), away)),
            _mm256_castsi256_pd(away),
            cmp::<_CMP_GT_OQ>(e, zero),
        );
        let even = _mm256_cmpeq_epi64(_mm256_and_si256(b, one), _mm256_setzero_si256());
        let inexact = _mm256_castpd_si256(cmp::<_CMP_NEQ_UQ>(e, zero));
        let moves = _mm256_and_si256(_mm256_and_si256(even, inexact), _mm256_castpd_si256(toward));
        _mm256_castsi256_pd(_mm256_add_epi64(b, moves))
    }
}

impl Ops for F64x4 {
    type Mask = Mask4;
    #[inline(always)]
    fn exact(x: f64) -> F64x4 {
        // SAFETY: AVX (module docs).
        unsafe { F64x4(_mm256_set1_pd(x)) }
    }
    #[inline(always)]
    fn mask(b: bool) -> Mask4 {
        // SAFETY: AVX (module docs).
        unsafe { Mask4(_mm256_castsi256_pd(_mm256_set1_epi64x(-i64::from(b)))) }
    }
    #[inline(always)]
    fn is_nan(self) -> Mask4 {
        Mask4(cmp::<_CMP_UNORD_Q>(self.0, self.0))
    }
    #[inline(always)]
    fn less(self, b: F64x4) -> Mask4 {
        Mask4(cmp::<_CMP_LT_OQ>(self.0, b.0))
    }
    #[inline(always)]
    fn less_eq(self, b: F64x4) -> Mask4 {
        Mask4(cmp::<_CMP_LE_OQ>(self.0, b.0))
    }
    #[inline(always)]
    fn greater(self, b: F64x4) -> Mask4 {
        Mask4(cmp::<_CMP_GT_OQ>(self.0, b.0))
    }
    #[inline(always)]
    fn greater_eq(self, b: F64x4) -> Mask4 {
        Mask4(cmp::<_CMP_GE_OQ>(self.0, b.0))
    }
    #[inline(always)]
    fn equal(self, b: F64x4) -> Mask4 {
        Mask4(cmp::<_CMP_EQ_OQ>(self.0, b.0))
    }
    #[inline(always)]
    fn select(m: Mask4, a: F64x4, b: F64x4) -> F64x4 {
        // SAFETY: AVX (module docs). The blend takes its second operand where m is set.
        unsafe { F64x4(_mm256_blendv_pd(b.0, a.0, m.0)) }
    }
    #[inline(always)]
    fn add(self, b: F64x4, r: Round) -> F64x4 {
        if r == Round::Nearest {
            // SAFETY: AVX (module docs).
            return unsafe { F64x4(_mm256_add_pd(self.0, b.0)) };
        }
        let (fast, ok) = F64x4::directed_add(self.0, b.0, r == Round::Up);
        fixed(fast, ok, [self.0, b.0], row!(add, r))
    }
    #[inline(always)]
    fn sub(self, b: F64x4, r: Round) -> F64x4 {
        if r == Round::Nearest {
            // SAFETY: AVX (module docs).
            return unsafe { F64x4(_mm256_sub_pd(self.0, b.0)) };
        }
        // `a - b` as `a + (-b)`, as `round::sub_f64`.
        let minus_b = b.neg().0;
        let (fast, ok) = F64x4::directed_add(self.0, minus_b, r == Round::Up);
        fixed(fast, ok, [self.0, b.0], row!(sub, r))
    }
    #[inline(always)]
    fn mul(self, b: F64x4, r: Round) -> F64x4 {
        let (x, y) = (self.0, b.0);
        // SAFETY: AVX and FMA (module docs).
        unsafe {
            let p = _mm256_mul_pd(x, y);
            if r == Round::Nearest {
                return F64x4(p);
            }
            // TwoProduct: the residual's sign is exact for 2^-960 <= |p| <= MAX; a zero
            // operand times a finite one is an exact signed zero (residual 0: no step).
            let e = _mm256_fmsub_pd(x, y, p);
            let zero = _mm256_setzero_pd();
            let zero_factor = _mm256_or_pd(cmp::<_CMP_EQ_OQ>(x, zero), cmp::<_CMP_EQ_OQ>(y, zero));
            let ok = _mm256_or_pd(
                within(abs(p), TWO_M960, f64::MAX),
                _mm256_and_pd(cmp::<_CMP_EQ_OQ>(p, zero), zero_factor),
            );
            fixed(step(p, e, r == Round::Up), ok, [x, y], row!(mul, r))
        }
    }
    #[inline(always)]
    fn div(self, b: F64x4, r: Round) -> F64x4 {
        let (x, y) = (self.0, b.0);
        // SAFETY: AVX and FMA (module docs).
        unsafe {
            let q = _mm256_div_pd(x, y);
            if r == Round::Nearest {
                return F64x4(q);
            }
            // The remainder x - q*y by one FMA has an exact sign for 2^-960 <= |x| <= MAX, a
            // finite y and a finite nonzero q; x - q has the sign of remainder / y. 0 / y
            // (y not NaN) is an exact signed zero.
            let rem = _mm256_fnmadd_pd(q, y, x);
            let zero = _mm256_setzero_pd();
            let e = _mm256_blendv_pd(rem, _mm256_sub_pd(zero, rem), cmp::<_CMP_LT_OQ>(y, zero));
            let finite_nonzero_q =
                _mm256_and_pd(within(abs(q), 0.0, f64::MAX), cmp::<_CMP_NEQ_UQ>(q, zero));
            let covered = _mm256_and_pd(
                _mm256_and_pd(within(abs(x), TWO_M960, f64::MAX), finite_nonzero_q),
                within(abs(y), 0.0, f64::MAX),
            );
            let zero_quotient =
                _mm256_and_pd(cmp::<_CMP_EQ_OQ>(x, zero), cmp::<_CMP_EQ_OQ>(q, zero));
            let ok = _mm256_or_pd(covered, zero_quotient);
            fixed(step(q, e, r == Round::Up), ok, [x, y], row!(div, r))
        }
    }
    #[inline(always)]
    fn sqrt(self, r: Round) -> F64x4 {
        let x = self.0;
        // SAFETY: AVX and FMA (module docs).
        unsafe {
            let s = _mm256_sqrt_pd(x);
            if r == Round::Nearest {
                return F64x4(s);
            }
            // sqrt(x) - s has the sign of x - s^2, exact by one FMA for 2^-960 <= x <= MAX.
            let rem = _mm256_fnmadd_pd(s, s, x);
            let ok = within(x, TWO_M960, f64::MAX);
            let row = match r {
                Round::Down => |[a]: [f64; 1]| <f64 as Ops>::sqrt(a, Round::Down),
                _ => |[a]: [f64; 1]| <f64 as Ops>::sqrt(a, Round::Up),
            };
            fixed(step(s, rem, r == Round::Up), ok, [x], row)
        }
    }
    #[inline(always)]
    fn neg(self) -> F64x4 {
        // SAFETY: AVX (module docs).
        unsafe { F64x4(_mm256_xor_pd(self.0, _mm256_set1_pd(-0.0))) }
    }
    #[inline(always)]
    fn min(self, b: F64x4) -> F64x4 {
        // SAFETY: AVX (module docs).
        let either = unsafe { F64x4(_mm256_or_pd(self.0, b.0)) };
        super::simd::min_max(self, b, self.less(b), b.less(self), either)
    }
    #[inline(always)]
    fn max(self, b: F64x4) -> F64x4 {
        // SAFETY: AVX (module docs).
        let both = unsafe { F64x4(_mm256_and_pd(self.0, b.0)) };
        super::simd::min_max(self, b, self.greater(b), b.greater(self), both)
    }
}

/// Four f32 values carried exactly in the f64 lanes of one AVX2 register: the f32 tape's
/// vectors. Each directed operation is [`F64x4`]'s in the same direction (exact for products),
/// then rounded to f32 in that direction by [`narrow_step`] (directed roundings compose: every
/// f32 is an f64), as `lanes::binary_f32`; round-to-nearest ones are the f64 result rounded to
/// nearest f32 (the f64 result of two f32 rounds to f32 as the f32 operation would: 53 >= 2 *
/// 24 + 2 bits). A lane whose f32 result this does not cover (zero from underflow, overflow,
/// NaN) is recomputed by the scalar f32 row. Comparisons, choices, `neg`, `min` and `max` are
/// [`F64x4`]'s (exact on f32 values, signed zeros and NaN kept by the conversions).
#[derive(Clone, Copy)]
pub(crate) struct F32x4(pub(crate) __m256d);

impl F32x4 {
    /// `wide`, a directed f64 result of the f32 operands `x`, rounded to f32 in direction `r`;
    /// the lanes not covered by the scalar f32 row `row`.
    #[inline(always)]
    fn narrowed<const K: usize>(
        wide: __m256d,
        r: Round,
        x: [__m256d; K],
        row: fn([f64; K]) -> f64,
    ) -> F32x4 {
        // SAFETY: AVX (module docs).
        unsafe {
            if r == Round::Nearest {
                return F32x4(_mm256_cvtps_pd(_mm256_cvtpd_ps(wide)));
            }
            let (narrow, fine) = narrow_step(wide, r == Round::Up);
            // An f64 result of f32 operands is zero only where the exact one is (sums are
            // multiples of 2^-149, quotients at least 2^-277, square roots of nonzero f32 at
            // least 2^-75 in magnitude): its own signed zero.
            let zero = cmp::<_CMP_EQ_OQ>(wide, _mm256_setzero_pd());
            let fast = _mm256_blendv_pd(narrow, wide, zero);
            F32x4(fixed(fast, _mm256_or_pd(fine, zero), x, row).0)
        }
    }
}

/// The scalar f32 row of a directed operation of two operands carried in f64.
macro_rules! f32_row {
    ($f:ident, $r:expr) => {
        match $r {
            Round::Down => {
                |[a, b]: [f64; 2]| f64::from(<f32 as Ops>::$f(a as f32, b as f32, Round::Down))
            }
            Round::Up => {
                |[a, b]: [f64; 2]| f64::from(<f32 as Ops>::$f(a as f32, b as f32, Round::Up))
            }
            Round::Nearest => {
                |[a, b]: [f64; 2]| f64::from(<f32 as Ops>::$f(a as f32, b as f32, Round::Nearest))
            }
        }
    };
}

impl Ops for F32x4 {
    type Mask = Mask4;
    #[inline(always)]
    fn exact(x: f64) -> F32x4 {
        F32x4(F64x4::exact(f64::from(x as f32)).0)
    }
    #[inline(always)]
    fn mask(b: bool) -> Mask4 {
        F64x4::mask(b)
    }
    #[inline(always)]
    fn is_nan(self) -> Mask4 {
        F64x4(self.0).is_nan()
    }
    #[inline(always)]
    fn less(self, b: F32x4) -> Mask4 {
        F64x4(self.0).less(F64x4(b.0))
    }
    #[inline(always)]
    fn less_eq(self, b: F32x4) -> Mask4 {
        F64x4(self.0).less_eq(F64x4(b.0))
    }
    #[inline(always)]
    fn greater(self, b: F32x4) -> Mask4 {
        F64x4(self.0).greater(F64x4(b.0))
    }
    #[inline(always)]
    fn greater_eq(self, b: F32x4) -> Mask4 {
        F64x4(self.0).greater_eq(F64x4(b.0))
    }
    #[inline(always)]
    fn equal(self, b: F32x4) -> Mask4 {
        F64x4(self.0).equal(F64x4(b.0))
    }
    #[inline(always)]
    fn select(m: Mask4, a: F32x4, b: F32x4) -> F32x4 {
        F32x4(F64x4::select(m, F64x4(a.0), F64x4(b.0)).0)
    }
    #[inline(always)]
    fn add(self, b: F32x4, r: Round) -> F32x4 {
        let wide = F64x4(self.0).add(F64x4(b.0), r);
        F32x4::narrowed(wide.0, r, [self.0, b.0], f32_row!(add, r))
    }
    #[inline(always)]
    fn sub(self, b: F32x4, r: Round) -> F32x4 {
        let wide = F64x4(self.0).sub(F64x4(b.0), r);
        F32x4::narrowed(wide.0, r, [self.0, b.0], f32_row!(sub, r))
    }
    #[inline(always)]
    fn mul(self, b: F32x4, r: Round) -> F32x4 {
        // The f64 product of two f32 is exact.
        let wide = F64x4(self.0).mul(F64x4(b.0), Round::Nearest);
        F32x4::narrowed(wide.0, r, [self.0, b.0], f32_row!(mul, r))
    }
    #[inline(always)]
    fn div(self, b: F32x4, r: Round) -> F32x4 {
        let wide = F64x4(self.0).div(F64x4(b.0), r);
        F32x4::narrowed(wide.0, r, [self.0, b.0], f32_row!(div, r))
    }
    #[inline(always)]
    fn sqrt(self, r: Round) -> F32x4 {
        let wide = F64x4(self.0).sqrt(r);
        let row = match r {
            Round::Down => |[a]: [f64; 1]| f64::from(<f32 as Ops>::sqrt(a as f32, Round::Down)),
            Round::Up => |[a]: [f64; 1]| f64::from(<f32 as Ops>::sqrt(a as f32, Round::Up)),
            Round::Nearest => {
                |[a]: [f64; 1]| f64::from(<f32 as Ops>::sqrt(a as f32, Round::Nearest))
            }
        };
        F32x4::narrowed(wide.0, r, [self.0], row)
    }
    #[inline(always)]
    fn neg(self) -> F32x4 {
        F32x4(F64x4(self.0).neg().0)
    }
    #[inline(always)]
    fn min(self, b: F32x4) -> F32x4 {
        F32x4(F64x4(self.0).min(F64x4(b.0)).0)
    }
    #[inline(always)]
    fn max(self, b: F32x4) -> F32x4 {
        F32x4(F64x4(self.0).max(F64x4(b.0)).0)
    }
}

impl super::simd::Pairs for F32x4 {
    const WIDTH: usize = 4;
    type Scalar = f32;
    /// Four f32 pairs, the lower bounds and the upper ones each widened to f64 (exact).
    #[inline(always)]
    unsafe fn load(p: *const f32) -> (F32x4, F32x4) {
        // SAFETY: the caller's contract.
        unsafe {
            let v = _mm256_loadu_ps(p);
            // lo0 hi0 lo1 hi1 ... -> lo0 lo1 lo2 lo3 hi0 hi1 hi2 hi3.
            let s = _mm256_permutevar8x32_ps(v, _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7));
            (
                F32x4(_mm256_cvtps_pd(_mm256_castps256_ps128(s))),
                F32x4(_mm256_cvtps_pd(_mm256_extractf128_ps::<1>(s))),
            )
        }
    }
    #[inline(always)]
    unsafe fn store(p: *mut f32, (lo, hi): (F32x4, F32x4)) {
        // SAFETY: the caller's contract. The lanes hold f32 values: the conversions are exact.
        unsafe {
            let s = _mm256_set_m128(_mm256_cvtpd_ps(hi.0), _mm256_cvtpd_ps(lo.0));
            let v = _mm256_permutevar8x32_ps(s, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
            _mm256_storeu_ps(p, v);
        }
    }
}

impl super::simd::Pairs for F64x4 {
    const WIDTH: usize = 4;
    type Scalar = f64;
    /// The pairs of boxes 0, 2, 1, 3 in lanes 0 to 3 (the unpacks stay inside 128-bit halves;
    /// every operation is lane by lane and [`super::simd::Pairs::store`] undoes the order).
    #[inline(always)]
    unsafe fn load(p: *const f64) -> (F64x4, F64x4) {
        // SAFETY: the caller's contract.
        unsafe {
            let (a, b) = (_mm256_loadu_pd(p), _mm256_loadu_pd(p.add(4)));
            (
                F64x4(_mm256_unpacklo_pd(a, b)),
                F64x4(_mm256_unpackhi_pd(a, b)),
            )
        }
    }
    #[inline(always)]
    unsafe fn store(p: *mut f64, (lo, hi): (F64x4, F64x4)) {
        // SAFETY: the caller's contract.
        unsafe {
            _mm256_storeu_pd(p, _mm256_unpacklo_pd(lo.0, hi.0));
            _mm256_storeu_pd(p.add(4), _mm256_unpackhi_pd(lo.0, hi.0));
        }
    }
}

/// `out[l] = x[l] op y[l]` rounded in direction `r`, every lane, four at a time by [`F64x4`],
/// or for `f32` values carried in f64 by [`F32x4`] (rounded once to f32): the evaluator's
/// chunks on AVX2 + FMA, with the bits of `lanes::binary_f64` and `lanes::binary_f32`, which
/// are the scalar rows'. Lanes past a last chunk's end hold earlier values and are computed too.
///
/// # Safety
/// The processor has AVX2 and FMA; the caller is compiled for them.
#[inline(always)]
pub(crate) unsafe fn binary<const N: usize>(
    out: &mut [f64; N],
    x: &[f64; N],
    y: &[f64; N],
    r: Round,
    op: super::lanes::Op,
    f32: bool,
) {
    use super::lanes::Op;
    const { assert!(N.is_multiple_of(4), "whole vectors") };
    macro_rules! each {
        ($v:ident, |$a:ident, $b:ident| $e:expr) => {
            for l in (0..N).step_by(4) {
                // SAFETY: lanes l..l + 4 lie inside the arrays (N is a multiple of 4); AVX
                // (this function's contract).
                unsafe {
                    let $a = $v(_mm256_loadu_pd(x.as_ptr().add(l)));
                    let $b = $v(_mm256_loadu_pd(y.as_ptr().add(l)));
                    _mm256_storeu_pd(out.as_mut_ptr().add(l), $e.0);
                }
            }
        };
    }
    macro_rules! by_op {
        ($v:ident) => {
            match op {
                Op::Add => each!($v, |a, b| a.add(b, r)),
                Op::Sub => each!($v, |a, b| a.sub(b, r)),
                Op::Mul => each!($v, |a, b| a.mul(b, r)),
                Op::Div => each!($v, |a, b| a.div(b, r)),
            }
        };
    }
    if f32 {
        by_op!(F32x4)
    } else {
        by_op!(F64x4)
    }
}

/// `p` rounded to f32 in direction `up` (else down), as f64, four lanes: rounded to nearest f32
/// and stepped one f32 ulp on the bits where that went the wrong way (`lanes`' `narrow_step`);
/// and where that covers the lane: an f32 result finite and nonzero.
#[inline(always)]
fn narrow_step(p: __m256d, up: bool) -> (__m256d, __m256d) {
    // SAFETY: AVX and AVX2 (module docs).
    unsafe {
        let n = _mm256_cvtpd_ps(p);
        let back = _mm256_cvtps_pd(n);
        let b = _mm_castps_si128(n);
        // +1 on the bits moves a nonzero value away from zero, -1 towards it.
        let away = _mm_or_si128(_mm_srai_epi32::<31>(b), _mm_set1_epi32(1));
        let wrong = if up {
            cmp::<_CMP_LT_OQ>(back, p)
        } else {
            cmp::<_CMP_GT_OQ>(back, p)
        };
        // The f64 lanes' masks as four 32-bit masks (the low half of each).
        let pick = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
        let wrong = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(
            _mm256_castpd_si256(wrong),
            pick,
        ));
        let step = _mm_and_si128(wrong, away);
        let moved = if up {
            _mm_add_epi32(b, step)
        } else {
            _mm_sub_epi32(b, step)
        };
        let magnitude = _mm_andnot_ps(_mm_set1_ps(-0.0), n);
        let fine = _mm_and_ps(
            _mm_cmp_ps::<_CMP_LE_OQ>(magnitude, _mm_set1_ps(f32::MAX)),
            _mm_cmp_ps::<_CMP_NEQ_UQ>(n, _mm_setzero_ps()),
        );
        let fine = _mm256_castsi256_pd(_mm256_cvtepi32_epi64(_mm_castps_si128(fine)));
        (_mm256_cvtps_pd(_mm_castsi128_ps(moved)), fine)
    }
}

/// `out[l] = x[l] * y[l] + z[l]` rounded once in direction `r`, every lane, four at a time
/// ([`F64x4::fma`]; the evaluator's chunks on AVX2 + FMA, as [`binary`]).
///
/// # Safety
/// As [`binary`].
#[inline(always)]
pub(crate) unsafe fn fma<const N: usize>(
    out: &mut [f64; N],
    x: &[f64; N],
    y: &[f64; N],
    z: &[f64; N],
    r: Round,
) {
    const { assert!(N.is_multiple_of(4), "whole vectors") };
    for l in (0..N).step_by(4) {
        // SAFETY: lanes l..l + 4 lie inside the arrays; AVX (this function's contract).
        unsafe {
            let a = F64x4(_mm256_loadu_pd(x.as_ptr().add(l)));
            let b = F64x4(_mm256_loadu_pd(y.as_ptr().add(l)));
            let c = F64x4(_mm256_loadu_pd(z.as_ptr().add(l)));
            _mm256_storeu_pd(out.as_mut_ptr().add(l), a.fma(b, c, r).0);
        }
    }
}

/// `out[l] = sqrt(x[l])` rounded in direction `r`, every lane, four at a time (as [`binary`]).
///
/// # Safety
/// As [`binary`].
#[inline(always)]
pub(crate) unsafe fn sqrt<const N: usize>(out: &mut [f64; N], x: &[f64; N], r: Round) {
    const { assert!(N.is_multiple_of(4), "whole vectors") };
    for l in (0..N).step_by(4) {
        // SAFETY: lanes l..l + 4 lie inside the arrays; AVX (this function's contract).
        unsafe {
            let a = F64x4(_mm256_loadu_pd(x.as_ptr().add(l)));
            _mm256_storeu_pd(out.as_mut_ptr().add(l), a.sqrt(r).0);
        }
    }
}

/// Whether the processor has AVX2 and FMA (detected once).
pub(crate) fn available() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::simd::Pairs;

    /// Special values (zeros, subnormals, the 2^-960 threshold, near-overflow, infinities,
    /// NaN) and random bits of every exponent.
    fn values() -> Vec<f64> {
        let t = TWO_M960;
        let mut v = vec![
            0.0,
            f64::from_bits(1),
            f64::MIN_POSITIVE,
            t,
            f64::from_bits(t.to_bits() - 1),
            f64::from_bits(t.to_bits() + 1),
            1.0,
            1.0 + f64::EPSILON,
            3.0,
            0.1,
            0.7,
            1e300,
            f64::MAX,
            f64::INFINITY,
            f64::NAN,
            2f64.powi(-500),
            2f64.powi(-520),
            2f64.powi(512),
            1e-310,
        ];
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        for k in 0..40 {
            s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            // Every fourth of moderate range, the others any bits (and so any exponent).
            v.push(if k % 4 == 0 {
                (z >> 11) as f64 / (1u64 << 40) as f64
            } else {
                f64::from_bits(z)
            });
        }
        let negatives: Vec<f64> = v.iter().map(|x| -x).collect();
        v.extend(negatives);
        v
    }

    /// `f` over four lanes at a time, in a function compiled for AVX2 + FMA.
    #[target_feature(enable = "avx2,fma")]
    fn four(a: [f64; 4], b: [f64; 4], f: fn(F64x4, F64x4) -> F64x4) -> [f64; 4] {
        let mut out = [0.0; 4];
        // SAFETY: the arrays hold four f64.
        unsafe {
            let v = f(
                F64x4(_mm256_loadu_pd(a.as_ptr())),
                F64x4(_mm256_loadu_pd(b.as_ptr())),
            );
            _mm256_storeu_pd(out.as_mut_ptr(), v.0);
        }
        out
    }

    /// The operations the vector types are checked on: (name, the vector type's, the scalar
    /// type's), each the same expression over [`Ops`].
    macro_rules! rows {
        ($v:ty, $s:ty) => {{
            macro_rules! row {
                ($name:literal, |$a:ident, $b:ident| $e:expr) => {
                    (
                        $name,
                        (|$a: $v, $b: $v| $e) as fn($v, $v) -> $v,
                        (|$a: $s, $b: $s| $e) as fn($s, $s) -> $s,
                    )
                };
            }
            vec![
                row!("add down", |a, b| Ops::add(a, b, Round::Down)),
                row!("add up", |a, b| Ops::add(a, b, Round::Up)),
                row!("add nearest", |a, b| Ops::add(a, b, Round::Nearest)),
                row!("sub down", |a, b| Ops::sub(a, b, Round::Down)),
                row!("sub up", |a, b| Ops::sub(a, b, Round::Up)),
                row!("mul down", |a, b| Ops::mul(a, b, Round::Down)),
                row!("mul up", |a, b| Ops::mul(a, b, Round::Up)),
                row!("mul nearest", |a, b| Ops::mul(a, b, Round::Nearest)),
                row!("div down", |a, b| Ops::div(a, b, Round::Down)),
                row!("div up", |a, b| Ops::div(a, b, Round::Up)),
                row!("div nearest", |a, b| Ops::div(a, b, Round::Nearest)),
                row!("sqrt down", |a, _b| Ops::sqrt(a, Round::Down)),
                row!("sqrt up", |a, _b| Ops::sqrt(a, Round::Up)),
                row!("min", |a, b| Ops::min(a, b)),
                row!("max", |a, b| Ops::max(a, b)),
                row!("neg", |a, _b| Ops::neg(a)),
                row!("select less", |a, b| Ops::select(Ops::less(a, b), a, b)),
                row!("select not greater or nan", |a, b| {
                    Ops::select(!Ops::greater(a, b) | Ops::is_nan(a), a, b)
                }),
            ]
        }};
    }

    /// A row: its name, the vector type's operation and the scalar type's.
    type Row<S, V> = (&'static str, V, fn(S, S) -> S);

    /// Each row's vector operation, run by `four` on every pair of `values` spread over the
    /// lanes (so that slow and fast lanes share vectors), gives the scalar row's bits (NaN: any
    /// NaN); the number of lanes checked.
    fn check_rows<S, V>(
        rows: Vec<Row<S, V>>,
        values: &[S],
        four: impl Fn([S; 4], [S; 4], V) -> [S; 4],
        same: impl Fn(S, S) -> bool,
    ) -> usize
    where
        S: Copy + std::fmt::LowerExp,
        V: Copy,
    {
        let pairs: Vec<(S, S)> = values
            .iter()
            .flat_map(|&a| values.iter().map(move |&b| (a, b)))
            .collect();
        let mut checked = 0;
        for (name, vector, scalar) in rows {
            for (k, quad) in pairs.chunks_exact(4).enumerate() {
                let a = [quad[0].0, quad[1].0, quad[2].0, quad[3].0];
                let b = [quad[0].1, quad[1].1, quad[2].1, quad[3].1];
                let got = four(a, b, vector);
                for l in 0..4 {
                    let want = scalar(a[l], b[l]);
                    assert!(
                        same(got[l], want),
                        "{name}({:e}, {:e}): {:e}, the scalar row {:e} (vector {k})",
                        a[l],
                        b[l],
                        got[l],
                        want
                    );
                    checked += 1;
                }
            }
        }
        checked
    }

    /// Every operation of the f64 vector type gives the scalar row's bits on every pair of
    /// [`values`], in every rounding.
    #[test]
    fn vector_operations_equal_the_scalar_rows() {
        if !available() {
            eprintln!("skipped: this processor has no AVX2 + FMA");
            return;
        }
        let same = |a: f64, b: f64| a.to_bits() == b.to_bits() || a.is_nan() && b.is_nan();
        // SAFETY: the processor has AVX2 and FMA (checked above).
        let four = |a, b, f| unsafe { four(a, b, f) };
        let checked = check_rows(rows!(F64x4, f64), &values(), four, same);
        assert!(checked > 100_000, "{checked} lanes checked");
    }

    /// `f` over four lanes at a time inside an upward-rounding region, in a function compiled
    /// for AVX2 + FMA.
    #[target_feature(enable = "avx2,fma")]
    fn four_up(
        a: [f64; 4],
        b: [f64; 4],
        f: fn(
            super::super::upward::F64x4Up,
            super::super::upward::F64x4Up,
        ) -> super::super::upward::F64x4Up,
    ) -> [f64; 4] {
        use super::super::upward::{F64x4Up, Upward};
        let mut out = [0.0; 4];
        // SAFETY: the arrays hold four f64; in the region only `f` runs (the rows: the
        // vector type's operations).
        unsafe {
            let (x, y) = (_mm256_loadu_pd(a.as_ptr()), _mm256_loadu_pd(b.as_ptr()));
            let region = Upward::enter();
            let v = f(F64x4Up(x), F64x4Up(y));
            drop(region);
            _mm256_storeu_pd(out.as_mut_ptr(), v.0);
        }
        out
    }

    /// Every operation of the upward-region vector type gives the scalar row's bits on every
    /// pair of [`values`], in every rounding (directed by the mode and by mirroring, to nearest
    /// by a switch inside the operation); and the thread's mode is round-to-nearest again
    /// after each region (an f64 sum that rounds differently upward).
    #[test]
    fn upward_operations_equal_the_scalar_rows() {
        if !available() {
            eprintln!("skipped: this processor has no AVX2 + FMA");
            return;
        }
        let same = |a: f64, b: f64| a.to_bits() == b.to_bits() || a.is_nan() && b.is_nan();
        // SAFETY: the processor has AVX2 and FMA (checked above).
        let four = |a, b, f| unsafe { four_up(a, b, f) };
        let checked = check_rows(
            rows!(super::super::upward::F64x4Up, f64),
            &values(),
            four,
            same,
        );
        assert!(checked > 100_000, "{checked} lanes checked");
        let tiny = std::hint::black_box(2f64.powi(-60));
        assert_eq!(
            std::hint::black_box(1.0) + tiny,
            1.0,
            "round-to-nearest after the regions"
        );
    }

    /// `f` over four f32 lanes at a time, in a function compiled for AVX2 + FMA.
    #[target_feature(enable = "avx2,fma")]
    fn four_f32(a: [f32; 4], b: [f32; 4], f: fn(F32x4, F32x4) -> F32x4) -> [f32; 4] {
        let mut out = [0.0; 4];
        // SAFETY: the arrays hold four values.
        unsafe {
            let wide = |v: [f32; 4]| F32x4(_mm256_cvtps_pd(_mm_loadu_ps(v.as_ptr())));
            let v = f(wide(a), wide(b));
            _mm_storeu_ps(out.as_mut_ptr(), _mm256_cvtpd_ps(v.0));
        }
        out
    }

    /// Every operation of the f32 vector type gives the scalar f32 row's bits on every pair of
    /// f32 values (the f64 values rounded to f32, and f32's own specials: subnormals, MAX,
    /// sums and quotients that underflow or overflow f32), in every rounding.
    #[test]
    fn f32_vector_operations_equal_the_scalar_rows() {
        if !available() {
            eprintln!("skipped: this processor has no AVX2 + FMA");
            return;
        }
        let mut v: Vec<f32> = values().iter().map(|&x| x as f32).collect();
        for x in super::super::lanes::f32_specials() {
            v.extend([x, -x]);
        }
        let same = |a: f32, b: f32| a.to_bits() == b.to_bits() || a.is_nan() && b.is_nan();
        // SAFETY: the processor has AVX2 and FMA (checked above).
        let four = |a, b, f| unsafe { four_f32(a, b, f) };
        let checked = check_rows(rows!(F32x4, f32), &v, four, same);
        assert!(checked > 100_000, "{checked} lanes checked");
    }

    /// [`four_up`] for f32 lanes: the four values in lanes 0-3 and, reversed, in lanes 4-7
    /// (both halves of the register checked: the two results must agree).
    #[target_feature(enable = "avx2,fma")]
    fn four_up_f32(
        a: [f32; 4],
        b: [f32; 4],
        f: fn(
            super::super::upward::F32x8Up,
            super::super::upward::F32x8Up,
        ) -> super::super::upward::F32x8Up,
    ) -> [f32; 4] {
        use super::super::upward::{F32x8Up, Upward};
        let mut out = [0.0f32; 8];
        // SAFETY: the arrays hold eight values; in the region only `f` runs.
        unsafe {
            let eight =
                |v: [f32; 4]| _mm256_setr_ps(v[0], v[1], v[2], v[3], v[3], v[2], v[1], v[0]);
            let (x, y) = (eight(a), eight(b));
            let region = Upward::enter();
            let v = f(F32x8Up(x), F32x8Up(y));
            drop(region);
            _mm256_storeu_ps(out.as_mut_ptr(), v.0);
        }
        let low = [out[0], out[1], out[2], out[3]];
        let high = [out[7], out[6], out[5], out[4]];
        assert!(
            low.iter()
                .zip(&high)
                .all(|(x, y)| x.to_bits() == y.to_bits() || x.is_nan() && y.is_nan()),
            "the register's halves differ: {low:?} {high:?}"
        );
        low
    }

    /// Every operation of the upward-region f32 vector type gives the scalar f32 row's bits
    /// on the f32 values of [`f32_vector_operations_equal_the_scalar_rows`], in every rounding.
    #[test]
    fn upward_f32_operations_equal_the_scalar_rows() {
        if !available() {
            eprintln!("skipped: this processor has no AVX2 + FMA");
            return;
        }
        let mut v: Vec<f32> = values().iter().map(|&x| x as f32).collect();
        for x in super::super::lanes::f32_specials() {
            v.extend([x, -x]);
        }
        let same = |a: f32, b: f32| a.to_bits() == b.to_bits() || a.is_nan() && b.is_nan();
        // SAFETY: the processor has AVX2 and FMA (checked above).
        let four = |a, b, f| unsafe { four_up_f32(a, b, f) };
        let checked = check_rows(rows!(super::super::upward::F32x8Up, f32), &v, four, same);
        assert!(checked > 100_000, "{checked} lanes checked");
    }

    /// Loading and storing four pairs of `$v` (bounds `$s`, the pairs `$p`) gives back the
    /// pairs bit for bit, and the lanes of a vector hold the lower and upper bounds of the
    /// same boxes (the widths `hi - lo` are the pairs').
    macro_rules! round_trip {
        ($v:ty, $s:ty, $p:expr) => {{
            #[target_feature(enable = "avx2,fma")]
            fn widths(p: &[$s; 8]) -> ([$s; 8], [f64; 4]) {
                let mut back = [0.0; 8];
                let mut width = [0.0; 4];
                // SAFETY: eight values read and written; the processor has AVX2 (the caller
                // checked).
                unsafe {
                    let (lo, hi) = <$v>::load(p.as_ptr());
                    _mm256_storeu_pd(width.as_mut_ptr(), hi.sub(lo, Round::Up).0);
                    <$v>::store(back.as_mut_ptr(), (lo, hi));
                }
                (back, width)
            }
            let p: [$s; 8] = $p;
            // SAFETY: the processor has AVX2 and FMA (checked by the caller).
            let (back, width) = unsafe { widths(&p) };
            assert_eq!(back.map(<$s>::to_bits), p.map(<$s>::to_bits));
            let mut width = width.to_vec();
            width.sort_by(f64::total_cmp);
            assert_eq!(width, vec![1.0, 4.0, 8.0, 16.0]);
        }};
    }

    /// [`round_trip!`] for f64 pairs and for f32 pairs (loaded as f64 lanes).
    #[test]
    fn pairs_round_trip() {
        if !available() {
            eprintln!("skipped: this processor has no AVX2 + FMA");
            return;
        }
        round_trip!(
            F64x4,
            f64,
            [1.0, 2.0, 10.0, 14.0, 100.0, 108.0, 1000.0, 1016.0]
        );
        round_trip!(F32x4, f32, [1.0, 2.0, 10.0, 14.0, 100.0, 108.0, -0.0, 16.0]);
        // Eight f32 pairs in one register: back bit for bit, and each box's bounds in the
        // same lane (widths 1, 2, ..., 8, each once).
        #[target_feature(enable = "avx2,fma")]
        fn widths_f32(p: &[f32; 16]) -> ([f32; 16], [f32; 8]) {
            use super::super::simd::Pairs;
            use super::super::upward::F32x8Up;
            let (mut back, mut width) = ([0.0; 16], [0.0; 8]);
            // SAFETY: sixteen values read and written; the processor has AVX2 (checked).
            unsafe {
                let (lo, hi) = F32x8Up::load(p.as_ptr());
                _mm256_storeu_ps(width.as_mut_ptr(), _mm256_sub_ps(hi.0, lo.0));
                F32x8Up::store(back.as_mut_ptr(), (lo, hi));
            }
            (back, width)
        }
        let mut p = [0.0f32; 16];
        for k in 0..8 {
            p[2 * k] = (100 * k) as f32;
            p[2 * k + 1] = (100 * k + k + 1) as f32;
        }
        p[0] = -0.0;
        // SAFETY: the processor has AVX2 and FMA (checked above).
        let (back, width) = unsafe { widths_f32(&p) };
        assert_eq!(back.map(f32::to_bits), p.map(f32::to_bits));
        let mut width = width.to_vec();
        width.sort_by(f32::total_cmp);
        assert_eq!(width, (1..=8).map(|k| k as f32).collect::<Vec<_>>());
    }
}
