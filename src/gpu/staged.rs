//! Programs too long to compile as one kernel, run as stages.
//!
//! ptxas (and the driver's JIT, the same compiler) takes time that grows faster than the kernel:
//! the Prospero model, 31,398 scalar instructions in f64, takes 45 s in offline ptxas as one
//! kernel (255 registers, 2.3 KB of spills), and 7 s as 63 kernels of about 500 instructions
//! (no spills), which compile in parallel. So a program longer than [`STAGED_ABOVE`]
//! instructions is cut ([`crate::scalar::split`]) into stages of [`STAGE_INSTS`]; each stage is a
//! kernel over a table of array addresses ([`crate::ptx::try_emit_stage_kernel`]), compiled on
//! its own thread, and a launch runs the stages in order on one stream, the values that cross a
//! cut going through scratch arrays in device memory. The arithmetic is the program's own, so
//! the results are the single kernel's bits.
//!
//! Tiering (module [`super::tiers`]): the single kernel runs faster than the stages and is
//! compiled on a thread of its own once they have done enough work; until the stages are ready
//! the interpreter answers.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use cudarc::driver::{
    CudaContext, CudaFunction, CudaStream, DevicePtr, DriverError, PushKernelArg,
};

use super::batch::{launch_config, soa};
use super::interpreter::{Interpreted, NotInterpreted};
use super::load::{load_entry_at, Loaded};
use super::options::{InterpreterPolicy, Policies, TierUpPolicy};
use super::tiers::Tier;
use super::tiers::{
    wait_for, warm_up_compiler, ExitGuard, TierUp, EXITING, INTERPRET_ELEMENTS, STAGED_ABOVE,
};
use super::{DiskCacheOutcome, GpuError};
use crate::ptx;
use crate::scalar::split::{self, Slot};
use crate::scalar::{Precision, Program};

/// Instructions per stage (measured on Prospero with offline ptxas 13.0: stages of 500
/// compile in 6.9 s in all, none above 0.15 s, without spills; of 1000, 7.0 s, some spilling;
/// of 2000, 8.4 s).
pub(crate) const STAGE_INSTS: usize = 500;

/// The driver JIT's optimization level for stages (`IVJIT_STAGE_JIT_LEVEL` overrides). Stages
/// are the first tier, compiled while the user waits: on one H100 (2026-11-25) Prospero's 63
/// f64 stages compiled in 707 ms at level 1 against 854-974 ms at the default level 4
/// (f32: 466 against 544 ms) and ran 11 % slower (24.1 against 21.6 ms per 2^20 boxes), which
/// the single kernel's tier-up (at the default level) takes back; level 0 compiled no faster
/// and ran 6.6x slower, levels 2 and 3 saved less than 15 %.
const STAGE_JIT_LEVEL: u32 = 1;

/// Most scratch memory one launch allocates (bytes): a launch of more elements runs in pieces.
const SCRATCH_BYTES: usize = 1 << 30;

/// Instructions per stage: [`STAGE_INSTS`], or `IVJIT_STAGE_INSTS` (0: never cut).
fn stage_insts() -> usize {
    super::env::stage_insts().unwrap_or(STAGE_INSTS)
}

/// Whether `program` is compiled as stages.
pub(crate) fn wanted(program: &Program) -> bool {
    let size = stage_insts();
    size > 0 && program.insts.len() > STAGED_ABOVE.max(size)
}

/// One stage's kernel and the arrays of its table.
struct StageFn {
    loaded: Loaded,
    reads: Vec<Slot>,
    writes: Vec<Slot>,
}

