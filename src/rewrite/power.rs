//! Power specialization: `x^y` with a constant exponent becomes the cheapest exact form.
//!
//! - integer n: `pown(x, n)` (even/odd × sign cases in the lowering); n < 0: `1 / pown(x, -n)`;
//!   `x^0` is `pown(x, 0)`, which is 1 for a nonempty x and empty for an empty one;
//! - `x^1` is `x`;
//! - `x^0.5` is `sqrt(x)` and `x^-0.5` is `1 / sqrt(x)`: the same real function on the same
//!   domain (x >= 0, and x > 0 for the negative exponent).
//!
//! Other powers become the general `pow(x, y)`, defined for x >= 0 (IEEE 1788); `rootn(x, 2)` is
//! `sqrt(x)` and `rootn(x, -1)` is `pown(x, -1)`. (`rootn(x, 3)` stays a root: `cbrt` is a library
//! function, padded by its error bound, up to 2 ulps on the GPU; the root rule is within 1.)

use crate::interval::Interval;
use crate::ir::build::{integer_constant, pown};
use crate::ir::{Graph, Op};

/// Runs the pass: every `x^y`, and `pown`/`rootn` with small exponents, as listed above.
pub(crate) fn run(g: &Graph) -> Graph {
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
                // Any other exponent: the general power, defined for x >= 0.
                _ => g.add(
                    Op::Elem2(crate::scalar::BinaryFn::Pow, x, y),
                    Default::default(),
                ),
            }
        }
        Op::Pown(x, 1) => x,
        Op::Rootn(x, 1) => x,
        Op::Rootn(x, -1) => g.add(Op::Pown(x, -1), Default::default()),
        Op::Rootn(x, 2) => g.add(Op::Sqrt(x), Default::default()),
        _ => g.add(op, Default::default()),
    })
}
