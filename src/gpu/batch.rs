//! Streaming a batch through one device: chunks, pinned staging buffers, two streams.
//!
//! A device's share of the batch (elements `a..b` of each of the caller's input arrays) is
//! cut into chunks of at most `chunk` elements. Each chunk goes through one of two *slots*
//! (chunk k through slot k % 2). A slot owns a stream, device input/output buffers and pinned
//! host staging buffers for one chunk. For a chunk, the host gathers the chunk's slice of every
//! input array into the slot's pinned input buffer in the chunk's own compact SoA layout (stride
//! = the chunk's length `m`), then enqueues on the slot's stream: the upload, the kernel launched
//! with `n = m`, and the download into the pinned output buffer. While chunk k runs on one
//! stream, the host fills the other slot and chunk k+1's upload runs on the other stream. Before
//! a slot is reused its stream is synchronized and the previous chunk's outputs are scattered
//! into the caller's output arrays.
//!
//! The gather (f64 to the kernel's type) and the scatter (back to f64) are the host's share of
//! the work, and one thread copies only a few GB/s: both run on rayon's pool in tasks of
//! [`PARALLEL_PIECE`] elements ([`convert`]); a chunk that small is copied on the calling
//! thread.
//!
//! When the caller's slices are page-locked ([`super::pin`], `direct` jobs, f64 only), the
//! host does no copying: each chunk is uploaded straight from the caller's input arrays (one
//! copy per array, into the chunk's compact layout) and
//! downloaded straight into the output arrays; the staging buffers stay unused.
//!
//! With `IVJIT_BATCH_TRACE` set, each device's share prints one line to stderr: the mode, the
//! chunks, and the host's time gathering, waiting for the device and scattering.
//!
//! Any driver error stops the batch and is returned with the device, the chunk index and the
//! step; the caller then discards the whole output (no partial result is returned).

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use rayon::prelude::*;

use cudarc::driver::{
    result, sys, CudaContext, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr,
    DriverError, LaunchConfig, PinnedHostSlice, ValidAsZeroBits,
};

use super::GpuError;
use crate::scalar::Precision;

/// Elements per task when the host converts or checks a batch in parallel (rayon): large
/// enough that a task (tens of microseconds) outweighs handing it to the pool, small enough to
/// spread a chunk of a few million elements over every core. A batch of at most this many is
/// handled on the calling thread.
pub(crate) const PARALLEL_PIECE: usize = 1 << 16;

/// One batch as every device sees it.
pub(crate) struct Job<'a> {
    pub(crate) precision: Precision,
    /// `n_in` arrays of `n_total` elements.
    pub(crate) inputs: &'a [&'a [f64]],
    pub(crate) n_in: usize,
    pub(crate) forced_chunk: Option<usize>,
    /// The caller's inputs and outputs are page-locked: copy them directly (f64 only).
    pub(crate) direct: bool,
}

/// Whether `IVJIT_BATCH_TRACE` asks for the per-device timing line.
fn tracing() -> bool {
    static TRACE: OnceLock<bool> = OnceLock::new();
    *TRACE.get_or_init(super::env::batch_trace)
}

/// Host time of one device's share, by what the host was doing.
#[derive(Default)]
struct Trace {
    gather: Duration,
    wait: Duration,
    scatter: Duration,
}

/// A float type of the kernel ABI.
pub(crate) trait Elem: DeviceRepr + ValidAsZeroBits + Copy + Send + Sync + 'static {
    /// Whether this is f64 (the caller's own type: direct copies need no conversion).
    const IS_F64: bool;
    fn from_f64(x: f64) -> Self;
    fn to_f64(self) -> f64;
}

impl Elem for f64 {
    const IS_F64: bool = true;
    fn from_f64(x: f64) -> Self {
        x
    }
    fn to_f64(self) -> f64 {
        self
    }
}

