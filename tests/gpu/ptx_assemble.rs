//! Every emitted PTX module must be accepted by ptxas (the pinned 13.0.88, target sm_90).
//!
//! ptxas is found through `$IVJIT_PTXAS` or `.tools/ptxas` under the crate root; run
//! `tools/install-ptxas` to get it. Without it these tests fail rather than skip: an
//! unassembled PTX snapshot proves nothing.

use std::process::Command;

use ivjit::internals::ptx;
use ivjit::internals::scalar::{Bound, Builder, Cmp, Inst, Precision, Program, Round, Value};

const ROUNDS: [Round; 3] = [Round::Down, Round::Up, Round::Nearest];
const CMPS: [Cmp; 5] = [Cmp::Lt, Cmp::Le, Cmp::Gt, Cmp::Ge, Cmp::Eq];

/// Assembles `text` with ptxas for sm_90 and panics with its messages if it is rejected.
fn assemble(name: &str, text: &str) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let file = dir.path().join(format!("{name}.ptx"));
    std::fs::write(&file, text).expect("write the PTX file");
    let output = Command::new(crate::common::tools::ptxas())
        .args(["--gpu-name", "sm_90", "-o", "/dev/null"])
        .arg(&file)
        .output()
        .expect("run ptxas");
    assert!(
        output.status.success(),
        "ptxas rejected {name} ({}):\n{}{}\n--- PTX ---\n{text}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

fn vars(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| s.to_string()).collect()
}

/// Every float instruction with every rounding, every comparison, isnan, and/or/not, select and
/// constants (including NaN, -0, infinities and a subnormal), each kept alive as an output.
fn all_ops(precision: Precision) -> Program {
    let mut b = Builder::new(precision, vars(&["x", "y", "z"]));
    let xl = b.input(0, Bound::Lo);
    let xh = b.input(0, Bound::Hi);
    let yl = b.input(1, Bound::Lo);
    let yh = b.input(1, Bound::Hi);
    let zh = b.input(2, Bound::Hi);
    let tiny = match precision {
        Precision::F64 => f64::from_bits(1),
        Precision::F32 => f32::from_bits(1) as f64,
    };
    let consts = [
        1.5,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        tiny,
        0.1f32 as f64,
    ];
    let mut outs: Vec<(Value, Value)> = Vec::new();
    for c in consts {
        let k = b.constant(c);
        let s = b.add(xl, k, Round::Nearest);
        outs.push((k, s));
    }
    let nan = b.nan();
    outs.push((nan, nan));
    for r in ROUNDS {
        let add = b.add(xl, yl, r);
        let sub = b.sub(xh, yh, r);
        let mul = b.mul(xl, yh, r);
        let div = b.div(xh, yl, r);
        let fma = b.fma(xl, yl, zh, r);
        let sqrt = b.sqrt(xh, r);
        outs.extend([(add, sub), (mul, div), (fma, sqrt)]);
    }
    let neg = b.neg(xl);
    let abs = b.abs(yh);
    let min = b.min(xl, yl);
    let max = b.max(xh, yh);
    outs.extend([(neg, abs), (min, max)]);
    let mut preds = Vec::new();
    for c in CMPS {
        preds.push(b.cmp(c, xl, yh));
    }
    preds.push(b.is_nan(zh));
    let and = b.and(preds[0], preds[1]);
    let or = b.or(preds[2], preds[3]);
    let not = b.not(preds[4]);
    preds.extend([and, or, not]);
    for p in preds {
        let s = b.select(p, xl, yh);
        let t = b.select(p, min, max);
        outs.push((s, t));
    }
    b.finish(outs)
}

/// Boolean constants survive only in hand-built programs (the builder folds them away).
fn bool_consts(precision: Precision) -> Program {
    Program {
        precision,
        var_names: vars(&["x"]),
        insts: vec![
            Inst::Input {
                var: 0,
                bound: Bound::Lo,
            },
            Inst::Input {
                var: 0,
                bound: Bound::Hi,
            },
            Inst::Bool(true),
            Inst::Bool(false),
            Inst::And(Value(2), Value(3)),
            Inst::Or(Value(2), Value(3)),
            Inst::Not(Value(4)),
            Inst::Select(Value(4), Value(0), Value(1)),
            Inst::Select(Value(5), Value(0), Value(1)),
            Inst::Select(Value(6), Value(1), Value(0)),
        ],
        outputs: vec![(Value(7), Value(8)), (Value(9), Value(9))],
        code_outputs: 0,
    }
}

