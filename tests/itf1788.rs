//! ITF1788 conformance: every undecorated test vector of the operations ivjit implements, from
//! `$IVJIT_SHARED/itf1788/*.itl` (default `$CARGO_MANIFEST_DIR/../shared`), evaluated through the
//! public API (`Expression::parse`, `Evaluator::eval_many`) on the CPU backend and, when there is
//! a GPU, on the GPU backend.
//!
//! The vectors are the oracle: each expected result is the exact IEEE 1788 answer, rounded
//! outward to f64. A case fails when ivjit's result does not contain the expected interval, when
//! the result is not a valid interval, or when the expected result is empty and ivjit's is not.
//! Tightness is the distance, in f64 steps, by which each result bound lies outside the expected
//! bound; for the operations ivjit promises tightest results on (every one here except pown with
//! n outside -1..=2, which is computed by repeated directed products: `pown(x, -2)` is
//! `1 / sqr(x)`, two roundings) it must be zero.
//!
//! One expression is compiled per operation shape (`x + y`, `pown(x, -3)`, ...) and all of its
//! cases are evaluated as one batch.
//!
//! `cargo test --test itf1788 -- --nocapture` prints the per-operation table;
//! `IVJIT_CONFORMANCE_OUT=docs/conformance.md` also writes it as Markdown to that path.

// Only the ITL reader of tests/common is needed; including it alone keeps this test independent
// of the other shared helpers.
#[path = "common/itl.rs"]
mod itl;

use itl::{Case, Line, Outcome};
use ivjit::syntax::number::hexf64;
use ivjit::{BackendChoice, Evaluator, Expression, Interval, Precision};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

/// The command that regenerates docs/conformance.md (quoted in the document).
const REGENERATE: &str =
    "IVJIT_CONFORMANCE_OUT=docs/conformance.md cargo test --test itf1788 -- --nocapture";

// ---------------------------------------------------------------------------------------------
// Loading the vectors

/// All lines of supported operations from every `.itl` file, and the files read.
struct Vectors {
    files: Vec<String>,
    lines: Vec<Line>,
}

fn shared_dir() -> PathBuf {
    match std::env::var_os("IVJIT_SHARED") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared"),
    }
}

fn vectors() -> &'static Vectors {
    static V: OnceLock<Vectors> = OnceLock::new();
    V.get_or_init(|| {
        let dir = shared_dir().join("itf1788");
        let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| {
            panic!(
                "cannot read the ITF1788 vectors in {}: {e} (set IVJIT_SHARED to the folder \
                 that contains itf1788/)",
                dir.display()
            )
        });
        let mut paths: Vec<PathBuf> = entries
            .map(|e| e.expect("reading the itf1788 folder").path())
            .filter(|p| p.extension().is_some_and(|x| x == "itl"))
            .collect();
        paths.sort();
        assert!(!paths.is_empty(), "no .itl files in {}", dir.display());
        let mut files = Vec::new();
        let mut lines = Vec::new();
        for p in &paths {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(p)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", p.display()));
            lines.extend(itl::parse_file(&name, &text).unwrap_or_else(|e| panic!("{e}")));
            files.push(name);
        }
        Vectors { files, lines }
    })
}

// ---------------------------------------------------------------------------------------------
// Shapes: one ivjit expression per ITF1788 operation (and pown exponent)

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Shape {
    /// Position of the operation in `itl::SUPPORTED` (table order).
    order: usize,
    exponent: Option<i64>,
}

impl Shape {
    fn of(line: &Line) -> Shape {
        let order = itl::SUPPORTED
            .iter()
            .position(|(op, _)| *op == line.op)
            .expect("supported operation");
        Shape {
            order,
            exponent: line.exponent,
        }
    }

