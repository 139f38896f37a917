//! Differentiation on the interval IR: the gradient of every output, as more nodes of the same
//! hash-consed graph (forward mode over the DAG, one sweep per variable, sharing every
//! subexpression with f and between the partial derivatives).
//!
//! Each rule builds, from the nodes of a function's argument `a` and its derivative `da`, an
//! interval expression whose value on a box encloses the derivative at every point of the box
//! where it exists: `exp(a)' = exp(a) da`, `(a b)' = da b + a db`, and so on. The elementary
//! functions' rules are their rows in the function table (`crate::point`), formulas in
//! ivjit's syntax built into the graph by `Diff::formula`; the core operations' are here.
//! Evaluated with interval semantics, the expression is then an enclosure of the partial
//! derivative over the box (the chain rule holds pointwise, and each interval operation encloses
//! its pointwise values).
//!
//! Non-smooth functions get an enclosure of the generalized (Clarke) gradient, which is what a
//! solver needs: `abs(a)' = sign(a) da` (sign of an interval holding 0 is [-1, 1]);
//! `min(a, b)' = w da + (1 - w) db` with `w = (1 + sign(b - a)) / 2`: `da` where a < b on the
//! whole box, `db` where b < a, and a convex combination where they may cross. Functions with
//! jumps (floor, ceil, trunc, round, rint, sign, atan2 across its cut; and hull and intersect,
//! which are not pointwise functions) have derivative 0 (atan2: its derivative) where they are
//! continuous; where a jump may lie in the box the
//! derivative does not exist, and the gradient says so through a separate *defined* output per
//! function output ([`Gradient::defined`]): [1, 1] when f is proven continuous on the box (every
//! jump function's argument stays on one piece), an interval reaching below 1 otherwise.
//! Unbounded derivatives (sqrt at 0, tan at a pole, 1/x at 0) show as unbounded enclosures.

use super::{Graph, NodeId, Op, UnaryFn};
use crate::interval::Interval;
use crate::scalar::{BinaryFn, RoundInt};
use crate::syntax::ast::Span;

/// Where the gradient's outputs are, in the graph [`gradient`] returns: the function's `m`
/// outputs first, then per output `j` its *defined* flag and its `n` partial derivatives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gradient {
    /// Outputs of the function.
    pub outputs: usize,
    /// Variables.
    pub vars: usize,
}

impl Gradient {
    /// Index of output `j`'s value.
    pub fn value(&self, j: usize) -> usize {
        j
    }

    /// Index of output `j`'s *defined* flag: an enclosure of 1 when f_j is continuous on the
    /// box (so its partial derivatives exist where f_j is differentiable), reaching below 1
    /// when a jump may lie in the box.
    pub fn defined(&self, j: usize) -> usize {
        self.outputs + j * (self.vars + 1)
    }

    /// Index of the partial derivative of output `j` with respect to variable `v`.
    pub fn partial(&self, j: usize, v: usize) -> usize {
        self.defined(j) + 1 + v
    }

    /// The number of outputs of the gradient graph.
    pub fn len(&self) -> usize {
        self.outputs * (self.vars + 2)
    }

    /// Whether there are no outputs.
    pub fn is_empty(&self) -> bool {
        self.outputs == 0
    }
}

/// The graph `g` with its gradient: outputs laid out as [`Gradient`] says.
pub fn gradient(g: &Graph) -> (Graph, Gradient) {
    let (d, cont, partials) = differentiate(g);
    with_partials(d, g, &cont, &partials)
}

/// The graph `g` with its Jacobian, laid out as [`gradient`]'s, but each output's flag is
/// [1, 1] only where f_j is proven continuous **and defined** at every point of the box (the
/// mean-value form's flag): what interval Newton needs before it may use the mean value
/// theorem on the box.
pub(crate) fn jacobian(g: &Graph) -> (Graph, Gradient) {
    let (mut d, cont, partials) = differentiate(g);
    let total = d.defined_flags(g);
    let flags: Vec<Option<NodeId>> = cont
        .iter()
        .zip(&total)
        .map(|(&c, &t)| d.and(c, t))
        .collect();
    with_partials(d, g, &flags, &partials)
}