impl Elem for f32 {
    const IS_F64: bool = false;
    fn from_f64(x: f64) -> Self {
        // The caller guarantees f32 values (bounds already rounded outward to f32).
        x as f32
    }
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
}

/// The chunk being processed in a slot.
#[derive(Clone, Copy, Debug)]
struct Pending {
    chunk: usize,
    start: usize,
    len: usize,
}

/// One half of the double buffer.
pub(crate) struct Slot<T> {
    stream: Arc<CudaStream>,
    d_in: CudaSlice<T>,
    d_out: CudaSlice<T>,
    h_in: PinnedHostSlice<T>,
    h_out: PinnedHostSlice<T>,
    pending: Option<Pending>,
}

impl<T> Drop for Slot<T> {
    fn drop(&mut self) {
        // Wait for any copy still in flight before the pinned buffers are freed (after an
        // error the stream may hold work; its error is of no interest any more).
        let _ = self.stream.synchronize();
    }
}

/// Two slots sized for chunks of `chunk` elements, for `n_in` input and `n_out` output arrays.
pub(crate) struct Slots<T> {
    pub(crate) chunk: usize,
    slots: Vec<Slot<T>>,
}

/// Staging for either precision (a kernel has one), kept in the device kernel's pool.
pub(crate) enum Pipeline {
    F64(Slots<f64>),
    F32(Slots<f32>),
}

impl Pipeline {
    pub(crate) fn chunk(&self) -> usize {
        match self {
            Pipeline::F64(s) => s.chunk,
            Pipeline::F32(s) => s.chunk,
        }
    }
}

/// The kernel a pipeline launches on each chunk: a kernel loaded on one device
/// (`gpu::kernel::DeviceKernel`).
pub(crate) trait ChunkKernel {
    /// The device's ordinal.
    fn ordinal(&self) -> usize;
    /// The device's context.
    fn context(&self) -> &Arc<CudaContext>;
    /// Launches the kernel on `stream` over `n` elements of structure-of-arrays device memory
    /// (the batch kernel's ABI).
    ///
    /// # Safety
    /// The addresses must be valid device memory of this context for those sizes until the
    /// stream has run the launch; the outputs must not overlap the inputs.
    unsafe fn launch_chunk(
        &self,
        stream: &Arc<CudaStream>,
        n: usize,
        inputs: u64,
        outputs: u64,
    ) -> Result<(), DriverError>;
}

impl<T: Elem> Slots<T> {
    /// Allocates two slots on `ctx`.
    pub(crate) fn new(
        ctx: &Arc<CudaContext>,
        chunk: usize,
        n_in: usize,
        n_out: usize,
    ) -> Result<Slots<T>, DriverError> {
        ctx.bind_to_thread()?;
        let in_len = (n_in * chunk).max(1);
        let out_len = (n_out * chunk).max(1);
        let mut slots = Vec::with_capacity(2);
        for _ in 0..2 {
            let stream = ctx.new_stream()?;
            // SAFETY: the buffers are written (uploads: by the host gather; outputs: by the
            // kernel and the download) before any element is read.
            let d_in = unsafe { stream.alloc::<T>(in_len) }?;
            let d_out = unsafe { stream.alloc::<T>(out_len) }?;
            // Write-combined for the input (the host only writes it), cached for the output
            // (the host reads it; reads of write-combined memory are very slow).
            let h_in = unsafe {
                ctx.alloc_pinned_with_flags::<T>(in_len, sys::CU_MEMHOSTALLOC_WRITECOMBINED)
            }?;
            let h_out = unsafe { ctx.alloc_pinned_with_flags::<T>(out_len, 0) }?;
            slots.push(Slot {
                stream,
                d_in,
                d_out,
                h_in,
                h_out,
                pending: None,
            });
        }
        Ok(Slots { chunk, slots })
    }

