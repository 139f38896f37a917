//! Interval lowering: interval IR → scalar IR. Interval semantics live here and only here.
//!
//! Every interval value becomes a pair of scalar values (lo, hi); the empty set is (NaN, NaN).
//! Each rule below states which bounds to combine, in which rounding direction, and how empty
//! and unbounded arguments behave (IEEE 1788 set-based semantics). Sign tests that the static
//! analysis ([`crate::ir::sign`]) decides are replaced by constants, and the scalar builder
//! folds the selects that depend on them.
//!
//! Conventions used by every rule:
//! - a lower bound is computed rounding down, an upper bound rounding up;
//! - a product of bounds where one is 0 and the other infinite counts as 0 (IEEE 1788), which the
//!   hardware would make NaN: `Lowering::mul_bound` repairs it unless a fact rules it out;
//! - `min`/`max` ignore NaN, so rules that use them test emptiness explicitly.

mod decoration;
mod elementary;
mod enclosure;
// Generated from the lowering (`interpreted::operations`); rustfmt keeps the generator's
// layout, which the test `the_operations_are_the_lowerings` compares.
#[rustfmt::skip]
pub(crate) mod generated;
pub(crate) mod interpreted;
mod power;
mod reverse;
mod root;

pub use decoration::{decoration_var, fold_decorated, lower_decorated};

use crate::interval::Interval;
use crate::ir::sign::{Fact, Facts};
use crate::ir::{Graph, NodeId, Op};
use crate::scalar::{Bound, Builder, Cmp, Precision, Program, Round, Value};
use crate::syntax::ast::Span;

/// A lowered interval: its two bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Iv {
    /// The scalar value of the lower bound.
    pub lo: Value,
    /// The scalar value of the upper bound.
    pub hi: Value,
}

/// An operation the lowering cannot express (yet).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct LowerError {
    /// The source span of the operation.
    pub span: Span,
    /// What cannot be lowered.
    pub message: String,
    /// A suggestion for the user, if there is one.
    pub help: Option<String>,
}

/// Lowers every output of the graph to a scalar program in the given precision.
pub fn lower(g: &Graph, precision: Precision) -> Result<Program, LowerError> {
    lower_with(g, precision, None)
}

/// [`lower`] with facts per node that hold on every box the program will be given (a region's,
/// from a pruned tape's, `search::tape`), merged with the static analysis: a known sign takes a product's sign
/// tests away, a node known non-empty its emptiness tests. On those boxes the program computes
/// the same bits as [`lower`]'s (the tests it drops would have answered as the facts say).
pub fn lower_with(
    g: &Graph,
    precision: Precision,
    known: Option<&[Fact]>,
) -> Result<Program, LowerError> {
    let facts = Facts::analyze_with(g, known);
    let live = g.live();
    let mut l = Lowering {
        b: Builder::new(precision, g.vars.clone()),
    };
    let mut vals: Vec<Option<Iv>> = vec![None; g.len()];
    let all_facts: Vec<Fact> = g.ids().map(|id| facts.get(id)).collect();
    for id in g.ids() {
        if !live[id.index()] {
            continue;
        }
        let (_, v) = l.node_at(g, id, &all_facts, |a| {
            vals[a.index()].expect("arguments precede users")
        })?;
        vals[id.index()] = Some(v);
    }
    let outputs = g
        .outputs
        .iter()
        .map(|o| {
            let v = vals[o.index()].expect("outputs are live");
            (v.lo, v.hi)
        })
        .collect();
    finish(l, outputs)
}

/// The program of a lowering with these outputs, verified.
fn finish(l: Lowering, outputs: Vec<(Value, Value)>) -> Result<Program, LowerError> {
    finish_with_codes(l, outputs, 0)
}

/// [`finish`] for a program whose last `codes` outputs are codes (a decorated program's
/// decorations, [`Program::code_outputs`]).
fn finish_with_codes(
    l: Lowering,
    outputs: Vec<(Value, Value)>,
    codes: usize,
) -> Result<Program, LowerError> {
    let mut program = l.b.finish(outputs);
    program.code_outputs = codes;
    program.verify().map_err(|e| LowerError {
        span: Span::default(),
        message: format!(
            "internal error: the lowering built an ill-formed scalar program ({e}); please report it"
        ),
        help: None,
    })?;
    Ok(program)
}

