//! The CPU backend: a rigorous evaluator of the scalar IR, the embedded default when no GPU can
//! be used. Directed rounding is emulated exactly ([`round`]); f32 results are rounded once.

pub mod eval;
mod lanes;
pub mod point;
pub mod round;
