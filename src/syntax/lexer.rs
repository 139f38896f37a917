//! The lexer: turns source text into tokens with byte spans.
//!
//! Tokens are produced by a [`logos`] state machine. Whitespace (including newlines) and `#` comments
//! (to the end of the line; they may contain any characters) are skipped.
//!
//! Number literals are unsigned; a sign is a separate token. Accepted forms:
//! decimal `12`, `1.5`, `.5`, `5.`, with an optional exponent `1e-3`, `2.5E+300`; hexadecimal
//! integers `0x10` and hex floats `0x1.8p-3` (a hex literal with a `.` needs a `p` exponent).
//!
//! Anything that starts like a number but runs on into more letters, digits or dots (`1e`, `0x`,
//! `1.2.3`, `2x`) is lexed as one malformed-number error covering the whole run, with a specific
//! message (for `2x`: implicit multiplication is not supported, write `2*x`).
//!
//! `inf`, `infinity`, `empty` and `entire` are ordinary [`Tok::Name`]s; the parser gives them their
//! meaning inside interval brackets. Only `let` is a reserved word.

use logos::Logos;

use super::ast::Span;
use super::diagnostic::Diagnostic;

/// What went wrong in the lexer; turned into a [`Diagnostic`] by [`tokenize`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum LexErrorKind {
    /// A character that starts no token.
    #[default]
    UnexpectedChar,
    /// A run of digits, letters and dots that starts like a number but is not one.
    BadNumber,
}

/// A token. Text-carrying tokens borrow from the source.
#[derive(Logos, Clone, Copy, Debug, PartialEq, Eq)]
#[logos(error = LexErrorKind)]
#[logos(skip r"[ \t\r\n\f\v]+")]
#[logos(skip(r"#[^\n]*", allow_greedy = true))]
pub(crate) enum Tok<'a> {
    /// The keyword `let`.
    #[token("let")]
    Let,
    /// A name: variable, function, constant or binding.
    #[regex("[A-Za-z_][A-Za-z0-9_]*", |lex| lex.slice())]
    Name(&'a str),
    /// An unsigned number literal, decimal or hex-float, as written.
    #[regex(r"([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?", |lex| lex.slice(), priority = 20)]
    #[regex(
        r"0[xX]([0-9a-fA-F]+([pP][+-]?[0-9]+)?|([0-9a-fA-F]+\.[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+)",
        |lex| lex.slice(),
        priority = 20
    )]
    Num(&'a str),
    /// Never produced: its callback always reports [`LexErrorKind::BadNumber`]. It exists so that
    /// the longest-match rule makes `1.2.3` or `2x` one error instead of several tokens.
    #[regex(r"[0-9.][0-9A-Za-z_.]*", reject_number, priority = 1)]
    BadNumber,
    /// `+`
    #[token("+")]
    Plus,
    /// `-`
    #[token("-")]
    Minus,
    /// `*`
    #[token("*")]
    Star,
    /// `/`
    #[token("/")]
    Slash,
    /// `^`
    #[token("^")]
    Caret,
    /// `(`
    #[token("(")]
    LParen,
    /// `)`
    #[token(")")]
    RParen,
    /// `[`
    #[token("[")]
    LBracket,
    /// `]`
    #[token("]")]
    RBracket,
    /// `]_name`: the end of an interval literal with a decoration suffix written right after
    /// it (`[1, 2]_dac`); carries the name after the `_` (checked by the IR builder).
    #[regex(r"\]_[A-Za-z0-9_]*", |lex| &lex.slice()[2..])]
    RBracketDecorated(&'a str),
    /// `,`: separates arguments, bounds and outputs
    #[token(",")]
    Comma,
    /// `;`: ends a `let`
    #[token(";")]
    Semi,
    /// `=` in a `let`
    #[token("=")]
    Eq,
}

impl Tok<'_> {
    /// How the token is named in messages: `'+'`, `the number '1.5'`, `the name 'x'`.
    pub(crate) fn describe(&self) -> String {
        match self {
            Tok::Num(s) => format!("the number '{}'", shorten(s)),
            Tok::Name(s) => format!("the name '{}'", shorten(s)),
            Tok::RBracketDecorated(s) => format!("']_{}'", shorten(s)),
            other => format!("'{}'", other.punct()),
        }
    }

    /// The fixed text of a punctuation or keyword token (empty for names and numbers).
    pub(crate) fn punct(&self) -> &'static str {
        match self {
            Tok::Let => "let",
            Tok::Plus => "+",
            Tok::Minus => "-",
            Tok::Star => "*",
            Tok::Slash => "/",
            Tok::Caret => "^",
            Tok::LParen => "(",
            Tok::RParen => ")",
            Tok::LBracket => "[",
            Tok::RBracket => "]",
            Tok::Comma => ",",
            Tok::Semi => ";",
            Tok::Eq => "=",
            Tok::RBracketDecorated(_) => "]_",
            Tok::Name(_) | Tok::Num(_) | Tok::BadNumber => "",
        }
    }

    /// Whether the token can end an operand (so an operand right after it means a missing operator).
    pub(crate) fn ends_operand(&self) -> bool {
        matches!(
            self,
            Tok::Num(_) | Tok::Name(_) | Tok::RParen | Tok::RBracket | Tok::RBracketDecorated(_)
        )
    }

    /// Whether the token can start an operand.
    pub(crate) fn starts_operand(&self) -> bool {
        matches!(
            self,
            Tok::Num(_) | Tok::Name(_) | Tok::LParen | Tok::LBracket
        )
    }
}

