//! Contractors on the interval IR: HC4Revise compiled into the graph.
//!
//! For constraints `g_j(x) ∈ c_j` on the outputs of a graph, [`hc4_revise`] builds a graph whose
//! outputs are the variables' boxes narrowed to what the constraints allow: a forward sweep
//! (the graph itself, on the box), then a backward sweep from each output's value met with its
//! range down to the variables, each node's allowed values projected onto its arguments by the
//! reverse of its operation (`a + b = n` leaves `a ∈ n - b`; `a^2 = n` leaves
//! `a ∈ sqrRev(n, a)`; `exp(a) = n` leaves `a ∈ log(n)`). A node used several times gets the
//! meet of every user's projection; nodes are visited users first (in reverse order of the
//! graph, where arguments precede their users). The result is a graph like any other: one
//! program, lowered once and run bit for bit by every engine, forward and backward in one
//! pass. Several sweeps repeat the two with the narrowed box.
//!
//! Soundness: every point of the box where every `g_j` is defined and lies in `c_j` stays in
//! the narrowed box. By induction from the outputs, each node's value at such a point lies in
//! its narrowed enclosure, because each projection is the reverse operation's enclosure of
//! the arguments that give the node a value in its narrowed set (points outside a function's
//! domain do not satisfy the constraint and may be dropped: `sqrt(a) = n` keeps `a ∈ n^2`).
//! Operations without a reverse rule here (sin, min, atan2, ...) leave their arguments as they
//! are, which is sound and only less narrow, except that an empty allowed set empties them (a
//! box on which sin(x) misses its range is emptied). An empty variable proves that no point of
//! the box satisfies the constraints.

use super::{Graph, NodeId, Op, RevFn, UnaryFn};
use crate::interval::Interval;
use crate::syntax::ast::Span;

/// The graph whose outputs are `g`'s variables, in order, narrowed by HC4Revise to the points
/// where each output `j` of `g` lies in `ranges[j]`, with `sweeps` forward-backward sweeps
/// (at least one). `ranges` has one interval per output.
pub fn hc4_revise(g: &Graph, ranges: &[Interval], sweeps: usize) -> Graph {
    assert_eq!(ranges.len(), g.outputs.len(), "one range per output");
    let mut c = Contract {
        g: g.clone(),
        span: Span::default(),
    };
    let live = g.live();
    let n = g.vars.len();
    let mut vars: Vec<NodeId> = (0..n as u32).map(|k| c.op(Op::Var(k))).collect();
    let ranges: Vec<NodeId> = ranges.iter().map(|r| c.g.constant(*r)).collect();
    for _ in 0..sweeps.max(1) {
        // Forward: g's live nodes on the current box.
        let mut fw: Vec<NodeId> = Vec::with_capacity(g.len());
        for id in g.ids() {
            let node = match g.op(id) {
                _ if !live[id.index()] => id, // never read
                Op::Var(k) => vars[k as usize],
                op => {
                    let args: Vec<NodeId> = op.args().iter().map(|a| fw[a.index()]).collect();
                    c.op(op.with_args(&args))
                }
            };
            fw.push(node);
        }
        // Backward: each node's allowed values, from the outputs down.
        let mut narrowed: Vec<Option<NodeId>> = vec![None; g.len()];
        for (j, o) in g.outputs.iter().enumerate() {
            let cur = narrowed[o.index()].unwrap_or(fw[o.index()]);
            narrowed[o.index()] = Some(c.op(Op::Intersect(cur, ranges[j])));
        }
        for id in g.ids().rev() {
            let Some(allowed) = narrowed[id.index()] else {
                continue;
            };
            let op = g.op(id);
            if let Op::Var(k) = op {
                vars[k as usize] = allowed;
                continue;
            }
            c.project(op, allowed, &fw, &mut narrowed);
        }
    }
    c.g.outputs = vars;
    c.g
}

struct Contract {
    g: Graph,
    span: Span,
}

impl Contract {
    fn op(&mut self, op: Op) -> NodeId {
        self.g.add(op, self.span)
    }

