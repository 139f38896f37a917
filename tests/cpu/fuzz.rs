//! Fuzzing of the library with proptest (cargo-fuzz needs a nightly toolchain; this runs on
//! stable as part of `cargo test`).
//!
//! * `arbitrary_unicode_never_panics`, `token_soup_never_panics`: arbitrary strings and a
//!   grammar-aware soup of tokens through [`Expression::parse`]. It must return `Ok` or `Err`,
//!   never panic; an `Err` must render a diagnostic against the source without panicking. On
//!   `Ok`, evaluation on the CPU (f64 and f32) over random boxes must not panic, and every output
//!   must be a valid interval or the empty set.
//! * `generated_expressions_over_every_function`: random well-formed expressions over every
//!   function of [`FUNCTIONS`] must compile, and evaluate in f64 and f32 to valid intervals.
//! * `every_function_on_hostile_boxes`: each function alone on a fixed set of hostile boxes.
//!
//! `IVJIT_FUZZ_CASES=N` sets the number of cases per property (the default keeps the whole file
//! at roughly 20-30 s); see docs/fuzzing.md for the long runs and what they found.

use ivjit::internals::ir::functions::FUNCTIONS;
use ivjit::internals::syntax::diagnostic::Diagnostic;
use ivjit::{BackendChoice, Error, Evaluator, Expression, Interval, Precision};
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence};

