//! Tiers: what answers while a program's compiled code is on its way, and the background
//! compiles that bring it.
//!
//! The interpreter first: compiling the stages still takes most of a second (Prospero: 0.7-0.9 s
//! on 16 cores), so a program that has bytecode (no point calls) answers from the GPU
//! interpreter ([`super::interpreter`], one kernel for every program, the same bits) as soon as
//! its words are on the device, while the stages compile on threads of their own; a launch uses
//! the stages once they are ready. A launch too large for the interpreter to finish before the
//! stages would ([`INTERPRET_ELEMENTS`]) waits for them. A process that exits meanwhile waits only
//! for the stage compiles under way (no new one starts). `IVJIT_INTERPRETER=never` compiles the
//! stages before the first answer, as before; `only` never compiles them.
//!
//! Stages, then one kernel: the single kernel runs faster than the stages (no scratch traffic;
//! measured on an H100, Prospero on 2^24 boxes: stages 332 ms, single 306 ms in f64, 160 and
//! 61 ms in f32). So
//! once the stages have done enough work to say the process is a long-running one
//! ([`TIER_UP_WORK`]), the single kernel is compiled on a thread of its own and used from the
//! launch after it is ready ([`TierUp`]). A process that exits while that compile runs waits for
//! it: the driver's compiler running on while the process tears the driver down corrupts the
//! heap (seen on the H100: "double free or corruption" at exit), so an `atexit` handler holds the
//! exit until the compile thread is out of the driver. A process that never does that much work
//! (a CLI command evaluating a few boxes) never starts the compile and exits at once.
//!
//! Programs of [`INTERPRET_ABOVE`] to [`STAGED_ABOVE`] instructions without
//! point calls skip the stages: the interpreter answers while their single kernel compiles
//! ([`InterpretedFirst`]).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use cudarc::driver::{CudaContext, CudaFunction, CudaStream, DriverError};

use super::interpreter::Interpreted;
use super::load::{load_entry, Loaded};
use super::options::{InterpreterPolicy, TierUpPolicy};
use super::DiskCacheOutcome;
use crate::ptx;
use crate::scalar::{Precision, Program};

/// Programs of more scalar instructions than this are compiled as stages (`gpu::staged`).
pub const STAGED_ABOVE: usize = 4000;

/// The slower tiers of a program compiled as stages, which
/// [`GpuKernel::launch_tier_on`](super::GpuKernel::launch_tier_on) runs on demand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tier {
    /// The stages (`gpu::staged`).
    Stages,
    /// The GPU interpreter of the program's bytecode (`gpu::interpreter`).
    Interpreter,
}

/// Most elements one launch gives the interpreter while compiled code is on its way; a larger
/// launch waits for it. The interpreter takes about 3.7e-12 s per instruction and element (an
/// H200: Prospero, 31,398 instructions, at 8.5e6 boxes/s), the compile about 24 us per
/// instruction for stages (Prospero: 0.75 s on 16 threads) and 120-270 us for a single kernel
/// (412 instructions: 48 ms on the H200, 100-114 ms on an H100), so the interpreter finishes
/// first up to about 6.5 million elements whatever the program's length; 2^22 keeps a margin
/// (Prospero: 0.5 s of interpreter against about 0.65 s of compile left).
pub(crate) const INTERPRET_ELEMENTS: usize = 1 << 22;

/// Programs without point calls of more scalar instructions than this (and at most
/// [`STAGED_ABOVE`]) answer from the interpreter while their single kernel compiles on a
/// thread of its own ([`InterpretedFirst`]): the driver's JIT took 48 ms (H200) and 100-114 ms
/// (H100) for the 100-node expression's 412 instructions. 200 is a choice, not a measured
/// break-even: shorter programs (most tests' expressions among them) compile before the first
/// answer, so the compiled kernels stay the tested path there.
pub(crate) const INTERPRET_ABOVE: usize = 200;

/// Work the stages do before the single kernel is compiled (scalar instructions x elements
/// launched; `IVJIT_TIER_UP=auto`). 2^40 is about 0.7 s of the stages of Prospero on an H100
/// (1.6e12 instruction-elements per second), and about 90 frames of a 1024 x 1024 render of it:
/// by then the process has shown it runs long, and the single kernel's compile (7-15 s on
/// one core) pays back.
pub(crate) const TIER_UP_WORK: u64 = 1 << 40;

/// A program of [`INTERPRET_ABOVE`] to [`STAGED_ABOVE`] instructions without point calls: the
/// interpreter answers while its single kernel compiles on a thread of its own (started at
/// once), and the kernel takes every launch once it is ready.
pub(crate) struct InterpretedFirst {
    interpreter: Interpreted,
    /// The single kernel's compile.
    pub(crate) single: TierUp,
    /// Input and output arrays of the program.
    arrays: (usize, usize),
}

impl InterpretedFirst {
    /// Whether `program` answers from the interpreter first (the policy is not `Never`).
    pub(crate) fn wanted(program: &Program, interpreter: InterpreterPolicy) -> bool {
        (INTERPRET_ABOVE + 1..=STAGED_ABOVE).contains(&program.insts.len())
            && !program.has_point_calls()
            && interpreter != InterpreterPolicy::Never
    }