    /// Runs elements `a..b` of `job` and writes output array j's elements `a..b` to `outs[j]`
    /// (each `b - a` long).
    pub(crate) fn run(
        &mut self,
        dk: &impl ChunkKernel,
        job: &Job<'_>,
        (a, b): (usize, usize),
        outs: &mut [&mut [f64]],
    ) -> Result<(), GpuError> {
        let (inputs, n_in) = (job.inputs, job.n_in);
        // Direct copies move f64 values unconverted; an f32 pipeline always stages.
        let direct = job.direct && T::IS_F64;
        let device = dk.ordinal();
        let err = |chunk: usize, step: &'static str| {
            move |source: DriverError| GpuError::Batch {
                device,
                chunk,
                step,
                source,
            }
        };
        dk.context()
            .bind_to_thread()
            .map_err(err(0, "binding the device's context"))?;
        let started = Instant::now();
        let mut trace = Trace::default();
        let n_out = outs.len();
        let chunk = self.chunk.max(1);
        let elem = std::mem::size_of::<T>() as u64;
        let mut start = a;
        let mut index = 0;
        while start < b {
            let m = chunk.min(b - start);
            let slot = &mut self.slots[index % 2];
            if let Some(p) = slot.pending.take() {
                finish(slot, p, a, outs, n_out, device, direct, &mut trace)?;
            }
            let Slot {
                stream,
                d_in,
                d_out,
                h_in,
                h_out,
                pending,
            } = slot;
            let cu_stream = stream.cu_stream();
            if direct {
                let (dst, _guard) = d_in.device_ptr(stream);
                for (k, array) in inputs.iter().enumerate().take(n_in) {
                    let src = &array[start..][..m];
                    // SAFETY: `src` is the caller's (page-locked) f64 memory, borrowed until
                    // the batch returns, and every stream is synchronized before that; the
                    // device buffer holds n_in * chunk >= n_in * m elements of T = f64.
                    unsafe {
                        result::memcpy_htod_async(dst + (k * m) as u64 * elem, src, cu_stream)
                    }
                    .map_err(err(index, "uploading the inputs"))?;
                }
            } else {
                // Gather the chunk's slice of every input array, compact (stride m).
                let t = Instant::now();
                let staged = h_in
                    .as_mut_slice()
                    .map_err(err(index, "waiting for the staging buffer"))?;
                let arrays = staged[..n_in * m].chunks_mut(m).enumerate();
                convert(
                    arrays.map(|(k, dst)| (dst, &inputs[k][start..][..m])),
                    T::from_f64,
                );
                trace.gather += t.elapsed();
                if n_in > 0 {
                    let (dst, _guard) = d_in.device_ptr(stream);
                    // SAFETY: `staged` is pinned memory owned by this slot that is not touched
                    // by the host again until this stream has been synchronized (in `finish`);
                    // the device buffer holds n_in * chunk >= n_in * m elements; the context
                    // is current.
                    unsafe { result::memcpy_htod_async(dst, &staged[..n_in * m], cu_stream) }
                        .map_err(err(index, "uploading the inputs"))?;
                }
            }
            {
                let (inp, _gi) = d_in.device_ptr(stream);
                let (outp, _go) = d_out.device_ptr_mut(stream);
                // SAFETY: the expression reads n_in * m elements of T from `inp` and writes
                // n_out * m to `outp`; the buffers hold n_in * chunk and n_out * chunk
                // elements (at least 1), chunk >= m, and are distinct.
                unsafe { dk.launch_chunk(stream, m, inp, outp) }
                    .map_err(err(index, "launching the kernel"))?;
            }
            if direct {
                let off = start - a;
                let (src, _guard) = d_out.device_ptr(stream);
                for (j, out) in outs.iter_mut().enumerate() {
                    let dst: &mut [f64] = &mut out[off..off + m];
                    // SAFETY: as for the direct upload; the host does not touch `outs` until
                    // the batch has synchronized every stream.
                    unsafe {
                        result::memcpy_dtoh_async(dst, src + (j * m) as u64 * elem, cu_stream)
                    }
                    .map_err(err(index, "downloading the outputs"))?;
                }
            } else {
                let fetched = h_out
                    .as_mut_slice()
                    .map_err(err(index, "waiting for the staging buffer"))?;
                let (src, _guard) = d_out.device_ptr(stream);
                // SAFETY: as for the upload; `fetched` is only read after the stream is
                // synchronized.
                unsafe { result::memcpy_dtoh_async(&mut fetched[..n_out * m], src, cu_stream) }
                    .map_err(err(index, "downloading the outputs"))?;
            }
            *pending = Some(Pending {
                chunk: index,
                start,
                len: m,
            });
            start += m;
            index += 1;
        }
        for slot in &mut self.slots {
            if let Some(p) = slot.pending.take() {
                finish(slot, p, a, outs, n_out, device, direct, &mut trace)?;
            }
        }
        if tracing() {
            eprintln!(
                "ivjit batch: device {device}, {} elements in {index} chunks of <= {chunk}, {}: \
                 {:.3} s (host: gather {:.3} s, wait {:.3} s, scatter {:.3} s)",
                b - a,
                if direct { "direct" } else { "staged" },
                started.elapsed().as_secs_f64(),
                trace.gather.as_secs_f64(),
                trace.wait.as_secs_f64(),
                trace.scatter.as_secs_f64(),
            );
        }
        Ok(())
    }
}