/// The stages of a program, loaded on one device, with the interpreter that answers until they
/// are compiled.
pub(crate) struct StagedCode {
    /// The stages, once compiled (on threads of their own when the interpreter answers
    /// meanwhile, else before `build` returns).
    stages: Arc<OnceLock<Vec<StageFn>>>,
    /// How many stages the program is cut into.
    count: usize,
    /// The program's bytecode on the device (`None`: not interpretable, or `IVJIT_INTERPRETER=
    /// never`).
    interpreter: Option<Interpreted>,
    /// Input and output arrays of the program.
    arrays: (usize, usize),
    /// Scratch arrays the stages hand values over in.
    scratch: usize,
    /// Bytes per element.
    elem: usize,
    /// Whether the stages' compile is under way on a thread of its own.
    compiling: Arc<AtomicBool>,
    /// How long after the build began the stages were ready.
    stages_after: Arc<OnceLock<Duration>>,
    /// The single kernel, compiled once the stages have done enough work.
    pub(crate) tier_up: TierUp,
}

/// Compiles the stages of `staged` on `ctx`, on as many threads as the host has cores (each
/// stage through the disk cache like any kernel). With `stoppable`, no stage starts compiling
/// once the process has begun to exit (the background compile: an exit waits only for the
/// compiles under way), and the result is then an error.
fn compile_stages(
    ctx: &Arc<CudaContext>,
    staged: split::Staged,
    cache_dir: Option<&std::path::Path>,
    stoppable: bool,
) -> Result<Vec<StageFn>, GpuError> {
    let texts = staged
        .stages
        .iter()
        .map(|s| ptx::try_emit_stage_kernel(&s.program))
        .collect::<Result<Vec<String>, _>>()
        .map_err(GpuError::InvalidProgram)?;
    let n = staged.stages.len();
    let threads = std::thread::available_parallelism()
        .map_or(4, |t| t.get())
        .min(n)
        .max(1);
    let level = Some(super::env::stage_jit_level().unwrap_or(STAGE_JIT_LEVEL));
    let next = AtomicUsize::new(0);
    let results: Vec<Mutex<Option<Result<Loaded, GpuError>>>> =
        (0..n).map(|_| Mutex::new(None)).collect();
    // Per stage: how long its compile (or cache read) took, for IVJIT_STAGE_TRACE.
    let took: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
    let start = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                if stoppable && EXITING.load(Ordering::SeqCst) {
                    break;
                }
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                let t = Instant::now();
                let stage = &staged.stages[i].program;
                let entry = (texts[i].as_str(), ptx::ARRAYS_KERNEL_NAME);
                let r = load_entry_at(ctx, stage, entry, cache_dir, level);
                took[i].store(t.elapsed().as_micros() as usize, Ordering::Relaxed);
                *results[i].lock().unwrap_or_else(|p| p.into_inner()) = Some(r);
            });
        }
    });
    if super::env::stage_trace() {
        // Whether the stages' compiles overlap: the sum of their times against the wall time.
        let us: Vec<usize> = took.iter().map(|t| t.load(Ordering::Relaxed)).collect();
        eprintln!(
            "ivjit stages: {n} on {threads} threads in {:.1} ms; compiles sum {:.1} ms, longest {:.1} ms",
            start.elapsed().as_secs_f64() * 1e3,
            us.iter().sum::<usize>() as f64 / 1e3,
            us.iter().max().copied().unwrap_or(0) as f64 / 1e3,
        );
    }
    let mut stages = Vec::with_capacity(n);
    for (stage, result) in staged.stages.into_iter().zip(results) {
        let loaded = result
            .into_inner()
            .unwrap_or_else(|p| p.into_inner())
            .ok_or(GpuError::Exiting)??;
        stages.push(StageFn {
            loaded,
            reads: stage.reads,
            writes: stage.writes,
        });
    }
    Ok(stages)
}

