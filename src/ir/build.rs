//! From the syntax tree to the interval IR: name resolution, literals, calls.

use super::functions::{self, CONSTANTS};
use super::{Graph, NodeId, NumericFn, Op, Rev2Fn, RevFn};
use crate::decoration::{DecoratedInterval, Decoration};
use crate::interval::{Interval, IntervalError};
use crate::point::{DerivedFn, Expansion};
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
pub(crate) fn named_constant(name: &str) -> Option<Interval> {
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
    build_with(ast, folder, false)
}

/// [`build`] for decorated programs: each derived function's node is
/// [`Op::Decorated`]`(expansion, witness)`, the witness its row's decoration formula
/// ([`crate::point::DerivedRow::decoration`]).
pub fn build_decorated(ast: &Ast, folder: Option<super::Folder>) -> Result<Graph, Diagnostic> {
    build_with(ast, folder, true)
}

fn build_with(
    ast: &Ast,
    folder: Option<super::Folder>,
    decorated: bool,
) -> Result<Graph, Diagnostic> {
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
        scope: HashMap::with_capacity(ast.lets.len()),
        let_names,
        var_index: HashMap::new(),
        decorated,
    };
    for l in &ast.lets {
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
        // `scope` holds exactly the names of the earlier bindings: one hash lookup, not a scan
        // of every earlier binding (10^5 bindings took 20 s).
        if b.scope.contains_key(l.name.as_str()) {
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
    /// The number of each variable in `graph.vars`, by name (a scan of `graph.vars` per name
    /// made an expression over 10^5 variables take 20 s).
    var_index: HashMap<&'a str, u32>,
    /// Whether derived functions carry their decoration witness ([`build_decorated`]).
    decorated: bool,
}

impl<'a> Builder<'a> {
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
        let ast: &'a Ast = self.ast;
        let node = ast.node(id);
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
                // Each bound's own error points at it; then the interval's, from the written
                // bounds compared exactly (`[0.10000000000000001, 0.1]` is inverted although
                // its enclosures make the valid [0.1, 0.1]).
                parse_enclosure(&lo.text)
                    .map_err(|e| Diagnostic::new(lo.span, format!("invalid lower bound: {e}")))?;
                parse_enclosure(&hi.text)
                    .map_err(|e| Diagnostic::new(hi.span, format!("invalid upper bound: {e}")))?;
                let c = Interval::from_bound_texts(&lo.text, &hi.text).map_err(|e| {
                    let d = Diagnostic::new(span, format!("invalid interval literal: {e}"));
                    if matches!(e, IntervalError::Inverted { .. }) {
                        d.with_help("write [empty] for the empty set")
                    } else {
                        d
                    }
                })?;
                Op::Const(c)
            }
            NodeKind::Empty => Op::Const(Interval::EMPTY),
            NodeKind::Entire => Op::Const(Interval::ENTIRE),
            NodeKind::Nai if self.decorated => Op::DecoratedConst(Interval::EMPTY, Decoration::Ill),
            NodeKind::Nai => {
                return Err(Diagnostic::new(
                    span,
                    "[nai] (not an interval) has a meaning only where decorations are computed",
                )
                .with_help(
                    "evaluate with decorations (--decorations; Expression::parse_decorated)",
                ))
            }
            NodeKind::Decorated {
                inner,
                decoration,
                decoration_span,
            } => return self.decorated_literal(*inner, decoration, *decoration_span, span),
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

    /// `[a, b]_dec`: the literal's constant with its decoration where decorations are
    /// computed (a node of its own unless the decoration is the one `newDec` gives, so that no
    /// folding drops it), the constant alone elsewhere.
    fn decorated_literal(
        &mut self,
        inner: AstId,
        name: &str,
        name_span: Span,
        span: Span,
    ) -> Result<NodeId, Diagnostic> {
        let Some(d) = Decoration::from_name(name) else {
            let shown = crate::syntax::lexer::shorten(name);
            return Err(
                Diagnostic::new(name_span, format!("'_{shown}' is not a decoration"))
                    .with_help("write _com, _dac, _def, _trv or _ill after the ']'"),
            );
        };
        let c = self
            .graph
            .as_const(self.arg(inner))
            .expect("an interval literal is a constant");
        let decorated = DecoratedInterval::new(c, d)
            .map_err(|e| Diagnostic::new(span, format!("invalid decorated literal: {e}")))?;
        if !self.decorated || decorated.decoration == Decoration::of(c) {
            return Ok(self.arg(inner));
        }
        Ok(self.graph.add(
            Op::DecoratedConst(decorated.interval, decorated.decoration),
            span,
        ))
    }

    fn name(&mut self, name: &'a str, span: Span) -> Result<NodeId, Diagnostic> {
        if let Some(&v) = self.scope.get(name) {
            return Ok(v);
        }
        if let Some(c) = named_constant(name) {
            return Ok(self.graph.add(Op::Const(c), span));
        }
        // `inf` is also IEEE 1788's lower-bound function; written alone it means infinity.
        if matches!(name, "inf" | "infinity") {
            return Err(Diagnostic::new(span, "infinity is not a real number")
                .with_help("use an interval such as [0, inf] for an unbounded range"));
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

        let next = self.graph.vars.len() as u32;
        let var = *self.var_index.entry(name).or_insert(next);
        if var == next {
            self.graph.vars.push(name.to_string());
            self.graph.var_spans.push(span);
        }
        Ok(self.graph.add(Op::Var(var), span))
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
            "cancelMinus" => Op::CancelMinus(a[0], a[1]),
            "sqrRev" => Op::Rev(RevFn::Sqr, a[0], a[1]),
            "absRev" => Op::Rev(RevFn::Abs, a[0], a[1]),
            "coshRev" => Op::Rev(RevFn::Cosh, a[0], a[1]),
            "sinRev" => Op::Rev(RevFn::Sin, a[0], a[1]),
            "cosRev" => Op::Rev(RevFn::Cos, a[0], a[1]),
            "tanRev" => Op::Rev(RevFn::Tan, a[0], a[1]),
            "mulRev" => Op::Rev2(Rev2Fn::Mul, a[0], a[1], a[2]),
            "powRev1" => Op::Rev2(Rev2Fn::Pow1, a[0], a[1], a[2]),
            "powRev2" => Op::Rev2(Rev2Fn::Pow2, a[0], a[1], a[2]),
            "atan2Rev1" => Op::Rev2(Rev2Fn::Atan2Y, a[0], a[1], a[2]),
            "atan2Rev2" => Op::Rev2(Rev2Fn::Atan2X, a[0], a[1], a[2]),
            "mulRevToPair1" | "mulRevToPair2" => {
                // IEEE 1788's mulRevToPair has no x: its pieces are met with [entire].
                let entire = g.constant(Interval::ENTIRE);
                let f = if name == "mulRevToPair1" {
                    Rev2Fn::MulPair1
                } else {
                    Rev2Fn::MulPair2
                };
                Op::Rev2(f, a[0], a[1], entire)
            }
            "pownRev" => {
                let n = integer_constant(g, a[2]).ok_or_else(|| {
                    Diagnostic::new(
                        self.ast.node(args[2]).span,
                        "the exponent of pownRev must be an integer constant",
                    )
                    .with_help("write pownRev(c, x, 3)")
                })?;
                Op::Rev(RevFn::Pown(n as i64), a[0], a[1])
            }
            "cancelPlus" => {
                let neg = g.add(Op::Neg(a[1]), span);
                Op::CancelMinus(a[0], neg)
            }
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
            other => {
                if let Some(f) = NumericFn::from_name(other) {
                    Op::Numeric(f, a[0])
                } else if let Some(f) = UnaryFn::from_name(other) {
                    Op::Elem(f, a[0])
                } else if let Some(f) = BinaryFn::from_name(other) {
                    Op::Elem2(f, a[0], a[1])
                } else if let Some(f) = DerivedFn::from_name(other) {
                    let value = expand_derived(g, f, a[0], span);
                    if !self.decorated {
                        return Ok(value);
                    }
                    let witness = formula(g, f.row().decoration, &[("x", a[0])], span);
                    Op::Decorated(value, witness)
                } else {
                    unreachable!("function table entry {other} without a builder")
                }
            }
        };
        Ok(g.add(op, span))
    }
}

