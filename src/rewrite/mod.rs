//! Rewrites of the interval IR. Each pass is a function `&Graph -> Graph` that preserves the real
//! function and its domain (an empty input stays empty; nothing undefined becomes defined), and
//! only ever makes enclosures tighter or cheaper. The passes run in the order of [`PASSES`]; every
//! rebuild also folds constants, shares common subexpressions and drops dead nodes.
//!
//! Static sign analysis ([`crate::ir::sign`]) is not a graph transformation but an analysis of the
//! IR: the lowering consults its facts.

pub mod factors;
pub mod power;
pub mod square;

use crate::ir::Graph;

/// A named rewrite pass.
pub struct Pass {
    /// The pass's name (the name of its module).
    pub name: &'static str,
    /// The pass: builds the rewritten graph.
    pub run: fn(&Graph) -> Graph,
}

/// The passes, in the order they run.
pub const PASSES: &[Pass] = &[
    Pass {
        name: "power",
        run: power::run,
    },
    Pass {
        name: "factors",
        run: factors::run,
    },
    Pass {
        name: "square",
        run: square::run,
    },
];

/// Runs every pass.
pub fn run_all(g: &Graph) -> Graph {
    let mut g = g.rebuild(|g, op, _, _| g.add(op, Default::default()));
    for pass in PASSES {
        g = (pass.run)(&g);
    }
    // A last identity rebuild drops nodes the passes left unused.
    g.rebuild(|g, op, _, _| g.add(op, Default::default()))
}
