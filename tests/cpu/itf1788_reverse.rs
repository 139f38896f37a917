//! ITF1788 conformance of the reverse operations that are functions of the language (`sqrRev`,
//! `absRev`, `coshRev`, `pownRev`, `mulRev`, the periodic ones, `powRev1`, `powRev2`;
//! `src/lower/reverse.rs`): every vector of theirs,
//! undecorated and decorated, through the public API on the CPU and, with a GPU, on the GPU,
//! in f64 and f32. The one-argument forms are the two-argument ones with x = [entire]
//! (`sqrRev c` is `sqrRev(c, [entire])`, `mulRev b c` is `mulRev(b, c, [entire])`).
//!
//! Two checks, each able to fail: a result must hold the inner hull of the exact set for the
//! box evaluated (the vector's; in f32 rounded outward to f32), from the reverse oracle
//! (`tests/common/reverse_oracle.rs`: the definitions on astro-float enclosures of the
//! inverse functions) — a rigorous result always does; and in f64 it must be the vector's
//! interval within an ulp a bound (empty exactly where the vector is; where a point function
//! is called, acosh for coshRev, within that function's allowance, as the main harness has
//! it), so a result as wide as x fails. The vectors are not always the tightest (`pownRev [0, 2^-1074] -7`'s lower bound
//! is an ulp below it), so they are no containment oracle. Results equal to the vector's are
//! counted tight. Decorated statements: an `[nai]` argument gives NaI, anything else `trv` (the
//! vectors' answer), but for mulRevToPair's first result.
//!
//! `mulRevToPair(b, c)`'s two results are the functions `mulRevToPair1(b, c)` and
//! `mulRevToPair2(b, c)`, each statement run once for each, decorated ones included. The first
//! result is the quotient c / b where b does not hold 0, decorated as the division is (the
//! weakest of b's and c's decorations, dac where it is unbounded); elsewhere, and the second
//! result always, `trv`. Each case's decoration is checked against that rule, and a decorated
//! statement's against the vector's too.

use crate::common::itl::{Item, Raw};
use crate::common::reverse_oracle as rev;
use crate::itf1788::vectors;
use ivjit::{BackendChoice, DecoratedInterval, Evaluator, Expression, Interval, Precision};
use std::collections::BTreeMap;

/// The ITF1788 operations run here: (name, interval arguments, ivjit's function, whether the
/// statement's last argument x is implied [entire]).
const OPERATIONS: &[(&str, usize, &str, bool)] = &[
    ("sqrRev", 1, "sqrRev", true),
    ("sqrRevBin", 2, "sqrRev", false),
    ("absRev", 1, "absRev", true),
    ("absRevBin", 2, "absRev", false),
    ("coshRev", 1, "coshRev", true),
    ("coshRevBin", 2, "coshRev", false),
    ("pownRev", 1, "pownRev", true),
    ("pownRevBin", 2, "pownRev", false),
    ("mulRev", 2, "mulRev", true),
    ("mulRevTen", 3, "mulRev", false),
    ("sinRev", 1, "sinRev", true),
    ("sinRevBin", 2, "sinRev", false),
    ("cosRev", 1, "cosRev", true),
    ("cosRevBin", 2, "cosRev", false),
    ("tanRev", 1, "tanRev", true),
    ("tanRevBin", 2, "tanRev", false),
    ("powRev1", 3, "powRev1", false),
    ("powRev2", 3, "powRev2", false),
    // The pair's two results, each by its function (the statement read twice).
    ("mulRevToPair", 2, "mulRevToPair1", false),
    ("mulRevToPair", 2, "mulRevToPair2", false),
];

/// The ITF1788 operations this harness runs (the main harness lists them as run here).
pub(crate) fn operations() -> impl Iterator<Item = &'static str> {
    OPERATIONS.iter().map(|o| o.0)
}

fn pair(iv: &Interval) -> (f64, f64) {
    if iv.is_empty() {
        (f64::NAN, f64::NAN)
    } else {
        (iv.lo, iv.hi)
    }
}

fn show(b: (f64, f64)) -> String {
    if b.0.is_nan() {
        "[empty]".into()
    } else {
        format!("[{:e}, {:e}]", b.0, b.1)
    }
}

