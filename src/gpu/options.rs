//! How kernels run: the devices (`IVJIT_DEVICES`), chunk sizes and host transfers
//! ([`KernelOptions`], [`HostTransfer`]).

use super::{detect, CacheDir, GpuError};

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

/// Options of [`GpuKernel::with_options`](super::GpuKernel::with_options). The default is what [`GpuKernel::new`](super::GpuKernel::new) uses.
#[derive(Clone, Debug)]
pub struct KernelOptions {
    /// Device ordinals to split batches across; `None`: [`default_devices`].
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
            interpreter: options.interpreter.unwrap_or_else(env::interpreter),
            tier_up: options.tier_up.unwrap_or_else(env::tier_up),
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

/// The environment: every `IVJIT_*` variable the GPU engine reads is read here and nowhere else
/// (the CLI reads its own, `IVJIT_PROGRESS_AFTER_MS`). An empty value counts as unset.
pub(crate) mod env {
    use super::{GpuError, HostTransfer, InterpreterPolicy, TierUpPolicy};
    use std::ffi::OsString;

    fn text(name: &str) -> Option<String> {
        std::env::var(name).ok().filter(|v| !v.trim().is_empty())
    }

    /// `IVJIT_DEVICES`: the devices to split batches across (`0,1`), unparsed.
    pub(crate) fn devices() -> Option<String> {
        text("IVJIT_DEVICES")
    }

    /// `IVJIT_CHUNK_ELEMENTS`: elements per streamed chunk (a positive integer; anything else
    /// is ignored).
    pub(crate) fn chunk_elements() -> Option<usize> {
        text("IVJIT_CHUNK_ELEMENTS")
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|&c| c > 0)
    }

    /// `IVJIT_HOST_TRANSFER`: `staged`, `pinned` or `auto`; an unknown value is an error.
    pub(crate) fn host_transfer() -> Result<Option<HostTransfer>, GpuError> {
        text("IVJIT_HOST_TRANSFER")
            .map(|v| HostTransfer::parse(&v))
            .transpose()
    }

    /// `IVJIT_BATCH_TRACE`: any value asks for one timing line per device and batch.
    pub(crate) fn batch_trace() -> bool {
        std::env::var_os("IVJIT_BATCH_TRACE").is_some_and(|v| !v.is_empty())
    }

    /// `IVJIT_STAGE_INSTS`: instructions per stage of a program compiled as stages (a
    /// non-negative integer; 0: never cut a program; anything else is ignored).
    pub(crate) fn stage_insts() -> Option<usize> {
        text("IVJIT_STAGE_INSTS").and_then(|v| v.trim().parse::<usize>().ok())
    }

    /// `IVJIT_INLINE_RUNTIME=0`: link the point functions as calls instead of splicing them
    /// into the kernel (`gpu::inline`).
    pub fn inline_runtime() -> bool {
        text("IVJIT_INLINE_RUNTIME").as_deref().map(str::trim) != Some("0")
    }

    /// `IVJIT_STAGE_JIT_LEVEL`: the driver JIT's optimization level (0-4) for the stages of a
    /// program compiled as stages; anything else counts as unset.
    pub(crate) fn stage_jit_level() -> Option<u32> {
        text("IVJIT_STAGE_JIT_LEVEL")
            .and_then(|v| v.trim().parse::<u32>().ok())
            .filter(|&l| l <= 4)
    }

    /// `IVJIT_STAGE_TRACE`: any value asks for one line on the stages' compile times.
    pub(crate) fn stage_trace() -> bool {
        std::env::var_os("IVJIT_STAGE_TRACE").is_some_and(|v| !v.is_empty())
    }

    /// `IVJIT_INTERPRETER`: `first` (also when unset or unknown), `never` or `only`.
    pub(crate) fn interpreter() -> InterpreterPolicy {
        match text("IVJIT_INTERPRETER").as_deref().map(str::trim) {
            Some("never") => InterpreterPolicy::Never,
            Some("only") => InterpreterPolicy::Only,
            _ => InterpreterPolicy::First,
        }
    }

    /// `IVJIT_TIER_UP`: `auto` (also when unset or unknown), `now` or `never`.
    pub(crate) fn tier_up() -> TierUpPolicy {
        match text("IVJIT_TIER_UP").as_deref().map(str::trim) {
            Some("now") => TierUpPolicy::Now,
            Some("never") => TierUpPolicy::Never,
            _ => TierUpPolicy::Auto,
        }
    }

    /// `IVJIT_TAPE_PROFILE`: any value asks the GPU tape render for one timing line per step
    /// (a measurement switch).
    pub(crate) fn tape_profile() -> bool {
        text("IVJIT_TAPE_PROFILE").is_some()
    }

    /// `IVJIT_TAPE_NO_ROOT`: any value keeps the GPU tape render off its root-level kernel
    /// (the one that evaluates and prunes the whole image's first tile in shared memory), so
    /// tests and measurements reach the general path.
    pub(crate) fn tape_no_root() -> bool {
        text("IVJIT_TAPE_NO_ROOT").is_some()
    }

    /// `IVJIT_CACHE_DIR`: the disk cache's folder.
    pub(crate) fn cache_dir() -> Option<OsString> {
        std::env::var_os("IVJIT_CACHE_DIR").filter(|v| !v.is_empty())
    }
}