    fn op(&self) -> &'static str {
        itl::SUPPORTED[self.order].0
    }

    /// The ivjit expression; its variables appear in the order x, y, z.
    fn source(&self) -> String {
        match self.op() {
            "add" => "x + y".into(),
            "sub" => "x - y".into(),
            "mul" => "x * y".into(),
            "div" => "x / y".into(),
            "neg" => "-x".into(),
            "pos" => "x".into(),
            "recip" => "recip(x)".into(),
            "sqr" => "sqr(x)".into(),
            "sqrt" => "sqrt(x)".into(),
            "pown" => format!("pown(x, {})", self.exponent.expect("pown exponent")),
            "abs" => "abs(x)".into(),
            "min" => "min(x, y)".into(),
            "max" => "max(x, y)".into(),
            "fma" => "fma(x, y, z)".into(),
            "convexHull" => "hull(x, y)".into(),
            "intersection" => "intersect(x, y)".into(),
            other => unreachable!("no expression for {other}"),
        }
    }

    /// Whether ivjit promises the tightest (correctly rounded) result.
    fn tight(&self) -> bool {
        match self.exponent {
            Some(n) => (-1..=2).contains(&n),
            None => true,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Checking one result

/// Position of `x` on the f64 number line: consecutive doubles differ by 1, both zeros are 0,
/// and the infinities are one step beyond the largest finite values.
fn ordinal(x: f64) -> i64 {
    if x == 0.0 {
        0
    } else if x > 0.0 {
        x.to_bits() as i64
    } else {
        -((-x).to_bits() as i64)
    }
}

/// f64 steps from `a` up to `b` (`a <= b`).
fn steps(a: f64, b: f64) -> u64 {
    (ordinal(b) - ordinal(a)) as u64
}

fn fmt_iv(iv: &Interval) -> String {
    if iv.is_empty() {
        "[empty]".into()
    } else {
        format!("[{}, {}]", hexf64(iv.lo), hexf64(iv.hi))
    }
}

#[derive(Debug, PartialEq)]
enum Verdict {
    /// Contained; ulp excess of the lower and upper bound.
    Pass { lo: u64, hi: u64 },
    /// The case fails, for the reason given.
    Fail(&'static str),
}

/// Compares ivjit's result with the exact expected interval.
fn check(expected: &Interval, got: &Interval) -> Verdict {
    if got.is_empty() {
        return if expected.is_empty() {
            Verdict::Pass { lo: 0, hi: 0 }
        } else {
            Verdict::Fail("result is empty, expected is not")
        };
    }
    if got.lo.is_nan()
        || got.hi.is_nan()
        || got.lo > got.hi
        || got.lo == f64::INFINITY
        || got.hi == f64::NEG_INFINITY
    {
        return Verdict::Fail("result is not a valid interval");
    }
    if expected.is_empty() {
        return Verdict::Fail("expected is empty, result is not");
    }
    if !(got.lo <= expected.lo && expected.hi <= got.hi) {
        return Verdict::Fail("result does not contain the expected interval");
    }
    Verdict::Pass {
        lo: steps(got.lo, expected.lo),
        hi: steps(expected.hi, got.hi),
    }
}

// ---------------------------------------------------------------------------------------------
// Running the harness

#[derive(Debug, Default)]
struct Row {
    expression: String,
    op: &'static str,
    tight: bool,
    cases: usize,
    skipped: usize,
    failures: usize,
    not_tight: usize,
    max_lo: u64,
    max_hi: u64,
    excess_sum: f64,
    bounds: usize,
    /// Cases with a literal that is not exactly representable (read as the nearest double).
    inexact: usize,
    /// Cases also run with their inexact argument bounds rounded outward (containment only).
    outward: usize,
}

impl Row {
    fn mean(&self) -> f64 {
        if self.bounds == 0 {
            0.0
        } else {
            self.excess_sum / self.bounds as f64
        }
    }

    /// Whether the row meets its requirement.
    fn ok(&self) -> bool {
        self.failures == 0 && (!self.tight || self.not_tight == 0)
    }
}

struct Report {
    backend: &'static str,
    rows: Vec<Row>,
    /// One line per failing case (containment, validity, emptiness, or tightness where required).
    problems: Vec<String>,
    /// The largest excesses of the shapes where tightness is only measured.
    loose: Vec<String>,
}

impl Report {
    fn total(&self, f: impl Fn(&Row) -> usize) -> usize {
        self.rows.iter().map(f).sum()
    }
}

fn describe(line: &Line, case: &Case) -> String {
    let args: Vec<String> = case.args.iter().map(fmt_iv).collect();
    format!(
        "{}:{} ({}) `{}`: {} {}",
        line.file,
        line.line,
        line.testcase,
        line.text,
        line.op,
        args.join(" ")
    )
}

fn run(choice: BackendChoice, backend: &'static str) -> Report {
    let v = vectors();
    type Group<'a> = (Vec<(&'a Line, &'a Case)>, usize);
    let mut groups: BTreeMap<Shape, Group> = BTreeMap::new();
    for line in &v.lines {
        let g = groups.entry(Shape::of(line)).or_default();
        match &line.outcome {
            Outcome::Case(c) => g.0.push((line, c)),
            Outcome::Skipped(_) => g.1 += 1,
        }
    }
    let mut report = Report {
        backend,
        rows: Vec::new(),
        problems: Vec::new(),
        loose: Vec::new(),
    };
    for (shape, (cases, skipped)) in &groups {
        let source = shape.source();
        let mut row = Row {
            expression: source.clone(),
            op: shape.op(),
            tight: shape.tight(),
            cases: cases.len(),
            skipped: *skipped,
            inexact: cases
                .iter()
                .filter(|(_, c)| c.inexact_args + c.inexact_expected > 0)
                .count(),
            ..Row::default()
        };
        if cases.is_empty() {
            report.rows.push(row);
            continue;
        }
        let boxes: Vec<Vec<Interval>> = cases.iter().map(|(_, c)| c.args.clone()).collect();
        let results = match evaluate(&source, choice, &boxes) {
            Ok(r) => r,
            Err(e) => {
                row.failures = cases.len();
                report
                    .problems
                    .push(format!("[{backend}] `{source}`: cannot evaluate: {e}"));
                report.rows.push(row);
                continue;
            }
        };
        let mut worst: Option<(u64, String)> = None;
        for ((line, case), got) in cases.iter().zip(&results) {
            let what = || {
                format!(
                    "[{backend}] {}\n    expected {}\n    got      {}",
                    describe(line, case),
                    fmt_iv(&case.expected),
                    fmt_iv(got)
                )
            };
            match check(&case.expected, got) {
                Verdict::Fail(reason) => {
                    row.failures += 1;
                    report
                        .problems
                        .push(format!("{}\n    FAIL: {reason}", what()));
                }
                Verdict::Pass { lo, hi } => {
                    if !case.expected.is_empty() {
                        row.bounds += 2;
                        row.excess_sum += lo as f64 + hi as f64;
                    }
                    row.max_lo = row.max_lo.max(lo);
                    row.max_hi = row.max_hi.max(hi);
                    if lo > 0 || hi > 0 {
                        row.not_tight += 1;
                        let msg = format!("{}\n    excess: lo {lo} ulp, hi {hi} ulp", what());
                        if row.tight {
                            report
                                .problems
                                .push(format!("{msg}\n    FAIL: not the tightest result"));
                        } else if worst.as_ref().is_none_or(|(w, _)| lo.max(hi) > *w) {
                            worst = Some((lo.max(hi), msg));
                        }
                    }
                }
            }
        }
        if let Some((_, msg)) = worst {
            report.loose.push(msg);
        }
        // The cases with inexact argument literals once more, on the outward-rounded boxes
        // (supersets of the nearest-reading boxes): the result must still contain `expected`.
        let outward: Vec<&(&Line, &Case)> =
            cases.iter().filter(|(_, c)| c.inexact_args > 0).collect();
        row.outward = outward.len();
        if !outward.is_empty() {
            let boxes: Vec<Vec<Interval>> = outward
                .iter()
                .map(|(_, c)| c.args_outward.clone())
                .collect();
            match evaluate(&source, choice, &boxes) {
                Err(e) => {
                    row.failures += outward.len();
                    report
                        .problems
                        .push(format!("[{backend}] `{source}`: cannot evaluate: {e}"));
                }
                Ok(results) => {
                    for ((line, case), got) in outward.iter().zip(&results) {
                        if let Verdict::Fail(reason) = check(&case.expected, got) {
                            let args: Vec<String> = case.args_outward.iter().map(fmt_iv).collect();
                            row.failures += 1;
                            report.problems.push(format!(
                                "[{backend}] {}:{} `{}` with outward-rounded arguments {}\n    \
                                 expected {}\n    got      {}\n    FAIL: {reason}",
                                line.file,
                                line.line,
                                line.text,
                                args.join(" "),
                                fmt_iv(&case.expected),
                                fmt_iv(got)
                            ));
                        }
                    }
                }
            }
        }
        report.rows.push(row);
    }
    report
}

/// Compiles `source` and evaluates every box as one batch; one output interval per box.
fn evaluate(
    source: &str,
    choice: BackendChoice,
    boxes: &[Vec<Interval>],
) -> Result<Vec<Interval>, String> {
    let expr = Expression::parse(source).map_err(|e| format!("compile: {e}"))?;
    let arity = boxes[0].len();
    let names = ["x", "y", "z"];
    if expr.vars() != &names[..arity] {
        return Err(format!(
            "variables are {:?}, expected {:?}",
            expr.vars(),
            &names[..arity]
        ));
    }
    if expr.n_outputs() != 1 {
        return Err(format!("{} outputs, expected 1", expr.n_outputs()));
    }
    let eval = Evaluator::new(&expr, Precision::F64, choice).map_err(|e| format!("{e}"))?;
    let out = eval
        .eval_many(boxes)
        .map_err(|e| format!("eval_many: {e}"))?;
    if out.len() != boxes.len() || out.iter().any(|r| r.len() != 1) {
        return Err("eval_many returned the wrong shape".into());
    }
    Ok(out.into_iter().map(|r| r[0]).collect())
}

// ---------------------------------------------------------------------------------------------
// Reporting

fn text_table(report: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "ITF1788 conformance, {} backend, f64 ({} files)",
        report.backend,
        vectors().files.len()
    );
    let _ = writeln!(
        s,
        "{:<18} {:<12} {:>6} {:>7} {:>7} {:>7} {:>8} {:>9} {:>11} {:>11} {:>9}  required",
        "expression",
        "op",
        "cases",
        "skipped",
        "inexact",
        "outward",
        "failures",
        "not tight",
        "max ulp lo",
        "max ulp hi",
        "mean ulp",
    );
    for r in &report.rows {
        let _ = writeln!(
            s,
            "{:<18} {:<12} {:>6} {:>7} {:>7} {:>7} {:>8} {:>9} {:>11} {:>11} {:>9.3}  {}{}",
            r.expression,
            r.op,
            r.cases,
            r.skipped,
            r.inexact,
            r.outward,
            r.failures,
            r.not_tight,
            r.max_lo,
            r.max_hi,
            r.mean(),
            if r.tight { "tightest" } else { "containment" },
            if r.ok() { "" } else { "  <-- FAILS" }
        );
    }
    let _ = writeln!(
        s,
        "total: {} cases run ({} with inexact literals, {} of them also run with outward-rounded \
         arguments), {} skipped (decorated or NaI), {} failing cases, {} failing rows",
        report.total(|r| r.cases),
        report.total(|r| r.inexact),
        report.total(|r| r.outward),
        report.total(|r| r.skipped),
        report.problems.len(),
        report.rows.iter().filter(|r| !r.ok()).count(),
    );
    s
}

fn markdown_section(report: &Report, heading: &str, device: Option<&str>) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "## {heading}\n");
    if let Some(d) = device {
        let _ = writeln!(s, "Device: {d}.\n");
    }
    let _ = writeln!(
        s,
        "{} cases run ({} with a literal that is not exactly representable, {} of them \
         also run with outward-rounded arguments), {} lines skipped (decorated or NaI); \
         {} operation shapes, {} failing; {} failing cases.\n",
        report.total(|r| r.cases),
        report.total(|r| r.inexact),
        report.total(|r| r.outward),
        report.total(|r| r.skipped),
        report.rows.len(),
        report.rows.iter().filter(|r| !r.ok()).count(),
        report.problems.len(),
    );
    s.push_str(
        "| expression | ITF1788 op | cases | skipped | inexact | outward | failures | \
         not tightest | max ulp lo | max ulp hi | mean ulp/bound | required | status |\n",
    );
    s.push_str("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|---|\n");
    for r in &report.rows {
        let _ = writeln!(
            s,
            "| `{}` | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.3} | {} | {} |",
            r.expression,
            r.op,
            r.cases,
            r.skipped,
            r.inexact,
            r.outward,
            r.failures,
            r.not_tight,
            r.max_lo,
            r.max_hi,
            r.mean(),
            if r.tight { "tightest" } else { "containment" },
            if r.ok() { "pass" } else { "**FAIL**" }
        );
    }
    s.push('\n');
    if report.problems.is_empty() {
        s.push_str("No failing case.\n");
    } else {
        let _ = writeln!(s, "Failing cases ({}):\n\n```", report.problems.len());
        for p in &report.problems {
            let _ = writeln!(s, "{p}");
        }
        s.push_str("```\n");
    }
    if !report.loose.is_empty() {
        s.push_str(
            "\nLargest excess per shape where only containment is required (bounds in hex):\n\n```\n",
        );
        for p in &report.loose {
            let _ = writeln!(s, "{p}");
        }
        s.push_str("```\n");
    }
    s
}

