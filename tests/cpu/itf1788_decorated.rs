//! ITF1788 conformance of decorations: every decorated (and NaI) test vector of the operations
//! ivjit implements (the statements the undecorated harness, `itf1788.rs`, skips), evaluated
//! through the public API (`Expression::parse_decorated`, `Evaluator::eval_decorated`) on the
//! CPU and, with a GPU, on the GPU, in f64 and f32.
//!
//! A case **fails** when
//! * the expected result is NaI and ivjit's is not, or the other way round;
//! * ivjit's interval does not contain the expected one (or, in f64 on boxes that are the
//!   vector's, is not empty where the expected one is);
//! * ivjit's decoration is **stronger** than the expected one: it would claim a fact (defined,
//!   continuous) the function does not have on the box. Decorations only weaken as a box grows,
//!   so this is required also of the outward-rounded and f32 boxes, which contain the vector's;
//! * ivjit's decoration claims more than its own interval may carry (`com` on an unbounded or
//!   empty result, `def` or `dac` on an empty one).
//!
//! A **weaker** decoration is sound but loses a fact: it is counted per shape (the *weaker*
//! column). On the CPU in f64 none is allowed (`cpu_decorated_conformance` asserts 0); in f32 and
//! on the GPU a bound can overflow where the vector's does not (f32's range, CUDA's padded
//! elementary functions), which turns `com` into `dac`, so those are measured and listed.
//!
//! `IVJIT_CONFORMANCE_OUT=docs/conformance.md` writes the tables into that document (its
//! section "Decorations").

use crate::common::classes::splice_marked;
use crate::common::itl::DecoratedCase;
use crate::itf1788::{vectors, Shape};
use ivjit::{
    BackendChoice, DecoratedInterval, Decoration, Evaluator, Expression, Interval, Precision,
};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// One shape's tally.
#[derive(Default)]
struct Row {
    expression: String,
    cases: usize,
    /// Cases whose decoration is the expected one.
    exact: usize,
    /// Sound, but weaker than expected.
    weaker: usize,
    failures: Vec<String>,
    weaker_cases: Vec<String>,
}

struct Report {
    backend: &'static str,
    precision: Precision,
    rows: Vec<Row>,
}

impl Report {
    fn total(&self, f: impl Fn(&Row) -> usize) -> usize {
        self.rows.iter().map(f).sum()
    }
}

fn show(d: &DecoratedInterval) -> String {
    d.display(Precision::F64)
}

/// What is wrong with `got` for a case expecting `want` (`None`: nothing). `exact_box`: the
/// evaluated box is the vector's (so an empty expected result must be empty).
fn check(want: &DecoratedInterval, got: &DecoratedInterval, exact_box: bool) -> Option<String> {
    if want.is_nai() || got.is_nai() {
        return (want.is_nai() != got.is_nai()).then(|| "NaI mismatch".to_string());
    }
    let (w, g) = (want.interval, got.interval);
    if !g.contains_interval(&w) {
        return Some("the interval misses expected values".into());
    }
    if exact_box && w.is_empty() && !g.is_empty() {
        return Some("not empty where the expected result is".into());
    }
    if got.decoration > want.decoration {
        return Some(format!(
            "decoration {} is stronger than the expected {}",
            got.decoration, want.decoration
        ));
    }
    if got.decoration > Decoration::of(g) && got.decoration > Decoration::Trv {
        return Some(format!(
            "decoration {} on {g}, which cannot carry it",
            got.decoration
        ));
    }
    None
}

fn run(choice: BackendChoice, precision: Precision) -> Report {
    let mut groups: BTreeMap<Shape, Vec<(String, &DecoratedCase)>> = BTreeMap::new();
    for line in &vectors().lines {
        if let Some(case) = &line.decorated {
            let at = format!("{}:{} `{}`", line.file, line.line, line.text);
            groups.entry(Shape::of(line)).or_default().push((at, case));
        }
    }
    let mut rows = Vec::new();
    for (shape, cases) in groups {
        let source = shape.source();
        let mut row = Row {
            expression: source.clone(),
            cases: cases.len(),
            ..Row::default()
        };
        let expr = Expression::parse_decorated(&source)
            .unwrap_or_else(|e| panic!("{source}: does not compile decorated: {e}"));
        let eval = Evaluator::new(&expr, precision, choice)
            .unwrap_or_else(|e| panic!("{source}: no evaluator: {e}"));
        let nearest: Vec<Vec<DecoratedInterval>> = cases.iter().map(|c| c.1.args.clone()).collect();
        let outward: Vec<Vec<DecoratedInterval>> =
            cases.iter().map(|c| c.1.args_outward.clone()).collect();
        let got = eval
            .eval_decorated(&nearest)
            .unwrap_or_else(|e| panic!("{source}: {e}"));
        let got_outward = eval
            .eval_decorated(&outward)
            .unwrap_or_else(|e| panic!("{source}: {e}"));
        for (k, (at, case)) in cases.iter().enumerate() {
            let f32_box = |d: &DecoratedInterval| d.interval.to_f32_enclosure() == d.interval;
            let exact_box = case.inexact_args == 0
                && (precision == Precision::F64 || case.args.iter().all(f32_box));
            let (g, go) = (got[k][0], got_outward[k][0]);
            let want = case.expected;
            let problem = check(&want, &g, exact_box)
                .map(|p| format!("{at}: got {} — {p}", show(&g)))
                .or_else(|| {
                    check(&want, &go, false)
                        .map(|p| format!("{at}: outward box: got {} — {p}", show(&go)))
                });
            match problem {
                Some(p) => row.failures.push(p),
                None if g.decoration == want.decoration => row.exact += 1,
                None => {
                    row.weaker += 1;
                    row.weaker_cases.push(format!(
                        "{at}: got {}, expected {}",
                        show(&g),
                        show(&want)
                    ));
                }
            }
        }
        rows.push(row);
    }
    Report {
        backend: match choice {
            BackendChoice::Gpu => "GPU",
            _ => "CPU",
        },
        precision,
        rows,
    }
}

