//! [`Evaluator`]: an [`Expression`] compiled for one backend (CPU or GPU) and precision, and the
//! batch entry points (one box, many boxes, structure-of-arrays).

use std::sync::{Arc, OnceLock};

use crate::gpu::KernelOptions;
use crate::scalar::Program;
use crate::{
    cpu, gpu, input, shape, Column, DecoratedInterval, Decoration, DecorationError, Error,
    Expression, Interval, Precision,
};

/// A decorated program's output: its interval and the code of its decoration
/// ([`Decoration::at_most`]). NaI where the code is `ill`.
fn decorated_result(interval: Interval, code: f64) -> DecoratedInterval {
    let decoration = Decoration::at_most(code);
    if decoration == Decoration::Ill {
        return DecoratedInterval::NAI;
    }
    DecoratedInterval {
        interval,
        decoration,
    }
}

/// Where expressions are evaluated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// The rigorous CPU evaluator (the `cpu` stage).
    Cpu,
    /// A PTX kernel on an NVIDIA GPU (the `gpu` stage).
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
    /// The CPU evaluator's slot plan of `program`, made on first use (shared with twins).
    cpu_plan: Arc<OnceLock<cpu::eval::Plan>>,
    /// What was asked for.
    choice: BackendChoice,
    /// Whether the program computes decorations, and from what ([`Expression::parse_decorated`]).
    decorated: Option<crate::DecorationInputs>,
    /// The rewritten IR the program was lowered from, shared with the expression (None for a
    /// program made elsewhere).
    graph: Option<Arc<crate::ir::Graph>>,
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
        Evaluator::with_options(expr, precision, choice, &KernelOptions::default())
    }

    /// [`Evaluator::new`] with the GPU engine's options: the devices, the disk and in-process
    /// kernel caches, the chunk size, how batches cross to the device, and the interpreter and
    /// tier-up policies. Each option left `None` takes its environment variable's value
    /// (`IVJIT_DEVICES`, `IVJIT_CHUNK_ELEMENTS`, `IVJIT_HOST_TRANSFER`, `IVJIT_INTERPRETER`,
    /// `IVJIT_TIER_UP`), else the default. The CPU backend has no options.
    ///
    /// ```
    /// use ivjit::{BackendChoice, Evaluator, Expression, KernelOptions, Precision};
    /// let expr = Expression::parse("x*y + 1").unwrap();
    /// let options = KernelOptions { devices: Some(vec![0]), ..KernelOptions::default() };
    /// let eval = Evaluator::with_options(&expr, Precision::F64, BackendChoice::Auto, &options);
    /// assert!(eval.is_ok());
    /// ```
    pub fn with_options(
        expr: &Expression,
        precision: Precision,
        choice: BackendChoice,
        options: &KernelOptions,
    ) -> Result<Evaluator, Error> {
        let compiled = expr.compiled(precision)?;
        let program = compiled.program.clone();
        // Starts the CPU's thread pool (once per process) while the program compiles: every
        // CPU batch and search runs on it, and a process's first search paid for starting its
        // threads among its rounds (16 threads: 0.3-1.8 ms of a 1 ms branch and bound).
        rayon::current_num_threads();
        let kernel = || -> Result<gpu::GpuKernel, Error> {
            let source = compiled.kernel_source()?;
            Ok(gpu::GpuKernel::from_source(&program, source, options)?)
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
            cpu_plan: Default::default(),
            choice,
            decorated: expr.decorations(),
            graph: Some(expr.graph_arc()),
        })
    }

    /// A CPU evaluator of a program made elsewhere (a pruned tape, lowered): its batches are
    /// checked and rounded like every evaluator's.
    pub(crate) fn cpu_of(program: Program) -> Evaluator {
        Evaluator {
            program: Arc::new(program),
            backend: Backend::Cpu,
            gpu: None,
            fallback_reason: None,
            cpu_plan: Default::default(),
            choice: BackendChoice::Cpu,
            decorated: None,
            graph: None,
        }
    }

    /// The same program on the CPU evaluator (a search finishes there what the device could
    /// not).
    pub(crate) fn cpu_twin(&self) -> Evaluator {
        Evaluator {
            program: self.program.clone(),
            backend: Backend::Cpu,
            gpu: None,
            fallback_reason: None,
            cpu_plan: self.cpu_plan.clone(),
            choice: BackendChoice::Cpu,
            decorated: self.decorated,
            graph: self.graph.clone(),
        }
    }

    /// The rewritten IR the program was lowered from (what a search builds its tapes from),
    /// if the evaluator was made from an [`Expression`].
    pub(crate) fn graph(&self) -> Option<&crate::ir::Graph> {
        self.graph.as_deref()
    }

    /// The backend that was selected.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The floating-point precision of the bounds the kernel computes with.
    pub fn precision(&self) -> Precision {
        self.program.precision
    }

    /// The choice the evaluator was made with. A GPU evaluator made with
    /// [`BackendChoice::Auto`] lets a search run its small rounds on the CPU
    /// ([`crate::search::minimize`]); one made with `Gpu` runs every round on the GPU.
    pub fn choice(&self) -> BackendChoice {
        self.choice
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

    /// Evaluates decorated boxes (one decorated interval per variable, in
    /// [`Expression::vars`] order) with an evaluator of a decorated expression
    /// ([`Expression::parse_decorated`]); returns one row of decorated outputs per box. NaI
    /// arguments give NaI results; a box's decoration is lowered to what its interval may carry
    /// (IEEE 1788's `newDec`: an unbounded box is at most `dac`).
    ///
    /// ```
    /// use ivjit::{BackendChoice, DecoratedInterval, Decoration, Evaluator, Expression, Precision};
    /// let expr = Expression::parse_decorated("floor(x)").unwrap();
    /// let eval = Evaluator::new(&expr, Precision::F64, BackendChoice::Cpu).unwrap();
    /// let x = DecoratedInterval::parse("[1.5, 2.5]_com").unwrap();
    /// let out = eval.eval_decorated(&[vec![x]]).unwrap();
    /// assert_eq!(out[0][0].to_string(), "[1, 2]_def"); // defined, but it jumps at 2
    /// ```
    pub fn eval_decorated(
        &self,
        boxes: &[Vec<DecoratedInterval>],
    ) -> Result<Vec<Vec<DecoratedInterval>>, Error> {
        let Some(inputs) = self.decorated else {
            return Err(DecorationError::NotDecorated.into());
        };
        let given = inputs == crate::DecorationInputs::Given;
        let nv = if given {
            self.program.n_vars() / 2
        } else {
            self.program.n_vars()
        };
        if !given {
            if let Some(d) = boxes
                .iter()
                .flatten()
                .find(|d| d.decoration != Decoration::of(d.interval))
            {
                return Err(DecorationError::FromBounds {
                    given: d.to_string(),
                }
                .into());
            }
        }
        let flat: Vec<Vec<Interval>> = boxes
            .iter()
            .map(|b| {
                let decs = b.iter().filter(|_| given).map(|d| {
                    let c = f64::from(d.decoration.code());
                    Interval { lo: c, hi: c }
                });
                b.iter().map(|d| d.interval).chain(decs).collect()
            })
            .collect();
        if let Some(b) = boxes.iter().find(|b| b.len() != nv) {
            return Err(shape::ShapeError::Box {
                expected: nv,
                found: b.len(),
                vars: self.program.var_names[..nv].join(", "),
            }
            .into());
        }
        let rows = self.eval_many(&flat)?;
        let no = self.program.outputs.len() / 2;
        Ok(rows
            .into_iter()
            .map(|row| {
                (0..no)
                    .map(|k| decorated_result(row[k], row[no + k].lo))
                    .collect()
            })
            .collect())
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
        if n == 0 {
            return Ok(());
        }
        let inputs: Vec<Column> = inputs.chunks(n).map(Column::F64).collect();
        let mut outs: Vec<&mut [f64]> = out.chunks_mut(n).collect();
        self.eval_columns(&inputs, &mut outs)
    }

    /// Evaluates a batch given array by array, read and written where the arrays are (for
    /// arrays that belong to someone else, NumPy's for instance): `inputs[2k]` and
    /// `inputs[2k + 1]` hold the lo and hi bounds of variable k, `outputs[2j]` and
    /// `outputs[2j + 1]` receive those of output j, all of one length n. The bounds are checked
    /// and rounded as for [`Evaluator::eval_soa`]; f64 columns are not copied (an f64 program
    /// reads them in place; on the GPU, staging copies them chunk by chunk into pinned memory,
    /// or not at all when they are page-locked).
    ///
    /// ```
    /// use ivjit::{BackendChoice, Column, Evaluator, Expression, Precision};
    /// let expr = Expression::parse("x * y").unwrap();
    /// let eval = Evaluator::new(&expr, Precision::F64, BackendChoice::Cpu).unwrap();
    /// let (x_lo, x_hi) = ([1.0, -2.0], [2.0, 3.0]);
    /// let y: [f32; 2] = [0.5, 4.0]; // a point interval: lo = hi, and f32 bounds are fine
    /// let (mut lo, mut hi) = ([0.0; 2], [0.0; 2]);
    /// let inputs = [Column::F64(&x_lo), Column::F64(&x_hi), Column::F32(&y), Column::F32(&y)];
    /// eval.eval_columns(&inputs, &mut [&mut lo, &mut hi]).unwrap();
    /// assert_eq!((lo, hi), ([0.5, -8.0], [1.0, 12.0]));
    /// ```
    pub fn eval_columns(
        &self,
        inputs: &[Column<'_>],
        outputs: &mut [&mut [f64]],
    ) -> Result<(), Error> {
        let in_lens: Vec<usize> = inputs.iter().map(Column::len).collect();
        let out_lens: Vec<usize> = outputs.iter().map(|a| a.len()).collect();
        let n = shape::check_columns(
            self.program.n_vars(),
            self.program.outputs.len(),
            &in_lens,
            &out_lens,
        )?;
        if n == 0 {
            return Ok(());
        }
        let f64_columns: Option<Vec<&[f64]>> = inputs
            .iter()
            .map(|c| match c {
                Column::F64(s) => Some(*s),
                Column::F32(_) => None,
            })
            .collect();
        match (&self.gpu, f64_columns) {
            // f64 kernels take f64 inputs unchanged: check them while the batch runs (on a
            // direct batch the host's cores are idle; a staged one shares them) and discard
            // the result if a box is invalid (the kernel computes garbage for it, never
            // anything unsafe). Other batches need the checked copy first (rounded to f32 for
            // f32 kernels).
            (Some(kernel), Some(columns)) if self.program.precision == Precision::F64 => {
                let (checked, ran) = rayon::join(
                    || input::checked(&self.program, inputs, n, false).map(|_| ()),
                    || kernel.eval_columns(&columns, outputs),
                );
                checked?;
                ran?;
            }
            (gpu, _) => {
                // The CPU evaluator rounds an f32 program's inputs as it reads them.
                let checked = input::checked(&self.program, inputs, n, gpu.is_some())?;
                let columns: Vec<&[f64]> = checked.iter().map(|c| &**c).collect();
                match gpu {
                    Some(kernel) => kernel.eval_columns(&columns, outputs)?,
                    None => {
                        let plan = self
                            .cpu_plan
                            .get_or_init(|| cpu::eval::Plan::new(&self.program));
                        cpu::eval::eval_columns_planned(&self.program, plan, &columns, n, outputs)
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower;

    const TEXT: &str = "let s = x*y - 3.25*z; s^3 + sqrt(abs(s)), exp(x) / (y + 4)";

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

    /// Columns in separate allocations, f64 and f32 mixed, give eval_soa's bits; a batch larger
    /// than one parallel task (several tasks, a partial last chunk) included.
    #[test]
    fn columns_equal_one_block() {
        let expr = Expression::parse(TEXT).unwrap();
        for n in [1, 3, 64 * cpu::LANES + 37] {
            let mut inputs = Vec::with_capacity(6 * n);
            for k in 0..3 {
                let lo: Vec<f64> = (0..n)
                    .map(|i| ((i * 37 + k * 11) % 101) as f64 / 8.0 - 6.0)
                    .collect();
                let hi = lo
                    .iter()
                    .enumerate()
                    .map(|(i, l)| l + (i % 5) as f64 * 0.75);
                inputs.extend_from_slice(&lo);
                inputs.extend(hi);
            }
            for p in [Precision::F64, Precision::F32] {
                let eval = Evaluator::new(&expr, p, BackendChoice::Cpu).unwrap();
                let want = eval.eval_soa(&inputs, n).unwrap();
                // Variable y as f32 columns (its bounds are multiples of 1/8: exact in f32).
                let y: Vec<Vec<f32>> = inputs[2 * n..4 * n]
                    .chunks(n)
                    .map(|c| c.iter().map(|&v| v as f32).collect())
                    .collect();
                let separate: Vec<Vec<f64>> = inputs.chunks(n).map(<[f64]>::to_vec).collect();
                let columns = [
                    Column::F64(&separate[0]),
                    Column::F64(&separate[1]),
                    Column::F32(&y[0]),
                    Column::F32(&y[1]),
                    Column::F64(&separate[4]),
                    Column::F64(&separate[5]),
                ];
                let mut out = vec![vec![f64::NAN; n]; 4];
                let mut outs: Vec<&mut [f64]> = out.iter_mut().map(Vec::as_mut_slice).collect();
                eval.eval_columns(&columns, &mut outs).unwrap();
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&out.concat()), bits(&want), "n = {n}, {p:?}");
            }
        }
        // Wrong counts and lengths are shape errors.
        let eval = Evaluator::new(&expr, Precision::F64, BackendChoice::Cpu).unwrap();
        let a = [1.0, 2.0];
        let short = [1.0];
        let mut o = [[0.0; 2]; 4];
        let mut outs: Vec<&mut [f64]> = o.iter_mut().map(|v| &mut v[..]).collect();
        let five = [Column::F64(&a); 5];
        assert!(matches!(
            eval.eval_columns(&five, &mut outs),
            Err(Error::Shape(shape::ShapeError::Columns {
                expected: 6,
                got: 5,
                ..
            }))
        ));
        let mut six = [Column::F64(&a); 6];
        six[3] = Column::F64(&short);
        assert!(matches!(
            eval.eval_columns(&six, &mut outs),
            Err(Error::Shape(shape::ShapeError::ColumnLength {
                index: 3,
                len: 1,
                n: 2,
                ..
            }))
        ));
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
