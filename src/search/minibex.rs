//! A reader for the scalar subset of IBEX's Minibex (`.bch`, `.mbx`): the format of the
//! benchmark problems the interval optimization community shares (IBEX's `benchs/optim`,
//! `benchs/solver`; docs/constraints.md), so that they run unchanged.
//!
//! ```text
//! constants            // optional: name = value; (scalars, earlier ones usable in later)
//!   k = 0.5;
//! variables
//!   x1 in [-5, 5];     // a scalar variable and its domain
//!   x2 in [-1.e8, 1.e8];
//! minimize x1 + k*x2;  // optional
//! constraints          // optional: f <= g; f >= g; f = g; (comma- or semicolon-ended)
//!   x1^2 + x2^2 <= 1;
//! end
//! ```
//!
//! Keywords are case-insensitive; `//` comments run to the end of the line; a statement ends
//! at `;` or where a line starts with the next section's keyword (IBEX files often leave the
//! objective and the last constraint without one). Expressions are ivjit's syntax, which IBEX's
//! scalar syntax is (`^`, `sqr`, `exp`, `log` and its other name `ln`, `sqrt`, `abs`, `min`,
//! `max`, `atan2`, ...); a constant is substituted, in parentheses, for its name; `oo` in a
//! domain is infinity.
//! A constant given as an interval (`e in [a, b]`) is substituted as that interval.
//!
//! **Vectors** (most of IBEX's `benchs/solver`): `x[10] in [lo, hi];` declares ten scalars
//! that the problem names `x_1`, ..., `x_10`; IBEX's references `x(i)` (1-based) and `x[i]`
//! (0-based), with a literal index, become those names. A variable declared without a domain
//! (`x;`) ranges over the whole line; several may share a statement (`x in [0, 1], y;`). A
//! domain's bounds may be constant expressions (`[0, 2*pi]`, `[-10^8, 10^8]`): each is
//! enclosed and its outer end taken (the domain can only grow).
//! Matrix variables, vector constants, functions and loops are not read: the error names the
//! line.

use crate::interval::Interval;

/// A problem read from Minibex.
#[derive(Clone, Debug, PartialEq)]
pub struct MinibexProblem {
    /// The variables in declaration order, with their domains.
    pub vars: Vec<(String, Interval)>,
    /// The objective (`minimize`), constants substituted; `None` for a system.
    pub objective: Option<String>,
    /// The constraints, comma-separated in ivjit's constraint syntax (`f <= g`, `f = g`),
    /// constants substituted; empty when there are none.
    pub constraints: String,
}

/// Why a Minibex text does not read.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct MinibexError {
    /// 1-based line of the statement.
    pub line: usize,
    /// What is wrong, and what to do.
    pub message: String,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Section {
    None,
    Constants,
    Variables,
    Minimize,
    Constraints,
    End,
}

