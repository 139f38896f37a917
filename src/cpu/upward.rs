//! Four f64 lanes evaluated while the processor rounds upward ([`F64x4Up`]), and four f32
//! values carried in f64 lanes likewise ([`F32x4Up`]: each rounded operation narrows its
//! operands to f32 exactly, runs the f32 instruction, and widens the result exactly): the tape
//! interpreter's vectors on processors with AVX2 and FMA but not AVX-512, where
//! [`super::mode_switching`] holds. One tape instruction over its lanes (up to 64 boxes) runs
//! inside one [`Upward`] region: MXCSR is set to round upward once when the region starts and
//! put back when it ends, instead of the software directed operations ([`super::avx2::F64x4`],
//! about twenty instructions each) or two `ldmxcsr` per operation.
//!
//! Inside the region:
//! - every rounded operation is its own inline assembly instruction (`vaddpd`, `vmulpd`,
//!   `vdivpd`, `vsqrtpd`, `vfmsub213pd`): the compiler cannot fold, merge or move it across the
//!   region's ends (an `asm!` block without `pure` is a side effect, kept in program order
//!   with the region's `ldmxcsr` blocks, which also clobber memory);
//! - a result rounded up is the instruction's; rounded down, the negation of the upward result
//!   on negated operands (`RD(a + b) = -RU(-a - b)`, `RD(a b) = -RU(-a b)`, `RD(a / b) =
//!   -RU(-a / b)`: IEEE 754's directed roundings are each other's mirror), and the square
//!   root's by its upward value minus one ulp where `s * s - x`, rounded up by one FMA (one
//!   rounding: its sign is exact), is positive;
//! - a result rounded to nearest switches the mode to nearest and back inside its own
//!   assembly block;
//! - the Rust code between them only compares, selects, masks, negates (a sign-bit `xor`),
//!   loads and stores: operations whose results do not depend on the rounding mode.
//!
//! So each lane is the IEEE 754 result in the asked direction, the bits of the software path
//! (`tests::upward_operations_equal_the_scalar_rows` checks every row on special and random
//! values). Why MXCSR may be switched at all, and that it belongs to the thread, is in
//! `super::mxcsr`.
//!
//! # Safety
//! As [`super::avx2`]: every method executes AVX, AVX2 and FMA instructions and is used only in
//! functions compiled for them, called after the processor was found to have them; and only
//! while an [`Upward`] region is open (else the rounded operations round to nearest where they
//! should round up: wrong bounds).

use std::arch::asm;
use std::arch::x86_64::*;

use super::avx2::{F32x4, F64x4, Mask4};
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

/// Functions of one rounded AVX instruction each: `$up(a, b)` runs `op {out}, {a}, {b}` in the
/// current mode (upward, in a region); `$near(a, b)` rounded to nearest, the mode switched to
/// nearest and back around it in one block. (Functions compiled for AVX2 and FMA, as the
/// intrinsics are, so that the `ymm` registers exist; they inline into the callers, which
/// are compiled for them too.)
macro_rules! rounded {
    ($insn:literal, $up:ident, $near:ident) => {
        #[target_feature(enable = "avx2,fma")]
        #[inline]
        fn $up(a: __m256d, b: __m256d) -> __m256d {
            let out: __m256d;
            // SAFETY: register operands only.
            unsafe {
                asm!(
                    concat!($insn, " {out}, {a}, {b}"),
                    out = lateout(ymm_reg) out,
                    a = in(ymm_reg) a,
                    b = in(ymm_reg) b,
                    options(nomem, nostack, preserves_flags),
                );
            }
            out
        }

        #[target_feature(enable = "avx2,fma")]
        #[inline]
        fn $near(a: __m256d, b: __m256d) -> __m256d {
            let out: __m256d;
            let (mut saved, near): (u32, u32) = (0, NEAREST);
            // SAFETY: the control word saved and put back.
            unsafe {
                asm!(
                    "stmxcsr dword ptr [{saved}]",
                    "ldmxcsr dword ptr [{near}]",
                    concat!($insn, " {out}, {a}, {b}"),
                    "ldmxcsr dword ptr [{saved}]",
                    saved = in(reg) &raw mut saved,
                    near = in(reg) &raw const near,
                    out = out(ymm_reg) out,
                    a = in(ymm_reg) a,
                    b = in(ymm_reg) b,
                    options(nostack),
                );
            }
            out
        }
    };
}

