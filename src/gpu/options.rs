//! How kernels run: the devices (`IVJIT_DEVICES`), chunk sizes and host transfers
//! ([`KernelOptions`], [`HostTransfer`]).

use super::{env, CacheDir, GpuError};

/// Options of [`GpuKernel::with_options`](super::GpuKernel::with_options). The default is what [`GpuKernel::new`](super::GpuKernel::new) uses.
#[derive(Clone, Debug)]
pub struct KernelOptions {
    /// Device ordinals to split batches across; `None`: [`default_devices`](super::default_devices).
    pub devices: Option<Vec<usize>>,
    /// Where linked kernels are cached on disk.
    pub cache_dir: CacheDir,
    /// Whether to use (and fill) the in-process kernel cache.
    pub memory_cache: bool,
    /// Elements per chunk; `None`: `IVJIT_CHUNK_ELEMENTS` if set, else sized from the free
    /// device memory (capped, see [`GpuKernel::eval`](super::GpuKernel::eval)).
    pub chunk_elements: Option<usize>,
    /// How batches cross between host and device; `None`: `IVJIT_HOST_TRANSFER`
    /// (`staged`, `pinned` or `auto`) if set, else [`HostTransfer::Auto`].
    pub host_transfer: Option<HostTransfer>,
    /// When a program runs on the GPU interpreter; `None`: `IVJIT_INTERPRETER` (`first`,
    /// `never` or `only`) if set, else [`InterpreterPolicy::First`].
    pub interpreter: Option<InterpreterPolicy>,
    /// When a program compiled as stages gets its single kernel; `None`: `IVJIT_TIER_UP`
    /// (`auto`, `now` or `never`) if set, else [`TierUpPolicy::Auto`].
    pub tier_up: Option<TierUpPolicy>,
}

/// When programs run on the GPU interpreter (`gpu::interpreter`), which answers a program at
/// once while its code compiles. Every choice computes the same bits; only when the answers
/// come and how fast they run differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum InterpreterPolicy {
    /// A program compiled as stages, or one of middle size, answers from the interpreter until
    /// its code is compiled in the background (the default).
    First,
    /// Never: a program waits for its code.
    Never,
    /// Every program without point calls runs on the interpreter and is never compiled (for
    /// tests and measurements).
    Only,
}

/// When a program compiled as stages (a long one) gets its single kernel, which runs faster
/// than the stages but takes longer to compile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TierUpPolicy {
    /// After the stages have done enough work to pay for the compile (the default).
    Auto,
    /// At once, on a thread of its own.
    Now,
    /// Never: the stages run every launch.
    Never,
}

/// The policies a kernel was built with: its options' choices, else the environment's. They
/// are part of the in-process cache's key (a kernel built with another policy is another
/// kernel).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Policies {
    pub(crate) interpreter: InterpreterPolicy,
    pub(crate) tier_up: TierUpPolicy,
}

impl Policies {
    /// `options`' policies, the environment's where they say `None`.
    pub(crate) fn of(options: &KernelOptions) -> Policies {
        Policies {
            interpreter: options.interpreter.unwrap_or_else(|| {
                // `first` also when unset or unknown.
                match env::interpreter().as_deref() {
                    Some("never") => InterpreterPolicy::Never,
                    Some("only") => InterpreterPolicy::Only,
                    _ => InterpreterPolicy::First,
                }
            }),
            tier_up: options.tier_up.unwrap_or_else(|| {
                // `auto` also when unset or unknown.
                match env::tier_up().as_deref() {
                    Some("now") => TierUpPolicy::Now,
                    Some("never") => TierUpPolicy::Never,
                    _ => TierUpPolicy::Auto,
                }
            }),
        }
    }
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
    /// unless the memory is locked already (a [`HostBuffer`](super::HostBuffer), or memory the caller registered
    /// with the driver), which costs nothing. f64 kernels only (f32 kernels need the
    /// conversion and always stage); if the driver refuses to lock the memory the call stages.
    Pinned,
    /// Direct copies when the f64 inputs and outputs both lie in [`HostBuffer`](super::HostBuffer)s (0.245 s for
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
            interpreter: None,
            tier_up: None,
        }
    }
}
