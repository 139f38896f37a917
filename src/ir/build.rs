//! From the syntax tree to the interval IR: name resolution, literals, calls.

use super::functions::{self, CONSTANTS};
use super::{Graph, NodeId, Op};
use crate::interval::Interval;
use crate::scalar::{BinaryFn, RoundInt, UnaryFn};
use crate::syntax::ast::{Ast, BinOp, NodeId as AstId, NodeKind, Span};
use crate::syntax::diagnostic::Diagnostic;
use crate::syntax::number::parse_enclosure;
use std::collections::HashMap;

/// Decimal expansions of the named constants, truncated and rounded up in the last digit: the
/// real constant lies strictly between the two, so the hull of their enclosures contains it.
const PI_DIGITS: (&str, &str) = (
    "3.14159265358979323846264338327950288419716939937510",
    "3.14159265358979323846264338327950288419716939937511",
);
const E_DIGITS: (&str, &str) = (
    "2.71828182845904523536028747135266249775724709369995",
    "2.71828182845904523536028747135266249775724709369996",
);

/// A tight enclosure of a named constant (`pi`, `e`).
pub fn named_constant(name: &str) -> Option<Interval> {
    let (lo, hi) = match name {
        "pi" => PI_DIGITS,
        "e" => E_DIGITS,
        _ => return None,
    };
    let lo = parse_enclosure(lo).ok()?.lo;
    let hi = parse_enclosure(hi).ok()?.hi;
    Some(Interval { lo, hi })
}

/// Builds the IR of a parsed program. Variables are the names that are neither `let` bindings,
/// constants nor functions, numbered in order of first appearance. Constant subexpressions are
/// folded with `folder` (see [`super::Folder`]; `None` keeps them as written).
pub fn build(ast: &Ast, folder: Option<super::Folder>) -> Result<Graph, Diagnostic> {
    let let_names: HashMap<&str, Span> = ast
        .lets
        .iter()
        .map(|l| (l.name.as_str(), l.name_span))
        .collect();
    // First pass: find the variables in order of appearance, so that Var numbers are stable.
    let mut b = Builder {
        ast,
        graph: Graph::new(Vec::new(), Vec::new(), folder),
        memo: vec![None; ast.nodes.len()],
        scope: HashMap::new(),
        let_names,
    };
    for (k, l) in ast.lets.iter().enumerate() {
        if CONSTANTS.contains(&l.name.as_str()) {
            return Err(Diagnostic::new(
                l.name_span,
                format!(
                    "'{}' is a built-in constant and cannot be redefined",
                    l.name
                ),
            )
            .with_help("choose another name for the binding"));
        }
        if functions::lookup(&l.name).is_some() {
            return Err(Diagnostic::new(
                l.name_span,
                format!("'{}' is a function and cannot be redefined", l.name),
            )
            .with_help("choose another name for the binding"));
        }
        if ast.lets[..k].iter().any(|p| p.name == l.name) {
            return Err(Diagnostic::new(
                l.name_span,
                format!("'{}' is already defined by an earlier let", l.name),
            )
            .with_help("give each binding its own name"));
        }
        let v = b.subtree(l.value)?;
        b.scope.insert(l.name.clone(), v);
    }
    let mut outputs = Vec::new();
    for &o in &ast.outputs {
        outputs.push(b.subtree(o)?);
    }
    b.graph.outputs = outputs;
    Ok(b.graph)
}

struct Builder<'a> {
    ast: &'a Ast,
    graph: Graph,
    memo: Vec<Option<NodeId>>,
    scope: HashMap<String, NodeId>,
    let_names: HashMap<&'a str, Span>,
}