/// Shortens long token text for messages (at most 24 chars, then `...`).
pub fn shorten(s: &str) -> String {
    const MAX: usize = 24;
    match s.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
    }
}

fn reject_number<'a>(_: &mut logos::Lexer<'a, Tok<'a>>) -> Result<(), LexErrorKind> {
    Err(LexErrorKind::BadNumber)
}

/// A token with its byte span: `(start, token, end)`, the triple LALRPOP expects.
pub(crate) type Spanned<'a> = (usize, Tok<'a>, usize);

/// Lexes the whole source. Returns the tokens before the first error, and that error if any.
pub(crate) fn tokenize(source: &str) -> (Vec<Spanned<'_>>, Option<Diagnostic>) {
    let mut tokens = Vec::new();
    let mut lexer = Tok::lexer(source);
    while let Some(result) = lexer.next() {
        let range = lexer.span();
        match result {
            Ok(tok) => tokens.push((range.start, tok, range.end)),
            Err(kind) => {
                let diag = match kind {
                    LexErrorKind::UnexpectedChar => unexpected_char(source, range.start),
                    LexErrorKind::BadNumber => {
                        bad_number(lexer.slice(), Span::new(range.start, range.end))
                    }
                };
                return (tokens, Some(diag));
            }
        }
    }
    (tokens, None)
}

/// The diagnostic for an unexpected character at byte `start`.
fn unexpected_char(source: &str, start: usize) -> Diagnostic {
    let Some(c) = source.get(start..).and_then(|rest| rest.chars().next()) else {
        // Not at a char boundary (cannot happen with logos, but never panic).
        return Diagnostic::new(Span::new(start, start + 1), "unexpected byte in the input");
    };
    let span = Span::new(start, start + c.len_utf8());
    if c == '\0' {
        return Diagnostic::new(span, "unexpected NUL byte in the input")
            .with_help("the input must be plain text");
    }
    if c.is_control() {
        return Diagnostic::new(
            span,
            format!("unexpected control character U+{:04X}", c as u32),
        );
    }
    if !c.is_ascii() {
        let diag = Diagnostic::new(
            span,
            format!("unexpected character '{c}' (U+{:04X})", c as u32),
        );
        let help = match c {
            '\u{2212}' | '\u{2013}' | '\u{2014}' | '\u{2010}' | '\u{2011}' => {
                "use the ASCII minus sign '-'".to_string()
            }
            '\u{00d7}' | '\u{00b7}' | '\u{22c5}' | '\u{2217}' => "use '*' to multiply".to_string(),
            '\u{00f7}' | '\u{2215}' => "use '/' to divide".to_string(),
            '\u{03c0}' => "write the constant as 'pi'".to_string(),
            '\u{221e}' => "write infinity as 'inf' inside an interval, like [0, inf]".to_string(),
            '\u{00a0}' | '\u{2000}'..='\u{200b}' | '\u{3000}' => {
                "this is a non-ASCII space; use an ordinary space".to_string()
            }
            _ => "only ASCII characters are allowed outside comments".to_string(),
        };
        return diag.with_help(help);
    }
    let diag = Diagnostic::new(span, format!("unexpected character '{c}'"));
    match c {
        '.' => diag.with_help("a number needs a digit next to its '.', like 0.5 or 5."),
        '%' => diag.with_help("there is no '%' operator"),
        '!' | '&' | '|' | '<' | '>' => {
            diag.with_help("comparison and logic operators are not supported")
        }
        '{' | '}' => diag.with_help("use '(' and ')' for grouping"),
        '"' | '\'' => diag.with_help("there are no strings in this language"),
        _ => diag,
    }
}