/// An interval-style product of two intervals with sign cases decided at run time.
fn interval_mul(precision: Precision) -> Program {
    let mut b = Builder::new(precision, vars(&["a", "b"]));
    let (al, ah) = (b.input(0, Bound::Lo), b.input(0, Bound::Hi));
    let (bl, bh) = (b.input(1, Bound::Lo), b.input(1, Bound::Hi));
    let mut lo = Vec::new();
    let mut hi = Vec::new();
    for (x, y) in [(al, bl), (al, bh), (ah, bl), (ah, bh)] {
        lo.push(b.mul(x, y, Round::Down));
        hi.push(b.mul(x, y, Round::Up));
    }
    let l01 = b.min(lo[0], lo[1]);
    let l23 = b.min(lo[2], lo[3]);
    let l = b.min(l01, l23);
    let h01 = b.max(hi[0], hi[1]);
    let h23 = b.max(hi[2], hi[3]);
    let h = b.max(h01, h23);
    let na = b.is_nan(al);
    let nb = b.is_nan(bl);
    let empty = b.or(na, nb);
    let nan = b.nan();
    let lo = b.select(empty, nan, l);
    let hi = b.select(empty, nan, h);
    b.finish(vec![(lo, hi)])
}

/// No variables: outputs are constants.
fn constants_only(precision: Precision) -> Program {
    let mut b = Builder::new(precision, vec![]);
    let one = b.constant(1.0);
    let three = b.constant(3.0);
    let lo = b.div(one, three, Round::Down);
    let hi = b.div(one, three, Round::Up);
    b.finish(vec![(lo, hi)])
}

/// An input passed straight through, and a program with nothing at all.
fn identity(precision: Precision) -> Program {
    let mut b = Builder::new(precision, vars(&["x", "y"]));
    let yl = b.input(1, Bound::Lo);
    let yh = b.input(1, Bound::Hi);
    b.finish(vec![(yl, yh), (yh, yl)])
}

fn empty(precision: Precision) -> Program {
    Builder::new(precision, vars(&["x"])).finish(vec![])
}

type Maker = fn(Precision) -> Program;

fn corpus() -> Vec<(String, Program)> {
    let makers: [(&str, Maker); 6] = [
        ("all_ops", all_ops),
        ("bool_consts", bool_consts),
        ("interval_mul", interval_mul),
        ("constants_only", constants_only),
        ("identity", identity),
        ("empty", empty),
    ];
    let mut out = Vec::new();
    for (name, make) in makers {
        for p in [Precision::F64, Precision::F32] {
            out.push((format!("{name}_{p}"), make(p)));
        }
    }
    out
}

#[test]
fn corpus_covers_every_instruction_kind() {
    let mut seen = std::collections::BTreeSet::new();
    for (_, p) in corpus() {
        for inst in &p.insts {
            let name = format!("{inst:?}");
            let kind = name.split(['(', ' ', '{']).next().unwrap().to_string();
            let round = match *inst {
                Inst::Add(.., r)
                | Inst::Sub(.., r)
                | Inst::Mul(.., r)
                | Inst::Div(.., r)
                | Inst::Fma(.., r)
                | Inst::Sqrt(_, r) => format!(".{}", r.suffix()),
                Inst::Compare(c, ..) => format!(".{}", c.name()),
                _ => String::new(),
            };
            seen.insert(format!("{kind}{round}.{}", p.precision));
        }
    }
    let mut want = Vec::new();
    for prec in ["f64", "f32"] {
        for op in ["Add", "Sub", "Mul", "Div", "Fma", "Sqrt"] {
            for r in ["rd", "ru", "rn"] {
                want.push(format!("{op}.{r}.{prec}"));
            }
        }
        for c in ["lt", "le", "gt", "ge", "eq"] {
            want.push(format!("Compare.{c}.{prec}"));
        }
        for op in [
            "Input", "Const", "Neg", "Abs", "Min", "Max", "IsNan", "Bool", "And", "Or", "Not",
            "Select",
        ] {
            want.push(format!("{op}.{prec}"));
        }
    }
    let missing: Vec<_> = want.iter().filter(|w| !seen.contains(*w)).collect();
    assert!(missing.is_empty(), "corpus lacks {missing:?}");
}

