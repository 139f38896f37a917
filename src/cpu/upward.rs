//! Four f64 lanes evaluated while the processor rounds upward ([`F64x4Up`]), and eight f32
//! lanes likewise ([`F32x8Up`]: each rounded operation one f32 instruction; until the
//! forty-first session f32 values were carried four at a time in f64 lanes, narrowed and
//! widened around every operation): the tape interpreter's vectors on processors with AVX2
//! and FMA but not AVX-512, where [`super::mode_switching`] holds. One tape instruction over
//! its lanes (up to 256 boxes) runs inside one [`Upward`] region: MXCSR is set to round upward
//! once when the region starts and put back when it ends, instead of the software directed
//! operations ([`super::avx2::F64x4`], about twenty instructions each) or two `ldmxcsr` per
//! operation.
//!
//! Inside the region:
//! - every rounded operation is its own inline assembly instruction (`vaddpd`, `vmulpd`,
//!   `vdivpd`, `vsqrtpd`, `vfmsub213pd` and their f32 forms): the compiler cannot fold, merge
//!   or move it across the region's ends (an `asm!` block without `pure` is a side effect, kept in program order
//!   with the region's `ldmxcsr` blocks, which also clobber memory);
//! - a result rounded up is the instruction's; rounded down, the negation of the upward result
//!   on negated operands (`RD(a + b) = -RU(-a - b)`, `RD(a b) = -RU(-a b)`, `RD(a / b) =
//!   -RU(-a / b)`: IEEE 754's directed roundings are each other's mirror), and the square
//!   root's by its upward value minus one ulp where `s * s - x`, rounded up by one FMA (one
//!   rounding: its sign is exact), is positive;
//! - a result rounded to nearest switches the mode to nearest and back inside its own
//!   assembly block;
//! - the Rust code between them only compares, selects, masks, negates (a sign-bit `xor`),
//!   shuffles, loads and stores: operations whose results do not depend on the rounding mode.
//!
//! So each lane is the IEEE 754 result in the asked direction, the bits of the software path
//! (`upward_operations_equal_the_scalar_rows` and `upward_f32_operations_equal_the_scalar_rows`
//! in [`super::avx2`]'s tests check every row on special and random values, inside a region).
//! Why MXCSR may be switched at all, and that it belongs to the thread, is in `super::mxcsr`.
//!
//! # Safety
//! As [`super::avx2`]: every method executes AVX, AVX2 and FMA instructions and is used only in
//! functions compiled for them, called after the processor was found to have them; and only
//! while an [`Upward`] region is open (else the rounded operations round to nearest where they
//! should round up: wrong bounds).

use std::arch::asm;
use std::arch::x86_64::*;

use super::avx2::{F64x4, Mask4};
use crate::round::Round;
use crate::scalar::emit::Ops;

/// MXCSR rounding upward, with every exception masked and flush-to-zero and
/// denormals-are-zero off (as `mxcsr::mode(Round::Up)`).
const UP: u32 = 0x5F80;

/// MXCSR rounding to nearest, as above.
const NEAREST: u32 = 0x1F80;

/// An open region of upward rounding: MXCSR rounds upward from [`Upward::enter`] until the
/// value is dropped, which puts back the mode the thread had.
pub(crate) struct Upward {
    saved: u32,
}

impl Upward {
    /// Saves MXCSR and sets it to round upward.
    ///
    /// # Safety
    /// Until the region is dropped, the thread runs no Rust floating-point arithmetic whose
    /// result depends on the rounding (only [`F64x4Up`]'s operations and rounding-independent
    /// ones), and calls nothing that might.
    #[inline(always)]
    pub(crate) unsafe fn enter() -> Upward {
        let mut saved: u32 = 0;
        let up = UP;
        // SAFETY: stores and loads the 4-byte control word; SSE is part of x86-64.
        unsafe {
            asm!(
                "stmxcsr dword ptr [{saved}]",
                "ldmxcsr dword ptr [{up}]",
                saved = in(reg) &raw mut saved,
                up = in(reg) &raw const up,
                options(nostack),
            );
        }
        Upward { saved }
    }
}