/// Whether `got` is `want` within `k` ulps a bound (both empty, or both not).
fn near(got: (f64, f64), want: (f64, f64), k: u32) -> bool {
    if got.0.is_nan() || want.0.is_nan() {
        return got.0.is_nan() && want.0.is_nan();
    }
    let (mut lo, mut hi) = want;
    for _ in 0..k {
        (lo, hi) = (lo.next_down(), hi.next_up());
    }
    got.0 >= lo && got.1 <= hi
}

/// The ulps a bound may lie outside the vector's in f64: 1 (the vectors are sometimes an ulp
/// wider than the tightest, and a result an ulp wider than that is still within one of the
/// tightest) where the program computes with correctly rounded operations and rootn (whose
/// bounds are verified with double-word powers); where it calls a point function (acosh for
/// coshRev), that function's allowance as the main harness states it: 1 on the CPU (CORE-MATH
/// stepped one ulp), 2e + 1 on the GPU with e the CUDA library's documented error.
fn allowance(
    program: &ivjit::internals::scalar::Program,
    choice: BackendChoice,
    function: &str,
) -> u32 {
    let fns = ivjit::internals::ptx::point_functions(program);
    let one = match (fns.is_empty(), choice) {
        (true, _) | (false, BackendChoice::Cpu) => 1,
        (false, _) => {
            let e = fns
                .iter()
                .map(|&f| ivjit::internals::ptx::cuda_max_ulps(f, Precision::F64))
                .max()
                .unwrap_or(0);
            2 * e + 1
        }
    };
    // powRev2's bounds are quotients of two logarithms' bounds, each within `one`, rounded
    // outward once more (its documented accuracy).
    if function == "powRev2" {
        2 * one + 1
    } else {
        one
    }
}

/// mulRevToPair(b, c)'s first interval's decoration (IEEE 1788 §10.5.5): where b does not hold
/// 0 the interval is the quotient c / b, decorated as the division is (the weakest of b's and
/// c's, and dac where the quotient is unbounded); elsewhere, and for an empty result, trv.
fn quotient_decoration(
    b: &DecoratedInterval,
    c: &DecoratedInterval,
    quotient: &Interval,
) -> ivjit::Decoration {
    let holds_zero = b.interval.lo <= 0.0 && b.interval.hi >= 0.0;
    if holds_zero || quotient.is_empty() {
        return ivjit::Decoration::Trv;
    }
    let bounded = quotient.lo.is_finite() && quotient.hi.is_finite();
    let own = if bounded {
        ivjit::Decoration::Com
    } else {
        ivjit::Decoration::Dac
    };
    own.min(b.decoration).min(c.decoration)
}

fn same(a: (f64, f64), b: (f64, f64)) -> bool {
    (a.0.is_nan() && b.0.is_nan()) || (a.0 == b.0 && a.1 == b.1)
}

/// A statement ready to run.
struct Case<'a> {
    raw: &'a Raw,
    /// The interval arguments, x = [entire] appended for a one-argument form.
    args: Vec<DecoratedInterval>,
    /// pownRev's exponent.
    n: Option<i64>,
    expected: DecoratedInterval,
}

/// The statements of one operation, and those not run (with why).
fn cases(
    op: &str,
    arity: usize,
    function: &str,
    implied_x: bool,
) -> (Vec<Case<'static>>, Vec<String>) {
    let mut run = Vec::new();
    let mut not_run = Vec::new();
    // Which of the statement's results the function computes, of how many.
    let (which, results) = match function {
        "mulRevToPair1" => (0, 2),
        "mulRevToPair2" => (1, 2),
        _ => (0, 1),
    };
    for raw in vectors().raw.iter().filter(|r| r.op == op) {
        let at = format!("{}:{} `{}`", raw.file, raw.line, raw.text);
        let mut args = Vec::new();
        let mut n = None;
        let mut shape_ok = true;
        for item in &raw.args {
            match item {
                Item::Interval { value, .. } => args.push(*value),
                Item::Number(v) if op.starts_with("pownRev") && n.is_none() => {
                    n = Some(*v as i64);
                }
                _ => shape_ok = false,
            }
        }
        let expected = match raw.results.get(which) {
            Some(Item::Interval { value, .. }) if raw.results.len() == results => Some(*value),
            _ => None,
        };
        shape_ok &= args.len() == arity && (n.is_some() == op.starts_with("pownRev"));
        match expected {
            Some(expected) if shape_ok => {
                if implied_x {
                    args.push(DecoratedInterval::parse("[entire]_dac").unwrap());
                }
                run.push(Case {
                    raw,
                    args,
                    n,
                    expected,
                })
            }
            _ => not_run.push(format!("{at}: not this operation's shape")),
        }
    }
    (run, not_run)
}

