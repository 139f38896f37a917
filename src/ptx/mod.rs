//! PTX backend: turns a scalar [`Program`] into the text of a PTX module with one kernel (or
//! one device function, [`try_emit_function_named`], for the searches that call the expression from
//! their own kernels).
//!
//! Why one file of about 600 lines: the emitter is one walk over the instructions; the kernel
//! and the device-function shapes differ only in the prologue, the loads and the stores, and
//! splitting the instruction table from the walk would put each instruction's text far from the
//! code that chooses it.
//!
//! # Kernel ABI
//!
//! ```text
//! .visible .entry ivjit_kernel(.param .u64 n, .param .u64 inputs,
//!                              .param .u64 outputs, .param .u64 flags)
//! ```
//!
//! - `n`: number of elements (independent evaluations).
//! - `inputs`: device pointer to `2 * n_vars` arrays of `n` values of the program's precision
//!   (`f64` or `f32`), one after the other (structure of arrays). Array `2 * var + 0` holds the
//!   lo bounds of variable `var`, array `2 * var + 1` its hi bounds; element `i` of array `k` is at
//!   byte offset `(k * n + i) * size`. May be anything (e.g. 0) when the program has no variables.
//! - `outputs`: device pointer to `2 * n_outputs` arrays of `n` values laid out the same way:
//!   array `2 * j + 0` receives the lo bound of output `j`, array `2 * j + 1` its hi bound. A
//!   decorated program's decorations are *code outputs* ([`Program::code_outputs`], the last
//!   outputs): one array each, after the pairs ([`Program::output_arrays`]), since lo = hi.
//! - `flags`: reserved (the decorations went into `outputs` as code outputs, which met their
//!   cost target without a second element type). The kernel never reads or writes it; pass 0.
//!
//! The kernel runs a grid-stride loop over `i < n`, so any launch configuration with a 1-D grid
//! and 1-D blocks covers all elements.
//!
//! # Code shape
//!
//! Every instruction is emitted inline (no `.func`, no calls), except the point functions (see
//! below). The register of IR value `v` is `%f{v}` for floats and `%p{v}` for booleans, so the
//! text changes only when the code generator does. Float registers are declared with the
//! program's type (`.f64` or `.f32`).
//!
//! # Point functions
//!
//! `Inst::Point1(f, a, r)` and `Inst::Point2(f, a, b, r)` call the runtime function
//! `ivjit_<f>_<f64|f32>` (see [`runtime_symbol`]; its CUDA source is generated from the function's
//! row, [`crate::point::cuda_runtime_source`], compiled by NVRTC and linked with the
//! kernel by `crate::gpu`). A module that calls any declares them, in [`point_functions`] order,
//! as `.extern .func` before the kernel: such a module is relocatable (ptxas needs `-c`) and
//! must be linked with the runtime's PTX. Programs without point calls emit exactly the text
//! they did before point functions existed.
//!
//! The call result of instruction `i` goes to `%c{i}`; a later `Point` with the same function
//! and operands (typically the other rounding direction) reuses it, so `Down` and `Up` of the
//! same argument cost one call. The result y is then padded inline: with `Down`, +inf becomes
//! MAX (an overflowed result may stand for a finite value; skipped for functions of bounded
//! range, sin or atan, whose library never returns an infinity) and the value moves
//! [`pad_steps`] floats down with `sub.rm x, x, <smallest subnormal>`; with `Up`,
//! -inf becomes -MAX and the value moves up with `add.rp`. (The steps keep -inf / +inf fixed
//! in their own direction and NaN as NaN; the +inf test uses `%p{i}`, which a float value never
//! uses otherwise.) `Nearest` is the library's result unpadded.
//!
//! Rounding: `Round::Down` is `.rm`, `Round::Up` is `.rp`, `Round::Nearest` is `.rn`; the modifier
//! is always written on add/sub/mul/fma/div/sqrt (an add or mul without it may be contracted into
//! an fma by ptxas), and `.ftz` is never used on a result, so subnormals are kept.
//! `div.{rn,rm,rp}` and `sqrt.{rn,rm,rp}` are the IEEE correctly rounded forms (not
//! `div.full`/`.approx`). An f32 division rounded down or up is emitted inline where its
//! operands allow, its candidate quotient checked exactly against both neighbours before use,
//! `div.rm.f32` / `div.rp.f32` otherwise (`Emitter::div_f32_directed`): the same bits, about
//! half the instructions. f64 square roots rounded down or up likewise
//! (`Emitter::sqrt_f64_directed`). Both only in programs of at most [`INLINE_MAX_INSTS`]
//! instructions.
//!
//! Min/Max: plain `min`/`max`. The PTX ISA (section "Floating Point Instructions: min / max")
//! specifies that a NaN operand yields the other operand (minNum/maxNum) and that "if values of
//! both inputs are 0.0, then +0.0 > -0.0", which is exactly the IR semantics, so no extra sequence
//! is needed. (When both are NaN the result is the canonical NaN; the IR gives no NaN payload
//! guarantee, so comparisons treat all NaNs alike.) `tests/gpu/gpu_basic.rs` checks the signed-zero
//! and NaN cases; they passed on an H200 (driver 580.159.04) in both precisions.

use std::collections::HashMap;
use std::fmt::{self, Write as _};

use crate::scalar::{Bound, Cmp, Inst, PointFn, Precision, Program, Round, RoundInt, Value};

pub use crate::point::{cuda_max_ulps, runtime_symbol};

/// Name of the single kernel in every emitted module.
pub const KERNEL_NAME: &str = "ivjit_kernel";

/// PTX ISA version written in the header (the driver accepts at most 9.0; sm_90 needs 7.8).
pub(crate) const PTX_VERSION: &str = "8.0";

/// Target architecture written in the header.
pub(crate) const PTX_TARGET: &str = "sm_90";

/// Programs of at most this many instructions get the inline directed f32 division and f64
/// square root (`Emitter::div_f32_directed`, `Emitter::sqrt_f64_directed`); longer ones call
/// the subroutines, whose code all call sites share. Inline, Prospero's f64 stages (500
/// instructions each) ran 7 % faster, but its single kernel (31,398 instructions, spilling)
/// 24-34 % slower and took 22.7 s to compile instead of 9.5 s (H200, 2026-11-25).
/// A speed threshold only: both paths give the same bits (held by
/// `long_programs_keep_the_division_and_root_subroutines`; the class matrix runs each operation
/// alone, inline, and in a program of 12,992 instructions, with the subroutines).
pub(crate) const INLINE_MAX_INSTS: usize = 4000;