impl Drop for Upward {
    #[inline(always)]
    fn drop(&mut self) {
        // SAFETY: loads the mode saved by `enter`.
        unsafe {
            asm!(
                "ldmxcsr dword ptr [{saved}]",
                saved = in(reg) &raw const self.saved,
                options(nostack),
            );
        }
    }
}

/// Four f64 values, computed with inside an [`Upward`] region.
#[derive(Clone, Copy)]
pub(crate) struct F64x4Up(pub(crate) __m256d);

/// A pair of functions over the `ymm` operands `$arg` of type `$t`, compiled for AVX2 and FMA as the
/// intrinsics are (they inline into callers compiled for them): `$up` runs the assembly lines
/// in the current mode (upward, in a region), `$near` the same lines with the mode switched
/// to nearest and back around them in one block. The lines write `{out}` last and may use the
/// scratch registers `$temp`.
macro_rules! rounded {
    ($t:ty, $up:ident, $near:ident, ($($arg:ident),*), [$($line:expr),* $(,)?] $(, $temp:ident)*) => {
        #[target_feature(enable = "avx2,fma")]
        #[inline]
        fn $up($($arg: $t),*) -> $t {
            let out: $t;
            // SAFETY: register operands only.
            unsafe {
                asm!(
                    $($line,)*
                    out = lateout(ymm_reg) out,
                    $($arg = in(ymm_reg) $arg,)*
                    $($temp = out(ymm_reg) _,)*
                    options(nomem, nostack, preserves_flags),
                );
            }
            out
        }

        #[target_feature(enable = "avx2,fma")]
        #[inline]
        fn $near($($arg: $t),*) -> $t {
            let out: $t;
            let (mut saved, near): (u32, u32) = (0, NEAREST);
            // SAFETY: the control word saved and put back.
            unsafe {
                asm!(
                    "stmxcsr dword ptr [{saved}]",
                    "ldmxcsr dword ptr [{near}]",
                    $($line,)*
                    "ldmxcsr dword ptr [{saved}]",
                    saved = in(reg) &raw mut saved,
                    near = in(reg) &raw const near,
                    out = out(ymm_reg) out,
                    $($arg = in(ymm_reg) $arg,)*
                    $($temp = out(ymm_reg) _,)*
                    options(nostack),
                );
            }
            out
        }
    };
}

/// [`rounded!`] for one instruction `op {out}, {a}, {b}` on f64 (`$t` = `__m256d`) or f32
/// lanes (`__m256`).
macro_rules! rounded_binary {
    ($t:ty, $insn:literal, $up:ident, $near:ident) => {
        rounded!($t, $up, $near, (a, b), [concat!($insn, " {out}, {a}, {b}")]);
    };
}

rounded_binary!(__m256d, "vaddpd", add_up, add_near);
rounded_binary!(__m256d, "vsubpd", sub_up, sub_near);
rounded_binary!(__m256d, "vmulpd", mul_up, mul_near);
rounded_binary!(__m256d, "vdivpd", div_up, div_near);
rounded!(__m256d, sqrt_up, sqrt_near, (x), ["vsqrtpd {out}, {x}"]);

rounded_binary!(__m256, "vaddps", add_up_f32, add_near_f32);
rounded_binary!(__m256, "vsubps", sub_up_f32, sub_near_f32);
rounded_binary!(__m256, "vmulps", mul_up_f32, mul_near_f32);
rounded_binary!(__m256, "vdivps", div_up_f32, div_near_f32);
rounded!(
    __m256,
    sqrt_up_f32,
    sqrt_near_f32,
    (x),
    ["vsqrtps {out}, {x}"]
);