/// Cases per property: `IVJIT_FUZZ_CASES`, or `default`.
fn cases(default: u32) -> u32 {
    std::env::var("IVJIT_FUZZ_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

fn config(default: u32) -> Config {
    Config {
        cases: cases(default),
        // Failures are reported with their minimized input; nothing is written into the tree.
        failure_persistence: Some(Box::new(FileFailurePersistence::Off)),
        max_shrink_iters: 20_000,
        ..Config::default()
    }
}

/// Every output must be the empty set or an interval: no NaN bound alone, lo <= hi,
/// lo < +inf, hi > -inf.
fn check_output(src: &str, what: &str, iv: &Interval) {
    if iv.lo.is_nan() || iv.hi.is_nan() {
        assert!(
            iv.lo.is_nan() && iv.hi.is_nan(),
            "{src:?} ({what}): half-NaN output {iv:?}"
        );
        return;
    }
    assert!(iv.lo <= iv.hi, "{src:?} ({what}): inverted output {iv:?}");
    assert!(iv.lo != f64::INFINITY, "{src:?} ({what}): lo = +inf {iv:?}");
    assert!(
        iv.hi != f64::NEG_INFINITY,
        "{src:?} ({what}): hi = -inf {iv:?}"
    );
}

fn render_ok(d: &Diagnostic, src: &str) {
    let text = d.render(src);
    assert!(text.starts_with("error:"), "{src:?}: rendered {text:?}");
}

/// Compiles and evaluates on the CPU in both precisions; every failure must be an error value.
fn eval_all(expr: &Expression, src: &str, boxes: &[Vec<Interval>]) {
    for precision in [Precision::F64, Precision::F32] {
        let ev = match Evaluator::new(expr, precision, BackendChoice::Cpu) {
            Ok(ev) => ev,
            Err(Error::Compile(d)) => {
                render_ok(&d, src);
                continue;
            }
            Err(e) => panic!("{src:?}: unexpected CPU evaluator error {e}"),
        };
        let rows = ev
            .eval_many(boxes)
            .unwrap_or_else(|e| panic!("{src:?}: evaluation of valid boxes failed: {e}"));
        assert_eq!(rows.len(), boxes.len());
        for (b, row) in boxes.iter().zip(&rows) {
            assert_eq!(row.len(), expr.n_outputs(), "{src:?}");
            for iv in row {
                check_output(src, &format!("{precision:?} on {b:?}"), iv);
            }
        }
    }
}

/// One hostile bound value.
fn bound() -> impl Strategy<Value = f64> {
    prop_oneof![
        3 => -10.0f64..10.0,
        1 => any::<f64>().prop_filter("finite", |v| v.is_finite()),
        1 => prop::sample::select(vec![
            0.0, -0.0, 1.0, -1.0, 0.5, 2.0, f64::MAX, -f64::MAX, f64::MIN_POSITIVE,
            5e-324, -5e-324, 1e300, -1e300, std::f64::consts::PI, 710.0, -745.0, 1e16,
            std::f64::consts::FRAC_PI_2,
        ]),
    ]
}

/// One valid interval: points, ordinary and half-unbounded intervals, entire, empty.
fn interval() -> impl Strategy<Value = Interval> {
    prop_oneof![
        6 => (bound(), bound()).prop_map(|(a, b)| Interval::new(a.min(b), a.max(b)).unwrap()),
        2 => bound().prop_map(|a| Interval::new(a, a).unwrap()),
        1 => bound().prop_map(|a| Interval::new(f64::NEG_INFINITY, a).unwrap()),
        1 => bound().prop_map(|a| Interval::new(a, f64::INFINITY).unwrap()),
        1 => Just(Interval::ENTIRE),
        1 => Just(Interval::EMPTY),
    ]
}

/// Up to 4 boxes of up to 8 variables (cut to the expression's variable count).
fn boxes() -> impl Strategy<Value = Vec<Vec<Interval>>> {
    prop::collection::vec(prop::collection::vec(interval(), 8), 1..4)
}

fn parse_and_eval(src: &str, boxes: &[Vec<Interval>]) {
    match Expression::parse(src) {
        Err(Error::Compile(d)) => render_ok(&d, src),
        Err(e) => panic!("{src:?}: parse gave a non-compile error {e}"),
        Ok(expr) => {
            let nv = expr.vars().len();
            if nv > 8 {
                return;
            }
            let boxes: Vec<Vec<Interval>> = boxes.iter().map(|b| b[..nv].to_vec()).collect();
            // The other outputs of the tool must not panic either.
            let _ = expr.ir_text();
            for p in [Precision::F64, Precision::F32] {
                match expr.ptx(p) {
                    Ok(ptx) => assert!(!ptx.is_empty()),
                    Err(Error::Compile(d)) => render_ok(&d, src),
                    Err(e) => panic!("{src:?}: ptx gave {e}"),
                }
            }
            eval_all(&expr, src, &boxes);
        }
    }
}

/// Tokens of the language, near-misses, and hostile characters.
fn token() -> impl Strategy<Value = String> {
    let mut fixed: Vec<&'static str> = vec![
        "x",
        "y",
        "z",
        "w",
        "pi",
        "e",
        "let",
        "inf",
        "-inf",
        "nan",
        "empty",
        "entire",
        "(",
        ")",
        "[",
        "]",
        ",",
        ";",
        "=",
        "+",
        "-",
        "*",
        "/",
        "^",
        "#",
        "# c\n",
        "\n",
        " ",
        "\t",
        "\r\n",
        "0",
        "1",
        "2",
        "-1",
        "0.5",
        "1e999",
        "1e-999",
        "0x1p99999",
        "0x1.8p-3",
        "0x",
        "1e",
        "1.5e-3",
        ".5",
        "5.",
        "1.",
        "3",
        "10",
        "-3",
        "0.1",
        "1e308",
        "2.5e-324",
        "99999999999999999999",
        "[empty]",
        "[entire]",
        "[1, 2]",
        "[-inf, 0]",
        "[2, 1]",
        "]_dac",
        "]_",
        "[nai]",
        "_com",
        "]_ill",
        "[0, inf]",
        "let a =",
        "a",
        "b",
        ";",
        "é",
        "−",
        "×",
        "😀",
        "\u{0}",
        "\u{feff}",
        "\u{200b}",
        "ｘ",
        "∞",
        "π",
        "**",
        "..",
        "_",
        "$",
        "@",
        "!",
        "&&",
        "'",
        "\"",
        "\\",
        "let x = 1;",
        "pown",
        "rootn",
        "foo",
        "sinn",
        "x1",
        "_x",
        "X",
    ];
    fixed.extend(FUNCTIONS.iter().map(|f| f.name));
    let fixed: Vec<String> = fixed.into_iter().map(String::from).collect();
    prop_oneof![
        8 => prop::sample::select(fixed),
        1 => "[0-9]{1,30}(\\.[0-9]{0,30})?([eE][+-]?[0-9]{1,5})?",
        1 => "0x[0-9a-fA-F]{1,20}(\\.[0-9a-fA-F]{0,10})?(p[+-]?[0-9]{1,6})?",
        1 => "[a-z_][a-z0-9_]{0,6}",
    ]
}

fn token_soup() -> impl Strategy<Value = String> {
    prop::collection::vec((token(), prop::bool::ANY), 0..40).prop_map(|ts| {
        let mut s = String::new();
        for (t, space) in ts {
            s.push_str(&t);
            if space {
                s.push(' ');
            }
        }
        s
    })
}

/// A well-formed expression over every function, nested up to 5 levels.
fn valid_expr() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        4 => prop::sample::select(vec!["x", "y", "z"]).prop_map(String::from),
        1 => prop::sample::select(vec![
            "pi", "e", "0", "1", "-1", "2", "0.1", "1e-300", "1e300", "1e999", "0x1p-1074",
            "[empty]", "[entire]", "[-1, 1]", "[0, inf]", "[-inf, -2]", "[0.1, 0.2]",
            "0x1.921fb54442d18p+1",
        ])
        .prop_map(String::from),
    ];
    leaf.prop_recursive(5, 48, 3, |inner| {
        let names: Vec<&'static ivjit::internals::ir::functions::FunctionInfo> =
            FUNCTIONS.iter().collect();
        prop_oneof![
            3 => (prop::sample::select(names), prop::collection::vec(inner.clone(), 3), -6i32..7)
                .prop_map(|(f, args, n)| match f.name {
                    // The second argument of pown and rootn is an integer constant.
                    "pown" | "rootn" => format!("{}({}, {n})", f.name, args[0]),
                    "pownRev" => format!("pownRev({}, {}, {n})", args[0], args[1]),
                    _ => format!("{}({})", f.name, args[..f.arity].join(", ")),
                }),
            2 => (inner.clone(), prop::sample::select(vec!["+", "-", "*", "/"]), inner.clone())
                .prop_map(|(a, op, b)| format!("({a} {op} {b})")),
            1 => (inner.clone(), prop::sample::select(vec![
                    "0", "1", "2", "3", "-1", "-2", "0.5", "1.5", "y", "(x - y)",
                ]))
                .prop_map(|(a, p)| format!("({a})^{p}")),
            1 => inner.prop_map(|a| format!("-({a})")),
        ]
    })
}