/// Emits the PTX module for `program` (see the module documentation for the kernel ABI).
///
/// # Panics
/// If the program is ill-formed ([`Program::verify`]); that is a bug in whatever built it (the
/// lowering verifies every program it returns).
pub fn emit(program: &Program) -> String {
    try_emit(program).unwrap_or_else(|e| panic!("ptx::emit: ill-formed scalar program: {e}"))
}

/// [`emit`], with an ill-formed program reported as a value: the program is verified once, here.
pub(crate) fn try_emit(program: &Program) -> Result<String, crate::scalar::VerifyError> {
    program.verify()?;
    let mut e = Emitter::new(program, Shape::Kernel);
    e.module();
    Ok(e.out)
}

/// Name of the kernel [`try_emit_arrays_kernel`] writes.
pub(crate) const ARRAYS_KERNEL_NAME: &str = "ivjit_kernel_arrays";

/// The program as a kernel over arrays that live anywhere in device memory (the arrays of other
/// libraries: CuPy, PyTorch), checking its inputs in the same pass:
///
/// ```text
/// .visible .entry ivjit_kernel_arrays(.param .u64 n, .param .u64 table, .param .u64 status)
/// ```
///
/// - `table`: device address of `2 * n_vars + n_output_arrays` device addresses: the lo and hi
///   arrays of each variable, then those of each output ([`Program::output_arrays`]: one for
///   a code output), each of `n` elements.
/// - `status`: device address of a `u32` the kernel sets to 1 when some input pair is not an
///   interval bound (lo <= hi, lo < +inf, hi > -inf, or both NaN: empty); the caller zeroes it
///   first, and discards the outputs when it is set.
///
/// The body is the batch kernel's, instruction for instruction, so both give the same bits;
/// every input array is loaded (and checked), also those the expression does not read.
pub fn try_emit_arrays_kernel(program: &Program) -> Result<String, crate::scalar::VerifyError> {
    program.verify()?;
    let mut e = Emitter::new(program, Shape::Arrays);
    e.module();
    Ok(e.out)
}

/// [`try_emit_arrays_kernel`] without the input checks, for the stages of a program cut by
/// [`crate::scalar::split`] (whose inputs are values handed over, not interval bounds): only
/// the arrays the stage reads are loaded, and `status` is not touched.
pub fn try_emit_stage_kernel(program: &Program) -> Result<String, crate::scalar::VerifyError> {
    program.verify()?;
    let mut e = Emitter::new(program, Shape::Arrays);
    e.check = false;
    e.module();
    Ok(e.out)
}

/// The usual name of the device function [`try_emit_function_named`] writes.
pub(crate) const FUNCTION_NAME: &str = "ivjit_eval";

/// The program as a device function named `name` (usually [`FUNCTION_NAME`]; the ray tracer
/// links a second expression, its shading, under another) for kernels that evaluate it inside
/// their own loops (the device-resident searches), linked with them:
///
/// ```text
/// .visible .func ivjit_eval(.param .b64 inputs, .param .b64 outputs)
/// ```
///
/// `inputs` and `outputs` are generic pointers (local, shared or global memory) to one box:
/// `2 * n_vars` values (lo, hi of variable 0, then of variable 1, ...) and
/// [`Program::n_output_arrays`] values laid out alike (a code output has one). The body is the kernel's, instruction for instruction; only the
/// loads and stores differ (generic addressing, no loop), so both give the same bits.
pub(crate) fn try_emit_function_named(
    program: &Program,
    name: &str,
) -> Result<String, crate::scalar::VerifyError> {
    program.verify()?;
    let mut e = Emitter::new(program, Shape::Function);
    e.function_name = name.to_string();
    e.module();
    Ok(e.out)
}

/// What the module holds: the batch kernel ([`KERNEL_NAME`]), the kernel over arrays given by
/// a table of addresses ([`ARRAYS_KERNEL_NAME`]) or a device function ([`FUNCTION_NAME`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    Kernel,
    Arrays,
    Function,
}

/// Number of one-float steps outward the emitter applies to the library's result:
/// [`cuda_max_ulps`] + 1 (a result within e ulps of the correctly rounded value, which is within
/// half an ulp of the true one, encloses it after e + 1 steps; see [`crate::point`]).
pub fn pad_steps(f: PointFn, p: Precision) -> u32 {
    cuda_max_ulps(f, p) + 1
}

/// The point functions `program` calls, sorted, without repeats (all in the program's
/// precision). Empty when the kernel needs no runtime.
pub fn point_functions(program: &Program) -> Vec<PointFn> {
    let mut fns: Vec<PointFn> = program
        .insts
        .iter()
        .filter_map(|i| match *i {
            Inst::Point1(f, ..) => Some(PointFn::Unary(f)),
            Inst::Point2(f, ..) => Some(PointFn::Binary(f)),
            _ => None,
        })
        .collect();
    fns.sort();
    fns.dedup();
    fns
}

/// Index of the input array holding `bound` of variable `var`.
fn input_array(var: u32, bound: Bound) -> usize {
    2 * var as usize + usize::from(bound == Bound::Hi)
}

fn round_modifier(r: Round) -> &'static str {
    match r {
        Round::Down => "rm",
        Round::Up => "rp",
        Round::Nearest => "rn",
    }
}

struct Emitter<'a> {
    program: &'a Program,
    shape: Shape,
    /// The symbol of the device function ([`Shape::Function`]).
    function_name: String,
    /// [`Shape::Arrays`]: whether every input pair is checked (and so loaded).
    check: bool,
    /// `f64` or `f32`.
    ty: &'static str,
    /// log2 of the element size in bytes.
    elem_shift: u32,
    out: String,
    /// Point calls emitted so far: (function, operands) -> index of the `%c` register holding
    /// the library's result.
    calls: HashMap<(PointFn, Value, Value), usize>,
}