rounded!("vaddpd", add_up, add_near);
rounded!("vsubpd", sub_up, sub_near);
rounded!("vmulpd", mul_up, mul_near);
rounded!("vdivpd", div_up, div_near);

impl F64x4Up {
    /// The software vector type's view of the lanes, for the operations that do not round.
    #[inline(always)]
    fn plain(self) -> F64x4 {
        F64x4(self.0)
    }

    /// `-v` (the sign bit flipped).
    #[inline(always)]
    fn flip(v: __m256d) -> __m256d {
        // SAFETY: AVX (module docs).
        unsafe { _mm256_xor_pd(v, _mm256_set1_pd(-0.0)) }
    }
}

/// A binary operation: upward by the instruction `$up`, downward mirrored on the negated
/// first operand (`$both`: and on the negated second, for sums and differences), to nearest by
/// `$near`.
macro_rules! directed {
    ($up:ident, $near:ident, $a:expr, $b:expr, $r:expr, $both:expr) => {{
        let (a, b) = ($a, $b);
        // SAFETY: AVX2 and FMA (module docs).
        F64x4Up(unsafe {
            match $r {
                Round::Up => $up(a, b),
                Round::Down => {
                    let b = if $both { F64x4Up::flip(b) } else { b };
                    F64x4Up::flip($up(F64x4Up::flip(a), b))
                }
                Round::Nearest => $near(a, b),
            }
        })
    }};
}

impl Ops for F64x4Up {
    type Mask = Mask4;
    #[inline(always)]
    fn exact(x: f64) -> F64x4Up {
        F64x4Up(F64x4::exact(x).0)
    }
    #[inline(always)]
    fn mask(b: bool) -> Mask4 {
        F64x4::mask(b)
    }
    #[inline(always)]
    fn is_nan(self) -> Mask4 {
        self.plain().is_nan()
    }
    #[inline(always)]
    fn less(self, b: F64x4Up) -> Mask4 {
        self.plain().less(b.plain())
    }
    #[inline(always)]
    fn less_eq(self, b: F64x4Up) -> Mask4 {
        self.plain().less_eq(b.plain())
    }
    #[inline(always)]
    fn greater(self, b: F64x4Up) -> Mask4 {
        self.plain().greater(b.plain())
    }
    #[inline(always)]
    fn greater_eq(self, b: F64x4Up) -> Mask4 {
        self.plain().greater_eq(b.plain())
    }
    #[inline(always)]
    fn equal(self, b: F64x4Up) -> Mask4 {
        self.plain().equal(b.plain())
    }
    #[inline(always)]
    fn select(m: Mask4, a: F64x4Up, b: F64x4Up) -> F64x4Up {
        F64x4Up(F64x4::select(m, a.plain(), b.plain()).0)
    }
    #[inline(always)]
    fn add(self, b: F64x4Up, r: Round) -> F64x4Up {
        directed!(add_up, add_near, self.0, b.0, r, true)
    }
    #[inline(always)]
    fn sub(self, b: F64x4Up, r: Round) -> F64x4Up {
        directed!(sub_up, sub_near, self.0, b.0, r, true)
    }
    #[inline(always)]
    fn mul(self, b: F64x4Up, r: Round) -> F64x4Up {
        directed!(mul_up, mul_near, self.0, b.0, r, false)
    }
    #[inline(always)]
    fn div(self, b: F64x4Up, r: Round) -> F64x4Up {
        directed!(div_up, div_near, self.0, b.0, r, false)
    }
    #[inline(always)]
    fn sqrt(self, r: Round) -> F64x4Up {
        let x = self.0;
        // SAFETY: AVX2 and FMA (module docs).
        F64x4Up(unsafe {
            match r {
                Round::Nearest => sqrt_near(x),
                Round::Up => sqrt_up(x),
                Round::Down => sqrt_down(x),
            }
        })
    }
    #[inline(always)]
    fn neg(self) -> F64x4Up {
        F64x4Up(F64x4Up::flip(self.0))
    }
    #[inline(always)]
    fn min(self, b: F64x4Up) -> F64x4Up {
        F64x4Up(self.plain().min(b.plain()).0)
    }
    #[inline(always)]
    fn max(self, b: F64x4Up) -> F64x4Up {
        F64x4Up(self.plain().max(b.plain()).0)
    }
}

