//! Bytecode: a scalar [`Program`] as the instruction words the GPU interpreter runs
//! (`crate::gpu::interpreter`), with its values packed into a few reusable slots.
//!
//! Why: a program of thousands of instructions takes the driver's JIT most of a second even cut
//! into stages (Prospero: 63 stages, about 0.8 s on 16 cores), while an interpreter compiled
//! once answers as soon as the program's words are on the device. The interpreter runs the same
//! PTX instruction for each scalar instruction as the compiled kernel does, so it computes the
//! same bits; it answers until the compiled code is ready.
//!
//! # Encoding
//!
//! One instruction is four little-endian `u32` words `[op | dst << 8, a, b, c]`: `op` one of
//! [`op`], `dst` the slot the result goes to, `a`, `b`, `c` the operands' slots in the order of
//! [`Inst::operands`]. `Input`: `a` is the input array (`2 * var + bound`); `Const`: `a` and `b`
//! are the low and high 32 bits of the f64 constant (an f32 program: `a` is the f32's bits);
//! `Bool`: `a` is 0 or 1. After the program's instructions come the stores: one [`op::STORE`]
//! per output bound, `a` the slot, `b` the output array (`2 * output + 0` lo, `+ 1` hi).
//! Booleans live in slots as the integers 0 and 1.
//!
//! # Slots
//!
//! A value's slot is free again after its last use, and the result of an instruction may take
//! the slot of an operand it reads for the last time (every interpreter reads all operands
//! before it writes). Outputs stay live to the end. Prospero's 31,398 f64 instructions need
//! 433 slots (counted by `prospero_packs_into_few_slots`).
//!
//! `decode` (in the tests) turns the words back into a program; `decode(encode(p)) == p` for every program
//! (the tests check it on Prospero and the suite), which is what shows that no slot is reused
//! while its value is still to be read.

use super::{Bound, Cmp, Inst, Precision, Program, RoundInt, Value};
use crate::round::Round;

/// Operation codes (the low byte of an instruction's first word). Rounded operations take
/// `base + ` [`round_index`] of their direction.
pub mod op {
    /// `dst = input array a` (element of the box).
    pub(crate) const INPUT: u32 = 0;
    /// `dst = constant (a, b)`.
    pub(crate) const CONST: u32 = 1;
    /// `dst = a` as a boolean (0 or 1).
    pub(crate) const BOOL: u32 = 2;
    /// Output array `b` of the box = slot `a`.
    pub(crate) const STORE: u32 = 3;
    /// `add.{rm, rp, rn}`.
    pub(crate) const ADD: u32 = 4;
    /// `sub.{rm, rp, rn}`.
    pub(crate) const SUB: u32 = 7;
    /// `mul.{rm, rp, rn}`.
    pub(crate) const MUL: u32 = 10;
    /// `div.{rm, rp, rn}`.
    pub(crate) const DIV: u32 = 13;
    /// `fma.{rm, rp, rn}`.
    pub(crate) const FMA: u32 = 16;
    /// `sqrt.{rm, rp, rn}`.
    pub(crate) const SQRT: u32 = 19;
    /// `neg`.
    pub(crate) const NEG: u32 = 22;
    /// `abs`.
    pub(crate) const ABS: u32 = 23;
    /// `min` (minNum).
    pub(crate) const MIN: u32 = 24;
    /// `max` (maxNum).
    pub(crate) const MAX: u32 = 25;
    /// Comparisons `lt, le, gt, ge, eq` (ordered).
    pub(crate) const CMP: u32 = 26;
    /// `isnan`.
    pub(crate) const ISNAN: u32 = 31;
    /// Boolean `and`.
    pub(crate) const AND: u32 = 32;
    /// Boolean `or`.
    pub(crate) const OR: u32 = 33;
    /// Boolean `not`.
    pub(crate) const NOT: u32 = 34;
    /// `select c, a, b`.
    pub(crate) const SELECT: u32 = 35;
    /// Round to integral `floor, ceil, trunc, rint`.
    pub(crate) const ROUND_INT: u32 = 36;
    /// One past the last code.
    pub const COUNT: u32 = 40;
}

