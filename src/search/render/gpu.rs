//! The *classify* rule over an image on the GPU.
//!
//! A round is three launches on one stream: `ivjit_search_boxes` turns the live tiles into
//! boxes (structure of arrays, the expression kernel's input layout) with the same directed
//! rounding as `Axes::tile_box` (`__dadd_rd`, `__dmul_ru`, ... are correctly rounded,
//! as the CPU's emulation is); the expression's own kernel evaluates them; then
//! `ivjit_search_classify` writes each tile's class into the level's class array, counts the
//! classes, and appends the children of every boundary tile to the next list (an atomic
//! counter). The host reads four counters per round (the next list's length sizes the next
//! launch). At the end `ivjit_search_compose` writes each pixel's class from the level arrays,
//! and the image is the one copy back.
//!
//! The kernels are CUDA C (`render.cu`), loaded by `crate::gpu::search_module`.
use crate::search::kernels;
use std::sync::Arc;

use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, PushKernelArg,
};

use crate::gpu::{self, Context, GpuError};
use crate::search::kernels::config;
use crate::search::render::UNSET;
use crate::search::{Plan, Rendered, Round2};
use crate::{Error, Evaluator, Precision};

/// The search kernels of one device and precision.
struct Kernels {
    boxes: CudaFunction,
    classify: CudaFunction,
    compose: CudaFunction,
}

/// The CUDA C source of the search kernels for element type `p`.
pub(crate) fn source(p: Precision) -> String {
    format!(
        "{}#define UNSET {UNSET}\n{}",
        kernels::prelude(p),
        include_str!("render.cu")
    )
}

/// The kernels for the device of `ctx` (the one search-module loader keeps them).
fn kernels(ctx: &Arc<CudaContext>, ordinal: usize, p: Precision) -> Result<Kernels, GpuError> {
    let k = gpu::search_module::load(
        ctx,
        ordinal,
        gpu::search_module::SearchModule {
            name: "render",
            cuda: source(p),
            linked: Vec::new(),
            kernels: &[
                "ivjit_search_boxes",
                "ivjit_search_classify",
                "ivjit_search_compose",
            ],
        },
    )?;
    Ok(Kernels {
        boxes: k[0].clone(),
        classify: k[1].clone(),
        compose: k[2].clone(),
    })
}

/// [`crate::search::render()`] on the GPU of `eval`.
pub(crate) fn render(eval: &Evaluator, plan: &Plan) -> Result<Rendered, Error> {
    let kernel = eval.gpu_kernel().expect("a GPU evaluator has a kernel");
    Ok(match kernel.precision() {
        Precision::F64 => run::<f64>(kernel, plan)?,
        Precision::F32 => run::<f32>(kernel, plan)?,
    })
}

