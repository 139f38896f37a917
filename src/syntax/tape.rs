//! Fidget/MPR `.vm` tapes: the implicit-modelling community's format (the Prospero challenge
//! is one), read as an expression.
//!
//! A tape is one clause per line, `NAME OPCODE ARGS...`, where ARGS are names of earlier clauses
//! (or, for `const`, a decimal number); `#` starts a comment; the last clause is the output.
//! [`to_expression_text`] turns it into the expression language, one `let` per clause, so that
//! a tape and the expression it spells compile to the same program. Constants keep their
//! decimal text, so they are enclosed exactly like a literal typed by hand (`2.95` is not a
//! float; its enclosure is).
//!
//! Errors name the line and the token, as a [`Diagnostic`] into the tape's own text.

use super::ast::Span;
use super::diagnostic::Diagnostic;
use super::number::parse_enclosure;

/// What each opcode becomes: a template over its operands (`{0}`, `{1}`), with its arity.
fn opcode(op: &str) -> Option<(usize, &'static str)> {
    Some(match op {
        "var-x" => (0, "x"),
        "var-y" => (0, "y"),
        "var-z" => (0, "z"),
        "add" => (2, "{0} + {1}"),
        "sub" => (2, "{0} - {1}"),
        "mul" => (2, "{0} * {1}"),
        "div" => (2, "{0} / {1}"),
        "min" => (2, "min({0}, {1})"),
        "max" => (2, "max({0}, {1})"),
        "atan2" => (2, "atan2({0}, {1})"),
        "neg" => (1, "-{0}"),
        "square" => (1, "sqr({0})"),
        "sqrt" => (1, "sqrt({0})"),
        "abs" => (1, "abs({0})"),
        "recip" => (1, "1 / {0}"),
        "sin" => (1, "sin({0})"),
        "cos" => (1, "cos({0})"),
        "tan" => (1, "tan({0})"),
        "asin" => (1, "asin({0})"),
        "acos" => (1, "acos({0})"),
        "atan" => (1, "atan({0})"),
        "exp" => (1, "exp({0})"),
        "ln" => (1, "log({0})"),
        _ => return None,
    })
}

/// Whether a path names a `.vm` tape (by extension, case-insensitive).
pub fn is_tape(path: &std::path::Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("vm"))
}

/// The expression a tape spells: `let cK = ...;` for clause K, then the last clause's name.
pub fn to_expression_text(tape: &str) -> Result<String, Diagnostic> {
    let mut names: std::collections::HashMap<&str, usize> = Default::default();
    let mut out = String::with_capacity(tape.len() * 2);
    let mut offset = 0;
    let mut last = None;
    for line in tape.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let code = line.split('#').next().unwrap_or("");
        // Tokens with their spans in the tape.
        let mut tokens = Vec::new();
        let mut rest = code;
        while let Some(i) = rest.find(|c: char| !c.is_whitespace()) {
            let from = code.len() - rest.len() + i;
            let len = rest[i..]
                .find(char::is_whitespace)
                .unwrap_or(rest.len() - i);
            tokens.push((
                &code[from..from + len],
                Span::new(start + from, start + from + len),
            ));
            rest = &rest[i + len..];
        }
        let Some(&(name, name_span)) = tokens.first() else {
            continue;
        };
        let Some(&(op, op_span)) = tokens.get(1) else {
            return Err(
                Diagnostic::new(name_span, format!("clause '{name}' has no opcode"))
                    .with_help("a clause is NAME OPCODE ARGS..., e.g. `_3 mul _1 _2`"),
            );
        };
        let args = &tokens[2..];
        let k = names.len();
        let body = if op == "const" {
            let [(value, span)] = args else {
                return Err(Diagnostic::new(op_span, "`const` takes one number")
                    .with_help("e.g. `_0 const 2.95`"));
            };
            parse_enclosure(value)
                .map_err(|e| Diagnostic::new(*span, format!("'{value}' is not a number: {e}")))?;
            value.to_string()
        } else {
            let Some((arity, template)) = opcode(op) else {
                return Err(Diagnostic::new(op_span, format!("unknown opcode '{op}'")).with_help(
                    "supported: const, var-x, var-y, var-z, add, sub, mul, div, min, max, neg, \
                     square, sqrt, abs, recip, sin, cos, tan, asin, acos, atan, atan2, exp, ln",
                ));
            };
            if args.len() != arity {
                let span = args.last().map_or(op_span, |a| a.1);
                return Err(Diagnostic::new(
                    span,
                    format!("'{op}' takes {arity} operand(s), found {}", args.len()),
                ));
            }
            let mut body = template.to_string();
            for (i, (arg, span)) in args.iter().enumerate() {
                let Some(&j) = names.get(arg) else {
                    return Err(Diagnostic::new(
                        *span,
                        format!("'{arg}' is not the name of an earlier clause"),
                    ));
                };
                body = body.replace(&format!("{{{i}}}"), &format!("c{j}"));
            }
            body
        };
        if names.insert(name, k).is_some() {
            return Err(Diagnostic::new(
                name_span,
                format!("clause '{name}' is defined twice"),
            ));
        }
        out.push_str(&format!("let c{k} = {body};\n"));
        last = Some(k);
    }
    let Some(k) = last else {
        return Err(Diagnostic::new(
            Span::new(0, 0),
            "the tape has no clause; its last clause is the output",
        ));
    };
    out.push_str(&format!("c{k}\n"));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clauses_become_lets() {
        let tape = "# a circle\n_0 var-x\n_1 var-y\n_2 square _0 # x^2\n_3 square _1\n\
                    _4 add _2 _3\n_5 const 1\n_6 sub _4 _5\n";
        assert_eq!(
            to_expression_text(tape).unwrap(),
            "let c0 = x;\nlet c1 = y;\nlet c2 = sqr(c0);\nlet c3 = sqr(c1);\n\
             let c4 = c2 + c3;\nlet c5 = 1;\nlet c6 = c4 - c5;\nc6\n"
        );
    }

    #[test]
    fn errors_point_at_the_token() {
        fn at(tape: &str) -> (&str, String) {
            let d = to_expression_text(tape).unwrap_err();
            (&tape[d.span.start..d.span.end], d.message)
        }
        assert_eq!(at("_0 var-x\n_1 cube _0\n").0, "cube");
        assert_eq!(at("_0 var-x\n_1 add _0 _9\n").0, "_9");
        assert_eq!(at("_0 const pi\n").0, "pi");
        assert_eq!(at("_0 var-x\n_1 neg _0 _0\n").0, "_0");
        assert!(at("_0 var-x\n_0 var-y\n").1.contains("defined twice"));
        assert!(at("# nothing\n").1.contains("no clause"));
    }
}
