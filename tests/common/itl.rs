//! A reader for the subset of the ITF1788 test-vector language (`.itl`) that the conformance
//! harness needs.
//!
//! A file is a sequence of `testcase NAME { ... }` blocks with C-style comments (`/* */`, `//`);
//! each statement is `op ARG... = RESULT... [signal NAME...];`. Arguments and results are
//! intervals (`[lo, hi]`, `[empty]`, `[entire]`, `[nai]`, optionally with a decoration suffix
//! `_com`, `_dac`, `_def`, `_trv`), bare numbers (the integer of `pown` and `rootn`) or quoted
//! strings.
//!
//! Only statements whose operation is in [`SUPPORTED`] are returned; the others are counted per
//! operation name ([`Parsed::others`]) so that the report can say what was not run. Among the
//! supported ones, statements that
//! carry a decoration or `[nai]` anywhere are returned as [`Outcome::Skipped`] for the
//! undecorated harness and read as a [`DecoratedCase`] for the decorated one; everything else must have exactly the expected shape (right number of
//! interval arguments, an integer for `pown` and `rootn`, one interval result), or reading fails
//! with an error that names the file and line: the harness never silently drops a test line.
//!
//! Bounds are read with `ivjit::internals::syntax::number::parse_enclosure` (the tightest f64 interval
//! around the literal). Most bounds are exact binary64 values, but some decimal literals in the
//! undecorated vectors of these operations are not (`[13.1,13.1]`, `[-1.9,-0.33]`, `abs [1.1,2.1]
//! = [1.1,2.1]`, mpfi's `[-infinity, -8.0e-17]`, `pow [0.1,0.5] ...`): the vectors were converted from C/C++ test
//! suites where such a literal is the *nearest* double, and the expected results were computed
//! from (and printed as) those nearest doubles. So every bound is read two ways:
//!
//! * `args` / `expected`: the nearest double (round to nearest even). This is the reading under
//!   which the expected results are the tightest answers; tightness is judged on it.
//! * `args_outward`: the argument bounds rounded outward (lower bound down, upper bound up), a
//!   box that contains the nearest-reading box. The exact range over it contains the exact range
//!   over the nearest box, so ivjit's result on it must still contain `expected`: the harness
//!   checks containment (only) on these boxes as well.
//!
//! For exact literals the two readings agree. Inexact *hex* literals are different: they come
//! from MPFI's tests, which state real bounds with more bits than binary64 has (`add
//! [0x123456789abcdfp-56, ...] [3.5, 3.5] = [0x3923456789abcdp-52, ...]`: the exact sum is
//! `0x3923456789abcd.fp-52`, the literal a 54-bit lower bound of it). Such a literal is a bound of
//! the real answer, so both readings round it outward, which gives the tightest f64 bound. (As an
//! argument, such a literal makes the f64 box a strict superset of the real one, so the f64
//! result may lie outside the expected bound by more than the function's own error: the harness
//! marks these cases in its messages.)

use ivjit::internals::syntax::number::parse_enclosure;
use ivjit::{DecoratedInterval, Decoration, Interval};
use std::collections::BTreeMap;

/// The ITF1788 operations the harness checks, with their number of interval arguments (`pown`
/// and `rootn` also take an integer, read into [`Line::exponent`]). ITF1788 names: `logp1` is
/// log1p, `roundTiesToAway` is ivjit's `round`, `roundTiesToEven` its `rint`; `atan2 y x` takes
/// the y interval first.
pub const SUPPORTED: &[(&str, usize)] = &[
    ("add", 2),
    ("sub", 2),
    ("mul", 2),
    ("div", 2),
    ("neg", 1),
    ("pos", 1),
    ("recip", 1),
    ("sqr", 1),
    ("sqrt", 1),
    ("pown", 1),
    ("abs", 1),
    ("min", 2),
    ("max", 2),
    ("fma", 3),
    ("convexHull", 2),
    ("intersection", 2),
    // Elementary functions.
    ("exp", 1),
    ("exp2", 1),
    ("exp10", 1),
    ("expm1", 1),
    ("log", 1),
    ("log2", 1),
    ("log10", 1),
    ("logp1", 1),
    ("sin", 1),
    ("cos", 1),
    ("tan", 1),
    ("asin", 1),
    ("acos", 1),
    ("atan", 1),
    ("atan2", 2),
    ("sinh", 1),
    ("cosh", 1),
    ("tanh", 1),
    ("asinh", 1),
    ("acosh", 1),
    ("atanh", 1),
    ("pow", 2),
    ("rootn", 1),
    ("cbrt", 1),
    ("hypot", 2),
    ("sinpi", 1),
    ("cospi", 1),
    // Derived functions (expansions into rigorous operations, src/point.rs `DerivedFn`).
    ("sec", 1),
    ("csc", 1),
    ("cot", 1),
    ("acot", 1),
    ("sech", 1),
    ("csch", 1),
    ("coth", 1),
    ("acoth", 1),
    ("asech", 1),
    ("acsch", 1),
    // Rounding to integers and sign (exact).
    ("floor", 1),
    ("ceil", 1),
    ("trunc", 1),
    ("roundTiesToAway", 1),
    ("roundTiesToEven", 1),
    ("sign", 1),
];