#[derive(Default)]
struct Row {
    op: &'static str,
    expression: String,
    cases: usize,
    decorated: usize,
    tight: usize,
    failures: Vec<String>,
    not_run: Vec<String>,
}

/// ivjit's expression for a statement: the function on variables, pownRev's exponent literal.
fn source(function: &str, n: Option<i64>) -> String {
    match (function, n) {
        ("mulRev", _) => "mulRev(b, c, x)".into(),
        ("powRev1", _) => "powRev1(b, c, x)".into(),
        ("powRev2", _) => "powRev2(a, c, x)".into(),
        ("mulRevToPair1" | "mulRevToPair2", _) => format!("{function}(b, c)"),
        (f, Some(n)) => format!("{f}(c, x, {n})"),
        (f, None) => format!("{f}(c, x)"),
    }
}

fn run(choice: BackendChoice, precision: Precision) -> Vec<Row> {
    let mut rows = Vec::new();
    for &(op, arity, function, implied_x) in OPERATIONS {
        let (cases, not_run) = cases(op, arity, function, implied_x);
        let mut row = Row {
            op,
            expression: match function {
                "pownRev" => "pownRev(c, x, n)".into(),
                f => source(f, None),
            },
            cases: cases.len(),
            decorated: cases.iter().filter(|c| c.raw.is_decorated()).count(),
            not_run,
            ..Row::default()
        };
        // One evaluator pair per expression (pownRev: per exponent).
        let mut by_source: BTreeMap<String, Vec<&Case>> = BTreeMap::new();
        for c in &cases {
            by_source.entry(source(function, c.n)).or_default().push(c);
        }
        for (src, cases) in by_source {
            let plain = Evaluator::new(&Expression::parse(&src).unwrap(), precision, choice)
                .unwrap_or_else(|e| panic!("{src}: {e}"));
            let decorated = Evaluator::new(
                &Expression::parse_decorated(&src).unwrap(),
                precision,
                choice,
            )
            .unwrap_or_else(|e| panic!("{src}: {e}"));
            let k = allowance(plain.program(), choice, function);
            // Variables in the expression's order (b, c, x by their first use).
            let vars = plain.program().var_names[..].to_vec();
            let order: Vec<usize> = vars
                .iter()
                .map(|v| match (function, v.as_str()) {
                    ("mulRev" | "powRev1" | "powRev2", "b" | "a") => 0,
                    ("mulRev" | "powRev1" | "powRev2", "c") => 1,
                    ("mulRev" | "powRev1" | "powRev2", _) => 2,
                    ("mulRevToPair1" | "mulRevToPair2", "b") => 0,
                    ("mulRevToPair1" | "mulRevToPair2", _) => 1,
                    (_, "c") => 0,
                    _ => 1,
                })
                .collect();
            let boxes: Vec<Vec<Interval>> = cases
                .iter()
                .map(|c| order.iter().map(|&k| c.args[k].interval).collect())
                .collect();
            let decorated_boxes: Vec<Vec<DecoratedInterval>> = cases
                .iter()
                .map(|c| order.iter().map(|&k| c.args[k]).collect())
                .collect();
            let plain_out = plain.eval_many(&boxes).expect("eval_many");
            let dec_out = decorated
                .eval_decorated(&decorated_boxes)
                .expect("eval_decorated");
            for ((case, got), got_dec) in cases.iter().zip(&plain_out).zip(&dec_out) {
                let at = format!("{}:{} `{}`", case.raw.file, case.raw.line, case.raw.text);
                let mut fail = |why: String| row.failures.push(format!("{at}: {why}"));
                let nai_in = case.args.iter().any(|a| a.is_nai());
                let want = pair(&case.expected.interval);
                let got_dec = got_dec[0];
                // The box evaluated (outward to f32 in f32) and the exact set's inner hull.
                let evaluated: Vec<(f64, f64)> = case
                    .args
                    .iter()
                    .map(|a| match precision {
                        Precision::F64 => pair(&a.interval),
                        Precision::F32 => pair(&a.interval.to_f32_enclosure()),
                    })
                    .collect();
                let inner = rev::inner(function, case.n.unwrap_or(0), &evaluated);
                let mut judge = |got: (f64, f64), what: &str, count: bool| {
                    if let Some(s) = &inner {
                        if !rev::holds(got, s) {
                            fail(format!(
                                "{what}got {}, misses points of {}",
                                show(got),
                                rev::describe(s)
                            ));
                            return;
                        }
                    }
                    // In f64, as tight as the vector (which may be an ulp wider than the
                    // tightest) within an ulp a bound; empty where it is.
                    if precision == Precision::F64 && !near(got, want, k) {
                        fail(format!(
                            "{what}got {}, the vector {}",
                            show(got),
                            show(want)
                        ));
                    } else if count && same(got, want) {
                        row.tight += 1;
                    } else if count && std::env::var_os("IVJIT_REV_TRACE").is_some() {
                        eprintln!("{precision:?} {at}: got {}, want {}", show(got), show(want));
                    }
                };
                if !case.raw.is_decorated() {
                    judge(pair(&got[0]), "", true);
                }
                if nai_in {
                    if !got_dec.is_nai() {
                        row.failures.push(format!(
                            "{at}: an [nai] argument must give NaI, got {got_dec:?}"
                        ));
                    }
                    continue;
                }
                judge(
                    pair(&got_dec.interval),
                    "decorated: ",
                    case.raw.is_decorated(),
                );
                let mut fail = |why: String| row.failures.push(format!("{at}: {why}"));
                let want_dec = if function == "mulRevToPair1" {
                    quotient_decoration(&case.args[0], &case.args[1], &case.expected.interval)
                } else {
                    ivjit::Decoration::Trv
                };
                if got_dec.decoration != want_dec {
                    fail(format!(
                        "decoration {}, want {want_dec}",
                        got_dec.decoration
                    ));
                }
                if case.raw.is_decorated() && case.expected.decoration != got_dec.decoration {
                    fail(format!(
                        "decoration {}, the vector's {}",
                        got_dec.decoration, case.expected.decoration
                    ));
                }
            }
        }
        rows.push(row);
    }
    rows
}

