//! Compiled kernels: one per device ([`DeviceKernel`]: module, launch shape, staging pool) and
//! the multi-device kernel users hold ([`GpuKernel`]).

use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::{sys, CudaContext, CudaFunction, DriverError, LaunchConfig};

use super::load::{load_entry, load_entry_if};
use super::options::Policies;
use super::tiers::Tier;
use super::{
    batch, cache, context, default_devices, detect, pin, Context, DiskCacheOutcome, GpuError,
    HostTransfer, InterpreterPolicy, KernelOptions, KernelSource,
};
use crate::ptx;
use crate::scalar::{Precision, Program};
use cudarc::driver::{CudaStream, PushKernelArg};

/// Largest staging size (inputs + outputs of one chunk, bytes) of one slot: two slots per
/// device, each with this much device memory and pinned host memory.
pub(crate) const MAX_CHUNK_BYTES: usize = 64 << 20;

/// Fraction of the free device memory the staging buffers of one batch may take (1/4).
pub(crate) const FREE_MEMORY_DIVISOR: usize = 4;

/// Below this many elements per device, a batch is not split further across devices.
pub(crate) const MIN_ELEMENTS_PER_DEVICE: usize = 1 << 16;

/// Pipelines kept for reuse per device kernel.
pub(crate) const POOL_SIZE: usize = 4;

/// A kernel loaded on one device, with its launch shape and a pool of staging pipelines. A
/// program too long to compile as one kernel is loaded as stages (`staged`, module
/// [`super::staged`]); `function` is then unused.
pub(crate) struct DeviceKernel {
    pub(crate) ordinal: usize,
    pub(crate) ctx: Arc<CudaContext>,
    pub(crate) function: CudaFunction,
    /// Threads per block (`cuOccupancyMaxPotentialBlockSize`).
    block: u32,
    /// Blocks that fill the device: SMs x resident blocks per SM at `block` threads.
    max_grid: u32,
    disk: DiskCacheOutcome,
    /// The stages, and the single kernel once it is compiled ([`super::tiers::TierUp`]).
    pub(crate) staged: Option<super::staged::StagedCode>,
    /// A program that answers from the interpreter while its kernel compiles
    /// ([`super::tiers::InterpretedFirst`]).
    pub(crate) first: Option<super::tiers::InterpretedFirst>,
    pool: Mutex<Vec<batch::Pipeline>>,
    /// What device-resident searches keep on this device between calls.
    pub(crate) kept: KeptBySearch,
}

/// What device-resident searches keep between calls on one device (streams, device buffers,
/// page-locked memory), one value per type: a call takes it and puts it back, so that a
/// search allocates once per evaluator, not once per call (with its buffers kept and its hits read
/// in parallel, a 1024² depth map's host work fell from about 45 to 11 ms on an H200,
/// docs/gpu-runs.md runs 56-58). Two
/// calls at once: the second makes its own, and the first put back is kept.
#[derive(Default)]
pub(crate) struct KeptBySearch(Mutex<Vec<Box<dyn std::any::Any + Send>>>);

impl KeptBySearch {
    /// The value of type `T` kept, taken out; None if there is none.
    pub(crate) fn take<T: std::any::Any + Send>(&self) -> Option<T> {
        let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let i = kept.iter().position(|b| b.is::<T>())?;
        kept.swap_remove(i).downcast::<T>().ok().map(|b| *b)
    }

    /// Keeps `value` for the next call (unless one of its type is already kept).
    pub(crate) fn put<T: std::any::Any + Send>(&self, value: T) {
        let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if !kept.iter().any(|b| b.is::<T>()) {
            kept.push(Box::new(value));
        }
    }
}

impl batch::ChunkKernel for DeviceKernel {
    fn ordinal(&self) -> usize {
        self.ordinal
    }
    fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }
    unsafe fn launch_chunk(
        &self,
        stream: &Arc<CudaStream>,
        n: usize,
        inputs: u64,
        outputs: u64,
    ) -> Result<(), DriverError> {
        // SAFETY: the trait's contract is `launch_soa`'s.
        unsafe { self.launch_soa(stream, n, inputs, outputs) }
    }
}

/// The in-process kernel cache (`cache::Memo`): one kernel per PTX text, precision, device and
/// policies.
type KernelMemo = cache::Memo<(u64, Precision, usize, Policies), DeviceKernel>;

fn kernels() -> &'static KernelMemo {
    static MEMO: OnceLock<KernelMemo> = OnceLock::new();
    MEMO.get_or_init(KernelMemo::new)
}

/// Number of kernels held by the in-process cache (for tests and diagnostics).
pub fn in_process_len() -> usize {
    kernels().len()
}

impl DeviceKernel {
    pub(crate) fn launch_config(&self, m: usize) -> LaunchConfig {
        batch::launch_config(self.block, self.max_grid, m)
    }

