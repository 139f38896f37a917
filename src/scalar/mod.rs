//! Scalar IR: the contract between the interval lowering and the backends.
//!
//! A [`Program`] is a straight-line SSA list of scalar instructions. Every float operation carries
//! its rounding direction; backends (the CPU evaluator, the PTX emitter) know nothing about
//! intervals. Values are either floats of the program's precision or booleans (predicates).
//!
//! Semantics every backend must reproduce bit for bit (the CPU-vs-GPU test checks it):
//! - `Add/Sub/Mul/Div/Fma/Sqrt` are IEEE 754 operations correctly rounded in the given direction,
//!   without flushing subnormals; an exact zero sum of operands of opposite sign is `-0` when
//!   rounding down and `+0` otherwise.
//! - `Min/Max` return the other operand when one is NaN (IEEE 754-2008 minNum/maxNum); between
//!   `-0` and `+0` they order `-0 < +0`.
//! - Comparisons are ordered: false when either operand is NaN.
//! - `Select(c, a, b)` is `a` when `c` holds, else `b`.
//!
//! The contract has three parts besides the types: a verifier ([`Program::verify`], typed
//! [`VerifyError`]) that the lowering runs on every program and every backend may rely on; a
//! reference interpreter ([`interp`]) that defines each instruction's result; and a text form
//! ([`text`]: `Display` prints it, `str::parse` reads it back), so that a `.sir` file can pin an
//! instruction's behaviour on every backend (`tests/sir/`).
//!
//! Interval bounds: an interval is a pair of values (lo, hi). The empty interval is (NaN, NaN);
//! inputs are validated on the host, so a NaN bound inside a kernel always means "empty".

pub mod interp;
pub mod text;
mod verify;

use std::collections::HashMap;
use std::fmt;
pub use text::ParseError;
pub use verify::VerifyError;

pub use crate::round::{Precision, Round};

/// Which bound of an interval input.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Bound {
    /// The lower bound.
    Lo,
    /// The upper bound.
    Hi,
}

/// An SSA value: the index of the instruction that defines it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Value(pub u32);

impl Value {
    /// The index of the defining instruction in [`Program::insts`].
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "%{}", self.0)
    }
}

/// Ordered comparison (false when an operand is NaN).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cmp {
    /// `a < b`
    Lt,
    /// `a <= b`
    Le,
    /// `a > b`
    Gt,
    /// `a >= b`
    Ge,
    /// `a == b` (`-0 == +0`)
    Eq,
}

impl Cmp {
    /// The mnemonic in the scalar IR text: `lt`, `le`, `gt`, `ge`, `eq`.
    pub fn name(self) -> &'static str {
        match self {
            Cmp::Lt => "lt",
            Cmp::Le => "le",
            Cmp::Gt => "gt",
            Cmp::Ge => "ge",
            Cmp::Eq => "eq",
        }
    }
}

pub use crate::point::{BinaryFn, PointFn, UnaryFn};

/// Rounding of a float to an integral value; exact, so every backend agrees bit for bit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RoundInt {
    /// Toward -infinity (`floor`, PTX `cvt.rmi`).
    Floor,
    /// Toward +infinity (`ceil`, PTX `cvt.rpi`).
    Ceil,
    /// Toward zero (`trunc`, PTX `cvt.rzi`).
    Trunc,
    /// To nearest, ties to even (`rint`, PTX `cvt.rni`).
    Even,
}

impl RoundInt {
    /// The function's name in expressions and the scalar IR text.
    pub fn name(self) -> &'static str {
        match self {
            RoundInt::Floor => "floor",
            RoundInt::Ceil => "ceil",
            RoundInt::Trunc => "trunc",
            RoundInt::Even => "rint",
        }
    }
}

