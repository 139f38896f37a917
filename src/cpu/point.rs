//! Point functions on the CPU: CORE-MATH's correctly rounded functions (`core-math` crate), in
//! f64 and f32, bound by each function's row of [`crate::point`]. A correctly rounded result r is
//! the float nearest f(x), so f(x) lies strictly between r's neighbours unless r is exact: one
//! step outward gives a rigorous bound, at most one ulp from the tightest. At infinite or extreme
//! values the step is still valid (the next float below +inf is MAX, which is <= +inf; the next
//! above -inf is -MAX, which is >= -inf).

use crate::cpu::round::{next_down, next_down_f32, next_up, next_up_f32};
use crate::scalar::{BinaryFn, Round, UnaryFn};

fn step_f64(v: f64, r: Round) -> f64 {
    match r {
        Round::Down => next_down(v),
        Round::Up => next_up(v),
        Round::Nearest => v,
    }
}

fn step_f32(v: f32, r: Round) -> f32 {
    match r {
        Round::Down => next_down_f32(v),
        Round::Up => next_up_f32(v),
        Round::Nearest => v,
    }
}

/// A rigorous bound of a unary `f` at x in f64 (see [`crate::scalar::Inst::Point2`]).
pub fn bound_f64(f: UnaryFn, x: f64, r: Round) -> f64 {
    step_f64((f.row().cpu_f64)(x), r)
}

/// A rigorous bound of a unary `f` at x in f32.
pub fn bound_f32(f: UnaryFn, x: f32, r: Round) -> f32 {
    step_f32((f.row().cpu_f32)(x), r)
}

/// A rigorous bound of a binary `f` at (x, y) in f64.
pub fn bound2_f64(f: BinaryFn, x: f64, y: f64, r: Round) -> f64 {
    step_f64((f.row().cpu_f64)(x, y), r)
}

/// A rigorous bound of a binary `f` at (x, y) in f32.
pub fn bound2_f32(f: BinaryFn, x: f32, y: f32, r: Round) -> f32 {
    step_f32((f.row().cpu_f32)(x, y), r)
}
