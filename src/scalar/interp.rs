//! The reference interpreter of the scalar IR: the semantics of every instruction, written as
//! plainly as possible, one box at a time.
//!
//! It is the oracle the backends are held to (the CPU evaluator's vectorized loops and the PTX
//! emitter must agree with it bit for bit on every instruction except `Point1`/`Point2`, whose
//! bounds each backend computes with its own library) and the semantics constant folding uses
//! (`crate::lower::fold`). Floats of an f32 program are f32 values carried widened in f64; every
//! rounded operation rounds once to the program's precision ([`crate::round`]). Point functions
//! use the reference bounds of [`crate::point`] (CORE-MATH, one step outward).

use super::{Bound, Cmp, Inst, Precision, Program, RoundInt, Type, Value, VerifyError};
use crate::point;
use crate::round;

/// One value of a program: a float of the program's precision (stored as f64) or a predicate.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Val {
    Float(f64),
    Bool(bool),
}

impl Val {
    fn float(self) -> f64 {
        match self {
            Val::Float(x) => x,
            Val::Bool(_) => unreachable!("verified: a float operand"),
        }
    }
    fn bool(self) -> bool {
        match self {
            Val::Bool(b) => b,
            Val::Float(_) => unreachable!("verified: a boolean operand"),
        }
    }
}

/// Evaluates `program` on one box: `inputs[k]` is the (lo, hi) pair of variable k (values of an
/// f32 program must be f32 values). Returns the (lo, hi) pair of every output, the empty
/// interval as (NaN, NaN) like every backend. The program is verified first.
pub fn eval(program: &Program, inputs: &[(f64, f64)]) -> Result<Vec<(f64, f64)>, VerifyError> {
    program.verify()?;
    if inputs.len() != program.n_vars() {
        return Err(VerifyError::InputCount {
            expected: program.n_vars(),
            got: inputs.len(),
        });
    }
    let f32p = program.precision == Precision::F32;
    let mut vals: Vec<Val> = Vec::with_capacity(program.insts.len());
    for inst in &program.insts {
        let f = |v: Value| vals[v.index()].float();
        let b = |v: Value| vals[v.index()].bool();
        // One rounding to the program's precision of a binary operation.
        let rounded = |x: f64,
                       y: f64,
                       op64: fn(f64, f64, crate::round::Round) -> f64,
                       op32: fn(f32, f32, crate::round::Round) -> f32,
                       r| {
            if f32p {
                op32(x as f32, y as f32, r) as f64
            } else {
                op64(x, y, r)
            }
        };
        let v = match *inst {
            Inst::Input { var, bound } => {
                let (lo, hi) = inputs[var as usize];
                Val::Float(if bound == Bound::Lo { lo } else { hi })
            }
            Inst::Const(c) => Val::Float(c),
            Inst::Bool(x) => Val::Bool(x),
            Inst::Add(x, y, r) => {
                Val::Float(rounded(f(x), f(y), round::add_f64, round::add_f32, r))
            }
            Inst::Sub(x, y, r) => {
                Val::Float(rounded(f(x), f(y), round::sub_f64, round::sub_f32, r))
            }
            Inst::Mul(x, y, r) => {
                Val::Float(rounded(f(x), f(y), round::mul_f64, round::mul_f32, r))
            }
            Inst::Div(x, y, r) => {
                Val::Float(rounded(f(x), f(y), round::div_f64, round::div_f32, r))
            }
            Inst::Fma(x, y, z, r) => Val::Float(if f32p {
                round::fma_f32(f(x) as f32, f(y) as f32, f(z) as f32, r) as f64
            } else {
                round::fma_f64(f(x), f(y), f(z), r)
            }),
            Inst::Sqrt(x, r) => Val::Float(if f32p {
                round::sqrt_f32(f(x) as f32, r) as f64
            } else {
                round::sqrt_f64(f(x), r)
            }),
            Inst::Neg(x) => Val::Float(-f(x)),
            Inst::Abs(x) => Val::Float(f(x).abs()),
            // minNum / maxNum with -0 < +0 (the same on f32 values widened to f64).
            Inst::Min(x, y) => Val::Float(round::min_f64(f(x), f(y))),
            Inst::Max(x, y) => Val::Float(round::max_f64(f(x), f(y))),
            Inst::Compare(c, x, y) => {
                let (x, y) = (f(x), f(y));
                Val::Bool(match c {
                    Cmp::Lt => x < y,
                    Cmp::Le => x <= y,
                    Cmp::Gt => x > y,
                    Cmp::Ge => x >= y,
                    Cmp::Eq => x == y,
                })
            }
            Inst::IsNan(x) => Val::Bool(f(x).is_nan()),
            Inst::And(x, y) => Val::Bool(b(x) && b(y)),
            Inst::Or(x, y) => Val::Bool(b(x) || b(y)),
            Inst::Not(x) => Val::Bool(!b(x)),
            Inst::Select(c, x, y) => Val::Float(if b(c) { f(x) } else { f(y) }),
            Inst::Point1(g, x, r) => Val::Float(if f32p {
                point::bound_f32(g, f(x) as f32, r) as f64
            } else {
                point::bound_f64(g, f(x), r)
            }),
            Inst::Point2(g, x, y, r) => Val::Float(if f32p {
                point::bound2_f32(g, f(x) as f32, f(y) as f32, r) as f64
            } else {
                point::bound2_f64(g, f(x), f(y), r)
            }),
            // Exact; an f32 value widened to f64 rounds to the same integral value.
            Inst::RoundInt(k, x) => Val::Float(match k {
                RoundInt::Floor => f(x).floor(),
                RoundInt::Ceil => f(x).ceil(),
                RoundInt::Trunc => f(x).trunc(),
                RoundInt::Even => f(x).round_ties_even(),
            }),
        };
        debug_assert_eq!(
            matches!(v, Val::Bool(_)),
            inst.ty() == Type::Bool,
            "the interpreter's value has the instruction's type"
        );
        vals.push(v);
    }
    Ok(program
        .outputs
        .iter()
        .map(|&(lo, hi)| (vals[lo.index()].float(), vals[hi.index()].float()))
        .collect())
}