/// One operation on interval arguments of which nothing is known (variables 0 and 1, `x` and
/// `y`), lowered to a program of one output in `precision`: what an interpreter of interval
/// operations runs for it. The tape interpreters' operation bodies (CPU and CUDA) are generated
/// from these programs (`crate::scalar::emit`), so that they restate no semantics. Only the
/// operation's kind counts (its argument ids are ignored); `None` for operations of more than
/// two arguments or that need the rewrites first (`pow`).
pub(crate) fn lower_op(op: Op, precision: Precision) -> Option<Program> {
    let arity = op.args().len();
    if arity > 2 || matches!(op, Op::Pow(..) | Op::Var(_) | Op::Const(_)) {
        return None;
    }
    let vars: Vec<String> = ["x", "y"][..arity].iter().map(|v| v.to_string()).collect();
    let mut l = Lowering {
        b: Builder::new(precision, vars),
    };
    let args: Vec<Iv> = (0..arity as u32)
        .map(|v| Iv {
            lo: l.b.input(v, Bound::Lo),
            hi: l.b.input(v, Bound::Hi),
        })
        .collect();
    let out = l.op(op, &args, &vec![Fact::UNKNOWN; arity]);
    Some(l.b.finish(vec![(out.lo, out.hi)]))
}

/// Constant folding with exactly the run-time semantics: the lowering of `op` on constant
/// arguments ([`lower_constant_op`]), run in f64 by the scalar IR's reference interpreter
/// ([`crate::scalar::interp`]). The IR knows no semantics of its own; this is the folder the
/// crate injects into it ([`crate::ir::Folder`]). (An f32 program later rounds the folded f64
/// bounds outward to f32, which encloses the same set.)
pub fn fold(op: &Op, args: &[Interval]) -> Option<Interval> {
    let program = lower_constant_op(op, args)?;
    let out = crate::scalar::interp::eval(&program, &[]).ok()?;
    let (lo, hi) = out[0];
    Some(Interval::from_bounds(lo, hi))
}

/// Lowers one operation on constant arguments in f64 into a program with no inputs (used by
/// constant folding). Returns `None` for operations that need the rewrites first (`pow`).
pub(crate) fn lower_constant_op(op: &Op, args: &[Interval]) -> Option<Program> {
    let (l, _, out) = lower_on_constants(op, args)?;
    Some(l.b.finish(vec![(out.lo, out.hi)]))
}

/// `op` lowered in f64 on constant arguments: the lowering (to add to), the arguments' bounds
/// and the result's. `None` for operations that need the rewrites first (`pow`).
fn lower_on_constants(op: &Op, args: &[Interval]) -> Option<(Lowering, Vec<Iv>, Iv)> {
    if matches!(op, Op::Pow(..) | Op::Var(_) | Op::Const(_)) {
        return None;
    }
    let facts: Vec<Fact> = args
        .iter()
        .map(|c| crate::ir::sign::fact_of(Op::Const(*c), &[]))
        .collect();
    let mut l = Lowering {
        b: Builder::new(Precision::F64, Vec::new()),
    };
    let ivs: Vec<Iv> = args.iter().map(|c| l.constant(*c)).collect();
    let out = l.op(*op, &ivs, &facts);
    Some((l, ivs, out))
}

struct Lowering {
    b: Builder,
}

impl Lowering {
    /// Node `id` lowered on its arguments' bounds (`iv_of`) with the facts of every node:
    /// the arguments' bounds (the decoration rules read them too) and the node's.
    fn node_at(
        &mut self,
        g: &Graph,
        id: NodeId,
        facts: &[Fact],
        iv_of: impl Fn(NodeId) -> Iv,
    ) -> Result<(Vec<Iv>, Iv), LowerError> {
        let args = g.op(id).args();
        let ivs: Vec<Iv> = args.iter().map(|&a| iv_of(a)).collect();
        let arg_facts: Vec<Fact> = args.iter().map(|a| facts[a.index()]).collect();
        let v = self.node(g, id, &ivs, &arg_facts, facts[id.index()])?;
        Ok((ivs, v))
    }