fn run<T>(kernel: &gpu::GpuKernel, plan: &Plan) -> Result<Rendered, GpuError>
where
    T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits,
{
    let dk = kernel.primary();
    let ctx = &dk.ctx;
    ctx.bind_to_thread()
        .during("binding the device's context")?;
    let k = kernels(ctx, dk.ordinal, kernel.precision())?;
    let stream = ctx.new_stream().during("creating a stream")?;
    let levels = &plan.levels;

    // Every buffer at its largest size up front: a level's list holds at most its tile count.
    let cap = levels
        .iter()
        .map(|g| g.rows as usize * g.cols as usize)
        .max()
        .unwrap_or(1);
    let nv = plan.n_vars;
    let mut offsets = Vec::with_capacity(levels.len());
    let mut total = 0usize;
    for g in levels {
        offsets.push(total);
        total += g.rows as usize * g.cols as usize;
    }
    let alloc = "allocating the search's work lists";
    let mut tiles: CudaSlice<u32> = stream.alloc_zeros(2 * cap).during(alloc)?;
    let mut next: CudaSlice<u32> = stream.alloc_zeros(2 * cap).during(alloc)?;
    let mut inputs: CudaSlice<T> = stream.alloc_zeros((2 * nv * cap).max(1)).during(alloc)?;
    let mut outputs: CudaSlice<T> = stream.alloc_zeros(2 * cap).during(alloc)?;
    let mut classes: CudaSlice<u8> = kernels::filled(&stream, total, UNSET)?;
    let mut counts: CudaSlice<u32> = stream.alloc_zeros(4).during(alloc)?;

    // The first level's tiles, row-major: the search's one upload.
    let g0 = levels[0];
    let first: Vec<u32> = (0..g0.rows)
        .flat_map(|r| (0..g0.cols).flat_map(move |c| [r, c]))
        .collect();
    stream
        .memcpy_htod(&first, &mut tiles.slice_mut(..first.len()))
        .during("uploading the first tiles")?;
    let mut n = (g0.rows * g0.cols) as usize;
    let a = plan.axes;
    let (kx, ky) = (
        plan.var_x.map_or(-1, |k| k as i32),
        plan.var_y.map_or(-1, |k| k as i32),
    );
    let mut rounds = Vec::with_capacity(levels.len());
    for (l, g) in levels.iter().enumerate() {
        let mut round = Round2 {
            tile: g.tile,
            boxes: n as u64,
            ..Round2::default()
        };
        if n == 0 {
            rounds.push(round);
            continue;
        }
        let n32 = n as u32;
        let mut b = stream.launch_builder(&k.boxes);
        b.arg(&n32).arg(&tiles).arg(&mut inputs);
        kernels::push_grid(&mut b, &a, &g.tile, plan);
        b.arg(&kx).arg(&ky);
        // SAFETY: the arguments match the kernel's signature; `tiles` holds 2n, `inputs`
        // 2 nv n elements (n <= cap).
        unsafe { b.launch(config(n)) }.during("launching the search's box kernel")?;

        {
            let (inp, _gi) = inputs.device_ptr(&stream);
            let (outp, _go) = outputs.device_ptr_mut(&stream);
            // SAFETY: the expression reads 2 nv n and writes 2 n elements (one output) with
            // stride n.
            unsafe { dk.launch_soa(&stream, n, inp, outp) }
                .during("launching the expression kernel")?;
        }

        stream
            .memset_zeros(&mut counts)
            .during("clearing the search's counters")?;
        let (kk, nr, nc) = match levels.get(l + 1) {
            Some(ng) => (g.tile / ng.tile, ng.rows, ng.cols),
            None => (0, 0, 0),
        };
        let mut cls = classes.slice_mut(offsets[l]..offsets[l] + (g.rows * g.cols) as usize);
        let mut c = stream.launch_builder(&k.classify);
        c.arg(&n32)
            .arg(&tiles)
            .arg(&outputs)
            .arg(&mut cls)
            .arg(&g.cols);
        c.arg(&kk).arg(&nr).arg(&nc).arg(&mut next).arg(&mut counts);
        // SAFETY: matches the signature; children of level l fit the next level's tile count,
        // which is at most `cap`.
        unsafe { c.launch(config(n)) }.during("launching the search's classify kernel")?;
        let counted = stream
            .clone_dtoh(&counts)
            .during("reading the search's counters")?;
        round.inside = counted[2] as u64;
        round.outside = counted[1] as u64;
        round.boundary = counted[3] as u64;
        rounds.push(round);
        n = counted[0] as usize;
        std::mem::swap(&mut tiles, &mut next);
    }

    let classes = compose(&stream, &k.compose, plan, &classes, &offsets)?;
    Ok(Rendered {
        width: plan.width,
        height: plan.height,
        classes,
        rounds,
    })
}

/// The compose kernel of the device of `ctx` (for the tape render, which classifies its tiles
/// itself).
pub(crate) fn compose_kernel(
    ctx: &Arc<CudaContext>,
    ordinal: usize,
    p: Precision,
) -> Result<CudaFunction, GpuError> {
    Ok(kernels(ctx, ordinal, p)?.compose.clone())
}

