//! The scalar IR's text form, read back: the parser of what [`Program`]'s `Display` (and
//! `ivjit scalar`) prints, so that a small `.sir` file can pin any instruction's behaviour and run
//! on every backend.
//!
//! ```text
//! scalar program (f64, inputs: x, y)
//!   %0 = input x.lo
//!   %1 = const 0x1p-60        # constants as hex-floats (or nan, inf, -inf)
//!   %2 = add.rd %0, %1        # rounded operations carry .rd / .ru / .rn
//!   %3 = exp.ru %0            # point functions by name; binary ones take two operands
//!   out0 = [%2, %3]
//! ```
//!
//! A decorated program's decorations follow its interval outputs as code outputs, one value
//! each: `out1 = code %7` ([`Program::code_outputs`]).
//!
//! `#` starts a comment; blank lines are ignored. Instruction numbers must count up from 0. The
//! parsed program is verified ([`Program::verify`]).

use super::{Bound, Cmp, Inst, Precision, Program, Round, RoundInt, Value, VerifyError};
use crate::point::{BinaryFn, UnaryFn};
use std::collections::HashMap;

/// Why a scalar IR text is not a program.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ParseError {
    /// A line that does not parse.
    #[error("line {line}: {message}")]
    Syntax {
        /// 1-based line number.
        line: usize,
        /// What is wrong, and what was expected.
        message: String,
    },
    /// The text parses but the program is ill-formed.
    #[error("{0}")]
    Invalid(#[from] VerifyError),
}

impl std::str::FromStr for Program {
    type Err = ParseError;

    fn from_str(text: &str) -> Result<Program, ParseError> {
        parse(text)
    }
}

/// Parses the text form of a scalar program (see the module documentation).
pub fn parse(text: &str) -> Result<Program, ParseError> {
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.split('#').next().unwrap_or("").trim()))
        .filter(|(_, l)| !l.is_empty());
    let err = |line: usize, message: String| ParseError::Syntax { line, message };
    let (hline, header) = lines.next().ok_or_else(|| {
        err(
            1,
            "empty text: expected `scalar program (f64, inputs: ...)`".into(),
        )
    })?;
    let (precision, var_names) = parse_header(header).map_err(|m| err(hline, m))?;
    let mut program = Program {
        precision,
        var_names,
        insts: Vec::new(),
        outputs: Vec::new(),
        code_outputs: 0,
    };
    // Input names by number, looked up once per `input` instruction (the first of a repeated
    // name, as a scan would find it).
    let mut var_index: HashMap<&str, u32> = HashMap::with_capacity(program.var_names.len());
    for (k, name) in program.var_names.iter().enumerate() {
        var_index.entry(name.as_str()).or_insert(k as u32);
    }
    for (line, l) in lines {
        let (lhs, rhs) = l.split_once('=').ok_or_else(|| {
            err(
                line,
                format!("expected `%N = ...` or `outN = [...]`, found `{l}`"),
            )
        })?;
        let (lhs, rhs) = (lhs.trim(), rhs.trim());
        if let Some(k) = lhs.strip_prefix("out") {
            let want = program.outputs.len();
            if k.parse::<usize>().ok() != Some(want) {
                return Err(err(line, format!("expected out{want}, found `{lhs}`")));
            }
            if let Some(code) = rhs.strip_prefix("code ") {
                let vals = values(code, 1).map_err(|m| err(line, m))?;
                program.outputs.push((vals[0], vals[0]));
                program.code_outputs += 1;
                continue;
            }
            if program.code_outputs > 0 {
                return Err(err(
                    line,
                    "codes (`outN = code %v`) must come after the interval outputs".into(),
                ));
            }
            let inner = rhs
                .strip_prefix('[')
                .and_then(|r| r.strip_suffix(']'))
                .ok_or_else(|| err(line, format!("expected `[%lo, %hi]`, found `{rhs}`")))?;
            let vals = values(inner, 2).map_err(|m| err(line, m))?;
            program.outputs.push((vals[0], vals[1]));
            continue;
        }
        if !program.outputs.is_empty() {
            return Err(err(
                line,
                "instructions must come before the outputs".into(),
            ));
        }
        let want = program.insts.len();
        if lhs != format!("%{want}") {
            return Err(err(line, format!("expected %{want}, found `{lhs}`")));
        }
        let inst = parse_inst(rhs, &var_index).map_err(|m| err(line, m))?;
        program.insts.push(inst);
    }
    program.verify()?;
    Ok(program)
}

