//! ITF1788 conformance of the IEEE 1788 operations that are library calls rather than
//! expression functions: the boolean functions (`isEmpty`, `subset`, `less`, ...), the overlap
//! relation, the decoration operations (`newDec`, `setDec`, `intervalPart`,
//! `decorationPart`) and the correctly rounded reductions (`sum`, `sumAbs`, `sumSqr`, `dot`).
//! Every vector of these operations, decorated ones included, is run through the public API
//! (`Interval`, `DecoratedInterval`, `ivjit::reduction`), and each result must be exactly the
//! vector's: booleans and states are exact, and so are the reductions (correctly rounded).
//! These run on the CPU only: they are not part of compiled programs.

use crate::common::classes::splice_marked;
use crate::common::itl::{Item, Raw};
use crate::itf1788::vectors;
use ivjit::relation::{PREDICATES, RELATIONS};
use ivjit::{reduction, DecoratedInterval, Decoration, Interval, Round};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The ITF1788 operations run here.
const OPERATIONS: &[&str] = &[
    "isEmpty",
    "isEntire",
    "isNaI",
    "isCommonInterval",
    "isSingleton",
    "isMember",
    "equal",
    "subset",
    "interior",
    "disjoint",
    "less",
    "strictLess",
    "precedes",
    "strictPrecedes",
    "overlap",
    "newDec",
    "setDec",
    "intervalPart",
    "decorationPart",
    "sum_nearest",
    "sum_abs_nearest",
    "sum_sqr_nearest",
    "dot_nearest",
    "b-numsToInterval",
    "d-numsToInterval",
    "b-textToInterval",
    "d-textToInterval",
];

/// The ITF1788 operations this harness runs (the main harness lists them as run here).
pub(crate) fn operations() -> impl Iterator<Item = &'static str> {
    OPERATIONS.iter().copied()
}

/// An argument or result as a value to compare.
#[derive(Debug, PartialEq)]
enum Value {
    Bool(bool),
    Word(String),
    Interval(DecoratedInterval),
    /// An interval without a decoration (intervalPart's result).
    Bare(Interval),
    /// A number (the reductions'), compared bit for bit but for NaN's payload and -0 = +0.
    Number(f64),
    /// A constructor's error: the standard's UndefinedOperation, with the result it returns.
    Undefined(Box<Value>),
}

fn interval(item: &Item) -> Option<DecoratedInterval> {
    match item {
        Item::Interval { value, .. } => Some(*value),
        _ => None,
    }
}

fn word(item: &Item) -> Option<&str> {
    match item {
        Item::Other(w) => Some(w.as_str()),
        _ => None,
    }
}

