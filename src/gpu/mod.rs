//! GPU runtime: loads the PTX of a scalar [`Program`] with the CUDA driver (through cudarc) and
//! evaluates it on one or more devices.
//!
//! - Batches of any size are split across the kernel's devices (every visible device, or
//!   `IVJIT_DEVICES=0,1`, or [`KernelOptions::devices`]) and streamed through each in chunks
//!   with pinned staging buffers and two streams (module `batch`).
//! - Kernels are cached in the process and, as linked cubins, on disk ([`cache`]).
//! - The block size comes from the driver's occupancy calculator; the grid fills the device.
//!
//! No function here panics on a missing driver, a missing device or a driver error: those
//! are values ([`NoGpu`], [`GpuError`]). cudarc itself panics when `libcuda.so.1` is absent, so
//! [`detect`] checks for the library before calling anything else, and [`GpuKernel::new`] calls
//! [`detect`].
//!
//! The kernel ABI (structure-of-arrays buffers) is described in [`crate::ptx`].

use std::ffi::{c_void, CString};
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::{
    result, sys, CudaContext, CudaFunction, CudaModule, DriverError, LaunchConfig,
};
use cudarc::nvrtc::Ptx;

use crate::ptx;
use crate::scalar::{Precision, Program};

mod batch;
pub mod cache;
mod pin;
pub mod runtime;

pub use pin::HostBuffer;

pub(crate) use cache::KernelSource;
pub use cache::{CacheDir, DiskCacheOutcome};
pub use runtime::RuntimeError;

/// Size of the buffer for the driver's JIT error log.
const JIT_LOG_BYTES: usize = 1 << 16;

/// Device 0, as [`detect`] found it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuInfo {
    /// Device ordinal (always 0 for now).
    pub ordinal: usize,
    /// Marketing name, e.g. "NVIDIA H200".
    pub name: String,
    /// Compute capability (major, minor), e.g. (9, 0).
    pub compute_capability: (i32, i32),
    /// Number of streaming multiprocessors.
    pub multiprocessors: u32,
    /// Total device memory in bytes.
    pub total_memory: usize,
    /// Number of CUDA devices in the machine.
    pub device_count: usize,
}

impl fmt::Display for GpuInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (device {} of {}, sm_{}{}, {} SMs, {:.1} GiB)",
            self.name,
            self.ordinal,
            self.device_count,
            self.compute_capability.0,
            self.compute_capability.1,
            self.multiprocessors,
            self.total_memory as f64 / (1u64 << 30) as f64
        )
    }
}

/// Why there is no usable GPU.
#[derive(Clone, Debug, thiserror::Error)]
pub enum NoGpu {
    /// `libcuda.so.1` could not be loaded.
    #[error("no CUDA driver library (libcuda.so.1) found")]
    NoDriver,
    /// The driver loaded but reports no device.
    #[error("no CUDA device")]
    NoDevice,
    /// The driver failed while the device was being looked for.
    #[error("CUDA driver error: {0}")]
    Driver(String),
}