impl StagedCode {
    /// Cuts `program` into stages and compiles them on `ctx`. When the program has bytecode
    /// (no point calls) and the interpreter policy is not `Never`, the interpreter answers at
    /// once and the stages compile on threads of their own (never, with `Only`); else the
    /// stages are compiled before this returns. `text` is the program's single kernel, for the
    /// tier-up.
    pub(crate) fn build(
        ctx: &Arc<CudaContext>,
        program: &Program,
        text: &str,
        cache_dir: Option<&std::path::Path>,
        policies: Policies,
    ) -> Result<StagedCode, GpuError> {
        let began = Instant::now();
        let policy = policies.interpreter;
        let interpreter = match policy {
            InterpreterPolicy::Never => None,
            _ => match Interpreted::new(ctx, program, cache_dir) {
                Ok(i) => Some(i),
                Err(NotInterpreted::Encode) => None,
                // The stages compute the same bits: a device that refuses the interpreter
                // (or its words) still runs the program.
                Err(NotInterpreted::Gpu(e)) => {
                    if super::env::stage_trace() {
                        eprintln!("ivjit interpreter: not used ({e})");
                    }
                    None
                }
            },
        };
        let staged = split::split(program, stage_insts());
        let (count, scratch) = (staged.stages.len(), staged.scratch);
        let stages = Arc::new(OnceLock::new());
        let stages_after = Arc::new(OnceLock::new());
        let compiling = Arc::new(AtomicBool::new(false));
        let only = policy == InterpreterPolicy::Only && interpreter.is_some();
        if interpreter.is_none() {
            let _ = stages.set(compile_stages(ctx, staged, cache_dir, false)?);
            let _ = stages_after.set(began.elapsed());
        } else if !only {
            // The driver's compiler must have run once before the exit handler is registered
            // (see `TierUp::start`); the interpreter's compile did that unless it came from
            // the disk cache.
            warm_up_compiler(ctx, program.precision);
            // Counted before the thread exists, so an exit from here on waits for the
            // compiles under way (and starts no more).
            if let Some(in_driver) = ExitGuard::enter() {
                let (ctx, cache_dir) = (ctx.clone(), cache_dir.map(|d| d.to_path_buf()));
                let (into, after) = (stages.clone(), stages_after.clone());
                compiling.store(true, Ordering::SeqCst);
                let done = compiling.clone();
                std::thread::spawn(move || {
                    let _in_driver = in_driver;
                    // Cleared however the compile ends (a launch waiting for it stops waiting).
                    struct Done(Arc<AtomicBool>);
                    impl Drop for Done {
                        fn drop(&mut self) {
                            self.0.store(false, Ordering::SeqCst);
                        }
                    }
                    let _done = Done(done);
                    match compile_stages(&ctx, staged, cache_dir.as_deref(), true) {
                        Ok(s) => {
                            let _ = into.set(s);
                            let _ = after.set(began.elapsed());
                        }
                        Err(e) if super::env::stage_trace() => {
                            eprintln!("ivjit stages: not compiled ({e}); the interpreter answers")
                        }
                        Err(_) => {}
                    }
                });
            }
        }
        if super::env::stage_trace() && interpreter.is_some() {
            eprintln!(
                "ivjit interpreter: answers after {:.1} ms{}",
                began.elapsed().as_secs_f64() * 1e3,
                if only {
                    " (interpreter only: no stages)"
                } else {
                    "; the stages compile in the background"
                }
            );
        }
        let tier_up = TierUp::new(
            ctx,
            program,
            text,
            cache_dir,
            if only {
                TierUpPolicy::Never
            } else {
                policies.tier_up
            },
        );
        Ok(StagedCode {
            stages,
            count,
            interpreter,
            compiling,
            arrays: (2 * program.n_vars(), program.n_output_arrays()),
            scratch,
            elem: match program.precision {
                Precision::F64 => 8,
                Precision::F32 => 4,
            },
            stages_after,
            tier_up,
        })
    }

    /// Whether the stages are compiled, waiting up to `timeout` for them; false at once when
    /// they are not being compiled (`IVJIT_INTERPRETER=only`, or their compile failed or was
    /// stopped: the interpreter answers).
    pub(crate) fn wait_for_stages(&self, timeout: Duration) -> bool {
        wait_for(
            &self.stages,
            || self.compiling.load(Ordering::SeqCst),
            timeout,
        )
    }