    /// Node `id` of `g` (operation arguments `a`, their facts `f`, the node's own fact), as the
    /// whole-graph lowerings lower it.
    fn node(
        &mut self,
        g: &Graph,
        id: NodeId,
        a: &[Iv],
        f: &[Fact],
        own: Fact,
    ) -> Result<Iv, LowerError> {
        let op = g.op(id);
        if let Op::Pow(..) = op {
            return Err(LowerError {
                span: g.span(id),
                message: "powers with a non-integer or non-constant exponent are not supported yet"
                    .into(),
                help: Some(
                    "use an integer constant exponent (x^3, x^-2), x^0.5 for sqrt, or sqr/sqrt/pown"
                        .into(),
                ),
            });
        }
        let mut v = self.op(op, a, f);
        if matches!(op, Op::Elem(..) | Op::Elem2(..) | Op::Rootn(..)) {
            // Point bounds step one or more ulps outward, which can cross zero (sinh(0) rounded
            // down is below 0). Later rules trust the static sign facts, so make the bounds obey
            // them: rigorous, since the fact holds for the real function.
            v = self.enforce_sign(v, own);
        }
        Ok(v)
    }

    fn op(&mut self, op: Op, a: &[Iv], f: &[Fact]) -> Iv {
        match op {
            Op::Var(v) => Iv {
                lo: self.b.input(v, Bound::Lo),
                hi: self.b.input(v, Bound::Hi),
            },
            Op::Const(c) | Op::DecoratedConst(c, _) => self.constant(c),
            Op::Neg(_) => self.neg(a[0]),
            Op::Add(..) => {
                let lo = self.b.add(a[0].lo, a[1].lo, Round::Down);
                let hi = self.b.add(a[0].hi, a[1].hi, Round::Up);
                Iv { lo, hi }
            }
            Op::Sub(..) => {
                let lo = self.b.sub(a[0].lo, a[1].hi, Round::Down);
                let hi = self.b.sub(a[0].hi, a[1].lo, Round::Up);
                Iv { lo, hi }
            }
            Op::Mul(..) => self.mul(a[0], a[1], f[0], f[1], None),
            Op::Fma(..) => self.mul(a[0], a[1], f[0], f[1], Some((a[2], f[2]))),
            Op::Div(..) => self.div(a[0], a[1], f[0], f[1]),
            Op::Sqr(_) => self.pown(a[0], 2, f[0]),
            Op::Pown(_, n) => self.pown(a[0], n, f[0]),
            Op::Sqrt(_) => self.sqrt(a[0], f[0]),
            Op::Abs(_) => self.abs(a[0], f[0]),
            Op::Min(..) | Op::Max(..) => {
                let is_min = matches!(op, Op::Min(..));
                let (lo, hi) = if is_min {
                    (self.b.min(a[0].lo, a[1].lo), self.b.min(a[0].hi, a[1].hi))
                } else {
                    (self.b.max(a[0].lo, a[1].lo), self.b.max(a[0].hi, a[1].hi))
                };
                let empty = self.either_empty(a[0], f[0], a[1], f[1]);
                self.empty_if(empty, Iv { lo, hi })
            }
            Op::Hull(..) => Iv {
                // min/max ignore NaN: the hull of the empty set and X is X, as it should be.
                lo: self.b.min(a[0].lo, a[1].lo),
                hi: self.b.max(a[0].hi, a[1].hi),
            },
            Op::Intersect(..) => {
                let lo = self.b.max(a[0].lo, a[1].lo);
                let hi = self.b.min(a[0].hi, a[1].hi);
                let disjoint = self.b.cmp(Cmp::Gt, lo, hi);
                let e = self.either_empty(a[0], f[0], a[1], f[1]);
                let empty = self.b.or(e, disjoint);
                self.empty_if(empty, Iv { lo, hi })
            }
            Op::Pow(..) => unreachable!("pow is rejected before lowering"),
            Op::Elem(func, _) => self.elementary(func, a[0], f[0]),
            Op::Elem2(func, ..) => self.elementary2(func, a[0], f[0], a[1], f[1]),
            Op::Rootn(_, n) => self.rootn(a[0], n, f[0]),
            Op::RoundInt(k, _) => self.round_int(k, a[0]),
            Op::Round(_) => self.round(a[0]),
            Op::Sign(_) => self.sign(a[0], f[0]),
            Op::Mid(_) => self.mid(a[0]),
            Op::MeanValue(..) => self.mean_value(a[0], a[1], a[2]),
            Op::Face(..) => self.face(a[0], a[1]),
            Op::Descent(..) => self.descent(a[0], a[1], a[2], a[3], a[4]),
            Op::Decorated(..) => a[0],
            Op::Numeric(func, _) => self.numeric(func, a[0]),
            Op::CancelMinus(..) => self.cancel_minus(a[0], a[1]),
            Op::Rev(func, ..) => self.reverse(func, a[0], a[1]),
            Op::Rev2(func, ..) => self.reverse2(func, a[0], a[1], a[2]),
        }
    }