/// One scalar instruction. Float-valued unless noted.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Inst {
    /// Bound `bound` of input variable number `var`.
    Input {
        /// The variable's number (index into [`Program::var_names`]).
        var: u32,
        /// Which of its bounds.
        bound: Bound,
    },
    /// A constant, exactly representable in the program's precision (stored widened to f64).
    Const(f64),
    /// `a + b`, rounded.
    Add(Value, Value, Round),
    /// `a - b`, rounded.
    Sub(Value, Value, Round),
    /// `a * b`, rounded.
    Mul(Value, Value, Round),
    /// `a / b`, rounded.
    Div(Value, Value, Round),
    /// `a * b + c` with one rounding.
    Fma(Value, Value, Value, Round),
    /// Square root, rounded.
    Sqrt(Value, Round),
    /// `-a` (exact).
    Neg(Value),
    /// `|a|` (exact).
    Abs(Value),
    /// minNum: the other operand when one is NaN; `-0 < +0`.
    Min(Value, Value),
    /// maxNum: the other operand when one is NaN; `-0 < +0`.
    Max(Value, Value),
    /// Boolean: ordered comparison.
    Compare(Cmp, Value, Value),
    /// Boolean: the value is NaN.
    IsNan(Value),
    /// Boolean constant.
    Bool(bool),
    /// Boolean and.
    And(Value, Value),
    /// Boolean or.
    Or(Value, Value),
    /// Boolean not.
    Not(Value),
    /// Float: `c ? a : b` where `c` is boolean.
    Select(Value, Value, Value),
    /// A rigorous bound of a unary point function at `a` (see [`Inst::Point2`]).
    Point1(UnaryFn, Value, Round),
    /// A rigorous bound of a point function at `(a, b)`: with `Down` a value at most f(a, b),
    /// with `Up` a value at least f(a, b), for every argument in the function's closed domain,
    /// where f takes its limit values at infinite arguments and at domain ends (log(0) = -inf,
    /// atan(inf) = pi/2). Outside the domain the result is unspecified: the lowering restricts
    /// arguments first. `Nearest` asks for the backend's best approximation, with no guarantee.
    /// Each backend meets this with its own library and error bound (CPU: correctly rounded, one
    /// step outward; GPU: the CUDA math library, padded by its documented error; both from the
    /// function's row in [`crate::point`]), so results differ between backends.
    Point2(BinaryFn, Value, Value, Round),
    /// Rounds to an integral value (exact).
    RoundInt(RoundInt, Value),
}

/// Type of a scalar value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Type {
    /// A float of the program's precision.
    Float,
    /// A predicate.
    Bool,
}

impl Inst {
    /// The type of the value the instruction defines.
    pub fn ty(&self) -> Type {
        match self {
            Inst::Compare(..)
            | Inst::IsNan(_)
            | Inst::Bool(_)
            | Inst::And(..)
            | Inst::Or(..)
            | Inst::Not(_) => Type::Bool,
            _ => Type::Float,
        }
    }

    /// The values this instruction reads, in order.
    pub fn operands(&self) -> Vec<Value> {
        match *self {
            Inst::Input { .. } | Inst::Const(_) | Inst::Bool(_) => vec![],
            Inst::Sqrt(a, _)
            | Inst::Neg(a)
            | Inst::Abs(a)
            | Inst::IsNan(a)
            | Inst::Not(a)
            | Inst::RoundInt(_, a) => vec![a],
            Inst::Point1(_, a, _) => vec![a],
            Inst::Point2(_, a, b, _) => vec![a, b],
            Inst::Add(a, b, _)
            | Inst::Sub(a, b, _)
            | Inst::Mul(a, b, _)
            | Inst::Div(a, b, _)
            | Inst::Min(a, b)
            | Inst::Max(a, b)
            | Inst::Compare(_, a, b)
            | Inst::And(a, b)
            | Inst::Or(a, b) => vec![a, b],
            Inst::Fma(a, b, c, _) | Inst::Select(a, b, c) => vec![a, b, c],
        }
    }
}

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

/// A complete scalar program: inputs are `n_vars` interval variables, each given by its lo and
/// hi bound; outputs are (lo, hi) value pairs.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    /// The precision every float value has.
    pub precision: Precision,
    /// The input variables' names, in input order.
    pub var_names: Vec<String>,
    /// The instructions; operands precede their users.
    pub insts: Vec<Inst>,
    /// The (lo, hi) values of each output.
    pub outputs: Vec<(Value, Value)>,
}

impl Program {
    /// Checks that the program is well formed: SSA order, operand types, variable numbers (see
    /// [`VerifyError`]). The lowering runs it on every program it returns; backends may assume it.
    pub fn verify(&self) -> Result<(), VerifyError> {
        verify::verify(self)
    }

    /// The number of input variables.
    pub fn n_vars(&self) -> usize {
        self.var_names.len()
    }

    /// Whether the program calls point functions, whose results differ between backends (every
    /// other instruction is exact or correctly rounded and agrees bit for bit).
    pub fn has_point_calls(&self) -> bool {
        self.insts
            .iter()
            .any(|i| matches!(i, Inst::Point1(..) | Inst::Point2(..)))
    }

    /// Number of float operations that round (add, sub, mul, div, fma, sqrt): the figure the
    /// benchmarks divide by.
    pub fn rounded_op_count(&self) -> usize {
        self.insts
            .iter()
            .filter(|i| {
                matches!(
                    i,
                    Inst::Add(..)
                        | Inst::Sub(..)
                        | Inst::Mul(..)
                        | Inst::Div(..)
                        | Inst::Fma(..)
                        | Inst::Sqrt(..)
                )
            })
            .count()
    }
}

