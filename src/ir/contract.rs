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
//! Operations without a reverse rule here (sinpi, min, atan2, ...) leave their arguments as they
//! are, which is sound and only less narrow, except that an empty allowed set empties them (a
//! box on which sinpi(x) misses its range is emptied). An empty variable proves that no point of
//! the box satisfies the constraints.

use super::diff::{jacobian, Gradient};
use super::{Graph, NodeId, NumericFn, Op, Rev2Fn, RevFn, UnaryFn};
use crate::interval::Interval;
use crate::scalar::BinaryFn;
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
    // An output whose range is the whole line constrains nothing: neither projected nor
    // used by the centered step (a complement's contractor has one bounded output).
    let bounded: Vec<bool> = ranges.iter().map(|r| *r != Interval::ENTIRE).collect();
    let ranges: Vec<NodeId> = ranges.iter().map(|r| c.g.constant(*r)).collect();
    // f with its Jacobian and each output's mean-value flag, for the centered step.
    let (jac, layout) = jacobian(g);
    // The variables each output reads, for the centered step; none (no step) where the output
    // is a tree, every variable and subexpression occurring once: HC4Revise is then already
    // hull-consistent for that constraint (the projections are exact up to rounding), and
    // the step would only cost time (measured: 1.5x on the five problems of
    // docs/constraints.md, with 0.3 % fewer or more boxes either way).
    let reads: Vec<Vec<usize>> = g
        .outputs
        .iter()
        .map(|&o| {
            let live = g.live_from(&[o]);
            let mut uses = vec![0u32; g.len()];
            for id in g.ids().filter(|id| live[id.index()]) {
                for a in g.op(id).args() {
                    uses[a.index()] += 1;
                }
            }
            let shared = g.ids().any(|id| {
                uses[id.index()] > 1 && !matches!(g.op(id), Op::Const(_) | Op::DecoratedConst(..))
            });
            if !shared {
                return Vec::new();
            }
            g.ids()
                .filter(|id| live[id.index()])
                .filter_map(|id| match g.op(id) {
                    Op::Var(k) => Some(k as usize),
                    _ => None,
                })
                .collect()
        })
        .collect();
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
            if !bounded[j] {
                continue; // nothing to project (points outside its domain are kept)
            }
            let cur = narrowed[o.index()].unwrap_or(fw[o.index()]);
            narrowed[o.index()] = Some(c.op(Op::Intersect(cur, ranges[j])));
        }
        let allowed: Vec<NodeId> = g
            .outputs
            .iter()
            .map(|o| narrowed[o.index()].unwrap_or(fw[o.index()]))
            .collect();
        let centered = c.centered(&jac, layout, &vars, &allowed, &bounded, &reads);
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
        // Both contractions hold every feasible point: their meet does too.
        for (v, cv) in vars.iter_mut().zip(centered) {
            *v = c.op(Op::Intersect(*v, cv));
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

    /// The nodes of `src` that `roots` depend on, built into the contractor's graph with its
    /// variables at `at`.
    fn instantiate(&mut self, src: &Graph, roots: &[NodeId], at: &[NodeId]) -> Vec<Option<NodeId>> {
        src.copy_into(&mut self.g, roots, at, self.span)
    }

    /// The *centered* contraction of the box `vars` (Codac's `CtcInverse` with its centered
    /// form): for each output f_j, whose allowed values on the box are `allowed[j]` (its
    /// enclosure met with its range), the mean value theorem gives, for every feasible x of
    /// the box, `f_j(x) - f_j(c) = Σ_k g_k (x_k - c_k)` with c a point of the box (IEEE 1788 mid) and g_k in
    /// the Jacobian's enclosure J_k over the box (`jac`, laid out as `layout`). So each
    /// `p_k = x_k - c_k` lies in `mulRev(J_k, (allowed_j - f_j(c)) - Σ_{l≠k} J_l p_l, p_k)`,
    /// and x_k in `p_k + c_k`. This linear relaxation narrows where HC4's projections cannot
    /// (a curve crossing the box diagonally), the more the smaller the box.
    ///
    /// Only where the mean value theorem applies: the output's flag (f_j continuous and
    /// defined on the whole box) is [1, 1]. Elsewhere, and where a partial's enclosure or
    /// f_j(c) is empty, that value is replaced by `[entire]` (`MeanValue([entire], v, flag)`),
    /// which narrows nothing: the step is sound on every box. Outputs whose range is the whole
    /// line (`bounded[j]` false: the other constraints of a complement's contractor) are
    /// skipped; each output's step touches only the variables it reads (`reads[j]`, empty
    /// where the step is not worth it: see `hc4_revise`). Returns the narrowed variables.
    fn centered(
        &mut self,
        jac: &Graph,
        layout: Gradient,
        vars: &[NodeId],
        allowed: &[NodeId],
        bounded: &[bool],
        reads: &[Vec<usize>],
    ) -> Vec<NodeId> {
        let n = vars.len();
        let entire = self.g.constant(Interval::ENTIRE);
        // On the box: each bounded output's flag and partials; at the midpoint: its value.
        let used = |j: usize| bounded[j] && !reads[j].is_empty();
        let on_box_roots: Vec<NodeId> = (0..allowed.len())
            .filter(|&j| used(j))
            .flat_map(|j| {
                std::iter::once(layout.defined(j)).chain((0..n).map(move |k| layout.partial(j, k)))
            })
            .map(|o| jac.outputs[o])
            .collect();
        let mid_roots: Vec<NodeId> = (0..allowed.len())
            .filter(|&j| used(j))
            .map(|j| jac.outputs[layout.value(j)])
            .collect();
        let on_box = self.instantiate(jac, &on_box_roots, vars);
        // IEEE 1788's mid, a point of the box however unbounded (0 for the whole line, the
        // largest finite float toward an infinite end): not `Op::Mid`, which is empty for an
        // unbounded side and would empty the variable (found by the class tests).
        let mids: Vec<NodeId> = vars
            .iter()
            .map(|&x| self.op(Op::Numeric(NumericFn::Mid, x)))
            .collect();
        let at_mid = self.instantiate(jac, &mid_roots, &mids);
        let node = |nodes: &[Option<NodeId>], k: usize| {
            nodes[jac.outputs[k].index()].expect("outputs are live")
        };
        let mut x: Vec<NodeId> = vars.to_vec();
        for (j, &allowed_j) in allowed.iter().enumerate() {
            if !used(j) {
                continue;
            }
            let flag = node(&on_box, layout.defined(j));
            let guard = |c: &mut Contract, v: NodeId| c.op(Op::MeanValue(entire, v, flag));
            let f_mid = node(&at_mid, layout.value(j));
            let f_mid = guard(self, f_mid);
            let fm = self.op(Op::Sub(allowed_j, f_mid));
            // Only the variables f_j reads: the others' terms are 0 and they are not narrowed,
            // so a constraint costs the variables it reads, not all of them.
            let zero = self.g.constant(Interval { lo: 0.0, hi: 0.0 });
            let reads = &reads[j];
            let p: Vec<NodeId> = reads
                .iter()
                .map(|&k| self.op(Op::Sub(x[k], mids[k])))
                .collect();
            let slopes: Vec<NodeId> = reads
                .iter()
                .map(|&k| {
                    let slope = node(&on_box, layout.partial(j, k));
                    guard(self, slope)
                })
                .collect();
            let terms: Vec<NodeId> = (0..reads.len())
                .map(|i| self.op(Op::Mul(slopes[i], p[i])))
                .collect();
            // Σ_{l≠k} by prefix and suffix sums (3n operations, not n^2).
            let r = reads.len();
            let mut prefix = vec![zero; r + 1];
            for i in 0..r {
                prefix[i + 1] = self.op(Op::Add(prefix[i], terms[i]));
            }
            let mut suffix = vec![zero; r + 1];
            for i in (0..r).rev() {
                suffix[i] = self.op(Op::Add(suffix[i + 1], terms[i]));
            }
            for (i, &k) in reads.iter().enumerate() {
                let rest = self.op(Op::Add(prefix[i], suffix[i + 1]));
                let target = self.op(Op::Sub(fm, rest));
                let pk = self.op(Op::Rev2(Rev2Fn::Mul, slopes[i], target, p[i]));
                let xk = self.op(Op::Add(pk, mids[k]));
                x[k] = self.op(Op::Intersect(x[k], xk));
            }
        }
        x
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
                let p = self.op(Op::Rev2(Rev2Fn::Mul, cur(narrowed, b), n, cur(narrowed, a)));
                narrow(self, narrowed, a, p);
                let p = self.op(Op::Rev2(Rev2Fn::Mul, cur(narrowed, a), n, cur(narrowed, b)));
                narrow(self, narrowed, b, p);
            }
            // n = a / b: a = n b, and b is a t with n t in a.
            Op::Div(a, b) => {
                let p = self.op(Op::Mul(n, cur(narrowed, b)));
                narrow(self, narrowed, a, p);
                let p = self.op(Op::Rev2(Rev2Fn::Mul, n, cur(narrowed, a), cur(narrowed, b)));
                narrow(self, narrowed, b, p);
            }
            // n = a b + c.
            Op::Fma(a, b, c3) => {
                let ab = self.op(Op::Mul(cur(narrowed, a), cur(narrowed, b)));
                let p = self.op(Op::Sub(n, ab));
                narrow(self, narrowed, c3, p);
                let m = self.op(Op::Sub(n, cur(narrowed, c3)));
                let p = self.op(Op::Rev2(Rev2Fn::Mul, cur(narrowed, b), m, cur(narrowed, a)));
                narrow(self, narrowed, a, p);
                let p = self.op(Op::Rev2(Rev2Fn::Mul, cur(narrowed, a), m, cur(narrowed, b)));
                narrow(self, narrowed, b, p);
            }
            // n = a^b (pow's domain): a is a t with t^b' in n for some b', b a t with a'^t in
            // n for some a'.
            Op::Pow(a, b) | Op::Elem2(BinaryFn::Pow, a, b) => {
                let p = self.op(Op::Rev2(
                    Rev2Fn::Pow1,
                    cur(narrowed, b),
                    n,
                    cur(narrowed, a),
                ));
                narrow(self, narrowed, a, p);
                let p = self.op(Op::Rev2(
                    Rev2Fn::Pow2,
                    cur(narrowed, a),
                    n,
                    cur(narrowed, b),
                ));
                narrow(self, narrowed, b, p);
            }
            // n = atan2(y, x): y is a t with atan2(t, x') in n for some x' of x, x an x' with
            // atan2(y', x') in n for some y'.
            Op::Elem2(BinaryFn::Atan2, y, x) => {
                let p = self.op(Op::Rev2(
                    Rev2Fn::Atan2Y,
                    cur(narrowed, x),
                    n,
                    cur(narrowed, y),
                ));
                narrow(self, narrowed, y, p);
                let p = self.op(Op::Rev2(
                    Rev2Fn::Atan2X,
                    cur(narrowed, y),
                    n,
                    cur(narrowed, x),
                ));
                narrow(self, narrowed, x, p);
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
                } else if let Some(r) = match f {
                    UnaryFn::Cosh => Some(RevFn::Cosh),
                    UnaryFn::Sin => Some(RevFn::Sin),
                    UnaryFn::Cos => Some(RevFn::Cos),
                    UnaryFn::Tan => Some(RevFn::Tan),
                    _ => None,
                } {
                    // Not monotone: the reverse operation keeps the pieces that meet a.
                    let p = self.op(Op::Rev(r, n, cur(narrowed, a)));
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
    /// them too (`a + 0 n` is `a`, or empty where `n` is), so that a box on which sinpi(x) misses
    /// its range is emptied although x has no projection through sinpi.
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
