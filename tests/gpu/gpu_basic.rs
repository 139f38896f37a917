//! The scalar IR's reference interpreter (`ivjit::internals::scalar::interp`) against the CPU evaluator and
//! the GPU, bit for bit, on every scalar instruction (both precisions, every rounding), on a few
//! thousand inputs including signed zeros, infinities, NaN, subnormals and extreme values.
//!
//! The tests that need a GPU run with `--features gpu-tests` (`tools/gpu-pack` sets it); without
//! it cargo reports them as ignored, and with it a machine without a GPU fails them.
//!
//! NaN results are compared as "both NaN": the IR makes no promise about NaN payloads or signs
//! (PTX returns a canonical NaN).

use crate::common::rng;

use ivjit::internals::gpu::{self, GpuError, GpuKernel};
use ivjit::internals::scalar::{interp, Bound, Cmp, Inst, Precision, Program, Round, Value};

const ROUNDS: [Round; 3] = [Round::Down, Round::Up, Round::Nearest];
const CMPS: [Cmp; 5] = [Cmp::Lt, Cmp::Le, Cmp::Gt, Cmp::Ge, Cmp::Eq];

/// The reference interpreter of the scalar IR (`ivjit::internals::scalar::interp`), one element at a time,
/// in the structure-of-arrays layout of the backends.
fn reference(program: &Program, inputs: &[f64], n: usize) -> Vec<f64> {
    let mut out = vec![0.0; 2 * program.outputs.len() * n];
    for i in 0..n {
        let boxes: Vec<(f64, f64)> = (0..program.n_vars())
            .map(|v| (inputs[2 * v * n + i], inputs[(2 * v + 1) * n + i]))
            .collect();
        let outs = interp::eval(program, &boxes).expect("a well-formed program");
        for (j, (lo, hi)) in outs.into_iter().enumerate() {
            out[2 * j * n + i] = lo;
            out[(2 * j + 1) * n + i] = hi;
        }
    }
    out
}

fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// Deterministic generator (splitmix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        rng::splitmix64(&mut self.0)
    }
}

fn specials(precision: Precision) -> Vec<f64> {
    let mut v = match precision {
        Precision::F64 => vec![
            0.0,
            f64::INFINITY,
            f64::NAN,
            f64::from_bits(1),
            f64::from_bits(0x000F_FFFF_FFFF_FFFF),
            f64::MIN_POSITIVE,
            f64::MAX,
            1.0,
            1.0 + f64::EPSILON,
            0.5,
            3.0,
            0.1,
            1e300,
            1e-300,
        ],
        Precision::F32 => [
            0.0,
            f32::INFINITY,
            f32::NAN,
            f32::from_bits(1),
            f32::from_bits(0x007F_FFFF),
            f32::MIN_POSITIVE,
            f32::MAX,
            1.0,
            1.0 + f32::EPSILON,
            0.5,
            3.0,
            0.1,
            1e30,
            1e-30,
        ]
        .iter()
        .map(|&x| x as f64)
        .collect(),
    };
    let negated: Vec<f64> = v.iter().map(|x| -x).collect();
    v.extend(negated);
    v
}