/// g's outputs, then per output its flag (`flags` per node; `None` is 1) and its partials.
fn with_partials(
    mut d: Diff,
    g: &Graph,
    flags: &[Option<NodeId>],
    partials: &[Vec<NodeId>],
) -> (Graph, Gradient) {
    let layout = Gradient {
        outputs: g.outputs.len(),
        vars: g.vars.len(),
    };
    let mut outputs = g.outputs.clone();
    for (j, o) in g.outputs.iter().enumerate() {
        let flag = match flags[o.index()] {
            Some(f) => f,
            None => d.constant(1.0),
        };
        outputs.push(flag);
        outputs.extend(&partials[j]);
    }
    d.g.outputs = outputs;
    (d.g, layout)
}

/// The mean-value (centered) form of every output, intersected with the natural extension:
/// `f(X) ∩ (f(c) + Σ hull(∂f/∂x_i (X), 0) (X_i − c_i))` with c the box's midpoint, where f
/// is proven continuous and defined on the whole box, else `f(X)` ([`Op::MeanValue`]). One
/// output per output of `g`, never wider than the natural extension; on small boxes its
/// overestimation shrinks like the square of the width, not the width.
///
/// Why it encloses: where f is continuous and defined on the box (the flag), and its
/// generalized gradient is bounded (else the form is unbounded and the intersection is f(X)),
/// the mean value theorem (Lebourg's, for locally Lipschitz f) gives, for x in the box,
/// `f(x) − f(c) ∈ Σ ∂_i f(ξ) (x_i − c_i)` for some ξ on the segment, which lies in the box.
/// `hull(g, 0)` instead of g keeps a fixed variable's term 0 even where the derivative's
/// enclosure is empty (a point box at a singular point: sqrt'(0)); X_i − c_i is symmetric
/// about 0 up to rounding, so the hull costs next to nothing.
pub fn mean_value_form(g: &Graph) -> Graph {
    let Forms {
        mut d, centered, ..
    } = forms(g);
    d.g.outputs = centered.iter().map(|c| c.value).collect();
    d.g
}

/// What the forms built on the mean-value form share: the graph with f's partial derivatives
/// (per output, in variable order), each output's mean-value form and flag, and the variables'
/// nodes.
struct Forms {
    d: Diff,
    partials: Vec<Vec<NodeId>>,
    centered: Vec<Centered>,
    vars: Vec<NodeId>,
}

fn forms(g: &Graph) -> Forms {
    let (mut d, cont, partials) = differentiate(g);
    let total = d.defined_flags(g);
    let centered = d.centered(g, &cont, &total, &partials);
    let vars = (0..g.vars.len() as u32).map(|v| d.op(Op::Var(v))).collect();
    Forms {
        d,
        partials,
        centered,
        vars,
    }
}

/// The *monotone form* of every output: the mean-value form ([`mean_value_form`]) intersected
/// with the monotonicity test's enclosure `hull(f(X_low), f(X_high))`, where `X_low` fixes
/// every variable whose partial derivative has a sign on the box at the end where f is least
/// and `X_high` at the end where it is greatest ([`Op::Face`]); other variables keep their
/// side. Used only where f is proven continuous and defined on the box (the mean-value form's
/// flag): then f's least value over the box is its least over the low face, and its greatest
/// is over the high face, so the hull encloses f's range. Never wider than the mean-value
/// form; exact for a function monotone in every variable (up to the rounding of f at the two
/// corners).
pub fn monotone_form(g: &Graph) -> Graph {
    let Forms {
        mut d,
        partials,
        centered,
        vars,
    } = forms(g);
    let outputs = g
        .outputs
        .iter()
        .enumerate()
        .map(|(j, o)| {
            let Centered { value, flag } = centered[j];
            let at_low = d.on_face(g, &vars, &partials[j], *o, false);
            let at_high = d.on_face(g, &vars, &partials[j], *o, true);
            let range = d.op(Op::Hull(at_low, at_high));
            d.op(Op::MeanValue(value, range, flag))
        })
        .collect();
    d.g.outputs = outputs;
    d.g
}