fn table(report: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "**{} backend, {}**: {} decorated cases, {} failing, {} with a weaker decoration than \
         expected, {} exactly as expected.\n",
        report.backend,
        report.precision.name(),
        report.total(|r| r.cases),
        report.total(|r| r.failures.len()),
        report.total(|r| r.weaker),
        report.total(|r| r.exact),
    );
    let _ = writeln!(s, "| expression | cases | failing | weaker | as expected |");
    let _ = writeln!(s, "|---|---|---|---|---|");
    for r in &report.rows {
        let _ = writeln!(
            s,
            "| `{}` | {} | {} | {} | {} |",
            r.expression,
            r.cases,
            r.failures.len(),
            r.weaker,
            r.exact
        );
    }
    let weaker: Vec<&String> = report.rows.iter().flat_map(|r| &r.weaker_cases).collect();
    if !weaker.is_empty() {
        let _ = writeln!(s, "\nWeaker decorations (sound; a fact not proven):\n");
        for w in weaker {
            let _ = writeln!(s, "- {w}");
        }
    }
    s
}

fn print_and_write(report: &Report, tag: &str) {
    let t = table(report);
    println!("{t}");
    if let Some(path) = std::env::var_os("IVJIT_CONFORMANCE_OUT") {
        let path = path.to_string_lossy().into_owned();
        splice_marked(
            &path,
            &format!("<!-- itf1788:decorated:{tag}:begin -->"),
            &format!("<!-- itf1788:decorated:{tag}:end -->"),
            &t,
        );
    }
}

fn assert_sound(report: &Report) {
    crate::common::itl::assert_no_failures(
        &format!(
            "{} {}, decorated cases",
            report.backend,
            report.precision.name()
        ),
        report.rows.iter().flat_map(|r| &r.failures),
    );
}

#[test]
fn cpu_decorated_conformance() {
    let report = run(BackendChoice::Cpu, Precision::F64);
    print_and_write(&report, "cpu-f64");
    assert_sound(&report);
    assert!(
        report.total(|r| r.cases) > 400,
        "the decorated vectors were not read"
    );
    // The CPU's bounds are the tightest or one step outward (elementary functions); a step
    // never turns a bounded result unbounded in these vectors, so every decoration is exact.
    let weaker: Vec<&String> = report.rows.iter().flat_map(|r| &r.weaker_cases).collect();
    assert!(
        weaker.is_empty(),
        "{} decorations weaker than expected:\n{weaker:#?}",
        weaker.len()
    );
}

#[test]
fn cpu_decorated_conformance_f32() {
    let report = run(BackendChoice::Cpu, Precision::F32);
    print_and_write(&report, "cpu-f32");
    assert_sound(&report);
}

fn gpu_decorated(precision: Precision, test: &str) {
    crate::common::gpu::require_gpu(test);
    let report = run(BackendChoice::Gpu, precision);
    let tag = match precision {
        Precision::F64 => "gpu-f64",
        Precision::F32 => "gpu-f32",
    };
    print_and_write(&report, tag);
    assert_sound(&report);
}

#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn gpu_decorated_conformance() {
    gpu_decorated(Precision::F64, "gpu_decorated_conformance");
}

#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn gpu_decorated_conformance_f32() {
    gpu_decorated(Precision::F32, "gpu_decorated_conformance_f32");
}

/// The checks themselves: a stronger decoration, a missed value and a NaI mismatch fail; a
/// weaker decoration passes.
#[test]
fn decorated_checks_can_fail() {
    let d = |t: &str| DecoratedInterval::parse(t).unwrap();
    let want = d("[1, 2]_dac");
    assert!(check(&want, &d("[1, 2]_dac"), true).is_none());
    assert!(check(&want, &d("[0, 2]_trv"), true).is_none());
    assert!(check(&want, &d("[1, 2]_com"), true).is_some());
    assert!(check(&want, &d("[1.5, 2]_dac"), true).is_some());
    assert!(check(&want, &DecoratedInterval::NAI, true).is_some());
    assert!(check(&DecoratedInterval::NAI, &want, true).is_some());
    let unbounded = DecoratedInterval {
        interval: Interval::new(1.0, f64::INFINITY).unwrap(),
        decoration: Decoration::Com,
    };
    assert!(check(&d("[1, 2]_com"), &unbounded, true).is_some());
}
