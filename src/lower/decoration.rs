//! Decorated lowering: every node's IEEE 1788 decoration computed beside its bounds.
//!
//! A decorated program has the undecorated program's variables and then, with
//! [`DecorationInputs::Given`], one decoration input per variable (`dec(x)`, the point interval
//! [d, d] of its code; with `FromBounds` none: each variable is decorated `newDec` of its box),
//! and the undecorated outputs and then one decoration output per output ([d, d]). An output
//! decorated `ill` (NaI, from an `ill` input) has the empty set's bounds. Codes are the standard's
//! ([`crate::Decoration`]: trv 4, def 8, dac 12, com 16, ill 0), so the weakest of two
//! decorations is their `min`. Nothing else changes: the bounds are the undecorated lowering's
//! (bit for bit but where a constant subexpression stays unfolded to keep its decoration), and
//! every engine runs the program unchanged.
//!
//! Each node's decoration is the minimum of its arguments' and of the operation's own on the
//! arguments' boxes ([`Lowering::local_rule`], IEEE 1788-2015 §11.7 and its tables of
//! domains): `com` where the operation is defined and continuous on the boxes and the computed
//! result is bounded, `dac` where it is defined and its restriction continuous (or the result
//! unbounded), `def` where it is only defined, `trv` elsewhere. A variable's decoration is the
//! one given, lowered to what its box may carry (`newDec`: an unbounded box is at most `dac`,
//! the empty one `trv`); a constant's is `newDec` of its value in the program's precision.
//!
//! Every test is an exact comparison of bounds (a closed domain end is `>=`, an open one `>`),
//! so decorations are as strong as the standard's wherever the bounds are the tightest; where a
//! bound is wider than the tightest (an elementary function's outward steps), a decoration can
//! only come out weaker (`dac` for `com` when a wide bound overflows), never stronger.
//!
//! The program does not compute a decoration at every node: a node adds its own code (where it
//! may be undefined or jumps) and its result's boundedness test, and passes its arguments' on
//! ([`Lazy`]); the minimum is taken where a decoration is needed. A one-output program keeps
//! one running code and one running test ([`lower_one_output`]), and drops the tests a user's
//! test implies (`docs/decorations.md`, *Cost*).

use super::{Iv, LowerError, Lowering};
use crate::decoration::{Decoration, DecorationInputs};
use crate::interval::Interval;
use crate::ir::sign::{Fact, Facts};
use crate::ir::{Graph, NumericFn, Op, Rev2Fn};
use crate::point::{BinaryFn, UnaryFn};
use crate::scalar::{Bound, Builder, Cmp, Precision, Program, RoundInt, Value};

/// The name of variable `name`'s decoration input in a decorated program.
pub fn decoration_var(name: &str) -> String {
    format!("dec({name})")
}

/// Lowers every output of the graph and its decoration (see the module documentation).
pub fn lower_decorated(
    g: &Graph,
    precision: Precision,
    inputs: DecorationInputs,
) -> Result<Program, LowerError> {
    let facts = Facts::analyze_with(g, None);
    let live = g.live();
    let n = g.vars.len() as u32;
    let empties_reach = empties_reach_outputs(g, &live);
    let mut vars = g.vars.clone();
    if inputs == DecorationInputs::Given {
        vars.extend(g.vars.iter().map(|v| decoration_var(v)));
    }
    let mut l = Lowering {
        b: Builder::new(precision, vars),
    };
    let all_facts: Vec<Fact> = g.ids().map(|id| facts.get(id)).collect();
    if g.outputs.len() == 1 {
        return lower_one_output(g, l, &all_facts, &live, inputs, empties_reach);
    }
    let mut vals: Vec<Option<(Iv, Lazy)>> = vec![None; g.len()];
    for id in g.ids() {
        if !live[id.index()] {
            continue;
        }
        let op = g.op(id);
        let (ivs, v) = l.node_at(g, id, &all_facts, |a| {
            vals[a.index()].as_ref().expect("arguments precede users").0
        })?;
        let d = match op {
            Op::Var(k) => {
                let code = l.var_code(v, inputs, n + k, empties_reach);
                let bounded = vec![l.bounded(v)];
                Lazy::new(code.into_iter().collect(), bounded)
            }
            Op::Const(c) => Lazy::new(l.const_code(c).into_iter().collect(), Vec::new()),
            Op::DecoratedConst(c, d) => Lazy::new(vec![l.literal_code(c, d)], Vec::new()),
            // The witness's decoration, `com` only where the value itself is bounded; the
            // value's own decoration (an expansion's intersections: trv) does not count.
            Op::Decorated(_, w) => {
                let witness = vals[w.index()].as_ref().expect("arguments precede users");
                let code = l.materialize(&witness.1.clone());
                Lazy::new(vec![code], vec![l.bounded(v)])
            }
            _ => {
                let rule = l.local_rule(op, &ivs, v);
                let code = l.rule_code(rule);
                let own_flag = tests_bound(op);
                let flag = own_flag.then(|| l.bounded(v));
                let mut d = Lazy::new(code.into_iter().collect(), flag.into_iter().collect());
                let implied = unbounded_passes_on(g, op);
                let mut tight = true;
                for (k, a) in op.args().into_iter().enumerate() {
                    if !counts_argument(op, k) {
                        continue;
                    }
                    let arg = &vals[a.index()].as_ref().expect("arguments precede users").1;
                    if own_flag && implied[k] && arg.tight {
                        // This result is bounded only where the argument and everything its
                        // flags check are: its flags add nothing.
                        let codes_only = Lazy {
                            codes: arg.codes.clone(),
                            bounded: Vec::new(),
                            tight: true,
                        };
                        d = l.union(&d, &codes_only);
                    } else {
                        tight &= arg.bounded.is_empty();
                        d = l.union(&d, arg);
                    }
                }
                d.tight = tight && (own_flag || d.bounded.is_empty());
                d
            }
        };
        vals[id.index()] = Some((v, d));
    }
    let mut outputs: Vec<(Value, Value)> = Vec::new();
    let mut decorations: Vec<(Value, Value)> = Vec::new();
    let nai = may_be_nai(g, inputs);
    for o in &g.outputs {
        let (v, lazy) = vals[o.index()].clone().expect("outputs are live");
        let (value, d) = l.output(v, &lazy, nai);
        outputs.push(value);
        decorations.push((d, d));
    }
    let codes = decorations.len();
    outputs.extend(decorations);
    super::finish_with_codes(l, outputs, codes)
}