impl Builder<'_> {
    /// Builds the IR for the subtree at `root`, iteratively (children before parents).
    fn subtree(&mut self, root: AstId) -> Result<NodeId, Diagnostic> {
        let mut stack = vec![(root, false)];
        while let Some((id, expanded)) = stack.pop() {
            if self.memo[id.index()].is_some() {
                continue;
            }
            let children = children(&self.ast.node(id).kind);
            if !expanded && !children.is_empty() {
                stack.push((id, true));
                stack.extend(children.into_iter().rev().map(|c| (c, false)));
                continue;
            }
            let node = self.node(id)?;
            self.memo[id.index()] = Some(node);
        }
        Ok(self.memo[root.index()].expect("built"))
    }

    fn arg(&self, id: AstId) -> NodeId {
        self.memo[id.index()].expect("children are built first")
    }

    fn node(&mut self, id: AstId) -> Result<NodeId, Diagnostic> {
        let node = self.ast.node(id);
        let span = node.span;
        let op = match &node.kind {
            NodeKind::Number(text) => {
                let e = parse_enclosure(text)
                    .map_err(|e| Diagnostic::new(span, format!("invalid number: {e}")))?;
                if e.lo.is_infinite() && e.lo == e.hi {
                    return Err(Diagnostic::new(span, "infinity is not a real number")
                        .with_help("use an interval such as [0, inf] for an unbounded range"));
                }
                Op::Const(Interval { lo: e.lo, hi: e.hi })
            }
            NodeKind::Interval { lo, hi } => {
                let l = parse_enclosure(&lo.text)
                    .map_err(|e| Diagnostic::new(lo.span, format!("invalid lower bound: {e}")))?;
                let h = parse_enclosure(&hi.text)
                    .map_err(|e| Diagnostic::new(hi.span, format!("invalid upper bound: {e}")))?;
                let c = Interval::new(l.lo, h.hi).map_err(|e| {
                    let d = Diagnostic::new(span, format!("invalid interval literal: {e}"));
                    if l.lo > h.hi {
                        d.with_help("write [empty] for the empty set")
                    } else {
                        d
                    }
                })?;
                Op::Const(c)
            }
            NodeKind::Empty => Op::Const(Interval::EMPTY),
            NodeKind::Entire => Op::Const(Interval::ENTIRE),
            NodeKind::Name(name) => return self.name(name, span),
            NodeKind::Neg(a) => Op::Neg(self.arg(*a)),
            NodeKind::Binary(op, a, b) => {
                let (a, b) = (self.arg(*a), self.arg(*b));
                match op {
                    BinOp::Add => Op::Add(a, b),
                    BinOp::Sub => Op::Sub(a, b),
                    BinOp::Mul => Op::Mul(a, b),
                    BinOp::Div => Op::Div(a, b),
                    BinOp::Pow => Op::Pow(a, b),
                }
            }
            NodeKind::Call {
                name,
                name_span,
                args,
            } => return self.call(name, *name_span, args, span),
        };
        Ok(self.graph.add(op, span))
    }

    fn name(&mut self, name: &str, span: Span) -> Result<NodeId, Diagnostic> {
        if let Some(&v) = self.scope.get(name) {
            return Ok(v);
        }
        if let Some(c) = named_constant(name) {
            return Ok(self.graph.add(Op::Const(c), span));
        }
        if functions::lookup(name).is_some() {
            return Err(
                Diagnostic::new(span, format!("'{name}' is a function, not a value"))
                    .with_help(format!("call it with arguments, like {name}(x)")),
            );
        }
        if let Some(&def) = self.let_names.get(name) {
            let _ = def;
            return Err(Diagnostic::new(
                span,
                format!("'{name}' is used before its let binding is complete"),
            )
            .with_help("a binding can only use names bound before it"));
        }
        if matches!(name, "inf" | "infinity") {
            return Err(Diagnostic::new(span, "infinity is not a real number")
                .with_help("use an interval such as [0, inf] for an unbounded range"));
        }
        let var = match self.graph.vars.iter().position(|v| v == name) {
            Some(i) => i,
            None => {
                self.graph.vars.push(name.to_string());
                self.graph.var_spans.push(span);
                self.graph.vars.len() - 1
            }
        };
        Ok(self.graph.add(Op::Var(var as u32), span))
    }

    fn call(
        &mut self,
        name: &str,
        name_span: Span,
        args: &[AstId],
        span: Span,
    ) -> Result<NodeId, Diagnostic> {
        let Some(info) = functions::lookup(name) else {
            let shown = crate::syntax::lexer::shorten(name);
            let mut d = Diagnostic::new(name_span, format!("unknown function '{shown}'"));
            d = match functions::suggest(name) {
                Some(s) => d.with_help(format!(
                    "did you mean '{s}'? (`ivjit functions` lists them all)"
                )),
                None => d.with_help("`ivjit functions` lists the functions ivjit knows"),
            };
            return Err(d);
        };
        if args.len() != info.arity {
            let plural = if info.arity == 1 { "" } else { "s" };
            return Err(Diagnostic::new(
                span,
                format!(
                    "{name} takes {} argument{plural}, found {}",
                    info.arity,
                    args.len()
                ),
            ));
        }
        let a: Vec<NodeId> = args.iter().map(|&x| self.arg(x)).collect();
        let g = &mut self.graph;
        let op = match name {
            "neg" => Op::Neg(a[0]),
            "sqr" => Op::Sqr(a[0]),
            "sqrt" => Op::Sqrt(a[0]),
            "abs" => Op::Abs(a[0]),
            "min" => Op::Min(a[0], a[1]),
            "max" => Op::Max(a[0], a[1]),
            "fma" => Op::Fma(a[0], a[1], a[2]),
            "hull" => Op::Hull(a[0], a[1]),
            "intersect" => Op::Intersect(a[0], a[1]),
            "recip" => {
                let one = g.constant(Interval { lo: 1.0, hi: 1.0 });
                Op::Div(one, a[0])
            }
            "floor" => Op::RoundInt(RoundInt::Floor, a[0]),
            "ceil" => Op::RoundInt(RoundInt::Ceil, a[0]),
            "trunc" => Op::RoundInt(RoundInt::Trunc, a[0]),
            "rint" => Op::RoundInt(RoundInt::Even, a[0]),
            "round" => Op::Round(a[0]),
            "sign" => Op::Sign(a[0]),
            "rootn" => {
                let n = integer_constant(g, a[1]).ok_or_else(|| {
                    Diagnostic::new(
                        self.ast.node(args[1]).span,
                        "the degree of rootn must be an integer constant",
                    )
                    .with_help("write rootn(x, 3)")
                })?;
                return Ok(rootn(g, a[0], n, span));
            }
            "pown" => {
                let n = integer_constant(g, a[1]).ok_or_else(|| {
                    Diagnostic::new(
                        self.ast.node(args[1]).span,
                        "the exponent of pown must be an integer constant",
                    )
                    .with_help("write pown(x, 3); for a variable exponent use x^y")
                })?;
                return Ok(pown(g, a[0], n, span));
            }
            other => match (UnaryFn::from_name(other), BinaryFn::from_name(other)) {
                (Some(f), _) => Op::Elem(f, a[0]),
                (_, Some(f)) => Op::Elem2(f, a[0], a[1]),
                _ => unreachable!("function table entry {other} without a builder"),
            },
        };
        Ok(g.add(op, span))
    }
}