/// Length of the longest prefix of `b` that is a decimal number literal, and whether that prefix
/// has an exponent.
fn decimal_prefix(b: &[u8]) -> (usize, bool) {
    let digits = |from: usize| {
        b[from.min(b.len())..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count()
    };
    let int = digits(0);
    let mut i = int;
    let mut frac = 0;
    if b.get(i) == Some(&b'.') {
        frac = digits(i + 1);
        if int + frac > 0 {
            i += 1 + frac;
        }
    }
    if int + frac == 0 {
        return (0, false);
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(b.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        let e = digits(j);
        if e > 0 {
            return (j + e, true);
        }
    }
    (i, false)
}

/// The diagnostic for a malformed number: `text` is the whole run the lexer matched.
fn bad_number(text: &str, span: Span) -> Diagnostic {
    let b = text.as_bytes();
    let shown = shorten(text);
    if b.len() >= 2 && b[0] == b'0' && (b[1] == b'x' || b[1] == b'X') {
        let rest = &b[2..];
        let hex = rest
            .iter()
            .take_while(|c| c.is_ascii_hexdigit() || **c == b'.')
            .count();
        let mantissa = &rest[..hex];
        let msg = if !mantissa.iter().any(|c| c.is_ascii_hexdigit()) {
            "expected hex digits after '0x'"
        } else if mantissa.iter().filter(|c| **c == b'.').count() > 1 {
            "a number has at most one '.'"
        } else if matches!(rest.get(hex), Some(b'p' | b'P')) {
            "expected decimal digits after the binary exponent 'p'"
        } else if mantissa.contains(&b'.') {
            return Diagnostic::new(span, format!("malformed hex number '{shown}'"))
                .with_help("a hex number with a '.' needs a binary exponent, like 0x1.8p0");
        } else {
            "unexpected characters after the hex digits"
        };
        return Diagnostic::new(span, format!("malformed hex number '{shown}': {msg}"));
    }
    let (len, has_exp) = decimal_prefix(b);
    if len == 0 {
        // Only a leading '.' not followed by a digit.
        return Diagnostic::new(
            Span::new(span.start, span.start + 1),
            "unexpected character '.'",
        )
        .with_help("a number needs a digit next to its '.', like 0.5 or 5.");
    }
    let rest = &text[len..];
    match rest.as_bytes().first() {
        Some(b'.') => Diagnostic::new(
            span,
            format!("malformed number '{shown}': a number has at most one '.'"),
        ),
        Some(b'e' | b'E') if !has_exp => Diagnostic::new(
            span,
            format!("malformed number '{shown}': expected digits after the exponent 'e'"),
        )
        .with_help("write an exponent like 1e-3, or use '*' to multiply by the constant e: 1*e"),
        Some(c) if c.is_ascii_alphabetic() || *c == b'_' => {
            let number = &text[..len];
            let help = if text.len() <= 40 {
                format!("implicit multiplication is not supported; write {number}*{rest}")
            } else {
                "implicit multiplication is not supported; write '*' between them".to_string()
            };
            Diagnostic::new(
                span,
                format!(
                    "missing operator between the number '{}' and '{}'",
                    shorten(number),
                    shorten(rest)
                ),
            )
            .with_help(help)
        }
        _ => Diagnostic::new(span, format!("malformed number '{shown}'")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok<'_>> {
        let (t, e) = tokenize(s);
        assert!(e.is_none(), "{s}: {e:?}");
        t.into_iter().map(|(_, t, _)| t).collect()
    }

    #[test]
    fn numbers() {
        for s in [
            "12",
            "1.5",
            ".5",
            "5.",
            "1e-3",
            "2.5E+300",
            "0x1.8p-3",
            "0X1.999999999999AP-4",
            "0x0.0p+0",
            "0x10",
            "1.e5",
            "0xp1",
            "0x.8p1",
        ] {
            if s == "0xp1" {
                assert!(tokenize(s).1.is_some());
                continue;
            }
            assert_eq!(toks(s), vec![Tok::Num(s)], "{s}");
        }
        assert_eq!(
            toks("0xe+1"),
            vec![Tok::Num("0xe"), Tok::Plus, Tok::Num("1")]
        );
        assert_eq!(toks("1e-3x"), vec![Tok::Num("1e-3"), Tok::Name("x")]);
        assert_eq!(toks("1-e"), vec![Tok::Num("1"), Tok::Minus, Tok::Name("e")]);
        // A decoration suffix belongs to the ']' it follows directly; after a space it is a name.
        assert_eq!(
            toks("[1]_dac"),
            vec![Tok::LBracket, Tok::Num("1"), Tok::RBracketDecorated("dac")]
        );
        assert_eq!(toks("] _dac"), vec![Tok::RBracket, Tok::Name("_dac")]);
        assert_eq!(
            toks("let letx # c\n x"),
            vec![Tok::Let, Tok::Name("letx"), Tok::Name("x")]
        );
    }

    #[test]
    fn bad_numbers() {
        for (s, msg) in [
            ("1e", "expected digits after the exponent"),
            ("1e+", "expected digits after the exponent"),
            ("0x", "expected hex digits"),
            ("1.2.3", "at most one '.'"),
            ("2x", "missing operator"),
            ("0x1.8", "malformed hex number"),
            ("0x1p", "binary exponent"),
            ("x.y", "unexpected character '.'"),
        ] {
            let (_, e) = tokenize(s);
            let e = e.unwrap_or_else(|| panic!("{s} lexed"));
            assert!(e.message.contains(msg), "{s}: {}", e.message);
        }
    }
}