/// Errors of the GPU runtime, each with the step that failed.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// There is no usable GPU.
    #[error(transparent)]
    NoGpu(#[from] NoGpu),
    /// The scalar program fails verification ([`crate::scalar::Program::verify`]).
    #[error("the scalar program cannot be compiled for the GPU: {0}")]
    InvalidProgram(crate::scalar::VerifyError),
    /// The driver would not load the emitted PTX.
    #[error("the CUDA driver rejected the generated PTX ({code}):\n{log}")]
    PtxRejected {
        /// The CUDA error name.
        code: String,
        /// The JIT compiler's log.
        log: String,
    },
    /// The point-function runtime could not be compiled or loaded.
    #[error("the point-function runtime is unavailable: {0}")]
    Runtime(#[from] RuntimeError),
    #[error(
        "linking the kernel with the point-function runtime failed while {step} ({code}):\n{log}"
    )]
    /// Linking the kernel with the point-function runtime failed.
    LinkFailed {
        /// The linker step that failed.
        step: &'static str,
        /// The CUDA error name.
        code: String,
        /// The linker's log.
        log: String,
    },
    #[error("{what}: {}", describe(source))]
    /// A driver call failed.
    Driver {
        /// What was being done.
        what: &'static str,
        /// The driver's error.
        #[source]
        source: DriverError,
    },
    #[error("expected {expected} input values (2 x {n_vars} variables x {n} elements), got {got}")]
    /// The input array does not hold `2 * n_vars * n` values.
    InputLength {
        /// `2 * n_vars * n`.
        expected: usize,
        /// The length given.
        got: usize,
        /// The program's number of variables.
        n_vars: usize,
        /// The number of elements asked for.
        n: usize,
    },
    #[error("device {device}, chunk {chunk}: {step}: {}", describe(source))]
    /// A driver call failed in the middle of a batch; the whole batch is discarded.
    Batch {
        /// The device ordinal.
        device: usize,
        /// The index of the chunk on that device (0 for steps before the first chunk).
        chunk: usize,
        /// What was being done.
        step: &'static str,
        /// The driver's error.
        #[source]
        source: DriverError,
    },
    #[error("device selection: {0}")]
    /// The device list (`IVJIT_DEVICES` or [`KernelOptions::devices`]) is invalid.
    Devices(String),
    #[error("host transfer: {0}")]
    /// The host transfer mode (`IVJIT_HOST_TRANSFER`) is invalid.
    HostTransfer(String),
    #[error(
        "expected {expected} output values (2 x {n_outputs} outputs x {n} elements), got {got}"
    )]
    /// The output array does not hold `2 * n_outputs * n` values.
    OutputLength {
        /// `2 * n_outputs * n`.
        expected: usize,
        /// The length given.
        got: usize,
        /// The program's number of outputs.
        n_outputs: usize,
        /// The number of elements asked for.
        n: usize,
    },
    #[error("{n} elements is too many for one launch")]
    /// `n` does not fit one kernel launch (sizes or grid overflow).
    TooLarge {
        /// The number of elements asked for.
        n: usize,
    },
}

/// "CUDA_ERROR_NAME: description" for a driver error, without panicking if the lookup fails.
fn describe(e: &DriverError) -> String {
    let name = e
        .error_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|_| format!("{:?}", e.0));
    match e.error_string() {
        Ok(s) => format!("{name}: {}", s.to_string_lossy()),
        Err(_) => name,
    }
}

/// Attaches the name of the failing step to a driver error.
trait Context<T> {
    fn during(self, what: &'static str) -> Result<T, GpuError>;
}

impl<T> Context<T> for Result<T, DriverError> {
    fn during(self, what: &'static str) -> Result<T, GpuError> {
        self.map_err(|source| GpuError::Driver { what, source })
    }
}

/// Finds device 0. Never panics: checks for the driver library first, then the device count.
///
/// The answer, a device or the reason there is none, is found once per process and then
/// returned again: the search opens the driver library (about 1 ms when it is absent, since
/// every candidate path is tried) and queries the driver, and every [`crate::Evaluator`] asks.
/// Neither changes while a process runs: CUDA fixes its device list at `cuInit`, and a failed
/// `cuInit` fails again.
pub fn detect() -> Result<GpuInfo, NoGpu> {
    static DETECTED: OnceLock<Result<GpuInfo, NoGpu>> = OnceLock::new();
    DETECTED.get_or_init(detect_uncached).clone()
}

fn detect_uncached() -> Result<GpuInfo, NoGpu> {
    // SAFETY: only tries to open the library.
    if !unsafe { sys::is_culib_present() } {
        return Err(NoGpu::NoDriver);
    }
    // cudarc panics when a driver entry point is missing (e.g. a driver older than the CUDA
    // version cudarc was built for); turn that into an error too.
    match std::panic::catch_unwind(detect_device) {
        Ok(r) => r,
        Err(panic) => {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "panic in the CUDA driver bindings".to_string());
            Err(NoGpu::Driver(msg))
        }
    }
}