/// The square root rounded down, in an upward region: s = RU(sqrt(x)) is exact where s * s
/// == x, else one ulp above RD(sqrt(x)). RU(s * s - x) by one FMA is positive exactly where
/// s * s > x (a positive exact value rounds up to a positive one): there s steps down (s is
/// then positive and finite; NaN, infinities and zeros give no positive remainder).
#[target_feature(enable = "avx2,fma")]
#[inline]
fn sqrt_down(x: __m256d) -> __m256d {
    let s = sqrt_up(x);
    let rem: __m256d;
    // SAFETY: register operands only.
    unsafe {
        asm!(
            "vmovapd {rem}, {s}",
            "vfmsub213pd {rem}, {s}, {x}",
            rem = out(ymm_reg) rem,
            s = in(ymm_reg) s,
            x = in(ymm_reg) x,
            options(nomem, nostack, preserves_flags),
        );
    }
    let above = _mm256_castpd_si256(_mm256_cmp_pd::<_CMP_GT_OQ>(rem, _mm256_setzero_pd()));
    // All bits set (-1) where above: adding it takes one off the bits.
    _mm256_castsi256_pd(_mm256_add_epi64(_mm256_castpd_si256(s), above))
}

/// [`sqrt_down`] in f32: the f32 root rounded up, one f32 ulp less where the f32 FMA
/// remainder `s * s - x` rounded up is positive.
#[target_feature(enable = "avx2,fma")]
#[inline]
fn sqrt_down_f32(x: __m256) -> __m256 {
    let out: __m256;
    // SAFETY: register operands only.
    unsafe {
        asm!(
            "vsqrtps {s}, {x}",
            "vmovaps {rem}, {s}",
            "vfmsub213ps {rem}, {s}, {x}",
            "vxorps {zero}, {zero}, {zero}",
            "vcmpgtps {rem}, {rem}, {zero}",
            // All bits set (-1) where the remainder is positive: adding it takes one off.
            "vpaddd {out}, {s}, {rem}",
            out = lateout(ymm_reg) out,
            x = in(ymm_reg) x,
            s = out(ymm_reg) _,
            rem = out(ymm_reg) _,
            zero = out(ymm_reg) _,
            options(nomem, nostack, preserves_flags),
        );
    }
    out
}

/// Eight f32 values, computed with inside an [`Upward`] region: the f32 tape's vectors there
/// (each rounded operation one f32 instruction, eight lanes, no conversions).
#[derive(Clone, Copy)]
pub(crate) struct F32x8Up(pub(crate) __m256);

/// A comparison's outcome per f32 lane: all bits set where it holds, none elsewhere.
#[derive(Clone, Copy)]
pub(crate) struct Mask8(__m256);

impl std::ops::BitAnd for Mask8 {
    type Output = Mask8;
    #[inline(always)]
    fn bitand(self, b: Mask8) -> Mask8 {
        // SAFETY: AVX (module docs).
        unsafe { Mask8(_mm256_and_ps(self.0, b.0)) }
    }
}

impl std::ops::BitOr for Mask8 {
    type Output = Mask8;
    #[inline(always)]
    fn bitor(self, b: Mask8) -> Mask8 {
        // SAFETY: AVX (module docs).
        unsafe { Mask8(_mm256_or_ps(self.0, b.0)) }
    }
}

impl std::ops::Not for Mask8 {
    type Output = Mask8;
    #[inline(always)]
    fn not(self) -> Mask8 {
        // SAFETY: AVX (module docs).
        unsafe {
            Mask8(_mm256_xor_ps(
                self.0,
                _mm256_castsi256_ps(_mm256_set1_epi32(-1)),
            ))
        }
    }
}

impl F32x8Up {
    /// A comparison `PRED` of each lane (ordered, quiet: false where either is NaN).
    #[inline(always)]
    fn cmp<const PRED: i32>(self, b: F32x8Up) -> Mask8 {
        // SAFETY: AVX (module docs).
        unsafe { Mask8(_mm256_cmp_ps::<PRED>(self.0, b.0)) }
    }