/// [`lower_decorated`] for a graph of one output, which every live node is an argument of
/// (directly or not): its decoration is the weakest of every node's own, so the program keeps
/// one running code (`min`) and one running boundedness flag (`and`) instead of a decoration per
/// node, and tests a node's boundedness only where no user's test implies it (`x + 1` is
/// unbounded wherever x is). The nodes of a derived function's expansion do not count (its
/// witness's do): they are reached only through an [`Op::Decorated`] value.
fn lower_one_output(
    g: &Graph,
    mut l: Lowering,
    all_facts: &[Fact],
    live: &[bool],
    inputs: DecorationInputs,
    empties_reach: bool,
) -> Result<Program, LowerError> {
    let n = g.vars.len() as u32;
    let out = g.outputs[0];
    // The nodes whose decorations count: reached from the output, not through a value of a
    // Decorated node. `implied`: a user whose boundedness test implies this node's exists.
    let mut counted = vec![false; g.len()];
    let mut implied = vec![false; g.len()];
    counted[out.index()] = true;
    for id in g.ids().rev() {
        if !counted[id.index()] {
            continue;
        }
        let op = g.op(id);
        let passes = unbounded_passes_on(g, op);
        for (k, a) in op.args().into_iter().enumerate() {
            if !counts_argument(op, k) {
                continue;
            }
            counted[a.index()] = true;
            if tests_bound(op) && passes[k] {
                implied[a.index()] = true;
            }
        }
    }
    let mut vals: Vec<Option<Iv>> = vec![None; g.len()];
    let mut code: Option<Value> = None;
    let mut flag: Option<Value> = None;
    for id in g.ids() {
        if !live[id.index()] {
            continue;
        }
        let op = g.op(id);
        let (ivs, v) = l.node_at(g, id, all_facts, |a| {
            vals[a.index()].expect("arguments precede users")
        })?;
        vals[id.index()] = Some(v);
        if !counted[id.index()] {
            continue;
        }
        let own = match op {
            Op::Var(k) => l.var_code(v, inputs, n + k, empties_reach),
            Op::Const(c) => l.const_code(c),
            Op::DecoratedConst(c, d) => Some(l.literal_code(c, d)),
            Op::Decorated(..) => None,
            _ => {
                let rule = l.local_rule(op, &ivs, v);
                l.rule_code(rule)
            }
        };
        if let Some(c) = own {
            code = Some(match code {
                None => c,
                Some(acc) => l.b.min(acc, c),
            });
        }
        if tests_bound(op) && !implied[id.index()] {
            let b = l.bounded(v);
            flag = Some(match flag {
                None => b,
                Some(acc) => l.b.and(acc, b),
            });
        }
    }
    let v = vals[out.index()].expect("the output is live");
    let lazy = Lazy::new(code.into_iter().collect(), flag.into_iter().collect());
    let (value, d) = l.output(v, &lazy, may_be_nai(g, inputs));
    super::finish_with_codes(l, vec![value, (d, d)], 1)
}

/// Whether an empty argument empties the result of every live operation of `g`, so that an
/// empty variable empties every output it reaches: false where the graph holds one that makes
/// something of nothing (the hull ignores an empty side, IEEE 1788's inf of the empty set is
/// +inf, cancelMinus of the empty set and an unbounded one is the whole line).
fn empties_reach_outputs(g: &Graph, live: &[bool]) -> bool {
    !g.ids().any(|id| {
        live[id.index()]
            && matches!(
                g.op(id),
                Op::Hull(..)
                    | Op::Numeric(NumericFn::Inf | NumericFn::Sup, _)
                    | Op::CancelMinus(..)
                    | Op::MeanValue(..)
                    | Op::Face(..)
                    | Op::Descent(..)
            )
    })
}

/// Whether an output may be decorated `ill`: from a given decoration or a `[nai]` literal.
fn may_be_nai(g: &Graph, inputs: DecorationInputs) -> bool {
    inputs == DecorationInputs::Given
        || g.ids()
            .any(|id| matches!(g.op(id), Op::DecoratedConst(_, Decoration::Ill)))
}

/// Whether argument `k` of `op` counts in its decoration: not a [`Op::Decorated`] node's value
/// (its witness's decoration is the node's) nor the `[entire]` that mulRevToPair's pieces are
/// met with (the user's function has no such argument, so it may not weaken the result).
fn counts_argument(op: Op, k: usize) -> bool {
    match op {
        Op::Decorated(..) => k != 0,
        Op::Rev2(Rev2Fn::MulPair1 | Rev2Fn::MulPair2, ..) => k != 2,
        _ => true,
    }
}

/// Whether a node tests its own result's boundedness (its decoration is `com` only where the
/// result is bounded): the operations continuous on their domain whose range is unbounded,
/// the variables and the derived functions; not the ones whose rule gives their code outright
/// (tan, atan2, the roundings, the set operations) or whose range is bounded.
fn tests_bound(op: Op) -> bool {
    !bounded_range(op)
        && !matches!(
            op,
            Op::Const(_)
                | Op::DecoratedConst(..)
                | Op::Elem(UnaryFn::Tan, _)
                | Op::Elem2(BinaryFn::Atan2, ..)
                | Op::RoundInt(..)
                | Op::Round(_)
                | Op::Sign(_)
                | Op::Hull(..)
                | Op::Intersect(..)
                | Op::Mid(_)
                | Op::MeanValue(..)
                | Op::Face(..)
                | Op::Descent(..)
                | Op::Pow(..)
                | Op::CancelMinus(..)
                | Op::Rev(..)
                | Op::Rev2(
                    Rev2Fn::Mul
                        | Rev2Fn::Pow1
                        | Rev2Fn::Pow2
                        | Rev2Fn::MulPair2
                        | Rev2Fn::Atan2Y
                        | Rev2Fn::Atan2X,
                    ..
                )
        )
}