/// The operations of [`SUPPORTED`] that take an integer after their interval argument.
pub const INTEGER_ARG: &[&str] = &["pown", "rootn"];

/// Elementary functions of IEEE 1788 (and of the libraries the vectors come from) that ivjit
/// does not have. Statements of these are not run; the report counts them apart from the
/// non-arithmetic operations (reverse, boolean, set, numeric, constructors, reductions).
pub const ELEMENTARY_NOT_SUPPORTED: &[&str] = &[
    "exp2m1",
    "exp10m1",
    "log2p1",
    "log10p1",
    "compoundm1",
    "rsqrt",
    "tanpi",
    "asinpi",
    "acospi",
    "atanpi",
    "atan2pi",
    "asec",
    "acsc",
];

/// Number of interval arguments of a supported operation.
pub fn arity(op: &str) -> Option<usize> {
    SUPPORTED
        .iter()
        .find(|(name, _)| *name == op)
        .map(|&(_, n)| n)
}

/// One statement of a supported operation.
#[derive(Clone, Debug)]
pub struct Line {
    /// File name (without directory).
    pub file: String,
    /// 1-based line where the statement starts.
    pub line: usize,
    /// Name of the enclosing `testcase`.
    pub testcase: String,
    /// The ITF1788 operation name (`add`, `pown`, `convexHull`, ...).
    pub op: String,
    /// The integer argument of `pown` (exponent) and `rootn` (n), when it could be read (also
    /// for skipped lines).
    pub exponent: Option<i64>,
    /// The statement text, whitespace collapsed, for messages.
    pub text: String,
    pub outcome: Outcome,
    /// The statement as a decorated test, for the statements that carry a decoration or
    /// `[nai]` (their `outcome` is [`Outcome::Skipped`]: the undecorated harness does not run
    /// them).
    pub decorated: Option<DecoratedCase>,
}

/// A decorated test: decorated arguments and the expected decorated result (NaI included).
/// An argument written without a decoration gets IEEE 1788's `newDec` decoration.
#[derive(Clone, Debug)]
pub struct DecoratedCase {
    /// The arguments, inexact literals read as the nearest double.
    pub args: Vec<DecoratedInterval>,
    /// The arguments, inexact literals rounded outward.
    pub args_outward: Vec<DecoratedInterval>,
    /// The expected result, inexact literals read as the nearest double.
    pub expected: DecoratedInterval,
    /// How many bounds of the arguments were not exactly representable.
    pub inexact_args: usize,
}