    /// How long after the build began the stages were ready (`None` while they compile).
    pub(crate) fn stages_ready_after(&self) -> Option<Duration> {
        self.stages_after.get().copied()
    }

    /// A function that stands in for the single kernel's (never launched as such): the
    /// interpreter's, else the first stage's.
    pub(crate) fn first_function(&self) -> CudaFunction {
        match (&self.interpreter, self.stages.get()) {
            (Some(i), _) => i.function().clone(),
            (None, Some(s)) => s[0].loaded.function.clone(),
            (None, None) => unreachable!("without the interpreter the stages are compiled first"),
        }
    }

    /// What the disk cache did: a hit when every stage was one, else the first other outcome
    /// (while the stages compile, what it did for the interpreter).
    pub(crate) fn disk(&self) -> DiskCacheOutcome {
        match (self.stages.get(), &self.interpreter) {
            (Some(stages), _) => stages
                .iter()
                .map(|s| s.loaded.disk.clone())
                .find(|d| *d != DiskCacheOutcome::Hit)
                .unwrap_or(DiskCacheOutcome::Hit),
            (None, Some(i)) => i.disk(),
            (None, None) => DiskCacheOutcome::NoCache,
        }
    }

    /// The number of stages.
    pub(crate) fn len(&self) -> usize {
        self.count
    }

    /// [`StagedCode::launch`] over a structure-of-arrays block: `n` elements, the input arrays
    /// one after the other from `inputs`, the output arrays from `outputs`.
    ///
    /// # Safety
    /// As for [`StagedCode::launch`], for the arrays of the block.
    pub(crate) unsafe fn launch_soa(
        &self,
        stream: &Arc<CudaStream>,
        n: usize,
        inputs: u64,
        outputs: u64,
    ) -> Result<(), DriverError> {
        let (input, output) = (soa(inputs, n, self.elem), soa(outputs, n, self.elem));
        // SAFETY: as the caller vouches for the block.
        unsafe { self.launch(stream, n, &input, &output) }
    }

    /// Bytes per element of the program's precision.
    pub(crate) fn elem(&self) -> usize {
        self.elem
    }

    /// Runs the stages on `stream` over `n` elements: `input(k, at)` and `output(k, at)` are
    /// the device addresses of element `at` of input array `k` and output array `k` (arrays of
    /// consecutive elements). In pieces of at most [`SCRATCH_BYTES`] of scratch; the scratch
    /// and the address tables are freed in stream order after the launches.
    ///
    /// # Safety
    /// Every address the functions give must be valid device memory of the stream's context
    /// until the stream has run the launches, and no output may overlap an input.
    pub(crate) unsafe fn launch(
        &self,
        stream: &Arc<CudaStream>,
        n: usize,
        input: &dyn Fn(usize, usize) -> u64,
        output: &dyn Fn(usize, usize) -> u64,
    ) -> Result<(), DriverError> {
        // A launch the interpreter would take longer over than the stages have left to
        // compile waits for them (unless they are never compiled).
        if self.stages.get().is_none() && self.interpreter.is_some() && n > INTERPRET_ELEMENTS {
            self.wait_for_stages(Duration::from_secs(600));
        }
        match (self.stages.get(), &self.interpreter) {
            (Some(stages), _) => {
                self.tier_up.note(n);
                // SAFETY: as the caller vouches for the arrays.
                unsafe { self.launch_stages(stages, stream, n, input, output) }
            }
            (None, Some(interpreter)) => {
                let (n_in, n_out) = self.arrays;
                // SAFETY: as the caller vouches for the arrays.
                unsafe { interpreter.launch(stream, n, n_in, n_out, input, output) }
            }
            (None, None) => unreachable!("without the interpreter the stages are compiled first"),
        }
    }