/// Operand values: all pairs of special values first, then random values (half "nice" numbers
/// of moderate exponent so that rounding matters, half arbitrary bit patterns).
fn operands(precision: Precision, n: usize, seed: u64) -> [Vec<f64>; 3] {
    let sp = specials(precision);
    let mut rng = Rng(seed);
    let random = |rng: &mut Rng| -> f64 {
        let bits = rng.next();
        match precision {
            Precision::F64 if bits & 1 == 0 => {
                let e = (rng.next() % 80) as i32 - 40;
                let m = f64::from_bits(0x3FF0_0000_0000_0000 | (rng.next() >> 12));
                let s = if bits & 2 == 0 { 1.0 } else { -1.0 };
                s * m * 2f64.powi(e)
            }
            Precision::F64 => f64::from_bits(bits),
            Precision::F32 if bits & 1 == 0 => {
                let e = (rng.next() % 40) as i32 - 20;
                let m = f32::from_bits(0x3F80_0000 | ((rng.next() >> 41) as u32));
                let s = if bits & 2 == 0 { 1.0 } else { -1.0 };
                (s * m * 2f32.powi(e)) as f64
            }
            Precision::F32 => f32::from_bits((bits >> 32) as u32) as f64,
        }
    };
    let mut cols: [Vec<f64>; 3] = [vec![], vec![], vec![]];
    for i in 0..n {
        let pair = i / sp.len();
        if pair < sp.len() {
            cols[0].push(sp[pair]);
            cols[1].push(sp[i % sp.len()]);
            cols[2].push(if i % 3 == 0 {
                sp[(i / 7) % sp.len()]
            } else {
                random(&mut rng)
            });
        } else {
            for col in cols.iter_mut() {
                let x = if rng.next().is_multiple_of(8) {
                    sp[(rng.next() % sp.len() as u64) as usize]
                } else {
                    random(&mut rng)
                };
                col.push(x);
            }
        }
    }
    cols
}

/// SoA inputs for three variables x, y, z. The programs read x.lo, y.hi and z.lo; the other
/// arrays hold a marker value so that a wrong array index shows up as a mismatch.
fn soa_inputs(cols: &[Vec<f64>; 3], n: usize) -> Vec<f64> {
    let marker = vec![12345.0; n];
    [&cols[0][..], &marker, &marker, &cols[1], &cols[2], &marker].concat()
}

/// Program: %0 = x.lo, %1 = y.hi, %2 = z.lo, then `tail` (whose last value is the output, a
/// float), output interval (last, last).
fn program(precision: Precision, tail: &[Inst]) -> Program {
    let mut insts = vec![
        Inst::Input {
            var: 0,
            bound: Bound::Lo,
        },
        Inst::Input {
            var: 1,
            bound: Bound::Hi,
        },
        Inst::Input {
            var: 2,
            bound: Bound::Lo,
        },
    ];
    insts.extend_from_slice(tail);
    let last = Value(insts.len() as u32 - 1);
    Program {
        precision,
        var_names: vec!["x".into(), "y".into(), "z".into()],
        insts,
        outputs: vec![(last, last)],
        code_outputs: 0,
    }
}

fn cases() -> Vec<(String, Vec<Inst>)> {
    let (x, y, z) = (Value(0), Value(1), Value(2));
    let mut cases = Vec::new();
    for r in ROUNDS {
        let s = r.suffix();
        cases.push((format!("add.{s}"), vec![Inst::Add(x, y, r)]));
        cases.push((format!("sub.{s}"), vec![Inst::Sub(x, y, r)]));
        cases.push((format!("mul.{s}"), vec![Inst::Mul(x, y, r)]));
        cases.push((format!("div.{s}"), vec![Inst::Div(x, y, r)]));
        cases.push((format!("fma.{s}"), vec![Inst::Fma(x, y, z, r)]));
        cases.push((format!("sqrt.{s}"), vec![Inst::Sqrt(x, r)]));
    }
    cases.push(("neg".into(), vec![Inst::Neg(x)]));
    cases.push(("abs".into(), vec![Inst::Abs(x)]));
    cases.push(("min".into(), vec![Inst::Min(x, y)]));
    cases.push(("max".into(), vec![Inst::Max(x, y)]));
    cases.push(("const".into(), vec![Inst::Const(-0.0)]));
    for c in CMPS {
        cases.push((
            format!("select(cmp.{})", c.name()),
            vec![Inst::Compare(c, x, y), Inst::Select(Value(3), x, z)],
        ));
    }
    for k in [
        ivjit::internals::scalar::RoundInt::Floor,
        ivjit::internals::scalar::RoundInt::Ceil,
        ivjit::internals::scalar::RoundInt::Trunc,
        ivjit::internals::scalar::RoundInt::Even,
    ] {
        cases.push((k.name().into(), vec![Inst::RoundInt(k, x)]));
    }
    cases.push((
        "select(isnan)".into(),
        vec![Inst::IsNan(y), Inst::Select(Value(3), x, z)],
    ));
    cases.push((
        "select(and/or/not/bool)".into(),
        vec![
            Inst::Compare(Cmp::Lt, x, y),  // 3
            Inst::IsNan(z),                // 4
            Inst::And(Value(3), Value(4)), // 5
            Inst::Not(Value(5)),           // 6
            Inst::Bool(false),             // 7
            Inst::Or(Value(6), Value(7)),  // 8
            Inst::Select(Value(8), y, z),  // 9
        ],
    ));
    cases
}