    /// The monotonicity test's face (see `Op::Face`): `[lo, lo]` where `d.lo >= 0` and `lo` is
    /// finite, else `[hi, hi]` where `d.hi <= 0` and `hi` is finite, else `x`. A NaN `d` (empty)
    /// fails both comparisons.
    fn face(&mut self, x: Iv, d: Iv) -> Iv {
        let z = self.b.zero();
        let ninf = self.b.constant(f64::NEG_INFINITY);
        let pinf = self.b.constant(f64::INFINITY);
        let up = self.b.cmp(Cmp::Ge, d.lo, z);
        let lo_finite = self.b.cmp(Cmp::Gt, x.lo, ninf);
        let at_lo = self.b.and(up, lo_finite);
        let down = self.b.cmp(Cmp::Le, d.hi, z);
        let hi_finite = self.b.cmp(Cmp::Lt, x.hi, pinf);
        let at_hi = self.b.and(down, hi_finite);
        // at_lo wins where both hold (d = [0, 0]: f constant in this variable on the box).
        let lo = self.b.select(at_hi, x.hi, x.lo);
        Iv {
            lo: self.b.select(at_lo, x.lo, lo),
            hi: self.b.select(at_lo, x.lo, x.hi),
        }
    }

    /// `f`, or the empty set where the box holds no global minimizer (see `Op::Descent`).
    fn descent(&mut self, f: Iv, t: Iv, d: Iv, x: Iv, r: Iv) -> Iv {
        let one = self.b.constant(1.0);
        let z = self.b.zero();
        let t_lo = self.b.cmp(Cmp::Eq, t.lo, one);
        let t_hi = self.b.cmp(Cmp::Eq, t.hi, one);
        let proven = self.b.and(t_lo, t_hi);
        let wide = self.b.cmp(Cmp::Lt, x.lo, x.hi);
        // A minimizer inside the root box in this variable: strictly past the root's end.
        let rising = self.b.cmp(Cmp::Gt, d.lo, z);
        let inside_lo = self.b.cmp(Cmp::Gt, x.lo, r.lo);
        let up = self.b.and(rising, inside_lo);
        let falling = self.b.cmp(Cmp::Lt, d.hi, z);
        let inside_hi = self.b.cmp(Cmp::Lt, x.hi, r.hi);
        let down = self.b.and(falling, inside_hi);
        let strict = self.b.or(up, down);
        let cut = self.b.and(proven, wide);
        let cut = self.b.and(cut, strict);
        self.empty_if(cut, f)
    }

    /// A point of `a` as a point interval: `lo/2 + hi/2` rounded to nearest, clamped into
    /// `[lo, hi]` (halving a subnormal rounds); NaN (empty) when a bound is infinite or `a` is
    /// empty, so that nothing computed from it is mistaken for a value at a real point.
    fn mid(&mut self, a: Iv) -> Iv {
        let n = Round::Nearest;
        let half = self.b.constant(0.5);
        let l = self.b.mul(a.lo, half, n);
        let h = self.b.mul(a.hi, half, n);
        let m = self.b.add(l, h, n);
        let m = self.b.max(m, a.lo);
        let m = self.b.min(m, a.hi);
        let ninf = self.b.constant(f64::NEG_INFINITY);
        let pinf = self.b.constant(f64::INFINITY);
        let lo_finite = self.b.cmp(Cmp::Gt, a.lo, ninf);
        let hi_finite = self.b.cmp(Cmp::Lt, a.hi, pinf);
        let finite = self.b.and(lo_finite, hi_finite);
        let nan = self.b.nan();
        let m = self.b.select(finite, m, nan);
        Iv { lo: m, hi: m }
    }