/// Reads a Minibex problem (see the module comment).
pub fn parse(text: &str) -> Result<MinibexProblem, MinibexError> {
    // Statements: the text without comments, split at ';', each with the line it starts on.
    let mut clean = String::with_capacity(text.len());
    for l in text.lines() {
        clean.push_str(l.split("//").next().unwrap_or(""));
        clean.push('\n');
    }
    let mut problem = MinibexProblem {
        vars: Vec::new(),
        objective: None,
        constraints: String::new(),
    };
    let mut constants: Vec<(String, String)> = Vec::new();
    // Vector variables and their lengths.
    let mut vectors: Vec<(String, usize)> = Vec::new();
    let mut constraints: Vec<String> = Vec::new();
    let mut section = Section::None;
    let mut line = 1;
    // Statements end at ';' or where a line starts with a section keyword (IBEX lets the
    // objective and the last constraint go without one: `minimize f \n constraints ...`).
    let mut pieces: Vec<(usize, &str)> = Vec::new();
    for raw in clean.split(';') {
        let raw_line = line;
        line += count_lines(raw);
        let mut start = 0;
        let mut at = 0;
        for l in raw.split_inclusive('\n') {
            let word = split_word(l.trim_start()).0.to_ascii_lowercase();
            if at > start && keyword(&word).is_some() {
                pieces.push((raw_line + count_lines(&raw[..start]), &raw[start..at]));
                start = at;
            }
            at += l.len();
        }
        pieces.push((raw_line + count_lines(&raw[..start]), &raw[start..]));
    }
    for (raw_line, raw) in pieces {
        let mut stmt = raw.trim();
        // Section keywords open a statement (`variables x in [0, 1]`).
        loop {
            let (word, rest) = split_word(stmt);
            let Some(next) = keyword(&word.to_ascii_lowercase()) else {
                break;
            };
            section = next;
            stmt = rest.trim();
        }
        if stmt.is_empty() {
            continue;
        }
        // The statement's first line: past the newlines before it (and its section keyword).
        let offset = stmt.as_ptr() as usize - raw.as_ptr() as usize;
        let first_line = raw_line + count_lines(&raw[..offset]);
        let err = |message: String| MinibexError {
            line: first_line,
            message,
        };
        match section {
            Section::None | Section::End => {
                return Err(err(format!(
                    "`{stmt}` outside a section: a Minibex problem has `variables`, then \
                     `minimize` or `constraints`, and ends with `end`"
                )))
            }
            Section::Constants => {
                let (name, value) = if let Some((n, v)) = stmt.split_once(" in ") {
                    (n.trim(), v.trim().to_string())
                } else if let Some((n, v)) = stmt.split_once('=') {
                    (n.trim(), v.trim().to_string())
                } else {
                    return Err(err(format!(
                        "constant `{stmt}`: write `name = value;` or `name in [lo, hi];`"
                    )));
                };
                check_scalar(name, "constants").map_err(&err)?;
                let value = substitute(&value, &constants);
                constants.push((name.to_string(), value));
            }
            Section::Variables => {
                for decl in super::pave::split_top(stmt) {
                    let decl = decl.trim();
                    if decl.is_empty() {
                        continue;
                    }
                    let (name, dim, iv) = variable(decl, &constants).map_err(&err)?;
                    match dim {
                        None => problem.vars.push((name, iv)),
                        Some(d) => {
                            problem
                                .vars
                                .extend((1..=d).map(|i| (format!("{name}_{i}"), iv)));
                            vectors.push((name, d));
                        }
                    }
                }
            }
            Section::Minimize => {
                if problem.objective.is_some() {
                    return Err(err("a second objective: Minibex has one `minimize`".into()));
                }
                let stmt = indexed(stmt, &vectors).map_err(&err)?;
                problem.objective = Some(substitute(&stmt, &constants));
                section = Section::None;
            }
            Section::Constraints => {
                if stmt.starts_with("for ") || stmt.contains('{') {
                    return Err(err(format!(
                        "`{stmt}`: loops and blocks are not read (scalar constraints only)"
                    )));
                }
                let stmt = indexed(stmt, &vectors).map_err(&err)?;
                constraints.push(substitute(&stmt, &constants));
            }
        }
    }
    if problem.vars.is_empty() {
        return Err(MinibexError {
            line: 1,
            message: "no variables: declare them under `variables` as `x in [lo, hi];`".into(),
        });
    }
    // A vector's element names may not be declared twice.
    for (i, (name, _)) in problem.vars.iter().enumerate() {
        if problem.vars[..i].iter().any(|(n, _)| n == name) {
            return Err(MinibexError {
                line: 1,
                message: format!(
                    "the variable `{name}` is declared twice (a vector's elements are named \
                     x_1, x_2, ...: rename the scalar)"
                ),
            });
        }
    }
    problem.constraints = constraints.join(", ");
    Ok(problem)
}

