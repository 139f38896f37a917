//! GPU runtime: loads the PTX of a scalar [`Program`](crate::scalar::Program) with the CUDA driver (through cudarc) and
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

mod batch;
pub mod cache;
mod device;
mod disk;
pub(crate) mod env;
mod error;
pub mod inline;
pub mod interpreter;
mod kernel;
mod link;
mod load;
mod nvrtc;
mod options;
mod pin;
pub mod runtime;
pub(crate) mod search_module;
mod staged;
mod tiers;

pub use device::{default_devices, parse_devices};
pub use device::{detect, prepare, GpuInfo};
pub use error::{GpuError, HostAllocError, NoGpu};
pub use kernel::{in_process_len, GpuKernel, LaunchShape};
pub use link::{link_cubin, validate_ptx};
pub use options::{HostTransfer, InterpreterPolicy, KernelOptions, TierUpPolicy};
pub use tiers::{Tier, STAGED_ABOVE};

pub(crate) use device::{context, driver_version};
pub(crate) use error::{describe, Context};
pub(crate) use kernel::DeviceKernel;
pub(crate) use link::{link_cubin_at, load_module};
pub(crate) use load::resident_blocks;

pub use pin::{machine_memory, HostBuffer};

pub(crate) use batch::{convert, PARALLEL_PIECE};
pub(crate) use cache::KernelSource;
pub use cache::{CacheDir, DiskCacheOutcome};
pub use runtime::RuntimeError;

/// Size of the buffer for the driver's JIT error log.
const JIT_LOG_BYTES: usize = 1 << 16;