/// A formula of the function table (`text`, in ivjit's syntax over the variables `args`
/// names: a derivative, a decoration witness) built into `g`, each variable replaced by its
/// node; constants (`log(2)`, `pi`) fold to rigorous enclosures. The formulas are constants of
/// the crate, each built by a unit test, so a failure here is a bug of the table.
pub(crate) fn formula(g: &mut Graph, text: &str, args: &[(&str, NodeId)], span: Span) -> NodeId {
    let built = crate::syntax::parser::parse(text).and_then(|ast| build(&ast, None));
    let f = built.unwrap_or_else(|e| panic!("the table's formula {text:?}: {e:?}"));
    let live = f.live();
    let mut map: Vec<Option<NodeId>> = vec![None; f.len()];
    for id in f.ids().filter(|id| live[id.index()]) {
        let op = f.op(id);
        map[id.index()] = Some(match op {
            Op::Var(k) => {
                let name = &f.vars[k as usize];
                let arg = args.iter().find(|(n, _)| n == name);
                arg.unwrap_or_else(|| panic!("the table's formula {text:?}: {name}?"))
                    .1
            }
            _ => {
                let mapped: Vec<NodeId> =
                    op.args().iter().map(|a| map[a.index()].unwrap()).collect();
                g.add(op.with_args(&mapped), span)
            }
        });
    }
    map[f.outputs[0].index()].unwrap()
}

