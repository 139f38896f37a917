//! Front end: lexer (logos), parser (LALRPOP, grammar in `grammar/expr.lalrpop`), the AST arena,
//! number-literal conversion (and the exact order of two literals), and diagnostics.

pub mod ast;
pub mod diagnostic;
pub mod exact;
pub mod lexer;
pub mod number;
pub mod parser;
pub mod tape;