const CPU_BEGIN: &str = "<!-- itf1788:cpu:begin -->";
const CPU_END: &str = "<!-- itf1788:cpu:end -->";
const GPU_BEGIN: &str = "<!-- itf1788:gpu:begin -->";
const GPU_END: &str = "<!-- itf1788:gpu:end -->";

fn preamble() -> String {
    let files = &vectors().files;
    format!(
        "This document is the ITF1788 conformance report of ivjit, generated by the test \
         `tests/itf1788.rs` from the IEEE 1788 test vectors in `../shared/itf1788/*.itl` \
         (every undecorated vector of add, sub, mul, div, neg, pos, recip, sqr, sqrt, pown, abs, \
         min, max, fma, convexHull and intersection); do not edit it by hand, regenerate it with \
         `{REGENERATE}`.\n\n\
         ## Method\n\n\
         Each operation shape becomes one ivjit expression (pown once per exponent), compiled \
         for f64 and evaluated on all of its vectors as one batch with `Evaluator::eval_many`. \
         The vectors are the oracle: their results are the tightest f64 enclosures of the exact \
         IEEE 1788 answers. A case **fails** when the \
         result does not contain the expected interval, is not a valid interval, or is not empty \
         while the expected result is. **Tightness** is measured per bound in f64 steps (ulps) \
         by which the result lies outside the expected bound (the infinities count as one step \
         beyond the largest finite doubles); 0 is the tightest result. The required column says \
         what the test asserts: *tightest* (0 ulp, every operation that ivjit rounds correctly, \
         and pown with n in -1..=2) or *containment* (other pown exponents: the excess is only \
         reported). Lines with decorations (`_com`, `_dac`, `_def`, `_trv`) or `[nai]` are \
         counted as skipped: ivjit has no decorations yet.\n\n\
         **Inexact literals.** A few literals are not binary64 values (the *inexact* column \
         counts the cases). A decimal one (`[13.1,13.1]`, `abs [1.1,2.1] = [1.1,2.1]`, mpfi's \
         `-8.0e-17`) is read as the *nearest* double: the vectors were converted from C/C++ test \
         suites where such a literal is the nearest double, and the expected results are the \
         tightest answers for those doubles (reading them outward instead makes correct tight \
         results look wrong, e.g. mpfi's `add [-infinity, 0.0] [d, d] = [-infinity, -8.0e-17]` \
         whose answer is exactly `d`). A hex one (mpfi states some bounds with 54 bits) is a real \
         bound of the answer and is rounded outward. Every case with an inexact argument literal \
         is also run on the outward-rounded box (the *outward* column), which contains the \
         nearest-reading box, and its result must still contain the expected interval.\n\n\
         Files read ({}): {}.\n",
        files.len(),
        files
            .iter()
            .map(|f| format!("`{f}`"))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

fn default_gpu_section() -> String {
    "## GPU\n\n\
     This section is filled from a GPU run recorded in `docs/gpu-runs.md`: on the GPU machine \
     the same test (`gpu_conformance` in `tests/itf1788.rs`) runs every vector with \
     `BackendChoice::Gpu` and makes the same assertions; with `IVJIT_CONFORMANCE_OUT` set it \
     replaces this section with its table and the device it ran on. Without a GPU the test \
     prints `skipped: no GPU (reason)` and leaves this section as it is.\n"
        .to_string()
}

fn default_cpu_section() -> String {
    format!("## CPU (f64)\n\nNot generated yet: run `{REGENERATE}`.\n")
}

/// The text between `begin` and `end` markers of an existing document.
fn section<'a>(doc: &'a str, begin: &str, end: &str) -> Option<&'a str> {
    let start = doc.find(begin)? + begin.len();
    let stop = doc[start..].find(end)? + start;
    Some(doc[start..stop].trim_matches('\n'))
}

