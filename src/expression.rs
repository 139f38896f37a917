//! [`Expression`]: parsed, rewritten, and lowered and emitted on demand, once per precision.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use crate::ir::{self, Graph};
use crate::scalar::{self, Program};
use crate::syntax::{self, ast::Span};
use crate::{gpu, lower, rewrite, Error, Interval, Precision};

/// A parsed, rewritten expression, ready to be lowered for any backend and precision.
///
/// The lowered program and the PTX of each precision are computed at first use and kept (clones
/// share them), so that a second [`Evaluator`](crate::Evaluator) of the same expression repeats none of that
/// work: for a 100-node expression lowering and emitting take about 0.3 ms, the budget of a
/// cached compile is 1 ms.
#[derive(Clone, Debug)]
pub struct Expression {
    source: String,
    initial: Graph,
    /// Shared with the evaluators made from it (the searches that run tapes build them from
    /// it: [`crate::Evaluator::graph`]).
    graph: Arc<Graph>,
    /// Per precision (index [`precision_index`]), once lowered successfully; behind an `Arc` so
    /// that clones, even those made before the first use, share one memo.
    compiled: Arc<[OnceLock<Compiled>; 2]>,
    /// Each variable's number by name, made at the first lookup ([`Expression::var_index`]).
    var_index: OnceLock<HashMap<String, usize>>,
    /// Whether its programs compute decorations, and from what ([`Expression::parse_decorated`]).
    decorated: Option<crate::DecorationInputs>,
}

/// What an [`Expression`] compiled for one precision.
#[derive(Debug)]
pub(crate) struct Compiled {
    pub(crate) program: Arc<Program>,
    /// The checked PTX with its in-process cache key, emitted at first GPU use (the CPU backend
    /// does not need it), or why the program cannot be compiled for the GPU.
    kernel: OnceLock<Result<gpu::KernelSource, scalar::VerifyError>>,
}

impl Compiled {
    pub(crate) fn kernel_source(&self) -> Result<&gpu::KernelSource, Error> {
        self.kernel
            .get_or_init(|| gpu::KernelSource::new(&self.program))
            .as_ref()
            .map_err(|why| Error::Gpu(gpu::GpuError::InvalidProgram(why.clone())))
    }
}

fn precision_index(p: Precision) -> usize {
    match p {
        Precision::F64 => 0,
        Precision::F32 => 1,
    }
}

impl Expression {
    /// Parses and compiles an expression: syntax, name resolution, rewrites.
    ///
    /// Lowering is tried once (for f64) so that unsupported operations are reported here, with
    /// their span, rather than when an [`Evaluator`](crate::Evaluator) is built.
    ///
    /// ```
    /// use ivjit::{Error, Expression};
    /// let expr = Expression::parse("let s = x + y; s^2, s / 2").unwrap();
    /// assert_eq!(expr.n_outputs(), 2);
    /// // Unknown functions are compile errors that point into the source.
    /// assert!(matches!(Expression::parse("foo(x)"), Err(Error::Compile(_))));
    /// ```
    pub fn parse(source: &str) -> Result<Expression, Error> {
        Expression::parse_with(source, None)
    }

    /// [`Expression::parse`] for IEEE 1788 decorations: its programs compute each output's
    /// decoration beside its values ([`crate::Evaluator::eval_decorated`]), from one
    /// decoration per variable. The programs take, after the variables, one input per
    /// variable holding its decoration's code ([`crate::Decoration::code`], as the point
    /// interval [c, c]) and give, after the outputs, one output per output holding the
    /// result's; the bounds are those of [`Expression::parse`]'s programs. Constant
    /// subexpressions are folded only where folding keeps their decoration (`floor(2)` is
    /// `dac`: floor jumps at 2).
    ///
    /// ```
    /// use ivjit::{BackendChoice, DecoratedInterval, Decoration, Evaluator, Expression, Precision};
    /// let expr = Expression::parse_decorated("sqrt(x) + 1 / y").unwrap();
    /// let eval = Evaluator::new(&expr, Precision::F64, BackendChoice::Cpu).unwrap();
    /// let b = |t: &str| DecoratedInterval::parse(t).unwrap();
    /// let out = eval.eval_decorated(&[vec![b("[1, 4]"), b("[1, 2]")]]).unwrap();
    /// assert_eq!(out[0][0].decoration, Decoration::Com); // defined and continuous
    /// let out = eval.eval_decorated(&[vec![b("[-1, 4]"), b("[1, 2]")]]).unwrap();
    /// assert_eq!(out[0][0].decoration, Decoration::Trv); // sqrt is undefined on [-1, 0)
    /// ```
    pub fn parse_decorated(source: &str) -> Result<Expression, Error> {
        Expression::parse_with(source, Some(crate::DecorationInputs::Given))
    }