fn table(backend: &str, precision: Precision, rows: &[Row]) -> String {
    let total = |f: &dyn Fn(&Row) -> usize| rows.iter().map(f).sum::<usize>();
    let headline = format!(
        "**{backend} backend, {}**: {} cases ({} decorated), {} failing, {} tight (the \
         vector's interval exactly); every result holds the exact set's inner hull.",
        precision.name(),
        total(&|r| r.cases),
        total(&|r| r.decorated),
        total(&|r| r.failures.len()),
        total(&|r| r.tight),
    );
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.op.to_string(),
                format!("`{}`", r.expression),
                r.cases.to_string(),
                r.decorated.to_string(),
                r.tight.to_string(),
                r.failures.len().to_string(),
            ]
        })
        .collect();
    let not_run: Vec<&String> = rows.iter().flat_map(|r| &r.not_run).collect();
    let columns = [
        "ITF1788 op",
        "expression",
        "cases",
        "decorated",
        "tight",
        "failing",
    ];
    crate::common::itl::report_table(&headline, &columns, &cells, &not_run)
}

fn check(choice: BackendChoice, precision: Precision) {
    let backend = match choice {
        BackendChoice::Gpu => "GPU",
        _ => "CPU",
    };
    let rows = run(choice, precision);
    let t = table(backend, precision, &rows);
    let failures = rows.iter().flat_map(|r| &r.failures);
    crate::common::itl::publish("reverse", backend, precision, &t, failures);
    let cases: usize = rows.iter().map(|r| r.cases).sum();
    assert!(cases > 500, "only {cases} vectors were read");
}

#[test]
fn cpu_reverse_conformance() {
    check(BackendChoice::Cpu, Precision::F64);
}

#[test]
fn cpu_reverse_conformance_f32() {
    check(BackendChoice::Cpu, Precision::F32);
}

#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn gpu_reverse_conformance() {
    crate::common::gpu::require_gpu("gpu_reverse_conformance");
    check(BackendChoice::Gpu, Precision::F64);
}

#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn gpu_reverse_conformance_f32() {
    crate::common::gpu::require_gpu("gpu_reverse_conformance_f32");
    check(BackendChoice::Gpu, Precision::F32);
}