impl fmt::Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "scalar program ({}, inputs: {})",
            self.precision,
            self.var_names.join(", ")
        )?;
        for (i, inst) in self.insts.iter().enumerate() {
            write!(f, "  %{i} = ")?;
            match *inst {
                Inst::Input { var, bound } => {
                    let b = if bound == Bound::Lo { "lo" } else { "hi" };
                    write!(f, "input {}.{b}", self.var_names[var as usize])?
                }
                Inst::Const(c) => write!(f, "const {}", crate::syntax::number::hexf64(c))?,
                Inst::Add(a, b, r) => write!(f, "add.{} {a}, {b}", r.suffix())?,
                Inst::Sub(a, b, r) => write!(f, "sub.{} {a}, {b}", r.suffix())?,
                Inst::Mul(a, b, r) => write!(f, "mul.{} {a}, {b}", r.suffix())?,
                Inst::Div(a, b, r) => write!(f, "div.{} {a}, {b}", r.suffix())?,
                Inst::Fma(a, b, c, r) => write!(f, "fma.{} {a}, {b}, {c}", r.suffix())?,
                Inst::Sqrt(a, r) => write!(f, "sqrt.{} {a}", r.suffix())?,
                Inst::Neg(a) => write!(f, "neg {a}")?,
                Inst::Abs(a) => write!(f, "abs {a}")?,
                Inst::Min(a, b) => write!(f, "min {a}, {b}")?,
                Inst::Max(a, b) => write!(f, "max {a}, {b}")?,
                Inst::Compare(c, a, b) => write!(f, "cmp.{} {a}, {b}", c.name())?,
                Inst::IsNan(a) => write!(f, "isnan {a}")?,
                Inst::Bool(b) => write!(f, "bool {b}")?,
                Inst::And(a, b) => write!(f, "and {a}, {b}")?,
                Inst::Or(a, b) => write!(f, "or {a}, {b}")?,
                Inst::Not(a) => write!(f, "not {a}")?,
                Inst::Select(c, a, b) => write!(f, "select {c}, {a}, {b}")?,
                Inst::Point1(p, a, r) => write!(f, "{}.{} {a}", p.name(), r.suffix())?,
                Inst::Point2(p, a, b, r) => write!(f, "{}.{} {a}, {b}", p.name(), r.suffix())?,
                Inst::RoundInt(k, a) => write!(f, "{} {a}", k.name())?,
            }
            writeln!(f)?;
        }
        for (k, (lo, hi)) in self.outputs.iter().enumerate() {
            writeln!(f, "  out{k} = [{lo}, {hi}]")?;
        }
        Ok(())
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
    pub fn inst(&self, v: Value) -> Inst {
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
    pub fn as_bool(&self, v: Value) -> Option<bool> {
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
    pub fn zero(&mut self) -> Value {
        self.constant(0.0)
    }

    /// A boolean constant; selects and boolean operations on it fold away.
    pub fn bool(&mut self, b: bool) -> Value {
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
    pub fn round_int(&mut self, k: RoundInt, a: Value) -> Value {
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
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_consing_merges_identical_instructions_only() {
        let mut b = Builder::new(Precision::F64, vec!["x".into(), "y".into()]);
        let x = b.input(0, Bound::Lo);
        let y = b.input(1, Bound::Lo);
        assert_eq!(b.input(0, Bound::Lo), x);
        assert_ne!(b.input(0, Bound::Hi), x);
        // Constants by bit pattern: -0 and +0 differ, a NaN equals itself.
        let zero = b.zero();
        assert_ne!(b.constant(-0.0), zero);
        assert_eq!(b.constant(0.0), zero);
        assert_eq!(b.nan(), b.nan());
        // Same operation, operands and rounding: one instruction; any field differing: two.
        let s = b.add(x, y, Round::Down);
        assert_eq!(b.add(x, y, Round::Down), s);
        assert_ne!(b.add(x, y, Round::Up), s);
        assert_ne!(b.add(y, x, Round::Down), s);
        assert_ne!(b.sub(x, y, Round::Down), s);
        assert_ne!(b.mul(x, y, Round::Down), s);
        let f = b.fma(x, y, s, Round::Up);
        assert_eq!(b.fma(x, y, s, Round::Up), f);
        assert_ne!(b.fma(x, s, y, Round::Up), f);
        let c = b.cmp(Cmp::Lt, x, y);
        assert_eq!(b.cmp(Cmp::Lt, x, y), c);
        assert_ne!(b.cmp(Cmp::Le, x, y), c);
        let e = b.point(UnaryFn::Exp, x, Round::Down);
        assert_eq!(b.point(UnaryFn::Exp, x, Round::Down), e);
        assert_ne!(b.point(UnaryFn::Log, x, Round::Down), e);
        assert_ne!(b.point(UnaryFn::Exp, x, Round::Up), e);
        let fl = b.round_int(RoundInt::Floor, x);
        assert_eq!(b.round_int(RoundInt::Floor, x), fl);
        assert_ne!(b.round_int(RoundInt::Ceil, x), fl);
    }
}
