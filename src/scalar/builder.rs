//! [`Builder`]: builds a [`Program`] with hash-consing of identical instructions and folding of
//! known predicates, so the selects the interval lowering decides statically vanish.

use super::*;
use std::collections::HashMap;

/// Hash-consing key of an instruction: structural equality, with constants compared by bit
/// pattern so that -0 and +0, and NaNs, are told apart (and a NaN constant equals itself). It
/// hashes the fields directly: formatting each instruction into a string made lowering a
/// 100-node expression cost 0.4 ms, most of a warm compile.
#[derive(Clone, Copy)]
struct InstKey(Inst);

impl PartialEq for InstKey {
    fn eq(&self, other: &Self) -> bool {
        match (self.0, other.0) {
            (Inst::Const(a), Inst::Const(b)) => a.to_bits() == b.to_bits(),
            // No other variant holds a float, so the derived equality is reflexive.
            (a, b) => a == b,
        }
    }
}

impl Eq for InstKey {}

impl std::hash::Hash for InstKey {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        std::mem::discriminant(&self.0).hash(h);
        match self.0 {
            Inst::Input { var, bound } => (var, bound).hash(h),
            Inst::Const(c) => c.to_bits().hash(h),
            Inst::Add(a, b, r) | Inst::Sub(a, b, r) | Inst::Mul(a, b, r) | Inst::Div(a, b, r) => {
                (a, b, r).hash(h)
            }
            Inst::Fma(a, b, c, r) => (a, b, c, r).hash(h),
            Inst::Sqrt(a, r) => (a, r).hash(h),
            Inst::Neg(a) | Inst::Abs(a) | Inst::IsNan(a) | Inst::Not(a) => a.hash(h),
            Inst::Min(a, b) | Inst::Max(a, b) | Inst::And(a, b) | Inst::Or(a, b) => (a, b).hash(h),
            Inst::Compare(c, a, b) => (c, a, b).hash(h),
            Inst::Bool(b) => b.hash(h),
            Inst::Select(c, a, b) => (c, a, b).hash(h),
            Inst::Point1(f, a, r) => (f, a, r).hash(h),
            Inst::Point2(f, a, b, r) => (f, a, b, r).hash(h),
            Inst::RoundInt(k, a) => (k, a).hash(h),
        }
    }
}

/// Builds a [`Program`] with hash-consing (identical instructions are emitted once) and folding of
/// boolean constants (a select on a known predicate is its chosen operand). The interval lowering
/// answers predicates it can decide statically with [`Builder::bool`], and the selects vanish.
pub struct Builder {
    precision: Precision,
    var_names: Vec<String>,
    insts: Vec<Inst>,
    seen: HashMap<InstKey, Value>,
}

impl Builder {
    /// An empty program over the given input variables.
    pub fn new(precision: Precision, var_names: Vec<String>) -> Self {
        Builder {
            precision,
            var_names,
            insts: Vec::new(),
            seen: HashMap::new(),
        }
    }

    /// The precision of the program being built.
    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// The instruction defining a value.
    pub(crate) fn inst(&self, v: Value) -> Inst {
        self.insts[v.index()]
    }

    /// The constant a value is, if it is one.
    pub fn as_const(&self, v: Value) -> Option<f64> {
        match self.inst(v) {
            Inst::Const(c) => Some(c),
            _ => None,
        }
    }

    /// The boolean constant a value is, if it is one.
    pub(crate) fn as_bool(&self, v: Value) -> Option<bool> {
        match self.inst(v) {
            Inst::Bool(b) => Some(b),
            _ => None,
        }
    }

    fn push(&mut self, inst: Inst) -> Value {
        let key = InstKey(inst);
        if let Some(&v) = self.seen.get(&key) {
            return v;
        }
        let v = Value(self.insts.len() as u32);
        self.insts.push(inst);
        self.seen.insert(key, v);
        v
    }

    /// One bound of input variable number `var`.
    pub fn input(&mut self, var: u32, bound: Bound) -> Value {
        self.push(Inst::Input { var, bound })
    }

    /// A float constant; it must be exactly representable in the program's precision.
    pub fn constant(&mut self, c: f64) -> Value {
        debug_assert!(
            self.precision == Precision::F64 || c.is_nan() || (c as f32) as f64 == c,
            "constant {c:e} is not an f32 value"
        );
        self.push(Inst::Const(c))
    }

