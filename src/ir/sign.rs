//! Static sign analysis: what is known at compile time about each node's interval.
//!
//! A library evaluating `x*y` must test the signs of four bounds at run time. The compiler often
//! knows them: `sqr(x)` is never negative, `[2, 3]` is positive, `-sqrt(x)` is never positive.
//! The lowering asks these facts before emitting a sign test; a known answer removes the test and
//! the selects that depend on it.
//!
//! Every fact is a claim about all elements of the node's (possibly empty) value set, so it holds
//! vacuously for the empty set; the lowering handles emptiness separately.

use crate::ir::{Graph, NodeId, NumericFn, Op};
use crate::point::SignRule;

/// Compile-time knowledge about one node's interval.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fact {
    /// Every element is >= 0 (so the lower bound is >= 0).
    pub nonneg: bool,
    /// Every element is <= 0 (so the upper bound is <= 0).
    pub nonpos: bool,
    /// The interval may be empty at run time.
    pub maybe_empty: bool,
    /// Both bounds are finite and nonzero (so a bound times any bound is never 0 * inf).
    pub finite_nonzero_bounds: bool,
}

impl Fact {
    /// Nothing known.
    pub(crate) const UNKNOWN: Fact = Fact {
        nonneg: false,
        nonpos: false,
        maybe_empty: true,
        finite_nonzero_bounds: false,
    };

    fn sign(nonneg: bool, nonpos: bool, maybe_empty: bool) -> Fact {
        Fact {
            nonneg,
            nonpos,
            maybe_empty,
            finite_nonzero_bounds: false,
        }
    }

    /// The facts in words, for the IR text form.
    pub(crate) fn describe(&self) -> String {
        let mut parts = Vec::new();
        match (self.nonneg, self.nonpos) {
            (true, true) => parts.push("=0"),
            (true, false) => parts.push(">=0"),
            (false, true) => parts.push("<=0"),
            _ => {}
        }
        if !self.maybe_empty {
            parts.push("nonempty");
        }
        parts.join(" ")
    }

    /// What both facts say (each is true of the same node): the union of the knowledge.
    pub(crate) fn and(self, other: Fact) -> Fact {
        Fact {
            nonneg: self.nonneg || other.nonneg,
            nonpos: self.nonpos || other.nonpos,
            maybe_empty: self.maybe_empty && other.maybe_empty,
            finite_nonzero_bounds: self.finite_nonzero_bounds || other.finite_nonzero_bounds,
        }
    }

    /// What an enclosure `[lo, hi]` of a node on a region says about the node on every box
    /// inside the region (interval evaluation is inclusion-isotonic), with `maybe_empty`
    /// whether the node may be empty on such a box. NaN (empty or unknown) says nothing.
    pub(crate) fn of_enclosure(lo: f64, hi: f64, maybe_empty: bool) -> Fact {
        if lo.is_nan() || hi.is_nan() {
            return Fact::UNKNOWN;
        }
        Fact {
            nonneg: lo >= 0.0,
            nonpos: hi <= 0.0,
            maybe_empty,
            finite_nonzero_bounds: (lo > 0.0 && hi < f64::INFINITY)
                || (hi < 0.0 && lo > f64::NEG_INFINITY),
        }
    }

    fn negated(self) -> Fact {
        Fact {
            nonneg: self.nonpos,
            nonpos: self.nonneg,
            ..self
        }
    }
}

/// Facts for every node of a graph.
pub(crate) struct Facts {
    facts: Vec<Fact>,
}

impl Facts {
    /// One forward pass in node order (arguments precede users).
    pub(crate) fn analyze(g: &Graph) -> Facts {
        Facts::analyze_with(g, None)
    }

    /// [`Facts::analyze`], each node's fact strengthened by `known[node]` (facts that hold on
    /// every box the program will see, from a region's enclosures: a pruned tape's) before its
    /// users are analyzed.
    pub(crate) fn analyze_with(g: &Graph, known: Option<&[Fact]>) -> Facts {
        let mut facts: Vec<Fact> = Vec::with_capacity(g.len());
        for id in g.ids() {
            let mut f = fact_of(g.op(id), &facts);
            if let Some(k) = known.and_then(|k| k.get(id.index())) {
                f = f.and(*k);
            }
            facts.push(f);
        }
        Facts { facts }
    }