/// A derived function of the table ([`DerivedFn`]) as the interval operations its row names
/// (see [`Expansion`] for why each is written as it is). Every operation is rigorous, so the
/// expansion is; an intersection of two enclosures of the same image is one too.
pub(crate) fn expand_derived(g: &mut Graph, f: DerivedFn, x: NodeId, span: Span) -> NodeId {
    let mut e = Expander { g, span };
    match f.row().expansion {
        Expansion::RecipOf(inner) => e.recip_of(inner, x),
        Expansion::Acot => {
            let r = e.recip(x);
            let a = e.op(Op::Elem(UnaryFn::Atan, r));
            // pi/2 when x holds 0, else empty: (x ∩ [0, 0]) * 0 + pi/2 (empty stays empty).
            let zero = e.num(0.0, 0.0);
            let at_zero = e.op(Op::Intersect(x, zero));
            let at_zero = e.op(Op::Mul(at_zero, zero));
            let half_pi = e.half_pi();
            let at_zero = e.op(Op::Add(at_zero, half_pi));
            e.op(Op::Hull(a, at_zero))
        }
        Expansion::Cot => {
            let near_poles = e.recip_of(UnaryFn::Tan, x);
            let half_pi = e.half_pi();
            let shifted = e.op(Op::Sub(x, half_pi));
            let t = e.op(Op::Elem(UnaryFn::Tan, shifted));
            let near_zeros = e.op(Op::Neg(t));
            e.op(Op::Intersect(near_poles, near_zeros))
        }
        Expansion::Sech => {
            let r = e.recip_of(UnaryFn::Cosh, x);
            // sech x = 2 e^-|x| / (1 + e^-2|x|), free of overflow.
            let a = e.op(Op::Abs(x));
            let num = e.two_exp_neg(a);
            let ex2 = e.of_minus_two(UnaryFn::Exp, a);
            let one = e.num(1.0, 1.0);
            let den = e.op(Op::Add(one, ex2));
            let q = e.op(Op::Div(num, den));
            e.op(Op::Intersect(r, q))
        }
        Expansion::Csch => e.odd(x, 0.0, |e, p| {
            let r = e.recip_of(UnaryFn::Sinh, p);
            // csch x = 2 e^-x / (1 - e^-2x) = 2 e^-x / -expm1(-2x).
            let num = e.two_exp_neg(p);
            let em = e.of_minus_two(UnaryFn::Expm1, p);
            let den = e.op(Op::Neg(em));
            let q = e.op(Op::Div(num, den));
            e.op(Op::Intersect(r, q))
        }),
        Expansion::Acoth => e.odd(x, 1.0, |e, p| {
            // acoth x = log1p(2 / (x - 1)) / 2 on x >= 1.
            let one = e.num(1.0, 1.0);
            let d = e.op(Op::Sub(p, one));
            let two = e.num(2.0, 2.0);
            let q = e.op(Op::Div(two, d));
            let l = e.op(Op::Elem(UnaryFn::Log1p, q));
            let half = e.num(0.5, 0.5);
            e.op(Op::Mul(half, l))
        }),
        Expansion::Asech => {
            let dom = e.num(0.0, 1.0);
            let x = e.op(Op::Intersect(x, dom));
            let r = e.recip(x);
            let a = e.op(Op::Elem(UnaryFn::Acosh, r));
            // asech x = log((1 + sqrt(1 - x^2)) / x) = log1p(sqrt((1 - x)(1 + x))) - log x.
            let one = e.num(1.0, 1.0);
            let m = e.op(Op::Sub(one, x));
            let p = e.op(Op::Add(one, x));
            let prod = e.op(Op::Mul(m, p));
            let b = e.log1p_sqrt_minus_log(prod, x);
            e.op(Op::Intersect(a, b))
        }
        Expansion::Acsch => e.odd(x, 0.0, |e, p| {
            let r = e.recip(p);
            let a = e.op(Op::Elem(UnaryFn::Asinh, r));
            // acsch x = log((1 + sqrt(1 + x^2)) / x) = log1p(sqrt(1 + x^2)) - log x.
            let one = e.num(1.0, 1.0);
            let sq = e.op(Op::Sqr(p));
            let t = e.op(Op::Add(one, sq));
            let b = e.log1p_sqrt_minus_log(t, p);
            e.op(Op::Intersect(a, b))
        }),
    }
}