/// What a renderer that draws frame after frame keeps for [`compose`]: the device image and
/// the page-locked host memory it comes back through. A 4096² image copied into fresh pageable
/// memory took 15-18 ms in most frames against 3-5 ms in the fastest (run 36); copied into
/// kept page-locked memory it is one DMA at the link's speed and one host copy.
#[derive(Default)]
pub(crate) struct ImageBuffers {
    device: Option<CudaSlice<u8>>,
    host: Option<cudarc::driver::PinnedHostSlice<u8>>,
    table: Option<CudaSlice<u32>>,
}

/// Each pixel's class from the level arrays (`classes`, level l at `offsets[l]`): the image,
/// copied back.
pub(crate) fn compose(
    stream: &Arc<CudaStream>,
    compose: &CudaFunction,
    plan: &Plan,
    classes: &CudaSlice<u8>,
    offsets: &[usize],
) -> Result<Vec<u8>, GpuError> {
    let mut bufs = ImageBuffers::default();
    let pixels = plan.width as usize * plan.height as usize;
    let rows = Rows::all(plan);
    let image = compose_on_device(stream, compose, plan, classes, offsets, rows, &mut bufs)?;
    stream
        .clone_dtoh(&image.slice(..pixels))
        .during("downloading the image")
}

/// [`compose`] for a renderer that keeps `bufs` from frame to frame, queued: the image
/// composed and its copy into `bufs`' page-locked memory on `stream`, not waited for. After the
/// stream is synchronized, [`ImageBuffers::lend`] hands the image out where it arrived (no copy
/// on the host: a 4096² image is 16 MB, whose copy took longer than the frame).
pub(crate) fn compose_queued(
    stream: &Arc<CudaStream>,
    compose: &CudaFunction,
    plan: &Plan,
    classes: &CudaSlice<u8>,
    offsets: &[usize],
    bufs: &mut ImageBuffers,
) -> Result<(), GpuError> {
    let pixels = plan.width as usize * plan.height as usize;
    let rows = Rows::all(plan);
    let image = compose_on_device(stream, compose, plan, classes, offsets, rows, bufs)?;
    let pinned = queue_download(stream, &image, pixels, bufs.host.take())?;
    (bufs.device, bufs.host) = (Some(image), Some(pinned));
    Ok(())
}

/// The rows of an image a compose writes: those whose band (`row / band`) has
/// `band % count == index`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Rows {
    pub(crate) band: u32,
    pub(crate) index: u32,
    pub(crate) count: u32,
}

impl Rows {
    /// Every row of `plan`'s image.
    pub(crate) fn all(plan: &Plan) -> Rows {
        Rows {
            band: plan.height.max(1),
            index: 0,
            count: 1,
        }
    }
}

/// [`compose_queued`] for the image's `rows` only, without the copy back: the image stays in
/// `bufs`' device buffer, for a renderer that copies back only its own rows
/// ([`ImageBuffers::copy_rows`]).
pub(crate) fn compose_kept(
    stream: &Arc<CudaStream>,
    compose: &CudaFunction,
    plan: &Plan,
    classes: &CudaSlice<u8>,
    offsets: &[usize],
    rows: Rows,
    bufs: &mut ImageBuffers,
) -> Result<(), GpuError> {
    let image = compose_on_device(stream, compose, plan, classes, offsets, rows, bufs)?;
    bufs.device = Some(image);
    Ok(())
}

impl ImageBuffers {
    /// Copies bytes `at..at + band.len()` of the image [`compose_kept`] left on the device
    /// into each `(at, band)`, and waits for the copies. Where the bands are page-locked
    /// memory (allocated portable, so any device's context copies into it at full speed), the
    /// copies run side by side with other devices' until the wait.
    pub(crate) fn copy_rows(
        &self,
        stream: &Arc<CudaStream>,
        bands: &mut [(usize, &mut [u8])],
    ) -> Result<(), GpuError> {
        let Some(image) = &self.device else {
            return Err(GpuError::Tape("no image was composed".to_string()));
        };
        let what = "downloading the image's rows";
        for (at, band) in bands.iter_mut() {
            let view = image.slice(*at..*at + band.len());
            stream.memcpy_dtoh(&view, &mut **band).during(what)?;
        }
        // The bands stay borrowed until the copies into them are done.
        stream.synchronize().during(what)
    }