/// ivjit's answer to a statement, or why it cannot be read.
fn answer(raw: &Raw) -> Result<Value, String> {
    let a = &raw.args;
    let iv = |k: usize| interval(a.get(k).ok_or("missing argument")?).ok_or("not an interval");
    // The library's tables of the boolean functions, by the standard's names.
    if let Some((_, f)) = PREDICATES.iter().find(|(n, _)| *n == raw.op) {
        return Ok(Value::Bool(f(&iv(0)?)));
    }
    if let Some((_, f)) = RELATIONS.iter().find(|(n, _)| *n == raw.op) {
        return Ok(Value::Bool(f(&iv(0)?, &iv(1)?)));
    }
    match raw.op.as_str() {
        "isMember" => {
            let Some(Item::Number(x)) = a.first() else {
                return Err("isMember without a number".into());
            };
            let b = interval(a.get(1).ok_or("missing interval")?).ok_or("not an interval")?;
            Ok(Value::Bool(b.is_member(*x)))
        }
        "overlap" => Ok(Value::Word(
            iv(0)?
                .overlap(&iv(1)?)
                .map_or("undefined".to_string(), |o| o.name().to_string()),
        )),
        "newDec" => Ok(Value::Interval(DecoratedInterval::undecorated(
            iv(0)?.interval,
        ))),
        "setDec" => {
            let d = a
                .get(1)
                .and_then(word)
                .ok_or("setDec without a decoration")?;
            let d = Decoration::from_name(d).ok_or("not a decoration")?;
            Ok(Value::Interval(DecoratedInterval::set_dec(
                iv(0)?.interval,
                d,
            )))
        }
        "intervalPart" => {
            let x = iv(0)?;
            // NaI's interval part is the empty set (with a signal the vectors name).
            Ok(Value::Bare(if x.is_nai() {
                Interval::EMPTY
            } else {
                x.interval
            }))
        }
        "decorationPart" => Ok(Value::Word(iv(0)?.decoration.name().to_string())),
        // Constructors: an error is the standard's UndefinedOperation, whose result is the
        // empty set (bare) or NaI (decorated).
        "b-numsToInterval" | "d-numsToInterval" => {
            let num = |k: usize| match a.get(k) {
                Some(Item::Number(x)) => Ok(*x),
                _ => Err(format!("argument {k} is not a number")),
            };
            let made = Interval::new(num(0)?, num(1)?);
            Ok(match (raw.op.starts_with('b'), made) {
                (true, Ok(iv)) => Value::Bare(iv),
                (false, Ok(iv)) => Value::Interval(DecoratedInterval::undecorated(iv)),
                (true, Err(_)) => Value::Undefined(Box::new(Value::Bare(Interval::EMPTY))),
                (false, Err(_)) => {
                    Value::Undefined(Box::new(Value::Interval(DecoratedInterval::NAI)))
                }
            })
        }
        "b-textToInterval" | "d-textToInterval" => {
            let Some(Item::Other(quoted)) = a.first() else {
                return Err("textToInterval without a string".into());
            };
            let text = quoted.trim_matches('"');
            Ok(if raw.op.starts_with('b') {
                match Interval::from_1788_text(text) {
                    Ok(iv) => Value::Bare(iv),
                    Err(_) => Value::Undefined(Box::new(Value::Bare(Interval::EMPTY))),
                }
            } else {
                match DecoratedInterval::from_1788_text(text) {
                    Ok(d) => Value::Interval(d),
                    Err(_) => Value::Undefined(Box::new(Value::Interval(DecoratedInterval::NAI))),
                }
            })
        }
        "sum_nearest" | "sum_abs_nearest" | "sum_sqr_nearest" | "dot_nearest" => {
            let v = |k: usize| match a.get(k) {
                Some(Item::Vector(v)) => Ok(v.as_slice()),
                _ => Err(format!("argument {k} is not a vector")),
            };
            let n = Round::Nearest;
            Ok(Value::Number(match raw.op.as_str() {
                "sum_nearest" => reduction::sum(v(0)?, n),
                "sum_abs_nearest" => reduction::sum_abs(v(0)?, n),
                "sum_sqr_nearest" => reduction::sum_sqr(v(0)?, n),
                _ => reduction::dot(v(0)?, v(1)?, n),
            }))
        }
        other => Err(format!("no call for {other}")),
    }
}

/// The vector's expected value.
fn expected(raw: &Raw) -> Result<Value, String> {
    let r = raw.results.first().ok_or("no result")?;
    let constructor = raw.op.ends_with("ToInterval");
    let value = expected_value(raw, r, constructor)?;
    // A constructor's UndefinedOperation is an error value of the library (setDec's `ill`
    // is the standard's NaI, not an error).
    Ok(
        if constructor && raw.signals.iter().any(|s| s == "UndefinedOperation") {
            Value::Undefined(Box::new(value))
        } else {
            value
        },
    )
}

fn expected_value(raw: &Raw, r: &Item, constructor: bool) -> Result<Value, String> {
    Ok(match r {
        Item::Interval { value, decorated }
            if constructor && raw.op.starts_with('b') && !decorated =>
        {
            Value::Bare(value.interval)
        }
        Item::Bool(b) => Value::Bool(*b),
        Item::Other(w) => Value::Word(w.clone()),
        Item::Interval { value, decorated } if raw.op == "intervalPart" && !decorated => {
            Value::Bare(value.interval)
        }
        Item::Interval { value, .. } => Value::Interval(*value),
        Item::Number(x) => Value::Number(*x),
        Item::Vector(_) => return Err("a vector result".into()),
    })
}