    /// `f ∩ m` where `t` is exactly [1, 1] and `m` is a non-empty interval meeting `f`, else
    /// `f` (see `Op::MeanValue`).
    fn mean_value(&mut self, f: Iv, m: Iv, t: Iv) -> Iv {
        let one = self.b.constant(1.0);
        let t_lo = self.b.cmp(Cmp::Eq, t.lo, one);
        let t_hi = self.b.cmp(Cmp::Eq, t.hi, one);
        let proven = self.b.and(t_lo, t_hi);
        let lo = self.b.max(f.lo, m.lo);
        let hi = self.b.min(f.hi, m.hi);
        // Comparisons with NaN are false: an empty m (or f) fails this test.
        let meets = self.b.cmp(Cmp::Le, lo, hi);
        let m_lo_ok = self.b.cmp(Cmp::Le, m.lo, m.hi);
        let ok = self.b.and(meets, m_lo_ok);
        let use_m = self.b.and(proven, ok);
        Iv {
            lo: self.b.select(use_m, lo, f.lo),
            hi: self.b.select(use_m, hi, f.hi),
        }
    }

    /// Clamps bounds to the signs the analysis promises (NaN, the empty set, stays NaN).
    fn enforce_sign(&mut self, r: Iv, f: Fact) -> Iv {
        let z = self.b.zero();
        let mut r = r;
        if f.nonneg {
            let below = self.b.cmp(Cmp::Lt, r.lo, z);
            r.lo = self.b.select(below, z, r.lo);
        }
        if f.nonpos {
            let above = self.b.cmp(Cmp::Gt, r.hi, z);
            r.hi = self.b.select(above, z, r.hi);
        }
        r
    }

    /// A constant interval, rounded outward to the program's precision.
    fn constant(&mut self, c: Interval) -> Iv {
        if c.is_empty() {
            let nan = self.b.nan();
            return Iv { lo: nan, hi: nan };
        }
        let c = match self.b.precision() {
            Precision::F64 => c,
            Precision::F32 => c.to_f32_enclosure(),
        };
        Iv {
            lo: self.b.constant(c.lo),
            hi: self.b.constant(c.hi),
        }
    }

    fn neg(&mut self, a: Iv) -> Iv {
        Iv {
            lo: self.b.neg(a.hi),
            hi: self.b.neg(a.lo),
        }
    }

    /// Boolean: the interval is empty (its lower bound is NaN), or constant false when the
    /// analysis proved it nonempty.
    fn is_empty(&mut self, a: Iv, f: Fact) -> Value {
        if f.maybe_empty {
            self.b.is_nan(a.lo)
        } else {
            self.b.bool(false)
        }
    }

    fn either_empty(&mut self, a: Iv, fa: Fact, c: Iv, fc: Fact) -> Value {
        let x = self.is_empty(a, fa);
        let y = self.is_empty(c, fc);
        self.b.or(x, y)
    }

    /// Boolean: `r` is nonempty and both its bounds are finite.
    fn bounded(&mut self, r: Iv) -> Value {
        let ninf = self.b.constant(f64::NEG_INFINITY);
        let pinf = self.b.constant(f64::INFINITY);
        let lo = self.b.cmp(Cmp::Gt, r.lo, ninf);
        let hi = self.b.cmp(Cmp::Lt, r.hi, pinf);
        self.b.and(lo, hi)
    }

    /// `empty ? [empty] : r`.
    fn empty_if(&mut self, empty: Value, r: Iv) -> Iv {
        let nan = self.b.nan();
        Iv {
            lo: self.b.select(empty, nan, r.lo),
            hi: self.b.select(empty, nan, r.hi),
        }
    }

    /// Boolean `x >= 0`, answered statically when `known` says so.
    fn ge0(&mut self, x: Value, known: bool) -> Value {
        if known {
            return self.b.bool(true);
        }
        let z = self.b.zero();
        self.b.cmp(Cmp::Ge, x, z)
    }

    /// Boolean `x <= 0`, answered statically when `known` says so.
    fn le0(&mut self, x: Value, known: bool) -> Value {
        if known {
            return self.b.bool(true);
        }
        let z = self.b.zero();
        self.b.cmp(Cmp::Le, x, z)
    }