impl<'a> Emitter<'a> {
    fn new(program: &'a Program, shape: Shape) -> Self {
        let (ty, elem_shift) = match program.precision {
            Precision::F64 => ("f64", 3),
            Precision::F32 => ("f32", 2),
        };
        Emitter {
            program,
            shape,
            function_name: FUNCTION_NAME.to_string(),
            check: true,
            ty,
            elem_shift,
            out: String::new(),
            calls: HashMap::new(),
        }
    }

    /// One line of the kernel body, indented by a tab.
    fn line(&mut self, text: impl AsRef<str>) {
        self.out.push('\t');
        self.out.push_str(text.as_ref());
        self.out.push('\n');
    }

    fn raw(&mut self, text: impl AsRef<str>) {
        self.out.push_str(text.as_ref());
        self.out.push('\n');
    }

    /// Input arrays the program reads, in increasing order, without repeats.
    fn used_inputs(&self) -> Vec<usize> {
        if self.checks() {
            // Every array is read, to check every pair.
            return (0..2 * self.program.n_vars()).collect();
        }
        let mut used = vec![false; 2 * self.program.n_vars()];
        for inst in &self.program.insts {
            if let Inst::Input { var, bound } = *inst {
                used[input_array(var, bound)] = true;
            }
        }
        (0..used.len()).filter(|&k| used[k]).collect()
    }

    fn module(&mut self) {
        let p = self.program;
        self.raw("//");
        self.raw("// Generated by ivjit: do not edit.");
        self.raw(format!(
            "// precision {}, {} variables, {} outputs, {} instructions",
            p.precision,
            p.n_vars(),
            p.outputs.len(),
            p.insts.len()
        ));
        if self.shape == Shape::Arrays {
            self.raw(format!(
                "// ABI: n elements; table = addresses of {} input and {} output arrays of n {}",
                2 * p.n_vars(),
                p.n_output_arrays(),
                self.ty
            ));
            self.raw("// (lo, hi of each variable, then of each output); status = 1 if an input pair is invalid.");
            if p.code_outputs > 0 {
                self.raw(format!(
                    "// The last {} outputs are codes: one array each, after the pairs.",
                    p.code_outputs
                ));
            }
        } else {
            self.raw(format!(
                "// ABI: n elements; inputs = {} arrays of n {}, array 2*var+0 = lo, 2*var+1 = hi;",
                2 * p.n_vars(),
                self.ty
            ));
            self.raw(format!(
                "// outputs = {} arrays of n {}, array 2*out+0 = lo, 2*out+1 = hi; flags reserved (0).",
                p.n_output_arrays(),
                self.ty
            ));
            if p.code_outputs > 0 {
                self.raw(format!(
                    "// The last {} outputs are codes: one array each, after the pairs.",
                    p.code_outputs
                ));
            }
        }
        self.raw("//");
        self.raw("");
        self.raw(format!(".version {PTX_VERSION}"));
        self.raw(format!(".target {PTX_TARGET}"));
        self.raw(".address_size 64");
        self.raw("");
        let fns = point_functions(p);
        if !fns.is_empty() {
            self.raw(
                "// point functions of the ivjit runtime (generated from src/point.rs), linked in",
            );
            for f in fns {
                let b = self.param_type();
                let args = if f.arity() == 1 {
                    format!(".param .{b} x")
                } else {
                    format!(".param .{b} a, .param .{b} b")
                };
                self.raw(format!(
                    ".extern .func (.param .{b} ret) {}({args});",
                    runtime_symbol(f, p.precision)
                ));
            }
            self.raw("");
        }
        if self.shape == Shape::Function {
            self.function();
            return;
        }
        if self.shape == Shape::Arrays {
            self.raw(format!(".visible .entry {ARRAYS_KERNEL_NAME}("));
            self.raw("\t.param .u64 n,");
            self.raw("\t.param .u64 table,");
            self.raw("\t.param .u64 status");
        } else {
            self.raw(format!(".visible .entry {KERNEL_NAME}("));
            self.raw("\t.param .u64 n,");
            self.raw("\t.param .u64 inputs,");
            self.raw("\t.param .u64 outputs,");
            self.raw("\t.param .u64 flags");
        }
        self.raw(")");
        self.raw("{");
        self.declarations();
        self.prologue();
        if self.checks() && !self.pipelined() {
            // Every input of the element first (to check them), then the body.
            let t = self.ty;
            self.raw("$L_loop:");
            for k in self.used_inputs() {
                self.line(format!("ld.global.nc.{t} %pf{k}, [%in{k}];"));
            }
            self.check_inputs();
            for (i, inst) in p.insts.iter().enumerate() {
                match *inst {
                    Inst::Input { var, bound } => {
                        self.line(format!("mov.{t} %f{i}, %pf{};", input_array(var, bound)))
                    }
                    _ => self.inst(i, inst),
                }
            }
            self.stores();
            self.epilogue();
            self.raw("}");
            return;
        }
        if !self.pipelined() {
            self.raw("$L_loop:");
            for (i, inst) in p.insts.iter().enumerate() {
                self.inst(i, inst);
            }
            self.stores();
            self.epilogue();
            self.raw("}");
            return;
        }
        // Software pipelining: the inputs of element i are loaded before the loop (or by the
        // previous iteration), and each iteration first issues the loads of element i + stride,
        // then computes element i. A memory-bound kernel thus keeps one element's loads in
        // flight while it computes, instead of waiting for them at the top of every iteration
        // (measured on the H200: tangle f64 6.25e10 -> 6.49e10 boxes/s, rosenbrock10 f32
        // 2.77e10 -> 4.63e10; docs/gpu-runs.md).
        let used = self.used_inputs();
        let t = self.ty;
        for &k in &used {
            self.line(format!("ld.global.nc.{t} %pf{k}, [%in{k}];"));
        }
        self.raw("$L_loop:");
        for (i, inst) in p.insts.iter().enumerate() {
            if let Inst::Input { var, bound } = *inst {
                self.line(format!("mov.{t} %f{i}, %pf{};", input_array(var, bound)));
            }
        }
        if self.checks() {
            // Before the prefetch overwrites the current element's inputs.
            self.check_inputs();
        }
        for &k in &used {
            self.line(format!("add.u64 %in{k}, %in{k}, %stepbytes;"));
        }
        self.line("add.u64 %inext, %i, %stride;");
        self.line("setp.lt.u64 %more, %inext, %n;");
        for &k in &used {
            self.line(format!("@%more ld.global.nc.{t} %pf{k}, [%in{k}];"));
        }
        for (i, inst) in p.insts.iter().enumerate() {
            if !matches!(inst, Inst::Input { .. }) {
                self.inst(i, inst);
            }
        }
        self.stores();
        self.epilogue();
        self.raw("}");
    }

