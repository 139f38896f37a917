//! Repeated factors collapse into powers: `x*y*x` becomes `pown(x, 2) * y`, `x^2 * x` becomes
//! `pown(x, 3)`. A power knows its factors are equal, so it is tighter than their product (and
//! needs fewer operations). Multiplication is total, so the domain is unchanged.
//!
//! A product tree is collected from its root: the topmost `mul` of a chain, whose users are not
//! all single-use `mul`s. Inner `mul` nodes used only by their parent belong to the same tree, so
//! every node is visited once and long chains stay linear.

use crate::ir::{Graph, NodeId, Op};

/// Runs the pass: collapses repeated factors of every product tree into powers.
pub(crate) fn run(g: &Graph) -> Graph {
    let uses = g.use_counts();
    // An inner node of a product tree: a mul used exactly once, by a mul.
    let mut inner = vec![false; g.len()];
    for id in g.ids() {
        if let Op::Mul(a, b) = g.op(id) {
            for x in [a, b] {
                if matches!(g.op(x), Op::Mul(..)) && uses[x.index()] == 1 {
                    inner[x.index()] = true;
                }
            }
        }
    }
    g.rebuild(|new, op, old_id, map| {
        let Op::Mul(..) = g.op(old_id) else {
            return new.add(op, Default::default());
        };
        if inner[old_id.index()] {
            return new.add(op, Default::default());
        }
        // Collect the factors of the tree rooted here (in the old graph), with exponents.
        let mut factors: Vec<(NodeId, i64)> = Vec::new();
        let mut stack = vec![old_id];
        let mut overflow = false;
        while let Some(x) = stack.pop() {
            match g.op(x) {
                Op::Mul(a, b) if x == old_id || inner[x.index()] => {
                    stack.push(b);
                    stack.push(a);
                }
                other => {
                    let (base, k) = match other {
                        Op::Sqr(a) => (a, 2),
                        // A negative power is not a repeated factor: x^-1 * x is 1 only
                        // where x != 0.
                        Op::Pown(a, n) if n > 0 => (a, n),
                        _ => (x, 1),
                    };
                    match factors.iter_mut().find(|(f, _)| *f == base) {
                        Some((_, e)) => match e.checked_add(k) {
                            Some(s) => *e = s,
                            None => overflow = true,
                        },
                        None => factors.push((base, k)),
                    }
                }
            }
        }
        let leaves_before = count_leaves(g, old_id, &inner);
        if overflow || factors.len() == leaves_before {
            return new.add(op, Default::default()); // no repeated factor
        }
        let mut acc: Option<NodeId> = None;
        for (base, k) in factors {
            let b = map[base.index()].expect("factor precedes the product");
            let term = if k == 1 {
                b
            } else {
                new.add(Op::Pown(b, k), Default::default())
            };
            acc = Some(match acc {
                None => term,
                Some(a) => new.add(Op::Mul(a, term), Default::default()),
            });
        }
        acc.expect("a product has factors")
    })
}

/// Number of leaves (non-mul factors, powers counted once) of the product tree at `root`.
fn count_leaves(g: &Graph, root: NodeId, inner: &[bool]) -> usize {
    let mut n = 0;
    let mut stack = vec![root];
    while let Some(x) = stack.pop() {
        match g.op(x) {
            Op::Mul(a, b) if x == root || inner[x.index()] => {
                stack.push(a);
                stack.push(b);
            }
            _ => n += 1,
        }
    }
    n
}