/// Writes (or updates) the Markdown document at `$IVJIT_CONFORMANCE_OUT`, replacing the CPU or
/// the GPU section and keeping the other one.
fn write_markdown(cpu: Option<String>, gpu: Option<String>) {
    let Some(path) = std::env::var_os("IVJIT_CONFORMANCE_OUT") else {
        return;
    };
    // The CPU and GPU tests run in parallel threads of this process.
    static LOCK: Mutex<()> = Mutex::new(());
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let old = std::fs::read_to_string(&path).unwrap_or_default();
    let cpu = cpu
        .or_else(|| section(&old, CPU_BEGIN, CPU_END).map(str::to_string))
        .unwrap_or_else(default_cpu_section);
    let gpu = gpu
        .or_else(|| section(&old, GPU_BEGIN, GPU_END).map(str::to_string))
        .unwrap_or_else(default_gpu_section);
    let doc = format!(
        "{}\n{CPU_BEGIN}\n{}\n{CPU_END}\n\n{GPU_BEGIN}\n{}\n{GPU_END}\n",
        preamble(),
        cpu.trim_end(),
        gpu.trim_end()
    );
    std::fs::write(&path, doc).unwrap_or_else(|e| {
        panic!(
            "cannot write IVJIT_CONFORMANCE_OUT={}: {e}",
            PathBuf::from(&path).display()
        )
    });
    println!("wrote {}", PathBuf::from(&path).display());
}