/// The *minimization form* of every output over the root box `root` (one `(lo, hi)` per
/// variable), for branch and bound: an interval whose upper bound is the mean-value form's and
/// whose lower bound is a lower bound of f over the points of the box that can be global
/// minimizers of f on `root`, the empty set where there are none. Built on the mean-value form
/// with the two gradient tests of interval optimization, where f is proven continuous and
/// defined on the box (the mean-value form's flag):
/// - *monotonicity*: where ∂f/∂x_i ≥ 0 on the box, f is least on the face x_i = lo_i, where
///   ≤ 0 on x_i = hi_i ([`Op::Face`]); the lower bound of f on the box with every such side
///   fixed at its end is a lower bound of f on the box (each fixing follows a segment along
///   which f does not increase);
/// - *no interior minimizer* ([`Op::Descent`]): where ∂f/∂x_i > 0 on the box and the box's
///   side starts inside the root box (lo_i > root lo_i), a minimizer in the box would be
///   interior in x_i, where 0 lies in the i-th component of f's generalized gradient: there is
///   none, and the box is empty. Likewise for < 0 at the upper end. A side that is a point
///   (a midpoint evaluation) is never cut, so upper bounds from midpoints stay f's.
///
/// A point box is never emptied and keeps the mean-value form's upper bound, an upper bound
/// of f there.
pub(crate) fn minimization_form(g: &Graph, root: &[(f64, f64)]) -> Graph {
    let Forms {
        mut d,
        partials,
        centered,
        vars,
    } = forms(g);
    let outputs = g
        .outputs
        .iter()
        .enumerate()
        .map(|(j, o)| {
            let Centered { value, flag } = centered[j];
            let above = d.enclosure(Interval::from_bounds(0.0, f64::INFINITY));
            let least = d.on_face(g, &vars, &partials[j], *o, false);
            let lower = d.op(Op::Add(least, above));
            let mut out = d.op(Op::MeanValue(value, lower, flag));
            for (v, &(lo, hi)) in root.iter().enumerate().take(vars.len()) {
                let side = d.enclosure(Interval::from_bounds(lo, hi));
                out = d.op(Op::Descent(out, flag, partials[j][v], vars[v], side));
            }
            out
        })
        .collect();
    d.g.outputs = outputs;
    d.g
}

/// One output's mean-value form and the flag that proves f continuous and defined on the box.
#[derive(Clone, Copy)]
struct Centered {
    value: NodeId,
    flag: NodeId,
}

/// The continuity flag of every node (`None`: proven continuous) and, per output of `g`, its
/// partial derivatives in variable order, as nodes of one graph (g's nodes kept as they are).
#[allow(clippy::type_complexity)]
fn differentiate(g: &Graph) -> (Diff, Vec<Option<NodeId>>, Vec<Vec<NodeId>>) {
    let mut d = Diff {
        g: g.clone(),
        span: Span::default(),
    };
    let live = g.live();
    let n = g.vars.len();
    // Continuity flags: None is "proven continuous" (the constant 1).
    let mut cont: Vec<Option<NodeId>> = vec![None; g.len()];
    for id in g.ids() {
        if !live[id.index()] {
            continue;
        }
        let op = g.op(id);
        let mut flag = None;
        for a in op.args() {
            flag = d.and(flag, cont[a.index()]);
        }
        let local = match op {
            Op::RoundInt(..) | Op::Round(_) | Op::Sign(_) => Some(d.no_jump(id)),
            // atan2(y, x) jumps from pi to -pi across its cut, y = 0 with x < 0 (issue 30: the
            // gradient gave a finite d/dy there): continuous on the box when x > 0 on all of
            // it, or y >= 0 (atan2(+-0, x < 0) = pi, the limit from above), or y < 0.
            Op::Elem2(BinaryFn::Atan2, y, x) => {
                let right = d.positive(x);
                let above = d.nonnegative(y);
                let ny = d.op(Op::Neg(y));
                let below = d.positive(ny);
                let either = d.op(Op::Max(above, below));
                Some(d.op(Op::Max(right, either)))
            }
            Op::Hull(..)
            | Op::Intersect(..)
            | Op::Mid(_)
            | Op::MeanValue(..)
            | Op::Face(..)
            | Op::Descent(..)
            | Op::Numeric(..)
            | Op::CancelMinus(..)
            | Op::Rev(..)
            | Op::Rev2(..) => Some(d.unit()),
            _ => None,
        };
        cont[id.index()] = d.and(flag, local);
    }
    // One forward sweep per variable.
    let mut partials: Vec<Vec<NodeId>> = vec![Vec::new(); g.outputs.len()];
    for v in 0..n {
        let zero = d.constant(0.0);
        let one = d.constant(1.0);
        let mut der: Vec<NodeId> = vec![zero; g.len()];
        for id in g.ids() {
            if !live[id.index()] {
                continue;
            }
            der[id.index()] = d.rule(id, g.op(id), &der, v, zero, one);
        }
        for (j, o) in g.outputs.iter().enumerate() {
            // `+ 0 f`: empty where f is empty on the whole box (no point to differentiate at),
            // unchanged elsewhere (0 times any non-empty interval is 0).
            let none = d.op(Op::Mul(zero, *o));
            let p = d.op(Op::Add(der[o.index()], none));
            partials[j].push(p);
        }
    }
    (d, cont, partials)
}

