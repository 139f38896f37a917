//! ITF1788 conformance of the operations on an argument's enclosure: the numeric functions
//! (`inf`, `sup`, `mid`, `rad`, `wid`, `mag`, `mig`, and `midRad` as `mid(x), rad(x)`) and the
//! cancellative operations (`cancelMinus`, `cancelPlus`), every vector of theirs, undecorated
//! and decorated, through the public API on the CPU and, with a GPU, on the GPU, in f64 and
//! f32.
//!
//! These operations are not functions of points, so a wider box is not a safe substitute (the
//! width of a wider box is larger; `cancelMinus` shrinks as y grows): a result must be
//! **exactly** the answer for the box that was evaluated. The answer comes from the exact
//! oracle (`tests/common/enclosure_oracle.rs`: the definitions in rational arithmetic, rounded
//! once in the format), which in f64 must also agree with every vector's expected value (the
//! vectors check the oracle). In f32 the box evaluated is the vector's rounded outward to f32.
//! A number is held as ivjit holds it: `[v, v]`, `[max, inf]` for +infinity, empty for NaN.
//!
//! Decorated statements: an `[nai]` argument gives NaI; otherwise the decoration must be
//! `trv` for the cancellative operations (the vectors' answer) and, for the numeric
//! functions, the weakest of the arguments' and `newDec` of the result (ivjit's rule,
//! `docs/decorations.md`). Statements whose argument count is not the operation's (one
//! `midRad [nai] [nai]`) are counted and listed as not run.

use crate::common::enclosure_oracle as eo;
use crate::common::itl::{Item, Raw};
use crate::common::oracle::Fmt;
use crate::itf1788::vectors;
use ivjit::{
    BackendChoice, DecoratedInterval, Decoration, Evaluator, Expression, Interval, Precision,
};

/// The ITF1788 operations run here: (name, number of interval arguments, ivjit outputs).
const OPERATIONS: &[(&str, usize, &[&str])] = &[
    ("inf", 1, &["inf"]),
    ("sup", 1, &["sup"]),
    ("mid", 1, &["mid"]),
    ("rad", 1, &["rad"]),
    ("midRad", 1, &["mid", "rad"]),
    ("wid", 1, &["wid"]),
    ("mag", 1, &["mag"]),
    ("mig", 1, &["mig"]),
    ("cancelMinus", 2, &["cancelMinus"]),
    ("cancelPlus", 2, &["cancelPlus"]),
];

/// The ITF1788 operations this harness runs (the main harness lists them as run here).
pub(crate) fn operations() -> impl Iterator<Item = &'static str> {
    OPERATIONS.iter().map(|o| o.0)
}

fn fmt_of(p: Precision) -> Fmt {
    match p {
        Precision::F64 => Fmt::F64,
        Precision::F32 => Fmt::F32,
    }
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

/// A statement ready to run: its arguments and what the vector expects per output.
struct Case<'a> {
    raw: &'a Raw,
    args: Vec<DecoratedInterval>,
    /// Per output: the expected interval (numbers as ivjit holds them) and decoration.
    expected: Vec<((f64, f64), Option<Decoration>)>,
}

