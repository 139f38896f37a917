//! Front-end tests: parse trees and rendered diagnostics as insta snapshots
//! (`tests/snapshots/syntax__*.snap`), spans, limits, and property tests.

use std::fmt::Write as _;
use std::time::Instant;

use ivjit::internals::syntax::ast::{Ast, NodeKind, Span};
use ivjit::internals::syntax::parser::{parse, to_sexpr, MAX_NESTING};
use proptest::prelude::*;

fn parse_ok(src: &str) -> Ast {
    match parse(src) {
        Ok(ast) => ast,
        Err(d) => panic!("{src:?} failed:\n{}", d.render(src)),
    }
}

fn render_err(src: &str) -> String {
    match parse(src) {
        Ok(ast) => panic!("{src:?} parsed:\n{}", to_sexpr(&ast)),
        Err(d) => d.render(src),
    }
}

/// Checks the arena invariants: children before parents, spans inside the source and on char
/// boundaries, each child's span inside its parent's.
fn check_invariants(src: &str, ast: &Ast) {
    let inside = |outer: Span, inner: Span| outer.start <= inner.start && inner.end <= outer.end;
    for (i, node) in ast.nodes.iter().enumerate() {
        let s = node.span;
        assert!(s.start < s.end && s.end <= src.len(), "node {i} span {s:?}");
        assert!(src.is_char_boundary(s.start) && src.is_char_boundary(s.end));
        let children: Vec<_> = match &node.kind {
            NodeKind::Neg(a) => vec![*a],
            NodeKind::Binary(_, a, b) => vec![*a, *b],
            NodeKind::Call {
                args, name_span, ..
            } => {
                assert!(inside(s, *name_span));
                args.clone()
            }
            NodeKind::Interval { lo, hi } => {
                assert!(inside(s, lo.span) && inside(s, hi.span));
                vec![]
            }
            _ => vec![],
        };
        for c in children {
            assert!(c.index() < i, "child {} of node {i}", c.index());
            assert!(
                inside(s, ast.nodes[c.index()].span),
                "child span of node {i}"
            );
        }
    }
    for &o in ast.outputs.iter().chain(ast.lets.iter().map(|l| &l.value)) {
        assert!(o.index() < ast.nodes.len());
    }
}

/// A table of nodes with their spans and the source text they cover.
fn span_table(src: &str, ast: &Ast) -> String {
    let mut out = String::new();
    for (i, n) in ast.nodes.iter().enumerate() {
        let kind = match &n.kind {
            NodeKind::Number(s) => format!("Number {s}"),
            NodeKind::Name(s) => format!("Name {s}"),
            NodeKind::Interval { lo, hi } => format!(
                "Interval lo={:?}@{}..{} hi={:?}@{}..{}",
                lo.text, lo.span.start, lo.span.end, hi.text, hi.span.start, hi.span.end
            ),
            NodeKind::Empty => "Empty".into(),
            NodeKind::Entire => "Entire".into(),
            NodeKind::Nai => "Nai".into(),
            NodeKind::Decorated {
                inner,
                decoration,
                decoration_span,
            } => format!(
                "Decorated #{} _{decoration}@{}..{}",
                inner.0, decoration_span.start, decoration_span.end
            ),
            NodeKind::Neg(a) => format!("Neg #{}", a.0),
            NodeKind::Binary(op, a, b) => format!("Binary {op} #{} #{}", a.0, b.0),
            NodeKind::Call {
                name,
                name_span,
                args,
            } => format!(
                "Call {name}@{}..{} args={:?}",
                name_span.start,
                name_span.end,
                args.iter().map(|a| a.0).collect::<Vec<_>>()
            ),
        };
        let _ = writeln!(
            out,
            "#{i} {kind} @{}..{} {:?}",
            n.span.start,
            n.span.end,
            &src[n.span.start..n.span.end]
        );
    }
    for l in &ast.lets {
        let _ = writeln!(
            out,
            "let {} @{}..{} = #{}",
            l.name, l.name_span.start, l.name_span.end, l.value.0
        );
    }
    let _ = writeln!(
        out,
        "outputs {:?}",
        ast.outputs.iter().map(|o| o.0).collect::<Vec<_>>()
    );
    out
}