/// Compares GPU and reference results of `program`; returns a description of the first
/// mismatches.
fn compare(name: &str, program: &Program, inputs: &[f64], n: usize) -> Vec<String> {
    let kernel = match GpuKernel::new(program) {
        Ok(k) => k,
        Err(e) => return vec![format!("{name}: compiling failed: {e}")],
    };
    let got = match kernel.eval(inputs, n) {
        Ok(v) => v,
        Err(e) => return vec![format!("{name}: eval failed: {e}")],
    };
    compare_with_reference(name, "gpu", program, &got, inputs, n)
}

/// Compares `got` (one backend's results) with the reference interpreter's.
fn compare_with_reference(
    name: &str,
    backend: &str,
    program: &Program,
    got: &[f64],
    inputs: &[f64],
    n: usize,
) -> Vec<String> {
    let want = reference(program, inputs, n);
    if got.len() != want.len() {
        return vec![format!(
            "{name}: {} results, expected {}",
            got.len(),
            want.len()
        )];
    }
    let mut bad = Vec::new();
    for (k, (&g, &w)) in got.iter().zip(&want).enumerate() {
        if !same(g, w) {
            let (array, i) = (k / n, k % n);
            let args: Vec<String> = (0..program.n_vars() * 2)
                .map(|a| format!("{:e}", inputs[a * n + i]))
                .collect();
            bad.push(format!(
                "{name} ({}): element {i} output array {array}: {backend} {g:e} ({:#x}) reference {w:e} ({:#x}); inputs [{}]",
                program.precision,
                g.to_bits(),
                w.to_bits(),
                args.join(", ")
            ));
            if bad.len() >= 5 {
                break;
            }
        }
    }
    bad
}

/// The CPU evaluator's vectorized loops against the reference interpreter on the same cases
/// (runs without a GPU).
#[test]
fn cpu_evaluator_matches_the_reference_interpreter() {
    let n = 4099;
    let mut failures = Vec::new();
    for precision in [Precision::F64, Precision::F32] {
        let cols = operands(precision, n, 0x1788 + precision as u64);
        let inputs = soa_inputs(&cols, n);
        for (name, tail) in cases() {
            let p = program(precision, &tail);
            let got = ivjit::internals::cpu::eval::eval_soa(&p, &inputs, n);
            failures.extend(compare_with_reference(&name, "cpu", &p, &got, &inputs, n));
        }
    }
    assert!(failures.is_empty(), "mismatches:\n{}", failures.join("\n"));
}

#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn every_instruction_matches_the_cpu_bit_for_bit() {
    let info = crate::common::gpu::require_gpu("every_instruction_matches_the_cpu_bit_for_bit");
    eprintln!("GPU: {info}");
    let n = 4099; // not a multiple of the block size
    let mut failures = Vec::new();
    for precision in [Precision::F64, Precision::F32] {
        let cols = operands(precision, n, 0x1788 + precision as u64);
        let inputs = soa_inputs(&cols, n);
        for (name, tail) in cases() {
            let p = program(precision, &tail);
            failures.extend(compare(&name, &p, &inputs, n));
        }
    }
    assert!(failures.is_empty(), "mismatches:\n{}", failures.join("\n"));
}