    /// Compiles (or reads from the disk cache) and loads `text` on `ordinal`; a program longer
    /// than [`super::STAGED_ABOVE`] instructions as stages instead (`text` is then
    /// only the cache's name for it).
    fn build(
        ordinal: usize,
        program: &Program,
        (text, entry): (&str, &str),
        cache_dir: Option<&std::path::Path>,
        policies: Policies,
    ) -> Result<DeviceKernel, GpuError> {
        let ctx = context(ordinal)?;
        let mut loaded = None;
        // Interpreter only: every program the interpreter can run is staged without stages
        // (the interpreter answers every launch).
        let only = policies.interpreter == InterpreterPolicy::Only && !program.has_point_calls();
        if entry == ptx::KERNEL_NAME && (only || super::staged::wanted(program)) {
            // Tiering: the single kernel if an earlier process compiled it (disk cache), else
            // the stages now (a second or less); the single kernel is compiled on a thread of
            // its own once the stages have done enough work (`staged::TierUp`), and used from
            // the launch after it is ready (it runs faster: no scratch traffic).
            if !only {
                loaded = load_entry_if(&ctx, program, (text, entry), cache_dir, false, None)?;
            }
            if loaded.is_none() {
                let staged =
                    super::staged::StagedCode::build(&ctx, program, text, cache_dir, policies)?;
                // The first stage stands in for the single kernel's function (never launched
                // as such: `launch_soa` runs the stages or the tiered-up kernel).
                let first = staged.first_function();
                return Ok(DeviceKernel {
                    ordinal,
                    ctx,
                    function: first,
                    block: 0,
                    max_grid: 0,
                    disk: staged.disk(),
                    staged: Some(staged),
                    first: None,
                    pool: Mutex::new(Vec::new()),
                    kept: KeptBySearch::default(),
                });
            }
        }
        if entry == ptx::KERNEL_NAME
            && loaded.is_none()
            && super::tiers::InterpretedFirst::wanted(program, policies.interpreter)
        {
            // The kernel from the disk cache if an earlier process compiled it; else the
            // interpreter answers while it compiles on a thread of its own.
            loaded = load_entry_if(&ctx, program, (text, entry), cache_dir, false, None)?;
            if loaded.is_none() {
                if let Some(first) =
                    super::tiers::InterpretedFirst::new(&ctx, program, text, cache_dir)
                {
                    return Ok(DeviceKernel {
                        ordinal,
                        ctx,
                        function: first.function(),
                        block: 0,
                        max_grid: 0,
                        disk: first.disk(),
                        staged: None,
                        first: Some(first),
                        pool: Mutex::new(Vec::new()),
                        kept: KeptBySearch::default(),
                    });
                }
            }
        }
        let loaded = match loaded {
            Some(l) => l,
            None => load_entry(&ctx, program, (text, entry), cache_dir)?,
        };
        Ok(DeviceKernel {
            ordinal,
            ctx,
            function: loaded.function,
            block: loaded.block,
            max_grid: loaded.max_grid,
            disk: loaded.disk,
            staged: None,
            first: None,
            pool: Mutex::new(Vec::new()),
            kept: KeptBySearch::default(),
        })
    }

    /// Launches the expression on `stream` over a structure-of-arrays block in device memory:
    /// `n` elements, `2 * n_vars` input arrays of `n` from `inputs`,
    /// [`Program::n_output_arrays`] output arrays of `n` from `outputs` (the batch kernel's ABI). A staged program runs its stages
    /// through scratch memory allocated on the stream.
    ///
    /// # Safety
    /// The addresses must be valid device memory of this context for those sizes until the
    /// stream has run the launch; the outputs must not overlap the inputs.
    pub(crate) unsafe fn launch_soa(
        &self,
        stream: &Arc<CudaStream>,
        n: usize,
        inputs: u64,
        outputs: u64,
    ) -> Result<(), DriverError> {
        // The single kernel when it is ready (a program that answers from the interpreter or
        // from stages meanwhile hands those the launch).
        let single = match (&self.first, &self.staged) {
            (Some(first), _) => match first.kernel_for(n) {
                Some(l) => Some(l),
                // SAFETY: as the caller vouches for the block.
                None => return unsafe { first.interpret_soa(stream, n, inputs, outputs) },
            },
            (None, Some(staged)) => match staged.tier_up.ready() {
                Some(l) => Some(l),
                // SAFETY: as the caller vouches for the block.
                None => return unsafe { staged.launch_soa(stream, n, inputs, outputs) },
            },
            (None, None) => None,
        };
        let (function, cfg) = match single {
            Some(l) => (&l.function, batch::launch_config(l.block, l.max_grid, n)),
            None => (&self.function, self.launch_config(n)),
        };
        let (n_arg, flags) = (n as u64, 0u64);
        let mut launch = stream.launch_builder(function);
        launch.arg(&n_arg).arg(&inputs).arg(&outputs).arg(&flags);
        // SAFETY: the kernel takes (u64 n, u64 inputs, u64 outputs, u64 flags) and reads and
        // writes exactly the arrays the caller vouches for.
        unsafe { launch.launch(cfg) }.map(|_| ())
    }

