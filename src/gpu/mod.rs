//! GPU runtime: loads the PTX of a scalar [`Program`] with the CUDA driver (through cudarc) and
//! evaluates it on device 0.
//!
//! Everything here is synchronous and single-device for now; streaming and several GPUs come
//! later. No function here panics on a missing driver, a missing device or a driver error: those
//! are values ([`NoGpu`], [`GpuError`]). cudarc itself panics when `libcuda.so.1` is absent, so
//! [`detect`] checks for the library before calling anything else, and [`GpuKernel::new`] calls
//! [`detect`].
//!
//! The kernel ABI (structure-of-arrays buffers) is described in [`crate::ptx`].

use std::ffi::{c_void, CString};
use std::fmt;
use std::sync::{Arc, Mutex};

use cudarc::driver::{
    result, sys, CudaContext, CudaFunction, CudaModule, CudaStream, DeviceRepr, DriverError,
    LaunchConfig, PushKernelArg, ValidAsZeroBits,
};
use cudarc::nvrtc::Ptx;

use crate::ptx;
use crate::scalar::{Precision, Program};

pub mod runtime;

pub use runtime::RuntimeError;

/// Threads per block of every launch.
const BLOCK_SIZE: u32 = 256;

/// Resident blocks per multiprocessor the grid is sized for (8 x 256 = 2048 threads, the maximum
/// per SM on sm_90). The kernel is a grid-stride loop, so a smaller grid is still correct.
/// Occupancy-based tuning (registers per thread, `cuOccupancyMaxActiveBlocksPerMultiprocessor`)
/// comes later.
const BLOCKS_PER_SM: u32 = 8;

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
    /// The scalar program fails the PTX emitter's checks ([`crate::ptx::check`]).
    #[error("the scalar program cannot be compiled for the GPU: {0}")]
    InvalidProgram(String),
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
pub fn detect() -> Result<GpuInfo, NoGpu> {
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

/// The context of device 0, created once per process (creating one costs 0.2-0.4 s) and shared
/// by every kernel. It is the device's primary context, so it also agrees with any other user.
fn shared_context() -> Result<Arc<CudaContext>, GpuError> {
    static CONTEXT: Mutex<Option<Arc<CudaContext>>> = Mutex::new(None);
    let mut slot = CONTEXT
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(ctx) = slot.as_ref() {
        return Ok(ctx.clone());
    }
    detect()?;
    let ctx = CudaContext::new(0).during("creating the CUDA context of device 0")?;
    *slot = Some(ctx.clone());
    Ok(ctx)
}

/// Loads a PTX module into device 0's shared context, checking that the driver accepts it, and
/// unloads it again. The error carries the driver's JIT log. For tests and diagnostics.
pub fn validate_ptx(text: &str) -> Result<(), GpuError> {
    let ctx = shared_context()?;
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

/// A scalar program compiled for device 0.
pub struct GpuKernel {
    precision: Precision,
    n_vars: usize,
    n_outputs: usize,
    ptx: String,
    stream: Arc<CudaStream>,
    function: CudaFunction,
    multiprocessors: u32,
}

impl fmt::Debug for GpuKernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GpuKernel")
            .field("precision", &self.precision)
            .field("n_vars", &self.n_vars)
            .field("n_outputs", &self.n_outputs)
            .field("ptx_bytes", &self.ptx.len())
            .finish_non_exhaustive()
    }
}