    /// `a op b` in direction `r` by the upward instruction `up` (`both`: negate both
    /// operands to mirror, else the first).
    #[inline(always)]
    fn directed(
        a: F32x8Up,
        b: F32x8Up,
        r: Round,
        both: bool,
        up: unsafe fn(__m256, __m256) -> __m256,
        near: unsafe fn(__m256, __m256) -> __m256,
    ) -> F32x8Up {
        let (a, b) = (a.0, b.0);
        // SAFETY: AVX2 and FMA (module docs).
        F32x8Up(unsafe {
            match r {
                Round::Up => up(a, b),
                Round::Down => flip_f32(up(flip_f32(a), if both { flip_f32(b) } else { b })),
                Round::Nearest => near(a, b),
            }
        })
    }
}

/// `-v` (the sign bits flipped).
#[inline(always)]
fn flip_f32(v: __m256) -> __m256 {
    // SAFETY: AVX (module docs).
    unsafe { _mm256_xor_ps(v, _mm256_set1_ps(-0.0)) }
}

impl Ops for F32x8Up {
    type Mask = Mask8;
    #[inline(always)]
    fn exact(x: f64) -> F32x8Up {
        // SAFETY: AVX (module docs).
        unsafe { F32x8Up(_mm256_set1_ps(x as f32)) }
    }
    #[inline(always)]
    fn mask(b: bool) -> Mask8 {
        // SAFETY: AVX (module docs).
        unsafe { Mask8(_mm256_castsi256_ps(_mm256_set1_epi32(-i32::from(b)))) }
    }
    #[inline(always)]
    fn is_nan(self) -> Mask8 {
        self.cmp::<_CMP_UNORD_Q>(self)
    }
    #[inline(always)]
    fn less(self, b: F32x8Up) -> Mask8 {
        self.cmp::<_CMP_LT_OQ>(b)
    }
    #[inline(always)]
    fn less_eq(self, b: F32x8Up) -> Mask8 {
        self.cmp::<_CMP_LE_OQ>(b)
    }
    #[inline(always)]
    fn greater(self, b: F32x8Up) -> Mask8 {
        self.cmp::<_CMP_GT_OQ>(b)
    }
    #[inline(always)]
    fn greater_eq(self, b: F32x8Up) -> Mask8 {
        self.cmp::<_CMP_GE_OQ>(b)
    }
    #[inline(always)]
    fn equal(self, b: F32x8Up) -> Mask8 {
        self.cmp::<_CMP_EQ_OQ>(b)
    }
    #[inline(always)]
    fn select(m: Mask8, a: F32x8Up, b: F32x8Up) -> F32x8Up {
        // SAFETY: AVX (module docs). The blend takes its second operand where m is set.
        unsafe { F32x8Up(_mm256_blendv_ps(b.0, a.0, m.0)) }
    }
    #[inline(always)]
    fn add(self, b: F32x8Up, r: Round) -> F32x8Up {
        F32x8Up::directed(self, b, r, true, add_up_f32, add_near_f32)
    }
    #[inline(always)]
    fn sub(self, b: F32x8Up, r: Round) -> F32x8Up {
        F32x8Up::directed(self, b, r, true, sub_up_f32, sub_near_f32)
    }
    #[inline(always)]
    fn mul(self, b: F32x8Up, r: Round) -> F32x8Up {
        F32x8Up::directed(self, b, r, false, mul_up_f32, mul_near_f32)
    }
    #[inline(always)]
    fn div(self, b: F32x8Up, r: Round) -> F32x8Up {
        F32x8Up::directed(self, b, r, false, div_up_f32, div_near_f32)
    }
    #[inline(always)]
    fn sqrt(self, r: Round) -> F32x8Up {
        // SAFETY: AVX2 and FMA (module docs).
        F32x8Up(unsafe {
            match r {
                Round::Nearest => sqrt_near_f32(self.0),
                Round::Up => sqrt_up_f32(self.0),
                Round::Down => sqrt_down_f32(self.0),
            }
        })
    }
    #[inline(always)]
    fn neg(self) -> F32x8Up {
        F32x8Up(flip_f32(self.0))
    }
    #[inline(always)]
    fn min(self, b: F32x8Up) -> F32x8Up {
        // A tie's bits or-ed: -0 from a signed zero pair, else the value (as F64x4's).
        // SAFETY: AVX (module docs).
        let either = unsafe { F32x8Up(_mm256_or_ps(self.0, b.0)) };
        super::simd::min_max(self, b, self.less(b), b.less(self), either)
    }
    #[inline(always)]
    fn max(self, b: F32x8Up) -> F32x8Up {
        // SAFETY: AVX (module docs).
        let both = unsafe { F32x8Up(_mm256_and_ps(self.0, b.0)) };
        super::simd::min_max(self, b, self.greater(b), b.greater(self), both)
    }
}