    /// The first `pixels` bytes of the image [`compose_queued`] copied back, lent to `f`
    /// (waiting for the copy if the stream was not synchronized).
    pub(crate) fn lend(&self, pixels: usize, f: &mut dyn FnMut(&[u8])) -> Result<(), GpuError> {
        match &self.host {
            Some(h) => {
                f(&h.as_slice().during("reading the image")?[..pixels]);
                Ok(())
            }
            None => Err(GpuError::Tape("no image was composed".to_string())),
        }
    }
}

/// The image's `rows` composed on the device, in `bufs`' device buffer (taken; the caller
/// gives it back) or a new one.
fn compose_on_device(
    stream: &Arc<CudaStream>,
    compose: &CudaFunction,
    plan: &Plan,
    classes: &CudaSlice<u8>,
    offsets: &[usize],
    rows: Rows,
    bufs: &mut ImageBuffers,
) -> Result<CudaSlice<u8>, GpuError> {
    let levels = &plan.levels;
    let pixels = plan.width as usize * plan.height as usize;
    // The compose kernel writes every pixel before the image is read.
    let mut image = kernels::room(stream, bufs.device.take(), pixels, "allocating the image")?;
    let table: Vec<u32> = levels
        .iter()
        .zip(offsets)
        .flat_map(|(g, &off)| [g.tile, g.cols, off as u32])
        .collect();
    let what = "uploading the level table";
    let mut dtable = kernels::room(stream, bufs.table.take(), table.len(), what)?;
    stream.memcpy_htod(&table, &mut dtable).during(what)?;
    let n_levels = levels.len() as u32;
    let mut c = stream.launch_builder(compose);
    c.arg(&mut image)
        .arg(&plan.width)
        .arg(&plan.height)
        .arg(classes)
        .arg(&dtable);
    c.arg(&n_levels)
        .arg(&rows.band)
        .arg(&rows.index)
        .arg(&rows.count);
    // SAFETY: matches the signature; `classes` holds every level's array at its offset, the
    // image at least width x height bytes. A thread composes eight pixels of a row.
    let groups = (plan.width as usize).div_ceil(8) * plan.height as usize;
    unsafe { c.launch(config(groups.div_ceil(rows.count as usize))) }
        .during("launching the search's compose kernel")?;
    bufs.table = Some(dtable);
    Ok(image)
}

/// The first `pixels` bytes of `image`, copied back into the page-locked memory in `host`
/// (allocated or grown here, kept by the caller for the next image) and lent to `f` there.
pub(crate) fn download_with(
    stream: &Arc<CudaStream>,
    image: &CudaSlice<u8>,
    pixels: usize,
    host: &mut Option<cudarc::driver::PinnedHostSlice<u8>>,
    f: &mut dyn FnMut(&[u8]),
) -> Result<(), GpuError> {
    let pinned = queue_download(stream, image, pixels, host.take())?;
    stream.synchronize().during("downloading the image")?;
    f(&pinned.as_slice().during("reading the image")?[..pixels]);
    *host = Some(pinned);
    Ok(())
}

/// Queues the copy of the first `pixels` bytes of `image` into page-locked memory: `old` if
/// it is large enough, else a new allocation (`old` freed first). Returns that memory, written
/// once the stream has run the copy.
fn queue_download(
    stream: &Arc<CudaStream>,
    image: &CudaSlice<u8>,
    pixels: usize,
    old: Option<cudarc::driver::PinnedHostSlice<u8>>,
) -> Result<cudarc::driver::PinnedHostSlice<u8>, GpuError> {
    let what = "allocating page-locked memory for the image";
    // SAFETY: the copy below writes the bytes read.
    let mut pinned = unsafe { kernels::pinned_room(stream, old, pixels, what) }?;
    stream
        .memcpy_dtoh(&image.slice(..pixels), &mut pinned)
        .during("downloading the image")?;
    Ok(pinned)
}