/// One variable declaration: `name`, `name in DOMAIN`, `name[n]` or `name[n] in DOMAIN`; the
/// name, the vector's length, and the domain (the whole line if none is given).
fn variable(
    decl: &str,
    constants: &[(String, String)],
) -> Result<(String, Option<usize>, Interval), String> {
    let (head, rest) = split_name(decl);
    let (word, dom) = split_word(rest.trim_start());
    let rest_empty = rest.trim().is_empty();
    if !(word == "in" || rest_empty) {
        return Err(format!(
            "variable `{decl}`: write `name in [lo, hi];` or `name;` (the whole line)"
        ));
    }
    let (name, dim) = match head.split_once('[') {
        None => (head, None),
        Some((name, d)) => {
            let d = d.strip_suffix(']').unwrap_or(d);
            let n: usize = d.trim().parse().map_err(|_| {
                format!(
                    "`{head}`: a vector's length must be a number, and matrix variables are \
                     not read (declare vectors or scalars)"
                )
            })?;
            if n == 0 {
                return Err(format!("`{head}`: a vector needs at least one element"));
            }
            (name, Some(n))
        }
    };
    check_scalar(name, "variables")?;
    let iv = if rest_empty {
        Interval::ENTIRE
    } else {
        domain(dom.trim(), constants).map_err(|e| format!("variable {name}: {e}"))?
    };
    Ok((name.to_string(), dim, iv))
}

/// A domain `[lo, hi]`: numbers (rounded outward, as [`Interval::parse`] reads them), `oo`
/// for infinity, or constant expressions, each enclosed and its outer end taken.
fn domain(dom: &str, constants: &[(String, String)]) -> Result<Interval, String> {
    let bad = || format!("the domain `{dom}` is not `[lo, hi]`");
    let inner = dom
        .strip_prefix('[')
        .and_then(|s| s.strip_suffix(']'))
        .ok_or_else(bad)?;
    let parts = super::pave::split_top(inner);
    let [lo, hi] = parts.as_slice() else {
        return Err(bad());
    };
    // Each bound as text that Interval::parse reads exactly at its outer end.
    let bound = |text: &str, upper: bool| -> Result<String, String> {
        // IBEX's infinity `oo`, as a name of its own (not inside `floor`).
        let t = rename(&substitute(text.trim(), constants), "oo", "inf");
        let plain = t
            .trim_start_matches(['(', ' '])
            .trim_end_matches([')', ' ']);
        // A number (inf included): Interval::parse rounds it outward.
        if plain.parse::<f64>().is_ok_and(|v| !v.is_nan()) {
            return Ok(plain.to_string());
        }
        let e = crate::Expression::parse(&t).map_err(|e| format!("the bound `{t}`: {e}"))?;
        if !e.vars().is_empty() {
            return Err(format!(
                "the bound `{t}` reads the variables {}: a domain's bounds are constants",
                e.vars().join(", ")
            ));
        }
        let eval = crate::Evaluator::new(&e, crate::Precision::F64, crate::BackendChoice::Cpu)
            .map_err(|e| format!("the bound `{t}`: {e}"))?;
        let v = eval
            .eval(&[])
            .map_err(|e| format!("the bound `{t}`: {e}"))?
            .first()
            .copied()
            .filter(|v| !v.is_empty())
            .ok_or_else(|| format!("the bound `{t}` is not a number"))?;
        // `{:e}` prints the shortest text that reads back as the same double.
        Ok(format!("{:e}", if upper { v.hi } else { v.lo }))
    };
    let text = format!("[{}, {}]", bound(lo, false)?, bound(hi, true)?);
    Interval::parse(&text).map_err(|e| format!("the domain `{dom}`: {e}"))
}

