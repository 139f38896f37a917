//! The parser: source text to [`Ast`], or a [`Diagnostic`].
//!
//! The grammar lives in `grammar/expr.lalrpop` (LALRPOP, LR(1); its parse stack is a heap `Vec`, so
//! no input can overflow the call stack). Before LALRPOP runs, [`parse`] lexes the whole input and
//! checks bracket nesting in one linear pass (at most [`MAX_NESTING`] levels). LALRPOP's errors are
//! then translated into one-line messages in user terms.
//!
//! Notes on the language as parsed here:
//! - `inf`, `infinity`, `empty`, `entire` are ordinary names outside interval brackets; a later
//!   stage rejects them if they are not bound (e.g. a bare `inf` is the name `inf`).
//! - Unary plus produces its operand itself; parentheses produce no node either (the parent's span
//!   still covers them).
//! - Calls may have zero arguments syntactically (`f()`); arity is checked later.

use std::cell::RefCell;
use std::fmt::Write as _;

use lalrpop_util::ParseError;

use super::ast::{Ast, BinOp, Node, NodeId, NodeKind, Span};
use super::diagnostic::Diagnostic;
use super::lexer::{self, shorten, Spanned, Tok};

lalrpop_util::lalrpop_mod!(
    #[allow(clippy::all, clippy::pedantic, unused)]
    grammar,
    "/expr.rs"
);

/// Deepest nesting of parentheses, brackets and calls accepted.
pub const MAX_NESTING: usize = 1000;

/// The arena the grammar's actions push nodes into (shared by reference: LALRPOP passes grammar
/// parameters by copy, hence the `RefCell`).
#[derive(Default)]
pub struct Builder {
    nodes: RefCell<Vec<Node>>,
}

impl Builder {
    /// Appends a node spanning `start..end` and returns its id.
    pub(crate) fn push(&self, kind: NodeKind, start: usize, end: usize) -> NodeId {
        let mut nodes = self.nodes.borrow_mut();
        // `parse` rejects inputs longer than u32::MAX bytes, and every node consumes at least one
        // byte of its own, so the id fits.
        let id = NodeId(u32::try_from(nodes.len()).unwrap_or(u32::MAX));
        nodes.push(Node {
            kind,
            span: Span::new(start, end),
        });
        id
    }

    /// The node of a decorated literal: `inner` (spanning `start..dl + 1`, up to its `]`)
    /// with the suffix `_name` that starts at `dl + 1`; the whole spans `start..end`.
    pub(crate) fn decorated(
        &self,
        inner: NodeId,
        name: &str,
        start: usize,
        dl: usize,
        end: usize,
    ) -> NodeId {
        self.push(
            NodeKind::Decorated {
                inner,
                decoration: name.to_string(),
                decoration_span: Span::new(dl + 1, end),
            },
            start,
            end,
        )
    }

    /// The error for `[name]` where name is not `empty` or `entire`.
    pub(crate) fn bad_special_interval(name: &str, start: usize, end: usize) -> Diagnostic {
        let span = Span::new(start, end);
        if name == "inf" || name == "infinity" {
            return Diagnostic::new(span, "an interval literal needs two bounds, like [0, inf]");
        }
        let d = Diagnostic::new(
            span,
            format!(
                "expected an interval literal: [lo, hi], [empty] or [entire]; found the name '{}'",
                shorten(name)
            ),
        );
        match name.to_ascii_lowercase().as_str() {
            "empty" | "entire" => d.with_help(format!(
                "write [{}] in lowercase",
                name.to_ascii_lowercase()
            )),
            _ => d.with_help("names cannot appear inside an interval literal"),
        }
    }

    /// The error for an interval bound that is a name other than `inf`/`infinity`.
    pub(crate) fn bad_bound(name: &str, start: usize, end: usize) -> Diagnostic {
        let d = Diagnostic::new(
            Span::new(start, end),
            "interval bounds must be numbers or inf, like [-1, 2.5]",
        );
        match name.to_ascii_lowercase().as_str() {
            "inf" | "infinity" => d.with_help("write 'inf' in lowercase"),
            "empty" | "entire" => d.with_help(format!(
                "the {} interval is written [{}]",
                name.to_ascii_lowercase(),
                name.to_ascii_lowercase()
            )),
            _ => d.with_help(format!(
                "found the name '{}'; compute with intervals outside the brackets, e.g. [1, 2] * {}",
                shorten(name),
                shorten(name)
            )),
        }
    }
}