/// Waits for the chunk in `slot` and, unless the copies were direct, scatters its outputs.
#[allow(clippy::too_many_arguments)] // the slot, its chunk, where it goes, and the bookkeeping
fn finish<T: Elem>(
    slot: &mut Slot<T>,
    p: Pending,
    a: usize,
    outs: &mut [&mut [f64]],
    n_out: usize,
    device: usize,
    direct: bool,
    trace: &mut Trace,
) -> Result<(), GpuError> {
    let t = Instant::now();
    slot.stream
        .synchronize()
        .map_err(|source| GpuError::Batch {
            device,
            chunk: p.chunk,
            step: "running the chunk (upload, kernel, download)",
            source,
        })?;
    trace.wait += t.elapsed();
    if direct {
        return Ok(());
    }
    let t = Instant::now();
    let fetched = slot.h_out.as_slice().map_err(|source| GpuError::Batch {
        device,
        chunk: p.chunk,
        step: "reading the staging buffer",
        source,
    })?;
    let m = p.len;
    let off = p.start - a;
    let arrays = outs.iter_mut().take(n_out).enumerate();
    convert(
        arrays.map(|(j, out)| (&mut out[off..off + m], &fetched[j * m..(j + 1) * m])),
        T::to_f64,
    );
    trace.scatter += t.elapsed();
    Ok(())
}

/// Writes `f(s)` for every element `s` of each pair's source to the same place of its
/// destination (the two have the same length). The pairs are cut and grouped into tasks of
/// [`PARALLEL_PIECE`] elements that run on rayon's pool; when all of them hold at most that
/// many, on the calling thread, which costs no hand-off to the pool.
pub(crate) fn convert<'a, S, D>(
    pairs: impl Iterator<Item = (&'a mut [D], &'a [S])>,
    f: impl Fn(S) -> D + Sync,
) where
    S: Copy + Sync + 'a,
    D: Send + 'a,
{
    let copy = |task: Vec<(&'a mut [D], &'a [S])>| {
        for (dst, src) in task {
            for (d, &s) in dst.iter_mut().zip(src) {
                *d = f(s);
            }
        }
    };
    let mut tasks = Vec::new();
    let mut task = Vec::new();
    let mut fill = 0;
    for (mut dst, mut src) in pairs {
        // A shorter source would leave stale elements in the destination.
        assert_eq!(dst.len(), src.len(), "convert: lengths differ");
        while !dst.is_empty() {
            let take = (PARALLEL_PIECE - fill).min(dst.len());
            let (d, dst_rest) = std::mem::take(&mut dst).split_at_mut(take);
            let (s, src_rest) = src.split_at(take);
            task.push((d, s));
            (dst, src) = (dst_rest, src_rest);
            fill += take;
            if fill == PARALLEL_PIECE {
                tasks.push(std::mem::take(&mut task));
                fill = 0;
            }
        }
    }
    if !task.is_empty() {
        tasks.push(task);
    }
    if tasks.len() <= 1 {
        tasks.into_iter().for_each(copy);
    } else {
        tasks.into_par_iter().for_each(copy);
    }
}