/// Whether two values agree: intervals by their bounds (-0 = +0) and decoration.
fn agrees(want: &Value, got: &Value) -> bool {
    let same = |a: &Interval, b: &Interval| {
        (a.is_empty() && b.is_empty()) || (!a.is_empty() && a.lo == b.lo && a.hi == b.hi)
    };
    match (want, got) {
        (Value::Interval(w), Value::Interval(g)) => {
            w.decoration == g.decoration && (w.is_nai() || same(&w.interval, &g.interval))
        }
        (Value::Bare(w), Value::Bare(g)) => same(w, g),
        (Value::Undefined(w), Value::Undefined(g)) => agrees(w, g),
        (Value::Number(w), Value::Number(g)) => (w.is_nan() && g.is_nan()) || w == g,
        _ => want == got,
    }
}

#[derive(Default)]
struct Row {
    cases: usize,
    decorated: usize,
    failures: Vec<String>,
}

#[test]
fn library_conformance() {
    let mut rows: BTreeMap<&str, Row> = OPERATIONS.iter().map(|&o| (o, Row::default())).collect();
    for raw in &vectors().raw {
        let Some(row) = rows.get_mut(raw.op.as_str()) else {
            continue;
        };
        let at = format!("{}:{} `{}`", raw.file, raw.line, raw.text);
        row.cases += 1;
        row.decorated += usize::from(raw.is_decorated());
        match (expected(raw), answer(raw)) {
            (Ok(want), Ok(got)) if agrees(&want, &got) => {}
            (Ok(want), Ok(got)) => row
                .failures
                .push(format!("{at}: got {got:?}, want {want:?}")),
            (Err(e), _) | (_, Err(e)) => row.failures.push(format!("{at}: {e}")),
        }
    }
    let mut t = String::new();
    let total = |f: &dyn Fn(&Row) -> usize| rows.values().map(f).sum::<usize>();
    let _ = writeln!(
        t,
        "**Library calls** (`Interval`, `DecoratedInterval`; CPU): {} cases ({} decorated), {} \
         failing.\n",
        total(&|r| r.cases),
        total(&|r| r.decorated),
        total(&|r| r.failures.len())
    );
    let _ = writeln!(t, "| ITF1788 op | ivjit | cases | decorated | failing |");
    let _ = writeln!(t, "|---|---|---|---|---|");
    for op in OPERATIONS {
        let r = &rows[op];
        let _ = writeln!(
            t,
            "| {op} | `{}` | {} | {} | {} |",
            rust_name(op),
            r.cases,
            r.decorated,
            r.failures.len()
        );
    }
    println!("{t}");
    if let Some(path) = std::env::var_os("IVJIT_CONFORMANCE_OUT") {
        splice_marked(
            &path.to_string_lossy(),
            "<!-- itf1788:library:begin -->",
            "<!-- itf1788:library:end -->",
            &t,
        );
    }
    crate::common::itl::assert_no_failures(
        "library calls",
        rows.values().flat_map(|r| &r.failures),
    );
    assert!(total(&|r| r.cases) > 800, "the vectors were not read");
    for (op, r) in &rows {
        assert!(r.cases > 0, "{op}: no vectors read");
    }
}

/// The library call of each operation, for the table.
fn rust_name(op: &str) -> &'static str {
    match op {
        "isEmpty" => "is_empty",
        "isEntire" => "is_entire",
        "isNaI" => "is_nai",
        "isCommonInterval" => "is_common",
        "isSingleton" => "is_singleton",
        "isMember" => "is_member",
        "equal" => "equal",
        "subset" => "subset",
        "interior" => "interior",
        "disjoint" => "disjoint",
        "less" => "less",
        "strictLess" => "strict_less",
        "precedes" => "precedes",
        "strictPrecedes" => "strict_precedes",
        "overlap" => "overlap",
        "newDec" => "DecoratedInterval::undecorated",
        "setDec" => "DecoratedInterval::set_dec",
        "intervalPart" => ".interval",
        "decorationPart" => ".decoration",
        "sum_nearest" => "reduction::sum",
        "sum_abs_nearest" => "reduction::sum_abs",
        "sum_sqr_nearest" => "reduction::sum_sqr",
        "dot_nearest" => "reduction::dot",
        "b-numsToInterval" => "Interval::new",
        "d-numsToInterval" => "Interval::new, DecoratedInterval::undecorated",
        "b-textToInterval" => "Interval::from_1788_text",
        "d-textToInterval" => "DecoratedInterval::from_1788_text",
        _ => "?",
    }
}