struct Diff {
    g: Graph,
    span: Span,
}

impl Diff {
    /// Per node of `g`, a flag that is [1, 1] exactly when every operation under it is defined
    /// on the whole box (`None`: always).
    fn defined_flags(&mut self, g: &Graph) -> Vec<Option<NodeId>> {
        let live = g.live();
        let mut total: Vec<Option<NodeId>> = vec![None; g.len()];
        for id in g.ids() {
            if !live[id.index()] {
                continue;
            }
            let op = g.op(id);
            let mut flag = None;
            for a in op.args() {
                flag = self.and(flag, total[a.index()]);
            }
            let local = self.defined_on_box(op);
            total[id.index()] = self.and(flag, local);
        }
        total
    }

    /// g's live nodes again, with variable v replaced by the node `points[v]`.
    fn copy_at(&mut self, g: &Graph, points: &[NodeId]) -> Vec<Option<NodeId>> {
        g.copy_into(&mut self.g, &g.outputs, points, self.span)
    }

    /// The output `o` of `g` on the face of the box where it is least (`greatest`: most):
    /// each variable whose partial derivative (`partials`, in variable order) has a sign fixed
    /// at the matching end ([`Op::Face`]).
    fn on_face(
        &mut self,
        g: &Graph,
        vars: &[NodeId],
        partials: &[NodeId],
        o: NodeId,
        greatest: bool,
    ) -> NodeId {
        let faces: Vec<NodeId> = vars
            .iter()
            .zip(partials)
            .map(|(&x, &d)| {
                let d = if greatest { self.op(Op::Neg(d)) } else { d };
                self.op(Op::Face(x, d))
            })
            .collect();
        self.copy_at(g, &faces)[o.index()].expect("outputs are live")
    }

    /// Every output's mean-value form (see [`mean_value_form`]).
    fn centered(
        &mut self,
        g: &Graph,
        cont: &[Option<NodeId>],
        total: &[Option<NodeId>],
        partials: &[Vec<NodeId>],
    ) -> Vec<Centered> {
        let n = g.vars.len();
        // The box's midpoint c, and f's nodes at c.
        let vars: Vec<NodeId> = (0..n as u32).map(|v| self.op(Op::Var(v))).collect();
        let mids: Vec<NodeId> = vars.iter().map(|&x| self.op(Op::Mid(x))).collect();
        let at_c = self.copy_at(g, &mids);
        g.outputs
            .iter()
            .enumerate()
            .map(|(j, o)| {
                let mut m = at_c[o.index()].expect("outputs are live");
                for (v, &partial) in partials[j].iter().enumerate() {
                    let zero = self.constant(0.0);
                    let slope = self.op(Op::Hull(partial, zero));
                    let offset = self.op(Op::Sub(vars[v], mids[v]));
                    let term = self.op(Op::Mul(slope, offset));
                    m = self.op(Op::Add(m, term));
                }
                let flag = self.and(cont[o.index()], total[o.index()]);
                let flag = match flag {
                    Some(t) => t,
                    None => self.constant(1.0),
                };
                Centered {
                    value: self.op(Op::MeanValue(*o, m, flag)),
                    flag,
                }
            })
            .collect()
    }