#[derive(Clone, Debug)]
pub enum Outcome {
    Case(Case),
    Skipped(&'static str),
}

/// An undecorated test: interval arguments and the expected (exact IEEE 1788) result.
#[derive(Clone, Debug)]
pub struct Case {
    /// The arguments, inexact literals read as the nearest double.
    pub args: Vec<Interval>,
    /// The arguments, inexact literals rounded outward (equal to `args` when all are exact).
    pub args_outward: Vec<Interval>,
    /// The expected result, inexact literals read as the nearest double.
    pub expected: Interval,
    /// How many bounds of the arguments were not exactly representable.
    pub inexact_args: usize,
    /// How many of those were hex literals (real bounds with more than 53 bits, rounded outward
    /// in both readings: the f64 box is wider than the vector's box).
    pub widened_args: usize,
    /// How many bounds of the expected result were not exactly representable.
    pub inexact_expected: usize,
}

/// Strips `/* */` and `//` comments, keeping newlines so that line numbers stay right.
fn strip_comments(text: &str) -> Result<String, String> {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut line = 1;
    while i < b.len() {
        if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            let start = line;
            i += 2;
            loop {
                if i >= b.len() {
                    return Err(format!("unterminated /* comment starting on line {start}"));
                }
                if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    i += 2;
                    out.push(' ');
                    break;
                }
                if b[i] == b'\n' {
                    out.push('\n');
                    line += 1;
                }
                i += 1;
            }
        } else if b[i] == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i] == b'"' {
            // Strings are copied verbatim (they may contain anything but a quote).
            let start = i;
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\n' {
                    line += 1;
                }
                i += 1;
            }
            i = (i + 1).min(b.len());
            out.push_str(&text[start..i]);
        } else {
            if b[i] == b'\n' {
                line += 1;
            }
            // Copy one UTF-8 character.
            let ch = text[i..].chars().next().unwrap();
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    Ok(out)
}

#[derive(Clone, Debug, PartialEq)]
enum Token {
    /// `[...]` with its inner text and an optional decoration suffix.
    Interval {
        inner: String,
        decoration: Option<String>,
    },
    Str(String),
    Word(String),
    Eq,
}

fn tokenize(stmt: &str) -> Result<Vec<Token>, String> {
    let b = stmt.as_bytes();
    let mut toks = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c == b'[' {
            let close = stmt[i..]
                .find(']')
                .ok_or_else(|| format!("unclosed '[' in `{stmt}`"))?
                + i;
            let inner = stmt[i + 1..close].trim().to_string();
            i = close + 1;
            let decoration = if b.get(i) == Some(&b'_') {
                let start = i + 1;
                i = start;
                while i < b.len() && b[i].is_ascii_alphanumeric() {
                    i += 1;
                }
                Some(stmt[start..i].to_string())
            } else {
                None
            };
            toks.push(Token::Interval { inner, decoration });
        } else if c == b'"' {
            let close = stmt[i + 1..]
                .find('"')
                .ok_or_else(|| format!("unclosed '\"' in `{stmt}`"))?
                + i
                + 1;
            toks.push(Token::Str(stmt[i + 1..close].to_string()));
            i = close + 1;
        } else if c == b'=' {
            toks.push(Token::Eq);
            i += 1;
        } else {
            let start = i;
            while i < b.len() && !b[i].is_ascii_whitespace() && !matches!(b[i], b'[' | b'=' | b'"')
            {
                i += 1;
            }
            toks.push(Token::Word(stmt[start..i].to_string()));
        }
    }
    Ok(toks)
}

/// One bound read both ways: (primary, outward, exact, hex). The primary reading is the nearest
/// double for an inexact decimal literal and the outward rounding for an inexact hex literal.
fn parse_bound(text: &str, upper: bool) -> Result<(f64, f64, bool, bool), String> {
    let e = parse_enclosure(text).map_err(|err| format!("bad bound `{text}`: {err}"))?;
    let outward = if upper { e.hi } else { e.lo };
    if e.exact {
        return Ok((e.lo, outward, true, false));
    }
    if text.to_ascii_lowercase().contains("0x") {
        return Ok((outward, outward, false, true));
    }
    // std's decimal parser rounds to nearest, ties to even.
    let nearest: f64 = text
        .parse()
        .map_err(|err| format!("bad decimal bound `{text}`: {err}"))?;
    if nearest != e.lo && nearest != e.hi {
        return Err(format!(
            "nearest double to `{text}` is not one of its enclosure's bounds"
        ));
    }
    Ok((nearest, outward, false, false))
}

/// An interval literal read both ways: (nearest, outward, number of inexact bounds, number of
/// them that are hex literals).
type Read = (Interval, Interval, usize, usize);