/// Parses a whole input: `let` bindings, then one or more comma-separated outputs.
pub fn parse(source: &str) -> Result<Ast, Diagnostic> {
    if u32::try_from(source.len()).is_err() {
        return Err(Diagnostic::new(
            Span::new(0, 0),
            "the input is too large (more than 4 GiB)",
        ));
    }
    let (tokens, lex_error) = lexer::tokenize(source);
    check_nesting(&tokens)?;
    if tokens.is_empty() {
        return Err(lex_error.unwrap_or_else(|| {
            Diagnostic::new(
                Span::new(source.len(), source.len()),
                "the input is empty; expected an expression",
            )
            .with_help("write an expression such as sin(x) + 1")
        }));
    }
    // Every node consumes at least one token of its own, so this is enough room.
    let builder = Builder {
        nodes: RefCell::new(Vec::with_capacity(tokens.len())),
    };
    let input = tokens.iter().copied().map(Ok).chain(lex_error.map(Err));
    match grammar::ProgramParser::new().parse(&builder, input) {
        Ok((lets, outputs)) => Ok(Ast {
            nodes: builder.nodes.into_inner(),
            lets,
            outputs,
        }),
        Err(e) => Err(translate_error(source, &tokens, e)),
    }
}

/// Rejects nesting deeper than [`MAX_NESTING`], pointing at the first bracket past the limit.
fn check_nesting(tokens: &[Spanned<'_>]) -> Result<(), Diagnostic> {
    let mut depth = 0usize;
    for &(start, tok, end) in tokens {
        match tok {
            Tok::LParen | Tok::LBracket => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Err(Diagnostic::new(
                        Span::new(start, end),
                        format!(
                            "nesting deeper than {MAX_NESTING} levels; use let bindings to split the expression"
                        ),
                    )
                    .with_help("for example: let t = (...); then use t"));
                }
            }
            Tok::RParen | Tok::RBracket => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// Names LALRPOP uses for terminals (as written in the grammar), in the order they are listed.
const OPERATORS: [&str; 5] = ["\"+\"", "\"-\"", "\"*\"", "\"/\"", "\"^\""];
const OPERAND_STARTS: [&str; 4] = ["Num", "Name", "\"(\"", "\"[\""];

/// A readable list of what the parser expected: "an expression", "an operator or ')'".
fn describe_expected(expected: &[String]) -> String {
    let has = |t: &str| expected.iter().any(|e| e == t);
    let mut items: Vec<String> = Vec::new();
    let mut skip: Vec<&str> = Vec::new();
    if OPERAND_STARTS.iter().all(|t| has(t)) {
        items.push("an expression".into());
        skip.extend(OPERAND_STARTS);
        skip.extend(["\"-\"", "\"+\"", "\"let\""]);
    }
    if OPERATORS.iter().all(|t| has(t)) {
        items.push("an operator".into());
        skip.extend(OPERATORS);
    }
    // Remaining terminals, in a stable order that reads naturally.
    const ORDER: [&str; 15] = [
        "\")\"", "\"]\"", "\",\"", "\";\"", "\"=\"", "\"(\"", "\"[\"", "Name", "Num", "\"let\"",
        "\"+\"", "\"-\"", "\"*\"", "\"/\"", "\"^\"",
    ];
    for t in ORDER {
        if has(t) && !skip.contains(&t) {
            items.push(match t {
                "Name" => "a name".to_string(),
                "Num" => "a number".to_string(),
                _ => format!("'{}'", t.trim_matches('"')),
            });
        }
    }
    match items.len() {
        0 => "the end of the input".to_string(),
        1 => items.pop().unwrap_or_default(),
        n => format!("{} or {}", items[..n - 1].join(", "), items[n - 1]),
    }
}

/// The brackets open just before token `index` (innermost last).
fn open_brackets<'a>(tokens: &[Spanned<'a>], index: usize) -> Vec<Spanned<'a>> {
    let mut stack = Vec::new();
    for &t in &tokens[..index.min(tokens.len())] {
        match t.1 {
            Tok::LParen | Tok::LBracket => stack.push(t),
            Tok::RParen | Tok::RBracket => {
                stack.pop();
            }
            _ => {}
        }
    }
    stack
}