    /// The interpreter for `program` on `ctx`, and its single kernel (PTX `text`) compiling;
    /// `None` when the interpreter is not available (the caller compiles as usual).
    pub(crate) fn new(
        ctx: &Arc<CudaContext>,
        program: &Program,
        text: &str,
        cache_dir: Option<&std::path::Path>,
    ) -> Option<InterpretedFirst> {
        let began = Instant::now();
        let interpreter = Interpreted::new(ctx, program, cache_dir).ok()?;
        let single = TierUp::new(ctx, program, text, cache_dir, TierUpPolicy::Now);
        if super::env::stage_trace() {
            eprintln!(
                "ivjit interpreter: answers after {:.1} ms; the kernel compiles in the background",
                began.elapsed().as_secs_f64() * 1e3
            );
        }
        Some(InterpretedFirst {
            interpreter,
            single,
            arrays: (2 * program.n_vars(), program.n_output_arrays()),
        })
    }

    /// The interpreter's function (stands in for the kernel's, never launched as such).
    pub(crate) fn function(&self) -> CudaFunction {
        self.interpreter.function().clone()
    }

    /// What the disk cache did for the interpreter.
    pub(crate) fn disk(&self) -> DiskCacheOutcome {
        self.interpreter.disk()
    }

    /// The single kernel for a launch of `n` elements: the ready one, or, for a launch larger
    /// than [`INTERPRET_ELEMENTS`], the one waited for; `None`: the interpreter takes it.
    pub(crate) fn kernel_for(&self, n: usize) -> Option<&Loaded> {
        if n > INTERPRET_ELEMENTS {
            self.single.wait(Duration::from_secs(600));
        }
        self.single.ready()
    }

    /// Runs the program on the interpreter over a structure-of-arrays block.
    ///
    /// # Safety
    /// As for [`super::staged::StagedCode::launch_soa`].
    pub(crate) unsafe fn interpret_soa(
        &self,
        stream: &Arc<CudaStream>,
        n: usize,
        inputs: u64,
        outputs: u64,
    ) -> Result<(), DriverError> {
        let (n_in, n_out) = self.arrays;
        // SAFETY: as the caller vouches for the block.
        unsafe {
            self.interpreter
                .launch_soa(stream, n, n_in, n_out, inputs, outputs)
        }
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
    /// Whether the compile has ended (ready or failed) or will never start.
    ended: Arc<AtomicBool>,
}

impl TierUp {
    /// The tier-up of `program` (PTX `text`) on `ctx`; starts the compile at once when the
    /// policy says so.
    pub(crate) fn new(
        ctx: &Arc<CudaContext>,
        program: &Program,
        text: &str,
        cache_dir: Option<&std::path::Path>,
        policy: TierUpPolicy,
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
            policy,
            single: Arc::new(OnceLock::new()),
            ended: Arc::new(AtomicBool::new(false)),
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
            self.ended.store(true, Ordering::SeqCst);
            return; // the process is exiting
        };
        let (single, ended) = (self.single.clone(), self.ended.clone());
        std::thread::spawn(move || {
            let _in_driver = in_driver;
            let t = Instant::now();
            let entry = (job.text.as_str(), ptx::KERNEL_NAME);
            if let Ok(l) = load_entry(&job.ctx, &job.program, entry, job.cache_dir.as_deref()) {
                let _ = single.set((l, t.elapsed()));
            }
            ended.store(true, Ordering::SeqCst);
        });
    }

    /// Whether the single kernel is ready, starting its compile if it was not started and
    /// waiting up to `timeout`.
    pub(crate) fn wait(&self, timeout: Duration) -> bool {
        self.start();
        self.policy != TierUpPolicy::Never
            && wait_for(&self.single, || !self.ended.load(Ordering::SeqCst), timeout)
    }
}

/// Whether `cell` is set, waiting up to `timeout` while `running()` says a background compile
/// will still set it (polled every millisecond); false at once when none is running.
pub(crate) fn wait_for<T>(
    cell: &OnceLock<T>,
    running: impl Fn() -> bool,
    timeout: Duration,
) -> bool {
    let start = Instant::now();
    loop {
        // Read before the check: a compile that ends in between has set the cell.
        let running = running();
        if cell.get().is_some() {
            return true;
        }
        if !running || start.elapsed() > timeout {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Runs the driver's compiler once in this process (on a kernel of two loads and two stores),
/// so that what it registers to run at exit is registered. Errors are ignored: the tier-up is
/// an optimization, and a driver that cannot compile this cannot compile the single kernel.
pub(crate) fn warm_up_compiler(ctx: &Arc<CudaContext>, precision: Precision) {
    static WARM: std::sync::Once = std::sync::Once::new();
    WARM.call_once(|| {
        let mut b = crate::scalar::Builder::new(precision, vec!["x".to_string()]);
        let lo = b.input(0, crate::scalar::Bound::Lo);
        let hi = b.input(0, crate::scalar::Bound::Hi);
        let tiny = b.finish(vec![(lo, hi)]);
        if let Ok(text) = ptx::try_emit(&tiny) {
            let _ = super::link::link_cubin(ctx, &[("ivjit_warm_up.ptx", &text)]);
        }
    });
}

/// Compiles in the driver on background threads, and whether the process is exiting.
static IN_DRIVER: Mutex<usize> = Mutex::new(0);
static LEFT_DRIVER: Condvar = Condvar::new();
pub(crate) static EXITING: AtomicBool = AtomicBool::new(false);

/// Held by a background compile while it is in the driver; the process's exit waits for it.
pub(crate) struct ExitGuard;

impl ExitGuard {
    /// `None` once the process has begun to exit (then no compile may start).
    pub(crate) fn enter() -> Option<ExitGuard> {
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
    if *n > 0 && super::env::batch_trace() {
        eprintln!(
            "ivjit: exit waits for {} kernel compile(s) in the background",
            *n
        );
    }
    while *n > 0 {
        n = LEFT_DRIVER.wait(n).unwrap_or_else(|p| p.into_inner());
    }
}
