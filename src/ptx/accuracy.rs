//! Error bounds of the CUDA math library functions the GPU runtime (`runtime/ivjit_math.cu`)
//! calls, in ulps, and the outward padding the PTX emitter derives from them.
//!
//! Source: NVIDIA, *CUDA C++ Programming Guide*, release 13.0, section 5.5 "Floating-Point
//! Computation" (docs.nvidia.com/cuda/cuda-c-programming-guide): tables 47 (exponential
//! functions), 48 (power functions), 49 (trigonometric), 50 (hyperbolic) of section 5.5.7 "CUDA
//! C++ Mathematical Standard Library Functions", and table 55 of section 5.5.8 "Non-Standard
//! CUDA Mathematical Functions" (exp10, sinpi, cospi). Every function we call is in those tables,
//! none with a range restriction or a "full range" condition: each row gives one bound for the
//! whole domain, and that bound is what [`cuda_max_ulps`] returns. None of the rows depends on
//! compilation flags except through `--use_fast_math`, which the runtime never uses.
//!
//! What the bound means (section 5.5.7): "the absolute value of the difference between the ULPs
//! returned by the function and a correctly rounded result of the corresponding precision
//! obtained according to the round-to-nearest ties-to-even rounding mode". So a result y with
//! bound e is at most e floats away from RN(f(x)), which is within half an ulp of f(x): y moved
//! e + 1 floats outward encloses f(x) (`toolchain` note: "a result y with bound e encloses the
//! true value only after e + 1 steps outward").
//!
//! Caveat, quoted from the same section: "The error bounds are derived from extensive, though not
//! exhaustive, testing. Therefore, they are not guaranteed." They are the best statement NVIDIA
//! makes; `tests/gpu_points.rs` measures the distance to correctly rounded values on the GPU and
//! fails if a padded bound misses.

use crate::scalar::{PointFn, Precision};

/// Maximum error in ulps of the CUDA math library function behind `f` in precision `p`, as
/// tabulated by NVIDIA (see the module documentation; each line names its table row).
pub fn cuda_max_ulps(f: PointFn, p: Precision) -> u32 {
    use PointFn::*;
    match p {
        Precision::F64 => match f {
            Exp => 1,   // table 47, exp(x): 1 ULP
            Exp2 => 1,  // table 47, exp2(x): 1 ULP
            Exp10 => 1, // table 55, exp10(x): 1 ULP
            Expm1 => 1, // table 47, expm1(x): 1 ULP
            Log => 1,   // table 47, log(x): 1 ULP
            Log2 => 1,  // table 47, log2(x): 1 ULP
            Log10 => 1, // table 47, log10(x): 1 ULP
            Log1p => 1, // table 47, log1p(x): 1 ULP
            Sin => 2,   // table 49, sin(x): 2 ULP
            Cos => 2,   // table 49, cos(x): 2 ULP
            Tan => 2,   // table 49, tan(x): 2 ULP
            Asin => 2,  // table 49, asin(x): 2 ULP
            Acos => 2,  // table 49, acos(x): 2 ULP
            Atan => 2,  // table 49, atan(x): 2 ULP
            Sinh => 2,  // table 50, sinh(x): 2 ULP
            Cosh => 1,  // table 50, cosh(x): 1 ULP
            Tanh => 1,  // table 50, tanh(x): 1 ULP
            Asinh => 3, // table 50, asinh(x): 3 ULP
            Acosh => 3, // table 50, acosh(x): 3 ULP
            Atanh => 2, // table 50, atanh(x): 2 ULP
            Cbrt => 1,  // table 48, cbrt(x): 1 ULP
            Sinpi => 2, // table 55, sinpi(x): 2 ULP
            Cospi => 2, // table 55, cospi(x): 2 ULP
            Atan2 => 2, // table 49, atan2(y, x): 2 ULP
            Pow => 2,   // table 48, pow(x, y): 2 ULP
            Hypot => 2, // table 48, hypot(x, y): 2 ULP
        },
        Precision::F32 => match f {
            Exp => 2,   // table 47, expf(x): 2 ULP
            Exp2 => 2,  // table 47, exp2f(x): 2 ULP
            Exp10 => 2, // table 55, exp10f(x): 2 ULP
            Expm1 => 1, // table 47, expm1f(x): 1 ULP
            Log => 1,   // table 47, logf(x): 1 ULP
            Log2 => 1,  // table 47, log2f(x): 1 ULP
            Log10 => 2, // table 47, log10f(x): 2 ULP
            Log1p => 1, // table 47, log1pf(x): 1 ULP
            Sin => 2,   // table 49, sinf(x): 2 ULP
            Cos => 2,   // table 49, cosf(x): 2 ULP
            Tan => 4,   // table 49, tanf(x): 4 ULP
            Asin => 2,  // table 49, asinf(x): 2 ULP
            Acos => 2,  // table 49, acosf(x): 2 ULP
            Atan => 2,  // table 49, atanf(x): 2 ULP
            Sinh => 3,  // table 50, sinhf(x): 3 ULP
            Cosh => 2,  // table 50, coshf(x): 2 ULP
            Tanh => 2,  // table 50, tanhf(x): 2 ULP
            Asinh => 3, // table 50, asinhf(x): 3 ULP
            Acosh => 4, // table 50, acoshf(x): 4 ULP
            Atanh => 3, // table 50, atanhf(x): 3 ULP
            Cbrt => 1,  // table 48, cbrtf(x): 1 ULP
            Sinpi => 1, // table 55, sinpif(x): 1 ULP
            Cospi => 1, // table 55, cospif(x): 1 ULP
            Atan2 => 3, // table 49, atan2f(y, x): 3 ULP
            Pow => 4,   // table 48, powf(x, y): 4 ULP
            Hypot => 3, // table 48, hypotf(x, y): 3 ULP
        },
    }
}

/// Number of one-float steps outward the emitter applies to the library's result:
/// [`cuda_max_ulps`] + 1 (see the module documentation).
pub fn pad_steps(f: PointFn, p: Precision) -> u32 {
    cuda_max_ulps(f, p) + 1
}