impl super::simd::Pairs for F32x8Up {
    const WIDTH: usize = 8;
    type Scalar = f32;
    /// Eight f32 pairs: the lower bounds of boxes 0, 1, 4, 5, 2, 3, 6, 7 in lanes 0 to 7, the
    /// upper ones likewise (the shuffles stay inside 128-bit halves; every operation is lane
    /// by lane and [`super::simd::Pairs::store`] undoes the order).
    #[inline(always)]
    unsafe fn load(p: *const f32) -> (F32x8Up, F32x8Up) {
        // SAFETY: the caller's contract.
        unsafe {
            let (a, b) = (_mm256_loadu_ps(p), _mm256_loadu_ps(p.add(8)));
            (
                F32x8Up(_mm256_shuffle_ps::<0x88>(a, b)),
                F32x8Up(_mm256_shuffle_ps::<0xDD>(a, b)),
            )
        }
    }
    #[inline(always)]
    unsafe fn store(p: *mut f32, (lo, hi): (F32x8Up, F32x8Up)) {
        // SAFETY: the caller's contract.
        unsafe {
            _mm256_storeu_ps(p, _mm256_unpacklo_ps(lo.0, hi.0));
            _mm256_storeu_ps(p.add(8), _mm256_unpackhi_ps(lo.0, hi.0));
        }
    }
}

/// `-v` (the sign bit flipped).
#[inline(always)]
fn flip(v: __m256d) -> __m256d {
    // SAFETY: AVX (module docs).
    unsafe { _mm256_xor_pd(v, _mm256_set1_pd(-0.0)) }
}

