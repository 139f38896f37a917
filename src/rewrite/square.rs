//! Square nonnegativity: `x*x` and `pown(x, 2)` become `sqr(x)`, which knows that both factors are
//! the same number: `[-1, 2]^2 = [0, 4]`, where the product of two independent intervals would be
//! `[-2, 4]`.

use crate::ir::{Graph, Op};

/// Runs the pass: turns `x*x` and `pown(x, 2)` into `sqr(x)`.
pub(crate) fn run(g: &Graph) -> Graph {
    g.rebuild(|g, op, _, _| match op {
        Op::Mul(a, b) if a == b => g.add(Op::Sqr(a), Default::default()),
        Op::Pown(a, 2) => g.add(Op::Sqr(a), Default::default()),
        _ => g.add(op, Default::default()),
    })
}