/// An operation's own decoration on its boxes.
enum Local {
    /// Defined and continuous everywhere: `com` where the result is bounded, else `dac`.
    Continuous,
    /// Continuous on its domain; the boolean says the boxes lie in it (else `trv`).
    Defined(Value),
    /// This decoration code.
    Explicit(Value),
}

/// A node's decoration, not yet computed: the weakest of the decoration codes `codes` and of
/// `com` where every boolean of `bounded` holds (`dac` where one does not). Most operations
/// only add their result's boundedness and pass their arguments' decorations on, so the
/// program computes a decoration's minimum once, where one is needed (an output, a derived
/// function's witness), from the sets instead of a `min` and a `select` at every node: two
/// comparisons a node on the GPU instead of about eight (`docs/decorations.md`, cost).
#[derive(Clone, Debug)]
struct Lazy {
    /// Decoration codes (sorted, no repeats).
    codes: Vec<Value>,
    /// Booleans that must all hold for `com` (sorted, no repeats).
    bounded: Vec<Value>,
    /// Whether the node's result is bounded only where every flag of `bounded` holds, so that
    /// a user whose result is unbounded wherever this one is (`x + 1`, [`unbounded_passes_on`])
    /// needs only its own flag: a sum of squares checks its sum, not every term.
    tight: bool,
}

impl Default for Lazy {
    fn default() -> Lazy {
        Lazy::new(Vec::new(), Vec::new())
    }
}

impl Lazy {
    /// Codes and flags of one node: its flags are its own result's (`tight`).
    fn new(mut codes: Vec<Value>, mut bounded: Vec<Value>) -> Lazy {
        codes.sort();
        codes.dedup();
        bounded.sort();
        bounded.dedup();
        Lazy {
            codes,
            bounded,
            tight: true,
        }
    }
}

/// Whether every value of `op` lies in a bounded range (sin, atan, tanh, erf, atan2, ...), so
/// that its nonempty results are bounded.
fn bounded_range(op: Op) -> bool {
    let finite = |l: crate::point::Limit| match l {
        crate::point::Limit::Num(x) => x.is_finite(),
        crate::point::Limit::HalfPis(_) => true,
    };
    match op {
        Op::Elem(f, _) => finite(f.row().range.lo) && finite(f.row().range.hi),
        Op::Elem2(BinaryFn::Atan2, ..) => true,
        _ => false,
    }
}

/// Per argument of `op`: whether `op`'s result is unbounded wherever that argument is (and
/// nonempty), so that the result's boundedness implies the argument's. True for `-x`, `x + y`,
/// `x - y`, `sqr`, `abs`, `x^n` (n >= 1), odd roots, sinh, asinh, cbrt, and for the variable
/// factor of a product or the dividend of a quotient by a constant without 0 (`5 * x`,
/// `x / 2`). Never for min, max, fma or a product of two variables (`[0, 0] * [1, inf]` is
/// `[0, 0]`).
fn unbounded_passes_on(g: &Graph, op: Op) -> Vec<bool> {
    let nonzero_constant = |id: crate::ir::NodeId| match g.op(id) {
        Op::Const(c) => !c.is_empty() && (c.lo > 0.0 || c.hi < 0.0),
        _ => false,
    };
    match op {
        Op::Neg(_) | Op::Sqr(_) | Op::Abs(_) => vec![true],
        Op::Add(..) | Op::Sub(..) => vec![true, true],
        Op::Pown(_, n) => vec![n >= 1],
        Op::Rootn(_, n) => vec![n >= 1 && n % 2 != 0],
        Op::Elem(UnaryFn::Sinh | UnaryFn::Asinh | UnaryFn::Cbrt, _) => vec![true],
        Op::Mul(a, b) => vec![nonzero_constant(b), nonzero_constant(a)],
        Op::Div(_, b) => vec![nonzero_constant(b), false],
        _ => vec![false; op.args().len()],
    }
}

/// Sets larger than this are folded into one value (one `min` chain, one `and` chain), so that
/// a large expression's sets stay small.
const LAZY_LIMIT: usize = 16;

/// Constant folding for decorated graphs: [`super::fold`], but only where the folded constant's
/// own decoration (`newDec` of its value) is the one the operation gives on its constant
/// arguments (themselves decorated `newDec`). Elsewhere the node stays an operation, so that a
/// decoration is never lost by folding: `floor(2)` is `[2, 2]_dac` (floor jumps at 2) and
/// `1 / [0, 1]` is `[1, inf]_trv`, where the constants `[2, 2]` and `[1, inf]` would say `com`
/// and `dac`.
pub fn fold_decorated(op: &Op, args: &[Interval]) -> Option<Interval> {
    let (mut l, ivs, out) = super::lower_on_constants(op, args)?;
    let mut d = l.local_decoration(*op, &ivs, out);
    for (k, c) in args.iter().enumerate() {
        if !counts_argument(*op, k) {
            continue;
        }
        let a = l.decoration(Decoration::of(*c));
        d = l.b.min(d, a);
    }
    let program = l.b.finish(vec![(out.lo, out.hi), (d, d)]);
    let res = crate::scalar::interp::eval(&program, &[]).ok()?;
    let value = Interval::from_bounds(res[0].0, res[0].1);
    (res[1].0 == f64::from(Decoration::of(value).code())).then_some(value)
}