fn detect_device() -> Result<GpuInfo, NoGpu> {
    let driver = |e: DriverError| NoGpu::Driver(describe(&e));
    result::init().map_err(driver)?;
    let count = result::device::get_count().map_err(driver)?;
    if count <= 0 {
        return Err(NoGpu::NoDevice);
    }
    let dev = result::device::get(0).map_err(driver)?;
    let name = result::device::get_name(dev).map_err(driver)?;
    let attr = |a: sys::CUdevice_attribute| {
        // SAFETY: `dev` is a valid device handle from cuDeviceGet.
        unsafe { result::device::get_attribute(dev, a) }.map_err(driver)
    };
    use sys::CUdevice_attribute::*;
    let major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
    let minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
    let sms = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
    // SAFETY: as above.
    let total_memory = unsafe { result::device::total_mem(dev) }.map_err(driver)?;
    Ok(GpuInfo {
        ordinal: 0,
        name,
        compute_capability: (major, minor),
        multiprocessors: sms.max(1) as u32,
        total_memory,
        device_count: count as usize,
    })
}

/// For tests that need a GPU: the device if there is one; otherwise prints
/// "`test`: skipped: no GPU (reason)" and returns `None`, unless the environment variable
/// `IVJIT_REQUIRE_GPU` is `1`, in which case it panics (the GPU machine's runner sets it, so a
/// broken driver there fails instead of skipping).
pub fn require_gpu_or_skip(test: &str) -> Option<GpuInfo> {
    match detect() {
        Ok(info) => Some(info),
        Err(reason) => {
            if std::env::var("IVJIT_REQUIRE_GPU").as_deref() == Ok("1") {
                panic!("{test}: IVJIT_REQUIRE_GPU=1 but there is no usable GPU: {reason}");
            }
            eprintln!("{test}: skipped: no GPU ({reason})");
            None
        }
    }
}

/// The primary context of device `ordinal`, created once per process (creating one costs
/// 0.2-0.4 s) and shared by every kernel on that device.
fn context(ordinal: usize) -> Result<Arc<CudaContext>, GpuError> {
    static CONTEXTS: Mutex<Vec<(usize, Arc<CudaContext>)>> = Mutex::new(Vec::new());
    let mut slots = CONTEXTS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((_, ctx)) = slots.iter().find(|(o, _)| *o == ordinal) {
        return Ok(ctx.clone());
    }
    let info = detect()?;
    if ordinal >= info.device_count {
        return Err(GpuError::Devices(format!(
            "device {ordinal} does not exist ({} visible)",
            info.device_count
        )));
    }
    let ctx = CudaContext::new(ordinal).during("creating a CUDA context")?;
    slots.push((ordinal, ctx.clone()));
    Ok(ctx)
}

/// Loads a PTX module into device 0's shared context, checking that the driver accepts it, and
/// unloads it again. The error carries the driver's JIT log. For tests and diagnostics.
pub fn validate_ptx(text: &str) -> Result<(), GpuError> {
    let ctx = context(0)?;
    load_module(&ctx, text).map(drop)
}

/// Loads PTX text; on rejection, fetches the JIT log for the error.
fn load_module(ctx: &Arc<CudaContext>, text: &str) -> Result<Arc<CudaModule>, GpuError> {
    ctx.load_module(Ptx::from_src(text))
        .map_err(|e| GpuError::PtxRejected {
            code: describe(&e),
            log: jit_error_log(ctx, text),
        })
}

/// Parses a device list such as `0,1` (the syntax of `IVJIT_DEVICES`): distinct ordinals,
/// at least one, in the order given.
pub fn parse_devices(text: &str) -> Result<Vec<usize>, GpuError> {
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let d: usize = part.parse().map_err(|_| {
            GpuError::Devices(format!("IVJIT_DEVICES: `{part}` is not a device number"))
        })?;
        if out.contains(&d) {
            return Err(GpuError::Devices(format!(
                "IVJIT_DEVICES: device {d} is listed twice"
            )));
        }
        out.push(d);
    }
    if out.is_empty() {
        return Err(GpuError::Devices(
            "IVJIT_DEVICES names no device".to_string(),
        ));
    }
    Ok(out)
}