/// The statements of one operation, and those not run (with why).
fn cases(op: &str, arity: usize, outputs: usize) -> (Vec<Case<'static>>, Vec<String>) {
    let mut run = Vec::new();
    let mut not_run = Vec::new();
    for raw in vectors().raw.iter().filter(|r| r.op == op) {
        let at = format!("{}:{} `{}`", raw.file, raw.line, raw.text);
        let args: Option<Vec<DecoratedInterval>> = raw
            .args
            .iter()
            .map(|i| match i {
                Item::Interval { value, .. } => Some(*value),
                _ => None,
            })
            .collect();
        let expected: Option<Vec<_>> = raw
            .results
            .iter()
            .map(|i| match i {
                Item::Number(v) => Some((eo::as_interval(*v, Fmt::F64), None)),
                Item::Interval { value, .. } if !value.is_nai() => Some((
                    pair(&value.interval),
                    raw.is_decorated().then_some(value.decoration),
                )),
                _ => None,
            })
            .collect();
        match (args, expected) {
            (Some(args), Some(expected)) if args.len() == arity && expected.len() == outputs => run
                .push(Case {
                    raw,
                    args,
                    expected,
                }),
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
    failures: Vec<String>,
    not_run: Vec<String>,
}

fn run(choice: BackendChoice, precision: Precision) -> Vec<Row> {
    let fmt = fmt_of(precision);
    let mut rows = Vec::new();
    for &(op, arity, outputs) in OPERATIONS {
        let source = outputs
            .iter()
            .map(|f| format!("{f}({})", ["x", "y"][..arity].join(", ")))
            .collect::<Vec<_>>()
            .join(", ");
        let (cases, not_run) = cases(op, arity, outputs.len());
        let mut row = Row {
            op,
            expression: source.clone(),
            cases: cases.len(),
            decorated: cases.iter().filter(|c| c.raw.is_decorated()).count(),
            not_run,
            ..Row::default()
        };
        let plain = Evaluator::new(&Expression::parse(&source).unwrap(), precision, choice)
            .unwrap_or_else(|e| panic!("{source}: {e}"));
        let decorated = Evaluator::new(
            &Expression::parse_decorated(&source).unwrap(),
            precision,
            choice,
        )
        .unwrap_or_else(|e| panic!("{source}: {e}"));
        let undecorated: Vec<&Case> = cases.iter().filter(|c| !c.raw.is_decorated()).collect();
        let boxes: Vec<Vec<Interval>> = undecorated
            .iter()
            .map(|c| c.args.iter().map(|a| a.interval).collect())
            .collect();
        let plain_out = plain.eval_many(&boxes).expect("eval_many");
        let all: Vec<Vec<DecoratedInterval>> = cases.iter().map(|c| c.args.clone()).collect();
        let dec_out = decorated.eval_decorated(&all).expect("eval_decorated");
        let mut plain_results = undecorated.iter().zip(&plain_out);
        for (case, got_dec) in cases.iter().zip(&dec_out) {
            let at = format!("{}:{} `{}`", case.raw.file, case.raw.line, case.raw.text);
            let nai_in = case.args.iter().any(|a| a.is_nai());
            // The box evaluated: the vector's, outward to f32 in f32.
            let boxes: Vec<(f64, f64)> = case
                .args
                .iter()
                .map(|a| match precision {
                    Precision::F64 => pair(&a.interval),
                    Precision::F32 => pair(&a.interval.to_f32_enclosure()),
                })
                .collect();
            // Each argument's decoration, lowered to what the box evaluated may carry (in f32
            // a box of huge f64 bounds is unbounded: dac).
            let arg_dec = case
                .args
                .iter()
                .zip(&boxes)
                .map(|(a, b)| {
                    let evaluated = if b.0.is_nan() {
                        Interval::EMPTY
                    } else {
                        Interval { lo: b.0, hi: b.1 }
                    };
                    a.decoration.min(Decoration::of(evaluated))
                })
                .min()
                .unwrap_or(Decoration::Com);
            let mut fail = |why: String| row.failures.push(format!("{at}: {why}"));
            let plain_got = if case.raw.is_decorated() {
                None
            } else {
                plain_results.next().map(|(_, r)| r)
            };
            for (k, name) in outputs.iter().enumerate() {
                let want = eo::expected(name, &boxes, fmt);
                // The oracle against the vector (f64: the vector's box is the one evaluated).
                let (vector, vector_dec) = case.expected[k];
                if precision == Precision::F64 && !nai_in && !eo::same(vector, want) {
                    fail(format!(
                        "{name}: the oracle gives {}, the vector {} (a bug of the oracle)",
                        show(want),
                        show(vector)
                    ));
                }
                if let Some(got) = plain_got {
                    if !eo::same(want, pair(&got[k])) {
                        fail(format!(
                            "{name}: got {}, want {}",
                            show(pair(&got[k])),
                            show(want)
                        ));
                    }
                }
                let g = got_dec[k];
                if nai_in {
                    if !g.is_nai() {
                        fail(format!(
                            "{name}: an [nai] argument must give NaI, got {g:?}"
                        ));
                    }
                    continue;
                }
                if !eo::same(want, pair(&g.interval)) {
                    fail(format!(
                        "{name} (decorated): got {}, want {}",
                        show(pair(&g.interval)),
                        show(want)
                    ));
                }
                let want_dec = if name.starts_with("cancel") {
                    Decoration::Trv
                } else {
                    let of = if want.0.is_nan() {
                        Decoration::Trv
                    } else {
                        Decoration::of(Interval {
                            lo: want.0,
                            hi: want.1,
                        })
                    };
                    arg_dec.min(of)
                };
                if g.decoration != want_dec {
                    fail(format!(
                        "{name}: decoration {}, want {}",
                        g.decoration, want_dec
                    ));
                }
                if let Some(v) = vector_dec {
                    if g.decoration != v {
                        fail(format!(
                            "{name}: decoration {}, the vector's {v}",
                            g.decoration
                        ));
                    }
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
        "**{backend} backend, {}**: {} cases ({} decorated), {} failing; every result exactly \
         the oracle's for the box evaluated.",
        precision.name(),
        total(&|r| r.cases),
        total(&|r| r.decorated),
        total(&|r| r.failures.len()),
    );
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.op.to_string(),
                format!("`{}`", r.expression),
                r.cases.to_string(),
                r.decorated.to_string(),
                r.failures.len().to_string(),
            ]
        })
        .collect();
    let not_run: Vec<&String> = rows.iter().flat_map(|r| &r.not_run).collect();
    let columns = ["ITF1788 op", "expression", "cases", "decorated", "failing"];
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
    crate::common::itl::publish("enclosure", backend, precision, &t, failures);
    let cases: usize = rows.iter().map(|r| r.cases).sum();
    assert!(cases > 450, "only {cases} vectors were read");
}

#[test]
fn cpu_enclosure_conformance() {
    check(BackendChoice::Cpu, Precision::F64);
}

#[test]
fn cpu_enclosure_conformance_f32() {
    check(BackendChoice::Cpu, Precision::F32);
}

#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn gpu_enclosure_conformance() {
    crate::common::gpu::require_gpu("gpu_enclosure_conformance");
    check(BackendChoice::Gpu, Precision::F64);
}

#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn gpu_enclosure_conformance_f32() {
    crate::common::gpu::require_gpu("gpu_enclosure_conformance_f32");
    check(BackendChoice::Gpu, Precision::F32);
}