impl Lowering {
    /// The bounds of an output decorated `d`: NaI (`ill`, from an `ill` input) has no values,
    /// so its bounds are those of the empty set.
    fn nai_empty(&mut self, v: Iv, d: Value) -> (Value, Value) {
        let ill = self.decoration(Decoration::Ill);
        let nai = self.b.cmp(Cmp::Eq, d, ill);
        let nan = self.b.nan();
        (self.b.select(nai, nan, v.lo), self.b.select(nai, nan, v.hi))
    }

    /// The code an operation's rule adds (its boundedness test is [`tests_bound`]'s): none
    /// where it is continuous everywhere, trv where it may be undefined, its code where the
    /// rule gives one outright (`com` adds nothing: it is the weakest-of's identity).
    fn rule_code(&mut self, rule: Local) -> Option<Value> {
        match rule {
            Local::Continuous => None,
            Local::Defined(inside) => {
                let com = self.decoration(Decoration::Com);
                let code = self.defined_then(inside, com);
                // Defined wherever the analysis says (exp's domain is all reals): nothing.
                (self.b.as_const(code) != Some(f64::from(Decoration::Com.code()))).then_some(code)
            }
            Local::Explicit(code)
                if self.b.as_const(code) == Some(f64::from(Decoration::Com.code())) =>
            {
                None
            }
            Local::Explicit(code) => Some(code),
        }
    }

    /// A variable's code: trv where its box is empty, else the one given (input `input`) with
    /// [`DecorationInputs::Given`], else com (its boundedness is its test). `None` (com) from
    /// the bounds where an empty box empties every output it reaches (`empties_reach`): the
    /// output's own cap (trv for an empty result, [`Lowering::output`]) then says it, and the
    /// program saves a test and a minimum per variable.
    fn var_code(
        &mut self,
        v: Iv,
        inputs: DecorationInputs,
        input: u32,
        empties_reach: bool,
    ) -> Option<Value> {
        if inputs == DecorationInputs::FromBounds && empties_reach {
            return None;
        }
        let empty = self.b.is_nan(v.lo);
        let trv = self.decoration(Decoration::Trv);
        let com = self.decoration(Decoration::Com);
        let code = self.b.select(empty, trv, com);
        Some(match inputs {
            DecorationInputs::Given => {
                let given = self.b.input(input, Bound::Lo);
                self.b.min(code, given)
            }
            DecorationInputs::FromBounds => code,
        })
    }

    /// A constant's code: `newDec` of its value in the program's precision (`None`: com).
    fn const_code(&mut self, c: Interval) -> Option<Value> {
        let c = match self.b.precision() {
            Precision::F64 => c,
            Precision::F32 => c.to_f32_enclosure(),
        };
        match Decoration::of(c) {
            Decoration::Com => None,
            d => Some(self.decoration(d)),
        }
    }

    /// A decorated literal's code: the one written, lowered to what its value in the program's
    /// precision may carry (`[1, 1e39]_com` is dac in f32, where 1e39 is past the floats).
    fn literal_code(&mut self, c: Interval, d: Decoration) -> Value {
        let c = match self.b.precision() {
            Precision::F64 => c,
            Precision::F32 => c.to_f32_enclosure(),
        };
        self.decoration(d.min(Decoration::of(c)))
    }

    /// An output's bounds and decoration code from its value `v` and pending decoration. An
    /// empty result carries at most trv (IEEE 1788 §8.4): every rule gives that already (no
    /// operation empties a box it is defined on, an empty input is trv); this states it. Where
    /// the program `may_be_nai` (given decorations, or a `[nai]` literal), an `ill` output has
    /// the empty set's bounds.
    fn output(&mut self, v: Iv, d: &Lazy, may_be_nai: bool) -> ((Value, Value), Value) {
        let d = self.materialize(d);
        let empty = self.b.is_nan(v.lo);
        let trv = self.decoration(Decoration::Trv);
        // Without ill (no given decorations, no [nai] literal) every code is trv or stronger.
        let capped = if may_be_nai { self.b.min(d, trv) } else { trv };
        let d = self.b.select(empty, capped, d);
        let value = if may_be_nai {
            self.nai_empty(v, d)
        } else {
            (v.lo, v.hi)
        };
        (value, d)
    }

    /// The union of two pending decorations, folding a set that grows past [`LAZY_LIMIT`].
    fn union(&mut self, a: &Lazy, b: &Lazy) -> Lazy {
        let mut d = Lazy::new(
            a.codes.iter().chain(&b.codes).copied().collect(),
            a.bounded.iter().chain(&b.bounded).copied().collect(),
        );
        d.tight = a.tight && b.tight;
        if d.codes.len() > LAZY_LIMIT {
            let m = self.min_of(&d.codes);
            d.codes = vec![m];
        }
        if d.bounded.len() > LAZY_LIMIT {
            let all = self.all_of(&d.bounded);
            d.bounded = vec![all];
        }
        d
    }

    fn min_of(&mut self, codes: &[Value]) -> Value {
        let mut m = codes[0];
        for &c in &codes[1..] {
            m = self.b.min(m, c);
        }
        m
    }

    fn all_of(&mut self, flags: &[Value]) -> Value {
        let mut all = flags[0];
        for &f in &flags[1..] {
            all = self.b.and(all, f);
        }
        all
    }

    /// The decoration's code.
    fn materialize(&mut self, d: &Lazy) -> Value {
        let com = self.decoration(Decoration::Com);
        let mut code = if d.bounded.is_empty() {
            com
        } else {
            let all = self.all_of(&d.bounded);
            let dac = self.decoration(Decoration::Dac);
            self.b.select(all, com, dac)
        };
        if !d.codes.is_empty() {
            let m = self.min_of(&d.codes);
            code = self.b.min(code, m);
        }
        code
    }

    /// A decoration's code as a program constant.
    fn decoration(&mut self, d: Decoration) -> Value {
        self.b.constant(f64::from(d.code()))
    }

    /// `d` where `defined` holds, else `trv`.
    fn defined_then(&mut self, defined: Value, d: Value) -> Value {
        let trv = self.decoration(Decoration::Trv);
        self.b.select(defined, d, trv)
    }