    /// Runs `tier` of a program compiled as stages even when faster code is ready (for timing
    /// each: `ivjit bench`); false (nothing launched) for a program compiled as one kernel, or
    /// without that tier.
    ///
    /// # Safety
    /// As for [`DeviceKernel::launch_soa`].
    pub(crate) unsafe fn launch_tier(
        &self,
        tier: Tier,
        stream: &Arc<CudaStream>,
        n: usize,
        inputs: u64,
        outputs: u64,
    ) -> Result<bool, DriverError> {
        let Some(staged) = &self.staged else {
            return Ok(false);
        };
        // SAFETY: as the caller vouches for the block.
        unsafe { staged.launch_tier_soa(tier, stream, n, inputs, outputs) }
    }

    /// Elements per chunk for a share of `len` elements.
    fn chunk_for(&self, len: usize, bytes_per_element: usize, forced: Option<usize>) -> usize {
        if let Some(c) = forced {
            return c.max(1);
        }
        let bpe = bytes_per_element.max(1);
        // If the query fails, size by the cap alone: an allocation failure is handled below.
        let by_memory = match self.ctx.mem_get_info() {
            Ok((free, _)) => free / FREE_MEMORY_DIVISOR / 2 / bpe,
            Err(_) => usize::MAX,
        };
        by_memory.min(MAX_CHUNK_BYTES / bpe).min(len).max(1)
    }

    /// Runs elements `range` of `job` on this device (see module `batch`).
    fn run(
        &self,
        job: &batch::Job<'_>,
        range: (usize, usize),
        outs: &mut [&mut [f64]],
    ) -> Result<(), GpuError> {
        let (precision, n_in, forced_chunk) = (job.precision, job.n_in, job.forced_chunk);
        let size = match precision {
            Precision::F64 => 8,
            Precision::F32 => 4,
        };
        let len = range.1 - range.0;
        let mut chunk = self.chunk_for(len, (n_in + outs.len()) * size, forced_chunk);
        let pooled = {
            let mut pool = self.pool.lock().unwrap_or_else(|p| p.into_inner());
            let fits = |p: &batch::Pipeline| match forced_chunk {
                Some(c) => p.chunk() == c.max(1),
                None => p.chunk() >= chunk,
            };
            pool.iter().position(fits).map(|i| pool.swap_remove(i))
        };
        let mut pipeline = match pooled {
            Some(p) => p,
            None => loop {
                let made = match precision {
                    Precision::F64 => batch::Slots::new(&self.ctx, chunk, n_in, outs.len())
                        .map(batch::Pipeline::F64),
                    Precision::F32 => batch::Slots::new(&self.ctx, chunk, n_in, outs.len())
                        .map(batch::Pipeline::F32),
                };
                match made {
                    Ok(p) => break p,
                    // Out of memory (device or pinned host): halve the chunk and try again,
                    // unless the size was forced or is already small.
                    Err(e)
                        if e.0 == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY
                            && forced_chunk.is_none()
                            && chunk > 1024 =>
                    {
                        chunk /= 2;
                    }
                    Err(source) => {
                        return Err(GpuError::Batch {
                            device: self.ordinal,
                            chunk: 0,
                            step: "allocating the staging buffers",
                            source,
                        })
                    }
                }
            },
        };
        let result = match &mut pipeline {
            batch::Pipeline::F64(s) => s.run(self, job, range, outs),
            batch::Pipeline::F32(s) => s.run(self, job, range, outs),
        };
        // After an error the streams may be unusable: drop the pipeline instead of pooling it.
        if result.is_ok() {
            let mut pool = self.pool.lock().unwrap_or_else(|p| p.into_inner());
            if pool.len() < POOL_SIZE {
                pool.push(pipeline);
            }
        }
        result
    }
}

/// A program that reads every input of `program` and computes nothing: as a kernel over device
/// arrays, the check of a batch's inputs.
fn inputs_only(program: &Program) -> Program {
    let insts = (0..program.n_vars() as u32)
        .flat_map(|var| {
            [crate::scalar::Bound::Lo, crate::scalar::Bound::Hi]
                .map(|bound| crate::scalar::Inst::Input { var, bound })
        })
        .collect();
    Program {
        precision: program.precision,
        var_names: program.var_names.clone(),
        insts,
        outputs: Vec::new(),
        code_outputs: 0,
    }
}

/// A scalar program compiled for one or more devices.
pub struct GpuKernel {
    precision: Precision,
    n_vars: usize,
    n_outputs: usize,
    ptx: Arc<str>,
    devices: Vec<Arc<DeviceKernel>>,
    chunk_elements: Option<usize>,
    host_transfer: HostTransfer,
    /// The program, for the kernel over device arrays, built on first use
    /// ([`GpuKernel::eval_device`]).
    program: Arc<Program>,
    cache_dir: Option<std::path::PathBuf>,
    /// The policies its device kernels were built with (the arrays kernel's too).
    policies: Policies,
    arrays: Mutex<Option<Arc<DeviceKernel>>>,
}