const VALID: &[(&str, &str)] = &[
    ("add_left_assoc", "a + b - c + d"),
    ("mul_left_assoc", "a * b / c * d"),
    ("add_mul_precedence", "1 + 2 * 3 - 4 / 5"),
    ("pow_right_assoc", "2 ^ 3 ^ 4"),
    ("neg_pow", "-x^2"),
    ("pow_neg_exponent", "x^-2"),
    ("pow_neg_pow_exponent", "x^-y^2"),
    ("neg_neg", "--x - -y"),
    ("unary_plus", "+x * +(+y)"),
    ("mul_neg", "a * -b ^ c / -d"),
    ("parens", "(a + b) * (c - (d))"),
    ("paren_pow_base", "(-2)^2 + (x^2)^3"),
    ("calls", "sin(x) + atan2(y, x) - f() * g(h(1), [1, 2])"),
    ("call_space", "f (x)"),
    ("lets", "let a = x + 1;\nlet b = a * a;\nb - a"),
    ("several_outputs", "x, y * 2, sin(z);"),
    (
        "comments",
        "# leading comment\nlet r = 2; # radius\n  pi * r^2 # area\n# end",
    ),
    (
        "decimal_numbers",
        "12 + 1.5 + .5 + 5. + 1e-3 + 2.5E+300 + 007 + 1.e5",
    ),
    (
        "hex_floats",
        "0x1.8p-3 + 0X1.999999999999AP-4 + 0x0.0p+0 + 0x10 + 0xe+1",
    ),
    ("interval_literals", "[1, 2] + [-1, +2.5] * [0x1p-3, 1e10]"),
    (
        "interval_inf",
        "[-inf, inf] - [0, infinity] + [-infinity, -1]",
    ),
    ("empty_entire", "[empty], [entire], x * [entire]"),
    ("names", "_x1 + X_y + letx + inf + e"),
    ("whitespace", "\t a\r\n +\n\n b \n"),
    (
        "unicode_in_comment",
        "x + 1 # \u{3c0} \u{2248} 3.14159, \u{221e}",
    ),
    ("long_chain", "a - b - c - d - e * f * g ^ h ^ i"),
    ("exponent_unary_chain", "x ^ - - + y"),
    ("exp_then_mul", "x^-y*z + 2^3*4"),
];

#[test]
fn valid_snapshots() {
    for (name, src) in VALID {
        let ast = parse_ok(src);
        check_invariants(src, &ast);
        insta::assert_snapshot!(
            format!("valid_{name}"),
            format!("{src}\n---\n{}", to_sexpr(&ast))
        );
    }
}

#[test]
fn span_snapshots() {
    for (name, src) in [
        ("spans_ops", "-x^2 + (a*b)"),
        (
            "spans_call_let",
            "let y = f(x, 1);\n g( y ) , [ - 1 , inf ]",
        ),
        ("spans_unary_plus", "+ ( x ) * 2"),
        ("spans_decorated", "x * [1, 2]_def + [empty]_trv - [nai]"),
    ] {
        let ast = parse_ok(src);
        check_invariants(src, &ast);
        insta::assert_snapshot!(name, format!("{src}\n---\n{}", span_table(src, &ast)));
    }
}