/// Offset of a rounding direction within a rounded operation's codes.
pub(crate) fn round_index(r: Round) -> u32 {
    match r {
        Round::Down => 0,
        Round::Up => 1,
        Round::Nearest => 2,
    }
}

#[cfg(test)]
fn round_of(k: u32) -> Round {
    match k {
        0 => Round::Down,
        1 => Round::Up,
        _ => Round::Nearest,
    }
}

const CMPS: [Cmp; 5] = [Cmp::Lt, Cmp::Le, Cmp::Gt, Cmp::Ge, Cmp::Eq];
const ROUND_INTS: [RoundInt; 4] = [
    RoundInt::Floor,
    RoundInt::Ceil,
    RoundInt::Trunc,
    RoundInt::Even,
];

/// Most slots an encoding may use (`dst` has 24 bits).
pub(crate) const MAX_SLOTS: usize = 1 << 24;

/// A program as bytecode.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Bytecode {
    /// The program's precision.
    pub precision: Precision,
    /// Input variables (the program's `n_vars`).
    pub n_vars: usize,
    /// Outputs (intervals).
    pub n_outputs: usize,
    /// How many of them are codes, stored as one array each ([`Program::output_arrays`]).
    pub code_outputs: usize,
    /// The instructions, then the stores: four words each.
    pub words: Vec<u32>,
    /// Slots a box needs.
    pub slots: usize,
}

impl Bytecode {
    /// Instructions, stores included.
    pub(crate) fn len(&self) -> usize {
        self.words.len() / 4
    }
}

/// Why a program has no bytecode.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub(crate) enum EncodeError {
    /// The interpreter does not call the math runtime: programs with point functions are
    /// compiled.
    #[error("instruction {0} calls a point function, which the interpreter does not run")]
    PointCall(usize),
    /// More live values than [`MAX_SLOTS`].
    #[error("the program needs more than {MAX_SLOTS} slots")]
    TooManySlots,
}

