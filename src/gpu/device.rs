//! Finding the GPU: device detection (never panics without a driver), one shared context per
//! device, and the test helper that skips or requires a GPU.

use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::{result, sys, CudaContext, DriverError};

use super::{describe, env, Context, GpuError, NoGpu};

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

pub(crate) fn detect_uncached() -> Result<GpuInfo, NoGpu> {
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

/// The driver's CUDA version (`cuDriverGetVersion`: 1000 * major + 10 * minor).
pub(crate) fn driver_version() -> Result<i32, DriverError> {
    let mut version: std::ffi::c_int = 0;
    // SAFETY: one valid out-pointer.
    unsafe { sys::cuDriverGetVersion(&mut version) }.result()?;
    Ok(version)
}

pub(crate) fn detect_device() -> Result<GpuInfo, NoGpu> {
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

/// Creates the primary contexts of the default devices ([`super::default_devices`]) now, if
/// there is a GPU; errors are left for the first real use to report. Creating a context takes
/// 0.2-0.6 s, so a program that will evaluate on the GPU may call this on a thread of its own
/// while it reads its input (the CLI does, joining the thread before it returns: a process must
/// not exit while a thread is inside the driver).
pub fn prepare() {
    if detect().is_err() {
        return;
    }
    if let Ok(devices) = default_devices() {
        for d in devices {
            let _ = context(d);
        }
    }
}

/// The primary context of device `ordinal`, created once per process (creating one costs
/// 0.2-0.4 s) and shared by every kernel on that device.
pub(crate) fn context(ordinal: usize) -> Result<Arc<CudaContext>, GpuError> {
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
    keep_pool_memory(&ctx);
    warm_pool(&ctx);
    slots.push((ordinal, ctx.clone()));
    Ok(ctx)
}

/// Makes the device's memory pool ready with the context: the process's first stream-ordered
/// allocation sets the pool up (measured on an H200: 10-11 ms for an 8-byte allocation, then
/// microseconds), which a search's first call paid among its rounds. With [`POOL_KEEPS`] the
/// memory it maps stays for the next allocation. Best effort, like [`keep_pool_memory`].
fn warm_pool(ctx: &Arc<CudaContext>) {
    let stream = ctx.default_stream();
    // SAFETY: the byte is never read.
    if let Ok(byte) = unsafe { stream.alloc::<u8>(1) } {
        drop(byte);
        let _ = stream.synchronize();
    }
}

/// How much freed memory the device's default pool keeps between synchronizations.
const POOL_KEEPS: u64 = 512 << 20;

/// Stream-ordered allocations (cudarc's) come from the device's default memory pool, which by
/// default hands freed memory back to the driver at every synchronization; the searches
/// allocate their work lists on every call, so each call mapped them again. The pool keeps up
/// to [`POOL_KEEPS`] instead. Best effort: a driver that refuses changes nothing else.
fn keep_pool_memory(ctx: &CudaContext) {
    use cudarc::driver::sys;
    let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
    let mut keep = POOL_KEEPS;
    // SAFETY: valid out-pointer and device handle; the attribute takes a u64 by pointer.
    unsafe {
        if sys::cuDeviceGetDefaultMemPool(&mut pool, ctx.cu_device())
            == sys::cudaError_enum::CUDA_SUCCESS
        {
            let _ = sys::cuMemPoolSetAttribute(
                pool,
                sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                &mut keep as *mut u64 as *mut std::ffi::c_void,
            );
        }
    }
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
    match env::devices() {
        Some(v) => parse_devices(&v),
        None => Ok((0..detect()?.device_count).collect()),
    }
}