const INVALID: &[(&str, &str)] = &[
    ("empty_input", ""),
    ("only_comment", "  # nothing here\n"),
    ("unclosed_paren", "(1 + 2"),
    ("unclosed_call", "f(x, g(y)"),
    ("unmatched_close", "1 + 2)"),
    ("mismatched_close", "(1 + 2]"),
    ("missing_operand", "(1 +)"),
    ("stray_operator", "1 + * 2"),
    ("double_star", "x ** 2"),
    ("trailing_operator", "x +"),
    ("implicit_mul_number", "2x"),
    ("implicit_mul_space", "2 x"),
    ("implicit_mul_paren", "(a)(b)"),
    ("implicit_mul_exp", "1e-3x"),
    ("interval_name_bound", "[1, x]"),
    ("interval_expression", "[1, 2 + 3]"),
    ("interval_paren", "[(1), 2]"),
    ("interval_three_bounds", "[1, 2, 3]"),
    ("interval_empty_brackets", "[]"),
    ("interval_unknown", "[whole]"),
    ("interval_single_inf", "[inf]"),
    ("interval_missing_bound", "[1, ]"),
    ("call_empty_args", "f(,)"),
    ("call_trailing_comma", "f(a,)"),
    ("let_no_name", "let = 3;"),
    ("let_no_semicolon", "let a = 3\na + 1"),
    ("let_without_output", "let a = 3;"),
    ("let_after_output", "x; let y = 2;"),
    ("assignment_without_let", "a = 3"),
    ("nul_byte", "x + \0"),
    ("non_ascii", "x + \u{a7}"),
    ("unicode_minus", "x \u{2212} 1"),
    ("non_ascii_name", "let \u{e9}t\u{e9} = 1;"),
    ("non_ascii_second_line", "let t = 1;\n\u{3c0} * t"),
    ("implicit_mul_call", "2 sin(x)"),
    ("malformed_exponent", "1e + 2"),
    ("malformed_decimal", "1.2.3"),
    ("malformed_hex", "0x + 1"),
    ("hex_without_exponent", "0x1.8"),
    ("trailing_comma", "x, y,"),
    ("unknown_char", "x $ y"),
    ("lone_dot", "x . y"),
    ("keyword_as_operand", "1 + let"),
    ("multiline_error", "let a = 1;\nlet b = (a +\n  2 * ;\nb"),
    ("tab_alignment", "\tx +\t* y"),
];

#[test]
fn invalid_snapshots() {
    for (name, src) in INVALID {
        let rendered = render_err(src);
        insta::assert_snapshot!(format!("error_{name}"), format!("{src:?}\n---\n{rendered}"));
    }
}

#[test]
fn nesting_limit() {
    let ok = format!("{}x{}", "(".repeat(MAX_NESTING), ")".repeat(MAX_NESTING));
    parse_ok(&ok);
    let calls = format!("{}x{}", "f(".repeat(MAX_NESTING), ")".repeat(MAX_NESTING));
    parse_ok(&calls);
    let deep = format!(
        "{}x{}",
        "(".repeat(MAX_NESTING + 1),
        ")".repeat(MAX_NESTING + 1)
    );
    let err = parse(&deep).unwrap_err();
    assert_eq!(err.span, Span::new(MAX_NESTING, MAX_NESTING + 1));
    insta::assert_snapshot!("error_nesting_1001", err.render(&deep));
    // Very deep unclosed input: still the nesting error, no stack overflow.
    let huge = "(".repeat(1_000_000);
    assert!(parse(&huge).unwrap_err().message.contains("nesting"));
    let huge = "[".repeat(5000);
    assert!(parse(&huge).unwrap_err().message.contains("nesting"));
}

#[test]
fn deep_unary_and_power_chains() {
    // These are not bracket nesting: unlimited, and must not overflow the stack anywhere.
    let n = 200_000;
    for src in [
        format!("{}x", "-".repeat(n)),
        format!("{}x", "x^".repeat(n)),
        format!("{}x", "+-".repeat(n)),
    ] {
        let ast = parse_ok(&src);
        check_invariants(&src, &ast);
        let s = to_sexpr(&ast);
        assert!(s.len() > n);
        drop(ast);
    }
    // Errors after a deep chain do not blow up either.
    let src = format!("{}x)", "x^-".repeat(n));
    assert!(parse(&src).is_err());
}

