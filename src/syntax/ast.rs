//! The abstract syntax tree, stored in an arena.
//!
//! Nodes live in one `Vec` and refer to their children by index. The parser creates children before
//! their parents, so every child index is smaller than its parent's: walking `nodes` in order is a
//! post-order walk. Later stages rely on that instead of recursion, so arbitrarily long expressions
//! cannot overflow the stack (and dropping the tree is not recursive either).

use std::fmt;

/// A byte range in the source text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Span {
    /// Byte offset of the first byte.
    pub start: usize,
    /// Byte offset just past the last byte.
    pub end: usize,
}

impl Span {
    /// The span `start..end`.
    pub fn new(start: usize, end: usize) -> Self {
        Span { start, end }
    }
}

/// Index of a node in [`Ast::nodes`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u32);

impl NodeId {
    /// The id as an index into [`Ast::nodes`].
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A binary operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `^`
    Pow,
}

impl fmt::Display for BinOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Pow => "^",
        })
    }
}

/// One interval-literal bound as written: an optional `-` followed by a number or `inf`.
#[derive(Clone, Debug, PartialEq)]
pub struct BoundText {
    /// The bound's text, sign included.
    pub text: String,
    /// Where it is in the source.
    pub span: Span,
}

/// What a node is.
#[derive(Clone, Debug, PartialEq)]
pub enum NodeKind {
    /// An unsigned number literal exactly as written (`0.1`, `1e-3`, `0x1.8p-3`).
    Number(String),
    /// `[lo, hi]`.
    Interval {
        /// The lower bound as written.
        lo: BoundText,
        /// The upper bound as written.
        hi: BoundText,
    },
    /// `[empty]`.
    Empty,
    /// `[entire]`.
    Entire,
    /// An interval literal with a decoration suffix, `[1, 2]_dac` (`inner` is the literal;
    /// the name is checked where the literal is built).
    Decorated {
        /// The interval literal.
        inner: NodeId,
        /// The name after `_`, as written.
        decoration: String,
        /// Where `_name` is in the source.
        decoration_span: Span,
    },
    /// `[nai]`, IEEE 1788's "not an interval" (decorated evaluation only).
    Nai,
    /// A name: a variable, a `let` binding, or a constant such as `pi`.
    Name(String),
    /// Unary minus.
    Neg(NodeId),
    /// `lhs op rhs`.
    Binary(BinOp, NodeId, NodeId),
    /// `name(args)`; `name_span` covers just the name.
    Call {
        /// The function's name.
        name: String,
        /// Where the name is in the source.
        name_span: Span,
        /// The arguments, in order.
        args: Vec<NodeId>,
    },
}

/// One expression node.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// What it is, with its children.
    pub kind: NodeKind,
    /// The source text of the whole subexpression.
    pub span: Span,
}

/// `let name = value;`
#[derive(Clone, Debug, PartialEq)]
pub struct Let {
    /// The bound name.
    pub name: String,
    /// Where the name is in the source.
    pub name_span: Span,
    /// The bound expression.
    pub value: NodeId,
}

/// A parsed input: bindings in order, then the outputs.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Ast {
    /// Every node, children before parents.
    pub nodes: Vec<Node>,
    /// The `let` bindings, in source order.
    pub lets: Vec<Let>,
    /// The output expressions, in source order.
    pub outputs: Vec<NodeId>,
}

impl Ast {
    /// The node with the given id.
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id.index()]
    }
}
