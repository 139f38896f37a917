//! ivjit: an interval-expression JIT compiler for NVIDIA GPUs, with a rigorous CPU evaluator.
//!
//! Every output interval contains every real value the expression takes on the input box
//! (IEEE 1788 set-based semantics).
//!
//! The pipeline, one module per stage:
//! text → [`syntax`] (logos lexer, LALRPOP parser, AST with spans) → [`ir`] (hash-consed interval
//! DAG with constant folding) → [`rewrite`] (power specialization, repeated factors, squares,
//! static signs) → [`lower`] (interval semantics → [`scalar`] IR with a rounding direction on every
//! float operation) → backends: [`cpu`] (evaluator) and [`ptx`] (emitter) + [`gpu`] (cudarc).
//!
//! ```
//! use ivjit::{Expression, Evaluator, BackendChoice, Interval, Precision};
//! let expr = Expression::parse("x^2 - 2*x").unwrap();
//! let eval = Evaluator::new(&expr, Precision::F64, BackendChoice::Cpu).unwrap();
//! let out = eval.eval(&[Interval::new(-1.0, 2.0).unwrap()]).unwrap();
//! assert!(out[0].contains(-1.0) && out[0].contains(3.0));
//! ```

#![warn(missing_docs)]

pub mod bench;
pub mod cpu;
pub mod gpu;
pub mod interval;
pub mod ir;
pub mod lower;
pub mod ptx;
pub mod rewrite;
pub mod scalar;
pub mod syntax;

pub use interval::{Interval, IntervalError};
pub use scalar::Precision;

use ir::Graph;
use scalar::Program;
use syntax::ast::Span;
use syntax::diagnostic::Diagnostic;

/// Everything that can go wrong, with enough context to tell the user what to do.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The expression is malformed or uses something unknown; the diagnostic points into it.
    #[error("{0}")]
    Compile(Diagnostic),
    /// A box bound is not a valid interval.
    #[error("input {name}: {error}")]
    Input {
        /// Which input: the box and variable, or the `--var` name.
        name: String,
        /// What is wrong with its bounds.
        error: IntervalError,
    },
    /// A box has the wrong number of intervals.
    #[error("a box needs {expected} intervals (one per variable: {vars}), found {found}")]
    BoxSize {
        /// The number of variables of the expression.
        expected: usize,
        /// The number of intervals in the box.
        found: usize,
        /// The variable names, comma-separated, in box order.
        vars: String,
    },
    /// The GPU backend was asked for and there is no usable GPU.
    #[error("no GPU available: {0}")]
    NoGpu(#[from] gpu::NoGpu),
    /// The GPU failed while compiling or running the kernel.
    #[error("GPU error: {0}")]
    Gpu(#[from] gpu::GpuError),
}

/// A parsed, rewritten expression, ready to be lowered for any backend and precision.
#[derive(Clone, Debug)]
pub struct Expression {
    source: String,
    initial: Graph,
    graph: Graph,
}

impl Expression {
    /// Parses and compiles an expression: syntax, name resolution, rewrites.
    ///
    /// Lowering is tried once (for f64) so that unsupported operations are reported here, with
    /// their span, rather than when an [`Evaluator`] is built.
    ///
    /// ```
    /// use ivjit::{Error, Expression};
    /// let expr = Expression::parse("let s = x + y; s^2, s / 2").unwrap();
    /// assert_eq!(expr.n_outputs(), 2);
    /// // Unknown functions are compile errors that point into the source.
    /// assert!(matches!(Expression::parse("foo(x)"), Err(Error::Compile(_))));
    /// ```
    pub fn parse(source: &str) -> Result<Expression, Error> {
        let ast = syntax::parser::parse(source).map_err(Error::Compile)?;
        let initial = ir::build::build(&ast).map_err(Error::Compile)?;
        let graph = rewrite::run_all(&initial);
        let expr = Expression {
            source: source.to_string(),
            initial,
            graph,
        };
        // Surface lowering errors (unsupported operations) at compile time, with their span.
        expr.scalar(Precision::F64)?;
        Ok(expr)
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

    /// Where a variable first appears in the source.
    pub fn var_span(&self, name: &str) -> Option<Span> {
        let i = self.graph.vars.iter().position(|v| v == name)?;
        Some(self.graph.var_spans[i])
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

    /// The scalar program for one precision.
    pub fn scalar(&self, precision: Precision) -> Result<Program, Error> {
        lower::lower(&self.graph, precision).map_err(|e| {
            let d = Diagnostic::new(e.span, e.message);
            Error::Compile(match e.help {
                Some(h) => d.with_help(h),
                None => d,
            })
        })
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
        Ok(ptx::emit(&self.scalar(precision)?))
    }
}

/// Where expressions are evaluated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// The rigorous CPU evaluator ([`cpu`]).
    Cpu,
    /// A PTX kernel on an NVIDIA GPU ([`gpu`]).
    Gpu,
}

impl Backend {
    /// `"cpu"` or `"gpu"`, as the CLI prints it.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Cpu => "cpu",
            Backend::Gpu => "gpu",
        }
    }
}

