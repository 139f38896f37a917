//! The GPU path's errors: why there is no GPU ([`NoGpu`]) and what failed ([`GpuError`]).

use cudarc::driver::DriverError;

use super::RuntimeError;

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
    /// The batch's buffers have the wrong length.
    #[error("{0}")]
    Shape(#[from] crate::shape::ShapeError),
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
    /// A compile in the background stopped because the process is exiting.
    #[error("stopped: the process is exiting")]
    Exiting,
    #[error("device selection: {0}")]
    /// The device list (`IVJIT_DEVICES` or [`KernelOptions::devices`](super::KernelOptions::devices)) is invalid.
    Devices(String),
    #[error("host transfer: {0}")]
    /// The host transfer mode (`IVJIT_HOST_TRANSFER`) is invalid.
    HostTransfer(String),
    /// The tape interpreter of pruned renders found a tape it cannot run (a bug: reported,
    /// never run with a wrong result).
    #[error("the tape interpreter: {0}")]
    Tape(String),
    /// Host memory could not be allocated ([`HostBuffer::new`](super::HostBuffer::new)).
    #[error("{0}")]
    HostAlloc(#[from] HostAllocError),
    #[error("{n} elements is too many for one launch")]
    /// `n` does not fit one kernel launch (sizes or grid overflow).
    TooLarge {
        /// The number of elements asked for.
        n: usize,
    },
}

/// "CUDA_ERROR_NAME: description" for a driver error, without panicking if the lookup fails.
pub(crate) fn describe(e: &DriverError) -> String {
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
pub(crate) trait Context<T> {
    fn during(self, what: &'static str) -> Result<T, GpuError>;
}

impl<T> Context<T> for Result<T, DriverError> {
    fn during(self, what: &'static str) -> Result<T, GpuError> {
        self.map_err(|source| GpuError::Driver { what, source })
    }
}

/// Why a [`HostBuffer`](super::HostBuffer) could not be had: its size, in float64 values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HostAllocError {
    /// The bytes would not fit the address space (more than `isize::MAX`).
    #[error("{len} float64 values is more memory than the address space holds")]
    TooLarge {
        /// The values asked for.
        len: usize,
    },
    /// The memory is not there: more than the machine has, or the allocator refused it.
    #[error("cannot allocate {len} float64 values ({bytes} bytes): out of memory")]
    OutOfMemory {
        /// The values asked for.
        len: usize,
        /// Their bytes.
        bytes: usize,
    },
}
