//! Error reports with a source span, rendered like a compiler's.

use std::fmt::Write as _;

use super::ast::Span;

/// An error with the source span it is about and an optional hint.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct Diagnostic {
    /// The part of the source the error is about.
    pub span: Span,
    /// What is wrong.
    pub message: String,
    /// How to fix it, if there is a hint.
    pub help: Option<String>,
}

/// At most this many chars of a source line are shown; longer lines are cut around the span.
const WINDOW: usize = 100;
/// How many chars of context to keep before the span in a cut line.
const WINDOW_BEFORE: usize = 40;

impl Diagnostic {
    /// A diagnostic without a hint.
    pub fn new(span: Span, message: impl Into<String>) -> Self {
        Diagnostic {
            span,
            message: message.into(),
            help: None,
        }
    }

    /// Adds a hint (replacing any previous one).
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Renders like a compiler:
    ///
    /// ```text
    /// error: expected an expression after '+', found ')'
    ///   --> line 1, column 5
    ///    |
    ///  1 | (1 +)
    ///    |     ^
    /// help: ...
    /// ```
    ///
    /// Shows the line where the span starts, with at least one caret; a span at or past the end of
    /// the input gets a caret after the last char. Columns count chars. Lines longer than about
    /// 100 chars are shown as a window around the span, with `...` marks. Control characters are
    /// shown as their Unicode "control picture" so the output stays one line and aligned.
    pub fn render(&self, source: &str) -> String {
        let len = source.len();
        let mut start = self.span.start.min(len);
        while !source.is_char_boundary(start) {
            start -= 1;
        }
        let mut end = self.span.end.clamp(start, len);
        while !source.is_char_boundary(end) {
            end += 1;
        }
        // At the end of the input: point right after the last visible char.
        if start == len {
            start = source.trim_end().len();
            end = start;
        }
        let line_start = source[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = source[start..].find('\n').map_or(len, |i| start + i);
        let line_text = source[line_start..line_end].trim_end_matches('\r');
        let line_no = source[..line_start].bytes().filter(|&b| b == b'\n').count() + 1;

        // Positions in chars within the line.
        let col = source[line_start..start].chars().count();
        let span_end_in_line = end.min(line_start + line_text.len()).max(start);
        let span_chars = source[start..span_end_in_line].chars().count().max(1);
        let line_chars = line_text.chars().count();

        // Window of chars [from, to) of the line to show.
        let (from, to) = if line_chars <= WINDOW {
            (0, line_chars)
        } else {
            let from = col.saturating_sub(WINDOW_BEFORE);
            let to = (from + WINDOW).min(line_chars);
            let from = to.saturating_sub(WINDOW).min(from);
            (from, to)
        };
        let mut shown = String::new();
        let mut pad = String::new();
        if from > 0 {
            shown.push_str("...");
            pad.push_str("   ");
        }
        for (i, c) in line_text.chars().enumerate().skip(from).take(to - from) {
            shown.push(visible(c));
            if i < col {
                pad.push(if c == '\t' { '\t' } else { ' ' });
            }
        }
        if to < line_chars {
            shown.push_str("...");
        }
        // Carets: from the span start to its end, clipped to the window (plus one past the end).
        let caret_count = if col >= to {
            1
        } else {
            span_chars.min(to - col).max(1)
        };
        if col > to {
            // Cannot happen (col <= line_chars and the window contains col), but stay sane.
            pad.clear();
        }

        let gutter = line_no.to_string();
        let blank = " ".repeat(gutter.len());
        let mut out = String::new();
        let _ = writeln!(out, "error: {}", self.message);
        let _ = writeln!(out, "{blank} --> line {line_no}, column {}", col + 1);
        let _ = writeln!(out, "{blank} |");
        let _ = writeln!(out, "{gutter} | {shown}");
        let _ = write!(out, "{blank} | {pad}{}", "^".repeat(caret_count));
        if let Some(help) = &self.help {
            let _ = write!(out, "\nhelp: {help}");
        }
        out
    }
}

/// Makes control characters visible without changing the char count of the line.
fn visible(c: char) -> char {
    match c {
        '\t' => '\t',
        '\u{0}'..='\u{1f}' => char::from_u32(0x2400 + c as u32).unwrap_or('?'),
        '\u{7f}' => '\u{2421}',
        c if c.is_control() => '\u{fffd}',
        c => c,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic() {
        let d = Diagnostic::new(Span::new(3, 4), "bad").with_help("fix it");
        assert_eq!(
            d.render("1 + )"),
            "error: bad\n  --> line 1, column 4\n  |\n1 | 1 + )\n  |    ^\nhelp: fix it"
        );
    }

    #[test]
    fn past_end_and_multiline() {
        let d = Diagnostic::new(Span::new(100, 100), "eof");
        let r = d.render("a\nbc +\n");
        assert!(r.contains("line 2, column 5"), "{r}");
        let d = Diagnostic::new(Span::new(0, 0), "empty");
        assert!(d.render("").contains("line 1, column 1"));
        let d = Diagnostic::new(Span::new(2, 3), "x");
        let r = d.render("é\u{0}");
        assert!(r.contains("column 2"), "{r}");
        // Mid-char spans do not panic.
        let _ = Diagnostic::new(Span::new(1, 2), "x").render("éé");
    }

    #[test]
    fn long_line() {
        let src = "x+".repeat(500_000) + "x";
        let d = Diagnostic::new(Span::new(600_000, 600_001), "here");
        let r = d.render(&src);
        let shown = r.lines().nth(3).unwrap();
        assert!(shown.chars().count() < 120, "{shown}");
        assert!(r.contains("column 600001"));
    }
}