#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn signed_zeros_in_min_and_max() {
    crate::common::gpu::require_gpu("signed_zeros_in_min_and_max");
    for precision in [Precision::F64, Precision::F32] {
        let (x, y) = (Value(0), Value(1));
        let p = program(
            precision,
            &[
                Inst::Min(x, y),
                Inst::Max(x, y),
                Inst::Min(y, x),
                Inst::Max(y, x),
            ],
        );
        let p = Program {
            outputs: vec![(Value(3), Value(4)), (Value(5), Value(6))],
            ..p
        };
        let xs = [0.0, -0.0, 0.0, -0.0, f64::NAN, 0.0, f64::NAN, -0.0];
        let ys = [0.0, 0.0, -0.0, -0.0, 0.0, f64::NAN, -0.0, f64::NAN];
        let n = xs.len();
        let cols = [xs.to_vec(), ys.to_vec(), vec![0.0; n]];
        let kernel = GpuKernel::new(&p).expect("compile");
        let got = kernel.eval(&soa_inputs(&cols, n), n).expect("eval");
        for i in 0..n {
            let (mn, mx, mn2, mx2) = (got[i], got[n + i], got[2 * n + i], got[3 * n + i]);
            let (x, y) = (xs[i], ys[i]);
            let ctx = format!(
                "{precision} x={x:?} y={y:?}: min {mn:?} max {mx:?} min' {mn2:?} max' {mx2:?}"
            );
            // Inputs are zeros or NaN: a NaN operand yields the other one; otherwise min is -0
            // if either zero is negative, max is +0 if either is positive.
            let pick = |zero: f64| {
                if x.is_nan() {
                    y
                } else if y.is_nan() {
                    x
                } else {
                    zero
                }
            };
            let neg = x.is_sign_negative() || y.is_sign_negative();
            let pos = x.is_sign_positive() || y.is_sign_positive();
            let want_min = pick(if neg { -0.0 } else { 0.0 });
            let want_max = pick(if pos { 0.0 } else { -0.0 });
            for (g, w) in [
                (mn, want_min),
                (mn2, want_min),
                (mx, want_max),
                (mx2, want_max),
            ] {
                assert_eq!(g.to_bits(), w.to_bits(), "{ctx}");
            }
        }
    }
}

#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn layout_sizes_and_grid_stride() {
    let info = crate::common::gpu::require_gpu("layout_sizes_and_grid_stride");
    // Two variables, outputs (y.lo, x.hi) and (x.lo, y.hi): checks the SoA indexing both ways.
    let insts = vec![
        Inst::Input {
            var: 0,
            bound: Bound::Lo,
        },
        Inst::Input {
            var: 0,
            bound: Bound::Hi,
        },
        Inst::Input {
            var: 1,
            bound: Bound::Lo,
        },
        Inst::Input {
            var: 1,
            bound: Bound::Hi,
        },
    ];
    for precision in [Precision::F64, Precision::F32] {
        let p = Program {
            precision,
            var_names: vec!["x".into(), "y".into()],
            insts: insts.clone(),
            outputs: vec![(Value(2), Value(1)), (Value(0), Value(3))],
            code_outputs: 0,
        };
        let kernel = GpuKernel::new(&p).expect("compile");
        // n = 0, one element, a partial block, and more elements than one grid covers
        // (the grid is capped at 8 blocks of 256 per SM).
        let big = info.multiprocessors as usize * 8 * 256 * 2 + 77;
        for n in [0usize, 1, 300, big] {
            let inputs: Vec<f64> = (0..4 * n).map(|k| k as f64).collect();
            let got = kernel.eval(&inputs, n).expect("eval");
            assert_eq!(got.len(), 4 * n);
            for i in 0..n {
                let at = |a: usize| (a * n + i) as f64;
                assert_eq!(got[i], at(2), "{precision} n={n} i={i}");
                assert_eq!(got[n + i], at(1), "{precision} n={n} i={i}");
                assert_eq!(got[2 * n + i], at(0), "{precision} n={n} i={i}");
                assert_eq!(got[3 * n + i], at(3), "{precision} n={n} i={i}");
            }
        }
        let err = kernel.eval(&[1.0, 2.0], 1).unwrap_err();
        assert!(
            matches!(
                err,
                GpuError::Shape(ivjit::internals::shape::ShapeError::Inputs { .. })
            ),
            "{err}"
        );
    }
}