fn parse_header(l: &str) -> Result<(Precision, Vec<String>), String> {
    let bad = || format!("expected `scalar program (f64|f32, inputs: a, b)`, found `{l}`");
    let inner = l
        .strip_prefix("scalar program (")
        .and_then(|r| r.strip_suffix(')'))
        .ok_or_else(bad)?;
    let (p, inputs) = inner.split_once(',').ok_or_else(bad)?;
    let precision = match p.trim() {
        "f64" => Precision::F64,
        "f32" => Precision::F32,
        other => return Err(format!("unknown precision `{other}` (f64 or f32)")),
    };
    let inputs = inputs
        .trim()
        .strip_prefix("inputs:")
        .ok_or_else(bad)?
        .trim();
    let names = if inputs.is_empty() {
        Vec::new()
    } else {
        inputs.split(',').map(|s| s.trim().to_string()).collect()
    };
    Ok((precision, names))
}

/// `n` comma-separated values `%i`.
fn values(text: &str, n: usize) -> Result<Vec<Value>, String> {
    let parts: Vec<&str> = if text.trim().is_empty() {
        Vec::new()
    } else {
        text.split(',').map(str::trim).collect()
    };
    if parts.len() != n {
        return Err(format!("expected {n} operands, found `{text}`"));
    }
    parts
        .iter()
        .map(|p| {
            p.strip_prefix('%')
                .and_then(|d| d.parse::<u32>().ok())
                .map(Value)
                .ok_or_else(|| format!("expected a value `%N`, found `{p}`"))
        })
        .collect()
}

fn round_of(suffix: &str) -> Result<Round, String> {
    match suffix {
        "rd" => Ok(Round::Down),
        "ru" => Ok(Round::Up),
        "rn" => Ok(Round::Nearest),
        other => Err(format!("unknown rounding `.{other}` (rd, ru or rn)")),
    }
}

/// A constant as the text form writes it: a hex-float (or any exactly representable decimal),
/// `nan`, `inf` or `-inf`, with an optional `-` (`-0x0p+0` is -0).
pub fn parse_constant(text: &str) -> Result<f64, String> {
    let (neg, body) = match text.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, text),
    };
    let v = match body {
        "nan" if !neg => f64::NAN,
        "inf" => f64::INFINITY,
        _ => {
            let e = crate::syntax::number::parse_enclosure(body)
                .map_err(|e| format!("bad constant `{text}`: {e}"))?;
            if !e.exact {
                return Err(format!(
                    "constant `{text}` is not a double; write it as a hex-float"
                ));
            }
            e.lo
        }
    };
    Ok(if neg { -v } else { v })
}