    fn op(&mut self, op: Op) -> NodeId {
        self.g.add(op, self.span)
    }

    fn constant(&mut self, c: f64) -> NodeId {
        self.g.constant(Interval { lo: c, hi: c })
    }

    fn enclosure(&mut self, iv: Interval) -> NodeId {
        self.g.constant(iv)
    }

    /// [0, 1]: "may be discontinuous here".
    fn unit(&mut self) -> NodeId {
        self.enclosure(Interval { lo: 0.0, hi: 1.0 })
    }

    /// `(1 + sign(x)) / 2`: [1, 1] exactly when x > 0 on the whole box.
    fn positive(&mut self, x: NodeId) -> NodeId {
        let one = self.constant(1.0);
        let half = self.constant(0.5);
        let s = self.op(Op::Sign(x));
        let up = self.op(Op::Add(one, s));
        self.op(Op::Mul(half, up))
    }

    /// `|sign(x)|`: [1, 1] exactly when 0 is not in x.
    fn nonzero(&mut self, x: NodeId) -> NodeId {
        let s = self.op(Op::Sign(x));
        self.op(Op::Abs(s))
    }

    /// `1 − |sign(min(x, 0))|`: [1, 1] exactly when x >= 0 on the whole box.
    fn nonnegative(&mut self, x: NodeId) -> NodeId {
        let zero = self.constant(0.0);
        let one = self.constant(1.0);
        let m = self.op(Op::Min(x, zero));
        let a = self.nonzero(m);
        self.op(Op::Sub(one, a))
    }

    /// A flag that is [1, 1] exactly when `op` is defined at every point of the box whose
    /// arguments' enclosures it is given (`None`: always); each partial function's domain,
    /// tested strictly inside where a closed end would need an exact comparison.
    fn defined_on_box(&mut self, op: Op) -> Option<NodeId> {
        match op {
            Op::Const(c) if c.is_empty() => Some(self.unit()),
            Op::Pown(a, n) if n < 0 => Some(self.nonzero(a)),
            Op::Div(_, b) => Some(self.nonzero(b)),
            Op::Sqrt(a) => Some(self.nonnegative(a)),
            Op::Rootn(a, n) if n < 0 && n % 2 == 0 => Some(self.positive(a)),
            Op::Rootn(a, n) if n < 0 => Some(self.nonzero(a)),
            Op::Rootn(a, n) if n % 2 == 0 => Some(self.nonnegative(a)),
            // tan's poles lie inside its domain's bounds: no pole in the box exactly when
            // cos excludes 0 on it (a rigorous enclosure of cos).
            Op::Elem(UnaryFn::Tan, a) => {
                let c = self.elem(UnaryFn::Cos, a);
                Some(self.nonzero(c))
            }
            Op::Elem(f, a) => {
                let dom = f.row().domain;
                if dom.is_everywhere() {
                    return None;
                }
                let mut flag = None;
                if dom.lo > f64::NEG_INFINITY {
                    let lo = self.constant(dom.lo);
                    let above = self.op(Op::Sub(a, lo));
                    let p = self.positive(above);
                    flag = self.and(flag, Some(p));
                }
                if dom.hi < f64::INFINITY {
                    let hi = self.constant(dom.hi);
                    let below = self.op(Op::Sub(hi, a));
                    let p = self.positive(below);
                    flag = self.and(flag, Some(p));
                }
                flag
            }
            Op::Elem2(BinaryFn::Pow, a, _) => Some(self.positive(a)),
            Op::Elem2(BinaryFn::Hypot, ..) => None,
            Op::Elem2(BinaryFn::Atan2, ..)
            | Op::Intersect(..)
            | Op::Pow(..)
            | Op::Mid(_)
            | Op::MeanValue(..)
            | Op::Face(..)
            | Op::Descent(..)
            | Op::Numeric(..)
            | Op::CancelMinus(..)
            | Op::Rev(..)
            | Op::Rev2(..) => Some(self.unit()),
            _ => None,
        }
    }

