//! What every search rule's GPU half shares: the searches on the GPU keep the work list in
//! device memory for the whole search; the host launches a few kernels per round and reads a
//! few counters. Each rule's kernels are CUDA C in a `.cu` file in the rule's folder
//! (`render/render.cu`, ...), compiled after [`prelude`] (with `tile.cu`, the tile boxes) and
//! the rule's `#define`s for the evaluator's precision, and loaded by the one search-module
//! loader (`crate::gpu::search_module`: NVRTC once per process and device, the disk cache,
//! the expression linked in where a kernel calls it).

use cudarc::driver::LaunchConfig;

use crate::Precision;

/// `n` bytes of device memory, each `byte`, set on the device (no host array uploaded: the
/// renders' class arrays hold a byte per tile of every level, about a megabyte at 1024²).
pub(super) fn filled(
    stream: &std::sync::Arc<cudarc::driver::CudaStream>,
    n: usize,
    byte: u8,
) -> Result<cudarc::driver::CudaSlice<u8>, crate::gpu::GpuError> {
    use crate::gpu::Context;
    // SAFETY: every byte is set below, before anything reads it.
    let mut v = unsafe { stream.alloc::<u8>(n.max(1)) }.during("allocating the class arrays")?;
    fill(stream, &mut v, byte)?;
    Ok(v)
}

/// Sets every byte of `v` to `byte` (queued on `stream`).
pub(super) fn fill(
    stream: &std::sync::Arc<cudarc::driver::CudaStream>,
    v: &mut cudarc::driver::CudaSlice<u8>,
    byte: u8,
) -> Result<(), crate::gpu::GpuError> {
    use crate::gpu::Context;
    use cudarc::driver::DevicePtrMut;
    let n = v.len();
    let (ptr, _record) = v.device_ptr_mut(stream);
    // SAFETY: `ptr` holds n bytes allocated on `stream`; u8 takes any byte.
    unsafe { cudarc::driver::result::memset_d8_async(ptr, byte, n, stream.cu_stream()) }
        .during("setting the class arrays")
}

/// Threads per block of the persistent kernels (the ray search's: a warp's lanes take new
/// rays as theirs end, so the grid is what the device holds at once, not one thread a ray).
pub(super) const PERSISTENT_BLOCK: u32 = 128;

/// Blocks of [`PERSISTENT_BLOCK`] threads of `function` that the device of `ctx` holds at once:
/// the grid of a persistent kernel.
pub(super) fn resident_blocks(
    ctx: &std::sync::Arc<cudarc::driver::CudaContext>,
    function: &cudarc::driver::CudaFunction,
) -> Result<u32, crate::gpu::GpuError> {
    crate::gpu::resident_blocks(ctx, function, PERSISTENT_BLOCK)
}

/// `old` if it has room for `n` elements (at least one), else a new buffer whose elements are
/// unset (`old` freed first). For renderers that keep their buffers from frame to frame;
/// callers write every element they read (or clear it) in each frame.
pub(super) fn room<T: cudarc::driver::DeviceRepr>(
    stream: &std::sync::Arc<cudarc::driver::CudaStream>,
    old: Option<cudarc::driver::CudaSlice<T>>,
    n: usize,
    what: &'static str,
) -> Result<cudarc::driver::CudaSlice<T>, crate::gpu::GpuError> {
    use crate::gpu::Context;
    let n = n.max(1);
    match old {
        Some(b) if b.len() >= n => Ok(b),
        old => {
            drop(old);
            // SAFETY: the callers' contract above: nothing is read before it is written.
            unsafe { stream.alloc::<T>(n) }.during(what)
        }
    }
}

/// Page-locked host memory for at least `n` values: `old` if it is large enough, else a new
/// allocation (`old` freed first) in `stream`'s context. Flags 0: memory the host reads
/// quickly (not `alloc_pinned`'s write-combined memory).
///
/// # Safety
/// The new memory is uninitialized: the caller writes what it reads.
pub(super) unsafe fn pinned_room<T: cudarc::driver::DeviceRepr>(
    stream: &std::sync::Arc<cudarc::driver::CudaStream>,
    old: Option<cudarc::driver::PinnedHostSlice<T>>,
    n: usize,
    what: &'static str,
) -> Result<cudarc::driver::PinnedHostSlice<T>, crate::gpu::GpuError> {
    use crate::gpu::Context;
    match old {
        Some(h) if h.len() >= n => Ok(h),
        old => {
            drop(old);
            // SAFETY: the caller's contract.
            unsafe { stream.context().alloc_pinned_with_flags::<T>(n.max(1), 0) }.during(what)
        }
    }
}

