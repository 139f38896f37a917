//! The CPU backend: a rigorous evaluator of the scalar IR, the embedded default when no GPU can
//! be used. Directed rounding is emulated exactly ([`crate::round`]); f32 results are rounded
//! once; point functions are bound by [`crate::point`]'s reference bounds.

pub mod eval;
mod lanes;

/// Boxes per chunk: the evaluator runs each instruction over this many boxes at a time, and
/// `lanes` vectorizes over them.
pub const LANES: usize = 64;