/// The oracle itself on cases worked by hand: ties to even, the radius's rounding, overflow
/// of a width, the empty set, cancellation that fits and that does not.
#[test]
fn the_oracle_follows_the_definitions() {
    use crate::common::oracle::{q_of, Q};
    let f = Fmt::F64;
    let third = q_of(1.0) / Q::from_integer(3.into());
    assert_eq!(eo::round_nearest(&third, f), 1.0 / 3.0);
    let tiny = f64::from_bits(1);
    assert_eq!(eo::numeric("mid", (-2.0 * tiny, tiny), f), 0.0);
    assert_eq!(eo::numeric("mid", (tiny, 3.0 * tiny), f), 2.0 * tiny);
    assert_eq!(
        eo::numeric("rad", (1.0, 1.0 + 3.0 * f64::EPSILON), f),
        2.0 * f64::EPSILON
    );
    assert_eq!(eo::numeric("wid", (f64::MIN, f64::MAX), f), f64::INFINITY);
    assert!(eo::numeric("mag", (f64::NAN, f64::NAN), f).is_nan());
    assert_eq!(eo::cancel_minus((-5.0, -1.0), (-5.0, -1.0), f), (0.0, 0.0));
    assert_eq!(
        eo::cancel_minus((0.0, 1.0), (0.0, 1.5), f),
        (f64::NEG_INFINITY, f64::INFINITY)
    );
    assert_eq!(eo::as_interval(f64::INFINITY, Fmt::F32).0, f32::MAX as f64);
}

/// A constant argument folds (in the IR, at compile time) to what a variable argument evaluates
/// to: the IR's shortcut "an empty argument gives the empty set" must not apply to these
/// functions (`inf([empty])` is `[max, inf]`, `cancelMinus([empty], [entire])` the whole line).
#[test]
fn constant_arguments_fold_to_what_variables_evaluate() {
    use ivjit::internals::syntax::number::hexf64;
    let tiny = f64::from_bits(1);
    let ivs = [
        Interval::EMPTY,
        Interval::ENTIRE,
        Interval {
            lo: f64::NEG_INFINITY,
            hi: -2.0,
        },
        Interval {
            lo: 0.0,
            hi: f64::INFINITY,
        },
        Interval { lo: 1.0, hi: 2.0 },
        Interval { lo: -3.0, hi: 1.0 },
        Interval {
            lo: f64::MAX,
            hi: f64::MAX,
        },
        Interval {
            lo: -f64::MAX,
            hi: f64::MAX,
        },
        Interval {
            lo: -tiny,
            hi: 2.0 * tiny,
        },
        Interval { lo: 0.0, hi: 0.0 },
    ];
    let text = |iv: &Interval| {
        if iv.is_empty() {
            "[empty]".to_string()
        } else {
            let b = |x: f64| match x {
                f64::INFINITY => "inf".to_string(),
                f64::NEG_INFINITY => "-inf".to_string(),
                x => hexf64(x),
            };
            format!("[{}, {}]", b(iv.lo), b(iv.hi))
        }
    };
    for &(op, arity, outputs) in OPERATIONS {
        for name in outputs {
            let vars = ["x", "y"][..arity].join(", ");
            let eval = Evaluator::new(
                &Expression::parse(&format!("{name}({vars})")).unwrap(),
                Precision::F64,
                BackendChoice::Cpu,
            )
            .unwrap();
            for a in &ivs {
                for b in ivs.iter().take(if arity == 2 { ivs.len() } else { 1 }) {
                    let args: Vec<Interval> = [*a, *b][..arity].to_vec();
                    let consts: Vec<String> = args.iter().map(text).collect();
                    let src = format!("{name}({})", consts.join(", "));
                    let folded = Expression::parse(&src).unwrap();
                    let folded = Evaluator::new(&folded, Precision::F64, BackendChoice::Cpu)
                        .unwrap()
                        .eval(&[])
                        .unwrap()[0];
                    let got = eval.eval(&args).unwrap()[0];
                    assert!(
                        eo::same(pair(&got), pair(&folded)),
                        "{op}: {src} folds to {folded}, evaluates to {got}"
                    );
                }
            }
        }
    }
}