#[test]
fn ptxas_accepts_every_emitted_module() {
    for (name, program) in corpus() {
        assemble(&name, &ptx::emit(&program));
    }
}

/// Every point function with every rounding, unary ones on x.lo and binary ones on (y.lo, x.lo),
/// Down and Up of the same call sharing it. Such modules declare the runtime functions
/// `.extern`, so they are relocatable code: ptxas assembles them with `-c`
/// (`tests/gpu/runtime_nvrtc.rs` links them with the NVRTC-compiled runtime).
fn point_calls(precision: Precision) -> Program {
    use ivjit::internals::scalar::PointFn;
    let mut b = Builder::new(precision, vars(&["x", "y"]));
    let x = b.input(0, Bound::Lo);
    let y = b.input(1, Bound::Lo);
    let mut outs = Vec::new();
    for f in PointFn::all() {
        let [d, u, n] = ROUNDS.map(|r| match f {
            PointFn::Unary(f) => b.point(f, x, r),
            PointFn::Binary(f) => b.point2(f, y, x, r),
        });
        outs.push((d, u));
        outs.push((n, n));
    }
    b.finish(outs)
}

#[test]
fn ptxas_accepts_point_calls_as_relocatable_code() {
    for p in [Precision::F64, Precision::F32] {
        let program = point_calls(p);
        let text = ptx::emit(&program);
        // One call per function (Down, Up and Nearest share it), one declaration each.
        use ivjit::internals::scalar::PointFn;
        for f in PointFn::all() {
            let sym = ptx::runtime_symbol(f, p);
            assert_eq!(
                text.matches(&format!("call (ret), {sym},")).count(),
                1,
                "{sym}"
            );
        }
        assert_eq!(
            text.matches(".extern .func").count(),
            PointFn::all().count()
        );
        let dir = tempfile::tempdir().expect("temporary directory");
        let file = dir.path().join(format!("point_calls_{p}.ptx"));
        std::fs::write(&file, &text).expect("write the PTX file");
        let output = Command::new(crate::common::tools::ptxas())
            .args(["-c", "--gpu-name", "sm_90", "-o", "/dev/null"])
            .arg(&file)
            .output()
            .expect("run ptxas");
        assert!(
            output.status.success(),
            "ptxas -c rejected point_calls_{p} ({}):\n{}{}\n--- PTX ---\n{text}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

/// Programs without point calls declare nothing and call nothing (their text is unchanged by
/// the point-function support; the snapshots check it byte for byte).
#[test]
fn programs_without_point_calls_have_no_calls() {
    for (name, program) in corpus() {
        let text = ptx::emit(&program);
        assert!(
            !text.contains(".extern") && !text.contains("call ") && !text.contains("%c<"),
            "{name}"
        );
    }
}

/// The GPU interpreter of bytecode (`ivjit::internals::gpu::interpreter`) assembles in both precisions,
/// without spills or stack (its values live in a scratch array, never in local memory), and its
/// jump table has one target per operation code.
#[test]
fn interpreter_assembles_without_local_memory() {
    for p in [Precision::F64, Precision::F32] {
        let text = ivjit::internals::gpu::interpreter::ptx(p);
        assert_eq!(
            text.matches("$L_op").count(),
            2 * ivjit::internals::scalar::bytecode::op::COUNT as usize,
            "a label and a table entry per code"
        );
        let dir = tempfile::tempdir().expect("temporary directory");
        let file = dir.path().join("interpreter.ptx");
        std::fs::write(&file, &text).expect("write the PTX file");
        let output = Command::new(crate::common::tools::ptxas())
            .args(["-v", "--gpu-name", "sm_90", "-o", "/dev/null"])
            .arg(&file)
            .output()
            .expect("run ptxas");
        let log = String::from_utf8_lossy(&output.stderr);
        assert!(
            output.status.success(),
            "ptxas rejected the interpreter ({p}): {log}"
        );
        assert!(
            log.contains("0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"),
            "{p}: {log}"
        );
    }
}