    /// Whether this is a kernel over device arrays that checks its inputs.
    fn checks(&self) -> bool {
        self.shape == Shape::Arrays && self.check
    }

    /// [`Shape::Arrays`]: `%bad` |= some pair of the element in `%pf` is not an interval bound
    /// (valid: lo <= hi, lo < +inf and hi > -inf; or lo and hi both NaN).
    fn check_inputs(&mut self) {
        let t = self.ty;
        let (inf, neg_inf) = match self.program.precision {
            Precision::F64 => ("0d7FF0000000000000", "0dFFF0000000000000"),
            Precision::F32 => ("0f7F800000", "0fFF800000"),
        };
        for v in 0..self.program.n_vars() {
            let (lo, hi) = (2 * v, 2 * v + 1);
            self.line(format!("setp.le.{t} %ck0, %pf{lo}, %pf{hi};"));
            self.line(format!("setp.lt.and.{t} %ck0, %pf{lo}, {inf}, %ck0;"));
            self.line(format!("setp.gt.and.{t} %ck0, %pf{hi}, {neg_inf}, %ck0;"));
            self.line(format!("setp.nan.{t} %ck1, %pf{lo}, %pf{lo};"));
            self.line(format!("setp.nan.and.{t} %ck1, %pf{hi}, %pf{hi}, %ck1;"));
            self.line("or.pred %ck0, %ck0, %ck1;");
            self.line("not.pred %ck0, %ck0;");
            self.line("or.pred %bad, %bad, %ck0;");
        }
    }

    /// Whether the kernel's loop loads one element ahead. Not where the body makes calls (the
    /// point functions; divisions and square roots with a rounding mode, subroutines in SASS):
    /// the prefetched values must then live across the calls, and the extra registers cost
    /// more than the overlap gains (measured: exp f32 -24%, div f32 -24%, trig f64 -30%).
    /// At the ragged ends the preload is behind `%done` and the prefetch behind `%more`
    /// (i + stride < n), so no element outside [0, n) is read or written: held by
    /// `gpu_basic::layout_sizes_and_grid_stride` (n = 0, 1, 300, one grid + 77).
    fn pipelined(&self) -> bool {
        // A stage of a cut program reads hundreds of handed-over values: holding the next
        // element's as well would double the registers they take.
        if self.shape == Shape::Arrays && !self.check {
            return false;
        }
        !self.program.insts.iter().any(|i| {
            matches!(
                i,
                Inst::Point1(..) | Inst::Point2(..) | Inst::Div(..) | Inst::Sqrt(..)
            )
        })
    }

    /// The body as [`FUNCTION_NAME`]: pointers to one box in, one result out.
    fn function(&mut self) {
        let p = self.program;
        self.raw(format!(
            ".visible .func {}(.param .b64 inputs, .param .b64 outputs)",
            self.function_name
        ));
        self.raw("{");
        self.declarations();
        let size = 1u64 << self.elem_shift;
        self.line("ld.param.u64 %pin, [inputs];");
        self.line("ld.param.u64 %pout, [outputs];");
        for k in self.used_inputs() {
            self.line(format!("add.u64 %in{k}, %pin, {};", k as u64 * size));
        }
        for k in 0..p.n_output_arrays() {
            self.line(format!("add.u64 %out{k}, %pout, {};", k as u64 * size));
        }
        for (i, inst) in p.insts.iter().enumerate() {
            self.inst(i, inst);
        }
        self.stores();
        self.line("ret;");
        self.raw("}");
    }