/// `x^n` for any integer n: `pown(x, n)` for n >= 0, `1 / pown(x, -n)` for n < 0.
pub fn pown(g: &mut Graph, x: NodeId, n: i128, span: Span) -> NodeId {
    if n >= 0 {
        g.add(Op::Pown(x, n as i64), span)
    } else {
        let p = g.add(Op::Pown(x, (-n) as i64), span);
        let one = g.constant(Interval { lo: 1.0, hi: 1.0 });
        g.add(Op::Div(one, p), span)
    }
}

/// The real n-th root: `rootn(x, n)` for n >= 1, `1 / rootn(x, -n)` for n < 0, and empty for
/// n = 0 (IEEE 1788 leaves it undefined).
pub fn rootn(g: &mut Graph, x: NodeId, n: i128, span: Span) -> NodeId {
    if n == 0 {
        return g.add(Op::Const(Interval::EMPTY), span);
    }
    let r = g.add(Op::Rootn(x, n.abs() as i64), span);
    if n > 0 {
        r
    } else {
        let one = g.constant(Interval { lo: 1.0, hi: 1.0 });
        g.add(Op::Div(one, r), span)
    }
}

/// The integer a node is, if it is a point constant holding an integer of magnitude below 2^63.
pub fn integer_constant(g: &Graph, id: NodeId) -> Option<i128> {
    let c = g.as_const(id)?;
    if c.is_empty() || c.lo != c.hi || c.lo.fract() != 0.0 || c.lo.abs() >= 9.2e18 {
        return None;
    }
    Some(c.lo as i128)
}

fn children(kind: &NodeKind) -> Vec<AstId> {
    match kind {
        NodeKind::Neg(a) => vec![*a],
        NodeKind::Binary(_, a, b) => vec![*a, *b],
        NodeKind::Call { args, .. } => args.clone(),
        _ => vec![],
    }
}