impl fmt::Debug for GpuKernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GpuKernel")
            .field("precision", &self.precision)
            .field("n_vars", &self.n_vars)
            .field("n_outputs", &self.n_outputs)
            .field("ptx_bytes", &self.ptx.len())
            .field("devices", &self.device_ordinals())
            .finish_non_exhaustive()
    }
}

/// How a kernel is launched on one device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchShape {
    /// Device ordinal.
    pub ordinal: usize,
    /// Threads per block (from `cuOccupancyMaxPotentialBlockSize`).
    pub block: u32,
    /// Largest grid: multiprocessors x resident blocks per multiprocessor.
    pub max_grid: u32,
}

impl GpuKernel {
    /// Emits the PTX of `program` and loads it on every device of [`default_devices`] (every
    /// visible device, or `IVJIT_DEVICES`). A program with point calls is linked with the
    /// runtime of the functions it calls (NVRTC, cached on disk: see [`runtime`](super::runtime)); errors carry
    /// NVRTC's or the linker's log. Kernels are cached in the process and on disk ([`cache`]):
    /// a repeated program costs no compilation.
    pub fn new(program: &Program) -> Result<GpuKernel, GpuError> {
        GpuKernel::with_options(program, &KernelOptions::default())
    }

    /// [`GpuKernel::new`] with explicit devices, cache folder and chunk size.
    pub fn with_options(program: &Program, options: &KernelOptions) -> Result<GpuKernel, GpuError> {
        let source = KernelSource::new(program).map_err(GpuError::InvalidProgram)?;
        GpuKernel::from_source(program, &source, options)
    }

    /// [`GpuKernel::with_options`] with the PTX already emitted: `source` must be
    /// [`KernelSource::new`] of `program` (an [`crate::Expression`] keeps one per precision, so
    /// that a second evaluator of it neither emits nor hashes the text again). Not public: a
    /// source of another program would launch a kernel that reads arrays the batch does not
    /// have.
    pub(crate) fn from_source(
        program: &Program,
        source: &KernelSource,
        options: &KernelOptions,
    ) -> Result<GpuKernel, GpuError> {
        let text = source.text();
        detect()?;
        let ordinals = match &options.devices {
            Some(d) if d.is_empty() => {
                return Err(GpuError::Devices("the device list is empty".to_string()))
            }
            Some(d) => d.clone(),
            None => default_devices()?,
        };
        let dir = options.cache_dir.resolve();
        let policies = Policies::of(options);
        let mut devices = Vec::with_capacity(ordinals.len());
        for &ordinal in &ordinals {
            let build = || {
                DeviceKernel::build(
                    ordinal,
                    program,
                    (text, ptx::KERNEL_NAME),
                    dir.as_deref(),
                    policies,
                )
                .map(Arc::new)
            };
            devices.push(if options.memory_cache {
                kernels().get_or_build(
                    (source.hash(), program.precision, ordinal, policies),
                    &source.shared_text(),
                    build,
                )?
            } else {
                build()?
            });
        }
        let chunk_elements = options.chunk_elements.or_else(super::env::chunk_elements);
        let host_transfer = match options.host_transfer {
            Some(t) => t,
            None => match super::env::host_transfer() {
                Some(text) => HostTransfer::parse(&text)?,
                None => HostTransfer::Auto,
            },
        };
        Ok(GpuKernel {
            precision: program.precision,
            n_vars: program.n_vars(),
            n_outputs: program.outputs.len(),
            ptx: source.shared_text(),
            devices,
            chunk_elements,
            host_transfer,
            program: Arc::new(program.clone()),
            cache_dir: dir,
            policies,
            arrays: Mutex::new(None),
        })
    }

    /// The kernel on the first selected device: what a device-resident search launches
    /// (a search runs on one device).
    pub(crate) fn primary(&self) -> &DeviceKernel {
        &self.devices[0]
    }

    /// The kernel on each selected device, the first's first: what a search split among the
    /// devices launches.
    pub(crate) fn device_kernels(&self) -> &[Arc<DeviceKernel>] {
        &self.devices
    }

    /// The PTX this kernel was loaded from.
    pub fn ptx(&self) -> &str {
        &self.ptx
    }

    /// The precision the kernel computes in.
    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// The device ordinals batches are split across, in order.
    pub fn device_ordinals(&self) -> Vec<usize> {
        self.devices.iter().map(|d| d.ordinal).collect()
    }

    /// The launch shape on each device.
    pub fn launch_shapes(&self) -> Vec<LaunchShape> {
        self.devices
            .iter()
            .map(|d| LaunchShape {
                ordinal: d.ordinal,
                block: d.block,
                max_grid: d.max_grid,
            })
            .collect()
    }

    /// What the disk cache did on each device when this kernel's code was first loaded (a
    /// kernel from the in-process cache reports what happened then).
    pub fn disk_cache_outcomes(&self) -> Vec<DiskCacheOutcome> {
        self.devices.iter().map(|d| d.disk.clone()).collect()
    }

