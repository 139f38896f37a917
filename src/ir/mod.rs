//! Interval IR: a hash-consed DAG of interval operations.
//!
//! Every node is created through [`Graph::add`], which returns the existing node when an identical
//! one exists (common subexpressions are computed once) and folds operations whose arguments are
//! all constants with the [`Folder`] the graph was built with. The IR is data: it knows no
//! semantics, so the folder is injected (the crate's is `crate::lower::fold`, the interval lowering
//! run by the scalar IR's reference interpreter: exactly the run-time semantics). Operands always have smaller ids than their users, so a walk in id
//! order visits arguments first; no pass needs recursion.

pub mod build;
pub mod contract;
pub mod diff;
pub mod functions;
pub mod sign;
pub mod text;

use crate::decoration::Decoration;
use crate::interval::Interval;
use crate::scalar::RoundInt;
pub use crate::scalar::{BinaryFn, PointFn, UnaryFn};
use crate::syntax::ast::Span;
use std::collections::HashMap;

/// Index of a node in a [`Graph`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u32);

impl NodeId {
    /// The id as a vector index.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// One interval operation. Semantics are IEEE 1788 set-based: each op returns an interval that
/// contains the image of its arguments' sets (restricted to the function's domain).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Op {
    /// Input variable number `n` (in order of first appearance).
    Var(u32),
    /// A constant interval with f64 bounds (possibly empty).
    Const(Interval),
    /// A literal written with an IEEE 1788 decoration that differs from the one `newDec` gives
    /// its interval (`[1, 2]_def`, `[nai]`): made only by decorated builds, whose lowering
    /// starts its decoration there; its value is the interval's. Never folded into its users.
    DecoratedConst(Interval, Decoration),
    /// `-x`.
    Neg(NodeId),
    /// `a + b`.
    Add(NodeId, NodeId),
    /// `a - b`.
    Sub(NodeId, NodeId),
    /// `a * b`.
    Mul(NodeId, NodeId),
    /// `a / b` (division by an interval holding 0 gives unbounded or empty results).
    Div(NodeId, NodeId),
    /// `x^y` as written; the power rewrite turns the cases it knows into `Pown`, `Sqrt`, `Div`.
    Pow(NodeId, NodeId),
    /// `x^2`, never negative (tighter than `x * x` when `x` holds 0).
    Sqr(NodeId),
    /// Square root, on the non-negative part of `x`.
    Sqrt(NodeId),
    /// `x^n` for an integer `n` (for `n < 0`, defined off 0).
    Pown(NodeId, i64),
    /// `|x|`.
    Abs(NodeId),
    /// Pointwise minimum of the two sets.
    Min(NodeId, NodeId),
    /// Pointwise maximum of the two sets.
    Max(NodeId, NodeId),
    /// `a * b + c`.
    Fma(NodeId, NodeId, NodeId),
    /// The smallest interval containing both.
    Hull(NodeId, NodeId),
    /// The intersection of both (possibly empty).
    Intersect(NodeId, NodeId),
    /// A unary elementary function (exp, sin, ...).
    Elem(UnaryFn, NodeId),
    /// A binary elementary function: atan2(y, x), pow(x, y), hypot(x, y).
    Elem2(BinaryFn, NodeId, NodeId),
    /// The real n-th root, `x^(1/n)` for an integer `n != 0` (for `n < 0`, defined off 0, and
    /// on x > 0 for even n).
    Rootn(NodeId, i64),
    /// Rounding to an integral value: floor, ceil, trunc, rint (ties to even).
    RoundInt(RoundInt, NodeId),
    /// Rounding to the nearest integer, ties away from zero.
    Round(NodeId),
    /// -1, 0 or 1.
    Sign(NodeId),
    /// A point of the argument, as a point interval: its midpoint (rounded to nearest, kept
    /// inside); empty when a bound is infinite. Made by the mean-value form, not by the parser.
    Mid(NodeId),
    /// The mean-value form's combination `MeanValue(f, m, t)`: `f ∩ m` where the flag `t` is
    /// exactly [1, 1] and `m` is not empty, else `f` (`f` is the natural extension, `m` the
    /// centered form, `t` proves f continuous and defined on the whole box). Made by
    /// [`diff::mean_value_form`], not by the parser.
    MeanValue(NodeId, NodeId, NodeId),
    /// The monotonicity test's face `Face(x, d)`: where `d` (f's partial derivative in x's
    /// variable, on the box) is `>= 0`, f is least on the face at x's lower end, so `[lo, lo]`;
    /// where `d <= 0`, `[hi, hi]`; otherwise (or where that end is infinite) `x`. Made by
    /// [`diff::minimization_form`], not by the parser.
    Face(NodeId, NodeId),
    /// `Descent(f, t, d, x, r)`: the empty set where the box holds no global minimizer of f over
    /// the root box whose side in x's variable is the constant `r`, because f decreases or
    /// increases strictly across the box in that variable; else `f`. Cut when the flag `t` is
    /// exactly [1, 1] (f continuous and defined on the box), `x` is not a point, and `d` (the
    /// partial derivative) is `> 0` with `x.lo > r.lo`, or `< 0` with `x.hi < r.hi`: a
    /// minimizer there would be interior in that variable, where 0 lies in the generalized
    /// gradient's component. Made by [`diff::minimization_form`], not by the parser.
    Descent(NodeId, NodeId, NodeId, NodeId, NodeId),
    /// `Decorated(value, witness)`: `value`, whose IEEE 1788 decoration is that of `witness`, a
    /// formula of the same function that the decoration rules decorate faithfully (`1 / cos(x)`
    /// for sec, whose expansion intersects two formulas, and an intersection is `trv` by the
    /// standard). Made only by decorated builds ([`build::build_decorated`]), for the derived
    /// functions; its value is `value`'s, so only decorated programs compute `witness`.
    Decorated(NodeId, NodeId),
    /// One of IEEE 1788's numeric functions of an interval (inf, sup, mid, rad, wid, mag, mig):
    /// a number computed from the argument's enclosure, not from its points, returned as a
    /// point interval (see [`NumericFn`]).
    Numeric(NumericFn, NodeId),
    /// IEEE 1788's `cancelMinus(x, y)`: the interval z with `y + z = x` where that exists
    /// (x and y bounded, x at least as wide as y), outward rounded; the whole line otherwise,
    /// empty where x is empty and y is not unbounded. Computed from the arguments' enclosures
    /// (`cancelPlus(x, y)` is `cancelMinus(x, -y)`).
    CancelMinus(NodeId, NodeId),
    /// IEEE 1788's reverse-mode function `f_rev(c, x)` (§10.5.4, [`RevFn`]): the hull of the
    /// points t of x with f(t) in c, outward rounded. The building block of contractors: the
    /// part of a box that an equation `f(t) = c` leaves.
    Rev(RevFn, NodeId, NodeId),
    /// IEEE 1788's reverse-mode function of a binary operation, `f_rev(b, c, x)` ([`Rev2Fn`]):
    /// the hull of the points t of x with f(t, b') (or f(b', t)) in c for some b' of b,
    /// outward rounded (`mulRev`, `powRev1`, `powRev2`, `atan2Rev1`, `atan2Rev2`).
    Rev2(Rev2Fn, NodeId, NodeId, NodeId),
}