    /// [`Expression::parse_decorated`] with the variables' decorations taken as given
    /// ([`crate::DecorationInputs::Given`]) or from their bounds alone (`FromBounds`: IEEE
    /// 1788's `newDec`, no decoration inputs, for batches of bare boxes).
    ///
    /// ```
    /// use ivjit::{BackendChoice, DecoratedInterval, DecorationInputs, Evaluator, Expression, Interval, Precision};
    /// let expr = Expression::parse_with_decorations("1 / x", DecorationInputs::FromBounds).unwrap();
    /// let eval = Evaluator::new(&expr, Precision::F64, BackendChoice::Cpu).unwrap();
    /// assert_eq!(eval.program().n_vars(), 1); // x alone
    /// let out = eval.eval(&[Interval::new(-1.0, 1.0).unwrap()]).unwrap();
    /// assert_eq!(out.len(), 2); // the value, then the decoration's code
    /// assert_eq!(out[1].lo, 4.0); // trv: 1/x is undefined at 0
    /// ```
    pub fn parse_with_decorations(
        source: &str,
        inputs: crate::DecorationInputs,
    ) -> Result<Expression, Error> {
        Expression::parse_with(source, Some(inputs))
    }

    fn parse_with(
        source: &str,
        decorated: Option<crate::DecorationInputs>,
    ) -> Result<Expression, Error> {
        let ast = syntax::parser::parse(source).map_err(Error::Compile)?;
        let initial = if decorated.is_some() {
            ir::build::build_decorated(&ast, Some(lower::fold_decorated))
        } else {
            ir::build::build(&ast, Some(lower::fold))
        }
        .map_err(Error::Compile)?;
        let graph = rewrite::run_all(&initial);
        let expr = Expression {
            source: source.to_string(),
            initial,
            graph: Arc::new(graph),
            compiled: Default::default(),
            var_index: OnceLock::new(),
            decorated,
        };
        // Surface lowering errors (unsupported operations) at compile time, with their span;
        // the f64 program is kept for the evaluators.
        expr.compiled(Precision::F64)?;
        Ok(expr)
    }

    /// Reads a Fidget/MPR `.vm` tape ([`syntax::tape`]): one `let` per clause, the last clause
    /// the output. [`Expression::source`] is then the expression text the tape spells; a
    /// malformed tape is a [`Error::Compile`] whose span points into the tape.
    ///
    /// ```
    /// use ivjit::Expression;
    /// let e = Expression::parse_tape("_0 var-x\n_1 square _0\n_2 const 2\n_3 sub _1 _2\n").unwrap();
    /// assert_eq!(e.vars(), ["x"]);
    /// ```
    pub fn parse_tape(tape: &str) -> Result<Expression, Error> {
        let text = syntax::tape::to_expression_text(tape).map_err(Error::Compile)?;
        Expression::parse(&text)
    }

    /// The expression with its gradient: one expression whose outputs are the function's, then
    /// per output its *defined* flag and its partial derivatives in variable order
    /// ([`ir::diff::Gradient`] says where each is). Each partial derivative's enclosure
    /// contains the derivative at every point of the box where it exists (for abs, min and
    /// max, the generalized gradient); the flag is [1, 1] where the output is proven
    /// continuous on the box.
    ///
    /// ```
    /// use ivjit::{BackendChoice, Evaluator, Expression, Interval, Precision};
    /// let (g, at) = Expression::parse("x^2 * y").unwrap().gradient().unwrap();
    /// let eval = Evaluator::new(&g, Precision::F64, BackendChoice::Cpu).unwrap();
    /// let out = eval.eval(&[Interval::new(1.0, 2.0).unwrap(), Interval::new(3.0, 3.0).unwrap()]).unwrap();
    /// assert_eq!(out[at.partial(0, 0)], Interval::new(6.0, 12.0).unwrap()); // 2 x y
    /// assert_eq!(out[at.partial(0, 1)], Interval::new(1.0, 4.0).unwrap()); // x^2
    /// assert_eq!(out[at.defined(0)], Interval::new(1.0, 1.0).unwrap());
    /// ```
    pub fn gradient(&self) -> Result<(Expression, ir::diff::Gradient), Error> {
        let (graph, layout) = ir::diff::gradient(&self.graph);
        Ok((self.derived(graph)?, layout))
    }