    /// Whether `self` and `other` run the same loaded code (the in-process cache gave both).
    pub fn shares_code_with(&self, other: &GpuKernel) -> bool {
        self.devices.len() == other.devices.len()
            && self
                .devices
                .iter()
                .zip(&other.devices)
                .all(|(a, b)| Arc::ptr_eq(a, b))
    }

    /// The forced chunk size, if any.
    pub fn chunk_elements(&self) -> Option<usize> {
        self.chunk_elements
    }

    /// Forces the number of elements per chunk (`None`: sized from free device memory).
    pub fn set_chunk_elements(&mut self, chunk: Option<usize>) {
        self.chunk_elements = chunk.map(|c| c.max(1));
    }

    /// How batches cross between host and device.
    pub fn host_transfer(&self) -> HostTransfer {
        self.host_transfer
    }

    /// Sets how batches cross between host and device.
    pub fn set_host_transfer(&mut self, transfer: HostTransfer) {
        self.host_transfer = transfer;
    }

    /// Evaluates the program on `n` elements. `inputs` holds `2 * n_vars * n` values in the
    /// structure-of-arrays layout of the kernel ABI (array `2*var` = lo bounds of `var`, array
    /// `2*var+1` = hi bounds, each `n` long); the result holds `2 * n_outputs * n` values laid
    /// out the same way. For f32 programs the values are converted with `as f32` on the way in
    /// (the caller guarantees they are f32 values) and widened exactly on the way out.
    ///
    /// Any `n` works: the batch is split across the kernel's devices (contiguous ranges, one
    /// host thread per device) and streamed through each in chunks sized from the free device
    /// memory (at most 64 MiB of inputs + outputs per chunk, or [`GpuKernel::set_chunk_elements`]),
    /// with pinned staging buffers and two streams so that copies overlap compute. An error on
    /// any device or chunk is returned ([`GpuError::Batch`] names them); no partial result is.
    pub fn eval(&self, inputs: &[f64], n: usize) -> Result<Vec<f64>, GpuError> {
        let out_len = n
            .checked_mul(2 * self.n_outputs)
            .ok_or(GpuError::TooLarge { n })?;
        let mut out = vec![0.0f64; out_len];
        self.eval_into(inputs, n, &mut out)?;
        Ok(out)
    }

    /// Evaluates `n` boxes whose bounds are already in the memory of the kernel's first device,
    /// in arrays anywhere there (the arrays of other libraries: CuPy, PyTorch, which allocate
    /// in the device's primary context, as this crate does): `inputs` holds the addresses of the
    /// lo and hi arrays of each variable (`2 * n_vars`), `outputs` those of each output
    /// (`2 * n_outputs`), each of `n` elements of the kernel's precision. One launch of a
    /// kernel built for this on first use (`ptx::try_emit_arrays_kernel`: the batch kernel's
    /// instructions, so the same bits), on the device's default stream; returns when it has
    /// finished. The same pass checks every input pair: `Ok(false)` when some pair is not an
    /// interval bound (lo > hi, a single NaN, lo = +inf or hi = -inf), and then the outputs
    /// hold no meaningful values.
    ///
    /// # Safety
    /// Every address must be a device address in the primary context of the kernel's first
    /// device, valid for `n` elements until this returns; the outputs must not overlap each
    /// other or the inputs.
    pub unsafe fn eval_device(
        &self,
        inputs: &[u64],
        outputs: &[u64],
        n: usize,
    ) -> Result<bool, GpuError> {
        crate::shape::check_columns(
            self.n_vars,
            self.n_outputs,
            &vec![n; inputs.len()],
            &vec![n; outputs.len()],
        )?;
        if n == 0 || self.n_outputs == 0 {
            return Ok(true);
        }
        let dk = self.arrays_kernel()?;
        dk.ctx
            .bind_to_thread()
            .during("binding the device's context")?;
        let stream = dk.ctx.default_stream();
        // The device's layout of the outputs: a code output's lo array only
        // (`Program::output_arrays`); its hi is copied from it at the end.
        let all = outputs;
        let outputs: Vec<u64> = self
            .program
            .output_array_hosts()
            .into_iter()
            .map(|k| all[k])
            .collect();
        // A staged program: `dk` only checks the inputs; the stages compute, in the same
        // stream, and their results are discarded with the status if an input was invalid.
        let staged = self.devices[0].staged.as_ref();
        let table: Vec<u64> = match staged {
            Some(_) => inputs.to_vec(),
            None => inputs.iter().chain(&outputs).copied().collect(),
        };
        let table = stream
            .clone_htod(&table)
            .during("uploading the arrays' addresses")?;
        let mut status = stream
            .alloc_zeros::<u32>(1)
            .during("allocating the status word")?;
        let cfg = dk.launch_config(n);
        let n_arg = n as u64;
        let mut launch = stream.launch_builder(&dk.function);
        launch.arg(&n_arg).arg(&table).arg(&mut status);
        // SAFETY: the kernel takes (u64 n, u64 table, u64 status), reads the table's
        // 2 * n_vars + n_output_arrays addresses, reads and writes n elements at each (the caller
        // vouches for them), and may write the status word.
        unsafe { launch.launch(cfg) }.during("launching the kernel")?;
        if let Some(staged) = staged {
            // Device arrays go through the stages (or the interpreter) even after the tier-up
            // (the single kernel reads one block, not separate arrays); the stages' launches
            // count towards it all the same.
            let elem = staged.elem() as u64;
            let input = |k: usize, at: usize| inputs[k] + at as u64 * elem;
            let output = |k: usize, at: usize| outputs[k] + at as u64 * elem;
            // SAFETY: the caller vouches for the arrays (n elements at each address).
            unsafe { staged.launch(&stream, n, &input, &output) }.during("launching the stages")?;
        }
        let elem = match self.precision {
            Precision::F64 => 8,
            Precision::F32 => 4,
        };
        for j in self.n_outputs - self.program.code_outputs..self.n_outputs {
            // SAFETY: the caller vouches for both arrays (n elements each, apart); the copy
            // runs on the stream after the kernel that wrote the lo array.
            unsafe {
                cudarc::driver::result::memcpy_dtod_async(
                    all[2 * j + 1],
                    all[2 * j],
                    n * elem,
                    stream.cu_stream(),
                )
            }
            .during("copying a code output")?;
        }
        let status = stream
            .clone_dtoh(&status)
            .during("waiting for the kernel")?;
        Ok(status[0] == 0)
    }