/// Reads the inside of an undecorated, non-NaI interval literal.
fn parse_interval(inner: &str) -> Result<Read, String> {
    match inner.to_ascii_lowercase().as_str() {
        "empty" => return Ok((Interval::EMPTY, Interval::EMPTY, 0, 0)),
        "entire" => return Ok((Interval::ENTIRE, Interval::ENTIRE, 0, 0)),
        _ => {}
    }
    let (a, b) = inner
        .split_once(',')
        .ok_or_else(|| format!("`[{inner}]` is not an interval literal"))?;
    let (lo_n, lo_o, lo_exact, lo_hex) = parse_bound(a.trim(), false)?;
    let (hi_n, hi_o, hi_exact, hi_hex) = parse_bound(b.trim(), true)?;
    let nearest = Interval::new(lo_n, hi_n).map_err(|e| format!("`[{inner}]`: {e}"))?;
    let outward = Interval::new(lo_o, hi_o).map_err(|e| format!("`[{inner}]`: {e}"))?;
    Ok((
        nearest,
        outward,
        usize::from(!lo_exact) + usize::from(!hi_exact),
        usize::from(lo_hex) + usize::from(hi_hex),
    ))
}

fn parse_exponent(word: &str) -> Option<i64> {
    let w = word.strip_prefix('+').unwrap_or(word);
    let digits = w.strip_prefix('-').unwrap_or(w);
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    w.parse().ok()
}

/// Reads one statement of a supported operation (its tokens after the operation name).
fn read_statement(op: &str, toks: &[Token]) -> Result<(Option<i64>, Outcome), String> {
    let eq = toks
        .iter()
        .position(|t| *t == Token::Eq)
        .ok_or("no `=` in the statement")?;
    let (lhs, rhs) = (&toks[..eq], &toks[eq + 1..]);
    let exponent = if INTEGER_ARG.contains(&op) {
        match lhs.last() {
            Some(Token::Word(w)) => Some(
                parse_exponent(w)
                    .ok_or_else(|| format!("{op} argument `{w}` is not an integer"))?,
            ),
            _ => return Err(format!("{op} without an integer argument")),
        }
    } else {
        None
    };
    let is_nai_or_decorated = |t: &Token| match t {
        Token::Interval { inner, decoration } => {
            decoration.is_some() || inner.eq_ignore_ascii_case("nai")
        }
        _ => false,
    };
    if toks.iter().any(is_nai_or_decorated) {
        return Ok((exponent, Outcome::Skipped("decorated or NaI")));
    }
    let n_intervals = arity(op).unwrap();
    let n_words = usize::from(exponent.is_some());
    if lhs.len() != n_intervals + n_words {
        return Err(format!(
            "expected {n_intervals} interval argument(s){}, found {} argument(s)",
            if n_words > 0 { " and an integer" } else { "" },
            lhs.len()
        ));
    }
    let mut inexact_args = 0;
    let mut widened_args = 0;
    let mut args = Vec::new();
    let mut args_outward = Vec::new();
    for t in &lhs[..n_intervals] {
        match t {
            Token::Interval { inner, .. } => {
                let (nearest, outward, inexact, hex) = parse_interval(inner)?;
                inexact_args += inexact;
                widened_args += hex;
                args.push(nearest);
                args_outward.push(outward);
            }
            other => return Err(format!("argument {other:?} is not an interval")),
        }
    }
    // The result: one interval, optionally followed by `signal NAME...`.
    let (expected, inexact_expected) = match rhs.first() {
        Some(Token::Interval { inner, .. }) => {
            let (nearest, _, inexact, _) = parse_interval(inner)?;
            (nearest, inexact)
        }
        _ => return Err("the result is not an interval".into()),
    };
    match rhs.get(1) {
        None => {}
        Some(Token::Word(w)) if w == "signal" => {}
        Some(other) => return Err(format!("unexpected {other:?} after the result")),
    }
    Ok((
        exponent,
        Outcome::Case(Case {
            args,
            args_outward,
            expected,
            inexact_args,
            widened_args,
            inexact_expected,
        }),
    ))
}

/// One decorated interval literal both ways (nearest, outward, inexact bounds).
fn parse_decorated(
    inner: &str,
    decoration: &Option<String>,
) -> Result<(DecoratedInterval, DecoratedInterval, usize), String> {
    if inner.eq_ignore_ascii_case("nai") {
        return Ok((DecoratedInterval::NAI, DecoratedInterval::NAI, 0));
    }
    let (nearest, outward, inexact, _) = parse_interval(inner)?;
    let dec = |iv: Interval| -> Result<DecoratedInterval, String> {
        match decoration {
            None => Ok(DecoratedInterval::undecorated(iv)),
            Some(name) => {
                let d = Decoration::from_name(name)
                    .ok_or_else(|| format!("`_{name}` is not a decoration"))?;
                DecoratedInterval::new(iv, d).map_err(|e| e.to_string())
            }
        }
    };
    Ok((dec(nearest)?, dec(outward)?, inexact))
}