fn parse_inst(text: &str, vars: &HashMap<&str, u32>) -> Result<Inst, String> {
    let (op, args) = text.split_once(' ').unwrap_or((text, ""));
    let args = args.trim();
    let (name, suffix) = match op.split_once('.') {
        Some((n, s)) => (n, Some(s)),
        None => (op, None),
    };
    let rounded = || round_of(suffix.ok_or_else(|| format!("`{name}` needs .rd, .ru or .rn"))?);
    let v = |n: usize| values(args, n);
    Ok(match name {
        "input" => {
            let (var, bound) = args
                .rsplit_once('.')
                .ok_or_else(|| format!("expected `input NAME.lo|hi`, found `{text}`"))?;
            let index = *vars
                .get(var)
                .ok_or_else(|| format!("`{var}` is not among the inputs of the header"))?;
            let bound = match bound {
                "lo" => Bound::Lo,
                "hi" => Bound::Hi,
                other => return Err(format!("unknown bound `.{other}` (lo or hi)")),
            };
            Inst::Input { var: index, bound }
        }
        "const" => Inst::Const(parse_constant(args)?),
        "bool" => Inst::Bool(match args {
            "true" => true,
            "false" => false,
            other => return Err(format!("expected true or false, found `{other}`")),
        }),
        "add" | "sub" | "mul" | "div" => {
            let (a, r) = (v(2)?, rounded()?);
            match name {
                "add" => Inst::Add(a[0], a[1], r),
                "sub" => Inst::Sub(a[0], a[1], r),
                "mul" => Inst::Mul(a[0], a[1], r),
                _ => Inst::Div(a[0], a[1], r),
            }
        }
        "fma" => {
            let (a, r) = (v(3)?, rounded()?);
            Inst::Fma(a[0], a[1], a[2], r)
        }
        "sqrt" => Inst::Sqrt(v(1)?[0], rounded()?),
        "neg" => Inst::Neg(v(1)?[0]),
        "abs" => Inst::Abs(v(1)?[0]),
        "min" => {
            let a = v(2)?;
            Inst::Min(a[0], a[1])
        }
        "max" => {
            let a = v(2)?;
            Inst::Max(a[0], a[1])
        }
        "cmp" => {
            let c = match suffix {
                Some("lt") => Cmp::Lt,
                Some("le") => Cmp::Le,
                Some("gt") => Cmp::Gt,
                Some("ge") => Cmp::Ge,
                Some("eq") => Cmp::Eq,
                _ => return Err(format!("unknown comparison `{op}` (cmp.lt/le/gt/ge/eq)")),
            };
            let a = v(2)?;
            Inst::Compare(c, a[0], a[1])
        }
        "isnan" => Inst::IsNan(v(1)?[0]),
        "and" => {
            let a = v(2)?;
            Inst::And(a[0], a[1])
        }
        "or" => {
            let a = v(2)?;
            Inst::Or(a[0], a[1])
        }
        "not" => Inst::Not(v(1)?[0]),
        "select" => {
            let a = v(3)?;
            Inst::Select(a[0], a[1], a[2])
        }
        "floor" | "ceil" | "trunc" | "rint" => {
            let k = match name {
                "floor" => RoundInt::Floor,
                "ceil" => RoundInt::Ceil,
                "trunc" => RoundInt::Trunc,
                _ => RoundInt::Even,
            };
            Inst::RoundInt(k, v(1)?[0])
        }
        other => {
            if let Some(f) = UnaryFn::from_name(other) {
                Inst::Point1(f, v(1)?[0], rounded()?)
            } else if let Some(f) = BinaryFn::from_name(other) {
                let a = v(2)?;
                Inst::Point2(f, a[0], a[1], rounded()?)
            } else {
                return Err(format!("unknown instruction `{other}`"));
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_back_what_display_prints() {
        let text = "scalar program (f32, inputs: x, y)
  %0 = input x.lo
  %1 = input y.hi
  %2 = const -0x1.8p-3
  %3 = fma.ru %0, %1, %2
  %4 = cmp.le %3, %2
  %5 = select %4, %0, %3
  %6 = atan2.rd %1, %0
  %7 = erfc.rn %6
  %8 = bool false
  %9 = or %4, %8
  %10 = not %9
  %11 = const nan
  %12 = select %10, %11, %7
  %13 = rint %12
  out0 = [%5, %13]
";
        let p = parse(text).unwrap();
        assert_eq!(p.to_string(), text);
    }

    #[test]
    fn errors_name_the_line() {
        let e = parse("scalar program (f64, inputs: x)\n  %0 = input x.lo\n  %2 = neg %0\n");
        assert_eq!(
            e,
            Err(ParseError::Syntax {
                line: 3,
                message: "expected %1, found `%2`".into()
            })
        );
        let e = parse("scalar program (f64, inputs: x)\n  %0 = input x.lo\n  %1 = add %0, %0\n");
        assert!(
            matches!(e, Err(ParseError::Syntax { line: 3, .. })),
            "{e:?}"
        );
        let e = parse("scalar program (f64, inputs: x)\n  %0 = const 0.1\n");
        assert!(
            matches!(e, Err(ParseError::Syntax { line: 2, .. })),
            "{e:?}"
        );
        let e = parse("scalar program (f64, inputs: )\n  %0 = bool true\n  out0 = [%0, %0]\n");
        assert!(matches!(e, Err(ParseError::Invalid(_))), "{e:?}");
    }
}