    /// `global` (the kernel's arrays) or nothing (generic addressing in a function).
    fn space(&self) -> &'static str {
        match self.shape {
            Shape::Kernel | Shape::Arrays => ".global",
            Shape::Function => "",
        }
    }

    fn declarations(&mut self) {
        let n_insts = self.program.insts.len();
        let n_in = 2 * self.program.n_vars();
        let n_out = self.program.n_output_arrays();
        // Value registers are indexed by IR value number; booleans and floats share the index
        // space, so each declaration covers every index (unused ones cost nothing).
        if n_insts > 0 {
            let ty = self.ty;
            self.line(format!(".reg .{ty} %f<{n_insts}>;"));
            self.line(format!(".reg .pred %p<{n_insts}>;"));
            if self.program.has_point_calls() {
                self.line(format!(".reg .{ty} %c<{n_insts}>;"));
            }
        }
        // Loop control.
        self.line(".reg .pred %done;");
        self.line(".reg .b32 %r<4>;");
        self.line(".reg .b64 %n, %i, %stride, %arraybytes, %stepbytes, %offset, %pin, %pout;");
        // Running pointers: one per input array read and per output array; in the kernel, the
        // prefetched inputs of the next element and the loop's look-ahead.
        if self.shape == Shape::Arrays {
            self.line(".reg .b64 %ptable, %pstatus;");
            self.line(".reg .pred %bad, %ck<2>;");
        }
        if n_in > 0 {
            self.line(format!(".reg .b64 %in<{n_in}>;"));
            if self.checks() || (self.shape != Shape::Function && self.pipelined()) {
                let ty = self.ty;
                self.line(format!(".reg .{ty} %pf<{n_in}>;"));
            }
        }
        if self.shape != Shape::Function && self.pipelined() {
            self.line(".reg .pred %more;");
            self.line(".reg .b64 %inext;");
        }
        if n_out > 0 {
            self.line(format!(".reg .b64 %out<{n_out}>;"));
        }
        self.raw("");
    }

    fn prologue(&mut self) {
        let shift = self.elem_shift;
        self.line("ld.param.u64 %n, [n];");
        if self.shape == Shape::Arrays {
            self.line("ld.param.u64 %ptable, [table];");
            self.line("ld.param.u64 %pstatus, [status];");
            self.line("cvta.to.global.u64 %ptable, %ptable;");
            self.line("cvta.to.global.u64 %pstatus, %pstatus;");
            self.line("setp.ne.u64 %bad, %n, %n; // false");
        } else {
            self.line("ld.param.u64 %pin, [inputs];");
            self.line("ld.param.u64 %pout, [outputs];");
            self.line("// flags: reserved for decorations, not read yet.");
            self.line("cvta.to.global.u64 %pin, %pin;");
            self.line("cvta.to.global.u64 %pout, %pout;");
        }
        self.line("// i = ctaid.x * ntid.x + tid.x; stride = nctaid.x * ntid.x");
        self.line("mov.u32 %r0, %ctaid.x;");
        self.line("mov.u32 %r1, %ntid.x;");
        self.line("mov.u32 %r2, %tid.x;");
        self.line("mov.u32 %r3, %nctaid.x;");
        self.line("cvt.u64.u32 %i, %r2;");
        self.line("mad.wide.u32 %i, %r0, %r1, %i;");
        self.line("mul.wide.u32 %stride, %r3, %r1;");
        self.line("setp.ge.u64 %done, %i, %n;");
        self.line("@%done bra $L_exit;");
        self.line(format!("shl.b64 %arraybytes, %n, {shift};"));
        self.line(format!("shl.b64 %stepbytes, %stride, {shift};"));
        self.line(format!("shl.b64 %offset, %i, {shift};"));
        self.line("// running pointers to element i of each array");
        if self.shape == Shape::Arrays {
            let n_in = 2 * self.program.n_vars();
            for k in self.used_inputs() {
                self.line(format!("ld.global.nc.u64 %in{k}, [%ptable+{}];", 8 * k));
                self.line(format!("cvta.to.global.u64 %in{k}, %in{k};"));
                self.line(format!("add.u64 %in{k}, %in{k}, %offset;"));
            }
            for k in 0..self.program.n_output_arrays() {
                self.line(format!(
                    "ld.global.nc.u64 %out{k}, [%ptable+{}];",
                    8 * (n_in + k)
                ));
                self.line(format!("cvta.to.global.u64 %out{k}, %out{k};"));
                self.line(format!("add.u64 %out{k}, %out{k}, %offset;"));
            }
            return;
        }
        for k in self.used_inputs() {
            self.line(format!("mad.lo.u64 %in{k}, %arraybytes, {k}, %pin;"));
            self.line(format!("add.u64 %in{k}, %in{k}, %offset;"));
        }
        for k in 0..self.program.n_output_arrays() {
            self.line(format!("mad.lo.u64 %out{k}, %arraybytes, {k}, %pout;"));
            self.line(format!("add.u64 %out{k}, %out{k}, %offset;"));
        }
    }

    fn stores(&mut self) {
        let ty = self.ty;
        let space = self.space();
        for (k, v) in self.program.output_arrays().into_iter().enumerate() {
            self.line(format!("st{space}.{ty} [%out{k}], %f{};", v.index()));
        }
    }

    fn epilogue(&mut self) {
        let pipelined = self.pipelined();
        if !pipelined {
            for k in self.used_inputs() {
                self.line(format!("add.u64 %in{k}, %in{k}, %stepbytes;"));
            }
        } // (else they advanced at the top of the iteration, with the prefetch)
        for k in 0..self.program.n_output_arrays() {
            self.line(format!("add.u64 %out{k}, %out{k}, %stepbytes;"));
        }
        if pipelined {
            self.line("mov.u64 %i, %inext;");
            self.line("@%more bra $L_loop;");
        } else {
            self.line("add.u64 %i, %i, %stride;");
            self.line("setp.lt.u64 %done, %i, %n;");
            self.line("@%done bra $L_loop;");
        }
        self.raw("$L_exit:");
        if self.checks() {
            self.line("@%bad st.global.u32 [%pstatus], 1;");
        }
        self.line("ret;");
    }

    /// `b64` or `b32`: the type of a parameter of a runtime function.
    fn param_type(&self) -> &'static str {
        match self.program.precision {
            Precision::F64 => "b64",
            Precision::F32 => "b32",
        }
    }

    /// Emits an f32 division rounded down or up as instruction `i`: inline, with the slow path
    /// (PTX `div.rm.f32` / `div.rp.f32`, a subroutine in SASS of about 40 instructions) only
    /// where the inline result is not proven.
    ///
    /// Where both operands' magnitudes lie in [2^-63, 2^63], the candidate q is the reciprocal
    /// iteration of the `div` subroutine's own fast path (`rcp.approx`, a product, two Newton
    /// corrections of the quotient by `fma` residuals, the last one rounded in the wanted
    /// direction), and it is then *checked exactly*: rounding down, q is returned only if
    /// q <= a/b < next_up(q), that is if the residual a - b*q is zero or of the sign of b and
    /// a - b*next_up(q) is of the other sign (rounding up: q >= a/b > next_down(q), mirrored).
    /// The residuals' signs are exact: in that range every nonzero a - b*u for u within two
    /// units of a/b is a multiple of 2^(e_a - 47) >= 2^-110, so the `fma` rounds it to a normal
    /// number of the same sign (it never becomes zero or changes sign), and |a/b| lies in
    /// [2^-126, 2^126], so q and its neighbour are normal and nonzero and the neighbour is the
    /// next float by one step of the bits. Any other operand, or a check that fails, takes the
    /// IEEE division; so the result is the correctly rounded quotient in every case, the bits of
    /// `div.rm.f32` / `div.rp.f32` and of the CPU evaluator.
    ///
    /// Classes (issue 29's audit): the guard sends +-0, subnormals, +-inf, NaN and magnitudes
    /// outside [2^-63, 2^63] to `div.rm/rp`; inside, the neighbour of q = +-2^-126 is the
    /// largest subnormal (still exact: there |b| >= 2^62 and the residual a multiple of 2^-110),
    /// and the check rejects every wrong candidate (wrong sign, zero, infinite, NaN), not only
    /// near ones. Held by `ptx::tests::inline_f32_division_check_accepts_exactly_the_rounded_
    /// quotient` (the predicates, on the CPU) and on the GPU by `gpu_basic::f32_directed_
    /// division_matches_the_cpu_bit_for_bit` (the range edges 2^+-63 and quotients near
    /// 2^-126 and 2^126) and the class matrix's division cells.
    fn div_f32_directed(&mut self, i: usize, a: Value, b: Value, r: Round) {
        let (x, y) = (F(a).to_string(), F(b).to_string());
        let m = round_modifier(r);
        // Rounding down, the neighbour above q; up, the one below (one step of the bits, whose
        // direction depends on q's sign).
        let (step_pos, step_neg) = if r == Round::Down { (1, -1) } else { (-1, 1) };
        // The residual e = a - b*u "has the sign of b" (u below a/b) or the other one.
        let (below_q, above_n) = if r == Round::Down {
            ("%dsb", "!%dsb")
        } else {
            ("!%dsb", "%dsb")
        };
        let lines = [
            "{".to_string(),
            ".reg .f32 %dr, %dq, %dn, %de, %du;".to_string(),
            ".reg .b32 %dbits, %dstep;".to_string(),
            ".reg .pred %dok, %dsb, %dpos, %dt1, %dt2, %dc1;".to_string(),
            format!("abs.f32 %de, {x};"),
            "setp.ge.f32 %dok, %de, 0f20000000;".to_string(),
            "setp.le.and.f32 %dok, %de, 0f5F000000, %dok;".to_string(),
            format!("abs.f32 %de, {y};"),
            "setp.ge.and.f32 %dok, %de, 0f20000000, %dok;".to_string(),
            "setp.le.and.f32 %dok, %de, 0f5F000000, %dok;".to_string(),
            format!("@!%dok bra $Ldiv{i}_ieee;"),
            format!("rcp.approx.ftz.f32 %dr, {y};"),
            format!("neg.f32 %dn, {y};"),
            format!("mul.rn.f32 %dq, {x}, %dr;"),
            format!("fma.rn.f32 %de, %dn, %dq, {x};"),
            "fma.rn.f32 %dq, %dr, %de, %dq;".to_string(),
            format!("fma.rn.f32 %de, %dn, %dq, {x};"),
            format!("fma.{m}.f32 %dq, %dr, %de, %dq;"),
            // The checks: e1 = a - b*q, e2 = a - b*n for q's neighbour n.
            format!("setp.gt.f32 %dsb, {y}, 0f00000000;"),
            format!("fma.rn.f32 %de, %dn, %dq, {x};"),
            "setp.gt.f32 %dpos, %dq, 0f00000000;".to_string(),
            format!("selp.s32 %dstep, {step_pos}, {step_neg}, %dpos;"),
            "mov.b32 %dbits, %dq;".to_string(),
            "add.s32 %dbits, %dbits, %dstep;".to_string(),
            "mov.b32 %du, %dbits;".to_string(),
            format!("fma.rn.f32 %du, %dn, %du, {x};"),
            // q on the right side of a/b: e1 zero, or positive with the right b, or negative
            // with the other (NaN fails every comparison).
            format!("setp.gt.and.f32 %dt1, %de, 0f00000000, {below_q};"),
            format!("setp.lt.and.f32 %dt2, %de, 0f00000000, {above_n};"),
            "setp.eq.or.f32 %dc1, %de, 0f00000000, %dt1;".to_string(),
            "or.pred %dc1, %dc1, %dt2;".to_string(),
            // The neighbour strictly on the other side: e2 nonzero, of the other sign.
            format!("setp.gt.and.f32 %dt1, %du, 0f00000000, {above_n};"),
            format!("setp.lt.and.f32 %dt2, %du, 0f00000000, {below_q};"),
            "or.pred %dt1, %dt1, %dt2;".to_string(),
            "and.pred %dok, %dc1, %dt1;".to_string(),
            format!("@!%dok bra $Ldiv{i}_ieee;"),
            format!("mov.f32 %f{i}, %dq;"),
            format!("bra.uni $Ldiv{i}_done;"),
        ];
        self.checked_inline(
            &lines,
            &format!("$Ldiv{i}"),
            format!("div.{m}.f32 %f{i}, {x}, {y};"),
        );
    }

    /// The end of an inline operation with a checked fast path: its `lines` (which open a
    /// block and branch to `{label}_ieee` where the fast result is not proven, else to
    /// `{label}_done`), then the IEEE instruction `ieee` under `{label}_ieee`, the block closed.
    fn checked_inline(&mut self, lines: &[String], label: &str, ieee: String) {
        for l in lines {
            self.line(l);
        }
        self.raw(format!("{label}_ieee:"));
        self.line(ieee);
        self.raw(format!("{label}_done:"));
        self.line("}");
    }

    /// Emits an f64 square root rounded down or up as instruction `i`: inline, with the slow
    /// path (PTX `sqrt.rm.f64` / `sqrt.rp.f64`, a subroutine in SASS of about 40 instructions)
    /// only where the inline result is not proven.
    ///
    /// Where a lies in [2^-900, 2^900], the candidate q comes from `rsqrt.approx`, a Newton step
    /// on the reciprocal root and one `fma` correction of the root rounded in the wanted
    /// direction (the subroutine's own scheme), and is then *checked exactly*: rounding down, q is returned only if
    /// a - q*q >= 0 and a - n*n < 0 for n = next_up(q) (rounding up: a - q*q <= 0 and
    /// a - d*d > 0 for d = next_down(q)), and q > 0 (so that q*q <= a means q <= sqrt(a)).
    /// The residuals' signs are exact: in that range a
    /// nonzero a - u*u for u near sqrt(a) is a multiple of about 2^(e_a - 105) >= 2^-1005, so the
    /// `fma` rounds it to a normal number of the same sign, and nothing overflows; q and its
    /// neighbours are positive normal numbers, one step of the bits apart. Any other operand, or
    /// a check that fails, takes the IEEE square root: the result is the correctly rounded root
    /// in every case, the bits of `sqrt.rm.f64` / `sqrt.rp.f64` and of the CPU evaluator.
    ///
    /// Classes (issue 29's audit): the guard sends negatives, +-0, subnormals, +inf, NaN and
    /// MAX to `sqrt.rm/rp`; q > 0 rejects a zero, negative or NaN candidate. Held by
    /// `ptx::tests::inline_f64_sqrt_check_accepts_exactly_the_rounded_root` (CPU) and
    /// `gpu_basic::f64_directed_sqrt_matches_the_cpu_bit_for_bit` (every binade, exact squares,
    /// the range edges 2^+-900) and the class matrix's sqrt cells on the GPU.
    fn sqrt_f64_directed(&mut self, i: usize, a: Value, r: Round) {
        let x = F(a).to_string();
        let m = round_modifier(r);
        let (step, keep) = if r == Round::Down {
            // a - q*q >= 0 and a - next_up(q)^2 < 0.
            (
                1,
                [
                    "setp.ge.f64 %sc, %se, 0d0000000000000000;",
                    "setp.lt.and.f64 %sok, %st, 0d0000000000000000, %sc;",
                ],
            )
        } else {
            // a - q*q <= 0 and a - next_down(q)^2 > 0.
            (
                -1,
                [
                    "setp.le.f64 %sc, %se, 0d0000000000000000;",
                    "setp.gt.and.f64 %sok, %st, 0d0000000000000000, %sc;",
                ],
            )
        };
        let lines = [
            "{".to_string(),
            ".reg .f64 %sy, %st, %sh, %sq, %se, %sn;".to_string(),
            ".reg .b64 %sbits;".to_string(),
            ".reg .pred %sok, %sc;".to_string(),
            format!("setp.ge.f64 %sok, {x}, 0d07B0000000000000;"),
            format!("setp.le.and.f64 %sok, {x}, 0d7830000000000000, %sok;"),
            format!("@!%sok bra $Lsqrt{i}_ieee;"),
            format!("rsqrt.approx.ftz.f64 %sy, {x};"),
            format!("neg.f64 %sn, {x};"),
            // One Newton step on y ~ 1/sqrt(a): y += (y/2) * (1 - a*y*y) (as the subroutine).
            "mul.rn.f64 %st, %sy, %sy;".to_string(),
            "fma.rn.f64 %st, %sn, %st, 0d3FF0000000000000;".to_string(),
            "mul.rn.f64 %sh, %sy, 0d3FE0000000000000;".to_string(),
            "fma.rn.f64 %sy, %sh, %st, %sy;".to_string(),
            // q = a*y, corrected by (a - q*q) * y/2, rounded in the wanted direction.
            format!("mul.rn.f64 %sq, {x}, %sy;"),
            "mul.rn.f64 %sh, %sy, 0d3FE0000000000000;".to_string(),
            "neg.f64 %se, %sq;".to_string(),
            format!("fma.rn.f64 %se, %se, %sq, {x};"),
            format!("fma.{m}.f64 %sq, %se, %sh, %sq;"),
            // The checks: e = a - q*q, t = a - u*u for q's neighbour u.
            "neg.f64 %se, %sq;".to_string(),
            format!("fma.rn.f64 %se, %se, %sq, {x};"),
            "mov.b64 %sbits, %sq;".to_string(),
            format!("add.s64 %sbits, %sbits, {step};"),
            "mov.b64 %st, %sbits;".to_string(),
            "neg.f64 %sn, %st;".to_string(),
            format!("fma.rn.f64 %st, %sn, %st, {x};"),
            keep[0].to_string(),
            keep[1].to_string(),
            // q > 0, for which q*q <= a means q <= sqrt(a).
            "setp.gt.and.f64 %sok, %sq, 0d0000000000000000, %sok;".to_string(),
            format!("@!%sok bra $Lsqrt{i}_ieee;"),
            format!("mov.f64 %f{i}, %sq;"),
            format!("bra.uni $Lsqrt{i}_done;"),
        ];
        self.checked_inline(
            &lines,
            &format!("$Lsqrt{i}"),
            format!("sqrt.{m}.f64 %f{i}, {x};"),
        );
    }

    /// Emits `Point(f, a, b, r)` as instruction `i`: the runtime call (unless the same call was
    /// made before), then the outward padding (see the module documentation).
    fn point(&mut self, i: usize, f: PointFn, a: Value, b: Value, r: Round) {
        let t = self.ty;
        let b = if f.arity() == 1 { a } else { b };
        let c = match self.calls.get(&(f, a, b)) {
            Some(&c) => c,
            None => {
                let pt = self.param_type();
                let sym = runtime_symbol(f, self.program.precision);
                self.line("{");
                self.line(format!(".param .{pt} ret;"));
                self.line(format!(".param .{pt} arg0;"));
                if f.arity() == 1 {
                    self.line(format!("st.param.{t} [arg0], %f{};", a.index()));
                    self.line(format!("call (ret), {sym}, (arg0);"));
                } else {
                    self.line(format!(".param .{pt} arg1;"));
                    self.line(format!("st.param.{t} [arg0], %f{};", a.index()));
                    self.line(format!("st.param.{t} [arg1], %f{};", b.index()));
                    self.line(format!("call (ret), {sym}, (arg0, arg1);"));
                }
                self.line(format!("ld.param.{t} %c{i}, [ret];"));
                self.line("}");
                self.calls.insert((f, a, b), i);
                i
            }
        };
        let (inf, max) = match self.program.precision {
            Precision::F64 => (f64::INFINITY, f64::MAX),
            Precision::F32 => (f64::INFINITY, f32::MAX as f64),
        };
        let tiny = self.immediate(match self.program.precision {
            Precision::F64 => f64::from_bits(1),
            Precision::F32 => f32::from_bits(1) as f64,
        });
        let (op, inf, max) = match r {
            Round::Nearest => {
                self.line(format!("mov.{t} %f{i}, %c{c};"));
                return;
            }
            Round::Down => ("sub.rm", self.immediate(inf), self.immediate(max)),
            Round::Up => ("add.rp", self.immediate(-inf), self.immediate(-max)),
        };
        let steps = pad_steps(f, self.program.precision);
        self.line(format!(
            "// {} {}: library result padded {steps} floats",
            f.name(),
            if r == Round::Down { "down" } else { "up" }
        ));
        // A function of bounded range never returns the infinity the select replaces.
        let bounded = matches!(f, PointFn::Unary(u) if u.row().range.is_bounded());
        let mut from = format!("%c{c}");
        if !bounded {
            self.line(format!("setp.eq.{t} %p{i}, %c{c}, {inf};"));
            self.line(format!("selp.{t} %f{i}, {max}, %c{c}, %p{i};"));
            from = format!("%f{i}");
        }
        for _ in 0..steps {
            self.line(format!("{op}.{t} %f{i}, {from}, {tiny};"));
            from = format!("%f{i}");
        }
    }

    /// Emits instruction number `i`. Writes straight into the module text: formatting each line
    /// and its operands into strings of their own made emission a large part of a warm compile.
    fn inst(&mut self, i: usize, inst: &Inst) {
        match *inst {
            Inst::Point1(f, a, r) => return self.point(i, PointFn::Unary(f), a, a, r),
            Inst::Point2(f, a, b, r) => return self.point(i, PointFn::Binary(f), a, b, r),
            Inst::Div(a, b, r)
                if self.program.precision == Precision::F32
                    && r != Round::Nearest
                    && self.program.insts.len() <= INLINE_MAX_INSTS =>
            {
                return self.div_f32_directed(i, a, b, r)
            }
            Inst::Sqrt(a, r)
                if self.program.precision == Precision::F64
                    && r != Round::Nearest
                    && self.program.insts.len() <= INLINE_MAX_INSTS =>
            {
                return self.sqrt_f64_directed(i, a, r)
            }
            _ => {}
        }
        let t = self.ty;
        let load = match self.shape {
            Shape::Kernel | Shape::Arrays => "ld.global.nc",
            Shape::Function => "ld",
        };
        let precision = self.program.precision;
        let imm = |c: f64| Immediate(c, precision);
        let (f, p) = (F, P);
        let o = &mut self.out;
        o.push('\t');
        // Writing to a String cannot fail.
        let _ = match *inst {
            Inst::Input { var, bound } => {
                write!(o, "{load}.{t} %f{i}, [%in{}];", input_array(var, bound))
            }
            Inst::Const(c) => write!(o, "mov.{t} %f{i}, {};", imm(c)),
            Inst::Add(a, b, r) => {
                write!(
                    o,
                    "add.{}.{t} %f{i}, {}, {};",
                    round_modifier(r),
                    f(a),
                    f(b)
                )
            }
            Inst::Sub(a, b, r) => {
                write!(
                    o,
                    "sub.{}.{t} %f{i}, {}, {};",
                    round_modifier(r),
                    f(a),
                    f(b)
                )
            }
            Inst::Mul(a, b, r) => {
                write!(
                    o,
                    "mul.{}.{t} %f{i}, {}, {};",
                    round_modifier(r),
                    f(a),
                    f(b)
                )
            }
            Inst::Div(a, b, r) => {
                write!(
                    o,
                    "div.{}.{t} %f{i}, {}, {};",
                    round_modifier(r),
                    f(a),
                    f(b)
                )
            }
            Inst::Fma(a, b, c, r) => write!(
                o,
                "fma.{}.{t} %f{i}, {}, {}, {};",
                round_modifier(r),
                f(a),
                f(b),
                f(c)
            ),
            Inst::Sqrt(a, r) => write!(o, "sqrt.{}.{t} %f{i}, {};", round_modifier(r), f(a)),
            Inst::Neg(a) => write!(o, "neg.{t} %f{i}, {};", f(a)),
            Inst::Abs(a) => write!(o, "abs.{t} %f{i}, {};", f(a)),
            Inst::RoundInt(k, a) => {
                let m = match k {
                    RoundInt::Floor => "rmi",
                    RoundInt::Ceil => "rpi",
                    RoundInt::Trunc => "rzi",
                    RoundInt::Even => "rni",
                };
                write!(o, "cvt.{m}.{t}.{t} %f{i}, {};", f(a))
            }
            Inst::Point1(..) | Inst::Point2(..) => {
                unreachable!("point calls are emitted by Emitter::point")
            }
            // PTX min/max: NaN operand ignored, -0 < +0 (see module docs).
            Inst::Min(a, b) => write!(o, "min.{t} %f{i}, {}, {};", f(a), f(b)),
            Inst::Max(a, b) => write!(o, "max.{t} %f{i}, {}, {};", f(a), f(b)),
            // lt/le/gt/ge/eq are the ordered comparisons (false on NaN).
            Inst::Compare(c, a, b) => {
                write!(o, "setp.{}.{t} %p{i}, {}, {};", cmp_name(c), f(a), f(b))
            }
            Inst::IsNan(a) => write!(o, "testp.notanumber.{t} %p{i}, {};", f(a)),
            Inst::Bool(b) => write!(o, "setp.ne.u32 %p{i}, {}, 0;", u32::from(b)),
            Inst::And(a, b) => write!(o, "and.pred %p{i}, {}, {};", p(a), p(b)),
            Inst::Or(a, b) => write!(o, "or.pred %p{i}, {}, {};", p(a), p(b)),
            Inst::Not(a) => write!(o, "not.pred %p{i}, {};", p(a)),
            Inst::Select(c, a, b) => write!(o, "selp.{t} %f{i}, {}, {}, {};", f(a), f(b), p(c)),
        };
        o.push('\n');
    }

    /// Exact hexadecimal immediate of a constant in the program's precision.
    fn immediate(&self, c: f64) -> Immediate {
        Immediate(c, self.program.precision)
    }
}

/// The float register of a value: `%f<index>`.
struct F(Value);

impl fmt::Display for F {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "%f{}", self.0.index())
    }
}

/// The predicate register of a value: `%p<index>`.
struct P(Value);

impl fmt::Display for P {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "%p{}", self.0.index())
    }
}

/// A constant as an exact hexadecimal PTX immediate of a precision (`0d...` or `0f...`).
struct Immediate(f64, Precision);

impl fmt::Display for Immediate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.1 {
            Precision::F64 => write!(f, "0d{:016X}", self.0.to_bits()),
            Precision::F32 => write!(f, "0f{:08X}", (self.0 as f32).to_bits()),
        }
    }
}

fn cmp_name(c: Cmp) -> &'static str {
    match c {
        Cmp::Lt => "lt",
        Cmp::Le => "le",
        Cmp::Gt => "gt",
        Cmp::Ge => "ge",
        Cmp::Eq => "eq",
    }
}

#[cfg(test)]
mod tests;
