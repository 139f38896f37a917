//! A program of one interval output over at most two interval inputs, written as a
//! straight-line function in CUDA C or in Rust: how an interpreter's operation bodies are
//! generated from the lowering ([`crate::lower::lower_op`]) instead of restating it. One row per
//! instruction and language; each row is the instruction's contract (module docs of
//! [`crate::scalar`]) in that language.
//!
//! The inputs are `x` and `y` (variables 0 and 1), the result an interval `(lo, hi)`:
//! - CUDA C: `__device__ __forceinline__ Iv NAME(Iv x, Iv y)` over the interpreter's `T` and
//!   `struct Iv { T lo, hi; }`, with the correctly rounded intrinsics of the precision
//!   (`__dadd_rd`, `__fmul_ru`, ...), `fmin`/`fmax` (PTX `min`/`max`, as the PTX emitter).
//! - Rust: `#[inline(always)] fn NAME<T: Ops>(x: (T, T), y: (T, T)) -> (T, T)`, generic over the
//!   precision (or a vector of lanes: inlined into the caller compiled for its instructions) through
//!   [`Ops`], whose rows are the reference interpreter's ([`crate::round`]).

use std::fmt::Write;

use super::{Bound, Cmp, Inst, Precision, Program, Round, Value};

/// Why a program cannot be written as such a function.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum EmitError {
    /// More than two inputs or other than one output.
    #[error("a program of {inputs} inputs and {outputs} outputs (at most 2 inputs, 1 output)")]
    Shape {
        /// Inputs of the program.
        inputs: usize,
        /// Outputs of the program.
        outputs: usize,
    },
    /// An instruction the language's rows do not cover (point functions, integer rounding,
    /// and in Rust abs, division and fma: no interpreter operation needs them yet).
    #[error("instruction %{index} ({inst}) has no row for {language}")]
    Unsupported {
        /// Its index.
        index: usize,
        /// The instruction.
        inst: String,
        /// The language.
        language: &'static str,
    },
}

/// The float operations the generated Rust calls: the reference interpreter's rows for one
/// precision.
///
/// A value may be one float or a vector of lanes (`crate::cpu::simd`): comparisons give a
/// [`Ops::Mask`] (a `bool`, or one bit per lane) and choices are [`Ops::select`], so the same
/// generated function runs one box or eight at once.
pub(crate) trait Ops: Copy {
    /// The result of a comparison: `bool` for one float, a bit per lane for a vector.
    type Mask: Copy
        + std::ops::BitAnd<Output = Self::Mask>
        + std::ops::BitOr<Output = Self::Mask>
        + std::ops::Not<Output = Self::Mask>;
    /// An exactly representable constant.
    fn exact(x: f64) -> Self;
    /// A constant mask.
    // A row the generator writes for any program; today's operations need no such one.
    #[allow(dead_code)]
    fn mask(b: bool) -> Self::Mask;
    /// Whether the value is NaN.
    fn is_nan(self) -> Self::Mask;
    /// `self < b` (false where either is NaN; so are the other comparisons).
    fn less(self, b: Self) -> Self::Mask;
    /// `self <= b`.
    fn less_eq(self, b: Self) -> Self::Mask;
    /// `self > b`.
    fn greater(self, b: Self) -> Self::Mask;
    /// `self >= b`.
    // A row the generator writes for any program; today's operations need no such one.
    #[allow(dead_code)]
    fn greater_eq(self, b: Self) -> Self::Mask;
    /// `self == b`.
    // A row the generator writes for any program; today's operations need no such one.
    #[allow(dead_code)]
    fn equal(self, b: Self) -> Self::Mask;
    /// `a` where `m` holds, else `b`.
    fn select(m: Self::Mask, a: Self, b: Self) -> Self;
    /// `self + b`, rounded.
    fn add(self, b: Self, r: Round) -> Self;
    /// `self - b`, rounded.
    fn sub(self, b: Self, r: Round) -> Self;
    /// `self * b`, rounded.
    fn mul(self, b: Self, r: Round) -> Self;
    /// `self / b`, rounded.
    fn div(self, b: Self, r: Round) -> Self;
    /// The square root, rounded.
    fn sqrt(self, r: Round) -> Self;
    /// `-self`.
    fn neg(self) -> Self;
    /// minNum, `-0 < +0`.
    fn min(self, b: Self) -> Self;
    /// maxNum, `-0 < +0`.
    fn max(self, b: Self) -> Self;
}