/// Pushes the arguments every tile-box kernel takes, in its order: the region's rounded
/// constants ([`crate::search::Axes::constants`]), the tile size, the image's width and
/// height.
pub(super) fn push_grid<'a>(
    b: &mut cudarc::driver::LaunchArgs<'a>,
    a: &'a crate::search::Axes,
    tile: &'a u32,
    plan: &'a crate::search::Plan,
) {
    use cudarc::driver::PushKernelArg;
    for v in a.x_lo.iter().chain(&a.x_hi).chain(&a.y_lo).chain(&a.y_hi) {
        b.arg(v);
    }
    b.arg(tile).arg(&plan.width).arg(&plan.height);
}

/// Grows `buf` to hold at least `len` elements (a power of two, so that a search's lists grow
/// in few steps); what it held is gone. A search reads only what its rounds wrote.
pub(super) fn grow<U: cudarc::driver::DeviceRepr>(
    stream: &std::sync::Arc<cudarc::driver::CudaStream>,
    buf: &mut Option<cudarc::driver::CudaSlice<U>>,
    len: usize,
) -> Result<(), crate::gpu::GpuError> {
    use crate::gpu::Context;
    if buf.as_ref().is_none_or(|b| b.len() < len) {
        *buf = None;
        // SAFETY: the search writes every element it reads.
        *buf = Some(
            unsafe { stream.alloc::<U>(len.next_power_of_two()) }
                .during("allocating the search's work lists")?,
        );
    }
    Ok(())
}

/// [`grow`], keeping the first `kept` elements.
pub(crate) fn grow_keeping<U: cudarc::driver::DeviceRepr>(
    stream: &std::sync::Arc<cudarc::driver::CudaStream>,
    buf: &mut Option<cudarc::driver::CudaSlice<U>>,
    len: usize,
    kept: usize,
) -> Result<(), crate::gpu::GpuError> {
    use crate::gpu::Context;
    if buf.as_ref().is_none_or(|b| b.len() < len) {
        // SAFETY: the first `kept` elements are copied below; the search writes the rest
        // before it reads them.
        let mut bigger = unsafe { stream.alloc::<U>(len.next_power_of_two()) }
            .during("allocating the search's work lists")?;
        if let Some(old) = buf.as_ref().filter(|_| kept > 0) {
            stream
                .memcpy_dtod(&old.slice(..kept), &mut bigger.slice_mut(..kept))
                .during("moving the search's boxes")?;
        }
        *buf = Some(bigger);
    }
    Ok(())
}

/// The kernel `ivjit_list_inputs` (`list.cu`): a work list of boxes of doubles (box i's side k
/// at `list[2(i nv + k)]`) as an expression's batch (structure of arrays, rounded outward to
/// `T`), for the rules that keep such lists (exclude, pave); compiled after [`prelude`].
pub(super) const LIST_INPUTS: &str = include_str!("list.cu");

/// A 1-D launch of `n` threads (grid-stride kernels: any grid is correct).
pub(super) fn config(n: usize) -> LaunchConfig {
    let block = 256u32;
    LaunchConfig {
        grid_dim: (n.div_ceil(block as usize).clamp(1, 1 << 20) as u32, 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// The start of every search kernel's CUDA C: the element type `T` of the expression's
/// bounds, `lo_of` / `hi_of`, a double rounded down / up to `T` (exact for double), and
/// `tile_bounds` (`tile.cu`), the bounds of a tile's pixels.
pub(super) fn prelude(p: Precision) -> String {
    let (t, lo, hi) = match p {
        Precision::F64 => ("double", "(x)", "(x)"),
        Precision::F32 => ("float", "__double2float_rd(x)", "__double2float_ru(x)"),
    };
    format!(
        "typedef {t} T;\ntypedef unsigned int u32;\ntypedef unsigned long long u64;\n\
         __device__ __forceinline__ T lo_of(double x) {{ return {lo}; }}\n\
         __device__ __forceinline__ T hi_of(double x) {{ return {hi}; }}\n{}",
        include_str!("tile.cu")
    )
}

/// The milliseconds at which the steps of one device search ended, printed under
/// `IVJIT_BATCH_TRACE` as `what ms, ...` (where a frame's host time goes).
pub(super) struct Marks {
    start: std::time::Instant,
    marks: Vec<(&'static str, f64)>,
}

impl Marks {
    pub(super) fn new() -> Marks {
        Marks {
            start: std::time::Instant::now(),
            marks: Vec::new(),
        }
    }

    /// Marks the end of step `what`.
    pub(super) fn mark(&mut self, what: &'static str) {
        let ms = self.start.elapsed().as_secs_f64() * 1e3;
        self.marks.push((what, ms));
    }

    /// `{head}: ms what t, ...` on standard error when the batches are traced.
    pub(super) fn print(&self, head: &str) {
        if crate::gpu::env::batch_trace() {
            let shown: Vec<String> = self
                .marks
                .iter()
                .map(|(w, t)| format!("{w} {t:.2}"))
                .collect();
            eprintln!("{head}: ms {}", shown.join(", "));
        }
    }
}