#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn program_without_variables() {
    crate::common::gpu::require_gpu("program_without_variables");
    for precision in [Precision::F64, Precision::F32] {
        let p = Program {
            precision,
            var_names: vec![],
            insts: vec![
                Inst::Const(1.0),
                Inst::Const(3.0),
                Inst::Div(Value(0), Value(1), Round::Down),
                Inst::Div(Value(0), Value(1), Round::Up),
            ],
            outputs: vec![(Value(2), Value(3))],
            code_outputs: 0,
        };
        let kernel = GpuKernel::new(&p).expect("compile");
        let n = 1000;
        let got = kernel.eval(&[], n).expect("eval");
        let want = reference(&p, &[], n);
        assert_eq!(got.len(), 2 * n);
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(g.to_bits(), w.to_bits(), "{precision}");
        }
        assert!(got[0] < got[n], "{precision}: 1/3 rounded down < up");
    }
}

#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn rejected_ptx_comes_with_the_jit_log() {
    crate::common::gpu::require_gpu("rejected_ptx_comes_with_the_jit_log");
    let bad = ".version 8.0\n.target sm_90\n.address_size 64\n\
               .visible .entry k()\n{\n\t.reg .f64 %f<2>;\n\tadd.rm.f64 %f0, %f1, %undefined;\n\tret;\n}\n";
    match gpu::validate_ptx(bad) {
        Err(GpuError::PtxRejected { code, log }) => {
            eprintln!("driver said {code}:\n{log}");
            assert!(!log.starts_with('('), "no JIT log: {log}");
        }
        other => panic!("expected PtxRejected, got {other:?}"),
    }
}

/// f32 divisions rounded down and up (inline on the GPU with an exact check, the IEEE
/// subroutine otherwise: `ptx::Emitter::div_f32_directed`) against the reference interpreter,
/// bit for bit, on 2^20 pairs: random normals whose exponents straddle the inline path's range
/// [2^-63, 2^63], operands at its edges and their neighbours, exact quotients (12-bit
/// significands, the hardest case for the check), quotients near 2^126 and 2^-126 (where the
/// neighbour of 2^-126 is subnormal), and the special values.
#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn f32_directed_division_matches_the_cpu_bit_for_bit() {
    crate::common::gpu::require_gpu("f32_directed_division_matches_the_cpu_bit_for_bit");
    let n = 1 << 20;
    let mut rng = Rng(0xd1f32);
    let sp = specials(Precision::F32);
    let mut cols: [Vec<f64>; 3] = [vec![], vec![], vec![0.0; n]];
    for i in 0..n {
        let bits = rng.next();
        let normal = |rng: &mut Rng, span: i32| -> f32 {
            let e = (rng.next() % (2 * span as u64 + 1)) as i32 - span;
            let m = f32::from_bits(0x3F80_0000 | ((rng.next() >> 41) as u32));
            let s = if rng.next() & 1 == 0 { 1.0 } else { -1.0 };
            s * m * 2f32.powi(e)
        };
        let (a, b) = match bits % 8 {
            0 => {
                let c = f32::from_bits((rng.next() as u32 & 0x807f_f000) | 0x3f80_0000);
                let b = f32::from_bits(rng.next() as u32 & 0x807f_f000 | 0x3f80_0000)
                    * 2f32.powi((rng.next() % 100) as i32 - 50);
                (c * b, b)
            }
            1 => (sp[i % sp.len()] as f32, normal(&mut rng, 70)),
            2 => (normal(&mut rng, 70), sp[i % sp.len()] as f32),
            // Quotients near 2^126 and 2^-126, the ends of the inline range's quotients (there
            // the neighbour of q = 2^-126 is the largest subnormal).
            3 if i % 2 == 0 => (
                normal(&mut rng, 3) * 2f32.powi(62),
                normal(&mut rng, 3) * 2f32.powi(-64),
            ),
            3 => (
                normal(&mut rng, 2) * 2f32.powi(-62),
                normal(&mut rng, 2) * 2f32.powi(63),
            ),
            // Operands at the inline range's edges 2^-63 and 2^63 and their neighbours.
            4 => {
                let edge = |rng: &mut Rng| -> f32 {
                    let e = [2f32.powi(-63), 2f32.powi(63)][(rng.next() & 1) as usize];
                    let e = match rng.next() % 3 {
                        0 => e.next_down(),
                        1 => e,
                        _ => e.next_up(),
                    };
                    if rng.next() & 1 == 0 {
                        e
                    } else {
                        -e
                    }
                };
                if i % 3 == 0 {
                    (edge(&mut rng), edge(&mut rng))
                } else if i % 3 == 1 {
                    (edge(&mut rng), normal(&mut rng, 70))
                } else {
                    (normal(&mut rng, 70), edge(&mut rng))
                }
            }
            _ => (normal(&mut rng, 75), normal(&mut rng, 75)),
        };
        cols[0].push(a as f64);
        cols[1].push(b as f64);
    }
    let inputs = soa_inputs(&cols, n);
    let mut p = program(
        Precision::F32,
        &[
            Inst::Div(Value(0), Value(1), Round::Down),
            Inst::Div(Value(0), Value(1), Round::Up),
        ],
    );
    p.outputs = vec![(Value(3), Value(4))];
    let failures = compare("div.rd / div.ru f32", &p, &inputs, n);
    assert!(failures.is_empty(), "mismatches:\n{}", failures.join("\n"));
}