#[test]
fn one_megabyte_line_is_fast() {
    let src = "x+".repeat(500_000) + "x";
    assert!(src.len() > 1_000_000);
    let t = Instant::now();
    let ast = parse_ok(&src);
    let elapsed = t.elapsed();
    assert_eq!(ast.nodes.len(), 1_000_001);
    assert_eq!(
        ast.nodes.last().map(|n| n.span),
        Some(Span::new(0, src.len()))
    );
    // Generous for debug builds on a loaded machine; release takes a few tens of ms.
    assert!(elapsed.as_secs_f64() < 10.0, "took {elapsed:?}");

    // An error at the end of a 1 MB line renders quickly with a short window.
    let bad = "x+".repeat(500_000) + ")";
    let t = Instant::now();
    let d = parse(&bad).unwrap_err();
    let r = d.render(&bad);
    assert!(t.elapsed().as_secs_f64() < 10.0);
    assert!(r.lines().all(|l| l.chars().count() < 200), "{r}");
    insta::assert_snapshot!("error_long_line", r);
}

#[test]
fn bound_texts_and_spans() {
    let src = "[ - 1.5 , +inf ]";
    let ast = parse_ok(src);
    let NodeKind::Interval { lo, hi } = &ast.nodes[0].kind else {
        panic!()
    };
    assert_eq!(lo.text, "-1.5");
    assert_eq!(&src[lo.span.start..lo.span.end], "- 1.5");
    assert_eq!(hi.text, "+inf");
    assert_eq!(&src[hi.span.start..hi.span.end], "+inf");
    assert_eq!(ast.nodes[0].span, Span::new(0, src.len()));
}

// ---------------------------------------------------------------------------------------------
// Property tests.

/// A random expression, printed with the fewest parentheses needed (plus optional extra ones).
#[derive(Clone, Debug)]
enum E {
    Num(String),
    Name(String),
    Interval(String, String),
    Empty,
    Entire,
    Neg(Box<E>),
    Pos(Box<E>),
    Paren(Box<E>),
    Bin(char, Box<E>, Box<E>),
    Call(String, Vec<E>),
}

/// Precedence levels: 1 `+ -`, 2 `* /`, 3 unary, 4 `^`, 5 atoms.
fn level(e: &E) -> u8 {
    match e {
        E::Bin('+' | '-', ..) => 1,
        E::Bin('*' | '/', ..) => 2,
        E::Neg(_) | E::Pos(_) => 3,
        E::Bin(..) => 4,
        _ => 5,
    }
}

fn print(e: &E, min_level: u8, ws: &str, out: &mut String) {
    if level(e) < min_level {
        out.push('(');
        print(e, 0, ws, out);
        out.push(')');
        return;
    }
    match e {
        E::Num(s) | E::Name(s) => out.push_str(s),
        E::Interval(a, b) => {
            let _ = write!(out, "[{a},{ws}{b}]");
        }
        E::Empty => out.push_str("[empty]"),
        E::Entire => out.push_str("[entire]"),
        E::Neg(a) => {
            out.push('-');
            out.push_str(ws);
            print(a, 3, ws, out);
        }
        E::Pos(a) => {
            out.push('+');
            out.push_str(ws);
            print(a, 3, ws, out);
        }
        E::Paren(a) => {
            out.push('(');
            print(a, 0, ws, out);
            out.push(')');
        }
        E::Bin(op, a, b) => {
            let (l, r) = match op {
                '+' | '-' => (1, 2),
                '*' | '/' => (2, 3),
                _ => (5, 3),
            };
            print(a, l, ws, out);
            out.push_str(ws);
            out.push(*op);
            out.push_str(ws);
            print(b, r, ws, out);
        }
        E::Call(f, args) => {
            out.push_str(f);
            out.push('(');
            for (i, a) in args.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                    out.push_str(ws);
                }
                print(a, 0, ws, out);
            }
            out.push(')');
        }
    }
}