    /// One directed product of two bounds (plus `add` in one rounding, for fma), with
    /// 0 * inf = 0 as IEEE 1788 requires. The hardware gives NaN there; the repair is skipped when
    /// one factor's bounds are known finite and nonzero. Both operands are never NaN here unless
    /// an argument is empty, which the caller handles.
    fn mul_bound(
        &mut self,
        x: Value,
        y: Value,
        add: Option<Value>,
        r: Round,
        exact: bool,
    ) -> Value {
        let p = match add {
            None => self.b.mul(x, y, r),
            Some(c) => self.b.fma(x, y, c, r),
        };
        if exact {
            return p;
        }
        let nan = self.b.is_nan(p);
        // For fma, a 0 * inf product contributes 0, leaving the addend (a float, exact).
        let repair = match add {
            None => self.b.zero(),
            Some(c) => c,
        };
        self.b.select(nan, repair, p)
    }

    /// Interval product (Table 1 of the GPU interval paper), or `a*b + c` when `addend` is given.
    ///
    /// With P = "lower bound >= 0" and N = "upper bound <= 0" for each factor, the lower bound is
    /// one product of bounds chosen by the signs, except when both factors straddle zero (neither
    /// P nor N), where it is the smaller of two; likewise the upper bound. The operands are
    /// selected branchlessly; in the other cases the second candidate duplicates the first.
    /// The sign cases that static facts fold away (a factor known >= 0 or <= 0: `abs(x) * y`,
    /// `sqr(x) * y`) are held on the interval classes by the class fuzzing
    /// (`tests/cpu/class_fuzz.rs`: random compositions on class boxes).
    fn mul(&mut self, a: Iv, b: Iv, fa: Fact, fb: Fact, addend: Option<(Iv, Fact)>) -> Iv {
        let exact = fa.finite_nonzero_bounds || fb.finite_nonzero_bounds;
        let unknown = |f: Fact| !f.nonneg && !f.nonpos;
        if addend.is_none() && unknown(fa) && unknown(fb) {
            return self.mul_corners(a, b, fa, fb, exact);
        }
        let ap = self.ge0(a.lo, fa.nonneg);
        let an = self.le0(a.hi, fa.nonpos);
        let bp = self.ge0(b.lo, fb.nonneg);
        let bn = self.le0(b.hi, fb.nonpos);
        let s = |l: &mut Self, c, x, y| l.b.select(c, x, y);

        // Lower bound: PP a1*b1 | PM,PN a2*b1 | MP,NP,NM a1*b2 | MN a2*b1 | NN a2*b2 | MM min(a2*b1, a1*b2).
        let t = s(self, bp, a.lo, a.hi);
        let u = s(self, bn, a.hi, a.lo);
        let m = s(self, bp, a.lo, a.hi);
        let v = s(self, an, u, m);
        let x1 = s(self, ap, t, v);
        let w = s(self, bp, b.hi, b.lo);
        let z = s(self, an, b.hi, w);
        let y1 = s(self, ap, b.lo, z);
        // Upper bound: PP,PM a2*b2 | PN a1*b2 | NP a2*b1 | NM,NN a1*b1 | MP a2*b2 | MN a1*b1 | MM max(a1*b1, a2*b2).
        let t = s(self, bn, a.lo, a.hi);
        let u = s(self, bp, a.hi, a.lo);
        let m = s(self, bn, a.lo, a.hi);
        let v = s(self, an, u, m);
        let x2 = s(self, ap, t, v);
        let w = s(self, bn, b.lo, b.hi);
        let z = s(self, an, b.lo, w);
        let y2 = s(self, ap, b.hi, z);

        let (c_lo, c_hi) = match addend {
            Some((c, _)) => (Some(c.lo), Some(c.hi)),
            None => (None, None),
        };
        let mut lo = self.mul_bound(x1, y1, c_lo, Round::Down, exact);
        let mut hi = self.mul_bound(x2, y2, c_hi, Round::Up, exact);

        // Both straddle zero: a second candidate for each bound.
        let not_ap = self.b.not(ap);
        let not_an = self.b.not(an);
        let not_bp = self.b.not(bp);
        let not_bn = self.b.not(bn);
        let am = self.b.and(not_ap, not_an);
        let bm = self.b.and(not_bp, not_bn);
        let mm = self.b.and(am, bm);
        if self.b.as_bool(mm) != Some(false) {
            let x3 = s(self, mm, a.lo, x1);
            let y3 = s(self, mm, b.hi, y1);
            let x4 = s(self, mm, a.lo, x2);
            let y4 = s(self, mm, b.lo, y2);
            let lo2 = self.mul_bound(x3, y3, c_lo, Round::Down, exact);
            let hi2 = self.mul_bound(x4, y4, c_hi, Round::Up, exact);
            lo = self.b.min(lo, lo2);
            hi = self.b.max(hi, hi2);
        }
        if exact {
            // No 0 * inf repair: every candidate product (and fma) involves a bound of each
            // argument (and the addend), so an empty argument (NaN, NaN) already makes every
            // candidate NaN, and min/max of two NaNs is NaN. The result is (NaN, NaN) without
            // an emptiness test.
            return Iv { lo, hi };
        }
        let mut empty = self.either_empty(a, fa, b, fb);
        if let Some((c, fc)) = addend {
            let ec = self.is_empty(c, fc);
            empty = self.b.or(empty, ec);
        }
        self.empty_if(empty, Iv { lo, hi })
    }