    /// The product of two continuity flags (`None` is 1).
    fn and(&mut self, a: Option<NodeId>, b: Option<NodeId>) -> Option<NodeId> {
        match (a, b) {
            (None, x) | (x, None) => x,
            (Some(a), Some(b)) => Some(self.op(Op::Mul(a, b))),
        }
    }

    /// 1 when the jump function `id` is constant on the box (its argument stays on one piece),
    /// else [0, 1]: `1 - |sign(f - f)|`, where `f - f` is [0, 0] exactly when f is a point.
    fn no_jump(&mut self, id: NodeId) -> NodeId {
        let spread = self.op(Op::Sub(id, id));
        let s = self.op(Op::Sign(spread));
        let a = self.op(Op::Abs(s));
        let one = self.constant(1.0);
        self.op(Op::Sub(one, a))
    }

    /// Whether `x` is the constant `c`.
    fn is(&self, x: NodeId, c: f64) -> bool {
        self.g
            .as_const(x)
            .is_some_and(|iv| iv.lo == c && iv.hi == c)
    }

    // Products with 0 and 1 and sums with 0 are simplified: a derivative that does not depend
    // on the variable contributes 0 at every point (even where the factor beside it is empty
    // on the whole box, which adds no point to differentiate at).

    fn mul(&mut self, a: NodeId, b: NodeId) -> NodeId {
        if self.is(a, 0.0) || self.is(b, 0.0) {
            self.constant(0.0)
        } else if self.is(a, 1.0) {
            b
        } else if self.is(b, 1.0) {
            a
        } else {
            self.op(Op::Mul(a, b))
        }
    }

    fn div(&mut self, a: NodeId, b: NodeId) -> NodeId {
        if self.is(a, 0.0) {
            self.constant(0.0)
        } else {
            self.op(Op::Div(a, b))
        }
    }

    fn add(&mut self, a: NodeId, b: NodeId) -> NodeId {
        if self.is(a, 0.0) {
            b
        } else if self.is(b, 0.0) {
            a
        } else {
            self.op(Op::Add(a, b))
        }
    }

    fn sub(&mut self, a: NodeId, b: NodeId) -> NodeId {
        if self.is(b, 0.0) {
            a
        } else if self.is(a, 0.0) {
            self.op(Op::Neg(b))
        } else {
            self.op(Op::Sub(a, b))
        }
    }

    fn neg(&mut self, a: NodeId) -> NodeId {
        if self.is(a, 0.0) {
            a
        } else {
            self.op(Op::Neg(a))
        }
    }

    /// A tight enclosure of the integer `n` (exact below 2^53).
    fn integer(&mut self, n: i64) -> NodeId {
        let x = n as f64;
        let iv = if x as i128 == n as i128 {
            Interval { lo: x, hi: x }
        } else {
            Interval {
                lo: x.next_down(),
                hi: x.next_up(),
            }
        };
        self.enclosure(iv)
    }

    fn elem(&mut self, f: UnaryFn, a: NodeId) -> NodeId {
        self.op(Op::Elem(f, a))
    }

    /// `c * x` for a constant enclosure `c`.
    fn scale(&mut self, c: Interval, x: NodeId) -> NodeId {
        let c = self.enclosure(c);
        self.mul(c, x)
    }

    /// `w da + (1 - w) db` with `w = (1 + s) / 2`: `da` where s = 1, `db` where s = -1.
    fn blend(&mut self, s: NodeId, da: NodeId, db: NodeId) -> NodeId {
        let one = self.constant(1.0);
        let half = self.constant(0.5);
        let up = self.add(one, s);
        let w = self.mul(half, up);
        let rest = self.sub(one, w);
        let a = self.mul(w, da);
        let b = self.mul(rest, db);
        self.add(a, b)
    }