    /// Narrows each argument of `op` (a node of the original graph, whose arguments' forward
    /// values are `fw`) to the values that give `op` a value in `allowed`.
    fn project(&mut self, op: Op, n: NodeId, fw: &[NodeId], narrowed: &mut [Option<NodeId>]) {
        // The argument's current enclosure: narrowed by an earlier user, or its forward value.
        let cur =
            |narrowed: &[Option<NodeId>], a: NodeId| narrowed[a.index()].unwrap_or(fw[a.index()]);
        // Meets the argument's current enclosure with a projection.
        let narrow = |c: &mut Contract, narrowed: &mut [Option<NodeId>], a: NodeId, p: NodeId| {
            let now = narrowed[a.index()].unwrap_or(fw[a.index()]);
            narrowed[a.index()] = Some(c.op(Op::Intersect(now, p)));
        };
        match op {
            Op::Neg(a) => {
                let p = self.op(Op::Neg(n));
                narrow(self, narrowed, a, p);
            }
            Op::Add(a, b) => {
                let p = self.op(Op::Sub(n, cur(narrowed, b)));
                narrow(self, narrowed, a, p);
                let p = self.op(Op::Sub(n, cur(narrowed, a)));
                narrow(self, narrowed, b, p);
            }
            Op::Sub(a, b) => {
                let p = self.op(Op::Add(n, cur(narrowed, b)));
                narrow(self, narrowed, a, p);
                let p = self.op(Op::Sub(cur(narrowed, a), n));
                narrow(self, narrowed, b, p);
            }
            Op::Mul(a, b) => {
                let p = self.op(Op::MulRev(cur(narrowed, b), n, cur(narrowed, a)));
                narrow(self, narrowed, a, p);
                let p = self.op(Op::MulRev(cur(narrowed, a), n, cur(narrowed, b)));
                narrow(self, narrowed, b, p);
            }
            // n = a / b: a = n b, and b is a t with n t in a.
            Op::Div(a, b) => {
                let p = self.op(Op::Mul(n, cur(narrowed, b)));
                narrow(self, narrowed, a, p);
                let p = self.op(Op::MulRev(n, cur(narrowed, a), cur(narrowed, b)));
                narrow(self, narrowed, b, p);
            }
            // n = a b + c.
            Op::Fma(a, b, c3) => {
                let ab = self.op(Op::Mul(cur(narrowed, a), cur(narrowed, b)));
                let p = self.op(Op::Sub(n, ab));
                narrow(self, narrowed, c3, p);
                let m = self.op(Op::Sub(n, cur(narrowed, c3)));
                let p = self.op(Op::MulRev(cur(narrowed, b), m, cur(narrowed, a)));
                narrow(self, narrowed, a, p);
                let p = self.op(Op::MulRev(cur(narrowed, a), m, cur(narrowed, b)));
                narrow(self, narrowed, b, p);
            }
            Op::Sqr(a) => {
                let p = self.op(Op::Rev(RevFn::Sqr, n, cur(narrowed, a)));
                narrow(self, narrowed, a, p);
            }
            Op::Pown(a, k) => {
                let p = self.op(Op::Rev(RevFn::Pown(k), n, cur(narrowed, a)));
                narrow(self, narrowed, a, p);
            }
            Op::Abs(a) => {
                let p = self.op(Op::Rev(RevFn::Abs, n, cur(narrowed, a)));
                narrow(self, narrowed, a, p);
            }
            // n = sqrt(a) >= 0: a = n^2 (a < 0 is outside the domain).
            Op::Sqrt(a) => {
                let p = self.op(Op::Sqr(n));
                narrow(self, narrowed, a, p);
            }
            // n = rootn(a, k): a = n^k (with n's sign where k is odd; n >= 0 where even).
            Op::Rootn(a, k) => {
                let p = self.op(Op::Pown(n, k));
                narrow(self, narrowed, a, p);
            }
            Op::Elem(f, a) => {
                // The inverse of a function monotone on its domain: a = inverse(n).
                let inverse = match f {
                    UnaryFn::Exp => Some(UnaryFn::Log),
                    UnaryFn::Exp2 => Some(UnaryFn::Log2),
                    UnaryFn::Exp10 => Some(UnaryFn::Log10),
                    UnaryFn::Expm1 => Some(UnaryFn::Log1p),
                    UnaryFn::Log => Some(UnaryFn::Exp),
                    UnaryFn::Log2 => Some(UnaryFn::Exp2),
                    UnaryFn::Log10 => Some(UnaryFn::Exp10),
                    UnaryFn::Log1p => Some(UnaryFn::Expm1),
                    UnaryFn::Sinh => Some(UnaryFn::Asinh),
                    UnaryFn::Asinh => Some(UnaryFn::Sinh),
                    UnaryFn::Tanh => Some(UnaryFn::Atanh),
                    UnaryFn::Atanh => Some(UnaryFn::Tanh),
                    // n in [-pi/2, pi/2] (asin), [0, pi] (acos), (-pi/2, pi/2) (atan), [0, inf)
                    // (acosh): on those the forward function is the inverse.
                    UnaryFn::Asin => Some(UnaryFn::Sin),
                    UnaryFn::Acos => Some(UnaryFn::Cos),
                    UnaryFn::Atan => Some(UnaryFn::Tan),
                    UnaryFn::Acosh => Some(UnaryFn::Cosh),
                    _ => None,
                };
                if let Some(g) = inverse {
                    let p = self.op(Op::Elem(g, n));
                    narrow(self, narrowed, a, p);
                } else if f == UnaryFn::Cosh {
                    let p = self.op(Op::Rev(RevFn::Cosh, n, cur(narrowed, a)));
                    narrow(self, narrowed, a, p);
                } else if f == UnaryFn::Cbrt {
                    let p = self.op(Op::Pown(n, 3));
                    narrow(self, narrowed, a, p);
                } else {
                    self.pass_emptiness(op, n, fw, narrowed);
                }
            }
            // No reverse rule: the arguments keep their values, but emptiness passes on.
            _ => self.pass_emptiness(op, n, fw, narrowed),
        }
    }

    /// For an operation without a reverse rule: its arguments stay as they are, unless the
    /// allowed set `n` is empty (no point of the box satisfies the constraints), which empties
    /// them too (`a + 0 n` is `a`, or empty where `n` is), so that a box on which sin(x) misses
    /// its range is emptied although x has no projection through sin.
    fn pass_emptiness(
        &mut self,
        op: Op,
        n: NodeId,
        fw: &[NodeId],
        narrowed: &mut [Option<NodeId>],
    ) {
        let zero = self.g.constant(Interval { lo: 0.0, hi: 0.0 });
        let z = self.op(Op::Mul(zero, n));
        for a in op.args() {
            let now = narrowed[a.index()].unwrap_or(fw[a.index()]);
            let p = self.op(Op::Add(now, z));
            narrowed[a.index()] = Some(self.op(Op::Intersect(now, p)));
        }
    }
}
