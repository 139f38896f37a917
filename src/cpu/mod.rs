//! The CPU backend: a rigorous evaluator of the scalar IR, the embedded default when no GPU can
//! be used. Directed rounding is the hardware's where the processor has it (AVX-512's embedded
//! rounding, [`avx512`]; on AVX2 + FMA the MXCSR rounding mode switched around each
//! instruction's lanes, `mxcsr`, or upward around a tape instruction's lanes, [`upward`]), else emulated exactly ([`crate::round`], `lanes`, [`avx2`]),
//! always with the same bits; f32 results are rounded once; point functions are bound by
//! [`crate::point`]'s reference bounds.

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;
pub mod eval;
mod lanes;
#[cfg(target_arch = "x86_64")]
mod mxcsr;
#[cfg(all(test, target_arch = "x86_64"))]
mod same_bits;
#[cfg(target_arch = "x86_64")]
pub(crate) mod simd;
#[cfg(target_arch = "x86_64")]
pub(crate) mod upward;

/// Boxes per chunk: the evaluator runs each instruction over this many boxes at a time, and
/// `lanes` vectorizes over them.
pub(crate) const LANES: usize = 128;

/// Whether the evaluator rounds f64 operations with AVX-512's embedded rounding
/// ([`crate::round::hardware`]: the processor has AVX-512F and `IVJIT_CPU_ROUNDING` is not
/// `software`).
// Only x86-64 has the instructions; elsewhere nothing asks.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(crate) fn hardware_rounding() -> bool {
    crate::round::hardware()
}

/// Whether the evaluator rounds its directed operations by switching the processor's rounding
/// mode around each instruction's lanes (`mxcsr`): the processor has AVX2 and FMA but not
/// AVX-512F (where [`hardware_rounding`] holds instead), `IVJIT_CPU_ROUNDING` is not
/// `software`, and the mode was seen to round as asked (`mxcsr::works`). Decided once per
/// process.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(crate) fn mode_switching() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *ON.get_or_init(|| {
            !crate::round::forced_software()
                && !hardware_rounding()
                && avx2::available()
                // SAFETY: the processor has AVX2 and FMA (checked just before).
                && unsafe { mxcsr::works() }
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}
