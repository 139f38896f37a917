//! The class matrix (issue 29) on every CPU engine: every operator and function of
//! `ivjit functions`, each argument position, f64 and f32, on the interval classes of
//! `tests/common/classes.rs` (entire, half-lines, [MAX, inf], [-MAX, MAX], adjacent floats at
//! the top and at binade edges, many periods at huge magnitude, subnormals, signed zeros,
//! points, empty), each result checked against witnesses from the rigorous oracles, never
//! against another engine. Engines: the CPU evaluator, the scalar IR's reference interpreter,
//! the tape interpreter (every operation of one or two arguments), the
//! mean-value and monotone forms (enclosures of the same function), and the gradient of each
//! unary operation (its value output, and its derivative against the difference quotients
//! between witnesses: the mean value theorem). The GPU's engines run the
//! same matrix in `tests/gpu/gpu_classes.rs`.
//!
//! Tightness is held where it was measured when the matrix was written: per operation, the
//! largest distance (in steps of the precision) from the witnesses' hull of a result of the
//! CPU evaluator, over every cell with a finite one, must stay within [`allowed_slack`], and
//! the count of cells whose slack is unbounded (an infinite bound where the witnesses are
//! finite) within the measured count.
//!
//! `IVJIT_CLASSES_STRIDE=1` runs every binade edge (the default takes every 16th, plus the
//! edges near 0, 1, the subnormals, the unit spacing and the top); `IVJIT_CLASSES_ONLY=sin`
//! one operation; `IVJIT_CLASSES_OUT=FILE` writes the class x function table (Markdown, as in
//! docs/conformance.md).

use crate::common::classes::{self as cl, Class, Expected, Memo, Op, Tally};
use crate::common::oracle::Fmt;
use ivjit::search::tape::Tape;
use ivjit::{BackendChoice, Evaluator, Expression, Interval, Precision};
use rayon::prelude::*;
use std::collections::BTreeMap;

fn prec(fmt: Fmt) -> Precision {
    match fmt {
        Fmt::F64 => Precision::F64,
        Fmt::F32 => Precision::F32,
    }
}

/// The operations the tape interpreter runs: all of one or two arguments (its generated
/// set, and the rest by their lowering) — in the IR: `mulRevToPair1(b, c)` is the reverse
/// operation of three, x = [entire] added.
fn on_tape(op: &Op, expr: &Expression) -> bool {
    let ir = expr.ir();
    op.arity <= 2 && ir.outputs.iter().all(|&o| ir.op(o).args().len() <= 2)
}

/// The engines' results on the cells of one operation: (engine name, results).
fn run_engines(
    op: &Op,
    fmt: Fmt,
    cells: &[(Vec<(f64, f64)>, String)],
) -> Vec<(&'static str, Vec<(f64, f64)>)> {
    let p = prec(fmt);
    let expr = Expression::parse(&op.src).unwrap_or_else(|e| panic!("{}: {e}", op.src));
    // The variables in the order the cells give them (x, y, z).
    let names = ["x", "y", "z"];
    assert_eq!(
        expr.vars(),
        &names[..op.arity],
        "{}: variables in order",
        op.src
    );
    let n = cells.len();
    let inputs = cl::soa(cells, op.arity);
    let mut out = Vec::new();
    let ev = Evaluator::new(&expr, p, BackendChoice::Cpu).unwrap();
    out.push((
        "cpu evaluator",
        cl::unpack(&ev.eval_soa(&inputs, n).unwrap(), n),
    ));
    let program = expr.scalar(p).unwrap();
    let interp: Vec<(f64, f64)> = cells
        .iter()
        .map(|(b, _)| ivjit::internals::scalar::interp::eval(&program, b).unwrap()[0])
        .collect();
    out.push(("reference interpreter", interp));
    if on_tape(op, &expr) {
        let tape = Tape::new(expr.ir()).unwrap_or_else(|e| panic!("{}: {e}", op.src));
        let iv = |(lo, hi): (f64, f64)| Interval { lo, hi };
        let res: Vec<(f64, f64)> = cells
            .iter()
            .map(|(b, _)| {
                let y = b.get(1).copied().unwrap_or((0.0, 0.0));
                let r = tape.enclosure(p, iv(b[0]), iv(y));
                (r.lo, r.hi)
            })
            .collect();
        out.push(("tape interpreter", res));
    }
    if !op.set_op && !op.enclosure_op && !op.reverse_op {
        for (name, form) in [
            ("mean-value form", expr.mean_value_form()),
            ("monotone form", expr.monotone_form()),
        ] {
            let form = form.unwrap();
            let ev = Evaluator::new(&form, p, BackendChoice::Cpu).unwrap();
            out.push((name, cl::unpack(&ev.eval_soa(&inputs, n).unwrap(), n)));
        }
    }
    out
}