/// Reads a statement that carries a decoration or `[nai]` as a decorated test.
fn read_decorated(
    op: &str,
    toks: &[Token],
    exponent: Option<i64>,
) -> Result<DecoratedCase, String> {
    let eq = toks.iter().position(|t| *t == Token::Eq).ok_or("no `=`")?;
    let (lhs, rhs) = (&toks[..eq], &toks[eq + 1..]);
    let n_intervals = arity(op).unwrap();
    if lhs.len() != n_intervals + usize::from(exponent.is_some()) {
        return Err(format!("expected {n_intervals} interval argument(s)"));
    }
    let mut case = DecoratedCase {
        args: Vec::new(),
        args_outward: Vec::new(),
        expected: DecoratedInterval::NAI,
        inexact_args: 0,
    };
    for t in &lhs[..n_intervals] {
        let Token::Interval { inner, decoration } = t else {
            return Err(format!("argument {t:?} is not an interval"));
        };
        let (nearest, outward, inexact) = parse_decorated(inner, decoration)?;
        case.args.push(nearest);
        case.args_outward.push(outward);
        case.inexact_args += inexact;
    }
    match rhs.first() {
        Some(Token::Interval { inner, decoration }) => {
            case.expected = parse_decorated(inner, decoration)?.0;
        }
        _ => return Err("the result is not an interval".into()),
    }
    match rhs.get(1) {
        None => {}
        Some(Token::Word(w)) if w == "signal" => {}
        Some(other) => return Err(format!("unexpected {other:?} after the result")),
    }
    Ok(case)
}

/// What one file holds for the harness.
#[derive(Clone, Debug, Default)]
pub struct Parsed {
    /// Every statement of a supported operation.
    pub lines: Vec<Line>,
    /// The number of statements of every other operation, by name (not run by the arithmetic
    /// harness).
    pub others: BTreeMap<String, usize>,
    /// Every statement of the other operations, read item by item, for the harnesses of the
    /// operations that are not interval arithmetic (numeric functions, cancellation, ...).
    pub raw: Vec<Raw>,
}

/// One item of a statement outside [`SUPPORTED`].
#[derive(Clone, Debug)]
pub enum Item {
    /// An interval literal, inexact bounds read as the nearest double; `decorated`: it carries
    /// a decoration or is `[nai]`.
    Interval {
        value: DecoratedInterval,
        decorated: bool,
    },
    /// A number (`NaN`, `infinity` and `-infinity` included), an inexact decimal read as the
    /// nearest double.
    Number(f64),
    /// `true` or `false`.
    Bool(bool),
    /// A vector of numbers, `{1.0, 2.0, NaN}` (the reductions' arguments).
    Vector(Vec<f64>),
    /// Anything else, as written (strings, vectors, `signal` and its names).
    Other(String),
}

/// A statement of an operation outside [`SUPPORTED`]: its arguments and results.
#[derive(Clone, Debug)]
pub struct Raw {
    /// File name (without directory).
    pub file: String,
    /// 1-based line where the statement starts.
    pub line: usize,
    /// The ITF1788 operation name.
    pub op: String,
    /// The statement text, whitespace collapsed, for messages.
    pub text: String,
    pub args: Vec<Item>,
    /// The results, up to `signal`.
    pub results: Vec<Item>,
    /// The exceptions the statement signals (`UndefinedOperation`, ...).
    pub signals: Vec<String>,
}

impl Raw {
    /// Whether an argument or result is decorated or NaI.
    pub fn is_decorated(&self) -> bool {
        self.args.iter().chain(&self.results).any(|i| {
            matches!(
                i,
                Item::Interval {
                    decorated: true,
                    ..
                }
            )
        })
    }
}