/// A program: optionally a `let` binding used twice, then one or two outputs.
fn valid_program() -> impl Strategy<Value = String> {
    (valid_expr(), valid_expr(), 0..3u8).prop_map(|(a, b, shape)| match shape {
        0 => a,
        1 => format!("{a}, {b}"),
        _ => format!("let t = {a}; t * t + {b}, t"),
    })
}

proptest! {
    #![proptest_config(config(16_000))]

    #[test]
    fn arbitrary_unicode_never_panics(src in prop_oneof![
        any::<String>(),
        "\\PC{0,60}",
        "[ -~]{0,60}",
    ], bx in boxes()) {
        parse_and_eval(&src, &bx);
    }
}

proptest! {
    #![proptest_config(config(55_000))]

    #[test]
    fn token_soup_never_panics(src in token_soup(), bx in boxes()) {
        parse_and_eval(&src, &bx);
    }
}

proptest! {
    #![proptest_config(config(40_000))]

    #[test]
    fn generated_expressions_over_every_function(src in valid_program(), bx in boxes()) {
        let expr = match Expression::parse(&src) {
            Ok(e) => e,
            Err(Error::Compile(d)) => panic!("generated {src:?} was rejected:\n{}", d.render(&src)),
            Err(e) => panic!("generated {src:?} was rejected: {e}"),
        };
        let nv = expr.vars().len();
        let bx: Vec<Vec<Interval>> = bx.iter().map(|b| b[..nv].to_vec()).collect();
        eval_all(&expr, &src, &bx);
    }
}

