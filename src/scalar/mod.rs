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

mod builder;
pub mod bytecode;
pub(crate) mod emit;
pub mod interp;
pub mod split;
pub mod text;
mod verify;

pub use builder::Builder;
use std::fmt;
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
    pub(crate) fn ty(&self) -> Type {
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
    pub(crate) fn operands(&self) -> Vec<Value> {
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
    /// How many of the last outputs are *codes* (a decorated program's decorations): a point
    /// `(v, v)` holding a small integer. Every host interface gives them as pairs like any
    /// output; device memory holds one array per code instead of two
    /// ([`Program::output_arrays`]), since a decorated batch is memory-bound and its codes
    /// would otherwise be a fifth of what it writes.
    pub code_outputs: usize,
}

impl Program {
    /// Checks that the program is well formed: SSA order, operand types, variable numbers (see
    /// [`VerifyError`]). The lowering runs it on every program it returns; backends may assume it.
    pub fn verify(&self) -> Result<(), VerifyError> {
        verify::verify(self)
    }

    /// The same program bit for bit: what `==` would say if constants compared by their bits
    /// (`==` on floats makes a program with a NaN constant, which products have, unequal to
    /// itself, and a `-0` constant equal to a `+0`). For caches keyed by a program.
    pub fn same_bits(&self, other: &Program) -> bool {
        let same_inst = |a: &Inst, b: &Inst| match (a, b) {
            (Inst::Const(x), Inst::Const(y)) => x.to_bits() == y.to_bits(),
            _ => a == b,
        };
        self.precision == other.precision
            && self.var_names == other.var_names
            && self.outputs == other.outputs
            && self.code_outputs == other.code_outputs
            && self.insts.len() == other.insts.len()
            && self
                .insts
                .iter()
                .zip(&other.insts)
                .all(|(a, b)| same_inst(a, b))
    }

    /// The number of input variables.
    pub fn n_vars(&self) -> usize {
        self.var_names.len()
    }

    /// The values a kernel stores, one per output array of device memory: the lo and hi of
    /// each output, except that a code output ([`Program::code_outputs`]) has one array.
    /// Array `2j` and `2j + 1` belong to output j below the codes; code k (output
    /// `outputs.len() - code_outputs + k`) is array `2 * (outputs.len() - code_outputs) + k`.
    pub fn output_arrays(&self) -> Vec<Value> {
        let bounds = self.outputs.len() - self.code_outputs.min(self.outputs.len());
        let pairs = self.outputs[..bounds].iter().flat_map(|&(lo, hi)| [lo, hi]);
        pairs
            .chain(self.outputs[bounds..].iter().map(|&(code, _)| code))
            .collect()
    }

    /// The number of output arrays in device memory (see [`Program::output_arrays`]).
    pub fn n_output_arrays(&self) -> usize {
        2 * self.outputs.len() - self.code_outputs.min(self.outputs.len())
    }

    /// For each output array of device memory, the array of the host's pair layout (`2j` for
    /// the lo of output j, `2j + 1` for its hi) it is: a code's array is its output's lo, and
    /// its hi is a copy of it.
    pub fn output_array_hosts(&self) -> Vec<usize> {
        let bounds = self.outputs.len() - self.code_outputs.min(self.outputs.len());
        (0..2 * bounds)
            .chain((bounds..self.outputs.len()).map(|j| 2 * j))
            .collect()
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
        let codes_from = self.outputs.len() - self.code_outputs.min(self.outputs.len());
        for (k, (lo, hi)) in self.outputs.iter().enumerate() {
            if k >= codes_from {
                writeln!(f, "  out{k} = code {lo}")?;
                continue;
            }
            writeln!(f, "  out{k} = [{lo}, {hi}]")?;
        }
        Ok(())
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