/// Builds the nodes of an expansion, all with the call's span.
struct Expander<'g> {
    g: &'g mut Graph,
    span: Span,
}

impl Expander<'_> {
    fn op(&mut self, op: Op) -> NodeId {
        self.g.add(op, self.span)
    }

    fn num(&mut self, lo: f64, hi: f64) -> NodeId {
        self.g.constant(Interval { lo, hi })
    }

    /// An enclosure of pi/2 (halving the enclosure of pi is exact).
    fn half_pi(&mut self) -> NodeId {
        let pi = named_constant("pi").expect("pi");
        self.num(pi.lo / 2.0, pi.hi / 2.0)
    }

    /// `1 / x`.
    fn recip(&mut self, x: NodeId) -> NodeId {
        let one = self.num(1.0, 1.0);
        self.op(Op::Div(one, x))
    }

    /// `1 / g(x)`.
    fn recip_of(&mut self, g: UnaryFn, x: NodeId) -> NodeId {
        let y = self.op(Op::Elem(g, x));
        self.recip(y)
    }

    /// `2 e^-a`.
    fn two_exp_neg(&mut self, a: NodeId) -> NodeId {
        let na = self.op(Op::Neg(a));
        let ex = self.op(Op::Elem(UnaryFn::Exp, na));
        let two = self.num(2.0, 2.0);
        self.op(Op::Mul(two, ex))
    }

    /// `g(-2a)`.
    fn of_minus_two(&mut self, g: UnaryFn, a: NodeId) -> NodeId {
        let m2 = self.num(-2.0, -2.0);
        let t = self.op(Op::Mul(m2, a));
        self.op(Op::Elem(g, t))
    }

    /// `log1p(sqrt(s)) - log(x)`: the log form of asech and acsch.
    fn log1p_sqrt_minus_log(&mut self, s: NodeId, x: NodeId) -> NodeId {
        let r = self.op(Op::Sqrt(s));
        let l1 = self.op(Op::Elem(UnaryFn::Log1p, r));
        let lx = self.op(Op::Elem(UnaryFn::Log, x));
        self.op(Op::Sub(l1, lx))
    }

    /// An odd function from its expansion `pos` on x >= c: the hull of pos(x ∩ [c, inf]) and
    /// -pos(-(x ∩ [-inf, -c])). Each part keeps x away from the other sign, so neither part's
    /// reciprocal becomes the hull of two rays.
    fn odd(&mut self, x: NodeId, c: f64, pos: impl Fn(&mut Self, NodeId) -> NodeId) -> NodeId {
        let above = self.num(c, f64::INFINITY);
        let below = self.num(f64::NEG_INFINITY, -c);
        let xa = self.op(Op::Intersect(x, above));
        let ya = pos(self, xa);
        let xb = self.op(Op::Intersect(x, below));
        let nb = self.op(Op::Neg(xb));
        let yb = pos(self, nb);
        let yb = self.op(Op::Neg(yb));
        self.op(Op::Hull(ya, yb))
    }
}

/// `x^n` for any integer n (negative n directly, not as `1 / pown`: rounded once).
pub(crate) fn pown(g: &mut Graph, x: NodeId, n: i128, span: Span) -> NodeId {
    g.add(Op::Pown(x, n as i64), span)
}

/// The real n-th root `rootn(x, n)`; negative n directly (rounded once, not as `1 / rootn`);
/// empty for n = 0 (IEEE 1788 leaves it undefined).
pub(crate) fn rootn(g: &mut Graph, x: NodeId, n: i128, span: Span) -> NodeId {
    if n == 0 {
        return g.add(Op::Const(Interval::EMPTY), span);
    }
    g.add(Op::Rootn(x, n as i64), span)
}

/// The integer a node is, if it is a point constant holding an integer of magnitude below 2^63.
pub(crate) fn integer_constant(g: &Graph, id: NodeId) -> Option<i128> {
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
        NodeKind::Decorated { inner, .. } => vec![*inner],
        _ => vec![],
    }
}
