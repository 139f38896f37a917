//! Power specialization: `x^y` with a constant exponent becomes the cheapest exact form.
//!
//! - integer n: `pown(x, n)` (even/odd × sign cases in the lowering); n < 0: `1 / pown(x, -n)`;
//!   `x^0` is `pown(x, 0)`, which is 1 for a nonempty x and empty for an empty one;
//! - `x^1` is `x`;
//! - `x^0.5` is `sqrt(x)` and `x^-0.5` is `1 / sqrt(x)`: the same real function on the same
//!   domain (x >= 0, and x > 0 for the negative exponent).
//!
//! Other powers stay `pow` nodes (general `pow` comes with the elementary functions).

use crate::interval::Interval;
use crate::ir::build::{integer_constant, pown};
use crate::ir::{Graph, Op};

pub fn run(g: &Graph) -> Graph {
    g.rebuild(|g, op, _, _| match op {
        Op::Pow(x, y) => {
            if let Some(n) = integer_constant(g, y) {
                return pown(g, x, n, Default::default());
            }
            match g.as_const(y) {
                Some(c) if c.lo == 0.5 && c.hi == 0.5 => g.add(Op::Sqrt(x), Default::default()),
                Some(c) if c.lo == -0.5 && c.hi == -0.5 => {
                    let s = g.add(Op::Sqrt(x), Default::default());
                    let one = g.constant(Interval { lo: 1.0, hi: 1.0 });
                    g.add(Op::Div(one, s), Default::default())
                }
                _ => g.add(op, Default::default()),
            }
        }
        Op::Pown(x, 1) => x,
        _ => g.add(op, Default::default()),
    })
}