/// The comparison can fail: another boolean, state, bound or decoration disagrees.
#[test]
fn the_check_can_fail() {
    let d = |t: &str| Value::Interval(DecoratedInterval::parse(t).unwrap());
    assert!(!agrees(&Value::Bool(true), &Value::Bool(false)));
    assert!(!agrees(
        &Value::Word("meets".into()),
        &Value::Word("before".into())
    ));
    assert!(!agrees(&d("[1, 2]_com"), &d("[1, 2]_dac")));
    assert!(!agrees(&d("[1, 2]_com"), &d("[1, 3]_com")));
    assert!(agrees(&d("[-0, 2]_com"), &d("[0, 2]_com")));
}

/// The reductions round the exact result once: against exact rational arithmetic, in every
/// direction, on vectors that cancel, overflow a chained sum, and mix subnormals with huge
/// values.
#[test]
fn reductions_round_once_against_the_rational_oracle() {
    use crate::common::enclosure_oracle::round_nearest;
    use crate::common::oracle::{q_of, round_down, round_up, Fmt, Q};
    use crate::common::rng::splitmix64;
    let mut state = 0x1788u64;
    let mut next = || splitmix64(&mut state);
    let value = |next: &mut dyn FnMut() -> u64| -> f64 {
        let pick = next() % 8;
        let x = match pick {
            0 => f64::from_bits(next() % (1 << 52)), // subnormal
            1 => f64::from_bits(next() & !(1 << 63)).min(f64::MAX), // any finite
            2 => 1e308,
            3 => (next() % 1000) as f64 / 7.0,
            4 => 1.0 + f64::EPSILON * (next() % 8) as f64,
            5 => 0.0,
            _ => (next() % 2001) as f64 - 1000.0,
        };
        let x = if x.is_finite() { x } else { f64::MAX };
        if next().is_multiple_of(2) {
            -x
        } else {
            x
        }
    };
    for case in 0..3000 {
        let n = 1 + (next() % 6) as usize;
        let x: Vec<f64> = (0..n).map(|_| value(&mut next)).collect();
        let y: Vec<f64> = (0..n).map(|_| value(&mut next)).collect();
        let sums = [
            ("sum", x.iter().map(|&a| q_of(a)).sum::<Q>()),
            ("sum_abs", x.iter().map(|&a| q_of(a.abs())).sum::<Q>()),
            ("sum_sqr", x.iter().map(|&a| q_of(a) * q_of(a)).sum::<Q>()),
            (
                "dot",
                x.iter()
                    .zip(&y)
                    .map(|(&a, &b)| q_of(a) * q_of(b))
                    .sum::<Q>(),
            ),
        ];
        for (name, exact) in sums {
            let f = |r: Round| match name {
                "sum" => reduction::sum(&x, r),
                "sum_abs" => reduction::sum_abs(&x, r),
                "sum_sqr" => reduction::sum_sqr(&x, r),
                _ => reduction::dot(&x, &y, r),
            };
            let (d, u) = (round_down(&exact, Fmt::F64), round_up(&exact, Fmt::F64));
            let what = format!("case {case}: {name} of {x:?} (and {y:?})");
            assert_eq!(f(Round::Down), d, "{what}: down");
            assert_eq!(f(Round::Up), u, "{what}: up");
            if u.is_finite() && d.is_finite() {
                assert_eq!(f(Round::Nearest), round_nearest(&exact, Fmt::F64), "{what}");
            }
        }
    }
}