    /// Boolean: the interval holds 0 (false when it is empty).
    fn holds_zero(&mut self, a: Iv) -> Value {
        let z = self.b.zero();
        let lo = self.b.cmp(Cmp::Le, a.lo, z);
        let hi = self.b.cmp(Cmp::Ge, a.hi, z);
        self.b.and(lo, hi)
    }

    /// The operation's own decoration on its arguments' boxes `a`, given its result `r` (the
    /// node's decoration is the minimum of this and the arguments').
    fn local_decoration(&mut self, op: Op, a: &[Iv], r: Iv) -> Value {
        let rule = self.local_rule(op, a, r);
        let code = self.rule_code(rule);
        let flag = tests_bound(op).then(|| self.bounded(r));
        self.materialize(&Lazy::new(
            code.into_iter().collect(),
            flag.into_iter().collect(),
        ))
    }

    /// The operation's own decoration as a [`Local`] rule.
    fn local_rule(&mut self, op: Op, a: &[Iv], r: Iv) -> Local {
        match op {
            Op::Neg(_)
            | Op::Add(..)
            | Op::Sub(..)
            | Op::Mul(..)
            | Op::Fma(..)
            | Op::Sqr(_)
            | Op::Abs(_)
            | Op::Min(..)
            | Op::Max(..)
            | Op::Elem2(BinaryFn::Hypot, ..) => Local::Continuous,
            Op::Pown(_, n) if n >= 0 => Local::Continuous,
            // x^-n = 1 / x^n: defined off 0.
            Op::Pown(..) => {
                let pole = self.holds_zero(a[0]);
                let defined = self.b.not(pole);
                Local::Defined(defined)
            }
            Op::Div(..) => {
                let pole = self.holds_zero(a[1]);
                let defined = self.b.not(pole);
                Local::Defined(defined)
            }
            Op::Sqrt(_) => self.closed_from_zero(a[0]),
            Op::Rootn(_, n) if n > 0 && n % 2 == 0 => self.closed_from_zero(a[0]),
            Op::Rootn(_, n) if n > 0 => Local::Continuous,
            // x^(-1/n): defined on x > 0 for even n, off 0 for odd n.
            Op::Rootn(_, n) => {
                let defined = if n % 2 == 0 {
                    let z = self.b.zero();
                    self.b.cmp(Cmp::Gt, a[0].lo, z)
                } else {
                    let pole = self.holds_zero(a[0]);
                    self.b.not(pole)
                };
                Local::Defined(defined)
            }
            // Defined off its poles, continuous on its domain: an interval holds a pole exactly
            // where the lowering's result is unbounded (tan is bounded near a pole's nearest
            // floats, ±1.6e16 in f64), and the lowering's result is [entire] wherever it may
            // hold one.
            Op::Elem(UnaryFn::Tan, _) => {
                let bounded = self.bounded(r);
                let com = self.decoration(Decoration::Com);
                Local::Explicit(self.defined_then(bounded, com))
            }
            Op::Elem(f, _) => {
                let dom = f.row().domain;
                let mut inside = self.b.bool(true);
                if dom.lo > f64::NEG_INFINITY {
                    let end = self.b.constant(dom.lo);
                    let c = if dom.lo_open { Cmp::Gt } else { Cmp::Ge };
                    let ok = self.b.cmp(c, a[0].lo, end);
                    inside = self.b.and(inside, ok);
                }
                if dom.hi < f64::INFINITY {
                    let end = self.b.constant(dom.hi);
                    let c = if dom.hi_open { Cmp::Lt } else { Cmp::Le };
                    let ok = self.b.cmp(c, a[0].hi, end);
                    inside = self.b.and(inside, ok);
                }
                Local::Defined(inside)
            }
            // x^y: defined for x > 0, and at x = 0 for y > 0; continuous on that domain.
            Op::Elem2(BinaryFn::Pow, ..) => {
                let (x, y) = (a[0], a[1]);
                let z = self.b.zero();
                let positive = self.b.cmp(Cmp::Gt, x.lo, z);
                let nonneg = self.b.cmp(Cmp::Ge, x.lo, z);
                let y_positive = self.b.cmp(Cmp::Gt, y.lo, z);
                let at_zero = self.b.and(nonneg, y_positive);
                let defined = self.b.or(positive, at_zero);
                Local::Defined(defined)
            }
            Op::Elem2(BinaryFn::Atan2, ..) => Local::Explicit(self.atan2_decoration(a[0], a[1])),
            // Folded only (whole graphs take the witness's decoration, `lower_decorated`).
            Op::Decorated(..) => Local::Continuous,
            Op::RoundInt(k, _) => {
                let x = a[0];
                let jump_at = |l: &mut Self, k: RoundInt, v: Value| {
                    let i = l.b.round_int(k, v);
                    l.b.cmp(Cmp::Eq, i, v)
                };
                let jumps = match k {
                    // floor jumps at every integer; where it is constant on x, only x.lo can
                    // be one. ceil likewise at x.hi.
                    RoundInt::Floor => jump_at(self, RoundInt::Floor, x.lo),
                    RoundInt::Ceil => jump_at(self, RoundInt::Ceil, x.hi),
                    // trunc jumps at every integer but 0 (it is 0 on (-1, 1)).
                    RoundInt::Trunc => {
                        let z = self.b.zero();
                        let lo_int = jump_at(self, RoundInt::Trunc, x.lo);
                        let lo_nz = self.b.cmp(Cmp::Gt, x.lo, z);
                        let lo = self.b.and(lo_int, lo_nz);
                        let hi_int = jump_at(self, RoundInt::Trunc, x.hi);
                        let hi_nz = self.b.cmp(Cmp::Lt, x.hi, z);
                        let hi = self.b.and(hi_int, hi_nz);
                        self.b.or(lo, hi)
                    }
                    RoundInt::Even => self.half_integer_end(x),
                };
                Local::Explicit(self.piecewise_constant(r, jumps))
            }
            Op::Round(_) => {
                let jumps = self.half_integer_end(a[0]);
                Local::Explicit(self.piecewise_constant(r, jumps))
            }
            Op::Sign(_) => {
                let jumps = self.holds_zero(a[0]);
                Local::Explicit(self.piecewise_constant(r, jumps))
            }
            // Set operations (IEEE 1788 §11.7.1: decorated intersection and convexHull give
            // trv), and the forms the derivative passes make, which user expressions never hold.
            Op::Hull(..)
            | Op::Intersect(..)
            | Op::Mid(_)
            | Op::MeanValue(..)
            | Op::Face(..)
            | Op::Descent(..)
            | Op::Var(_)
            | Op::Const(_)
            | Op::DecoratedConst(..)
            | Op::Pow(..)
            | Op::CancelMinus(..)
            // A reverse operation gives a set, decorated trv (as the ITF1788 vectors say)...
            | Op::Rev(..)
            | Op::Rev2(
                Rev2Fn::Mul
                | Rev2Fn::Pow1
                | Rev2Fn::Pow2
                | Rev2Fn::MulPair2
                | Rev2Fn::Atan2Y
                | Rev2Fn::Atan2X,
                ..,
            ) => {
                Local::Explicit(self.decoration(Decoration::Trv))
            }
            // ... but mulRevToPair's first interval where 0 is not in b is the quotient c / b
            // (IEEE 1788 §10.5.5 and the ITF1788 vectors): decorated as the division is, from
            // b and c only (its x, [entire], is not an argument of the function:
            // [`counts_argument`]). Where b holds 0 it is a set again: trv.
            Op::Rev2(Rev2Fn::MulPair1, ..) => {
                let pole = self.holds_zero(a[0]);
                let defined = self.b.not(pole);
                Local::Defined(defined)
            }
            // A number computed from the argument's enclosure: a constant on the box, `com`
            // where it is finite (its boundedness test), and no stronger than the argument's.
            Op::Numeric(..) => Local::Continuous,
        }
    }