/// The s-expression `to_sexpr` should print for `e`.
fn expected_sexpr(e: &E, out: &mut String) {
    match e {
        E::Num(s) | E::Name(s) => out.push_str(s),
        E::Interval(a, b) => {
            let strip = |s: &str| s.split_whitespace().collect::<String>();
            let _ = write!(out, "[{}, {}]", strip(a), strip(b));
        }
        E::Empty => out.push_str("[empty]"),
        E::Entire => out.push_str("[entire]"),
        E::Neg(a) => {
            out.push_str("(- ");
            expected_sexpr(a, out);
            out.push(')');
        }
        E::Pos(a) | E::Paren(a) => expected_sexpr(a, out),
        E::Bin(op, a, b) => {
            let _ = write!(out, "({op} ");
            expected_sexpr(a, out);
            out.push(' ');
            expected_sexpr(b, out);
            out.push(')');
        }
        E::Call(f, args) => {
            out.push('(');
            out.push_str(f);
            for a in args {
                out.push(' ');
                expected_sexpr(a, out);
            }
            out.push(')');
        }
    }
}

/// Prints an output of a parsed tree back as source, with every operation parenthesized.
fn ast_to_source(ast: &Ast) -> String {
    fn go(ast: &Ast, id: ivjit::internals::syntax::ast::NodeId, out: &mut String) {
        match &ast.node(id).kind {
            NodeKind::Number(s) | NodeKind::Name(s) => out.push_str(s),
            NodeKind::Interval { lo, hi } => {
                let _ = write!(out, "[{}, {}]", lo.text, hi.text);
            }
            NodeKind::Empty => out.push_str("[empty]"),
            NodeKind::Entire => out.push_str("[entire]"),
            NodeKind::Nai => out.push_str("[nai]"),
            NodeKind::Decorated {
                inner, decoration, ..
            } => {
                go(ast, *inner, out);
                let _ = write!(out, "_{decoration}");
            }
            NodeKind::Neg(a) => {
                out.push_str("(-");
                go(ast, *a, out);
                out.push(')');
            }
            NodeKind::Binary(op, a, b) => {
                out.push('(');
                go(ast, *a, out);
                let _ = write!(out, " {op} ");
                go(ast, *b, out);
                out.push(')');
            }
            NodeKind::Call { name, args, .. } => {
                let _ = write!(out, "{name}(");
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    go(ast, *a, out);
                }
                out.push(')');
            }
        }
    }
    let mut out = String::new();
    for (i, &o) in ast.outputs.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        go(ast, o, &mut out);
    }
    out
}

fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        "[0-9]{1,4}",
        "[0-9]{1,3}\\.[0-9]{0,3}",
        "\\.[0-9]{1,3}",
        "[0-9]{1,2}[eE][+-]?[0-9]{1,3}",
        "0[xX][0-9a-fA-F]{1,4}",
        "0x[0-9a-f]{1,2}\\.[0-9a-f]{0,3}p[+-]?[0-9]{1,2}",
    ]
}

fn name() -> impl Strategy<Value = String> {
    "[a-zA-Z_][a-zA-Z0-9_]{0,3}".prop_filter("keyword", |s| s != "let")
}

fn bound() -> impl Strategy<Value = String> {
    (
        prop_oneof![Just(""), Just("-"), Just("+"), Just("- ")],
        prop_oneof![
            number(),
            Just("inf".to_string()),
            Just("infinity".to_string())
        ],
    )
        .prop_map(|(s, n)| format!("{s}{n}"))
}