    /// Interval product of two factors of unknown sign: the smallest and the largest of the four
    /// corner products, each rounded outward. Where the sign-case table needs four sign tests
    /// and twenty operand selects, this is eight directed products and six min/max (issue 14:
    /// the selects and compares were most of a large kernel's instructions).
    ///
    /// A corner 0 * inf is NaN on the hardware and 0 in IEEE 1788; min and max skip a NaN
    /// operand. Skipping it gives the right bound unless every corner is 0 * inf: a corner
    /// (0, inf) has a neighbour (0, y) of value 0 unless y is infinite too, so the factor
    /// with the infinity is the whole line, and then the other factor's other end c gives
    /// corners of +-inf (c != 0, a bound of the whole line anyway) or the factor is [0, 0].
    /// So the one repair is [0, 0] * \[entire\]: all four NaN with neither factor empty gives
    /// [0, 0]. An empty factor makes every corner NaN, the result (NaN, NaN). With a factor of
    /// finite nonzero bounds (`exact`) no corner is 0 * inf and nothing is repaired.
    ///
    /// Classes (issue 29's audit): every class of either factor in both precisions (entire,
    /// half-lines, [MAX, inf], signed zeros, subnormals, points, empty); held by the class
    /// matrix (`x * y` and `fma` cells of `tests/cpu/classes.rs`, `tests/gpu/gpu_classes.rs`)
    /// and `tests/cpu/tightest.rs` (tightest on the special values).
    fn mul_corners(&mut self, a: Iv, b: Iv, fa: Fact, fb: Fact, exact: bool) -> Iv {
        let corners = [(a.lo, b.lo), (a.lo, b.hi), (a.hi, b.lo), (a.hi, b.hi)];
        let [d0, d1, d2, d3] = corners.map(|(x, y)| self.b.mul(x, y, Round::Down));
        let [u0, u1, u2, u3] = corners.map(|(x, y)| self.b.mul(x, y, Round::Up));
        let (l01, l23) = (self.b.min(d0, d1), self.b.min(d2, d3));
        let (h01, h23) = (self.b.max(u0, u1), self.b.max(u2, u3));
        let lo = self.b.min(l01, l23);
        let hi = self.b.max(h01, h23);
        if exact {
            return Iv { lo, hi };
        }
        let all_nan = self.b.is_nan(lo);
        let empty = self.either_empty(a, fa, b, fb);
        let nonempty = self.b.not(empty);
        let zero_times_entire = self.b.and(all_nan, nonempty);
        let z = self.b.zero();
        Iv {
            lo: self.b.select(zero_times_entire, z, lo),
            hi: self.b.select(zero_times_entire, z, hi),
        }
    }