    /// Defined on `x >= 0` (sqrt, even roots), continuous there.
    fn closed_from_zero(&mut self, x: Iv) -> Local {
        let z = self.b.zero();
        Local::Defined(self.b.cmp(Cmp::Ge, x.lo, z))
    }

    /// A function defined everywhere and constant between jumps (floor, sign, ...): `def`
    /// where it takes more than one value on the box, `dac` where it takes one (its
    /// restriction is continuous) but the box holds a jump (`jumps`), else `com`.
    fn piecewise_constant(&mut self, r: Iv, jumps: Value) -> Value {
        let one_value = self.b.cmp(Cmp::Eq, r.lo, r.hi);
        let com = self.decoration(Decoration::Com);
        let dac = self.decoration(Decoration::Dac);
        let def = self.decoration(Decoration::Def);
        let d = self.b.select(jumps, dac, com);
        self.b.select(one_value, d, def)
    }

    /// Boolean: an end of `x` is a half-integer (where the roundings to nearest jump).
    /// `v - trunc(v)` is exact, so the test is too.
    fn half_integer_end(&mut self, x: Iv) -> Value {
        let half = self.b.constant(0.5);
        let mut any = self.b.bool(false);
        for v in [x.lo, x.hi] {
            let t = self.b.round_int(RoundInt::Trunc, v);
            let f = self.b.sub(v, t, crate::scalar::Round::Nearest);
            let f = self.b.abs(f);
            let h = self.b.cmp(Cmp::Eq, f, half);
            any = self.b.or(any, h);
        }
        any
    }