    /// The NaN constant (a bound of the empty interval).
    pub fn nan(&mut self) -> Value {
        self.constant(f64::NAN)
    }

    /// The constant `+0`.
    pub(crate) fn zero(&mut self) -> Value {
        self.constant(0.0)
    }

    /// A boolean constant; selects and boolean operations on it fold away.
    pub(crate) fn bool(&mut self, b: bool) -> Value {
        self.push(Inst::Bool(b))
    }

    /// `a + b` rounded in direction `r`.
    pub fn add(&mut self, a: Value, b: Value, r: Round) -> Value {
        self.push(Inst::Add(a, b, r))
    }
    /// `a - b` rounded in direction `r`.
    pub fn sub(&mut self, a: Value, b: Value, r: Round) -> Value {
        self.push(Inst::Sub(a, b, r))
    }
    /// `a * b` rounded in direction `r`.
    pub fn mul(&mut self, a: Value, b: Value, r: Round) -> Value {
        self.push(Inst::Mul(a, b, r))
    }
    /// `a / b` rounded in direction `r`.
    pub fn div(&mut self, a: Value, b: Value, r: Round) -> Value {
        self.push(Inst::Div(a, b, r))
    }
    /// `a * b + c` with one rounding in direction `r`.
    pub fn fma(&mut self, a: Value, b: Value, c: Value, r: Round) -> Value {
        self.push(Inst::Fma(a, b, c, r))
    }
    /// Square root of `a` rounded in direction `r`.
    pub fn sqrt(&mut self, a: Value, r: Round) -> Value {
        self.push(Inst::Sqrt(a, r))
    }
    /// `-a`; a double negation or a constant folds.
    pub fn neg(&mut self, a: Value) -> Value {
        if let Inst::Neg(x) = self.inst(a) {
            return x;
        }
        if let Some(c) = self.as_const(a) {
            return self.constant(-c);
        }
        self.push(Inst::Neg(a))
    }
    /// `|a|`.
    pub fn abs(&mut self, a: Value) -> Value {
        self.push(Inst::Abs(a))
    }
    /// minNum of `a` and `b` (see [`Inst::Min`]).
    pub fn min(&mut self, a: Value, b: Value) -> Value {
        if a == b {
            return a;
        }
        self.push(Inst::Min(a, b))
    }
    /// maxNum of `a` and `b` (see [`Inst::Max`]).
    pub fn max(&mut self, a: Value, b: Value) -> Value {
        if a == b {
            return a;
        }
        self.push(Inst::Max(a, b))
    }
    /// Boolean: the ordered comparison `a c b`; folds when both are constants.
    pub fn cmp(&mut self, c: Cmp, a: Value, b: Value) -> Value {
        if let (Some(x), Some(y)) = (self.as_const(a), self.as_const(b)) {
            let r = match c {
                Cmp::Lt => x < y,
                Cmp::Le => x <= y,
                Cmp::Gt => x > y,
                Cmp::Ge => x >= y,
                Cmp::Eq => x == y,
            };
            return self.bool(r);
        }
        self.push(Inst::Compare(c, a, b))
    }
    /// Boolean: whether `a` is NaN (an empty interval's bound).
    pub fn is_nan(&mut self, a: Value) -> Value {
        if let Some(x) = self.as_const(a) {
            return self.bool(x.is_nan());
        }
        self.push(Inst::IsNan(a))
    }
    /// Boolean and, folding known operands.
    pub fn and(&mut self, a: Value, b: Value) -> Value {
        match (self.as_bool(a), self.as_bool(b)) {
            (Some(false), _) | (_, Some(false)) => self.bool(false),
            (Some(true), _) => b,
            (_, Some(true)) => a,
            _ if a == b => a,
            _ => self.push(Inst::And(a, b)),
        }
    }
    /// Boolean or, folding known operands.
    pub fn or(&mut self, a: Value, b: Value) -> Value {
        match (self.as_bool(a), self.as_bool(b)) {
            (Some(true), _) | (_, Some(true)) => self.bool(true),
            (Some(false), _) => b,
            (_, Some(false)) => a,
            _ if a == b => a,
            _ => self.push(Inst::Or(a, b)),
        }
    }
    /// Boolean not, folding constants and double negation.
    pub fn not(&mut self, a: Value) -> Value {
        if let Some(x) = self.as_bool(a) {
            return self.bool(!x);
        }
        if let Inst::Not(x) = self.inst(a) {
            return x;
        }
        self.push(Inst::Not(a))
    }
    /// A rigorous bound (`Down`/`Up`) of a unary point function.
    pub fn point(&mut self, f: UnaryFn, a: Value, r: Round) -> Value {
        self.push(Inst::Point1(f, a, r))
    }
    /// A rigorous bound (`Down`/`Up`) of a binary point function.
    pub fn point2(&mut self, f: BinaryFn, a: Value, b: Value, r: Round) -> Value {
        self.push(Inst::Point2(f, a, b, r))
    }
    /// `a` rounded to an integral value as `k` says (exact).
    pub(crate) fn round_int(&mut self, k: RoundInt, a: Value) -> Value {
        self.push(Inst::RoundInt(k, a))
    }
    /// `c ? a : b`; folds when `c` is a known boolean or `a == b`.
    pub fn select(&mut self, c: Value, a: Value, b: Value) -> Value {
        if a == b {
            return a;
        }
        match self.as_bool(c) {
            Some(true) => a,
            Some(false) => b,
            None => self.push(Inst::Select(c, a, b)),
        }
    }