    /// [`Expression::gradient`] for interval Newton: the same layout, but each output's flag
    /// ([`ir::diff::Gradient::defined`]) is [1, 1] only where the output is proven continuous
    /// *and defined* on the whole box ([`ir::diff::jacobian`]).
    pub fn jacobian(&self) -> Result<(Expression, ir::diff::Gradient), Error> {
        let (graph, layout) = ir::diff::jacobian(&self.graph);
        Ok((self.derived(graph)?, layout))
    }

    /// The system `f_j - c_j` for the outputs `(j, c_j)` of `which`, over the same variables in
    /// the same order (also those it no longer reads): the equalities `f_j = c_j` of a
    /// constraint set as zeros, for interval Newton (`search::system`).
    pub(crate) fn equalities(&self, which: &[(usize, f64)]) -> Result<Expression, Error> {
        let mut g = (*self.graph).clone();
        let span = crate::syntax::ast::Span::default();
        let outputs = which
            .iter()
            .map(|&(j, c)| {
                let o = g.outputs[j];
                if c == 0.0 {
                    o
                } else {
                    let c = g.constant(Interval { lo: c, hi: c });
                    g.add(ir::Op::Sub(o, c), span)
                }
            })
            .collect();
        g.outputs = outputs;
        self.derived(g)
    }

    /// `max(|f_1|, ..., |f_m|)`: one output that is 0 exactly where every output is 0, so that
    /// a search for the zeros of one function ([`crate::search::exclude::exclude`]) finds the
    /// common zeros of a system. Empty where any output is.
    pub(crate) fn residual(&self) -> Result<Expression, Error> {
        let mut g = (*self.graph).clone();
        let span = crate::syntax::ast::Span::default();
        let mut acc: Option<ir::NodeId> = None;
        for o in g.outputs.clone() {
            let a = g.add(ir::Op::Abs(o), span);
            acc = Some(match acc {
                None => a,
                Some(m) => g.add(ir::Op::Max(m, a), span),
            });
        }
        g.outputs = acc.into_iter().collect();
        self.derived(g)
    }

    /// The expression evaluated in the mean-value (centered) form, intersected with the
    /// natural extension ([`ir::diff::mean_value_form`]): the same outputs, never wider, and on
    /// small boxes much narrower (the overestimation shrinks like the square of the width).
    /// Falls back to the natural extension on boxes where the expression may be discontinuous
    /// or undefined.
    ///
    /// ```
    /// use ivjit::{BackendChoice, Evaluator, Expression, Interval, Precision};
    /// let f = Expression::parse("x^2 - 2*x").unwrap();
    /// let mvf = f.mean_value_form().unwrap();
    /// let b = [Interval::new(0.9, 1.1).unwrap()];
    /// let natural = Evaluator::new(&f, Precision::F64, BackendChoice::Cpu).unwrap().eval(&b).unwrap()[0];
    /// let centered = Evaluator::new(&mvf, Precision::F64, BackendChoice::Cpu).unwrap().eval(&b).unwrap()[0];
    /// assert!(centered.hi - centered.lo < (natural.hi - natural.lo) / 5.0);
    /// assert!(centered.lo >= natural.lo && centered.hi <= natural.hi);
    /// ```
    pub fn mean_value_form(&self) -> Result<Expression, Error> {
        self.derived(ir::diff::mean_value_form(&self.graph))
    }