    /// Interval division, IEEE 1788: `x/[0,0]` is empty; a divisor touching zero at one end gives a
    /// half-unbounded result; one straddling zero gives the whole line (or \[0,0\] for a zero
    /// numerator).
    ///
    /// For a divisor >= 0 (b1 >= 0, b != \[0,0\]):
    ///   lo = a1 / (a1 >= 0 ? b2 : b1),  hi = a2 / (a2 > 0 ? b1 : b2),
    /// with b1 = +0 when it is zero, so that a1 / b1 is -inf for a1 < 0 and a2 / b1 is +inf for
    /// a2 > 0. For a divisor <= 0 mirror it:
    ///   lo = a2 / (a2 > 0 ? b2 : b1),   hi = a1 / (a1 >= 0 ? b1 : b2),  with b2 = -0 when zero.
    /// No quotient is 0/0 or inf/inf in these cases.
    fn div(&mut self, a: Iv, b: Iv, fa: Fact, fb: Fact) -> Iv {
        let zero = self.b.zero();
        let nonneg = self.ge0(b.lo, fb.nonneg);
        let nonpos = self.le0(b.hi, fb.nonpos);
        // Divisor >= 0.
        let b1 = if fb.finite_nonzero_bounds {
            b.lo
        } else {
            self.b.add(b.lo, zero, Round::Nearest) // -0 + 0 = +0 under round-to-nearest
        };
        let a1_ge0 = self.ge0(a.lo, fa.nonneg);
        let a2_gt0 = self.b.cmp(Cmp::Gt, a.hi, zero);
        let d_lo_pos = self.b.select(a1_ge0, b.hi, b1);
        let d_hi_pos = self.b.select(a2_gt0, b1, b.hi);
        // Divisor <= 0.
        let b2 = if fb.finite_nonzero_bounds {
            b.hi
        } else {
            let neg_zero = self.b.constant(-0.0);
            let is_zero = self.b.cmp(Cmp::Eq, b.hi, zero);
            self.b.select(is_zero, neg_zero, b.hi)
        };
        let d_lo_neg = self.b.select(a2_gt0, b2, b.lo);
        let d_hi_neg = self.b.select(a1_ge0, b.lo, b2);

        let n_lo = self.b.select(nonneg, a.lo, a.hi);
        let d_lo = self.b.select(nonneg, d_lo_pos, d_lo_neg);
        let n_hi = self.b.select(nonneg, a.hi, a.lo);
        let d_hi = self.b.select(nonneg, d_hi_pos, d_hi_neg);
        let mut lo = self.b.div(n_lo, d_lo, Round::Down);
        let mut hi = self.b.div(n_hi, d_hi, Round::Up);

        // Divisor strictly straddling zero: the whole line, or [0, 0] for a zero numerator.
        let not_nonneg = self.b.not(nonneg);
        let not_nonpos = self.b.not(nonpos);
        let straddle = self.b.and(not_nonneg, not_nonpos);
        if self.b.as_bool(straddle) != Some(false) {
            let lo_zero = self.b.cmp(Cmp::Eq, a.lo, zero);
            let hi_zero = self.b.cmp(Cmp::Eq, a.hi, zero);
            let a_zero = self.b.and(lo_zero, hi_zero);
            let ninf = self.b.constant(f64::NEG_INFINITY);
            let pinf = self.b.constant(f64::INFINITY);
            let lo_s = self.b.select(a_zero, zero, ninf);
            let hi_s = self.b.select(a_zero, zero, pinf);
            lo = self.b.select(straddle, lo_s, lo);
            hi = self.b.select(straddle, hi_s, hi);
        }
        // Empty: an empty argument, or division by [0, 0].
        let by_zero = self.b.and(nonneg, nonpos);
        let e = self.either_empty(a, fa, b, fb);
        let empty = self.b.or(e, by_zero);
        self.empty_if(empty, Iv { lo, hi })
    }

    /// `sqrt(x)`: the part of x below zero is outside the domain and ignored; empty when x < 0.
    fn sqrt(&mut self, a: Iv, f: Fact) -> Iv {
        let z = self.b.zero();
        let lo_arg = if f.nonneg {
            a.lo
        } else {
            let neg = self.b.cmp(Cmp::Lt, a.lo, z);
            self.b.select(neg, z, a.lo) // NaN (empty) is not < 0 and stays NaN
        };
        let lo = self.b.sqrt(lo_arg, Round::Down);
        let hi = self.b.sqrt(a.hi, Round::Up);
        if f.nonneg {
            return Iv { lo, hi };
        }
        let below = self.b.cmp(Cmp::Lt, a.hi, z);
        self.empty_if(below, Iv { lo, hi })
    }

    /// `|x|` = [mig(x), mag(x)].
    fn abs(&mut self, a: Iv, f: Fact) -> Iv {
        if f.nonneg {
            return a;
        }
        if f.nonpos {
            return self.neg(a);
        }
        let na2 = self.b.neg(a.hi);
        let t = self.b.max(a.lo, na2);
        let z = self.b.zero();
        let contains_zero = self.b.cmp(Cmp::Le, t, z);
        let lo = self.b.select(contains_zero, z, t);
        let na1 = self.b.neg(a.lo);
        let hi = self.b.max(na1, a.hi);
        Iv { lo, hi }
    }
}