/// f64 square roots rounded down and up (inline on the GPU with an exact check, the IEEE
/// subroutine otherwise: `ptx::Emitter::sqrt_f64_directed`) against the reference interpreter,
/// bit for bit, on 2^20 operands: random positive numbers of every binade (the inline range is
/// [2^-900, 2^900], its edges and their neighbours included), exact squares (the hardest case
/// for the check), subnormals, and the special values.
#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn f64_directed_sqrt_matches_the_cpu_bit_for_bit() {
    crate::common::gpu::require_gpu("f64_directed_sqrt_matches_the_cpu_bit_for_bit");
    let n = 1 << 20;
    let mut rng = Rng(0x5e47);
    let sp = specials(Precision::F64);
    let mut cols: [Vec<f64>; 3] = [vec![], vec![0.0; n], vec![0.0; n]];
    for i in 0..n {
        let a = match rng.next() % 8 {
            0 => {
                let m =
                    f64::from_bits((rng.next() & 0x000f_ffff_c000_0000) | 0x3ff0_0000_0000_0000);
                let s = m * 2f64.powi((rng.next() % 1000) as i32 - 500);
                s * s
            }
            1 => sp[i % sp.len()],
            2 => f64::from_bits(rng.next() >> 12), // subnormal
            // The inline range's edges 2^-900 and 2^900 and their neighbours.
            3 if i % 4 == 0 => {
                let e = [2f64.powi(-900), 2f64.powi(900)][(rng.next() & 1) as usize];
                match rng.next() % 3 {
                    0 => e.next_down(),
                    1 => e,
                    _ => e.next_up(),
                }
            }
            _ => {
                let e = rng.next() % 2046 + 1;
                f64::from_bits((rng.next() >> 12) | e << 52)
            }
        };
        cols[0].push(a);
    }
    let inputs = soa_inputs(&cols, n);
    let mut p = program(
        Precision::F64,
        &[
            Inst::Sqrt(Value(0), Round::Down),
            Inst::Sqrt(Value(0), Round::Up),
        ],
    );
    p.outputs = vec![(Value(3), Value(4))];
    let failures = compare("sqrt.rd / sqrt.ru f64", &p, &inputs, n);
    assert!(failures.is_empty(), "mismatches:\n{}", failures.join("\n"));
}