    /// The expression in the monotone form ([`ir::diff::monotone_form`]): the mean-value form
    /// intersected with the monotonicity test's enclosure (each variable whose partial
    /// derivative has a sign on the box fixed at the end where f is least, and at the end
    /// where it is greatest). Never wider than the mean-value form; exact, up to rounding, where
    /// f is monotone in every variable.
    ///
    /// ```
    /// use ivjit::{BackendChoice, Evaluator, Expression, Interval, Precision};
    /// let f = Expression::parse("x^2 - 2*x").unwrap();
    /// let mono = f.monotone_form().unwrap();
    /// let eval = Evaluator::new(&mono, Precision::F64, BackendChoice::Cpu).unwrap();
    /// // Natural extension: [4 - 6, 9 - 4] = [-2, 5]; f rises on [2, 3] from 0 to 3.
    /// assert_eq!(eval.eval(&[Interval::new(2.0, 3.0).unwrap()]).unwrap()[0], Interval::new(0.0, 3.0).unwrap());
    /// ```
    pub fn monotone_form(&self) -> Result<Expression, Error> {
        self.derived(ir::diff::monotone_form(&self.graph))
    }

    /// The contractor of the constraints "output j lies in `ranges[j]`" (HC4Revise,
    /// [`ir::contract::hc4_revise`], `sweeps` forward-backward sweeps): an expression whose
    /// outputs are the variables, in [`Expression::vars`] order, narrowed on a box to an
    /// enclosure of the box's points that satisfy every constraint (where the outputs are
    /// defined). An empty output proves the box holds none. Like every expression it runs as
    /// one program on either backend, forward and backward sweeps in one pass.
    ///
    /// ```
    /// use ivjit::{BackendChoice, Evaluator, Expression, Interval, Precision};
    /// // The circle x^2 + y^2 = 1 with x in [0.6, 2]: y^2 = 1 - x^2 <= 0.64.
    /// let circle = Expression::parse("x^2 + y^2").unwrap();
    /// let c = circle.contractor(&[Interval::point(1.0).unwrap()], 1).unwrap();
    /// let eval = Evaluator::new(&c, Precision::F64, BackendChoice::Cpu).unwrap();
    /// let b = [Interval::new(0.6, 2.0).unwrap(), Interval::new(-2.0, 2.0).unwrap()];
    /// let out = eval.eval(&b).unwrap();
    /// assert!(out[0].lo == 0.6 && out[0].hi >= 1.0 && out[0].hi < 1.0 + 1e-12);
    /// assert!(out[1].hi >= 0.8 && out[1].hi < 0.8 + 1e-12 && out[1].lo == -out[1].hi);
    /// // A box outside the circle: empty.
    /// let far = [Interval::new(1.5, 2.0).unwrap(), Interval::new(-2.0, 2.0).unwrap()];
    /// assert!(eval.eval(&far).unwrap()[0].is_empty());
    /// ```
    pub fn contractor(&self, ranges: &[Interval], sweeps: usize) -> Result<Expression, Error> {
        if ranges.len() != self.n_outputs() {
            return Err(crate::shape::ShapeError::Ranges {
                outputs: self.n_outputs(),
                ranges: ranges.len(),
            }
            .into());
        }
        self.derived(ir::contract::hc4_revise(&self.graph, ranges, sweeps))
    }

    /// The expression in the *minimization form* for branch and bound over the root box `root`
    /// (one `(lo, hi)` per variable, in [`Expression::vars`] order): the mean-value form with
    /// the monotonicity test and gradient-based exclusion compiled in
    /// ([`ir::diff::minimization_form`]). Its value on a box is a lower bound of f over the
    /// box's points that can be global minimizers of f on `root` (the empty set where the
    /// gradient proves there are none) and an upper bound of f on the box; on a point box it
    /// is the mean-value form. It is what [`crate::search::minimize::minimize`] wants, not an
    /// enclosure of f.
    ///
    /// ```
    /// use ivjit::{BackendChoice, Evaluator, Expression, Interval, Precision};
    /// let f = Expression::parse("(x - 1)^2").unwrap();
    /// let form = f.minimization_form(&[(-4.0, 4.0)]).unwrap();
    /// let eval = Evaluator::new(&form, Precision::F64, BackendChoice::Cpu).unwrap();
    /// // f increases on [2, 3], which starts inside the root box: no minimizer there.
    /// assert!(eval.eval(&[Interval::new(2.0, 3.0).unwrap()]).unwrap()[0].is_empty());
    /// // f decreases on [-4, -3], which ends inside: none there either.
    /// assert!(eval.eval(&[Interval::new(-4.0, -3.0).unwrap()]).unwrap()[0].is_empty());
    /// // A point keeps f's value; a box holding the minimizer keeps a lower bound.
    /// assert_eq!(eval.eval(&[Interval::point(3.0).unwrap()]).unwrap()[0], Interval::point(4.0).unwrap());
    /// assert!(eval.eval(&[Interval::new(0.0, 2.0).unwrap()]).unwrap()[0].lo <= 0.0);
    /// ```
    pub fn minimization_form(&self, root: &[(f64, f64)]) -> Result<Expression, Error> {
        if root.len() != self.vars().len() {
            return Err(crate::error::SearchError::Options(format!(
                "the root box has {} sides; the expression has {} variables ({})",
                root.len(),
                self.vars().len(),
                self.vars().join(", ")
            ))
            .into());
        }
        if let Some((lo, hi)) = root
            .iter()
            .find(|(lo, hi)| lo.partial_cmp(hi).is_none_or(|o| o.is_gt()))
        {
            return Err(crate::error::SearchError::Options(format!(
                "the root box side [{lo}, {hi}] is not an interval"
            ))
            .into());
        }
        self.derived(ir::diff::minimization_form(&self.graph, root))
    }