fn read_item(t: &Token) -> Item {
    match t {
        Token::Interval { inner, decoration } => match parse_decorated(inner, decoration) {
            Ok((value, _, _)) => Item::Interval {
                value,
                decorated: decoration.is_some() || inner.eq_ignore_ascii_case("nai"),
            },
            Err(_) => Item::Other(format!("[{inner}]")),
        },
        Token::Word(w) if w.eq_ignore_ascii_case("nan") => Item::Number(f64::NAN),
        Token::Word(w) if w == "true" || w == "false" => Item::Bool(w == "true"),
        Token::Word(w) => match parse_bound(w, false) {
            Ok((x, ..)) => Item::Number(x),
            Err(_) => Item::Other(w.clone()),
        },
        Token::Str(s) => Item::Other(format!("\"{s}\"")),
        Token::Eq => Item::Other("=".into()),
    }
}

/// Reads a statement of an operation outside [`SUPPORTED`] (its text after the name).
fn read_raw(stmt: &str) -> Option<(Vec<Item>, Vec<Item>, Vec<String>)> {
    // Vectors `{...}` become items of their own; the text between them is tokenized.
    let mut items: Vec<Option<Item>> = Vec::new(); // None: the `=`
    let mut rest = stmt;
    while !rest.is_empty() {
        let (outside, vector) = match rest.find('{') {
            Some(open) => {
                let close = rest[open..].find('}')? + open;
                let v = rest[open + 1..close]
                    .split(',')
                    .map(|w| match read_item(&Token::Word(w.trim().to_string())) {
                        Item::Number(x) => Some(x),
                        _ => None,
                    })
                    .collect::<Option<Vec<f64>>>()?;
                let outside = &rest[..open];
                rest = &rest[close + 1..];
                (outside, Some(Item::Vector(v)))
            }
            None => {
                let outside = rest;
                rest = "";
                (outside, None)
            }
        };
        for t in tokenize(outside).ok()? {
            items.push((t != Token::Eq).then(|| read_item(&t)));
        }
        if vector.is_some() {
            items.push(vector);
        }
    }
    let eq = items.iter().position(Option::is_none)?;
    let args = items[..eq].iter().flatten().cloned().collect();
    let after: Vec<&Item> = items[eq + 1..].iter().flatten().collect();
    let cut = after
        .iter()
        .position(|i| matches!(i, Item::Other(w) if w == "signal"))
        .unwrap_or(after.len());
    let results = after[..cut].iter().map(|&i| i.clone()).collect();
    let signals = after[cut..]
        .iter()
        .skip(1)
        .filter_map(|i| match i {
            Item::Other(w) => Some(w.clone()),
            _ => None,
        })
        .collect();
    Some((args, results, signals))
}