/// Encodes `program` (verified by whoever built it, as every backend assumes).
pub(crate) fn encode(program: &Program) -> Result<Bytecode, EncodeError> {
    let n = program.insts.len();
    // The last instruction reading each value; outputs are read at the end (n).
    let mut last = vec![None::<usize>; n];
    for (i, inst) in program.insts.iter().enumerate() {
        for v in inst.operands() {
            last[v.index()] = Some(i);
        }
    }
    let arrays = program.output_arrays();
    for &v in &arrays {
        last[v.index()] = Some(n);
    }
    // Values whose last use is instruction i, to free when it has read them.
    let mut dies_at: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (v, l) in last.iter().enumerate() {
        if let Some(i) = *l {
            if i < n {
                dies_at[i].push(v);
            }
        }
    }
    let mut slot_of = vec![u32::MAX; n];
    // Free slots, lowest first out (keeps the working set of slots small and dense).
    let mut free = std::collections::BinaryHeap::<std::cmp::Reverse<u32>>::new();
    let mut slots = 0u32;
    let mut words = Vec::with_capacity(4 * (n + arrays.len()));
    for (i, inst) in program.insts.iter().enumerate() {
        let s = |v: Value| slot_of[v.index()];
        let (code, a, b, c) = match *inst {
            Inst::Input { var, bound } => {
                (op::INPUT, 2 * var + u32::from(bound == Bound::Hi), 0, 0)
            }
            Inst::Const(x) => match program.precision {
                Precision::F64 => {
                    let bits = x.to_bits();
                    (op::CONST, bits as u32, (bits >> 32) as u32, 0)
                }
                Precision::F32 => (op::CONST, (x as f32).to_bits(), 0, 0),
            },
            Inst::Bool(x) => (op::BOOL, u32::from(x), 0, 0),
            Inst::Add(x, y, r) => (op::ADD + round_index(r), s(x), s(y), 0),
            Inst::Sub(x, y, r) => (op::SUB + round_index(r), s(x), s(y), 0),
            Inst::Mul(x, y, r) => (op::MUL + round_index(r), s(x), s(y), 0),
            Inst::Div(x, y, r) => (op::DIV + round_index(r), s(x), s(y), 0),
            Inst::Fma(x, y, z, r) => (op::FMA + round_index(r), s(x), s(y), s(z)),
            Inst::Sqrt(x, r) => (op::SQRT + round_index(r), s(x), 0, 0),
            Inst::Neg(x) => (op::NEG, s(x), 0, 0),
            Inst::Abs(x) => (op::ABS, s(x), 0, 0),
            Inst::Min(x, y) => (op::MIN, s(x), s(y), 0),
            Inst::Max(x, y) => (op::MAX, s(x), s(y), 0),
            Inst::Compare(k, x, y) => {
                let at = CMPS.iter().position(|&c| c == k).unwrap_or(0) as u32;
                (op::CMP + at, s(x), s(y), 0)
            }
            Inst::IsNan(x) => (op::ISNAN, s(x), 0, 0),
            Inst::And(x, y) => (op::AND, s(x), s(y), 0),
            Inst::Or(x, y) => (op::OR, s(x), s(y), 0),
            Inst::Not(x) => (op::NOT, s(x), 0, 0),
            Inst::Select(k, x, y) => (op::SELECT, s(k), s(x), s(y)),
            Inst::RoundInt(k, x) => {
                let at = ROUND_INTS.iter().position(|&r| r == k).unwrap_or(0) as u32;
                (op::ROUND_INT + at, s(x), 0, 0)
            }
            Inst::Point1(..) | Inst::Point2(..) => return Err(EncodeError::PointCall(i)),
        };
        // The operands read for the last time free their slots before the result takes one.
        for &v in &dies_at[i] {
            free.push(std::cmp::Reverse(slot_of[v]));
        }
        let dst = match free.pop() {
            Some(std::cmp::Reverse(d)) => d,
            None => {
                slots += 1;
                slots - 1
            }
        };
        if slots as usize > MAX_SLOTS {
            return Err(EncodeError::TooManySlots);
        }
        slot_of[i] = dst;
        if last[i].is_none() {
            // Never read: its slot is free at once (the write still happens).
            free.push(std::cmp::Reverse(dst));
        }
        words.extend_from_slice(&[code | dst << 8, a, b, c]);
    }
    // One store per output array (a code output has one: `Program::output_arrays`).
    for (k, &v) in arrays.iter().enumerate() {
        words.extend_from_slice(&[op::STORE, slot_of[v.index()], k as u32, 0]);
    }
    Ok(Bytecode {
        precision: program.precision,
        n_vars: program.n_vars(),
        n_outputs: program.outputs.len(),
        code_outputs: program.code_outputs,
        words,
        slots: slots as usize,
    })
}