    /// The derivative of node `id` (operation `op`) with respect to variable `v`, from its
    /// arguments' derivatives `der`.
    fn rule(
        &mut self,
        id: NodeId,
        op: Op,
        der: &[NodeId],
        v: usize,
        zero: NodeId,
        one: NodeId,
    ) -> NodeId {
        let d = |x: NodeId| der[x.index()];
        match op {
            Op::Var(k) => {
                if k as usize == v {
                    one
                } else {
                    zero
                }
            }
            Op::Const(_) | Op::DecoratedConst(..) => zero,
            Op::Neg(a) => self.neg(d(a)),
            Op::Add(a, b) => self.add(d(a), d(b)),
            Op::Sub(a, b) => self.sub(d(a), d(b)),
            Op::Mul(a, b) => {
                let l = self.mul(d(a), b);
                let r = self.mul(a, d(b));
                self.add(l, r)
            }
            // (a / b)' = (da - q db) / b with q = a / b, the node itself.
            Op::Div(a, b) => {
                let qdb = self.mul(id, d(b));
                let num = self.sub(d(a), qdb);
                self.div(num, b)
            }
            Op::Sqr(a) => {
                let two_a = self.scale(Interval { lo: 2.0, hi: 2.0 }, a);
                self.mul(two_a, d(a))
            }
            // sqrt' = 1 / (2 sqrt(a)): the node itself, so the domain restriction carries over.
            Op::Sqrt(a) => {
                let two_s = self.scale(Interval { lo: 2.0, hi: 2.0 }, id);
                self.div(d(a), two_s)
            }
            Op::Pown(a, n) => match n {
                0 => zero,
                1 => d(a),
                _ => {
                    let p = self.op(Op::Pown(a, n - 1));
                    let n = self.integer(n);
                    let np = self.mul(n, p);
                    self.mul(np, d(a))
                }
            },
            // rootn(a, n)' = rootn(a, n) / (n a).
            Op::Rootn(a, n) => {
                let n = self.integer(n);
                let na = self.mul(n, a);
                let q = self.div(id, na);
                self.mul(q, d(a))
            }
            Op::Abs(a) => {
                let s = self.op(Op::Sign(a));
                self.mul(s, d(a))
            }
            Op::Min(a, b) => {
                let diff = self.sub(b, a);
                let s = self.op(Op::Sign(diff));
                self.blend(s, d(a), d(b))
            }
            Op::Max(a, b) => {
                let diff = self.sub(a, b);
                let s = self.op(Op::Sign(diff));
                self.blend(s, d(a), d(b))
            }
            Op::Fma(a, b, c) => {
                let l = self.mul(d(a), b);
                let r = self.mul(a, d(b));
                let lr = self.add(l, r);
                self.add(lr, d(c))
            }
            // Not pointwise functions, or constant between jumps: 0 where the derivative
            // exists; the continuity flag says where it may not.
            Op::Hull(a, b) | Op::Intersect(a, b) => {
                let h = self.op(Op::Hull(d(a), d(b)));
                self.op(Op::Hull(h, zero))
            }
            Op::RoundInt(
                RoundInt::Floor | RoundInt::Ceil | RoundInt::Trunc | RoundInt::Even,
                _,
            )
            | Op::Round(_)
            | Op::Sign(_) => zero,
            Op::Pow(a, b) => self.pow(id, a, b, der),
            // Not made by the parser; a mean-value form is not differentiated again.
            Op::Mid(_) | Op::Face(..) => zero,
            // Functions of the arguments' enclosures, not of their points: no derivative in
            // the pointwise sense (on a face of the box `mid` is another number), so [entire],
            // which keeps the forms built on derivatives (mean value, monotonicity) at the
            // natural extension; the continuity flag is never proven either.
            // A reverse operation is a set of points, not a function of its arguments.
            Op::Numeric(..) | Op::CancelMinus(..) | Op::Rev(..) | Op::Rev2(..) => {
                self.enclosure(Interval::ENTIRE)
            }
            Op::MeanValue(f, _, _) | Op::Descent(f, ..) | Op::Decorated(f, _) => d(f),
            // The derivative formulas are the table's rows (`crate::point`).
            Op::Elem(f, a) => {
                if self.is(d(a), 0.0) {
                    return zero;
                }
                let g = self.formula(f.row().derivative, &[("x", a)]);
                self.mul(g, d(a))
            }
            Op::Elem2(f, a, b) => {
                let mut sum = zero;
                for (text, arg) in f.row().partials.into_iter().zip([a, b]) {
                    if !self.is(d(arg), 0.0) {
                        let p = self.formula(text, &[("x", a), ("y", b)]);
                        let term = self.mul(p, d(arg));
                        sum = self.add(sum, term);
                    }
                }
                sum
            }
        }
    }