/// The functions of IEEE 1788's reverse-mode operations of binary operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rev2Fn {
    /// `mulRev(b, c, x)`: t with t * b' in c for some b' in b (all of x where b and c both
    /// hold 0).
    Mul,
    /// `powRev1(b, c, x)`: t with t^b' in c for some b' in b (pow's domain: t > 0, or t = 0
    /// with b' > 0).
    Pow1,
    /// `powRev2(a, c, x)`: t with a'^t in c for some a' in a (a' > 0, or a' = 0 with t > 0).
    Pow2,
    /// `mulRevToPair1(b, c)`: the first interval of IEEE 1788's `mulRevToPair(b, c)` (the
    /// pieces of the t with t * b' in c for some b' in b; x is `[entire]`).
    MulPair1,
    /// `mulRevToPair2(b, c)`: its second interval (empty unless the set has two pieces).
    MulPair2,
    /// `atan2Rev1(b, c, x)`: y with atan2(y, x') in c for some x' in b.
    Atan2Y,
    /// `atan2Rev2(a, c, x)`: x' with atan2(y, x') in c for some y in a.
    Atan2X,
}

impl Rev2Fn {
    /// The name expressions call it by (IEEE 1788's).
    pub fn name(self) -> &'static str {
        match self {
            Rev2Fn::Mul => "mulRev",
            Rev2Fn::Pow1 => "powRev1",
            Rev2Fn::Pow2 => "powRev2",
            Rev2Fn::MulPair1 => "mulRevToPair1",
            Rev2Fn::MulPair2 => "mulRevToPair2",
            Rev2Fn::Atan2Y => "atan2Rev1",
            Rev2Fn::Atan2X => "atan2Rev2",
        }
    }
}