    /// The fact for one node.
    pub(crate) fn get(&self, id: NodeId) -> Fact {
        self.facts[id.index()]
    }
}

/// The fact for one operation given its arguments' facts (`facts` holds every earlier node).
pub(crate) fn fact_of(op: Op, facts: &[Fact]) -> Fact {
    let f = |id: NodeId| facts[id.index()];
    let either_empty = |a: NodeId, b: NodeId| f(a).maybe_empty || f(b).maybe_empty;
    match op {
        Op::Var(_) => Fact::UNKNOWN,
        Op::Const(c) | Op::DecoratedConst(c, _) => {
            if c.is_empty() {
                // Vacuously every claim holds; it is certainly empty.
                return Fact {
                    nonneg: true,
                    nonpos: true,
                    maybe_empty: true,
                    finite_nonzero_bounds: false,
                };
            }
            Fact {
                nonneg: c.lo >= 0.0,
                nonpos: c.hi <= 0.0,
                maybe_empty: false,
                // Must hold in every precision the constant may be lowered to: in f32, 1e39 is
                // [f32::MAX, inf] and 1e-50 is [0, tiny], so check the f32 enclosure too.
                finite_nonzero_bounds: {
                    let c32 = c.to_f32_enclosure();
                    [c.lo, c.hi, c32.lo, c32.hi]
                        .iter()
                        .all(|b| b.is_finite() && *b != 0.0)
                },
            }
        }
        Op::Neg(a) => f(a).negated(),
        Op::Add(a, b) => Fact::sign(
            f(a).nonneg && f(b).nonneg,
            f(a).nonpos && f(b).nonpos,
            either_empty(a, b),
        ),
        Op::Sub(a, b) => Fact::sign(
            f(a).nonneg && f(b).nonpos,
            f(a).nonpos && f(b).nonneg,
            either_empty(a, b),
        ),
        Op::Mul(a, b) => {
            let (x, y) = (f(a), f(b));
            Fact::sign(
                (x.nonneg && y.nonneg) || (x.nonpos && y.nonpos),
                (x.nonneg && y.nonpos) || (x.nonpos && y.nonneg),
                either_empty(a, b),
            )
        }
        Op::Div(a, b) => {
            // Signs of a quotient follow the signs of the operands (including the infinite limits
            // of a division by an interval touching zero). Division by [0, 0] is empty.
            let (x, y) = (f(a), f(b));
            Fact::sign(
                (x.nonneg && y.nonneg) || (x.nonpos && y.nonpos),
                (x.nonneg && y.nonpos) || (x.nonpos && y.nonneg),
                true,
            )
        }
        Op::Pow(..) => Fact::UNKNOWN,
        Op::Sqr(a) => Fact::sign(true, f(a).nonneg && f(a).nonpos, f(a).maybe_empty),
        // Empty only below 0: a nonempty argument known >= 0 gives a nonempty root.
        Op::Sqrt(a) => Fact::sign(true, f(a).nonpos, f(a).maybe_empty || !f(a).nonneg),
        Op::Pown(a, n) => {
            let x = f(a);
            if n == 0 {
                Fact::sign(true, false, x.maybe_empty)
            } else if n < 0 {
                // [0, 0] to a negative power is empty.
                Fact::sign(n % 2 == 0 || x.nonneg, n % 2 != 0 && x.nonpos, true)
            } else if n % 2 == 0 {
                Fact::sign(true, x.nonneg && x.nonpos, x.maybe_empty)
            } else {
                Fact::sign(x.nonneg, x.nonpos, x.maybe_empty)
            }
        }
        Op::Abs(a) => Fact::sign(true, f(a).nonneg && f(a).nonpos, f(a).maybe_empty),
        Op::Min(a, b) => Fact::sign(
            f(a).nonneg && f(b).nonneg,
            f(a).nonpos || f(b).nonpos,
            either_empty(a, b),
        ),
        Op::Max(a, b) => Fact::sign(
            f(a).nonneg || f(b).nonneg,
            f(a).nonpos && f(b).nonpos,
            either_empty(a, b),
        ),
        Op::Fma(a, b, c) => {
            let (x, y, z) = (f(a), f(b), f(c));
            let prod_nonneg = (x.nonneg && y.nonneg) || (x.nonpos && y.nonpos);
            let prod_nonpos = (x.nonneg && y.nonpos) || (x.nonpos && y.nonneg);
            Fact::sign(
                prod_nonneg && z.nonneg,
                prod_nonpos && z.nonpos,
                x.maybe_empty || y.maybe_empty || z.maybe_empty,
            )
        }
        Op::Hull(a, b) => Fact::sign(
            f(a).nonneg && f(b).nonneg,
            f(a).nonpos && f(b).nonpos,
            f(a).maybe_empty && f(b).maybe_empty,
        ),
        Op::Intersect(a, b) => {
            Fact::sign(f(a).nonneg || f(b).nonneg, f(a).nonpos || f(b).nonpos, true)
        }
        // Elementary functions: the sign rule of the function's row. A result may be empty for
        // a nonempty argument only where the domain is not every real.
        Op::Elem(func, a) => {
            let (row, x) = (func.row(), f(a));
            let maybe_empty = x.maybe_empty || !row.domain.is_everywhere();
            match row.sign {
                SignRule::Nonneg => Fact::sign(true, false, maybe_empty),
                SignRule::FollowsArgument => Fact::sign(x.nonneg, x.nonpos, maybe_empty),
                SignRule::Unknown => Fact::sign(false, false, true),
            }
        }
        Op::Elem2(func, a, b) => {
            let row = func.row();
            let maybe_empty = f(a).maybe_empty || f(b).maybe_empty || !row.everywhere;
            match row.sign {
                SignRule::Nonneg => Fact::sign(true, false, maybe_empty),
                SignRule::FollowsArgument | SignRule::Unknown => Fact::UNKNOWN,
            }
        }
        // Odd roots follow the sign of x; even roots are >= 0 (negative n included).
        Op::Rootn(a, n) => Fact::sign(n % 2 == 0 || f(a).nonneg, n % 2 != 0 && f(a).nonpos, true),
        // Monotone, sign-preserving roundings (floor(x >= 0) >= 0, ceil(x <= 0) <= 0, ...).
        Op::RoundInt(_, a) | Op::Round(a) | Op::Sign(a) => {
            Fact::sign(f(a).nonneg, f(a).nonpos, f(a).maybe_empty)
        }
        // A point of a (empty where a bound of a is infinite).
        Op::Mid(a) => Fact::sign(f(a).nonneg, f(a).nonpos, true),
        // f, or a part of f.
        Op::MeanValue(a, _, _) => f(a),
        // A point of x, or x.
        Op::Face(a, _) => Fact::sign(f(a).nonneg, f(a).nonpos, true),
        // f, or the empty set.
        Op::Descent(a, ..) => Fact::sign(f(a).nonneg, f(a).nonpos, true),
        // The value.
        Op::Decorated(a, _) => f(a),
        // A bound of a, of a's sign; never empty: the standard's inf of the empty set is +inf
        // ([max, inf], >= 0) and its sup -inf.
        Op::Numeric(NumericFn::Inf, a) => {
            Fact::sign(f(a).nonneg, f(a).nonpos && !f(a).maybe_empty, false)
        }
        Op::Numeric(NumericFn::Sup, a) => {
            Fact::sign(f(a).nonneg && !f(a).maybe_empty, f(a).nonpos, false)
        }
        // The midpoint of a: of a's sign; a width, radius or absolute value: >= 0.
        Op::Numeric(NumericFn::Mid, a) => Fact::sign(f(a).nonneg, f(a).nonpos, f(a).maybe_empty),
        Op::Numeric(_, a) => Fact::sign(true, false, f(a).maybe_empty),
        Op::CancelMinus(..) => Fact::UNKNOWN,
        // A part of x: of x's sign, and possibly empty.
        Op::Rev(_, _, x) | Op::Rev2(_, _, _, x) => Fact::sign(f(x).nonneg, f(x).nonpos, true),
    }
}
