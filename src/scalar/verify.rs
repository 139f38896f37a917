//! The scalar IR's verifier: what every backend may assume of a program. It runs after the
//! lowering and before every backend ([`super::Program::verify`]); a program that fails it is a
//! bug in whatever built it, reported as a value, never a panic.

use super::{Inst, Precision, Program, Type, Value};

/// Why a scalar program is ill-formed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    /// An operand refers to an instruction at or after its user (SSA order broken).
    #[error("instruction %{at} uses {value}, which is not defined before it")]
    UseBeforeDef {
        /// The user.
        at: usize,
        /// The operand.
        value: Value,
    },
    /// An operand has the wrong type (a predicate where a float is needed, or the reverse).
    #[error("instruction %{at} uses {value} as {expected:?}, but it is {found:?}")]
    Type {
        /// The user.
        at: usize,
        /// The operand.
        value: Value,
        /// The type the user needs.
        expected: Type,
        /// The operand's type.
        found: Type,
    },
    /// An input instruction names a variable the program does not have.
    #[error("instruction %{at} reads variable {var}, but the program has {n_vars} variables")]
    NoSuchVariable {
        /// The instruction.
        at: usize,
        /// The variable number.
        var: u32,
        /// How many the program has.
        n_vars: usize,
    },
    /// A code output ([`Program::code_outputs`]) whose bounds are not one value, or more codes
    /// than outputs.
    #[error("output {output}: a code output must be one value `(v, v)`, and codes are the last {codes} of {outputs} outputs")]
    Code {
        /// The output's number.
        output: usize,
        /// How many codes the program says it has.
        codes: usize,
        /// How many outputs it has.
        outputs: usize,
    },
    /// An output bound is not a float value of the program.
    #[error("output {output}: {source}")]
    Output {
        /// The output's number.
        output: usize,
        /// What is wrong with it.
        #[source]
        source: Box<VerifyError>,
    },
    /// A constant of an f32 program that is not an f32 value: the backends would read it
    /// differently (the interpreter and the PTX round it to the nearest f32, the CPU
    /// evaluator's f32 product lanes multiply it as it is).
    #[error("instruction %{at}: the constant {value} is not an f32 value in an f32 program")]
    NotF32 {
        /// The instruction.
        at: usize,
        /// The constant, as a hex float.
        value: String,
    },
    /// A caller gave the wrong number of input boxes (reference interpreter).
    #[error("the program has {expected} variables, but {got} input intervals were given")]
    InputCount {
        /// The program's variable count.
        expected: usize,
        /// What was given.
        got: usize,
    },
}

/// Checks SSA order, operand types and variable numbers (see [`VerifyError`]).
pub(crate) fn verify(program: &Program) -> Result<(), VerifyError> {
    let insts = &program.insts;
    let ty = |value: Value, at: usize, expected: Type| -> Result<(), VerifyError> {
        if value.index() >= at {
            return Err(VerifyError::UseBeforeDef { at, value });
        }
        let found = insts[value.index()].ty();
        if found != expected {
            return Err(VerifyError::Type {
                at,
                value,
                expected,
                found,
            });
        }
        Ok(())
    };
    for (i, inst) in insts.iter().enumerate() {
        match *inst {
            Inst::Input { var, .. } => {
                if var as usize >= program.n_vars() {
                    return Err(VerifyError::NoSuchVariable {
                        at: i,
                        var,
                        n_vars: program.n_vars(),
                    });
                }
            }
            Inst::Const(c) => {
                if program.precision == Precision::F32 && !c.is_nan() && c as f32 as f64 != c {
                    return Err(VerifyError::NotF32 {
                        at: i,
                        value: crate::syntax::number::hexf64(c),
                    });
                }
            }
            Inst::Bool(_) => {}
            Inst::Select(c, a, b) => {
                ty(c, i, Type::Bool)?;
                ty(a, i, Type::Float)?;
                ty(b, i, Type::Float)?;
            }
            Inst::And(a, b) | Inst::Or(a, b) => {
                ty(a, i, Type::Bool)?;
                ty(b, i, Type::Bool)?;
            }
            Inst::Not(a) => ty(a, i, Type::Bool)?,
            other => {
                for v in other.operands() {
                    ty(v, i, Type::Float)?;
                }
            }
        }
    }
    let (codes, outputs) = (program.code_outputs, program.outputs.len());
    if codes > outputs {
        return Err(VerifyError::Code {
            output: outputs,
            codes,
            outputs,
        });
    }
    for (output, &(lo, hi)) in program.outputs.iter().enumerate() {
        if output >= outputs - codes && lo != hi {
            return Err(VerifyError::Code {
                output,
                codes,
                outputs,
            });
        }
        for v in [lo, hi] {
            ty(v, insts.len(), Type::Float).map_err(|e| VerifyError::Output {
                output,
                source: Box::new(e),
            })?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scalar::{Bound, Precision};

    fn program(insts: Vec<Inst>, outputs: Vec<(Value, Value)>) -> Program {
        Program {
            precision: Precision::F64,
            var_names: vec![],
            insts,
            outputs,
            code_outputs: 0,
        }
    }

    #[test]
    fn rejects_ill_formed_programs_with_the_reason() {
        let bad_type = program(
            vec![Inst::Bool(true), Inst::Neg(Value(0))],
            vec![(Value(1), Value(1))],
        );
        assert!(matches!(
            verify(&bad_type),
            Err(VerifyError::Type {
                at: 1,
                expected: Type::Float,
                found: Type::Bool,
                ..
            })
        ));
        let forward = program(vec![Inst::Neg(Value(0))], vec![(Value(0), Value(0))]);
        assert!(matches!(
            verify(&forward),
            Err(VerifyError::UseBeforeDef { at: 0, .. })
        ));
        let bad_var = program(
            vec![Inst::Input {
                var: 0,
                bound: Bound::Lo,
            }],
            vec![(Value(0), Value(0))],
        );
        assert!(matches!(
            verify(&bad_var),
            Err(VerifyError::NoSuchVariable { var: 0, .. })
        ));
        let bool_out = program(vec![Inst::Bool(true)], vec![(Value(0), Value(0))]);
        assert!(matches!(
            verify(&bool_out),
            Err(VerifyError::Output { output: 0, .. })
        ));
        let fine = program(
            vec![Inst::Const(1.0), Inst::Neg(Value(0))],
            vec![(Value(1), Value(0))],
        );
        assert_eq!(verify(&fine), Ok(()));
        // A code is one value, and codes are among the outputs.
        let mut code = fine.clone();
        code.code_outputs = 1;
        assert!(matches!(
            verify(&code),
            Err(VerifyError::Code { output: 0, .. })
        ));
        code.outputs = vec![(Value(1), Value(0)), (Value(1), Value(1))];
        assert_eq!(verify(&code), Ok(()));
        assert_eq!(code.output_arrays(), [Value(1), Value(0), Value(1)]);
        assert_eq!(code.output_array_hosts(), [0, 1, 2]);
        code.code_outputs = 3;
        assert!(matches!(
            verify(&code),
            Err(VerifyError::Code { codes: 3, .. })
        ));
        // An f32 program's constants are f32 values (1 + 2^-24 is not; infinities are).
        let mut wide = program(
            vec![Inst::Const(1.0 + 2f64.powi(-24))],
            vec![(Value(0), Value(0))],
        );
        wide.precision = Precision::F32;
        assert!(matches!(
            verify(&wide),
            Err(VerifyError::NotF32 { at: 0, .. })
        ));
        wide.insts = vec![Inst::Const(f64::INFINITY)];
        assert_eq!(verify(&wide), Ok(()));
    }
}