/// Which backend to use: `Auto` takes the GPU when one can be used and the CPU otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendChoice {
    /// The GPU if a driver and device are present, else the CPU.
    Auto,
    /// Always the CPU evaluator.
    Cpu,
    /// The GPU; [`Error::NoGpu`] when there is none.
    Gpu,
}

/// An expression compiled for one backend and precision.
pub struct Evaluator {
    program: Program,
    backend: Backend,
    gpu: Option<gpu::GpuKernel>,
    fallback_reason: Option<String>,
}

impl Evaluator {
    /// Compiles `expr` for a backend. With `Auto`, a missing driver or device selects the CPU
    /// evaluator and [`Evaluator::fallback_reason`] says why.
    ///
    /// ```
    /// use ivjit::{Backend, BackendChoice, Evaluator, Expression, Precision};
    /// let expr = Expression::parse("sqrt(x)").unwrap();
    /// let eval = Evaluator::new(&expr, Precision::F64, BackendChoice::Cpu).unwrap();
    /// assert_eq!(eval.backend(), Backend::Cpu);
    /// assert_eq!(eval.precision(), Precision::F64);
    /// // `Auto` never fails for lack of a GPU: it falls back to the CPU and says why.
    /// let auto = Evaluator::new(&expr, Precision::F64, BackendChoice::Auto).unwrap();
    /// assert!(auto.backend() == Backend::Gpu || auto.fallback_reason().is_some());
    /// ```
    pub fn new(
        expr: &Expression,
        precision: Precision,
        choice: BackendChoice,
    ) -> Result<Evaluator, Error> {
        let program = expr.scalar(precision)?;
        let (backend, gpu, fallback_reason) = match choice {
            BackendChoice::Cpu => (Backend::Cpu, None, None),
            BackendChoice::Gpu => {
                gpu::detect()?;
                (Backend::Gpu, Some(gpu::GpuKernel::new(&program)?), None)
            }
            BackendChoice::Auto => match gpu::detect() {
                Ok(_) => (Backend::Gpu, Some(gpu::GpuKernel::new(&program)?), None),
                Err(why) => (Backend::Cpu, None, Some(why.to_string())),
            },
        };
        Ok(Evaluator {
            program,
            backend,
            gpu,
            fallback_reason,
        })
    }

    /// The backend that was selected.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The floating-point precision of the bounds the kernel computes with.
    pub fn precision(&self) -> Precision {
        self.program.precision
    }

    /// Why `Auto` chose the CPU, if it did.
    pub fn fallback_reason(&self) -> Option<&str> {
        self.fallback_reason.as_deref()
    }

    /// The scalar program being evaluated (what `ivjit scalar` prints).
    pub fn program(&self) -> &Program {
        &self.program
    }

    /// Evaluates one box (one interval per variable, in [`Expression::vars`] order); returns one
    /// interval per output.
    ///
    /// ```
    /// use ivjit::{BackendChoice, Evaluator, Expression, Interval, Precision};
    /// let expr = Expression::parse("x*y, x - y").unwrap();
    /// let eval = Evaluator::new(&expr, Precision::F64, BackendChoice::Cpu).unwrap();
    /// let x = Interval::new(-1.0, 2.0).unwrap();
    /// let y = Interval::point(3.0).unwrap();
    /// let out = eval.eval(&[x, y]).unwrap();
    /// assert_eq!(out, [Interval::new(-3.0, 6.0).unwrap(), Interval::new(-4.0, -1.0).unwrap()]);
    /// // A box with the wrong number of intervals is an error, not a panic.
    /// assert!(eval.eval(&[x]).is_err());
    /// ```
    pub fn eval(&self, inputs: &[Interval]) -> Result<Vec<Interval>, Error> {
        let out = self.eval_many(&[inputs.to_vec()])?;
        Ok(out.into_iter().next().unwrap_or_default())
    }