impl GpuKernel {
    /// Emits the PTX of `program` and loads it into the shared context of device 0. A program
    /// with point calls is linked with the runtime of the functions it calls (NVRTC, cached on
    /// disk: see [`runtime`]); errors carry NVRTC's or the linker's log.
    pub fn new(program: &Program) -> Result<GpuKernel, GpuError> {
        ptx::check(program).map_err(GpuError::InvalidProgram)?;
        let text = ptx::emit(program);
        let ctx = shared_context()?;
        let module = if program.has_point_calls() {
            let cc = |a| ctx.attribute(a).during("querying the compute capability");
            let major = cc(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
            let minor = cc(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
            let arch = runtime::arch_for((major, minor));
            let fns = ptx::point_functions(program);
            let runtime_ptx = runtime::runtime_ptx(&arch, program.precision, &fns)?;
            let cubin = link_cubin(
                &ctx,
                &[
                    ("ivjit_kernel.ptx", &text),
                    ("ivjit_math.ptx", &runtime_ptx),
                ],
            )?;
            ctx.load_module(Ptx::from_binary(cubin))
                .map_err(|e| GpuError::PtxRejected {
                    code: describe(&e),
                    log: "(loading the linked cubin; the linker accepted it)".to_string(),
                })?
        } else {
            load_module(&ctx, &text)?
        };
        let function = module
            .load_function(ptx::KERNEL_NAME)
            .during("looking up the kernel in the loaded module")?;
        let sms = ctx
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .during("querying the multiprocessor count")?;
        Ok(GpuKernel {
            precision: program.precision,
            n_vars: program.n_vars(),
            n_outputs: program.outputs.len(),
            ptx: text,
            stream: ctx.default_stream(),
            function,
            multiprocessors: sms.max(1) as u32,
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

    /// Evaluates the program on `n` elements. `inputs` holds `2 * n_vars * n` values in the
    /// structure-of-arrays layout of the kernel ABI (array `2*var` = lo bounds of `var`, array
    /// `2*var+1` = hi bounds, each `n` long); the result holds `2 * n_outputs * n` values laid
    /// out the same way. For f32 programs the values are converted with `as f32` on the way in
    /// (the caller guarantees they are f32 values) and widened exactly on the way out.
    pub fn eval(&self, inputs: &[f64], n: usize) -> Result<Vec<f64>, GpuError> {
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
        if out_len == 0 {
            return Ok(Vec::new());
        }
        match self.precision {
            Precision::F64 => self.run::<f64>(inputs.to_vec(), n, out_len),
            Precision::F32 => {
                let host: Vec<f32> = inputs.iter().map(|&x| x as f32).collect();
                let out = self.run::<f32>(host, n, out_len)?;
                Ok(out.into_iter().map(f64::from).collect())
            }
        }
    }

    fn launch_config(&self, n: usize) -> Result<LaunchConfig, GpuError> {
        let blocks = n.div_ceil(BLOCK_SIZE as usize);
        let cap = (self.multiprocessors as usize) * BLOCKS_PER_SM as usize;
        let grid = blocks.min(cap).max(1);
        Ok(LaunchConfig {
            grid_dim: (
                u32::try_from(grid).map_err(|_| GpuError::TooLarge { n })?,
                1,
                1,
            ),
            block_dim: (BLOCK_SIZE, 1, 1),
            shared_mem_bytes: 0,
        })
    }

    fn run<T: DeviceRepr + ValidAsZeroBits + Copy>(
        &self,
        host_inputs: Vec<T>,
        n: usize,
        out_len: usize,
    ) -> Result<Vec<T>, GpuError> {
        let stream = &self.stream;
        let cfg = self.launch_config(n)?;
        // A program without variables gets a one-element dummy buffer (it is never read), so
        // that no zero-byte allocation is made.
        let d_inputs = if host_inputs.is_empty() {
            stream.alloc_zeros::<T>(1)
        } else {
            stream.clone_htod(&host_inputs)
        }
        .during("copying the inputs to the device")?;
        let mut d_outputs = stream
            .alloc_zeros::<T>(out_len)
            .during("allocating the output buffer")?;
        let n_arg = n as u64;
        let flags: u64 = 0; // reserved for decorations; the kernel does not read it
        let mut launch = stream.launch_builder(&self.function);
        launch
            .arg(&n_arg)
            .arg(&d_inputs)
            .arg(&mut d_outputs)
            .arg(&flags);
        // SAFETY: the kernel takes (u64 n, u64 inputs, u64 outputs, u64 flags), reads
        // 2*n_vars*n elements of T from `inputs` and writes 2*n_outputs*n to `outputs`; the
        // buffers have those lengths (checked in `eval`).
        unsafe { launch.launch(cfg) }.during("launching the kernel")?;
        stream.synchronize().during("running the kernel")?;
        let out = stream
            .clone_dtoh(&d_outputs)
            .during("copying the outputs to the host")?;
        stream
            .synchronize()
            .during("copying the outputs to the host")?;
        Ok(out)
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
