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
//! Tiering: the single kernel runs faster than the stages (no scratch traffic; measured on an
//! H100, Prospero on 2^24 boxes: stages 332 ms, single 306 ms in f64, 160 and 61 ms in f32). So
//! once the stages have done enough work to say the process is a long-running one
//! ([`TIER_UP_WORK`]), the single kernel is compiled on a thread of its own and used from the
//! launch after it is ready ([`TierUp`]). A process that exits while that compile runs waits for
//! it: the driver's compiler running on while the process tears the driver down corrupts the
//! heap (seen on the H100: "double free or corruption" at exit), so an `atexit` handler holds the
//! exit until the compile thread is out of the driver. A process that never does that much work
//! (a CLI command evaluating a few boxes) never starts the compile and exits at once.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use cudarc::driver::{
    CudaContext, CudaFunction, CudaStream, DevicePtr, DriverError, PushKernelArg,
};

use super::batch::launch_config;
use super::kernel::{load_entry, load_entry_at, Loaded};
use super::options::env::TierUpPolicy;
use super::{DiskCacheOutcome, GpuError};
use crate::ptx;
use crate::scalar::split::{self, Slot};
use crate::scalar::{Precision, Program};

/// Programs of more scalar instructions than this are compiled as stages.
pub(crate) const STAGED_ABOVE: usize = 4000;

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

/// Work the stages do before the single kernel is compiled (scalar instructions x elements
/// launched; `IVJIT_TIER_UP=auto`). 2^40 is about 0.7 s of the stages of Prospero on an H100
/// (1.6e12 instruction-elements per second), and about 90 frames of a 1024 x 1024 render of it:
/// by then the process has shown it runs long, and the single kernel's compile (7-15 s on
/// one core) pays back.
pub(crate) const TIER_UP_WORK: u64 = 1 << 40;