/// A directed operation of `crate::round`: with AVX-512's embedded rounding where the processor
/// has it (`round::hardware`: one instruction, the same bits), else the software function.
macro_rules! directed {
    ($f:ident($($arg:expr),*; $r:expr)) => {{
        #[cfg(target_arch = "x86_64")]
        if $r != Round::Nearest && crate::round::hardware() {
            // SAFETY: `hardware()` is true only where the processor has AVX-512F.
            return unsafe { crate::round::embedded::$f($($arg),*, $r) };
        }
        crate::round::$f($($arg),*, $r)
    }};
}

impl Ops for f64 {
    type Mask = bool;
    #[inline]
    fn exact(x: f64) -> f64 {
        x
    }
    #[inline]
    fn mask(b: bool) -> bool {
        b
    }
    #[inline]
    fn is_nan(self) -> bool {
        f64::is_nan(self)
    }
    #[inline]
    fn less(self, b: f64) -> bool {
        self < b
    }
    #[inline]
    fn less_eq(self, b: f64) -> bool {
        self <= b
    }
    #[inline]
    fn greater(self, b: f64) -> bool {
        self > b
    }
    #[inline]
    fn greater_eq(self, b: f64) -> bool {
        self >= b
    }
    #[inline]
    fn equal(self, b: f64) -> bool {
        self == b
    }
    #[inline]
    fn select(m: bool, a: f64, b: f64) -> f64 {
        if m {
            a
        } else {
            b
        }
    }
    #[inline]
    fn add(self, b: f64, r: Round) -> f64 {
        directed!(add_f64(self, b; r))
    }
    #[inline]
    fn sub(self, b: f64, r: Round) -> f64 {
        directed!(sub_f64(self, b; r))
    }
    #[inline]
    fn mul(self, b: f64, r: Round) -> f64 {
        directed!(mul_f64(self, b; r))
    }
    #[inline]
    fn div(self, b: f64, r: Round) -> f64 {
        directed!(div_f64(self, b; r))
    }
    #[inline]
    fn sqrt(self, r: Round) -> f64 {
        directed!(sqrt_f64(self; r))
    }
    #[inline]
    fn neg(self) -> f64 {
        -self
    }
    #[inline]
    fn min(self, b: f64) -> f64 {
        crate::round::min_f64(self, b)
    }
    #[inline]
    fn max(self, b: f64) -> f64 {
        crate::round::max_f64(self, b)
    }
}

impl Ops for f32 {
    type Mask = bool;
    #[inline]
    fn exact(x: f64) -> f32 {
        x as f32
    }
    #[inline]
    fn mask(b: bool) -> bool {
        b
    }
    #[inline]
    fn is_nan(self) -> bool {
        f32::is_nan(self)
    }
    #[inline]
    fn less(self, b: f32) -> bool {
        self < b
    }
    #[inline]
    fn less_eq(self, b: f32) -> bool {
        self <= b
    }
    #[inline]
    fn greater(self, b: f32) -> bool {
        self > b
    }
    #[inline]
    fn greater_eq(self, b: f32) -> bool {
        self >= b
    }
    #[inline]
    fn equal(self, b: f32) -> bool {
        self == b
    }
    #[inline]
    fn select(m: bool, a: f32, b: f32) -> f32 {
        if m {
            a
        } else {
            b
        }
    }
    #[inline]
    fn add(self, b: f32, r: Round) -> f32 {
        directed!(add_f32(self, b; r))
    }
    #[inline]
    fn sub(self, b: f32, r: Round) -> f32 {
        directed!(sub_f32(self, b; r))
    }
    #[inline]
    fn mul(self, b: f32, r: Round) -> f32 {
        directed!(mul_f32(self, b; r))
    }
    #[inline]
    fn div(self, b: f32, r: Round) -> f32 {
        directed!(div_f32(self, b; r))
    }
    #[inline]
    fn sqrt(self, r: Round) -> f32 {
        directed!(sqrt_f32(self; r))
    }
    #[inline]
    fn neg(self) -> f32 {
        -self
    }
    #[inline]
    fn min(self, b: f32) -> f32 {
        crate::round::min_f32(self, b)
    }
    #[inline]
    fn max(self, b: f32) -> f32 {
        crate::round::max_f32(self, b)
    }
}

/// The language of the function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Language {
    /// CUDA C for NVRTC, in the program's precision.
    CudaC,
    /// Rust, generic over the precision ([`Ops`]).
    Rust,
}