/// The functions of IEEE 1788's unary reverse-mode operations (`sqrRev`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RevFn {
    /// `sqrRev`: t with t^2 in c.
    Sqr,
    /// `absRev`: t with |t| in c.
    Abs,
    /// `coshRev`: t with cosh(t) in c.
    Cosh,
    /// `pownRev(c, x, n)`: t with t^n in c (t = 0 excluded for n < 0, where t^n is undefined).
    Pown(i64),
    /// `sinRev`: t with sin(t) in c.
    Sin,
    /// `cosRev`: t with cos(t) in c.
    Cos,
    /// `tanRev`: t with tan(t) in c.
    Tan,
}

impl RevFn {
    /// The name expressions call it by (IEEE 1788's).
    pub fn name(self) -> &'static str {
        match self {
            RevFn::Sqr => "sqrRev",
            RevFn::Abs => "absRev",
            RevFn::Cosh => "coshRev",
            RevFn::Pown(_) => "pownRev",
            RevFn::Sin => "sinRev",
            RevFn::Cos => "cosRev",
            RevFn::Tan => "tanRev",
        }
    }
}

/// IEEE 1788's numeric functions of an interval (§10.5.9): each gives a number computed from
/// the interval's bounds, which an expression holds as the point interval `[v, v]`. A number
/// that is infinite (the width of an unbounded interval) is held as the interval of the reals
/// beyond every finite float of the program's precision, `[max, inf]` (or `[-inf, -max]`);
/// the number of the empty set (NaN in the standard) is held as the empty set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NumericFn {
    /// The lower bound (`-inf` for an unbounded one).
    Inf,
    /// The upper bound.
    Sup,
    /// The midpoint, rounded to nearest: 0 for the whole line, the largest finite float
    /// toward an infinite end.
    Mid,
    /// The radius: the smallest float r with `[mid - r, mid + r]` holding the interval.
    Rad,
    /// The width, rounded up.
    Wid,
    /// The magnitude: the largest absolute value.
    Mag,
    /// The mignitude: the smallest absolute value (0 where the interval holds 0).
    Mig,
}

impl NumericFn {
    /// Every numeric function, in the order `ivjit functions` lists them.
    pub const ALL: [NumericFn; 7] = [
        NumericFn::Inf,
        NumericFn::Sup,
        NumericFn::Mid,
        NumericFn::Rad,
        NumericFn::Wid,
        NumericFn::Mag,
        NumericFn::Mig,
    ];

    /// The name expressions call it by (IEEE 1788's).
    pub fn name(self) -> &'static str {
        match self {
            NumericFn::Inf => "inf",
            NumericFn::Sup => "sup",
            NumericFn::Mid => "mid",
            NumericFn::Rad => "rad",
            NumericFn::Wid => "wid",
            NumericFn::Mag => "mag",
            NumericFn::Mig => "mig",
        }
    }

    /// The function called `name`, if one is.
    pub fn from_name(name: &str) -> Option<NumericFn> {
        NumericFn::ALL.into_iter().find(|f| f.name() == name)
    }
}

impl Op {
    /// The node's interval arguments, in order.
    pub fn args(&self) -> Vec<NodeId> {
        match *self {
            Op::Var(_) | Op::Const(_) | Op::DecoratedConst(..) => vec![],
            Op::Neg(a)
            | Op::Sqr(a)
            | Op::Sqrt(a)
            | Op::Pown(a, _)
            | Op::Abs(a)
            | Op::Elem(_, a)
            | Op::Rootn(a, _)
            | Op::RoundInt(_, a)
            | Op::Round(a)
            | Op::Sign(a)
            | Op::Mid(a)
            | Op::Numeric(_, a) => vec![a],
            Op::Elem2(_, a, b) => vec![a, b],
            Op::Add(a, b)
            | Op::Sub(a, b)
            | Op::Mul(a, b)
            | Op::Div(a, b)
            | Op::Pow(a, b)
            | Op::Min(a, b)
            | Op::Max(a, b)
            | Op::Hull(a, b)
            | Op::Intersect(a, b)
            | Op::CancelMinus(a, b) => vec![a, b],
            Op::Fma(a, b, c) | Op::MeanValue(a, b, c) | Op::Rev2(_, a, b, c) => vec![a, b, c],
            Op::Rev(_, c, x) => vec![c, x],
            Op::Face(a, b) | Op::Decorated(a, b) => vec![a, b],
            Op::Descent(f, t, d, x, r) => vec![f, t, d, x, r],
        }
    }