    /// `(a^b)' = a^b (db ln a + b da / a)` for the general power (a > 0).
    fn pow(&mut self, id: NodeId, a: NodeId, b: NodeId, der: &[NodeId]) -> NodeId {
        let ln_a = self.elem(UnaryFn::Log, a);
        let l = self.mul(der[b.index()], ln_a);
        let ba = self.div(b, a);
        let r = self.mul(ba, der[a.index()]);
        let s = self.add(l, r);
        self.mul(id, s)
    }

    /// A derivative formula of the function table (`text`, in ivjit's syntax over the
    /// variables `args` names) built into the graph, each variable replaced by its node. The
    /// function's own call in the formula (tan(x) in tan's `1 + sqr(tan(x))`) is the node being
    /// differentiated, since the graph shares identical nodes; constants (`log(2)`, `pi`)
    /// fold to rigorous enclosures. The formulas are constants of the crate, each built by a
    /// unit test below, so a failure here is a bug of the table.
    fn formula(&mut self, text: &str, args: &[(&str, NodeId)]) -> NodeId {
        super::build::formula(&mut self.g, text, args, self.span)
    }
}

#[cfg(test)]
mod tests {
    use crate::Expression;

    /// Every derivative formula of the table builds, over its own arguments only, and calls
    /// the function it differentiates at most as that very node (never another argument).
    #[test]
    fn every_formula_of_the_table_builds() {
        use crate::point::{BinaryFn, UnaryFn};
        let texts = UnaryFn::ALL
            .iter()
            .map(|f| (f.row().derivative, &["x"][..]))
            .chain(
                BinaryFn::ALL
                    .iter()
                    .flat_map(|f| f.row().partials.map(|p| (p, &["x", "y"][..]))),
            );
        for (text, args) in texts {
            let ast = crate::syntax::parser::parse(text).unwrap();
            let g = crate::ir::build::build(&ast, None).unwrap();
            assert_eq!(g.outputs.len(), 1, "{text}");
            for v in &g.vars {
                assert!(args.contains(&v.as_str()), "{text}: {v}");
            }
        }
    }

    /// The formula's call of the function is the differentiated node itself: tan's derivative
    /// adds 1 + sqr(tan(x)) to the graph, not a second tan.
    #[test]
    fn a_formula_reuses_the_node_it_differentiates() {
        let e = Expression::parse("tan(x)").unwrap();
        let (g, _) = super::gradient(e.ir());
        let tans = g
            .ids()
            .filter(|&id| matches!(g.op(id), super::Op::Elem(crate::point::UnaryFn::Tan, _)))
            .count();
        assert_eq!(tans, 1);
    }

    #[test]
    fn layout_of_the_outputs() {
        let e = Expression::parse("x*y, sin(x)").unwrap();
        let (g, l) = super::gradient(e.ir());
        assert_eq!(l.len(), g.outputs.len());
        assert_eq!((l.value(1), l.defined(0), l.partial(0, 1)), (1, 2, 4));
        assert_eq!((l.defined(1), l.partial(1, 0), l.partial(1, 1)), (5, 6, 7));
    }
}