/// `program` as a function named `name` in `language` (see the module docs).
pub(crate) fn function(
    program: &Program,
    name: &str,
    language: Language,
) -> Result<String, EmitError> {
    if program.n_vars() > 2 || program.outputs.len() != 1 {
        return Err(EmitError::Shape {
            inputs: program.n_vars(),
            outputs: program.outputs.len(),
        });
    }
    let used = used(program);
    let mut body = String::new();
    for (i, inst) in program.insts.iter().enumerate() {
        if !used[i] {
            continue;
        }
        let line = match language {
            Language::CudaC => cuda_row(program.precision, inst),
            Language::Rust => rust_row(inst),
        }
        .ok_or_else(|| EmitError::Unsupported {
            index: i,
            inst: format!("{:?}", program.insts[i]),
            language: match language {
                Language::CudaC => "CUDA C",
                Language::Rust => "Rust",
            },
        })?;
        let _ = writeln!(body, "    {}", line.replace("%v", &format!("v{i}")));
    }
    let (lo, hi) = program.outputs[0];
    let params = ["x", "y"][..program.n_vars()].to_vec();
    Ok(match language {
        Language::CudaC => {
            let args: Vec<String> = params.iter().map(|p| format!("Iv {p}")).collect();
            format!(
                "__device__ __forceinline__ Iv {name}({}) {{\n{body}    Iv r = {{{}, {}}};\n    return r;\n}}\n",
                args.join(", "),
                v(lo),
                v(hi)
            )
        }
        Language::Rust => {
            let args: Vec<String> = params.iter().map(|p| format!("{p}: (T, T)")).collect();
            format!(
                "#[inline(always)]\npub(crate) fn {name}<T: Ops>({}) -> (T, T) {{\n{body}    ({}, {})\n}}\n",
                args.join(", "),
                v(lo),
                v(hi)
            )
        }
    })
}

/// Which instructions the outputs need.
fn used(program: &Program) -> Vec<bool> {
    let mut used = vec![false; program.insts.len()];
    for &(lo, hi) in &program.outputs {
        used[lo.index()] = true;
        used[hi.index()] = true;
    }
    for i in (0..program.insts.len()).rev() {
        if used[i] {
            for a in program.insts[i].operands() {
                used[a.index()] = true;
            }
        }
    }
    used
}

fn v(x: Value) -> String {
    format!("v{}", x.0)
}

fn input(var: u32, bound: Bound, cuda: bool) -> String {
    let p = ["x", "y"][var as usize];
    match (bound, cuda) {
        (Bound::Lo, true) => format!("{p}.lo"),
        (Bound::Hi, true) => format!("{p}.hi"),
        (Bound::Lo, false) => format!("{p}.0"),
        (Bound::Hi, false) => format!("{p}.1"),
    }
}

fn cmp_op(c: Cmp) -> &'static str {
    // Ordered in both languages: false when an operand is NaN (`==` included).
    match c {
        Cmp::Lt => "<",
        Cmp::Le => "<=",
        Cmp::Gt => ">",
        Cmp::Ge => ">=",
        Cmp::Eq => "==",
    }
}

/// One instruction in CUDA C, defining `%v`; `None` where there is no row.
fn cuda_row(p: Precision, inst: &Inst) -> Option<String> {
    let (t, d) = match p {
        Precision::F64 => ("T", "d"),
        Precision::F32 => ("T", "f"),
    };
    let rnd = |r: Round| match r {
        Round::Down => "rd",
        Round::Up => "ru",
        Round::Nearest => "rn",
    };
    let fmin = if p == Precision::F64 { "fmin" } else { "fminf" };
    let fmax = if p == Precision::F64 { "fmax" } else { "fmaxf" };
    Some(match *inst {
        Inst::Input { var, bound } => format!("{t} %v = {};", input(var, bound, true)),
        Inst::Const(c) => format!("{t} %v = {};", cuda_const(p, c)),
        // a - b is a + (-b) in IEEE 754, rounding and the sign of zero included.
        Inst::Add(a, b, r) => format!("{t} %v = __{d}add_{}({}, {});", rnd(r), v(a), v(b)),
        Inst::Sub(a, b, r) => format!("{t} %v = __{d}add_{}({}, -{});", rnd(r), v(a), v(b)),
        Inst::Mul(a, b, r) => format!("{t} %v = __{d}mul_{}({}, {});", rnd(r), v(a), v(b)),
        Inst::Div(a, b, r) => format!("{t} %v = __{d}div_{}({}, {});", rnd(r), v(a), v(b)),
        Inst::Fma(a, b, c, r) => {
            let f = if p == Precision::F64 {
                "__fma"
            } else {
                "__fmaf"
            };
            format!("{t} %v = {f}_{}({}, {}, {});", rnd(r), v(a), v(b), v(c))
        }
        Inst::Sqrt(a, r) => format!("{t} %v = __{d}sqrt_{}({});", rnd(r), v(a)),
        Inst::Neg(a) => format!("{t} %v = -{};", v(a)),
        Inst::Abs(a) => format!("{t} %v = fabs({});", v(a)),
        Inst::Min(a, b) => format!("{t} %v = {fmin}({}, {});", v(a), v(b)),
        Inst::Max(a, b) => format!("{t} %v = {fmax}({}, {});", v(a), v(b)),
        Inst::Compare(c, a, b) => format!("bool %v = {} {} {};", v(a), cmp_op(c), v(b)),
        Inst::IsNan(a) => format!("bool %v = isnan({});", v(a)),
        Inst::Bool(b) => format!("bool %v = {b};"),
        Inst::And(a, b) => format!("bool %v = {} && {};", v(a), v(b)),
        Inst::Or(a, b) => format!("bool %v = {} || {};", v(a), v(b)),
        Inst::Not(a) => format!("bool %v = !{};", v(a)),
        Inst::Select(c, a, b) => format!("{t} %v = {} ? {} : {};", v(c), v(a), v(b)),
        Inst::Point1(..) | Inst::Point2(..) | Inst::RoundInt(..) => return None,
    })
}