    /// Launches the kernel (or, for a program compiled as stages, its stages) on `stream` over
    /// a structure-of-arrays block in the memory of the first device, without waiting: `n`
    /// elements, `2 * n_vars` arrays of `n` from `inputs` (lo then hi of each variable),
    /// [`Program::n_output_arrays`] from `outputs` (device memory holds one array per code
    /// output, [`Program::output_arrays`]). For timing what a batch runs (`ivjit bench`); the
    /// inputs are not checked.
    ///
    /// # Safety
    /// `stream` must belong to the first device's primary context; the addresses must be valid
    /// device memory there for those sizes until the stream has run the launch, the outputs
    /// apart from the inputs.
    pub unsafe fn launch_on(
        &self,
        stream: &Arc<CudaStream>,
        n: usize,
        inputs: u64,
        outputs: u64,
    ) -> Result<(), GpuError> {
        // SAFETY: as the caller vouches.
        unsafe { self.devices[0].launch_soa(stream, n, inputs, outputs) }
            .during("launching the kernel")
    }

    /// How many kernels one evaluation of a batch launches: 1, or the number of stages of a
    /// program too long to compile quickly as one kernel (see `gpu::staged`) until its single
    /// kernel, compiled on a thread of its own, is ready.
    pub fn stages(&self) -> usize {
        match &self.devices[0].staged {
            Some(s) if s.tier_up.ready().is_none() => s.len(),
            _ => 1,
        }
    }

    /// For a program compiled as stages, or answering from the interpreter first, whose single
    /// kernel is ready on the first device: how long that kernel's compile took.
    pub fn single_kernel_compile_time(&self) -> Option<std::time::Duration> {
        let d = &self.devices[0];
        match (&d.staged, &d.first) {
            (Some(s), _) => s.tier_up.compile_time(),
            (None, Some(f)) => f.single.compile_time(),
            (None, None) => None,
        }
    }

    /// For a program compiled as stages: the stages' count, whatever the single kernel's
    /// state (`None` for a program compiled as one kernel).
    pub fn staged(&self) -> Option<usize> {
        self.devices[0].staged.as_ref().map(|s| s.len())
    }

    /// Compiles the single kernel of a program compiled as stages now (on a thread of its own
    /// per device, unless that started before or `IVJIT_TIER_UP=never`) and waits up to
    /// `timeout` for it; true when every device runs it (or the program was never staged). A
    /// program that answers from the interpreter while its kernel compiles (more than 200
    /// instructions, `gpu::staged::InterpretedFirst`) waits for that kernel the same way.
    pub fn wait_for_single_kernel(&self, timeout: std::time::Duration) -> bool {
        fn tier_up(d: &DeviceKernel) -> Option<&super::tiers::TierUp> {
            d.staged
                .as_ref()
                .map(|s| &s.tier_up)
                .or(d.first.as_ref().map(|f| &f.single))
        }
        for d in &self.devices {
            if let Some(t) = tier_up(d) {
                t.start();
            }
        }
        self.devices
            .iter()
            .all(|d| tier_up(d).is_none_or(|t| t.wait(timeout)))
    }

    /// [`GpuKernel::launch_on`] through `tier` of a program compiled as stages (the stages, or
    /// the GPU interpreter `gpu::interpreter`), even when faster code is ready; false (nothing
    /// launched) for a program compiled as one kernel or without that tier (no bytecode).
    ///
    /// # Safety
    /// As for [`GpuKernel::launch_on`].
    pub unsafe fn launch_tier_on(
        &self,
        tier: Tier,
        stream: &Arc<CudaStream>,
        n: usize,
        inputs: u64,
        outputs: u64,
    ) -> Result<bool, GpuError> {
        // SAFETY: as the caller vouches.
        unsafe { self.devices[0].launch_tier(tier, stream, n, inputs, outputs) }.during(
            match tier {
                Tier::Stages => "launching the stages",
                Tier::Interpreter => "launching the interpreter",
            },
        )
    }

