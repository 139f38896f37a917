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
//! Vector and matrix variables or constants, functions and loops are not read: the error names
//! the line. A constant given as an interval (`e in [a, b]`) is substituted as that interval.

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
                // `name in [lo, hi]` (IBEX also writes `name in[lo,hi]`).
                let (name, rest) = split_name(stmt);
                let (word, dom) = split_word(rest.trim_start());
                if word != "in" {
                    return Err(err(format!(
                        "variable `{stmt}`: write `name in [lo, hi];` (a variable needs a domain)"
                    )));
                }
                let name = name.trim();
                check_scalar(name, "variables").map_err(&err)?;
                // Bounds are numbers, or constants whose value is one (substituted bare).
                let literal: Vec<(String, String)> = constants
                    .iter()
                    .filter(|(_, v)| v.trim().parse::<f64>().is_ok())
                    .cloned()
                    .collect();
                // IBEX writes infinity as oo.
                let dom = substitute_bare(dom.trim(), &literal).replace("oo", "inf");
                let iv = Interval::parse(&dom).map_err(|e| {
                    err(format!(
                        "variable {name}: the domain `{dom}` is not an interval of numbers                          (a constant in a domain must be a number): {e}"
                    ))
                })?;
                problem.vars.push((name.to_string(), iv));
            }
            Section::Minimize => {
                if problem.objective.is_some() {
                    return Err(err("a second objective: Minibex has one `minimize`".into()));
                }
                problem.objective = Some(substitute(stmt, &constants));
                section = Section::None;
            }
            Section::Constraints => {
                if stmt.starts_with("for ") || stmt.contains('{') {
                    return Err(err(format!(
                        "`{stmt}`: loops and blocks are not read (scalar constraints only)"
                    )));
                }
                constraints.push(substitute(stmt, &constants));
            }
        }
    }
    if problem.vars.is_empty() {
        return Err(MinibexError {
            line: 1,
            message: "no variables: declare them under `variables` as `x in [lo, hi];`".into(),
        });
    }
    problem.constraints = constraints.join(", ");
    Ok(problem)
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

/// A leading name (letters, digits, '_', and a vector's `[..]`) and the rest.
fn split_name(s: &str) -> (&str, &str) {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '[' || c == ']'))
        .unwrap_or(s.len());
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

/// `text` with every identifier that names a constant replaced by `(value)`.
fn substitute(text: &str, constants: &[(String, String)]) -> String {
    replace_names(text, constants, true)
}

/// [`substitute`] without the parentheses (number constants in a domain).
fn substitute_bare(text: &str, constants: &[(String, String)]) -> String {
    replace_names(text, constants, false)
}

fn replace_names(text: &str, constants: &[(String, String)], parens: bool) -> String {
    let mut out = String::with_capacity(text.len());
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i] as char;
        // An identifier starts with a letter or '_' not preceded by a digit or '.' (1.e8).
        let starts = (c.is_ascii_alphabetic() || c == '_')
            && (i == 0
                || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'.' || b[i - 1] == b'_'));
        if starts {
            let end = text[i..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .map_or(text.len(), |e| i + e);
            let word = &text[i..end];
            // IBEX's natural logarithm is also `ln`.
            let word = if word == "ln" { "log" } else { word };
            match constants.iter().rev().find(|(n, _)| n == word) {
                Some((_, v)) if parens => {
                    out.push('(');
                    out.push_str(v);
                    out.push(')');
                }
                Some((_, v)) => out.push_str(v.trim()),
                None => out.push_str(word),
            }
            i = end;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}