    /// The same operation on other arguments (same count, same order as [`Op::args`]).
    pub(crate) fn with_args(&self, a: &[NodeId]) -> Op {
        match *self {
            Op::Var(_) | Op::Const(_) | Op::DecoratedConst(..) => *self,
            Op::Neg(_) => Op::Neg(a[0]),
            Op::Sqr(_) => Op::Sqr(a[0]),
            Op::Sqrt(_) => Op::Sqrt(a[0]),
            Op::Pown(_, n) => Op::Pown(a[0], n),
            Op::Abs(_) => Op::Abs(a[0]),
            Op::Add(..) => Op::Add(a[0], a[1]),
            Op::Sub(..) => Op::Sub(a[0], a[1]),
            Op::Mul(..) => Op::Mul(a[0], a[1]),
            Op::Div(..) => Op::Div(a[0], a[1]),
            Op::Pow(..) => Op::Pow(a[0], a[1]),
            Op::Min(..) => Op::Min(a[0], a[1]),
            Op::Max(..) => Op::Max(a[0], a[1]),
            Op::Hull(..) => Op::Hull(a[0], a[1]),
            Op::Intersect(..) => Op::Intersect(a[0], a[1]),
            Op::Fma(..) => Op::Fma(a[0], a[1], a[2]),
            Op::Elem(f, _) => Op::Elem(f, a[0]),
            Op::Elem2(f, ..) => Op::Elem2(f, a[0], a[1]),
            Op::Rootn(_, n) => Op::Rootn(a[0], n),
            Op::RoundInt(k, _) => Op::RoundInt(k, a[0]),
            Op::Round(_) => Op::Round(a[0]),
            Op::Sign(_) => Op::Sign(a[0]),
            Op::Mid(_) => Op::Mid(a[0]),
            Op::MeanValue(..) => Op::MeanValue(a[0], a[1], a[2]),
            Op::Face(..) => Op::Face(a[0], a[1]),
            Op::Descent(..) => Op::Descent(a[0], a[1], a[2], a[3], a[4]),
            Op::Decorated(..) => Op::Decorated(a[0], a[1]),
            Op::Numeric(f, _) => Op::Numeric(f, a[0]),
            Op::CancelMinus(..) => Op::CancelMinus(a[0], a[1]),
            Op::Rev(f, ..) => Op::Rev(f, a[0], a[1]),
            Op::Rev2(f, ..) => Op::Rev2(f, a[0], a[1], a[2]),
        }
    }