/// Each function alone, on every pair of a fixed set of hostile intervals.
#[test]
fn every_function_on_hostile_boxes() {
    let edge = [
        Interval::EMPTY,
        Interval::ENTIRE,
        Interval::new(0.0, 0.0).unwrap(),
        Interval::new(-0.0, 0.0).unwrap(),
        Interval::new(-1.0, 1.0).unwrap(),
        Interval::new(f64::NEG_INFINITY, 0.0).unwrap(),
        Interval::new(0.0, f64::INFINITY).unwrap(),
        Interval::new(f64::MAX, f64::INFINITY).unwrap(),
        Interval::new(f64::NEG_INFINITY, -f64::MAX).unwrap(),
        Interval::new(-f64::MAX, f64::MAX).unwrap(),
        Interval::new(5e-324, 5e-324).unwrap(),
        Interval::new(-5e-324, 5e-324).unwrap(),
        Interval::new(1e300, 1e308).unwrap(),
        Interval::new(-3.5, -0.5).unwrap(),
        Interval::new(0.5, 0.5).unwrap(),
        Interval::new(-1.0, -1.0).unwrap(),
        Interval::new(1.0, 1.0).unwrap(),
        Interval::new(709.0, 711.0).unwrap(),
        Interval::new(1e22, 1e22).unwrap(),
    ];
    for f in FUNCTIONS.iter() {
        let srcs: Vec<String> = match f.name {
            "pown" | "rootn" => [-3, -2, -1, 0, 1, 2, 3, 7]
                .iter()
                .map(|n| format!("{}(x, {n})", f.name))
                .collect(),
            "pownRev" => [-3, -2, -1, 0, 1, 2, 3, 7]
                .iter()
                .map(|n| format!("pownRev(x, y, {n})"))
                .collect(),
            _ => vec![format!(
                "{}({})",
                f.name,
                ["x", "y", "z"][..f.arity].join(", ")
            )],
        };
        for src in srcs {
            let expr = Expression::parse(&src).unwrap_or_else(|e| panic!("{src}: {e}"));
            let nv = expr.vars().len();
            let mut boxes = Vec::new();
            for a in &edge {
                for b in &edge {
                    boxes.push([*a, *b, *a][..nv].to_vec());
                    if nv == 1 {
                        break;
                    }
                }
            }
            eval_all(&expr, &src, &boxes);
        }
    }
}

/// A piece of an IEEE 1788 literal, for [`literal_soup`].
fn literal_piece() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(vec![
            "[", "]", ",", " ", "?", "??", "u", "d", "e", "e-", "e+", "/", "-", "+", ".", "_com",
            "_dac", "_def", "_trv", "_ill", "_", "inf", "Infinity", "empty", "Entire", "nai",
            "0x1.8p-3", "0x", "p", "1e400", "1e-400", "99999999999999999999999",
        ])
        .prop_map(String::from),
        2 => (0u32..1000).prop_map(|n| n.to_string()),
        1 => any::<f64>().prop_map(|x| format!("{x}")),
    ]
}

/// Strings made of IEEE 1788 literal pieces, well-formed or not.
fn literal_soup() -> impl Strategy<Value = String> {
    prop::collection::vec(literal_piece(), 0..12).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(config(20_000))]

    /// IEEE 1788's text reader (`from_1788_text`) returns a value or an error on any text, and
    /// what it returns is an interval (or NaI).
    #[test]
    fn literals_of_the_standard_never_panic(text in prop_oneof![literal_soup(), any::<String>()]) {
        if let Ok(iv) = Interval::from_1788_text(&text) {
            check_output(&text, "from_1788_text", &iv);
        }
        if let Ok(d) = ivjit::DecoratedInterval::from_1788_text(&text) {
            check_output(&text, "decorated from_1788_text", &d.interval);
            prop_assert!(d.is_nai() || d.decoration <= ivjit::Decoration::of(d.interval)
                || d.decoration == ivjit::Decoration::Trv, "{text:?}: {d:?}");
        }
    }

    /// On the forms both read, the standard's reader and ivjit's (`Interval::parse`) give the
    /// same outward-rounded interval.
    #[test]
    fn both_readers_agree(a in any::<f64>().prop_filter("finite", |x| x.is_finite()),
                          b in any::<f64>().prop_filter("finite", |x| x.is_finite()),
                          digits in 1usize..25) {
        let (lo, hi) = (a.min(b), a.max(b));
        // Decimal texts, cut to `digits` significant digits: most are not doubles.
        let t = |x: f64| format!("{x:.digits$e}", digits = digits.min(20));
        let text = format!("[{}, {}]", t(lo), t(hi));
        if let Ok(ours) = Interval::parse(&text) {
            let theirs = Interval::from_1788_text(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
            prop_assert_eq!((ours.lo.to_bits(), ours.hi.to_bits()), (theirs.lo.to_bits(), theirs.hi.to_bits()), "{}", text);
        }
    }
}