/// The launch configuration of `m` elements for a kernel with occupancy-derived `block` and
/// `max_grid` (enough blocks to fill the device).
/// The device address of element `at` of array `k` of a structure-of-arrays block at `base`:
/// arrays of `n` elements of `elem` bytes, one after the other.
pub(crate) fn soa(base: u64, n: usize, elem: usize) -> impl Fn(usize, usize) -> u64 {
    move |k, at| base + ((k * n + at) * elem) as u64
}

pub(crate) fn launch_config(block: u32, max_grid: u32, m: usize) -> LaunchConfig {
    let blocks = m.div_ceil(block.max(1) as usize);
    let grid = blocks.min(max_grid.max(1) as usize).max(1) as u32;
    LaunchConfig {
        grid_dim: (grid, 1, 1),
        block_dim: (block.max(1), 1, 1),
        shared_mem_bytes: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every element of every destination written with the converted source, for arrays
    /// shorter than, as long as and longer than a task, alone and together.
    fn check<S, D>(lens: &[usize], value: impl Fn(usize) -> S, f: impl Fn(S) -> D + Sync + Copy)
    where
        S: Copy + Sync + std::fmt::Debug,
        D: Send + Copy + PartialEq + std::fmt::Debug,
        D: From<u8>,
    {
        let mut base = 0;
        let sources: Vec<Vec<S>> = lens
            .iter()
            .map(|&len| {
                let v = (0..len).map(|i| value(base + i)).collect();
                base += len;
                v
            })
            .collect();
        // A sentinel that no conversion below produces, to see elements left unwritten.
        let sentinel = D::from(77);
        let mut dests: Vec<Vec<D>> = lens.iter().map(|&len| vec![sentinel; len]).collect();
        convert(
            dests
                .iter_mut()
                .zip(&sources)
                .map(|(d, s)| (d.as_mut_slice(), s.as_slice())),
            f,
        );
        for (k, (d, s)) in dests.iter().zip(&sources).enumerate() {
            for (i, (&d, &s)) in d.iter().zip(s).enumerate() {
                assert_eq!(d, f(s), "lens {lens:?}: array {k}, element {i}");
            }
        }
    }

    #[test]
    fn convert_writes_every_element_for_any_sizes() {
        let p = PARALLEL_PIECE;
        let cases: &[&[usize]] = &[
            &[],
            &[0],
            &[1],
            &[7, 0, 3],
            &[p - 1],
            &[p],
            &[p + 1],
            &[p - 1, 2],
            &[p / 3; 7],
            &[3 * p + 7, 1, p, 5],
        ];
        // Values are k + 0.5, never 77.
        let value = |i: usize| (i % 1000) as f64 + 0.5;
        for lens in cases {
            // Gather of an f32 kernel and of an f64 kernel.
            check(lens, value, <f32 as Elem>::from_f64);
            check(lens, value, <f64 as Elem>::from_f64);
            // Scatter.
            check(lens, |i| value(i) as f32, <f32 as Elem>::to_f64);
            check(lens, value, <f64 as Elem>::to_f64);
        }
    }

    #[test]
    #[should_panic(expected = "lengths differ")]
    fn convert_refuses_pairs_of_different_lengths() {
        let mut d = [0.0f64; 3];
        convert(std::iter::once((&mut d[..], &[1.0f64, 2.0][..])), |x| x);
    }
}