    /// For a program compiled as stages: waits up to `timeout` for every device's stages
    /// (compiled in the background while the interpreter answers) and says how long after the
    /// first device's build began they were ready; `None` when they are not ready by then, are
    /// never compiled (`IVJIT_INTERPRETER=only`) or the program is compiled as one kernel.
    pub fn wait_for_stages(&self, timeout: std::time::Duration) -> Option<std::time::Duration> {
        let all = self.devices.iter().all(|d| {
            d.staged
                .as_ref()
                .is_some_and(|s| s.wait_for_stages(timeout))
        });
        if !all {
            return None;
        }
        self.devices[0].staged.as_ref()?.stages_ready_after()
    }

    /// The kernel over device arrays on the first device, built (or read from the disk cache)
    /// on first use.
    fn arrays_kernel(&self) -> Result<Arc<DeviceKernel>, GpuError> {
        let mut slot = self.arrays.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(dk) = &*slot {
            return Ok(dk.clone());
        }
        // A staged program's arrays kernel only checks the inputs (the stages compute): the
        // whole program as one kernel would take the compile time the stages avoid.
        let checked_only;
        let program = match self.devices[0].staged {
            Some(_) => {
                checked_only = inputs_only(&self.program);
                &checked_only
            }
            None => &*self.program,
        };
        let text = ptx::try_emit_arrays_kernel(program).map_err(GpuError::InvalidProgram)?;
        let dk = Arc::new(DeviceKernel::build(
            self.devices[0].ordinal,
            program,
            (&text, ptx::ARRAYS_KERNEL_NAME),
            self.cache_dir.as_deref(),
            self.policies,
        )?);
        *slot = Some(dk.clone());
        Ok(dk)
    }

    /// [`GpuKernel::eval`] into the caller's `out` (`2 * n_outputs * n` values, same layout),
    /// for callers that reuse their output memory batch after batch: a fresh output array costs
    /// the operating system's page faults on first touch, and a [`HostBuffer`](super::HostBuffer) is locked once
    /// instead of per call. On an error `out` holds no meaningful values.
    pub fn eval_into(&self, inputs: &[f64], n: usize, out: &mut [f64]) -> Result<(), GpuError> {
        crate::shape::check_soa(self.n_vars, self.n_outputs, n, inputs.len(), out.len())?;
        if n == 0 {
            return Ok(());
        }
        let inputs: Vec<&[f64]> = inputs.chunks(n).collect();
        let mut outs: Vec<&mut [f64]> = out.chunks_mut(n).collect();
        self.eval_columns(&inputs, &mut outs)
    }

