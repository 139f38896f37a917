//! Point functions on the CPU: CORE-MATH's correctly rounded functions (`core-math` crate), in
//! f64 and f32. A correctly rounded result r is the float nearest f(x), so f(x) lies strictly
//! between r's neighbours unless r is exact: one step outward gives a rigorous bound, at most one
//! ulp from the tightest. At infinite or extreme values the step is still valid (the next float
//! below +inf is MAX, which is <= +inf; the next above -inf is -MAX, which is >= -inf).

use crate::cpu::round::{next_down, next_down_f32, next_up, next_up_f32};
use crate::scalar::{PointFn, Round};
use core_math as cm;

/// The correctly rounded (to nearest) value of `f` in f64.
pub fn nearest_f64(f: PointFn, x: f64, y: f64) -> f64 {
    match f {
        PointFn::Exp => cm::exp(x),
        PointFn::Exp2 => cm::exp2(x),
        PointFn::Exp10 => cm::exp10(x),
        PointFn::Expm1 => cm::expm1(x),
        PointFn::Log => cm::log(x),
        PointFn::Log2 => cm::log2(x),
        PointFn::Log10 => cm::log10(x),
        PointFn::Log1p => cm::log1p(x),
        PointFn::Sin => cm::sin(x),
        PointFn::Cos => cm::cos(x),
        PointFn::Tan => cm::tan(x),
        PointFn::Asin => cm::asin(x),
        PointFn::Acos => cm::acos(x),
        PointFn::Atan => cm::atan(x),
        PointFn::Sinh => cm::sinh(x),
        PointFn::Cosh => cm::cosh(x),
        PointFn::Tanh => cm::tanh(x),
        PointFn::Asinh => cm::asinh(x),
        PointFn::Acosh => cm::acosh(x),
        PointFn::Atanh => cm::atanh(x),
        PointFn::Cbrt => cm::cbrt(x),
        PointFn::Sinpi => cm::sinpi(x),
        PointFn::Cospi => cm::cospi(x),
        PointFn::Atan2 => cm::atan2(x, y),
        PointFn::Pow => cm::pow(x, y),
        PointFn::Hypot => cm::hypot(x, y),
    }
}

/// The correctly rounded (to nearest) value of `f` in f32.
pub fn nearest_f32(f: PointFn, x: f32, y: f32) -> f32 {
    match f {
        PointFn::Exp => cm::expf(x),
        PointFn::Exp2 => cm::exp2f(x),
        PointFn::Exp10 => cm::exp10f(x),
        PointFn::Expm1 => cm::expm1f(x),
        PointFn::Log => cm::logf(x),
        PointFn::Log2 => cm::log2f(x),
        PointFn::Log10 => cm::log10f(x),
        PointFn::Log1p => cm::log1pf(x),
        PointFn::Sin => cm::sinf(x),
        PointFn::Cos => cm::cosf(x),
        PointFn::Tan => cm::tanf(x),
        PointFn::Asin => cm::asinf(x),
        PointFn::Acos => cm::acosf(x),
        PointFn::Atan => cm::atanf(x),
        PointFn::Sinh => cm::sinhf(x),
        PointFn::Cosh => cm::coshf(x),
        PointFn::Tanh => cm::tanhf(x),
        PointFn::Asinh => cm::asinhf(x),
        PointFn::Acosh => cm::acoshf(x),
        PointFn::Atanh => cm::atanhf(x),
        PointFn::Cbrt => cm::cbrtf(x),
        PointFn::Sinpi => cm::sinpif(x),
        PointFn::Cospi => cm::cospif(x),
        PointFn::Atan2 => cm::atan2f(x, y),
        PointFn::Pow => cm::powf(x, y),
        PointFn::Hypot => cm::hypotf(x, y),
    }
}

/// A rigorous bound of `f` at (x, y) in f64 (see [`crate::scalar::Inst::Point`]).
pub fn bound_f64(f: PointFn, x: f64, y: f64, r: Round) -> f64 {
    let v = nearest_f64(f, x, y);
    match r {
        Round::Down => next_down(v),
        Round::Up => next_up(v),
        Round::Nearest => v,
    }
}

/// A rigorous bound of `f` at (x, y) in f32.
pub fn bound_f32(f: PointFn, x: f32, y: f32, r: Round) -> f32 {
    let v = nearest_f32(f, x, y);
    match r {
        Round::Down => next_down_f32(v),
        Round::Up => next_up_f32(v),
        Round::Nearest => v,
    }
}