/// The program `code` encodes (variables named `x0`, `x1`, ...): each slot stands for the
/// value last written to it.
#[cfg(test)]
pub(crate) fn decode(code: &Bytecode) -> Program {
    let mut value_in = vec![Value(u32::MAX); code.slots];
    let mut insts = Vec::new();
    let mut outputs = vec![(Value(u32::MAX), Value(u32::MAX)); code.n_outputs];
    // The host array (2j for lo, 2j + 1 for hi) of each stored array.
    let hosts = Program {
        outputs: outputs.clone(),
        code_outputs: code.code_outputs,
        precision: code.precision,
        var_names: Vec::new(),
        insts: Vec::new(),
    }
    .output_array_hosts();
    for w in code.words.chunks_exact(4) {
        let (opc, dst) = (w[0] & 0xff, (w[0] >> 8) as usize);
        let v = |k: u32| value_in[k as usize];
        let inst = match opc {
            op::INPUT => Inst::Input {
                var: w[1] / 2,
                bound: if w[1] % 2 == 0 { Bound::Lo } else { Bound::Hi },
            },
            op::CONST => Inst::Const(match code.precision {
                Precision::F64 => f64::from_bits(u64::from(w[1]) | u64::from(w[2]) << 32),
                Precision::F32 => f32::from_bits(w[1]) as f64,
            }),
            op::BOOL => Inst::Bool(w[1] != 0),
            op::STORE => {
                let host = hosts[w[2] as usize];
                let (j, hi) = (host / 2, host % 2 == 1);
                if hi {
                    outputs[j].1 = v(w[1]);
                } else {
                    outputs[j].0 = v(w[1]);
                }
                if j >= code.n_outputs - code.code_outputs {
                    outputs[j].1 = v(w[1]); // a code: one value
                }
                continue;
            }
            c if (op::ADD..op::SUB).contains(&c) => {
                Inst::Add(v(w[1]), v(w[2]), round_of(c - op::ADD))
            }
            c if (op::SUB..op::MUL).contains(&c) => {
                Inst::Sub(v(w[1]), v(w[2]), round_of(c - op::SUB))
            }
            c if (op::MUL..op::DIV).contains(&c) => {
                Inst::Mul(v(w[1]), v(w[2]), round_of(c - op::MUL))
            }
            c if (op::DIV..op::FMA).contains(&c) => {
                Inst::Div(v(w[1]), v(w[2]), round_of(c - op::DIV))
            }
            c if (op::FMA..op::SQRT).contains(&c) => {
                Inst::Fma(v(w[1]), v(w[2]), v(w[3]), round_of(c - op::FMA))
            }
            c if (op::SQRT..op::NEG).contains(&c) => Inst::Sqrt(v(w[1]), round_of(c - op::SQRT)),
            op::NEG => Inst::Neg(v(w[1])),
            op::ABS => Inst::Abs(v(w[1])),
            op::MIN => Inst::Min(v(w[1]), v(w[2])),
            op::MAX => Inst::Max(v(w[1]), v(w[2])),
            c if (op::CMP..op::ISNAN).contains(&c) => {
                Inst::Compare(CMPS[(c - op::CMP) as usize], v(w[1]), v(w[2]))
            }
            op::ISNAN => Inst::IsNan(v(w[1])),
            op::AND => Inst::And(v(w[1]), v(w[2])),
            op::OR => Inst::Or(v(w[1]), v(w[2])),
            op::NOT => Inst::Not(v(w[1])),
            op::SELECT => Inst::Select(v(w[1]), v(w[2]), v(w[3])),
            c => Inst::RoundInt(ROUND_INTS[(c - op::ROUND_INT) as usize], v(w[1])),
        };
        value_in[dst] = Value(insts.len() as u32);
        insts.push(inst);
    }
    Program {
        precision: code.precision,
        var_names: (0..code.n_vars).map(|k| format!("x{k}")).collect(),
        insts,
        outputs,
        code_outputs: code.code_outputs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Expression;

    fn renamed(p: &Program) -> Program {
        Program {
            var_names: (0..p.n_vars()).map(|k| format!("x{k}")).collect(),
            ..p.clone()
        }
    }

    /// The same program, instruction for instruction (compared as text: `Program`'s `==` has
    /// NaN constants differ from themselves); the first differing line when not.
    fn assert_same(got: &Program, want: &Program, what: &str) {
        let (g, w) = (got.to_string(), want.to_string());
        if let Some((a, b)) = g.lines().zip(w.lines()).find(|(a, b)| a != b) {
            panic!("{what}: decoded `{a}`, encoded `{b}`");
        }
        assert_eq!(g.lines().count(), w.lines().count(), "{what}");
    }

    /// Decoding gives back the program, instruction for instruction: no slot was reused while
    /// its value was still to be read.
    #[test]
    fn decoding_gives_back_the_program() {
        let (generated, _) = crate::workloads::generated(300);
        let sources = [
            "x^4 - 5*x^2 + y^4 - 5*y^2 + z^4 - 5*z^2 + 11.8",
            "min(x, y) / max(y, z) + abs(x - z) * sqrt(abs(y)) + pown(x, 7) - x*y*z, x - y",
            "floor(x*y) + sign(z) * round(z) / hull(x, y) * intersect(y, z) + ceil(x) - trunc(y)",
            "x + 1, x, y*y, 0.1",
            generated.as_str(),
        ];
        let decorated = sources[..4]
            .iter()
            .map(|s| Expression::parse_decorated(s).unwrap());
        let exprs = sources.iter().map(|s| Expression::parse(s).unwrap());
        for expr in exprs.chain(decorated) {
            let src = expr.source();
            for p in [Precision::F64, Precision::F32] {
                let program = expr.scalar(p).unwrap();
                let code = encode(&program).unwrap();
                assert_same(&decode(&code), &renamed(&program), &format!("{src} {p}"));
                assert!(
                    code.slots < program.insts.len().max(2),
                    "{src}: {}",
                    code.slots
                );
            }
        }
    }

    /// Every operation code decodes to the instruction that was encoded (a program that uses
    /// each instruction kind and rounding, built directly).
    #[test]
    fn every_instruction_kind_round_trips() {
        use crate::scalar::text;
        let src = "scalar program (f64, inputs: x0, x1)
  %0 = input x0.lo
  %1 = input x1.hi
  %2 = const 0x1.8p1
  %3 = bool true
  %4 = add.rd %0, %1
  %5 = add.ru %0, %1
  %6 = add.rn %0, %1
  %7 = sub.rd %0, %2
  %8 = sub.ru %0, %2
  %9 = sub.rn %0, %2
  %10 = mul.rd %4, %5
  %11 = mul.ru %4, %5
  %12 = mul.rn %4, %5
  %13 = div.rd %4, %5
  %14 = div.ru %4, %5
  %15 = div.rn %4, %5
  %16 = fma.rd %4, %5, %6
  %17 = fma.ru %4, %5, %6
  %18 = fma.rn %4, %5, %6
  %19 = sqrt.rd %0
  %20 = sqrt.ru %0
  %21 = sqrt.rn %0
  %22 = neg %1
  %23 = abs %22
  %24 = min %23, %21
  %25 = max %24, %20
  %26 = cmp.lt %0, %1
  %27 = cmp.le %0, %1
  %28 = cmp.gt %0, %1
  %29 = cmp.ge %0, %1
  %30 = cmp.eq %0, %1
  %31 = isnan %25
  %32 = and %26, %27
  %33 = or %32, %28
  %34 = not %33
  %35 = and %34, %29
  %36 = or %35, %30
  %37 = or %36, %31
  %38 = and %37, %3
  %39 = select %38, %25, %19
  %40 = floor %39
  %41 = ceil %40
  %42 = trunc %41
  %43 = rint %42
  %44 = add.rn %43, %7
  %45 = add.rn %44, %8
  %46 = add.rn %45, %9
  %47 = add.rn %46, %10
  %48 = add.rn %47, %11
  %49 = add.rn %48, %12
  %50 = add.rn %49, %13
  %51 = add.rn %50, %14
  %52 = add.rn %51, %15
  %53 = add.rn %52, %16
  %54 = add.rn %53, %17
  %55 = add.rn %54, %18
  out0 = [%55, %43]
  out1 = [%2, %2]
";
        let program: Program = text::parse(src).unwrap();
        program.verify().unwrap();
        let code = encode(&program).unwrap();
        let opcodes: std::collections::BTreeSet<u32> =
            code.words.chunks(4).map(|w| w[0] & 0xff).collect();
        assert_eq!(opcodes.len() as u32, op::COUNT, "every code is used");
        assert_same(&decode(&code), &program, "every kind");
        let mut p32 = program.clone();
        p32.precision = Precision::F32;
        assert_same(&decode(&encode(&p32).unwrap()), &p32, "every kind, f32");
    }

    #[test]
    fn point_calls_are_not_encoded() {
        let program = Expression::parse("exp(x) + y")
            .unwrap()
            .scalar(Precision::F64)
            .unwrap();
        assert!(matches!(encode(&program), Err(EncodeError::PointCall(_))));
    }

    /// Prospero packs into a few slots (the interpreter's scratch is slots x threads).
    #[test]
    fn prospero_packs_into_few_slots() {
        let expr = Expression::parse(&crate::workloads::prospero()).unwrap();
        for p in [Precision::F64, Precision::F32] {
            let program = expr.scalar(p).unwrap();
            let code = encode(&program).unwrap();
            assert_same(&decode(&code), &renamed(&program), "prospero");
            eprintln!(
                "prospero {p}: {} insts, {} slots",
                program.insts.len(),
                code.slots
            );
            assert!(code.slots <= 2048, "{} slots", code.slots);
        }
    }
}