/// `text` with each vector element `x(i)` (1-based) or `x[i]` (0-based) of a declared vector
/// replaced by its scalar's name `x_i` (1-based).
fn indexed(text: &str, vectors: &[(String, usize)]) -> Result<String, String> {
    if vectors.is_empty() {
        return Ok(text.to_string());
    }
    let mut out = String::with_capacity(text.len());
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let Some(end) = identifier_at(text, i) else {
            out.push(b[i] as char);
            i += 1;
            continue;
        };
        let word = &text[i..end];
        out.push_str(word);
        i = end;
        let Some(&(_, len)) = vectors.iter().find(|(n, _)| n == word) else {
            continue;
        };
        let rest = &text[i..];
        let open = rest.trim_start();
        let (close, base) = match open.chars().next() {
            Some('(') => (')', 1),
            Some('[') => (']', 0),
            _ => {
                return Err(format!(
                    "the vector `{word}` is used without an index: write {word}(i) (from 1) or \
                     {word}[i] (from 0)"
                ))
            }
        };
        let Some(stop) = open.find(close) else {
            return Err(format!("`{word}{}`: the index is not closed", &open[..1]));
        };
        let index = open[1..stop].trim();
        let k: usize = index.parse().map_err(|_| {
            format!(
                "`{word}{}`: the index must be a number here",
                &open[..=stop]
            )
        })?;
        let one_based = k + 1 - base;
        if k < base || one_based > len {
            return Err(format!(
                "`{word}{}`: out of range (the vector has {len} elements)",
                &open[..=stop]
            ));
        }
        out.push_str(&format!("_{one_based}"));
        i += rest.len() - open.len() + stop + 1;
    }
    Ok(out)
}

/// The section a keyword opens.
fn keyword(word: &str) -> Option<Section> {
    Some(match word {
        "constants" => Section::Constants,
        "variables" => Section::Variables,
        "minimize" => Section::Minimize,
        "constraints" => Section::Constraints,
        "end" => Section::End,
        _ => return None,
    })
}

/// A leading name (letters, digits, '_', then a vector's `[..]` if any) and the rest.
fn split_name(s: &str) -> (&str, &str) {
    let mut end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    if s[end..].starts_with('[') {
        end = s[end..].find(']').map_or(s.len(), |e| end + e + 1);
    }
    (&s[..end], &s[end..])
}

fn count_lines(s: &str) -> usize {
    s.matches('\n').count()
}

/// The first word of `s` (letters) and the rest.
fn split_word(s: &str) -> (&str, &str) {
    let end = s
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(s.len());
    (&s[..end], &s[end..])
}

/// Vector and matrix declarations (`x[3]`) are outside the subset.
fn check_scalar(name: &str, what: &str) -> Result<(), String> {
    if name.contains('[') {
        return Err(format!(
            "`{name}`: vector and matrix {what} are not read (declare scalars: x1, x2, ...)"
        ));
    }
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(format!("`{name}` is not a name"));
    }
    Ok(())
}

/// `text` with every identifier that names a constant replaced by `(value)`, and IBEX's
/// other name of the natural logarithm, `ln`, by `log`.
fn substitute(text: &str, constants: &[(String, String)]) -> String {
    map_names(text, |word| {
        let word = if word == "ln" { "log" } else { word };
        Some(match constants.iter().rev().find(|(n, _)| n == word) {
            Some((_, v)) => format!("({v})"),
            None => word.to_string(),
        })
    })
}

/// `text` with the identifier `from` (not a part of a longer one) replaced by `to`.
fn rename(text: &str, from: &str, to: &str) -> String {
    map_names(text, |word| (word == from).then(|| to.to_string()))
}

/// `text` with each identifier replaced by what `f` gives for it (kept where `None`).
fn map_names(text: &str, mut f: impl FnMut(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match identifier_at(text, i) {
            Some(end) => {
                let word = &text[i..end];
                match f(word) {
                    Some(new) => out.push_str(&new),
                    None => out.push_str(word),
                }
                i = end;
            }
            None => {
                out.push(b[i] as char);
                i += 1;
            }
        }
    }
    out
}

/// The end of the identifier that starts at byte `i` of `text`, if one starts there: a letter
/// or '_' not preceded by a letter, digit, '_' or '.' (`1.e8` is a number), then letters,
/// digits and '_'.
fn identifier_at(text: &str, i: usize) -> Option<usize> {
    let b = text.as_bytes();
    let c = b[i];
    let starts = (c.is_ascii_alphabetic() || c == b'_')
        && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'.' || b[i - 1] == b'_'));
    starts.then(|| {
        text[i..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .map_or(text.len(), |e| i + e)
    })
}