/// Reads every statement of a supported operation in one file's text, and counts the others.
pub fn parse_file(file: &str, text: &str) -> Result<Parsed, String> {
    let text = strip_comments(text).map_err(|e| format!("{file}: {e}"))?;
    let mut lines = Vec::new();
    let mut others: BTreeMap<String, usize> = BTreeMap::new();
    let mut raw = Vec::new();
    let mut testcase = String::new();
    let mut line = 1;
    let mut rest = text.as_str();
    while !rest.is_empty() {
        // Next structural unit: up to the `{` that opens a testcase, the `;` that ends a
        // statement or the `}` that closes a testcase. Inside a statement, braces (the vectors of
        // the reduction operations) and quoted strings are skipped over.
        let in_testcase = !testcase.is_empty();
        let mut end = None;
        let mut in_str = false;
        let mut depth = 0usize;
        for (k, c) in rest.char_indices() {
            match c {
                '"' => in_str = !in_str,
                _ if in_str => {}
                '{' if in_testcase => depth += 1,
                '}' if in_testcase && depth > 0 => depth -= 1,
                '{' | '}' | ';' if depth == 0 => {
                    end = Some((k, c));
                    break;
                }
                _ => {}
            }
        }
        let Some((k, delim)) = end else {
            if !rest.trim().is_empty() || in_testcase {
                return Err(format!(
                    "{file}:{line}: unterminated text at the end: `{}`",
                    rest.trim()
                ));
            }
            break;
        };
        let chunk = &rest[..k];
        let lead = chunk.len() - chunk.trim_start().len();
        let start_line = line + chunk[..lead].matches('\n').count();
        let words: Vec<&str> = chunk.split_whitespace().collect();
        match delim {
            '{' => {
                if words.len() != 2 || words[0] != "testcase" {
                    return Err(format!(
                        "{file}:{start_line}: expected `testcase NAME {{`, found `{}`",
                        chunk.trim()
                    ));
                }
                testcase = words[1].to_string();
            }
            '}' => {
                if !in_testcase || !words.is_empty() {
                    return Err(format!(
                        "{file}:{start_line}: statement without `;`: `{}`",
                        chunk.trim()
                    ));
                }
                testcase.clear();
            }
            _ => {
                if !in_testcase {
                    return Err(format!(
                        "{file}:{start_line}: statement outside a testcase: `{}`",
                        chunk.trim()
                    ));
                }
                let op = words.first().copied().unwrap_or("");
                if arity(op).is_some() {
                    let stmt = chunk.trim();
                    let toks = tokenize(&stmt[op.len()..])
                        .map_err(|e| format!("{file}:{start_line}: {e}"))?;
                    let (exponent, outcome) = read_statement(op, &toks)
                        .map_err(|e| format!("{file}:{start_line}: `{stmt}`: {e}"))?;
                    let decorated = match outcome {
                        Outcome::Skipped(_) => Some(
                            read_decorated(op, &toks, exponent)
                                .map_err(|e| format!("{file}:{start_line}: `{stmt}`: {e}"))?,
                        ),
                        Outcome::Case(_) => None,
                    };
                    lines.push(Line {
                        file: file.to_string(),
                        line: start_line,
                        testcase: testcase.clone(),
                        op: op.to_string(),
                        exponent,
                        text: words.join(" "),
                        outcome,
                        decorated,
                    });
                } else if !op.is_empty() {
                    *others.entry(op.to_string()).or_default() += 1;
                    let stmt = chunk.trim();
                    if let Some((args, results, signals)) = read_raw(&stmt[op.len()..]) {
                        raw.push(Raw {
                            file: file.to_string(),
                            line: start_line,
                            op: op.to_string(),
                            text: words.join(" "),
                            args,
                            results,
                            signals,
                        });
                    }
                }
            }
        }
        line += rest[..k + 1].matches('\n').count();
        rest = &rest[k + 1..];
    }
    Ok(Parsed { lines, others, raw })
}

/// Fails with every failure listed, one a line, after `what` (`"CPU f64: 3 failures"`).
pub fn assert_no_failures<'a>(what: &str, failures: impl IntoIterator<Item = &'a String>) {
    let failures: Vec<&str> = failures.into_iter().map(String::as_str).collect();
    assert!(
        failures.is_empty(),
        "{what}: {} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// A harness's report in docs/conformance.md: a headline, a table with one row per operation
/// (`columns` its header, each row one cell per column), then the statements not run.
pub fn report_table(
    headline: &str,
    columns: &[&str],
    rows: &[Vec<String>],
    not_run: &[&String],
) -> String {
    let mut s = format!("{headline}\n\n| {} |\n|", columns.join(" | "));
    s.push_str(&"---|".repeat(columns.len()));
    s.push('\n');
    for r in rows {
        s.push_str(&format!("| {} |\n", r.join(" | ")));
    }
    if !not_run.is_empty() {
        s.push_str("\nNot run:\n\n");
        for n in not_run {
            s.push_str(&format!("- {n}\n"));
        }
    }
    s
}

/// Prints a harness's `table`, writes it into `IVJIT_CONFORMANCE_OUT` (when set) between the
/// markers `<!-- itf1788:{section}:{backend}-{precision}:begin -->` and `...:end -->`, and
/// fails on any failure (`backend` is "CPU" or "GPU").
pub fn publish<'a>(
    section: &str,
    backend: &str,
    precision: ivjit::Precision,
    table: &str,
    failures: impl IntoIterator<Item = &'a String>,
) {
    println!("{table}");
    if let Some(path) = std::env::var_os("IVJIT_CONFORMANCE_OUT") {
        let tag = format!("{}-{}", backend.to_lowercase(), precision.name());
        super::classes::splice_marked(
            &path.to_string_lossy(),
            &format!("<!-- itf1788:{section}:{tag}:begin -->"),
            &format!("<!-- itf1788:{section}:{tag}:end -->"),
            table,
        );
    }
    assert_no_failures(&format!("{backend} {}", precision.name()), failures);
}