    /// An expression made from this one's IR (`graph`, before rewrites), with the same source;
    /// lowered once, like [`Expression::parse`], to surface errors here.
    fn derived(&self, graph: Graph) -> Result<Expression, Error> {
        let rewritten = rewrite::run_all(&graph);
        let expr = Expression {
            source: self.source.clone(),
            initial: graph,
            graph: Arc::new(rewritten),
            compiled: Default::default(),
            var_index: OnceLock::new(),
            decorated: None,
        };
        expr.compiled(Precision::F64)?;
        Ok(expr)
    }

    /// Whether its programs compute decorations, and where its variables' come from
    /// ([`Expression::parse_with_decorations`]); `None` for an undecorated expression.
    pub fn decorations(&self) -> Option<crate::DecorationInputs> {
        self.decorated
    }

    /// The source text the expression was parsed from.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Variable names in order of first appearance: the order of intervals in a box.
    ///
    /// ```
    /// use ivjit::Expression;
    /// let expr = Expression::parse("y * x + y").unwrap();
    /// assert_eq!(expr.vars(), ["y", "x"]);
    /// ```
    pub fn vars(&self) -> &[String] {
        &self.graph.vars
    }

    /// A variable's number: its place in [`Expression::vars`] and in a box. A hash lookup (the
    /// map is made at the first call), so that matching n given names against n variables
    /// takes linear time, not a scan of the variables per name.
    ///
    /// ```
    /// use ivjit::Expression;
    /// let expr = Expression::parse("y * x + y").unwrap();
    /// assert_eq!(expr.var_index("x"), Some(1));
    /// assert_eq!(expr.var_index("z"), None);
    /// ```
    pub fn var_index(&self, name: &str) -> Option<usize> {
        self.var_index
            .get_or_init(|| {
                let mut map = HashMap::with_capacity(self.graph.vars.len());
                for (k, v) in self.graph.vars.iter().enumerate() {
                    map.entry(v.clone()).or_insert(k);
                }
                map
            })
            .get(name)
            .copied()
    }

    /// Where a variable first appears in the source.
    pub fn var_span(&self, name: &str) -> Option<Span> {
        Some(self.graph.var_spans[self.var_index(name)?])
    }

    /// The number of comma-separated outputs: the length of each result row.
    pub fn n_outputs(&self) -> usize {
        self.graph.outputs.len()
    }

    /// The IR as built from the source, before rewrites.
    pub fn initial_ir(&self) -> &Graph {
        &self.initial
    }

    /// The IR after all rewrites.
    pub fn ir(&self) -> &Graph {
        &self.graph
    }

    /// The rewritten IR, shared.
    pub(crate) fn graph_arc(&self) -> Arc<Graph> {
        self.graph.clone()
    }

    /// The rewritten IR in text form (`ivjit ir`): one live node per line, with the sign facts
    /// the lowering uses, then one `outK = ...` line per output.
    ///
    /// ```
    /// use ivjit::Expression;
    /// let text = Expression::parse("x*y*x").unwrap().ir_text();
    /// assert!(text.starts_with("vars: x, y\n"));
    /// // The repeated factor x*x became a square, known to be non-negative.
    /// assert!(text.contains("sqr %0    ; >=0"));
    /// assert!(text.ends_with("out0 = %3\n"));
    /// ```
    pub fn ir_text(&self) -> String {
        ir::text::to_text(&self.graph)
    }