fn expr() -> impl Strategy<Value = E> {
    let leaf = prop_oneof![
        4 => number().prop_map(E::Num),
        4 => name().prop_map(E::Name),
        1 => (bound(), bound()).prop_map(|(a, b)| E::Interval(a, b)),
        1 => Just(E::Empty),
        1 => Just(E::Entire),
    ];
    leaf.prop_recursive(6, 64, 4, |inner| {
        prop_oneof![
            2 => inner.clone().prop_map(|a| E::Neg(Box::new(a))),
            1 => inner.clone().prop_map(|a| E::Pos(Box::new(a))),
            1 => inner.clone().prop_map(|a| E::Paren(Box::new(a))),
            6 => (prop_oneof![Just('+'), Just('-'), Just('*'), Just('/'), Just('^')], inner.clone(), inner.clone())
                .prop_map(|(op, a, b)| E::Bin(op, Box::new(a), Box::new(b))),
            2 => (name(), prop::collection::vec(inner, 0..4)).prop_map(|(f, args)| E::Call(f, args)),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_strings_never_panic(s in "\\PC{0,64}") {
        if let Err(d) = parse(&s) {
            let _ = d.render(&s);
        } else if let Ok(ast) = parse(&s) {
            check_invariants(&s, &ast);
        }
    }

    #[test]
    fn arbitrary_token_soup_never_panics(
        parts in prop::collection::vec(
            prop_oneof![
                Just("("), Just(")"), Just("["), Just("]"), Just(","), Just(";"), Just("let"),
                Just("="), Just("+"), Just("-"), Just("*"), Just("/"), Just("^"), Just("x"),
                Just("1"), Just("1e"), Just("inf"), Just("empty"), Just(" "), Just("\n"),
                Just("#c\n"), Just("\u{e9}"), Just("\0"), Just("0x1.8p1"), Just("."), Just("2x"),
            ],
            0..40,
        )
    ) {
        let s: String = parts.concat();
        match parse(&s) {
            Ok(ast) => {
                check_invariants(&s, &ast);
                let _ = to_sexpr(&ast);
            }
            Err(d) => {
                let r = d.render(&s);
                prop_assert!(r.starts_with("error: "));
                prop_assert!(!d.message.contains('\n'));
            }
        }
    }

    #[test]
    fn printed_expressions_reparse_to_the_same_tree(
        e in expr(),
        ws in prop_oneof![Just(""), Just(" "), Just("\n"), Just(" # c\n")],
    ) {
        let mut src = String::new();
        print(&e, 0, ws, &mut src);
        let ast = match parse(&src) {
            Ok(ast) => ast,
            Err(d) => return Err(TestCaseError::fail(d.render(&src))),
        };
        check_invariants(&src, &ast);
        let mut want = String::from("out ");
        expected_sexpr(&e, &mut want);
        want.push('\n');
        prop_assert_eq!(to_sexpr(&ast), want, "source: {}", src);
        // Printing the parsed tree back as (fully parenthesized) source gives the same tree.
        let printed = ast_to_source(&ast);
        let again = match parse(&printed) {
            Ok(ast) => ast,
            Err(d) => return Err(TestCaseError::fail(d.render(&printed))),
        };
        prop_assert_eq!(to_sexpr(&again), to_sexpr(&ast), "printed: {}", printed);
    }
}

mod minibex {
    use ivjit::search::minibex::parse;
    use ivjit::Interval;

    #[test]
    fn a_problem_reads_with_constants_substituted() {
        let p = parse(
            "Constants\n  k = 0.5;\n  m = 2*k;\n  one = 1;\nVariables\n  x in [-1.e8, 1.e8];\n  y in [0, one];\n\
             // a comment; with a semicolon\nminimize k*x + y^2;\nconstraints\n  x + y <= k;\n  \
             x*y = m;\nend\n",
        )
        .unwrap();
        assert_eq!(
            p.vars,
            vec![
                ("x".to_string(), Interval::new(-1e8, 1e8).unwrap()),
                ("y".to_string(), Interval::new(0.0, 1.0).unwrap()),
            ]
        );
        assert_eq!(p.objective.as_deref(), Some("(0.5)*x + y^2"));
        assert_eq!(p.constraints, "x + y <= (0.5), x*y = (2*(0.5))");
        // The constraints read as ivjit's.
        let c = ivjit::search::pave::Constraints::parse(&p.constraints).unwrap();
        assert_eq!(c.ranges.len(), 2);
    }

    #[test]
    fn the_bundled_benchmark_files_read() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/minibex/");
        let p = parse(&std::fs::read_to_string(format!("{dir}ex2_1_1.bch")).unwrap()).unwrap();
        assert_eq!(p.vars.len(), 5);
        assert!(p.objective.unwrap().starts_with("42*x1"));
        assert_eq!(p.constraints, "20*x1 + 12*x2 + 11*x3 + 7*x4 + 4*x5 <= 40");
        let p = parse(&std::fs::read_to_string(format!("{dir}ex14_1_1.bch")).unwrap()).unwrap();
        assert_eq!(p.vars[2].1, Interval::new(-1e8, 1e8).unwrap());
        assert_eq!(p.constraints.matches("<=").count(), 4);
    }

    #[test]
    fn ibex_spellings_read() {
        // `in[` without a space, oo for infinity, ln for log, an objective and a last
        // constraint without their semicolons.
        let p = parse(
            "Variables\n x in[-oo, 2];\n y in [0,+oo];\nMinimize\n  ln(y + 1) + x\n\
             Constraints\n  x + y <= 1;\n  x >= -3\nend\n",
        )
        .unwrap();
        assert_eq!(p.vars[0].1, Interval::new(f64::NEG_INFINITY, 2.0).unwrap());
        assert_eq!(p.vars[1].1, Interval::new(0.0, f64::INFINITY).unwrap());
        assert_eq!(
            p.objective.as_deref().map(str::trim),
            Some("log(y + 1) + x")
        );
        assert_eq!(p.constraints, "x + y <= 1, x >= -3");
    }

    #[test]
    fn vectors_bare_variables_and_constant_domains_read() {
        // IBEX's solver benchmarks: x[n] with x(i) from 1 and x[i] from 0, a variable
        // without a domain (the whole line), several per statement, expressions as bounds.
        let p = parse(
            "Variables\n x[3] in [0, 2*pi];\n y;\n z in [-10^8, 10^8], w in [0,1];\n\
             v in [-oo, floor(2.5)];\nConstraints\n x(1) + x[1] + x(3) = y;\n z <= w*x(2)\nend\n",
        )
        .unwrap();
        let names: Vec<&str> = p.vars.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["x_1", "x_2", "x_3", "y", "z", "w", "v"]);
        // oo is infinity as a name of its own, not inside floor.
        assert_eq!(p.vars[6].1, Interval::new(f64::NEG_INFINITY, 2.0).unwrap());
        // [0, 2 pi] enclosed outward: the upper bound is 2 pi rounded up (TAU is below it).
        let two_pi = p.vars[0].1;
        assert_eq!(two_pi.lo, 0.0);
        assert!(
            two_pi.hi == f64::from_bits(std::f64::consts::TAU.to_bits() + 1),
            "{two_pi:?}"
        );
        assert_eq!(p.vars[3].1, Interval::ENTIRE);
        assert_eq!(p.vars[4].1, Interval::new(-1e8, 1e8).unwrap());
        assert_eq!(p.constraints, "x_1 + x_2 + x_3 = y, z <= w*x_2");
    }

    #[test]
    fn what_is_outside_the_subset_is_named_with_its_line() {
        let e = parse("variables\n  x[3][2] in [0, 1];\nend").unwrap_err();
        assert_eq!(e.line, 2);
        let e = parse("variables\n x[2] in [0, 1];\nconstraints\n\n x(3) = 0;\nend").unwrap_err();
        assert_eq!(e.line, 5);
        assert!(e.message.contains("out of range"), "{e}");
        let e = parse("variables\n x[2] in [0, 1];\nconstraints\n x = 0;\nend").unwrap_err();
        assert!(e.message.contains("without an index"), "{e}");
        let e = parse("variables\n x in [0, 1];\n y in [0, x];\nend").unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.message.contains("constants"), "{e}");
        let e = parse("constants\n k[2] = 1;\nvariables\n x in [0, 1];\nend").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("vector"), "{e}");
        let e = parse("minimize x;").unwrap_err();
        assert!(e.message.contains("no variables"), "{e}");
    }
}