/// The devices a kernel uses by default: those of `IVJIT_DEVICES` (e.g. `0,1`) when it is set
/// and not empty, else every visible device.
pub fn default_devices() -> Result<Vec<usize>, GpuError> {
    match std::env::var("IVJIT_DEVICES") {
        Ok(v) if !v.trim().is_empty() => parse_devices(&v),
        _ => Ok((0..detect()?.device_count).collect()),
    }
}

/// Options of [`GpuKernel::with_options`]. The default is what [`GpuKernel::new`] uses.
#[derive(Clone, Debug)]
pub struct KernelOptions {
    /// Device ordinals to split batches across; `None`: [`default_devices`].
    pub devices: Option<Vec<usize>>,
    /// Where linked kernels are cached on disk.
    pub cache_dir: CacheDir,
    /// Whether to use (and fill) the in-process kernel cache.
    pub memory_cache: bool,
    /// Elements per chunk; `None`: `IVJIT_CHUNK_ELEMENTS` if set, else sized from the free
    /// device memory (capped, see [`GpuKernel::eval`]).
    pub chunk_elements: Option<usize>,
    /// How batches cross between host and device; `None`: `IVJIT_HOST_TRANSFER`
    /// (`staged`, `pinned` or `auto`) if set, else [`HostTransfer::Auto`].
    pub host_transfer: Option<HostTransfer>,
}

/// How a batch's inputs reach the device and its outputs come back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostTransfer {
    /// Through the engine's own pinned staging buffers: the host copies each chunk of the
    /// caller's inputs into them and the outputs out of them, on rayon's pool. Works for every
    /// precision (f32 kernels convert on the way) and costs nothing up front.
    Staged,
    /// Straight from and to the caller's slices, which are page-locked (`cuMemHostRegister`)
    /// for the call and unlocked after it: no host copies, but locking costs more than it
    /// saves (H200 host, 2^28 boxes, 17 GB: 1.2 s against 0.33 s staged, `docs/bench.md`)
    /// unless the memory is locked already (a [`HostBuffer`], or memory the caller registered
    /// with the driver), which costs nothing. f64 kernels only (f32 kernels need the
    /// conversion and always stage); if the driver refuses to lock the memory the call stages.
    Pinned,
    /// Direct copies when the f64 inputs and outputs both lie in [`HostBuffer`]s (0.245 s for
    /// the batch above, 95% of the PCIe copy ceiling), staged otherwise.
    Auto,
}

impl HostTransfer {
    /// Parses `staged`, `pinned` or `auto` (the values of `IVJIT_HOST_TRANSFER`).
    pub fn parse(text: &str) -> Result<HostTransfer, GpuError> {
        match text.trim() {
            "staged" => Ok(HostTransfer::Staged),
            "pinned" => Ok(HostTransfer::Pinned),
            "auto" => Ok(HostTransfer::Auto),
            other => Err(GpuError::HostTransfer(format!(
                "unknown mode {other:?} (IVJIT_HOST_TRANSFER): use staged, pinned or auto"
            ))),
        }
    }
}

impl Default for KernelOptions {
    fn default() -> Self {
        KernelOptions {
            devices: None,
            cache_dir: CacheDir::Default,
            memory_cache: true,
            chunk_elements: None,
            host_transfer: None,
        }
    }
}

/// Largest staging size (inputs + outputs of one chunk, bytes) of one slot: two slots per
/// device, each with this much device memory and pinned host memory.
const MAX_CHUNK_BYTES: usize = 64 << 20;

/// Fraction of the free device memory the staging buffers of one batch may take (1/4).
const FREE_MEMORY_DIVISOR: usize = 4;

/// Below this many elements per device, a batch is not split further across devices.
const MIN_ELEMENTS_PER_DEVICE: usize = 1 << 16;

/// Pipelines kept for reuse per device kernel.
const POOL_SIZE: usize = 4;