    /// atan2(y, x): undefined at the origin; continuous elsewhere except across its cut, the
    /// negative x axis, where it jumps from pi (on it, and above) to -pi (below). A box that
    /// meets the cut is `def` where it also holds points below it, `dac` where it only touches
    /// it from above (the restriction is continuous, atan2 itself is not).
    fn atan2_decoration(&mut self, y: Iv, x: Iv) -> Value {
        let z = self.b.zero();
        let y0 = self.holds_zero(y);
        let x0 = self.holds_zero(x);
        let origin = self.b.and(y0, x0);
        let left = self.b.cmp(Cmp::Lt, x.lo, z);
        let on_cut = self.b.and(left, y0);
        let below = self.b.cmp(Cmp::Lt, y.lo, z);
        let com = self.decoration(Decoration::Com);
        let dac = self.decoration(Decoration::Dac);
        let def = self.decoration(Decoration::Def);
        let cut = self.b.select(below, def, dac);
        let d = self.b.select(on_cut, cut, com);
        let defined = self.b.not(origin);
        self.defined_then(defined, d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::build::build_decorated;
    use crate::syntax::parser::parse;

    /// mulRevToPair's first interval is decorated as the quotient where b does not hold 0,
    /// from b and c only (not its implied x = [entire], which is dac), as one output, as the
    /// first of two, and folded on constants; the second interval and a b holding 0 give trv.
    #[test]
    fn mul_rev_to_pair_is_decorated_as_the_quotient() {
        use Decoration::{Com, Dac, Trv};
        let code = |d: Decoration| f64::from(d.code());
        let iv = Interval::from_bounds;
        let c = "[-2.1, -0.4]";
        for (b, dec, want) in [
            (iv(-2.0, -0.1), Com, Com),
            (iv(f64::NEG_INFINITY, -0.1), Com, Dac),
            (iv(0.01, 1.1), Dac, Dac),
            (iv(-2.0, 1.1), Com, Trv),
        ] {
            let one = format!("mulRevToPair1(x, {c})");
            assert_eq!(eval1(&one, b, dec).1, code(want), "{one} on {b:?}");
            let src = format!("mulRevToPair1(x, {c}), mulRevToPair2(x, {c})");
            let g = build_decorated(&parse(&src).unwrap(), Some(fold_decorated)).unwrap();
            let p = lower_decorated(&g, Precision::F64, DecorationInputs::Given).unwrap();
            let d = f64::from(dec.code());
            let out = crate::scalar::interp::eval(&p, &[(b.lo, b.hi), (d, d)]).unwrap();
            assert_eq!(
                (out[2].0, out[3].0),
                (code(want), code(Trv)),
                "{src} on {b:?}"
            );
        }
        let folded = eval1(
            "mulRevToPair1([-2, -0.1], [-2.1, -0.4])",
            Interval::EMPTY,
            Com,
        );
        assert_eq!(folded.1, code(Com));
    }

    /// Decorated result of a one-variable expression on one decorated box, by the reference
    /// interpreter.
    fn eval1(src: &str, x: Interval, dec: Decoration) -> (Interval, f64) {
        let g = build_decorated(&parse(src).unwrap(), Some(fold_decorated)).unwrap();
        let p = lower_decorated(&g, Precision::F64, DecorationInputs::Given).unwrap();
        let inputs: Vec<(f64, f64)> = if g.vars.is_empty() {
            vec![]
        } else {
            let d = f64::from(dec.code());
            vec![(x.lo, x.hi), (d, d)]
        };
        let out = crate::scalar::interp::eval(&p, &inputs).unwrap();
        (Interval::from_bounds(out[0].0, out[0].1), out[1].0)
    }

    fn code(d: Decoration) -> f64 {
        f64::from(d.code())
    }

    #[test]
    fn folding_keeps_what_the_operation_decides() {
        use Decoration::*;
        // Constant expressions whose decoration is not their value's newDec stay operations.
        let any = Interval::EMPTY;
        assert_eq!(eval1("floor(2)", any, Com).1, code(Dac));
        assert_eq!(eval1("floor(2.5)", any, Com).1, code(Com));
        assert_eq!(eval1("sign(0)", any, Com).1, code(Dac));
        assert_eq!(eval1("1 / [0, 1]", any, Com).1, code(Trv));
        assert_eq!(eval1("sqrt([-1, 4])", any, Com).1, code(Trv));
        assert_eq!(
            eval1("sqrt([0, 4])", any, Com),
            (Interval::new(0.0, 2.0).unwrap(), code(Com))
        );
    }

    #[test]
    fn derived_functions_take_their_witness_decoration_and_keep_their_values() {
        use Decoration::*;
        let iv = |lo: f64, hi: f64| Interval::new(lo, hi).unwrap();
        let cases = [
            ("sec(x)", iv(0.0, 1.0), Com),
            ("sec(x)", iv(1.0, 2.0), Trv), // pi/2
            ("csc(x)", iv(-1.0, 1.0), Trv),
            ("cot(x)", iv(1.0, 2.0), Com), // cot(pi/2) = 0: defined
            ("cot(x)", iv(3.0, 3.5), Trv), // pi
            ("acot(x)", iv(1.0, 2.0), Com),
            ("acot(x)", iv(0.0, 1.0), Dac), // acot(0) = pi/2 is the limit from the right
            ("acot(x)", iv(-1.0, 0.0), Def), // and not from the left
            ("sech(x)", iv(-1e300, 1e300), Com),
            ("csch(x)", iv(-1.0, 1.0), Trv),
            ("coth(x)", iv(1.0, 2.0), Com),
            ("acoth(x)", iv(1.0, 2.0), Trv), // acoth(1) is undefined
            ("acoth(x)", iv(-3.0, -2.0), Com),
            ("asech(x)", iv(0.0, 1.0), Trv),
            ("asech(x)", iv(0.5, 1.0), Com),
            ("acsch(x)", iv(0.0, 1.0), Trv),
            ("acsch(x)", iv(1.0, 2.0), Com),
        ];
        for (src, x, want) in cases {
            let (value, dec) = eval1(src, x, Com);
            assert_eq!(dec, code(want), "{src} on {x}");
            let g =
                crate::ir::build::build(&parse(src).unwrap(), Some(super::super::fold)).unwrap();
            let p = super::super::lower(&g, Precision::F64).unwrap();
            let plain = crate::scalar::interp::eval(&p, &[(x.lo, x.hi)]).unwrap()[0];
            assert_eq!(
                (value.lo.to_bits(), value.hi.to_bits()),
                (plain.0.to_bits(), plain.1.to_bits()),
                "{src} on {x}: the decorated program's value differs"
            );
        }
    }

    #[test]
    fn a_decoration_is_the_weakest_along_every_path() {
        use Decoration::*;
        let iv = |lo: f64, hi: f64| Interval::new(lo, hi).unwrap();
        let cases = [
            // exp overflows on the way: its result is unbounded, so dac, though atan's is not.
            ("atan(exp(x))", iv(1000.0, 1001.0), Dac),
            ("atan(exp(x))", iv(0.0, 1.0), Com),
            ("sqrt(x - 1) * exp(x)", iv(0.0, 2.0), Trv),
            ("floor(x) + sqrt(x)", iv(1.5, 2.5), Def),
            ("floor(x) + sqrt(x)", iv(1.2, 1.7), Com),
            ("sign(x) * 0 + x", iv(0.0, 1.0), Def),
            ("sign(x) * 0 + x", iv(0.0, 0.0), Dac),
        ];
        for (src, x, want) in cases {
            assert_eq!(eval1(src, x, Com).1, code(want), "{src} on {x}");
        }
        // Each output has its own: exp's overflow does not reach atan(x).
        let g = build_decorated(&parse("exp(x), atan(x)").unwrap(), Some(fold_decorated)).unwrap();
        let p = lower_decorated(&g, Precision::F64, DecorationInputs::FromBounds).unwrap();
        let out = crate::scalar::interp::eval(&p, &[(1000.0, 1001.0)]).unwrap();
        assert_eq!((out[2].0, out[3].0), (code(Dac), code(Com)));
    }

    /// The two ways of computing decorations agree: one output (a running code and flag) and
    /// several (pending sets per node), on compositions over boxes of every kind.
    #[test]
    fn one_output_and_several_give_the_same_decorations() {
        let sources = [
            "atan(exp(x)) + sqrt(y)",
            "sec(x) * y + floor(y)",
            "x^4 - 5*x^2 + y^4 - 5*y^2 + 11.8",
            "log(x + y) / (x - 1)",
            "acot(x) + sqr(y) * 1e300",
            "tan(x) - sign(y) + abs(x*y)",
            "hull(x, y) + 1",
            "pow(x, y) + atan2(y, x)",
            "sinh(x) * 2 + cbrt(y) - 3",
            "inf(x) + y",
            "cancelMinus(x, y) * 2",
        ];
        let ends = [
            f64::NEG_INFINITY,
            -1e300,
            -2.0,
            -1.0,
            -0.5,
            -0.0,
            0.0,
            5e-324,
            0.5,
            1.0,
            1.5,
            2.0,
            700.0,
            1e300,
            f64::MAX,
            f64::INFINITY,
        ];
        let mut boxes = vec![(f64::NAN, f64::NAN)];
        for &a in &ends {
            for &b in &ends {
                if a <= b && a < f64::INFINITY && b > f64::NEG_INFINITY {
                    boxes.push((a, b));
                }
            }
        }
        for src in sources {
            let graph = |t: &str| {
                let g = build_decorated(&parse(t).unwrap(), Some(fold_decorated)).unwrap();
                crate::rewrite::run_all(&g)
            };
            let one = graph(src);
            let two = graph(&format!("let f = {src}; f, f + 0"));
            for p in [Precision::F64, Precision::F32] {
                let p1 = lower_decorated(&one, p, DecorationInputs::FromBounds).unwrap();
                let p2 = lower_decorated(&two, p, DecorationInputs::FromBounds).unwrap();
                // And the inputs decorated as given, with each box's newDec: the same.
                let given = lower_decorated(&one, p, DecorationInputs::Given).unwrap();
                let new_dec = |b: (f64, f64)| {
                    let iv = Interval::from_bounds(b.0, b.1);
                    let d = f64::from(Decoration::of(iv).code());
                    (d, d)
                };
                // A box as the evaluator gives it to a program of precision p.
                let in_p = |b: (f64, f64)| {
                    let iv = Interval::from_bounds(b.0, b.1);
                    let iv = if p == Precision::F32 {
                        iv.to_f32_enclosure()
                    } else {
                        iv
                    };
                    if iv.is_empty() {
                        (f64::NAN, f64::NAN)
                    } else {
                        (iv.lo, iv.hi)
                    }
                };
                for &x in &boxes {
                    for &y in &boxes {
                        let (x, y) = (in_p(x), in_p(y));
                        let inputs = [x, y];
                        let a = crate::scalar::interp::eval(&p1, &inputs).unwrap();
                        let b = crate::scalar::interp::eval(&p2, &inputs).unwrap();
                        assert_eq!(a[1].0, b[2].0, "{src} on {x:?} x {y:?} ({p:?})");
                        let g =
                            crate::scalar::interp::eval(&given, &[x, y, new_dec(x), new_dec(y)])
                                .unwrap();
                        assert_eq!(
                            a[1].0, g[1].0,
                            "{src} on {x:?} x {y:?} ({p:?}): from the bounds, as given"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn variables_carry_at_most_what_their_box_may() {
        use Decoration::*;
        let x = Interval::new(1.0, 2.0).unwrap();
        assert_eq!(eval1("x", x, Def).1, code(Def));
        assert_eq!(eval1("x + 1", x, Com).1, code(Com));
        assert_eq!(eval1("x", Interval::ENTIRE, Com).1, code(Dac));
        assert_eq!(eval1("x", Interval::EMPTY, Com).1, code(Trv));
        assert_eq!(eval1("x", x, Ill).1, code(Ill));
        assert_eq!(eval1("sqrt(x - 1.5)", x, Com).1, code(Trv));
        assert_eq!(eval1("1 / (x - 3)", x, Com).1, code(Com));
    }

    /// A decorated literal starts its decoration where it is written, through folding: the
    /// constant expression around it stays an operation, and `[nai]` makes its users NaI
    /// with the empty set's bounds even where the variables' decorations come from their
    /// bounds.
    #[test]
    fn decorated_literals_keep_their_decoration() {
        use Decoration::*;
        let x = Interval::new(1.0, 2.0).unwrap();
        let iv = |lo: f64, hi: f64| Interval::new(lo, hi).unwrap();
        assert_eq!(eval1("x + [1, 2]_def", x, Com), (iv(2.0, 4.0), code(Def)));
        assert_eq!(eval1("[1, 2]_def + 1", x, Com), (iv(2.0, 3.0), code(Def)));
        assert_eq!(eval1("sqrt([4, 9]_dac) * x", x, Com).1, code(Dac));
        assert_eq!(eval1("x * [1, 2]_com", x, Def).1, code(Def));
        assert_eq!(eval1("[empty]_trv + 1", x, Com).1, code(Trv));
        let (v, d) = eval1("hull([nai], x)", x, Com);
        assert!(v.is_empty() && d == code(Ill), "{v} {d}");
        // From the bounds: the literal's NaI still empties the output.
        let g = build_decorated(&parse("hull(x, [nai])").unwrap(), Some(fold_decorated)).unwrap();
        let p = lower_decorated(&g, Precision::F64, DecorationInputs::FromBounds).unwrap();
        let out = crate::scalar::interp::eval(&p, &[(1.0, 2.0)]).unwrap();
        assert!(out[0].0.is_nan() && out[1].0 == code(Ill), "{out:?}");
        // In f32, a bound past the floats makes com dac, as for a variable's box.
        let g =
            build_decorated(&parse("[1, 1e39]_com + x").unwrap(), Some(fold_decorated)).unwrap();
        let p = lower_decorated(&g, Precision::F32, DecorationInputs::FromBounds).unwrap();
        let out = crate::scalar::interp::eval(&p, &[(1.0, 2.0)]).unwrap();
        assert_eq!(out[1].0, code(Dac));
    }
}