/// [`Ops`] and [`super::simd::Pairs`] for an upward vector type `$v` whose lanes are laid out
/// as the software type `$plain`'s (scalar `$s`): what does not round is `$plain`'s; a binary
/// operation is upward by its instruction (`$up` functions), downward mirrored on the negated
/// first operand (and the negated second, for sums and differences), to nearest by its
/// `$near` function; the square root by `$sqrt` (up, down, nearest).
macro_rules! upward_vector {
    ($v:ident, $plain:ident, $s:ty,
     [$add:ident, $add_n:ident, $sub:ident, $sub_n:ident, $mul:ident, $mul_n:ident,
      $div:ident, $div_n:ident], [$sqrt_up:ident, $sqrt_down:ident, $sqrt_n:ident]) => {
        impl $v {
            /// The software vector type's view of the lanes, for what does not round.
            #[inline(always)]
            fn plain(self) -> $plain {
                $plain(self.0)
            }

            /// `a op b` in direction `r` by the upward instruction `up` (`both`: negate both
            /// operands to mirror, else the first).
            #[inline(always)]
            fn directed(
                a: $v,
                b: $v,
                r: Round,
                both: bool,
                up: unsafe fn(__m256d, __m256d) -> __m256d,
                near: unsafe fn(__m256d, __m256d) -> __m256d,
            ) -> $v {
                let (a, b) = (a.0, b.0);
                // SAFETY: AVX2 and FMA (module docs).
                $v(unsafe {
                    match r {
                        Round::Up => up(a, b),
                        Round::Down => flip(up(flip(a), if both { flip(b) } else { b })),
                        Round::Nearest => near(a, b),
                    }
                })
            }
        }

        impl Ops for $v {
            type Mask = Mask4;
            #[inline(always)]
            fn exact(x: f64) -> $v {
                $v($plain::exact(x).0)
            }
            #[inline(always)]
            fn mask(b: bool) -> Mask4 {
                $plain::mask(b)
            }
            #[inline(always)]
            fn is_nan(self) -> Mask4 {
                self.plain().is_nan()
            }
            #[inline(always)]
            fn less(self, b: $v) -> Mask4 {
                self.plain().less(b.plain())
            }
            #[inline(always)]
            fn less_eq(self, b: $v) -> Mask4 {
                self.plain().less_eq(b.plain())
            }
            #[inline(always)]
            fn greater(self, b: $v) -> Mask4 {
                self.plain().greater(b.plain())
            }
            #[inline(always)]
            fn greater_eq(self, b: $v) -> Mask4 {
                self.plain().greater_eq(b.plain())
            }
            #[inline(always)]
            fn equal(self, b: $v) -> Mask4 {
                self.plain().equal(b.plain())
            }
            #[inline(always)]
            fn select(m: Mask4, a: $v, b: $v) -> $v {
                $v($plain::select(m, a.plain(), b.plain()).0)
            }
            #[inline(always)]
            fn add(self, b: $v, r: Round) -> $v {
                $v::directed(self, b, r, true, $add, $add_n)
            }
            #[inline(always)]
            fn sub(self, b: $v, r: Round) -> $v {
                $v::directed(self, b, r, true, $sub, $sub_n)
            }
            #[inline(always)]
            fn mul(self, b: $v, r: Round) -> $v {
                $v::directed(self, b, r, false, $mul, $mul_n)
            }
            #[inline(always)]
            fn div(self, b: $v, r: Round) -> $v {
                $v::directed(self, b, r, false, $div, $div_n)
            }
            #[inline(always)]
            fn sqrt(self, r: Round) -> $v {
                // SAFETY: AVX2 and FMA (module docs).
                $v(unsafe {
                    match r {
                        Round::Nearest => $sqrt_n(self.0),
                        Round::Up => $sqrt_up(self.0),
                        Round::Down => $sqrt_down(self.0),
                    }
                })
            }
            #[inline(always)]
            fn neg(self) -> $v {
                $v(flip(self.0))
            }
            #[inline(always)]
            fn min(self, b: $v) -> $v {
                $v(self.plain().min(b.plain()).0)
            }
            #[inline(always)]
            fn max(self, b: $v) -> $v {
                $v(self.plain().max(b.plain()).0)
            }
        }

        impl super::simd::Pairs for $v {
            const WIDTH: usize = 4;
            type Scalar = $s;
            /// As the software type's (shuffles: no rounding).
            #[inline(always)]
            unsafe fn load(p: *const $s) -> ($v, $v) {
                // SAFETY: the caller's contract.
                let (lo, hi) = unsafe { <$plain as super::simd::Pairs>::load(p) };
                ($v(lo.0), $v(hi.0))
            }
            #[inline(always)]
            unsafe fn store(p: *mut $s, (lo, hi): ($v, $v)) {
                // SAFETY: the caller's contract.
                unsafe { <$plain as super::simd::Pairs>::store(p, (lo.plain(), hi.plain())) }
            }
        }
    };
}

upward_vector!(
    F64x4Up,
    F64x4,
    f64,
    [add_up, add_near, sub_up, sub_near, mul_up, mul_near, div_up, div_near],
    [sqrt_up, sqrt_down, sqrt_near]
);