    /// The scalar program for one precision (a copy of [`Expression::program`]).
    pub fn scalar(&self, precision: Precision) -> Result<Program, Error> {
        Ok(Program::clone(&*self.program(precision)?))
    }

    /// The scalar program for one precision, lowered at the first call and shared afterwards
    /// (with clones of the expression too).
    ///
    /// ```
    /// use ivjit::{Expression, Precision};
    /// let expr = Expression::parse("x*y + 1").unwrap();
    /// let a = expr.program(Precision::F32).unwrap();
    /// let b = expr.clone().program(Precision::F32).unwrap();
    /// assert!(std::sync::Arc::ptr_eq(&a, &b));
    /// ```
    pub fn program(&self, precision: Precision) -> Result<Arc<Program>, Error> {
        Ok(self.compiled(precision)?.program.clone())
    }

    /// The memoized compilation for one precision. A lowering error is returned and not kept
    /// (it is recomputed if asked for again; errors are not the case to make fast).
    pub(crate) fn compiled(&self, precision: Precision) -> Result<&Compiled, Error> {
        let cell = &self.compiled[precision_index(precision)];
        if let Some(c) = cell.get() {
            return Ok(c);
        }
        let program = if let Some(inputs) = self.decorated {
            lower::lower_decorated(&self.graph, precision, inputs)?
        } else {
            lower::lower(&self.graph, precision)?
        };
        // Two threads may both lower; they get the same program, and the first one is kept.
        Ok(cell.get_or_init(|| Compiled {
            program: Arc::new(program),
            kernel: OnceLock::new(),
        }))
    }

    /// The PTX kernel for one precision (`ivjit ptx`). Emitting it needs no GPU.
    ///
    /// ```
    /// use ivjit::{Expression, Precision};
    /// let ptx = Expression::parse("x*y").unwrap().ptx(Precision::F32).unwrap();
    /// assert!(ptx.contains(".visible .entry ivjit_kernel("));
    /// // Every float operation carries an explicit rounding direction.
    /// assert!(ptx.contains("mul.rm.f32") && ptx.contains("mul.rp.f32"));
    /// ```
    pub fn ptx(&self, precision: Precision) -> Result<String, Error> {
        Ok(self
            .compiled(precision)?
            .kernel_source()?
            .text()
            .to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ptx;

    const TEXT: &str = "let s = x*y - 3.25*z; s^3 + sqrt(abs(s)), exp(x) / (y + 4)";

    #[test]
    fn expression_lowers_and_emits_once_per_precision() {
        fn shareable<T: Clone + Send + Sync>() {}
        shareable::<Expression>();
        let expr = Expression::parse(TEXT).unwrap();
        let copy = expr.clone();
        for p in [Precision::F64, Precision::F32] {
            let fresh = lower::lower(expr.ir(), p).unwrap();
            let a = expr.program(p).unwrap();
            // As text: the derived equality of programs is false on NaN constants.
            let text = fresh.to_string();
            assert_eq!(
                a.to_string(),
                text,
                "{p:?}: the kept program is the lowering"
            );
            assert!(
                Arc::ptr_eq(&a, &expr.program(p).unwrap()),
                "{p:?}: lowered again"
            );
            assert!(
                Arc::ptr_eq(&a, &copy.program(p).unwrap()),
                "{p:?}: clone lowered again"
            );
            assert_eq!(expr.scalar(p).unwrap().to_string(), text);

            let compiled = expr.compiled(p).unwrap();
            let k1 = compiled.kernel_source().unwrap().text();
            let k2 = expr.compiled(p).unwrap().kernel_source().unwrap().text();
            assert!(std::ptr::eq(k1, k2), "{p:?}: PTX emitted again");
            assert_eq!(k1, ptx::emit(&fresh), "{p:?}: the kept PTX is the emission");
            assert_eq!(expr.ptx(p).unwrap(), k1);
        }
        // The precisions are kept apart.
        assert_ne!(
            expr.program(Precision::F64).unwrap().to_string(),
            expr.program(Precision::F32).unwrap().to_string()
        );
    }
}