/// Instructions per stage: [`STAGE_INSTS`], or `IVJIT_STAGE_INSTS` (0: never cut).
fn stage_insts() -> usize {
    super::options::env::stage_insts().unwrap_or(STAGE_INSTS)
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

/// The stages of a program, loaded on one device.
pub(crate) struct StagedCode {
    stages: Vec<StageFn>,
    /// Scratch arrays the stages hand values over in.
    scratch: usize,
    /// Bytes per element.
    elem: usize,
    /// The single kernel, compiled once the stages have done enough work.
    pub(crate) tier_up: TierUp,
}

impl StagedCode {
    /// Cuts `program`, emits its stages and compiles them on `ctx`, on as many threads as the
    /// host has cores (each stage through the disk cache like any kernel). `text` is the
    /// program's single kernel, for the tier-up.
    pub(crate) fn build(
        ctx: &Arc<CudaContext>,
        program: &Program,
        text: &str,
        cache_dir: Option<&std::path::Path>,
    ) -> Result<StagedCode, GpuError> {
        let staged = split::split(program, stage_insts());
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
        let level = Some(super::options::env::stage_jit_level().unwrap_or(STAGE_JIT_LEVEL));
        let next = AtomicUsize::new(0);
        let results: Vec<Mutex<Option<Result<Loaded, GpuError>>>> =
            (0..n).map(|_| Mutex::new(None)).collect();
        // Per stage: how long its compile (or cache read) took, for IVJIT_STAGE_TRACE.
        let took: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
        let start = Instant::now();
        std::thread::scope(|scope| {
            for _ in 0..threads {
                scope.spawn(|| loop {
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
        if super::options::env::stage_trace() {
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
                .ok_or_else(|| GpuError::Devices("a compile thread stopped".to_string()))??;
            stages.push(StageFn {
                loaded,
                reads: stage.reads,
                writes: stage.writes,
            });
        }
        Ok(StagedCode {
            stages,
            scratch: staged.scratch,
            elem: match program.precision {
                Precision::F64 => 8,
                Precision::F32 => 4,
            },
            tier_up: TierUp::new(ctx, program, text, cache_dir),
        })
    }

    /// The first stage's function.
    pub(crate) fn first_function(&self) -> CudaFunction {
        self.stages[0].loaded.function.clone()
    }

    /// What the disk cache did: a hit when every stage was one, else the first other outcome.
    pub(crate) fn disk(&self) -> DiskCacheOutcome {
        self.stages
            .iter()
            .map(|s| s.loaded.disk.clone())
            .find(|d| *d != DiskCacheOutcome::Hit)
            .unwrap_or(DiskCacheOutcome::Hit)
    }

    /// The number of stages.
    pub(crate) fn len(&self) -> usize {
        self.stages.len()
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
        let elem = self.elem as u64;
        let input = |k: usize, at: usize| inputs + ((k * n + at) as u64) * elem;
        let output = |k: usize, at: usize| outputs + ((k * n + at) as u64) * elem;
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
            for stage in &self.stages {
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
            for (s, stage) in self.stages.iter().enumerate() {
                let t = tables + 8 * offsets[p * self.stages.len() + s] as u64;
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

/// What the background compile of a staged program's single kernel needs.
struct Job {
    ctx: Arc<CudaContext>,
    program: Program,
    text: String,
    cache_dir: Option<std::path::PathBuf>,
}

/// The single kernel of a staged program: compiled on a thread of its own once the stages have
/// done [`TIER_UP_WORK`] (or at once, or never: `IVJIT_TIER_UP`), then used instead of them.
pub(crate) struct TierUp {
    /// Taken when the compile starts.
    job: Mutex<Option<Job>>,
    /// Instruction-elements the stages have run.
    work: AtomicU64,
    /// Scalar instructions of the program.
    insts: u64,
    policy: TierUpPolicy,
    /// The single kernel and how long its compile took, once ready.
    single: Arc<OnceLock<(Loaded, Duration)>>,
}

impl TierUp {
    /// The tier-up of `program` (PTX `text`) on `ctx`; starts the compile at once when the
    /// policy says so.
    pub(crate) fn new(
        ctx: &Arc<CudaContext>,
        program: &Program,
        text: &str,
        cache_dir: Option<&std::path::Path>,
    ) -> TierUp {
        let t = TierUp {
            job: Mutex::new(Some(Job {
                ctx: ctx.clone(),
                program: program.clone(),
                text: text.to_string(),
                cache_dir: cache_dir.map(|d| d.to_path_buf()),
            })),
            work: AtomicU64::new(0),
            insts: program.insts.len() as u64,
            policy: super::options::env::tier_up(),
            single: Arc::new(OnceLock::new()),
        };
        if t.policy == TierUpPolicy::Now {
            t.start();
        }
        t
    }

    /// The single kernel, when it is ready.
    pub(crate) fn ready(&self) -> Option<&Loaded> {
        self.single.get().map(|(l, _)| l)
    }

    /// How long the single kernel's compile took, when it is ready.
    pub(crate) fn compile_time(&self) -> Option<Duration> {
        self.single.get().map(|&(_, d)| d)
    }

    /// Counts a launch of the stages over `elements`; starts the compile when the work passes
    /// [`TIER_UP_WORK`] (policy `auto`).
    pub(crate) fn note(&self, elements: usize) {
        if self.policy != TierUpPolicy::Auto {
            return;
        }
        let add = self.insts.saturating_mul(elements as u64);
        let before = self.work.fetch_add(add, Ordering::Relaxed);
        if before < TIER_UP_WORK && before.saturating_add(add) >= TIER_UP_WORK {
            self.start();
        }
    }

    /// Starts the compile on a thread of its own unless it was started before (or the policy
    /// is `never`). A failure leaves the stages in use: they compute the same bits.
    pub(crate) fn start(&self) {
        if self.policy == TierUpPolicy::Never {
            return;
        }
        let Some(job) = self.job.lock().unwrap_or_else(|p| p.into_inner()).take() else {
            return;
        };
        // The driver's compiler registers exit-time destructors the first time it runs; they
        // must be registered before the exit handler below, so that they run after it (exit
        // runs handlers in reverse order). Seen on the H100: with the stages read from the
        // disk cache, the first compile of the process was the tier-up's, its destructors ran
        // while it compiled, and glibc aborted. A tiny kernel compiled here first settles that.
        warm_up_compiler(&job.ctx, job.program.precision);
        // Counted before the thread exists, so an exit that begins at any moment from here on
        // waits for it.
        let Some(in_driver) = ExitGuard::enter() else {
            return; // the process is exiting
        };
        let single = self.single.clone();
        std::thread::spawn(move || {
            let _in_driver = in_driver;
            let t = Instant::now();
            let entry = (job.text.as_str(), ptx::KERNEL_NAME);
            if let Ok(l) = load_entry(&job.ctx, &job.program, entry, job.cache_dir.as_deref()) {
                let _ = single.set((l, t.elapsed()));
            }
        });
    }

    /// Whether the single kernel is ready, starting its compile if it was not started and
    /// waiting up to `timeout`.
    pub(crate) fn wait(&self, timeout: Duration) -> bool {
        self.start();
        let start = Instant::now();
        while self.single.get().is_none() {
            if start.elapsed() > timeout || self.policy == TierUpPolicy::Never {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        true
    }
}

/// Runs the driver's compiler once in this process (on a kernel of two loads and two stores),
/// so that what it registers to run at exit is registered. Errors are ignored: the tier-up is
/// an optimization, and a driver that cannot compile this cannot compile the single kernel.
fn warm_up_compiler(ctx: &Arc<CudaContext>, precision: Precision) {
    static WARM: std::sync::Once = std::sync::Once::new();
    WARM.call_once(|| {
        use crate::scalar::{Bound, Inst, Value};
        let tiny = Program {
            precision,
            var_names: vec!["x".to_string()],
            insts: vec![
                Inst::Input {
                    var: 0,
                    bound: Bound::Lo,
                },
                Inst::Input {
                    var: 0,
                    bound: Bound::Hi,
                },
            ],
            outputs: vec![(Value(0), Value(1))],
        };
        if let Ok(text) = ptx::try_emit(&tiny) {
            let _ = super::link::link_cubin(ctx, &[("ivjit_warm_up.ptx", &text)]);
        }
    });
}

/// Compiles in the driver on background threads, and whether the process is exiting.
static IN_DRIVER: Mutex<usize> = Mutex::new(0);
static LEFT_DRIVER: Condvar = Condvar::new();
static EXITING: AtomicBool = AtomicBool::new(false);

/// Held by a background compile while it is in the driver; the process's exit waits for it.
struct ExitGuard;

impl ExitGuard {
    /// `None` once the process has begun to exit (then no compile may start).
    fn enter() -> Option<ExitGuard> {
        static REGISTERED: std::sync::Once = std::sync::Once::new();
        REGISTERED.call_once(|| {
            // SAFETY: registers a plain function with no arguments; it only touches statics.
            // Registered after the CUDA driver was loaded and initialised, so it runs before
            // the driver's own teardown (exit runs handlers in reverse order; shared-library
            // destructors run last).
            unsafe {
                libc::atexit(wait_for_background_compiles);
            }
        });
        let mut n = IN_DRIVER.lock().unwrap_or_else(|p| p.into_inner());
        if EXITING.load(Ordering::SeqCst) {
            return None;
        }
        *n += 1;
        Some(ExitGuard)
    }
}

impl Drop for ExitGuard {
    fn drop(&mut self) {
        let mut n = IN_DRIVER.lock().unwrap_or_else(|p| p.into_inner());
        *n -= 1;
        LEFT_DRIVER.notify_all();
    }
}

/// The `atexit` handler: no background compile starts from now on, and the running ones finish.
extern "C" fn wait_for_background_compiles() {
    let mut n = IN_DRIVER.lock().unwrap_or_else(|p| p.into_inner());
    EXITING.store(true, Ordering::SeqCst);
    if *n > 0 && super::options::env::batch_trace() {
        eprintln!(
            "ivjit: exit waits for {} kernel compile(s) in the background",
            *n
        );
    }
    while *n > 0 {
        n = LEFT_DRIVER.wait(n).unwrap_or_else(|p| p.into_inner());
    }
}
