//! A reader for the subset of the ITF1788 test-vector language (`.itl`) that the conformance
//! harness needs.
//!
//! A file is a sequence of `testcase NAME { ... }` blocks with C-style comments (`/* */`, `//`);
//! each statement is `op ARG... = RESULT... [signal NAME...];`. Arguments and results are
//! intervals (`[lo, hi]`, `[empty]`, `[entire]`, `[nai]`, optionally with a decoration suffix
//! `_com`, `_dac`, `_def`, `_trv`), bare numbers (pown's exponent) or quoted strings.
//!
//! Only statements whose operation is in [`SUPPORTED`] are returned. Among those, statements that
//! carry a decoration or `[nai]` anywhere are returned as [`Outcome::Skipped`] (ivjit has no
//! decorations yet); everything else must have exactly the expected shape (right number of
//! interval arguments, an integer exponent for `pown`, one interval result), or reading fails
//! with an error that names the file and line: the harness never silently drops a test line.
//!
//! Bounds are read with `ivjit::syntax::number::parse_enclosure` (the tightest f64 interval
//! around the literal). Most bounds are exact binary64 values, but 153 decimal literals in the
//! undecorated vectors of these operations are not (`[13.1,13.1]`, `[-1.9,-0.33]`, `abs [1.1,2.1]
//! = [1.1,2.1]`, mpfi's `[-infinity, -8.0e-17]`): the vectors were converted from C/C++ test
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
//! the real answer, so both readings round it outward, which gives the tightest f64 bound.

use ivjit::syntax::number::parse_enclosure;
use ivjit::Interval;

/// The ITF1788 operations the harness checks, with their number of interval arguments.
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
    /// pown's integer exponent, when it could be read (also for skipped lines).
    pub exponent: Option<i64>,
    /// The statement text, whitespace collapsed, for messages.
    pub text: String,
    pub outcome: Outcome,
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

/// One bound read both ways: (primary, outward, exact). The primary reading is the nearest
/// double for an inexact decimal literal and the outward rounding for an inexact hex literal.
fn parse_bound(text: &str, upper: bool) -> Result<(f64, f64, bool), String> {
    let e = parse_enclosure(text).map_err(|err| format!("bad bound `{text}`: {err}"))?;
    let outward = if upper { e.hi } else { e.lo };
    if e.exact {
        return Ok((e.lo, outward, true));
    }
    if text.to_ascii_lowercase().contains("0x") {
        return Ok((outward, outward, false));
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
    Ok((nearest, outward, false))
}

/// An interval literal read both ways: (nearest, outward, number of inexact bounds).
type Read = (Interval, Interval, usize);

/// Reads the inside of an undecorated, non-NaI interval literal.
fn parse_interval(inner: &str) -> Result<Read, String> {
    match inner.to_ascii_lowercase().as_str() {
        "empty" => return Ok((Interval::EMPTY, Interval::EMPTY, 0)),
        "entire" => return Ok((Interval::ENTIRE, Interval::ENTIRE, 0)),
        _ => {}
    }
    let (a, b) = inner
        .split_once(',')
        .ok_or_else(|| format!("`[{inner}]` is not an interval literal"))?;
    let (lo_n, lo_o, lo_exact) = parse_bound(a.trim(), false)?;
    let (hi_n, hi_o, hi_exact) = parse_bound(b.trim(), true)?;
    let nearest = Interval::new(lo_n, hi_n).map_err(|e| format!("`[{inner}]`: {e}"))?;
    let outward = Interval::new(lo_o, hi_o).map_err(|e| format!("`[{inner}]`: {e}"))?;
    Ok((
        nearest,
        outward,
        usize::from(!lo_exact) + usize::from(!hi_exact),
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
    let exponent = if op == "pown" {
        match lhs.last() {
            Some(Token::Word(w)) => Some(
                parse_exponent(w)
                    .ok_or_else(|| format!("pown exponent `{w}` is not an integer"))?,
            ),
            _ => return Err("pown without an integer exponent".into()),
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
            if n_words > 0 { " and an exponent" } else { "" },
            lhs.len()
        ));
    }
    let mut inexact_args = 0;
    let mut args = Vec::new();
    let mut args_outward = Vec::new();
    for t in &lhs[..n_intervals] {
        match t {
            Token::Interval { inner, .. } => {
                let (nearest, outward, inexact) = parse_interval(inner)?;
                inexact_args += inexact;
                args.push(nearest);
                args_outward.push(outward);
            }
            other => return Err(format!("argument {other:?} is not an interval")),
        }
    }
    // The result: one interval, optionally followed by `signal NAME...`.
    let (expected, inexact_expected) = match rhs.first() {
        Some(Token::Interval { inner, .. }) => {
            let (nearest, _, inexact) = parse_interval(inner)?;
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
            inexact_expected,
        }),
    ))
}

/// Reads every statement of a supported operation in one file's text.
pub fn parse_file(file: &str, text: &str) -> Result<Vec<Line>, String> {
    let text = strip_comments(text).map_err(|e| format!("{file}: {e}"))?;
    let mut lines = Vec::new();
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
                    lines.push(Line {
                        file: file.to_string(),
                        line: start_line,
                        testcase: testcase.clone(),
                        op: op.to_string(),
                        exponent,
                        text: words.join(" "),
                        outcome,
                    });
                }
            }
        }
        line += rest[..k + 1].matches('\n').count();
        rest = &rest[k + 1..];
    }
    Ok(lines)
}