    /// [`GpuKernel::eval_into`] with the batch given array by array: `inputs[2k]` and
    /// `inputs[2k + 1]` the lo and hi arrays of variable k, `outs[2j]` and `outs[2j + 1]` those
    /// of output j, all of one length n. The arrays are read and written where they are (copied
    /// directly when they are page-locked, as for `eval_into`).
    pub fn eval_columns(&self, inputs: &[&[f64]], outs: &mut [&mut [f64]]) -> Result<(), GpuError> {
        let in_lens: Vec<usize> = inputs.iter().map(|a| a.len()).collect();
        let out_lens: Vec<usize> = outs.iter().map(|a| a.len()).collect();
        let n = crate::shape::check_columns(self.n_vars, self.n_outputs, &in_lens, &out_lens)?;
        if n == 0 || outs.is_empty() {
            return Ok(());
        }
        let n_in = 2 * self.n_vars;
        // Lock the caller's memory for direct copies when asked (f64 only: f32 converts).
        let pins = self.pin_for_call(inputs, outs);
        let direct = pins.is_some();
        // The device's layout: the caller's arrays without the hi of a code output (one array
        // each, `Program::output_arrays`), which is filled from its lo at the end.
        let codes_from = 2 * (self.n_outputs - self.program.code_outputs);
        let (pairs, codes) = outs.split_at_mut(codes_from);
        let mut device_outs: Vec<&mut [f64]> = pairs
            .iter_mut()
            .chain(codes.iter_mut().step_by(2))
            .map(|a| &mut **a)
            .collect();
        let outs = &mut device_outs[..];
        let n_dev = self
            .devices
            .len()
            .min(n.div_ceil(MIN_ELEMENTS_PER_DEVICE))
            .max(1);
        let bounds: Vec<usize> = (0..=n_dev).map(|d| n * d / n_dev).collect();
        // Output array j, split at the device boundaries: per_dev[d][j] = elements of device d.
        let mut per_dev: Vec<Vec<&mut [f64]>> =
            (0..n_dev).map(|_| Vec::with_capacity(outs.len())).collect();
        for array in outs.iter_mut() {
            let mut rest: &mut [f64] = array;
            for d in 0..n_dev {
                let (mine, tail) = rest.split_at_mut(bounds[d + 1] - bounds[d]);
                per_dev[d].push(mine);
                rest = tail;
            }
        }
        let job = batch::Job {
            precision: self.precision,
            inputs,
            n_in,
            forced_chunk: self.chunk_elements,
            direct,
        };
        let result = if n_dev == 1 {
            self.devices[0].run(&job, (0, n), &mut per_dev[0])
        } else {
            let results: Vec<Result<(), GpuError>> = std::thread::scope(|scope| {
                let handles: Vec<_> = per_dev
                    .iter_mut()
                    .enumerate()
                    .map(|(d, outs)| {
                        let dk = &self.devices[d];
                        let range = (bounds[d], bounds[d + 1]);
                        let job = &job;
                        scope.spawn(move || dk.run(job, range, outs))
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| {
                        h.join().unwrap_or_else(|_| {
                            Err(GpuError::Devices("a device thread panicked".to_string()))
                        })
                    })
                    .collect()
            });
            results.into_iter().collect()
        };
        // Every stream that touched the caller's memory has been synchronized (each device's
        // run ends with its slots finished, or drops them, which synchronizes): unlock now.
        drop(pins);
        drop(device_outs);
        for pair in codes.chunks_exact_mut(2) {
            let [lo, hi] = pair else {
                unreachable!("chunks of two")
            };
            hi.copy_from_slice(lo);
        }
        result
    }

    /// Whether [`GpuKernel::eval_into`] of these slices copies directly from and to them (an
    /// f64 kernel, and [`HostTransfer::Pinned`], or [`HostTransfer::Auto`] with both slices in
    /// [`HostBuffer`](super::HostBuffer)s), leaving the host's cores free while the batch runs. Pinned calls may
    /// still stage if the driver refuses to lock the memory.
    pub fn copies_directly(&self, inputs: &[f64], out: &[f64]) -> bool {
        self.copies_columns_directly(&[inputs], &[out])
    }

    /// [`GpuKernel::copies_directly`] for a batch given array by array: with
    /// [`HostTransfer::Auto`], every array must lie in a [`HostBuffer`](super::HostBuffer).
    fn copies_columns_directly(&self, inputs: &[&[f64]], outs: &[&[f64]]) -> bool {
        self.precision == Precision::F64
            && match self.host_transfer {
                HostTransfer::Staged => false,
                HostTransfer::Pinned => true,
                HostTransfer::Auto => inputs.iter().chain(outs).all(|a| pin::in_host_buffer(a)),
            }
    }

    /// Whether this call copies directly from and to the caller's memory, with the locks it
    /// took for that (none when the memory is in [`HostBuffer`](super::HostBuffer)s); `None`: it stages.
    fn pin_for_call(&self, inputs: &[&[f64]], outs: &[&mut [f64]]) -> Option<Vec<pin::CallPin>> {
        let outs: Vec<&[f64]> = outs.iter().map(|a| &**a).collect();
        // An empty input (a program without variables) has nothing to lock or copy.
        if inputs.is_empty() || !self.copies_columns_directly(inputs, &outs) {
            return None;
        }
        if self.host_transfer == HostTransfer::Auto {
            // Every array lies in a HostBuffer, locked for as long as it is borrowed.
            return Some(Vec::new());
        }
        let ctx = &self.devices[0].ctx;
        let read_only = self.devices.iter().all(|d| {
            d.ctx
                .attribute(
                    sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED,
                )
                .is_ok_and(|v| v != 0)
        });
        // Byte ranges of the arrays, those that share a page merged (the rows of one array).
        let mut ranges: Vec<(usize, usize, bool)> = inputs
            .iter()
            .map(|a| (*a, read_only))
            .chain(outs.iter().map(|a| (*a, false)))
            .filter(|(a, _)| !a.is_empty())
            .map(|(a, ro)| {
                let (start, end) = pin::byte_range(a);
                (start, end, ro)
            })
            .collect();
        ranges.sort_unstable_by_key(|r| r.0);
        let mut merged: Vec<(usize, usize, bool)> = Vec::with_capacity(ranges.len());
        for (start, end, ro) in ranges {
            match merged.last_mut() {
                Some(last)
                    if start / pin::PAGE * pin::PAGE < last.1.div_ceil(pin::PAGE) * pin::PAGE =>
                {
                    last.1 = last.1.max(end);
                    last.2 &= ro;
                }
                _ => merged.push((start, end, ro)),
            }
        }
        let mut pins = Vec::new();
        for (start, end, read_only) in merged {
            // SAFETY: every range is made of the pages of arrays borrowed for the whole call,
            // and the pins are dropped before it returns; the device only reads the inputs
            // (the uploads), and a range holding an output is not read-only.
            match unsafe { pin::CallPin::acquire_bytes(ctx, start, end, read_only) } {
                Ok(Some(p)) => pins.push(p),
                // A refusal (memory the driver cannot lock) is not an error: the call stages.
                _ => return None,
            }
        }
        Some(pins)
    }
}