fn closer_of(open: Tok<'_>) -> Tok<'static> {
    if open == Tok::LBracket {
        Tok::RBracket
    } else {
        Tok::RParen
    }
}

fn terminal_name(tok: Tok<'_>) -> String {
    format!("\"{}\"", tok.punct())
}

/// Text of a token for "after ..." phrases.
fn after(tokens: &[Spanned<'_>], index: usize) -> String {
    match index.checked_sub(1).and_then(|i| tokens.get(i)) {
        Some(&(_, Tok::Num(s) | Tok::Name(s), _)) => format!(" after '{}'", shorten(s)),
        Some(&(_, t, _)) => format!(" after '{}'", t.punct()),
        None => String::new(),
    }
}

/// Whether token `index` is inside a `let` binding that has not reached its `;` yet.
fn in_let(tokens: &[Spanned<'_>], index: usize) -> bool {
    for &(_, t, _) in tokens[..index.min(tokens.len())].iter().rev() {
        match t {
            Tok::Let => return true,
            Tok::Semi => return false,
            _ => {}
        }
    }
    false
}

fn translate_error(
    source: &str,
    tokens: &[Spanned<'_>],
    error: ParseError<usize, Tok<'_>, Diagnostic>,
) -> Diagnostic {
    match error {
        ParseError::User { error } => error,
        ParseError::InvalidToken { location } => {
            Diagnostic::new(Span::new(location, location + 1), "invalid token")
        }
        ParseError::ExtraToken {
            token: (start, tok, end),
        } => Diagnostic::new(
            Span::new(start, end),
            format!("expected the end of the input, found {}", tok.describe()),
        ),
        ParseError::UnrecognizedEof { location, expected } => {
            unexpected_end(tokens, location, &expected)
        }
        ParseError::UnrecognizedToken {
            token: (start, tok, end),
            expected,
        } => {
            let index = tokens.partition_point(|t| t.0 < start);
            unexpected_token(source, tokens, index, Span::new(start, end), tok, &expected)
        }
    }
}

fn unexpected_end(tokens: &[Spanned<'_>], location: usize, expected: &[String]) -> Diagnostic {
    let index = tokens.len();
    let has = |t: Tok<'_>| expected.contains(&terminal_name(t));
    if let Some(&(start, open, end)) = open_brackets(tokens, index).last() {
        if has(closer_of(open)) {
            return Diagnostic::new(
                Span::new(start, end),
                format!("unclosed '{}' opened here", open.punct()),
            )
            .with_help(format!("add '{}' to close it", closer_of(open).punct()));
        }
    }
    let span = Span::new(location, location);
    if let Some((_, Tok::LBracket, _)) = open_brackets(tokens, index).last() {
        if expected.iter().any(|e| e == "Num") {
            return Diagnostic::new(
                span,
                format!(
                    "expected an interval bound{}, found the end of the input",
                    after(tokens, index)
                ),
            );
        }
    }
    let message = format!(
        "expected {}{}, found the end of the input",
        describe_expected(expected),
        after(tokens, index)
    );
    let d = Diagnostic::new(span, message);
    match tokens.last() {
        Some((_, Tok::Comma, _)) => d.with_help("remove the trailing ','"),
        _ if in_let(tokens, index) && has(Tok::Semi) => {
            d.with_help("a let binding ends with ';' and must be followed by an output expression")
        }
        Some((_, Tok::Semi, _)) if !in_let(tokens, index) => {
            d.with_help("after the let bindings, write at least one output expression")
        }
        _ => d,
    }
}

fn unexpected_token(
    source: &str,
    tokens: &[Spanned<'_>],
    index: usize,
    span: Span,
    found: Tok<'_>,
    expected: &[String],
) -> Diagnostic {
    let has = |t: Tok<'_>| expected.contains(&terminal_name(t));
    let prev = index
        .checked_sub(1)
        .and_then(|i| tokens.get(i))
        .map(|t| t.1);
    let open = open_brackets(tokens, index);
    let innermost = open.last().copied();

    // Closing brackets that do not match.
    if matches!(found, Tok::RParen | Tok::RBracket) {
        match innermost {
            None => {
                let opener = if found == Tok::RParen { "(" } else { "[" };
                return Diagnostic::new(span, format!("unmatched '{}'", found.punct()))
                    .with_help(format!("remove it, or add a matching '{opener}' before it"));
            }
            Some((_, open_tok, _)) if closer_of(open_tok) != found && has(closer_of(open_tok)) => {
                return Diagnostic::new(
                    span,
                    format!(
                        "expected '{}' to close '{}', found '{}'",
                        closer_of(open_tok).punct(),
                        open_tok.punct(),
                        found.punct()
                    ),
                );
            }
            _ => {}
        }
    }

    // Inside an interval literal.
    if let Some((_, Tok::LBracket, _)) = innermost {
        let wants_bound = expected.iter().any(|e| e == "Num");
        if found == Tok::Comma && has(Tok::RBracket) {
            return Diagnostic::new(
                span,
                "an interval literal has exactly two bounds, like [-1, 2.5]",
            );
        }
        if wants_bound && matches!(found, Tok::Comma | Tok::RBracket) {
            return Diagnostic::new(
                span,
                format!(
                    "expected an interval bound{}, found {}",
                    after(tokens, index),
                    found.describe()
                ),
            )
            .with_help("an interval literal is [lo, hi] with numbers or inf, [empty] or [entire]");
        }
        if !found.starts_operand() && !matches!(found, Tok::Comma | Tok::RBracket)
            || matches!(found, Tok::LParen | Tok::LBracket)
        {
            return Diagnostic::new(
                span,
                "interval bounds must be numbers or inf, like [-1, 2.5]",
            )
            .with_help(format!(
                "found {} inside '[...]'; expressions are not allowed in interval literals",
                found.describe()
            ));
        }
    }

    let message = format!(
        "expected {}{}, found {}",
        describe_expected(expected),
        after(tokens, index),
        found.describe()
    );
    let d = Diagnostic::new(span, message);

    // Hints.
    if let Some(prev) = prev {
        if found.starts_operand()
            && prev.ends_operand()
            && OPERATORS.iter().all(|t| expected.iter().any(|e| e == t))
        {
            let prev_end = tokens[index - 1].2;
            let newline_between = source
                .get(prev_end..span.start)
                .is_some_and(|gap| gap.contains('\n'));
            if newline_between && in_let(tokens, index) && has(Tok::Semi) {
                return d.with_help("a let binding ends with ';'");
            }
            let text = |t: Tok<'_>| match t {
                Tok::Num(s) | Tok::Name(s) => s.to_string(),
                Tok::RParen | Tok::LParen => "(...)".to_string(),
                _ => "[...]".to_string(),
            };
            let (a, b) = (text(prev), text(found));
            let help = if a.len() + b.len() <= 40 {
                format!("implicit multiplication is not supported; write {a}*{b}")
            } else {
                "implicit multiplication is not supported; write '*' between the operands".into()
            };
            return d.with_help(help);
        }
        if found == Tok::Star && prev == Tok::Star {
            return d.with_help("use '^' for powers, like x^2");
        }
        if prev == Tok::Comma && matches!(found, Tok::RParen | Tok::Semi) {
            return d.with_help("remove the trailing ','");
        }
    }
    if found == Tok::Let {
        return d.with_help("let bindings must come before the output expressions");
    }
    if found == Tok::Eq && !in_let(tokens, index) {
        return d.with_help("to define a name, write: let name = value;");
    }
    if expected.is_empty() {
        return d.with_help("separate several outputs with ','");
    }
    if in_let(tokens, index) && has(Tok::Semi) && !has(Tok::Comma) {
        return d.with_help("a let binding ends with ';'");
    }
    d
}

/// Prints the tree as s-expressions, one line per `let` and per output:
/// `let a = (+ x 1)` / `out (* a (- y))`. Binary operators print as `(op l r)`, negation as
/// `(- x)`, calls as `(f args...)`, intervals as written (`[-1, inf]`, `[empty]`).
/// Iterative (explicit stack), linear in the size of the tree.
pub fn to_sexpr(ast: &Ast) -> String {
    let mut out = String::new();
    for l in &ast.lets {
        let _ = write!(out, "let {} = ", l.name);
        write_sexpr(ast, l.value, &mut out);
        out.push('\n');
    }
    for &o in &ast.outputs {
        out.push_str("out ");
        write_sexpr(ast, o, &mut out);
        out.push('\n');
    }
    out
}

/// Appends the s-expression of one node (see [`to_sexpr`]).
pub(crate) fn write_sexpr(ast: &Ast, root: NodeId, out: &mut String) {
    enum Item {
        Node(NodeId),
        Text(&'static str),
    }
    let mut stack = vec![Item::Node(root)];
    while let Some(item) = stack.pop() {
        let id = match item {
            Item::Text(t) => {
                out.push_str(t);
                continue;
            }
            Item::Node(id) => id,
        };
        let Some(node) = ast.nodes.get(id.index()) else {
            out.push_str("<bad node>");
            continue;
        };
        match &node.kind {
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
                stack.push(Item::Text(match decoration.as_str() {
                    "com" => "_com",
                    "dac" => "_dac",
                    "def" => "_def",
                    "trv" => "_trv",
                    "ill" => "_ill",
                    _ => "_?",
                }));
                stack.push(Item::Node(*inner));
            }
            NodeKind::Neg(a) => {
                out.push_str("(- ");
                stack.push(Item::Text(")"));
                stack.push(Item::Node(*a));
            }
            NodeKind::Binary(op, a, b) => {
                out.push('(');
                out.push_str(match op {
                    BinOp::Add => "+",
                    BinOp::Sub => "-",
                    BinOp::Mul => "*",
                    BinOp::Div => "/",
                    BinOp::Pow => "^",
                });
                out.push(' ');
                stack.push(Item::Text(")"));
                stack.push(Item::Node(*b));
                stack.push(Item::Text(" "));
                stack.push(Item::Node(*a));
            }
            NodeKind::Call { name, args, .. } => {
                out.push('(');
                out.push_str(name);
                stack.push(Item::Text(")"));
                for &a in args.iter().rev() {
                    stack.push(Item::Node(a));
                    stack.push(Item::Text(" "));
                }
            }
        }
    }
}