    /// Finishes the program and removes instructions no output depends on.
    pub fn finish(self, outputs: Vec<(Value, Value)>) -> Program {
        let mut live = vec![false; self.insts.len()];
        let mut stack: Vec<Value> = outputs.iter().flat_map(|&(a, b)| [a, b]).collect();
        while let Some(v) = stack.pop() {
            if !live[v.index()] {
                live[v.index()] = true;
                stack.extend(self.insts[v.index()].operands());
            }
        }
        let mut renumber = vec![Value(u32::MAX); self.insts.len()];
        let mut insts = Vec::new();
        let map = |v: Value, renumber: &[Value]| renumber[v.index()];
        for (i, inst) in self.insts.iter().enumerate() {
            if !live[i] {
                continue;
            }
            renumber[i] = Value(insts.len() as u32);
            let r = &renumber;
            let m = |v| map(v, r);
            insts.push(match *inst {
                Inst::Add(a, b, d) => Inst::Add(m(a), m(b), d),
                Inst::Sub(a, b, d) => Inst::Sub(m(a), m(b), d),
                Inst::Mul(a, b, d) => Inst::Mul(m(a), m(b), d),
                Inst::Div(a, b, d) => Inst::Div(m(a), m(b), d),
                Inst::Fma(a, b, c, d) => Inst::Fma(m(a), m(b), m(c), d),
                Inst::Sqrt(a, d) => Inst::Sqrt(m(a), d),
                Inst::Neg(a) => Inst::Neg(m(a)),
                Inst::Abs(a) => Inst::Abs(m(a)),
                Inst::Min(a, b) => Inst::Min(m(a), m(b)),
                Inst::Max(a, b) => Inst::Max(m(a), m(b)),
                Inst::Compare(c, a, b) => Inst::Compare(c, m(a), m(b)),
                Inst::IsNan(a) => Inst::IsNan(m(a)),
                Inst::And(a, b) => Inst::And(m(a), m(b)),
                Inst::Or(a, b) => Inst::Or(m(a), m(b)),
                Inst::Not(a) => Inst::Not(m(a)),
                Inst::Select(c, a, b) => Inst::Select(m(c), m(a), m(b)),
                Inst::Point1(p, a, d) => Inst::Point1(p, m(a), d),
                Inst::Point2(p, a, b, d) => Inst::Point2(p, m(a), m(b), d),
                Inst::RoundInt(k, a) => Inst::RoundInt(k, m(a)),
                other @ (Inst::Input { .. } | Inst::Const(_) | Inst::Bool(_)) => other,
            });
        }
        let outputs = outputs
            .into_iter()
            .map(|(a, b)| (renumber[a.index()], renumber[b.index()]))
            .collect();
        Program {
            precision: self.precision,
            var_names: self.var_names,
            insts,
            outputs,
            code_outputs: 0,
        }
    }
}
