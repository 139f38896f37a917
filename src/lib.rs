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
//! Every stage reads what it knows of an elementary function from one table, [`point`].
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
pub mod point;
pub mod ptx;
pub mod rewrite;
pub mod round;
pub mod scalar;
pub mod shape;
pub mod syntax;

pub use interval::{Interval, IntervalError};
pub use scalar::Precision;

use std::sync::{Arc, OnceLock};

use rayon::prelude::*;

use ir::Graph;
use scalar::Program;
use syntax::ast::Span;
use syntax::diagnostic::Diagnostic;

/// Elements per task when the host converts or checks a batch in parallel (rayon): large
/// enough that a task (tens of microseconds) outweighs handing it to the pool, small enough to
/// spread a chunk of a few million elements over every core. A batch of at most this many is
/// handled on the calling thread.
pub(crate) const PARALLEL_PIECE: usize = 1 << 16;

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
    /// A batch of the wrong shape: a box with the wrong number of intervals, or buffers of the
    /// wrong length.
    #[error("{0}")]
    Shape(#[from] shape::ShapeError),
    /// The GPU backend was asked for and there is no usable GPU.
    #[error("no GPU available: {0}")]
    NoGpu(#[from] gpu::NoGpu),
    /// The GPU failed while compiling or running the kernel.
    #[error("GPU error: {0}")]
    Gpu(#[from] gpu::GpuError),
}

/// A parsed, rewritten expression, ready to be lowered for any backend and precision.
///
/// The lowered program and the PTX of each precision are computed at first use and kept (clones
/// share them), so that a second [`Evaluator`] of the same expression repeats none of that
/// work: for a 100-node expression lowering and emitting take about 0.3 ms, the budget of a
/// cached compile is 1 ms.
#[derive(Clone, Debug)]
pub struct Expression {
    source: String,
    initial: Graph,
    graph: Graph,
    /// Per precision (index [`precision_index`]), once lowered successfully; behind an `Arc` so
    /// that clones, even those made before the first use, share one memo.
    compiled: Arc<[OnceLock<Compiled>; 2]>,
}

/// What an [`Expression`] compiled for one precision.
#[derive(Debug)]
struct Compiled {
    program: Arc<Program>,
    /// The checked PTX with its in-process cache key, emitted at first GPU use (the CPU backend
    /// does not need it), or why the program cannot be compiled for the GPU.
    kernel: OnceLock<Result<gpu::KernelSource, scalar::VerifyError>>,
}

impl Compiled {
    fn kernel_source(&self) -> Result<&gpu::KernelSource, Error> {
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
        let initial = ir::build::build(&ast, Some(lower::fold)).map_err(Error::Compile)?;
        let graph = rewrite::run_all(&initial);
        let expr = Expression {
            source: source.to_string(),
            initial,
            graph,
            compiled: Default::default(),
        };
        // Surface lowering errors (unsupported operations) at compile time, with their span;
        // the f64 program is kept for the evaluators.
        expr.compiled(Precision::F64)?;
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
    fn compiled(&self, precision: Precision) -> Result<&Compiled, Error> {
        let cell = &self.compiled[precision_index(precision)];
        if let Some(c) = cell.get() {
            return Ok(c);
        }
        let program = lower::lower(&self.graph, precision).map_err(|e| {
            let d = Diagnostic::new(e.span, e.message);
            Error::Compile(match e.help {
                Some(h) => d.with_help(h),
                None => d,
            })
        })?;
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
    /// Shared with the [`Expression`] it was built from.
    program: Arc<Program>,
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
        let compiled = expr.compiled(precision)?;
        let program = compiled.program.clone();
        let kernel = || -> Result<gpu::GpuKernel, Error> {
            let source = compiled.kernel_source()?;
            let options = gpu::KernelOptions::default();
            Ok(gpu::GpuKernel::from_source(&program, source, &options)?)
        };
        let (backend, gpu, fallback_reason) = match choice {
            BackendChoice::Cpu => (Backend::Cpu, None, None),
            BackendChoice::Gpu => {
                gpu::detect()?;
                (Backend::Gpu, Some(kernel()?), None)
            }
            BackendChoice::Auto => match gpu::detect() {
                Ok(_) => (Backend::Gpu, Some(kernel()?), None),
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

    /// The GPU kernel, when the backend is the GPU.
    pub fn gpu_kernel(&self) -> Option<&gpu::GpuKernel> {
        self.gpu.as_ref()
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
                return Err(shape::ShapeError::Box {
                    expected: nv,
                    found: b.len(),
                    vars: self.program.var_names.join(", "),
                }
                .into());
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
                    .map(|k| Interval::from_bounds(out[2 * k * n + i], out[(2 * k + 1) * n + i]))
                    .collect()
            })
            .collect())
    }

    /// `inputs` checked as [`Evaluator::eval_soa`] describes, in the same layout: for f64 the
    /// caller's own slice (a valid bound is used as it is, so no copy is made: at 2^28 boxes a
    /// copy is gigabytes of fresh memory), for f32 a copy rounded outward to f32. The first
    /// invalid box (lowest variable, then lowest box) is the error. Variables one after the
    /// other, the boxes of each in parallel tasks of [`PARALLEL_PIECE`] (a single thread checks
    /// a few hundred million bounds a second, a GPU takes them faster).
    fn checked_inputs<'a>(
        &self,
        inputs: &'a [f64],
        n: usize,
    ) -> Result<std::borrow::Cow<'a, [f64]>, Error> {
        let precision = self.program.precision;
        // Every element is written below; zeroed memory costs no pass of its own.
        let mut rounded = match precision {
            Precision::F64 => None,
            Precision::F32 => Some(vec![0.0; inputs.len()]),
        };
        if n > 0 {
            // Boxes `first..` of one variable: the lo and hi bounds in, for f32 the rounded
            // ones out; the first failure with its box.
            let check = |first: usize,
                         out: Option<(&mut [f64], &mut [f64])>,
                         (lo, hi): (&[f64], &[f64])|
             -> Result<(), (usize, IntervalError)> {
                let valid = |i: usize, l: f64, h: f64| {
                    if l.is_nan() && h.is_nan() {
                        Ok(Interval::EMPTY)
                    } else {
                        Interval::new(l, h).map_err(|e| (first + i, e))
                    }
                };
                match out {
                    None => {
                        for (i, (&l, &h)) in lo.iter().zip(hi).enumerate() {
                            valid(i, l, h)?;
                        }
                    }
                    Some((out_lo, out_hi)) => {
                        let pairs = out_lo.iter_mut().zip(out_hi).zip(lo).zip(hi);
                        for (i, (((ol, oh), &l), &h)) in pairs.enumerate() {
                            let iv = valid(i, l, h)?.to_f32_enclosure();
                            (*ol, *oh) = (iv.lo, iv.hi);
                        }
                    }
                }
                Ok(())
            };
            for k in 0..self.program.n_vars() {
                let (lo, hi) = inputs[2 * k * n..2 * (k + 1) * n].split_at(n);
                let out = rounded
                    .as_mut()
                    .map(|r| r[2 * k * n..2 * (k + 1) * n].split_at_mut(n));
                let result = if n <= PARALLEL_PIECE {
                    check(0, out, (lo, hi))
                } else {
                    let ins = lo
                        .par_chunks(PARALLEL_PIECE)
                        .zip(hi.par_chunks(PARALLEL_PIECE))
                        .enumerate();
                    // The failure of the earliest task, hence of the earliest box.
                    let first_failure = match out {
                        None => {
                            ins.find_map_first(|(t, b)| check(t * PARALLEL_PIECE, None, b).err())
                        }
                        Some((out_lo, out_hi)) => out_lo
                            .par_chunks_mut(PARALLEL_PIECE)
                            .zip(out_hi.par_chunks_mut(PARALLEL_PIECE))
                            .zip(ins)
                            .find_map_first(|(o, (t, b))| {
                                check(t * PARALLEL_PIECE, Some(o), b).err()
                            }),
                    };
                    first_failure.map_or(Ok(()), Err)
                };
                result.map_err(|(i, error)| Error::Input {
                    name: format!("box {i}, variable {}", self.program.var_names[k]),
                    error,
                })?;
            }
        }
        Ok(match rounded {
            Some(r) => std::borrow::Cow::Owned(r),
            None => std::borrow::Cow::Borrowed(inputs),
        })
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
        let mut out = vec![0.0; 2 * self.program.outputs.len() * n];
        self.eval_soa_into(inputs, n, &mut out)?;
        Ok(out)
    }

    /// [`Evaluator::eval_soa`] into the caller's `out` (`2 * n_outputs * n` values), for
    /// batches evaluated again and again in the same memory: a fresh output costs the
    /// operating system's page faults on first touch (on the H200 host, 2^28 boxes: 0.55 to
    /// 1.07 s into a fresh output against 0.33 to 0.47 s into a reused one, `docs/bench.md`),
    /// and inputs and outputs in
    /// [`gpu::HostBuffer`]s go to and from the GPU without host copies. On an error `out`
    /// holds no meaningful values.
    pub fn eval_soa_into(&self, inputs: &[f64], n: usize, out: &mut [f64]) -> Result<(), Error> {
        shape::check_soa(
            self.program.n_vars(),
            self.program.outputs.len(),
            n,
            inputs.len(),
            out.len(),
        )?;
        match &self.gpu {
            // f64 kernels take the inputs unchanged: check them while the batch runs (on a
            // direct batch the host's cores are idle; a staged one shares them) and discard
            // the result if a box is invalid (the kernel computes garbage for it, never
            // anything unsafe). f32 kernels need the checked copy, rounded to f32, first.
            Some(kernel) if self.program.precision == Precision::F64 => {
                let (checked, ran) = rayon::join(
                    || self.checked_inputs(inputs, n).map(|_| ()),
                    || kernel.eval_into(inputs, n, out),
                );
                checked?;
                ran?;
            }
            Some(kernel) => kernel.eval_into(&self.checked_inputs(inputs, n)?, n, out)?,
            None => {
                let checked = self.checked_inputs(inputs, n)?;
                cpu::eval::eval_soa_into(&self.program, &checked, n, out)
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn evaluators_of_one_expression_share_its_program_and_agree() {
        let expr = Expression::parse(TEXT).unwrap();
        let n = 3;
        #[rustfmt::skip]
        let inputs = [
            -1.0, 0.5, 2.0, /* x lo */ 1.0, 0.5, 3.0, // x hi
            2.0, -3.0, 0.0, /* y lo */ 2.5, -1.0, 0.0, // y hi
            0.0, 1.0, -5.0, /* z lo */ 0.25, 1.0, 5.0, // z hi
        ];
        for p in [Precision::F64, Precision::F32] {
            let e1 = Evaluator::new(&expr, p, BackendChoice::Cpu).unwrap();
            let e2 = Evaluator::new(&expr.clone(), p, BackendChoice::Cpu).unwrap();
            assert!(std::ptr::eq(e1.program(), e2.program()), "{p:?}");
            assert!(std::ptr::eq(e1.program(), &*expr.program(p).unwrap()));
            let want = cpu::eval::eval_soa(&lower::lower(expr.ir(), p).unwrap(), &inputs, n);
            let got1 = e1.eval_soa(&inputs, n).unwrap();
            let got2 = e2.eval_soa(&inputs, n).unwrap();
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&got1), bits(&want), "{p:?}");
            assert_eq!(bits(&got2), bits(&want), "{p:?}");
        }
    }

    /// Large batches are checked in parallel tasks: the checked bounds are those of a serial
    /// pass, and the error names the first invalid box (first variable, then first box), also
    /// when later tasks fail too.
    #[test]
    fn input_checks_in_parallel_equal_a_serial_pass() {
        let expr = Expression::parse("x - y").unwrap();
        let p = PARALLEL_PIECE;
        for n in [1, 5, p - 1, p, p + 1, 3 * p + 5] {
            let mut inputs = Vec::with_capacity(4 * n);
            for k in 0..2 {
                let lo: Vec<f64> = (0..n)
                    .map(|i| (i as f64 + 0.1) * (k as f64 - 0.7))
                    .collect();
                let hi = lo.iter().enumerate().map(|(i, l)| l + (i % 7) as f64 * 0.3);
                inputs.extend_from_slice(&lo);
                inputs.extend(hi);
            }
            // Some empty boxes (NaN, NaN).
            for i in (0..n).step_by(1001) {
                inputs[i] = f64::NAN;
                inputs[n + i] = f64::NAN;
            }
            for precision in [Precision::F64, Precision::F32] {
                let eval = Evaluator::new(&expr, precision, BackendChoice::Cpu).unwrap();
                let serial: Vec<f64> = (0..2)
                    .flat_map(|k| {
                        let iv = |i: usize| {
                            let (lo, hi) = (inputs[2 * k * n + i], inputs[(2 * k + 1) * n + i]);
                            let iv = if lo.is_nan() {
                                Interval::EMPTY
                            } else {
                                Interval::new(lo, hi).unwrap()
                            };
                            match precision {
                                Precision::F64 => iv,
                                Precision::F32 => iv.to_f32_enclosure(),
                            }
                        };
                        let los: Vec<f64> = (0..n).map(|i| iv(i).lo).collect();
                        let his: Vec<f64> = (0..n).map(|i| iv(i).hi).collect();
                        los.into_iter().chain(his)
                    })
                    .collect();
                let checked = eval.checked_inputs(&inputs, n).unwrap();
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert!(bits(&checked) == bits(&serial), "n = {n}, {precision:?}");
            }
            // Inverted boxes: y at boxes n/2 and n-1, x at box n-1.
            let eval = Evaluator::new(&expr, Precision::F64, BackendChoice::Cpu).unwrap();
            let mut bad = inputs.clone();
            let invert = |v: &mut [f64], k: usize, i: usize| {
                (v[2 * k * n + i], v[(2 * k + 1) * n + i]) = (2.0, 1.0);
            };
            invert(&mut bad, 1, n / 2);
            invert(&mut bad, 1, n - 1);
            let name = |e: Error| match e {
                Error::Input { name, .. } => name,
                other => panic!("not an input error: {other}"),
            };
            let e = eval.checked_inputs(&bad, n).unwrap_err();
            assert_eq!(name(e), format!("box {}, variable y", n / 2), "n = {n}");
            invert(&mut bad, 0, n - 1);
            let e = eval.eval_soa(&bad, n).unwrap_err();
            assert_eq!(name(e), format!("box {}, variable x", n - 1), "n = {n}");
        }
    }

    #[test]
    fn detection_is_answered_the_same_way_every_time() {
        let first = gpu::detect();
        for _ in 0..3 {
            match (&first, gpu::detect()) {
                (Ok(a), Ok(b)) => assert_eq!(*a, b),
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
                (a, b) => panic!("detection changed: {a:?}, then {b:?}"),
            }
        }
        // Without a GPU, Auto falls back to the CPU and says why, every time.
        if let Err(why) = first {
            let expr = Expression::parse("x + 1").unwrap();
            for _ in 0..2 {
                let e = Evaluator::new(&expr, Precision::F64, BackendChoice::Auto).unwrap();
                assert_eq!(e.backend(), Backend::Cpu);
                assert_eq!(e.fallback_reason(), Some(why.to_string().as_str()));
                let gpu = Evaluator::new(&expr, Precision::F64, BackendChoice::Gpu);
                assert!(matches!(gpu, Err(Error::NoGpu(_))));
            }
        }
    }

    /// Every way a batch can have the wrong shape is one error value, never a panic.
    #[test]
    fn batch_shape_errors_are_values() {
        let expr = Expression::parse("x + y").unwrap();
        let eval = Evaluator::new(&expr, Precision::F64, BackendChoice::Cpu).unwrap();
        let one = Interval::new(1.0, 2.0).unwrap();
        assert!(matches!(
            eval.eval_many(&[vec![one]]),
            Err(Error::Shape(shape::ShapeError::Box {
                expected: 2,
                found: 1,
                ..
            }))
        ));
        assert!(matches!(
            eval.eval_soa(&[1.0; 7], 2),
            Err(Error::Shape(shape::ShapeError::Inputs {
                expected: 8,
                got: 7,
                ..
            }))
        ));
        let mut out = [0.0; 3];
        assert!(matches!(
            eval.eval_soa_into(&[1.0; 8], 2, &mut out),
            Err(Error::Shape(shape::ShapeError::Outputs {
                expected: 4,
                got: 3,
                ..
            }))
        ));
    }
}