    /// [`StagedCode::launch_soa`] on `tier` even when faster code is ready: the interpreter,
    /// or the stages (waiting for their compile first); false (nothing launched) when the
    /// program has no bytecode or its stages are never compiled.
    ///
    /// # Safety
    /// As for [`StagedCode::launch_soa`].
    pub(crate) unsafe fn launch_tier_soa(
        &self,
        tier: Tier,
        stream: &Arc<CudaStream>,
        n: usize,
        inputs: u64,
        outputs: u64,
    ) -> Result<bool, DriverError> {
        match tier {
            Tier::Interpreter => {
                let Some(interpreter) = &self.interpreter else {
                    return Ok(false);
                };
                let (n_in, n_out) = self.arrays;
                // SAFETY: as the caller vouches for the block.
                unsafe { interpreter.launch_soa(stream, n, n_in, n_out, inputs, outputs) }
                    .map(|_| true)
            }
            Tier::Stages => {
                if !self.wait_for_stages(Duration::from_secs(600)) {
                    return Ok(false);
                }
                let Some(stages) = self.stages.get() else {
                    return Ok(false);
                };
                let (input, output) = (soa(inputs, n, self.elem), soa(outputs, n, self.elem));
                self.tier_up.note(n);
                // SAFETY: as the caller vouches for the block.
                unsafe { self.launch_stages(stages, stream, n, &input, &output) }.map(|_| true)
            }
        }
    }

    /// Runs `stages` (see [`StagedCode::launch`]).
    ///
    /// # Safety
    /// As for [`StagedCode::launch`].
    unsafe fn launch_stages(
        &self,
        stages: &[StageFn],
        stream: &Arc<CudaStream>,
        n: usize,
        input: &dyn Fn(usize, usize) -> u64,
        output: &dyn Fn(usize, usize) -> u64,
    ) -> Result<(), DriverError> {
        if n == 0 {
            return Ok(());
        }
        let elem = self.elem;
        let piece = (SCRATCH_BYTES / (self.scratch.max(1) * elem)).clamp(1, n);
        // SAFETY: every scratch element a stage reads was written by an earlier stage of the
        // same piece.
        let scratch = unsafe { stream.alloc::<u8>((self.scratch * piece * elem).max(1)) }?;
        let (base, _guard) = scratch.device_ptr(stream);
        // The tables of every piece and stage, uploaded at once.
        let mut table: Vec<u64> = Vec::new();
        let mut offsets = Vec::new();
        for at in (0..n).step_by(piece) {
            for stage in stages {
                offsets.push(table.len());
                for slot in stage.reads.iter().chain(&stage.writes) {
                    table.push(match *slot {
                        Slot::Input(k) => input(k, at),
                        Slot::Output(k) => output(k, at),
                        Slot::Scratch(k) => base + ((k * piece * elem) as u64),
                    });
                }
            }
        }
        let d_table = stream.clone_htod(&table)?;
        let (tables, _tguard) = d_table.device_ptr(stream);
        let no_status = 0u64;
        for (p, at) in (0..n).step_by(piece).enumerate() {
            let m = piece.min(n - at);
            let m_arg = m as u64;
            for (s, stage) in stages.iter().enumerate() {
                let t = tables + 8 * offsets[p * stages.len() + s] as u64;
                let mut launch = stream.launch_builder(&stage.loaded.function);
                launch.arg(&m_arg).arg(&t).arg(&no_status);
                let cfg = launch_config(stage.loaded.block, stage.loaded.max_grid, m);
                // SAFETY: the stage kernel takes (u64 n, u64 table, u64 status), reads its
                // table's addresses (the caller's arrays and this piece's scratch, each valid
                // for m elements from there) and never touches `status`.
                unsafe { launch.launch(cfg) }?;
            }
        }
        Ok(())
    }
}