/// A kernel loaded on one device, with its launch shape and a pool of staging pipelines.
pub(crate) struct DeviceKernel {
    pub(crate) ordinal: usize,
    pub(crate) ctx: Arc<CudaContext>,
    pub(crate) function: CudaFunction,
    /// Threads per block (`cuOccupancyMaxPotentialBlockSize`).
    block: u32,
    /// Blocks that fill the device: SMs x resident blocks per SM at `block` threads.
    max_grid: u32,
    disk: DiskCacheOutcome,
    pool: Mutex<Vec<batch::Pipeline>>,
}

impl DeviceKernel {
    pub(crate) fn launch_config(&self, m: usize) -> LaunchConfig {
        batch::launch_config(self.block, self.max_grid, m)
    }

    /// Emits nothing: compiles (or reads from the disk cache) and loads `text` on `ordinal`.
    fn build(
        ordinal: usize,
        program: &Program,
        text: &str,
        cache_dir: Option<&std::path::Path>,
    ) -> Result<DeviceKernel, GpuError> {
        let ctx = context(ordinal)?;
        ctx.bind_to_thread()
            .during("binding the device's context")?;
        let (major, minor) = ctx
            .compute_capability()
            .during("querying the compute capability")?;
        let runtime_ptx = if program.has_point_calls() {
            let arch = runtime::arch_for((major, minor));
            let fns = ptx::point_functions(program);
            Some(runtime::runtime_ptx(&arch, program.precision, &fns)?)
        } else {
            None
        };
        let mut driver_version: std::ffi::c_int = 0;
        // SAFETY: one valid out-pointer.
        unsafe { sys::cuDriverGetVersion(&mut driver_version) }
            .result()
            .during("querying the driver version")?;
        let arch = format!("sm_{major}{minor}");
        let key = cache::cubin_key(
            text,
            runtime_ptx.as_deref().unwrap_or(""),
            driver_version,
            &arch,
        );
        let mut parts = vec![("ivjit_kernel.ptx", text)];
        if let Some(rt) = runtime_ptx.as_deref() {
            parts.push(("ivjit_math.ptx", rt));
        }
        let load_cubin = |cubin: Vec<u8>| ctx.load_module(Ptx::from_binary(cubin));
        let mut found_invalid = false;
        let mut module = None;
        let mut disk = DiskCacheOutcome::NoCache;
        if let Some(dir) = cache_dir {
            match cache::read_cubin(dir, &key) {
                cache::Lookup::Valid(cubin) => {
                    // A valid entry the driver still refuses is rebuilt like a corrupt one.
                    match load_cubin(cubin) {
                        Ok(m) => {
                            module = Some(m);
                            disk = DiskCacheOutcome::Hit;
                        }
                        Err(_) => found_invalid = true,
                    }
                }
                cache::Lookup::Invalid => found_invalid = true,
                cache::Lookup::Missing => {}
            }
        }
        let module = match module {
            Some(m) => m,
            None => match link_cubin(&ctx, &parts) {
                Ok(cubin) => {
                    let stored = match cache_dir {
                        Some(dir) => cache::write_cubin(dir, &key, &cubin).is_ok(),
                        None => false,
                    };
                    if cache_dir.is_some() {
                        disk = DiskCacheOutcome::Linked {
                            stored,
                            rebuilt: found_invalid,
                        };
                    }
                    load_cubin(cubin).map_err(|e| GpuError::PtxRejected {
                        code: describe(&e),
                        log: "(loading the linked cubin; the linker accepted it)".to_string(),
                    })?
                }
                // Without point calls the plain load path gives the JIT log of a rejected
                // kernel (and works even if the linker refused for another reason).
                Err(_) if runtime_ptx.is_none() => {
                    disk = DiskCacheOutcome::Ptx;
                    load_module(&ctx, text)?
                }
                Err(e) => return Err(e),
            },
        };
        let function = module
            .load_function(ptx::KERNEL_NAME)
            .during("looking up the kernel in the loaded module")?;
        let sms = ctx
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .during("querying the multiprocessor count")?
            .max(1) as u32;
        extern "C" fn no_dynamic_shared_memory(_block_size: std::ffi::c_int) -> usize {
            0
        }
        let (_, block) = function
            .occupancy_max_potential_block_size(no_dynamic_shared_memory, 0, 0, None)
            .during("querying the occupancy-optimal block size")?;
        let block = if block == 0 { 128 } else { block };
        let per_sm = function
            .occupancy_max_active_blocks_per_multiprocessor(block, 0, None)
            .during("querying the resident blocks per multiprocessor")?
            .max(1);
        Ok(DeviceKernel {
            ordinal,
            ctx,
            function,
            block,
            max_grid: sms.saturating_mul(per_sm).max(1),
            disk,
            pool: Mutex::new(Vec::new()),
        })
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
                let made =
                    match precision {
                        Precision::F64 => batch::Slots::new(self, chunk, n_in, outs.len())
                            .map(batch::Pipeline::F64),
                        Precision::F32 => batch::Slots::new(self, chunk, n_in, outs.len())
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

/// A scalar program compiled for one or more devices.
pub struct GpuKernel {
    precision: Precision,
    n_vars: usize,
    n_outputs: usize,
    ptx: Arc<str>,
    devices: Vec<Arc<DeviceKernel>>,
    chunk_elements: Option<usize>,
    host_transfer: HostTransfer,
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
    /// runtime of the functions it calls (NVRTC, cached on disk: see [`runtime`]); errors carry
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
        let mut devices = Vec::with_capacity(ordinals.len());
        for &ordinal in &ordinals {
            let build =
                || DeviceKernel::build(ordinal, program, text, dir.as_deref()).map(Arc::new);
            devices.push(if options.memory_cache {
                cache::in_process(source, program.precision, ordinal, build)?
            } else {
                build()?
            });
        }
        let chunk_elements = options.chunk_elements.or_else(|| {
            std::env::var("IVJIT_CHUNK_ELEMENTS")
                .ok()
                .and_then(|v| v.trim().parse::<usize>().ok())
                .filter(|&c| c > 0)
        });
        let host_transfer = match options.host_transfer {
            Some(t) => t,
            None => match std::env::var("IVJIT_HOST_TRANSFER") {
                Ok(v) if !v.trim().is_empty() => HostTransfer::parse(&v)?,
                _ => HostTransfer::Auto,
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
        })
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

    /// [`GpuKernel::eval`] into the caller's `out` (`2 * n_outputs * n` values, same layout),
    /// for callers that reuse their output memory batch after batch: a fresh output array costs
    /// the operating system's page faults on first touch, and a [`HostBuffer`] is locked once
    /// instead of per call. On an error `out` holds no meaningful values.
    pub fn eval_into(&self, inputs: &[f64], n: usize, out: &mut [f64]) -> Result<(), GpuError> {
        let expected = n
            .checked_mul(2 * self.n_vars)
            .ok_or(GpuError::TooLarge { n })?;
        if inputs.len() != expected {
            return Err(GpuError::InputLength {
                expected,
                got: inputs.len(),
                n_vars: self.n_vars,
                n,
            });
        }
        let out_len = n
            .checked_mul(2 * self.n_outputs)
            .ok_or(GpuError::TooLarge { n })?;
        if out.len() != out_len {
            return Err(GpuError::OutputLength {
                expected: out_len,
                got: out.len(),
                n_outputs: self.n_outputs,
                n,
            });
        }
        if out_len == 0 {
            return Ok(());
        }
        let n_in = 2 * self.n_vars;
        let n_out = 2 * self.n_outputs;
        // Lock the caller's memory for direct copies when asked (f64 only: f32 converts).
        let pins = self.pin_for_call(inputs, out);
        let direct = pins.is_some();
        let n_dev = self
            .devices
            .len()
            .min(n.div_ceil(MIN_ELEMENTS_PER_DEVICE))
            .max(1);
        let bounds: Vec<usize> = (0..=n_dev).map(|d| n * d / n_dev).collect();
        // Output array j, split at the device boundaries: per_dev[d][j] = elements of device d.
        let mut per_dev: Vec<Vec<&mut [f64]>> =
            (0..n_dev).map(|_| Vec::with_capacity(n_out)).collect();
        for array in out.chunks_mut(n) {
            let mut rest = array;
            for d in 0..n_dev {
                let (mine, tail) = rest.split_at_mut(bounds[d + 1] - bounds[d]);
                per_dev[d].push(mine);
                rest = tail;
            }
        }
        let job = batch::Job {
            precision: self.precision,
            inputs,
            n_total: n,
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
        result
    }

    /// Whether [`GpuKernel::eval_into`] of these slices copies directly from and to them (an
    /// f64 kernel, and [`HostTransfer::Pinned`], or [`HostTransfer::Auto`] with both slices in
    /// [`HostBuffer`]s), leaving the host's cores free while the batch runs. Pinned calls may
    /// still stage if the driver refuses to lock the memory.
    pub fn copies_directly(&self, inputs: &[f64], out: &[f64]) -> bool {
        self.precision == Precision::F64
            && match self.host_transfer {
                HostTransfer::Staged => false,
                HostTransfer::Pinned => true,
                HostTransfer::Auto => pin::in_host_buffer(inputs) && pin::in_host_buffer(out),
            }
    }

    /// Whether this call copies directly from and to the caller's memory, with the locks it
    /// took for that (none when the memory is in [`HostBuffer`]s); `None`: it stages.
    fn pin_for_call(&self, inputs: &[f64], out: &[f64]) -> Option<Vec<pin::CallPin>> {
        // An empty input (a program without variables) has nothing to lock or copy.
        if inputs.is_empty() || !self.copies_directly(inputs, out) {
            return None;
        }
        if self.host_transfer == HostTransfer::Auto {
            // Both slices lie in HostBuffers, locked for as long as they are borrowed.
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
        // SAFETY: `inputs` and `out` are borrowed for the whole call and the pins are dropped
        // before it returns; the device only reads `inputs` (the uploads).
        let pinned = unsafe {
            match pin::CallPin::acquire(ctx, inputs, read_only) {
                Ok(Some(a)) => match pin::CallPin::acquire(ctx, out, false) {
                    Ok(Some(b)) => Ok(Some(vec![a, b])),
                    other => other.map(|_| None),
                },
                other => other.map(|_| None),
            }
        };
        // A refusal (memory the driver cannot lock) is not an error: the call stages.
        pinned.ok().flatten()
    }
}

/// Links PTX modules (`(name, text)`; the kernel and the runtime it calls) into a cubin for the
/// current device with the driver's linker (`cuLinkCreate_v2` / `cuLinkAddData_v2` /
/// `cuLinkComplete`); errors carry the linker's error and info logs.
fn link_cubin(ctx: &Arc<CudaContext>, parts: &[(&str, &str)]) -> Result<Vec<u8>, GpuError> {
    ctx.bind_to_thread()
        .during("binding the context for linking")?;
    let mut error_log = vec![0u8; JIT_LOG_BYTES];
    let mut info_log = vec![0u8; JIT_LOG_BYTES];
    let mut options = [
        sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
        sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
        sys::CUjit_option::CU_JIT_INFO_LOG_BUFFER,
        sys::CUjit_option::CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
    ];
    let mut values: [*mut c_void; 4] = [
        error_log.as_mut_ptr().cast(),
        std::ptr::without_provenance_mut(error_log.len()),
        info_log.as_mut_ptr().cast(),
        std::ptr::without_provenance_mut(info_log.len()),
    ];
    let logs = |error_log: &[u8], info_log: &[u8]| {
        let text = |b: &[u8]| {
            let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
            String::from_utf8_lossy(&b[..end]).trim().to_string()
        };
        let (e, i) = (text(error_log), text(info_log));
        match (e.is_empty(), i.is_empty()) {
            (true, true) => "(the linker gave no log)".to_string(),
            (false, true) => e,
            (true, false) => i,
            (false, false) => format!("{e}\n{i}"),
        }
    };
    let mut state: sys::CUlinkState = std::ptr::null_mut();
    // SAFETY: the option arrays have four entries each; the log buffers are JIT_LOG_BYTES long
    // and outlive the link state (destroyed below before they are dropped); the context is
    // current.
    let status = unsafe {
        sys::cuLinkCreate_v2(
            options.len() as u32,
            options.as_mut_ptr(),
            values.as_mut_ptr(),
            &mut state,
        )
    };
    if status != sys::CUresult::CUDA_SUCCESS {
        return Err(GpuError::LinkFailed {
            step: "creating the link state",
            code: format!("{status:?}"),
            log: logs(&error_log, &info_log),
        });
    }
    let result = (|| {
        for &(name, text) in parts {
            let Ok(data) = CString::new(text) else {
                return Err(("adding a PTX module", format!("{name} contains a NUL byte")));
            };
            let name_c = CString::new(name).unwrap_or_default();
            let bytes = data.as_bytes_with_nul();
            // SAFETY: `state` is live; `data` is a NUL-terminated PTX image of `bytes.len()`
            // bytes that outlives the call (the driver copies it); no per-input options.
            let status = unsafe {
                sys::cuLinkAddData_v2(
                    state,
                    sys::CUjitInputType::CU_JIT_INPUT_PTX,
                    bytes.as_ptr() as *mut c_void,
                    bytes.len(),
                    name_c.as_ptr(),
                    0,
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                )
            };
            if status != sys::CUresult::CUDA_SUCCESS {
                return Err(("adding a PTX module", format!("{name}: {status:?}")));
            }
        }
        let mut cubin: *mut c_void = std::ptr::null_mut();
        let mut size: usize = 0;
        // SAFETY: `state` is live; out-pointers are valid.
        let status = unsafe { sys::cuLinkComplete(state, &mut cubin, &mut size) };
        if status != sys::CUresult::CUDA_SUCCESS || cubin.is_null() {
            return Err(("completing the link", format!("{status:?}")));
        }
        // SAFETY: the driver owns `size` bytes at `cubin` until cuLinkDestroy; copy them now.
        Ok(unsafe { std::slice::from_raw_parts(cubin as *const u8, size) }.to_vec())
    })();
    // SAFETY: `state` was created above and is destroyed once; the cubin was copied.
    let _ = unsafe { sys::cuLinkDestroy(state) };
    result.map_err(|(step, code)| GpuError::LinkFailed {
        step,
        code,
        log: logs(&error_log, &info_log),
    })
}

/// Loads `text` again through `cuModuleLoadDataEx` with an error-log buffer, to get the JIT
/// compiler's message after the plain load failed.
fn jit_error_log(ctx: &Arc<CudaContext>, text: &str) -> String {
    if let Err(e) = ctx.bind_to_thread() {
        return format!("(no log: binding the context failed: {})", describe(&e));
    }
    let Ok(src) = CString::new(text) else {
        return "(no log: the PTX contains a NUL byte)".to_string();
    };
    let mut log = vec![0u8; JIT_LOG_BYTES];
    let mut options = [
        sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
        sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
    ];
    let mut values: [*mut c_void; 2] = [
        log.as_mut_ptr().cast(),
        std::ptr::without_provenance_mut(log.len()),
    ];
    let mut module: sys::CUmodule = std::ptr::null_mut();
    // SAFETY: `src` is a NUL-terminated image, the option arrays have two entries each, the log
    // buffer is JIT_LOG_BYTES long and outlives the call; the context is current.
    let status = unsafe {
        sys::cuModuleLoadDataEx(
            &mut module,
            src.as_ptr().cast(),
            options.len() as u32,
            options.as_mut_ptr(),
            values.as_mut_ptr(),
        )
    };
    if status == sys::CUresult::CUDA_SUCCESS && !module.is_null() {
        // It loaded this time; do not leak it.
        // SAFETY: `module` was just loaded and is not used elsewhere.
        let _ = unsafe { sys::cuModuleUnload(module) };
    }
    let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
    let message = String::from_utf8_lossy(&log[..end]).trim().to_string();
    if message.is_empty() {
        format!("(the driver gave no log; second load: {status:?})")
    } else {
        message
    }
}