/// Functions of one rounded f32 instruction each on f32 values carried in f64 lanes: the
/// operands narrowed (exact), `op` in the current mode (`$up`) or to nearest (`$near`), the
/// result widened (exact).
macro_rules! rounded_f32 {
    ($insn:literal, $up:ident, $near:ident) => {
        #[target_feature(enable = "avx2,fma")]
        #[inline]
        fn $up(a: __m256d, b: __m256d) -> __m256d {
            let out: __m256d;
            // SAFETY: register operands only.
            unsafe {
                asm!(
                    "vcvtpd2ps {x:x}, {a}",
                    "vcvtpd2ps {y:x}, {b}",
                    concat!($insn, " {x:x}, {x:x}, {y:x}"),
                    "vcvtps2pd {out}, {x:x}",
                    out = lateout(ymm_reg) out,
                    a = in(ymm_reg) a,
                    b = in(ymm_reg) b,
                    x = out(ymm_reg) _,
                    y = out(ymm_reg) _,
                    options(nomem, nostack, preserves_flags),
                );
            }
            out
        }

        #[target_feature(enable = "avx2,fma")]
        #[inline]
        fn $near(a: __m256d, b: __m256d) -> __m256d {
            let out: __m256d;
            let (mut saved, near): (u32, u32) = (0, NEAREST);
            // SAFETY: the control word saved and put back.
            unsafe {
                asm!(
                    "stmxcsr dword ptr [{saved}]",
                    "ldmxcsr dword ptr [{near}]",
                    "vcvtpd2ps {x:x}, {a}",
                    "vcvtpd2ps {y:x}, {b}",
                    concat!($insn, " {x:x}, {x:x}, {y:x}"),
                    "vcvtps2pd {out}, {x:x}",
                    "ldmxcsr dword ptr [{saved}]",
                    saved = in(reg) &raw mut saved,
                    near = in(reg) &raw const near,
                    out = out(ymm_reg) out,
                    a = in(ymm_reg) a,
                    b = in(ymm_reg) b,
                    x = out(ymm_reg) _,
                    y = out(ymm_reg) _,
                    options(nostack),
                );
            }
            out
        }
    };
}

rounded_f32!("vaddps", add_up_f32, add_near_f32);
rounded_f32!("vsubps", sub_up_f32, sub_near_f32);
rounded_f32!("vmulps", mul_up_f32, mul_near_f32);
rounded_f32!("vdivps", div_up_f32, div_near_f32);

/// Four f32 values carried exactly in f64 lanes, computed with inside an [`Upward`] region
/// (the f32 tape's vectors there; [`F32x4`]'s layout).
#[derive(Clone, Copy)]
pub(crate) struct F32x4Up(pub(crate) __m256d);

/// [`directed!`] for [`F32x4Up`].
macro_rules! directed_f32 {
    ($up:ident, $near:ident, $a:expr, $b:expr, $r:expr, $both:expr) => {{
        let (a, b) = ($a, $b);
        // SAFETY: AVX2 and FMA (module docs).
        F32x4Up(unsafe {
            match $r {
                Round::Up => $up(a, b),
                Round::Down => {
                    let b = if $both { F64x4Up::flip(b) } else { b };
                    F64x4Up::flip($up(F64x4Up::flip(a), b))
                }
                Round::Nearest => $near(a, b),
            }
        })
    }};
}

impl F32x4Up {
    /// The software f32 vector type's view of the lanes, for the operations that do not round.
    #[inline(always)]
    fn plain(self) -> F32x4 {
        F32x4(self.0)
    }
}