/// The assertions shared by both backends.
fn assert_report(report: &Report) {
    // The harness must have tested something in every operation.
    for (op, _) in itl::SUPPORTED {
        let run: usize = report
            .rows
            .iter()
            .filter(|r| r.op == *op)
            .map(|r| r.cases)
            .sum();
        assert!(run > 0, "no ITF1788 case of {op} was run");
    }
    let total = report.total(|r| r.cases);
    assert!(
        total >= 1500,
        "only {total} cases run; the vectors hold about 2000"
    );
    let failing: Vec<&str> = report
        .rows
        .iter()
        .filter(|r| !r.ok())
        .map(|r| r.expression.as_str())
        .collect();
    assert!(
        failing.is_empty(),
        "[{}] {} failing case(s) in {:?}:\n{}",
        report.backend,
        report.problems.len(),
        failing,
        report.problems.join("\n")
    );
    assert!(report.problems.is_empty());
}

fn print_report(report: &Report) {
    println!("{}", text_table(report));
    for p in &report.problems {
        println!("{p}");
    }
    if !report.loose.is_empty() {
        println!("largest excess per containment-only shape:");
        for p in &report.loose {
            println!("{p}");
        }
    }
}

#[test]
fn cpu_conformance() {
    let report = run(BackendChoice::Cpu, "cpu");
    print_report(&report);
    write_markdown(Some(markdown_section(&report, "CPU (f64)", None)), None);
    assert_report(&report);
}

