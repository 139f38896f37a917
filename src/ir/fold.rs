//! Constant folding with rigorous interval arithmetic.
//!
//! A node whose arguments are all constants is evaluated at compile time by the same code that
//! evaluates it at run time: the interval lowering of that one operation, run by the CPU
//! evaluator in f64. Folding therefore never invents semantics of its own. (An f32 program later
//! rounds the folded f64 bounds outward to f32, which encloses the same set.)

use super::Op;
use crate::interval::Interval;

/// The constant value of `op` applied to constant arguments, or `None` if it cannot be folded.
pub fn fold(op: &Op, args: &[Interval]) -> Option<Interval> {
    let program = crate::lower::lower_constant_op(op, args)?;
    let out = crate::cpu::eval::eval_soa(&program, &[], 1);
    Some(crate::cpu::eval::to_interval(out[0], out[1]))
}