impl Ops for F32x4Up {
    type Mask = Mask4;
    #[inline(always)]
    fn exact(x: f64) -> F32x4Up {
        F32x4Up(F32x4::exact(x).0)
    }
    #[inline(always)]
    fn mask(b: bool) -> Mask4 {
        F32x4::mask(b)
    }
    #[inline(always)]
    fn is_nan(self) -> Mask4 {
        self.plain().is_nan()
    }
    #[inline(always)]
    fn less(self, b: F32x4Up) -> Mask4 {
        self.plain().less(b.plain())
    }
    #[inline(always)]
    fn less_eq(self, b: F32x4Up) -> Mask4 {
        self.plain().less_eq(b.plain())
    }
    #[inline(always)]
    fn greater(self, b: F32x4Up) -> Mask4 {
        self.plain().greater(b.plain())
    }
    #[inline(always)]
    fn greater_eq(self, b: F32x4Up) -> Mask4 {
        self.plain().greater_eq(b.plain())
    }
    #[inline(always)]
    fn equal(self, b: F32x4Up) -> Mask4 {
        self.plain().equal(b.plain())
    }
    #[inline(always)]
    fn select(m: Mask4, a: F32x4Up, b: F32x4Up) -> F32x4Up {
        F32x4Up(F32x4::select(m, a.plain(), b.plain()).0)
    }
    #[inline(always)]
    fn add(self, b: F32x4Up, r: Round) -> F32x4Up {
        directed_f32!(add_up_f32, add_near_f32, self.0, b.0, r, true)
    }
    #[inline(always)]
    fn sub(self, b: F32x4Up, r: Round) -> F32x4Up {
        directed_f32!(sub_up_f32, sub_near_f32, self.0, b.0, r, true)
    }
    #[inline(always)]
    fn mul(self, b: F32x4Up, r: Round) -> F32x4Up {
        directed_f32!(mul_up_f32, mul_near_f32, self.0, b.0, r, false)
    }
    #[inline(always)]
    fn div(self, b: F32x4Up, r: Round) -> F32x4Up {
        directed_f32!(div_up_f32, div_near_f32, self.0, b.0, r, false)
    }
    #[inline(always)]
    fn sqrt(self, r: Round) -> F32x4Up {
        let x = self.0;
        // SAFETY: AVX2 and FMA (module docs).
        F32x4Up(unsafe {
            match r {
                Round::Nearest => sqrt_near_f32(x),
                Round::Up => sqrt_up_f32(x),
                Round::Down => sqrt_down_f32(x),
            }
        })
    }
    #[inline(always)]
    fn neg(self) -> F32x4Up {
        F32x4Up(F64x4Up::flip(self.0))
    }
    #[inline(always)]
    fn min(self, b: F32x4Up) -> F32x4Up {
        F32x4Up(self.plain().min(b.plain()).0)
    }
    #[inline(always)]
    fn max(self, b: F32x4Up) -> F32x4Up {
        F32x4Up(self.plain().max(b.plain()).0)
    }
}

/// The f32 square root of f32 values in f64 lanes, in the current mode.
#[target_feature(enable = "avx2,fma")]
#[inline]
fn sqrt_up_f32(x: __m256d) -> __m256d {
    let out: __m256d;
    // SAFETY: register operands only.
    unsafe {
        asm!(
            "vcvtpd2ps {s:x}, {x}",
            "vsqrtps {s:x}, {s:x}",
            "vcvtps2pd {out}, {s:x}",
            out = lateout(ymm_reg) out,
            x = in(ymm_reg) x,
            s = out(ymm_reg) _,
            options(nomem, nostack, preserves_flags),
        );
    }
    out
}

/// [`sqrt_down`] in f32: the f32 root rounded up, one f32 ulp less where the f32 FMA
/// remainder `s * s - x` rounded up is positive.
#[target_feature(enable = "avx2,fma")]
#[inline]
fn sqrt_down_f32(x: __m256d) -> __m256d {
    let out: __m256d;
    // SAFETY: register operands only.
    unsafe {
        asm!(
            "vcvtpd2ps {x4:x}, {x}",
            "vsqrtps {s:x}, {x4:x}",
            "vmovaps {rem:x}, {s:x}",
            "vfmsub213ps {rem:x}, {s:x}, {x4:x}",
            "vxorps {zero:x}, {zero:x}, {zero:x}",
            "vcmpgtps {rem:x}, {rem:x}, {zero:x}",
            // All bits set (-1) where the remainder is positive: adding it takes one off.
            "vpaddd {s:x}, {s:x}, {rem:x}",
            "vcvtps2pd {out}, {s:x}",
            out = lateout(ymm_reg) out,
            x = in(ymm_reg) x,
            x4 = out(ymm_reg) _,
            s = out(ymm_reg) _,
            rem = out(ymm_reg) _,
            zero = out(ymm_reg) _,
            options(nomem, nostack, preserves_flags),
        );
    }
    out
}