#[test]
fn gpu_conformance() {
    let Some(info) = ivjit::gpu::require_gpu_or_skip("gpu_conformance") else {
        println!("gpu_conformance: skipped: no GPU (see stderr for the reason)");
        return;
    };
    let report = run(BackendChoice::Gpu, "gpu");
    print_report(&report);
    write_markdown(
        None,
        Some(markdown_section(&report, "GPU", Some(&info.to_string()))),
    );
    assert_report(&report);
}

// ---------------------------------------------------------------------------------------------
// Tests of the harness itself: the reader and the checker must be able to fail.

#[test]
fn reader_handles_the_itl_variety() {
    let text = "/* header\n with ; and { } */\n\
        testcase t1 {\n\
        \x20   add [1.0,2.0] [-0X1.8P+1, 0x10p0] = [-0x1p1, 18]; // comment ;\n\
        \x20   pown [-infinity,-0.0] -3 = [0.0, infinity];\n\
        \x20   sqr [1.0,2.0]_com = [1.0,4.0]_com;\n\
        \x20   pos [nai] = [nai];\n\
        \x20   intersection [empty] [entire] = [empty];\n\
        \x20   mul [0.1, 0.1] [1,1] = [0.1,0.1] signal Nothing;\n\
        \x20   add [0x123456789abcdfp-56, 1] [3.5, 3.5] = [0x3923456789abcdp-52, 4.5];\n\
        \x20   sin [1.0,2.0] = [0.8,1.0];\n\
        \x20   dot_nearest {1.0, 2.0} {1.0, 2.0} = 5.0;\n\
        \x20   b-textToInterval \"[1;2]\" = [1.0,2.0];\n\
        }\n";
    let lines = itl::parse_file("t.itl", text).unwrap();
    let ops: Vec<&str> = lines.iter().map(|l| l.op.as_str()).collect();
    assert_eq!(
        ops,
        ["add", "pown", "sqr", "pos", "intersection", "mul", "add"]
    );
    assert_eq!(lines[0].line, 4);
    assert_eq!(lines[0].testcase, "t1");
    let Outcome::Case(add) = &lines[0].outcome else {
        panic!("add must be a case")
    };
    assert_eq!((add.args[0].lo, add.args[0].hi), (1.0, 2.0));
    assert_eq!((add.args[1].lo, add.args[1].hi), (-3.0, 16.0));
    assert_eq!((add.expected.lo, add.expected.hi), (-2.0, 18.0));
    assert_eq!((add.inexact_args, add.inexact_expected), (0, 0));
    assert_eq!(add.args_outward[1].lo, -3.0);
    assert_eq!(lines[1].exponent, Some(-3));
    let Outcome::Case(pown) = &lines[1].outcome else {
        panic!("pown must be a case")
    };
    assert_eq!(pown.args[0].lo, f64::NEG_INFINITY);
    assert!(pown.args[0].hi == 0.0 && pown.args[0].hi.is_sign_negative());
    assert!(matches!(
        lines[2].outcome,
        Outcome::Skipped("decorated or NaI")
    ));
    assert!(matches!(
        lines[3].outcome,
        Outcome::Skipped("decorated or NaI")
    ));
    let Outcome::Case(inter) = &lines[4].outcome else {
        panic!("intersection must be a case")
    };
    assert!(inter.args[0].is_empty() && inter.expected.is_empty());
    assert_eq!(inter.args[1].lo, f64::NEG_INFINITY);
    let Outcome::Case(mul) = &lines[5].outcome else {
        panic!("mul must be a case")
    };
    // 0.1 is read as the nearest double, and for the outward boxes rounded outward.
    assert_eq!((mul.inexact_args, mul.inexact_expected), (2, 2));
    assert!(mul.args[0].lo == 0.1 && mul.args[0].hi == 0.1);
    assert!(mul.expected.lo == 0.1 && mul.expected.hi == 0.1);
    let (lo, hi) = (mul.args_outward[0].lo, mul.args_outward[0].hi);
    assert!(lo < 0.1 && hi == 0.1 && lo.next_up() == hi);
    assert_eq!(mul.args_outward[1].lo, 1.0);
    // An inexact hex literal is a real bound: rounded outward in both readings.
    let Outcome::Case(hex) = &lines[6].outcome else {
        panic!("add must be a case")
    };
    assert_eq!(hex.inexact_expected, 1);
    // 0x3923456789abcd has 54 bits; the double below it is 0x3923456789abcc (exact, even).
    assert_eq!(hex.expected.lo, 0x3923456789abcc_u64 as f64 / 2f64.powi(52));
    // Malformed lines of supported operations are errors, not silent skips.
    assert!(itl::parse_file("t.itl", "testcase t { add [1,2] = [1,2]; }").is_err());
    assert!(itl::parse_file("t.itl", "testcase t { pown [1,2] x = [1,2]; }").is_err());
    assert!(itl::parse_file("t.itl", "testcase t { neg [2,1] = [-1,-2]; }").is_err());
}