    /// Evaluates many boxes; returns one row of output intervals per box, in input order.
    ///
    /// ```
    /// use ivjit::{BackendChoice, Evaluator, Expression, Interval, Precision};
    /// let expr = Expression::parse("log(x)").unwrap();
    /// let eval = Evaluator::new(&expr, Precision::F64, BackendChoice::Cpu).unwrap();
    /// let boxes = vec![
    ///     vec![Interval::new(1.0, 10.0).unwrap()],
    ///     vec![Interval::new(-2.0, -1.0).unwrap()], // outside the domain
    /// ];
    /// let rows = eval.eval_many(&boxes).unwrap();
    /// assert!(rows[0][0].contains(0.0) && rows[0][0].contains(10f64.ln()));
    /// assert!(rows[1][0].is_empty());
    /// ```
    pub fn eval_many(&self, boxes: &[Vec<Interval>]) -> Result<Vec<Vec<Interval>>, Error> {
        let n = boxes.len();
        let nv = self.program.n_vars();
        let mut soa = vec![0.0; 2 * nv * n];
        for (i, b) in boxes.iter().enumerate() {
            if b.len() != nv {
                return Err(Error::BoxSize {
                    expected: nv,
                    found: b.len(),
                    vars: self.program.var_names.join(", "),
                });
            }
            for (k, iv) in b.iter().enumerate() {
                soa[2 * k * n + i] = iv.lo;
                soa[(2 * k + 1) * n + i] = iv.hi;
            }
        }
        let out = self.eval_soa(&soa, n)?;
        let no = self.program.outputs.len();
        Ok((0..n)
            .map(|i| {
                (0..no)
                    .map(|k| cpu::eval::to_interval(out[2 * k * n + i], out[(2 * k + 1) * n + i]))
                    .collect()
            })
            .collect())
    }

    /// Evaluates `n` boxes in structure-of-arrays layout: `inputs` holds the lo array of
    /// variable k at `[2k*n, 2k*n + n)` and its hi array right after; the result has the same
    /// layout per output. Every input pair is checked to be an interval (or NaN, NaN for empty);
    /// for f32 the bounds are rounded outward to f32 first.
    ///
    /// ```
    /// use ivjit::{BackendChoice, Evaluator, Expression, Precision};
    /// let expr = Expression::parse("x + y").unwrap();
    /// let eval = Evaluator::new(&expr, Precision::F64, BackendChoice::Cpu).unwrap();
    /// // Three boxes: x in [0,1], [2,3], [4,5]; y = 10, 20, 30.
    /// let n = 3;
    /// let inputs = [
    ///     0.0, 2.0, 4.0, //    x lo
    ///     1.0, 3.0, 5.0, //    x hi
    ///     10.0, 20.0, 30.0, // y lo
    ///     10.0, 20.0, 30.0, // y hi
    /// ];
    /// let out = eval.eval_soa(&inputs, n).unwrap();
    /// assert_eq!(out, [10.0, 22.0, 34.0, /* lo */ 11.0, 23.0, 35.0 /* hi */]);
    /// // NaN, NaN is the empty interval; the result is empty (NaN, NaN) too.
    /// let out = eval.eval_soa(&[f64::NAN, f64::NAN, 1.0, 1.0], 1).unwrap();
    /// assert!(out[0].is_nan() && out[1].is_nan());
    /// ```
    pub fn eval_soa(&self, inputs: &[f64], n: usize) -> Result<Vec<f64>, Error> {
        let nv = self.program.n_vars();
        assert_eq!(
            inputs.len(),
            2 * nv * n,
            "inputs must hold 2 * n_vars * n values"
        );
        let mut checked = inputs.to_vec();
        for k in 0..nv {
            for i in 0..n {
                let (lo, hi) = (inputs[2 * k * n + i], inputs[(2 * k + 1) * n + i]);
                let iv = if lo.is_nan() && hi.is_nan() {
                    Interval::EMPTY
                } else {
                    Interval::new(lo, hi).map_err(|error| Error::Input {
                        name: format!("box {i}, variable {}", self.program.var_names[k]),
                        error,
                    })?
                };
                let iv = match self.program.precision {
                    Precision::F64 => iv,
                    Precision::F32 => iv.to_f32_enclosure(),
                };
                checked[2 * k * n + i] = iv.lo;
                checked[(2 * k + 1) * n + i] = iv.hi;
            }
        }
        match &self.gpu {
            Some(kernel) => Ok(kernel.eval(&checked, n)?),
            None => Ok(cpu::eval::eval_soa(&self.program, &checked, n)),
        }
    }
}