    /// Name used in the text form.
    pub fn name(&self) -> &'static str {
        match self {
            Op::Var(_) => "var",
            Op::Const(_) => "const",
            Op::DecoratedConst(..) => "decorated const",
            Op::Neg(_) => "neg",
            Op::Add(..) => "add",
            Op::Sub(..) => "sub",
            Op::Mul(..) => "mul",
            Op::Div(..) => "div",
            Op::Pow(..) => "pow",
            Op::Sqr(_) => "sqr",
            Op::Sqrt(_) => "sqrt",
            Op::Pown(..) => "pown",
            Op::Abs(_) => "abs",
            Op::Min(..) => "min",
            Op::Max(..) => "max",
            Op::Fma(..) => "fma",
            Op::Hull(..) => "hull",
            Op::Intersect(..) => "intersect",
            Op::Elem(f, _) => f.name(),
            Op::Elem2(f, ..) => f.name(),
            Op::Rootn(..) => "rootn",
            Op::RoundInt(k, _) => k.name(),
            Op::Round(_) => "round",
            Op::Sign(_) => "sign",
            // Not "mid": that is IEEE 1788's midpoint (`Op::Numeric`), a different number.
            Op::Mid(_) => "midpoint",
            Op::MeanValue(..) => "meanvalue",
            Op::Face(..) => "face",
            Op::Descent(..) => "descent",
            Op::Decorated(..) => "decorated",
            Op::Numeric(f, _) => f.name(),
            Op::CancelMinus(..) => "cancelMinus",
            Op::Rev(f, ..) => f.name(),
            Op::Rev2(f, ..) => f.name(),
        }
    }

    /// Whether the operation is commutative in its two arguments (for canonical hash-consing).
    fn commutative(&self) -> bool {
        matches!(
            self,
            Op::Add(..)
                | Op::Mul(..)
                | Op::Min(..)
                | Op::Max(..)
                | Op::Hull(..)
                | Op::Intersect(..)
        )
    }

    /// Hash key: constants by bit pattern (empty constants all alike), commutative arguments sorted.
    fn key(&self) -> OpKey {
        match *self {
            Op::Const(c) if c.is_empty() => OpKey::EmptyConst,
            Op::Const(c) => OpKey::Const(c.lo.to_bits(), c.hi.to_bits()),
            Op::DecoratedConst(c, d) => OpKey::DecoratedConst(c.lo.to_bits(), c.hi.to_bits(), d),
            op => {
                let mut args = op.args();
                if op.commutative() {
                    args.sort();
                }
                let extra = match op {
                    Op::Var(v) => v as i64,
                    Op::Pown(_, n) | Op::Rootn(_, n) | Op::Rev(RevFn::Pown(n), ..) => n,
                    _ => 0,
                };
                OpKey::Other(op.name(), args, extra)
            }
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum OpKey {
    EmptyConst,
    Const(u64, u64),
    DecoratedConst(u64, u64, Decoration),
    Other(&'static str, Vec<NodeId>, i64),
}

/// Folds an operation whose arguments are all constants: the constant result, or `None` to keep
/// the node (see the module documentation).
pub(crate) type Folder = fn(&Op, &[Interval]) -> Option<Interval>;

/// A compiled expression's interval IR: nodes in topological order, the variables, the outputs.
#[derive(Clone, Debug)]
pub struct Graph {
    nodes: Vec<Op>,
    /// Source span of the expression that first created each node (for error messages).
    spans: Vec<Span>,
    dedup: HashMap<OpKey, NodeId>,
    /// Constant folding; `None`: nothing is folded.
    folder: Option<Folder>,
    /// Variable names, indexed by `Op::Var`'s number.
    pub vars: Vec<String>,
    /// Where each variable first appears in the source.
    pub var_spans: Vec<Span>,
    /// The output nodes, in source order.
    pub outputs: Vec<NodeId>,
}

impl Graph {
    /// An empty graph over the given variables (and where each first appears), folding
    /// constants with `folder` when there is one.
    pub fn new(vars: Vec<String>, var_spans: Vec<Span>, folder: Option<Folder>) -> Graph {
        Graph {
            nodes: Vec::new(),
            spans: Vec::new(),
            dedup: HashMap::new(),
            folder,
            vars,
            var_spans,
            outputs: Vec::new(),
        }
    }

    /// The number of nodes, live or dead.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the graph has no nodes.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The operation of a node.
    pub fn op(&self, id: NodeId) -> Op {
        self.nodes[id.index()]
    }

    /// The source span of the expression that first created a node.
    pub(crate) fn span(&self, id: NodeId) -> Span {
        self.spans[id.index()]
    }

    /// All node ids in order: arguments before their users.
    pub fn ids(&self) -> impl DoubleEndedIterator<Item = NodeId> {
        (0..self.nodes.len() as u32).map(NodeId)
    }

    /// The constant a node is, if it is one.
    pub fn as_const(&self, id: NodeId) -> Option<Interval> {
        match self.op(id) {
            Op::Const(c) => Some(c),
            _ => None,
        }
    }

    /// Adds a node (or finds the identical one), folding it when all arguments are constants.
    pub fn add(&mut self, op: Op, span: Span) -> NodeId {
        let args = op.args();
        // An empty argument makes every operation empty, except the hull, which ignores it, and
        // the functions of an enclosure (inf of the empty set is +inf; cancelMinus of the empty
        // set and an unbounded one is the whole line): the folder computes those.
        let is_empty = |g: &Graph, a: NodeId| g.as_const(a).is_some_and(|c| c.is_empty());
        let of_enclosure = matches!(op, Op::Numeric(..) | Op::CancelMinus(..));
        if let Op::Hull(a, b) = op {
            if is_empty(self, a) {
                return b;
            }
            if is_empty(self, b) {
                return a;
            }
        } else if !of_enclosure && args.iter().any(|&a| is_empty(self, a)) {
            return self.add(Op::Const(Interval::EMPTY), span);
        }
        if let Some(fold) = self.folder {
            if !args.is_empty() && args.iter().all(|&a| self.as_const(a).is_some()) {
                let consts: Vec<Interval> =
                    args.iter().map(|&a| self.as_const(a).unwrap()).collect();
                if let Some(c) = fold(&op, &consts) {
                    return self.add(Op::Const(c), span);
                }
            }
        }
        let key = op.key();
        if let Some(&id) = self.dedup.get(&key) {
            return id;
        }
        let id = NodeId(self.nodes.len() as u32);
        self.nodes.push(op);
        self.spans.push(span);
        self.dedup.insert(key, id);
        id
    }

    /// A constant node.
    pub fn constant(&mut self, c: Interval) -> NodeId {
        self.add(Op::Const(c), Span::default())
    }

    /// Rebuilds the graph keeping only nodes that an output depends on (dead-code elimination),
    /// mapping every kept node through `rewrite`, which may build replacement nodes in the new graph.
    /// `rewrite` receives the new graph, the old op with arguments already mapped, the old id, and
    /// the map from old ids to new ones built so far.
    pub(crate) fn rebuild(
        &self,
        mut rewrite: impl FnMut(&mut Graph, Op, NodeId, &[Option<NodeId>]) -> NodeId,
    ) -> Graph {
        let live = self.live();
        let mut new = Graph::new(self.vars.clone(), self.var_spans.clone(), self.folder);
        let mut map: Vec<Option<NodeId>> = vec![None; self.nodes.len()];
        for id in self.ids() {
            if !live[id.index()] {
                continue;
            }
            let op = self.op(id);
            let args: Vec<NodeId> = op
                .args()
                .iter()
                .map(|a| map[a.index()].expect("arguments precede users"))
                .collect();
            let mapped = op.with_args(&args);
            let span = self.span(id);
            // New nodes created by `rewrite` inherit this node's span.
            let before = new.nodes.len();
            let out = rewrite(&mut new, mapped, id, &map);
            for s in &mut new.spans[before..] {
                if *s == Span::default() {
                    *s = span;
                }
            }
            map[id.index()] = Some(out);
        }
        new.outputs = self
            .outputs
            .iter()
            .map(|o| map[o.index()].unwrap())
            .collect();
        new
    }

    /// The nodes of this graph that `roots` depend on, built again into `dst` with variable v
    /// replaced by the node `at[v]` of `dst` (a function evaluated somewhere else: at the
    /// box's midpoint, on a narrowed box): the node each node became, `None` where not needed.
    pub(crate) fn copy_into(
        &self,
        dst: &mut Graph,
        roots: &[NodeId],
        at: &[NodeId],
        span: Span,
    ) -> Vec<Option<NodeId>> {
        let live = self.live_from(roots);
        let mut out: Vec<Option<NodeId>> = vec![None; self.len()];
        for id in self.ids() {
            if !live[id.index()] {
                continue;
            }
            out[id.index()] = Some(match self.op(id) {
                Op::Var(k) => at[k as usize],
                op => {
                    let args: Vec<NodeId> = op
                        .args()
                        .iter()
                        .map(|a| out[a.index()].expect("arguments precede their users"))
                        .collect();
                    dst.add(op.with_args(&args), span)
                }
            });
        }
        out
    }

    /// Which nodes some output depends on.
    pub fn live(&self) -> Vec<bool> {
        self.live_from(&self.outputs)
    }

    /// Which nodes some of `roots` depends on.
    pub fn live_from(&self, roots: &[NodeId]) -> Vec<bool> {
        let mut live = vec![false; self.nodes.len()];
        for o in roots {
            live[o.index()] = true;
        }
        for id in self.ids().rev() {
            if live[id.index()] {
                for a in self.op(id).args() {
                    live[a.index()] = true;
                }
            }
        }
        live
    }

    /// How many live nodes use each node as an argument.
    pub(crate) fn use_counts(&self) -> Vec<u32> {
        let live = self.live();
        let mut uses = vec![0u32; self.nodes.len()];
        for id in self.ids() {
            if live[id.index()] {
                for a in self.op(id).args() {
                    uses[a.index()] += 1;
                }
            }
        }
        uses
    }
}