#[test]
fn vectors_are_read() {
    let v = vectors();
    let mut per_op: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for l in &v.lines {
        let e = per_op.entry(l.op.as_str()).or_default();
        match l.outcome {
            Outcome::Case(_) => e.0 += 1,
            Outcome::Skipped(_) => e.1 += 1,
        }
    }
    println!(
        "{} files; per op (cases, skipped): {per_op:?}",
        v.files.len()
    );
    for (op, _) in itl::SUPPORTED {
        assert!(per_op.get(op).is_some_and(|c| c.0 > 0), "no case of {op}");
    }
    let total: usize = per_op.values().map(|c| c.0).sum();
    assert!(total >= 1500, "only {total} cases");
}

#[test]
fn checker_can_fail() {
    let iv = |lo, hi| Interval::new(lo, hi).unwrap();
    let up = |x: f64| f64::from_bits(x.to_bits() + 1);
    let down = |x: f64| f64::from_bits(x.to_bits() - 1);
    assert_eq!(
        check(&iv(1.0, 2.0), &iv(1.0, 2.0)),
        Verdict::Pass { lo: 0, hi: 0 }
    );
    assert!(matches!(
        check(&iv(1.0, 2.0), &iv(up(1.0), 2.0)),
        Verdict::Fail(_)
    ));
    assert!(matches!(
        check(&iv(1.0, 2.0), &Interval::EMPTY),
        Verdict::Fail(_)
    ));
    assert!(matches!(
        check(&Interval::EMPTY, &iv(1.0, 2.0)),
        Verdict::Fail(_)
    ));
    assert!(matches!(
        check(&iv(1.0, 2.0), &Interval { lo: 3.0, hi: 0.0 }),
        Verdict::Fail(_)
    ));
    assert_eq!(
        check(&Interval::EMPTY, &Interval::EMPTY),
        Verdict::Pass { lo: 0, hi: 0 }
    );
    assert_eq!(
        check(&iv(1.0, 2.0), &iv(down(0.5), up(up(2.0)))),
        Verdict::Pass {
            lo: steps(down(0.5), 1.0),
            hi: 2
        }
    );
    // Signed zeros are the same point; the infinities are one step past the largest doubles.
    assert_eq!(steps(-0.0, 0.0), 0);
    assert_eq!(steps(-f64::MIN_POSITIVE * f64::EPSILON, 0.0), 1);
    assert_eq!(steps(f64::MAX, f64::INFINITY), 1);
    assert_eq!(steps(-up(1.0), -1.0), 1);
    assert_eq!(
        check(&iv(-0.0, 0.0), &iv(0.0, -0.0)),
        Verdict::Pass { lo: 0, hi: 0 }
    );
    assert_eq!(
        check(&iv(1.0, f64::MAX), &iv(1.0, f64::INFINITY)),
        Verdict::Pass { lo: 0, hi: 1 }
    );
}