/// The f32 square root rounded to nearest (the mode switched and back in one block).
#[target_feature(enable = "avx2,fma")]
#[inline]
fn sqrt_near_f32(x: __m256d) -> __m256d {
    let out: __m256d;
    let (mut saved, near): (u32, u32) = (0, NEAREST);
    // SAFETY: the control word saved and put back.
    unsafe {
        asm!(
            "stmxcsr dword ptr [{saved}]",
            "ldmxcsr dword ptr [{near}]",
            "vcvtpd2ps {s:x}, {x}",
            "vsqrtps {s:x}, {s:x}",
            "vcvtps2pd {out}, {s:x}",
            "ldmxcsr dword ptr [{saved}]",
            saved = in(reg) &raw mut saved,
            near = in(reg) &raw const near,
            out = out(ymm_reg) out,
            x = in(ymm_reg) x,
            s = out(ymm_reg) _,
            options(nostack),
        );
    }
    out
}

/// `vsqrtpd` in the current mode.
#[target_feature(enable = "avx2,fma")]
#[inline]
fn sqrt_up(x: __m256d) -> __m256d {
    let out: __m256d;
    // SAFETY: register operands only.
    unsafe {
        asm!(
            "vsqrtpd {out}, {x}",
            out = lateout(ymm_reg) out,
            x = in(ymm_reg) x,
            options(nomem, nostack, preserves_flags),
        );
    }
    out
}

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

/// `vsqrtpd` rounded to nearest (the mode switched and back in one block).
#[target_feature(enable = "avx2,fma")]
#[inline]
fn sqrt_near(x: __m256d) -> __m256d {
    let out: __m256d;
    let (mut saved, near): (u32, u32) = (0, NEAREST);
    // SAFETY: the control word saved and put back.
    unsafe {
        asm!(
            "stmxcsr dword ptr [{saved}]",
            "ldmxcsr dword ptr [{near}]",
            "vsqrtpd {out}, {x}",
            "ldmxcsr dword ptr [{saved}]",
            saved = in(reg) &raw mut saved,
            near = in(reg) &raw const near,
            out = out(ymm_reg) out,
            x = in(ymm_reg) x,
            options(nostack),
        );
    }
    out
}

impl super::simd::Pairs for F32x4Up {
    const WIDTH: usize = 4;
    type Scalar = f32;
    /// As [`F32x4`]'s (shuffles and exact conversions of f32 values: no rounding).
    #[inline(always)]
    unsafe fn load(p: *const f32) -> (F32x4Up, F32x4Up) {
        // SAFETY: the caller's contract.
        let (lo, hi) = unsafe { <F32x4 as super::simd::Pairs>::load(p) };
        (F32x4Up(lo.0), F32x4Up(hi.0))
    }
    #[inline(always)]
    unsafe fn store(p: *mut f32, (lo, hi): (F32x4Up, F32x4Up)) {
        // SAFETY: the caller's contract.
        unsafe { <F32x4 as super::simd::Pairs>::store(p, (lo.plain(), hi.plain())) }
    }
}

impl super::simd::Pairs for F64x4Up {
    const WIDTH: usize = 4;
    type Scalar = f64;
    /// As [`F64x4`]'s (shuffles: no rounding).
    #[inline(always)]
    unsafe fn load(p: *const f64) -> (F64x4Up, F64x4Up) {
        // SAFETY: the caller's contract.
        let (lo, hi) = unsafe { <F64x4 as super::simd::Pairs>::load(p) };
        (F64x4Up(lo.0), F64x4Up(hi.0))
    }
    #[inline(always)]
    unsafe fn store(p: *mut f64, (lo, hi): (F64x4Up, F64x4Up)) {
        // SAFETY: the caller's contract.
        unsafe { <F64x4 as super::simd::Pairs>::store(p, (lo.plain(), hi.plain())) }
    }
}