/// The result of one operation in one precision: per engine, its tally.
struct OpResult {
    op: Op,
    fmt: Fmt,
    tallies: Vec<(&'static str, Tally)>,
}

fn run_op(op: &Op, fmt: Fmt, classes: &[Class]) -> OpResult {
    let cells = cl::cells(op, classes);
    let mut memo = Memo::default();
    let expected: Vec<Expected> = cells
        .iter()
        .map(|(b, _)| cl::expect(op, b, &mut memo))
        .collect();
    let expected: Vec<&Expected> = expected.iter().collect();
    let mut tallies: Vec<(&'static str, Tally)> = run_engines(op, fmt, &cells)
        .into_iter()
        .map(|(engine, results)| {
            // Tightness is tallied for the evaluator (the others give its bits, or are forms).
            let slack_for =
                |b: &[(f64, f64)]| engine == "cpu evaluator" && !cl::trig_index_inexact(op, fmt, b);
            let t = cl::tally(
                op, fmt, engine, classes, &cells, &expected, &results, slack_for,
            );
            (engine, t)
        })
        .collect();
    if op.arity == 1 && !op.set_op && !op.enclosure_op && !op.reverse_op {
        tallies.push((
            "gradient",
            gradient_tally(op, fmt, classes, &cells, &expected),
        ));
    }
    OpResult {
        op: op.clone(),
        fmt,
        tallies,
    }
}

/// The gradient program of a unary operation: its value output holds the range like f's, and
/// its derivative meets every difference quotient between witnesses where it claims f
/// continuous with a bounded derivative (`cl::check_derivative`).
fn gradient_tally(
    op: &Op,
    fmt: Fmt,
    classes: &[Class],
    cells: &[(Vec<(f64, f64)>, String)],
    expected: &[&Expected],
) -> Tally {
    let expr = Expression::parse(&op.src).unwrap();
    let (g, at) = expr.gradient().unwrap();
    let ev = Evaluator::new(&g, prec(fmt), BackendChoice::Cpu).unwrap();
    let n = cells.len();
    let out = ev.eval_soa(&cl::soa(cells, 1), n).unwrap();
    let col = |k: usize, i: usize| (out[2 * k * n + i], out[(2 * k + 1) * n + i]);
    let mut t = Tally::default();
    let mut quotients = 0usize;
    for (i, ((b, label), e)) in cells.iter().zip(expected).enumerate() {
        let value = col(at.value(0), i);
        let mut v = cl::check(op, b, e, value, fmt);
        v.slack = None;
        if v.failure.is_none() {
            let (flag, d) = (col(at.defined(0), i), col(at.partial(0, 0), i));
            v.failure = cl::check_derivative(op, e, flag, d);
            quotients += usize::from(flag == (1.0, 1.0) && d.0.is_finite() && d.1.is_finite());
        }
        let what = format!("{} ({fmt:?}, gradient) on {label}", op.src);
        t.add(cl::group_of(classes, label), &what, &v);
    }
    // (Derived functions built with an intersection never claim continuity: no quotient.)
    t.quotients = quotients;
    t
}

/// The largest slack (steps of the precision outside the witnesses' hull) of the CPU
/// evaluator's bounds, and the number of cells where it is unbounded (more than 2^40 steps:
/// an infinite or far-off bound where the witnesses are finite), per operation: as measured
/// when the matrix was written (2026-11-26), so that a change which loosens a result fails.
/// The default, 1 step, is the claim of `ivjit functions` on the CPU (correctly rounded
/// operations and correctly rounded point values one step outward; the witnesses' hull is
/// the true range up to the witnesses' distance from the extremes).
fn allowed_slack(op: &Op, fmt: Fmt) -> (u64, usize) {
    let f64_ = fmt == Fmt::F64;
    match op.oracle.as_str() {
        // Beyond |n| = 2^40: exp(n log x), the point functions' error times |n log x|.
        "pown:6755399441055744" => (2, 0),
        "pown:9007199254740991" | "pown:-9007199254740991" => (3, 0),
        // The derived functions: compositions of rigorous operations, a few steps wider; the
        // most at the binade 2^-1024 (2^-128 in f32), where 1/x reaches the top of the range
        // (measured with every binade edge, IVJIT_CLASSES_STRIDE=1).
        "sec" | "sech" => (3, 0),
        "csch" => (5, 0),
        "csc" | "cot" | "coth" => (8, 0),
        "acot" => (2, 0),
        "acoth" => (if f64_ { 2 } else { 3 }, 0),
        // asech and acsch on boxes reaching the subnormals: 1/x overflows and the log form
        // log1p(sqrt(...)) - log(x) takes its two terms' extremes at different ends (about
        // 0.19 absolute on [2^-1074, inf], [2^-149, inf]); acsch in f32 gives +inf there.
        "asech" if f64_ => (1_700_000_000_000, 0),
        "asech" => (24672, 0),
        "acsch" if f64_ => (2, 2),
        "acsch" => (2, 2),
        _ => (1, 0),
    }
}

#[test]
fn class_matrix_on_the_cpu_engines() {
    let ops = cl::selected_ops();
    let only_some = ops.len() < cl::ops().len();
    let t0 = std::time::Instant::now();
    let mut results: Vec<OpResult> = Vec::new();
    let mut ncells = 0usize;
    for fmt in [Fmt::F64, Fmt::F32] {
        let classes = cl::classes(fmt, cl::stride());
        let mut r: Vec<OpResult> = ops.par_iter().map(|op| run_op(op, fmt, &classes)).collect();
        ncells += r.iter().map(|x| x.tallies[0].1.cells).sum::<usize>();
        results.append(&mut r);
    }
    let quotients: usize = results
        .iter()
        .flat_map(|r| r.tallies.iter().map(|t| t.1.quotients))
        .sum();
    let mut failures = Vec::new();
    let mut slack_over = Vec::new();
    let mut per_engine: BTreeMap<&str, usize> = BTreeMap::new();
    for r in &results {
        for (engine, t) in &r.tallies {
            *per_engine.entry(engine).or_default() += t.cells;
            failures.extend(t.failures.iter().cloned());
        }
        let t = &r.tallies[0].1;
        let (allowed, allowed_unbounded) = allowed_slack(&r.op, r.fmt);
        let unbounded: usize = t.groups.values().map(|g| g.3).sum();
        if std::env::var_os("IVJIT_CLASSES_VERBOSE").is_some()
            && (t.max_slack, unbounded) != (allowed, allowed_unbounded)
        {
            println!(
                "measured {} ({:?}): slack {} unbounded {unbounded}; allowed {allowed} {allowed_unbounded}",
                r.op.src, r.fmt, t.max_slack
            );
        }
        if t.max_slack > allowed || unbounded > allowed_unbounded {
            slack_over.push(format!(
                "{} ({:?}): slack {} steps (allowed {allowed}), {unbounded} unbounded \
                 (allowed {allowed_unbounded}); worst: {}; unbounded: {:?}",
                r.op.src, r.fmt, t.max_slack, t.worst, t.unbounded
            ));
        }
    }
    let rows: Vec<(String, Fmt, &Tally)> = results
        .iter()
        .map(|r| (r.op.src.clone(), r.fmt, &r.tallies[0].1))
        .collect();
    let table = cl::report(&rows);
    if std::env::var_os("IVJIT_CLASSES_VERBOSE").is_some() {
        for r in &results {
            for u in &r.tallies[0].1.unbounded {
                println!("unbounded slack: {u}");
            }
        }
    }
    if let Ok(path) = std::env::var("IVJIT_CLASSES_OUT") {
        std::fs::write(&path, &table).unwrap();
    }
    if let Ok(path) = std::env::var("IVJIT_CLASSES_DOC") {
        let engines: Vec<String> = per_engine
            .iter()
            .map(|(e, n)| format!("{e} ({n} cells)"))
            .collect();
        cl::splice_section(
            &path,
            "cpu",
            &format!(
                "## Interval classes: CPU (class matrix)\n\n\
                 Generated by `tests/cpu/classes.rs` (`IVJIT_CLASSES_DOC=docs/conformance.md \
                 IVJIT_CLASSES_STRIDE={} cargo test --test cpu classes -- --nocapture`): every \
                 operator and function of `ivjit functions` on the interval classes of \
                 `tests/common/classes.rs`, each result checked against witness values of the \
                 rigorous oracles. Engines: {}; {quotients} derivatives checked against \
                 difference quotients. Failing cells: {}. The table is the CPU evaluator's; \
                 the other engines' failures would be listed here.\n\n{}\n\n{table}",
                cl::stride(),
                engines.join(", "),
                failures.len(),
                cl::LEGEND
            ),
        );
    }
    println!(
        "class matrix: {} operations x 2 precisions, {ncells} cells, engines {per_engine:?}, \
         {quotients} derivatives checked against difference quotients, {:.1} s",
        ops.len(),
        t0.elapsed().as_secs_f64()
    );
    assert!(
        only_some || quotients > 10_000,
        "the gradient's check ran on {quotients} cells"
    );
    assert!(
        failures.is_empty(),
        "{} failures (first {}):\n{}",
        failures.len(),
        failures.len().min(60),
        failures[..failures.len().min(60)].join("\n")
    );
    assert!(
        slack_over.is_empty(),
        "tightness below what was measured:\n{}\n\n{table}",
        slack_over.join("\n")
    );
}