/// An exact constant of precision `p` as CUDA C: its bits.
fn cuda_const(p: Precision, c: f64) -> String {
    match p {
        Precision::F64 => format!("__longlong_as_double(0x{:016x}ULL)", c.to_bits()),
        Precision::F32 => format!("__int_as_float(0x{:08x})", (c as f32).to_bits()),
    }
}

/// One instruction in Rust, defining `%v`; `None` where there is no row.
fn rust_row(inst: &Inst) -> Option<String> {
    let rnd = |r: Round| match r {
        Round::Down => "Round::Down",
        Round::Up => "Round::Up",
        Round::Nearest => "Round::Nearest",
    };
    Some(match *inst {
        Inst::Input { var, bound } => format!("let %v = {};", input(var, bound, false)),
        Inst::Const(c) => format!("let %v = T::exact({});", rust_const(c)),
        Inst::Add(a, b, r) => format!("let %v = {}.add({}, {});", v(a), v(b), rnd(r)),
        Inst::Sub(a, b, r) => format!("let %v = {}.sub({}, {});", v(a), v(b), rnd(r)),
        Inst::Mul(a, b, r) => format!("let %v = {}.mul({}, {});", v(a), v(b), rnd(r)),
        Inst::Div(a, b, r) => format!("let %v = {}.div({}, {});", v(a), v(b), rnd(r)),
        Inst::Sqrt(a, r) => format!("let %v = {}.sqrt({});", v(a), rnd(r)),
        Inst::Neg(a) => format!("let %v = {}.neg();", v(a)),
        Inst::Min(a, b) => format!("let %v = {}.min({});", v(a), v(b)),
        Inst::Max(a, b) => format!("let %v = {}.max({});", v(a), v(b)),
        Inst::Compare(c, a, b) => {
            let m = match c {
                Cmp::Lt => "less",
                Cmp::Le => "less_eq",
                Cmp::Gt => "greater",
                Cmp::Ge => "greater_eq",
                Cmp::Eq => "equal",
            };
            format!("let %v = {}.{m}({});", v(a), v(b))
        }
        Inst::IsNan(a) => format!("let %v = {}.is_nan();", v(a)),
        Inst::Bool(b) => format!("let %v = T::mask({b});"),
        Inst::And(a, b) => format!("let %v = {} & {};", v(a), v(b)),
        Inst::Or(a, b) => format!("let %v = {} | {};", v(a), v(b)),
        Inst::Not(a) => format!("let %v = !{};", v(a)),
        Inst::Select(c, a, b) => format!("let %v = T::select({}, {}, {});", v(c), v(a), v(b)),
        Inst::Abs(..)
        | Inst::Fma(..)
        | Inst::Point1(..)
        | Inst::Point2(..)
        | Inst::RoundInt(..) => return None,
    })
}

/// An exact constant as a Rust f64 expression.
fn rust_const(c: f64) -> String {
    if c.is_nan() {
        "f64::NAN".into()
    } else if c == f64::INFINITY {
        "f64::INFINITY".into()
    } else if c == f64::NEG_INFINITY {
        "f64::NEG_INFINITY".into()
    } else if c == 0.0 && c.is_sign_positive() {
        "0.0".into()
    } else {
        format!("f64::from_bits(0x{:016x})", c.to_bits())
    }
}
