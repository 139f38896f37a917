//! Ray tracing on the GPU: the ray search's persistent kernel (`search/ray/ray.cu`, the
//! composed expression linked in as `ivjit_eval`) makes each pixel's ray, clips it and searches
//! it; a second kernel (`trace.cu`, the surface linked in as `ivjit_surface`) shades the hits.
//! The host receives the image (and the hits).

use crate::search::kernels;
use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};
use rayon::prelude::*;

use crate::gpu::{self, Context, GpuError};
use crate::search::ray::gpu::{persistent_grid, ray_source, RAYS_CAMERA};
use crate::search::ray::{first_hits, Ray};
use crate::search::trace::{clip, hit_colors, Camera, Frame, View, Want};
use crate::search::SearchError;
use crate::{Error, Evaluator, Precision};

/// The CUDA C of the tracing module: the ray search's kernel and the shading kernel.
pub(crate) fn source(p: Precision) -> String {
    format!("{}{}", ray_source(p), include_str!("trace.cu"))
}

/// The search and shading kernels with both programs linked in, on the device of `dk`.
fn kernels_for(
    dk: &gpu::DeviceKernel,
    ray: &crate::scalar::Program,
    surface: &crate::scalar::Program,
) -> Result<(CudaFunction, CudaFunction), GpuError> {
    let k = gpu::search_module::load(
        &dk.ctx,
        dk.ordinal,
        gpu::search_module::SearchModule {
            name: "trace",
            cuda: source(ray.precision),
            linked: vec![
                (ray, crate::ptx::FUNCTION_NAME.to_string()),
                (surface, "ivjit_surface".to_string()),
            ],
            kernels: &["ivjit_search_rays", "ivjit_shade"],
        },
    )?;
    Ok((k[0].clone(), k[1].clone()))
}

/// [`crate::search::trace::trace`] on the GPU of `ray` (the frame's hits left empty when
/// `want` is the image alone: they are not copied back).
pub(crate) fn trace(
    ray: &Evaluator,
    surface: &Evaluator,
    axes: [Option<usize>; 3],
    cam: &Camera,
    view: &View,
    want: Want,
) -> Result<Frame, Error> {
    if view.split < 2 || view.split > 32 {
        return Err(SearchError::Options(format!(
            "split {}: the GPU ray search splits a piece into 2 to 32",
            view.split
        ))
        .into());
    }
    if ray.precision() != surface.precision() {
        return Err(SearchError::Options(
            "the surface must be compiled in the precision of the rays".to_string(),
        )
        .into());
    }
    let s = crate::search::ray::slots(ray)?;
    let kernel = ray.gpu_kernel().expect("a GPU evaluator has a kernel");
    let dk = kernel.primary();
    let ctx = &dk.ctx;
    let mut marks = kernels::Marks::new();
    ctx.bind_to_thread()
        .during("binding the device's context")?;
    // What the last frame of this evaluator kept, if it traced the same surface.
    let mut kept = match dk.kept.take::<TraceKept>() {
        Some(k) if k.surface.same_bits(surface.program()) => k,
        _ => {
            let (search, shade) = kernels_for(dk, ray.program(), surface.program())?;
            TraceKept {
                surface: surface.program().clone(),
                blocks: kernels::resident_blocks(ctx, &search)?,
                search,
                shade,
                stream: ctx.new_stream().during("creating a stream")?,
                cam: None,
                hits: None,
                status: None,
                rgb: None,
                boxes: None,
                host_hits: None,
                host_status: None,
                host_rgb: None,
            }
        }
    };
    marks.mark("kernel");
    let stream = kept.stream.clone();
    let (w, h) = (view.width, view.height);
    let n = w * h;
    let mut params = Vec::with_capacity(18);
    for v in [cam.eye, cam.forward, cam.right, cam.up, view.center] {
        params.extend_from_slice(&v);
    }
    params.extend_from_slice(&[view.radius, view.steps as f64, 1e-5 * view.radius]);
    let alloc = "allocating the frame";
    let mut d_cam = kernels::room(&stream, kept.cam.take(), params.len(), alloc)?;
    stream.memcpy_htod(&params, &mut d_cam).during(alloc)?;
    // Every element read is written first: by the kernel (every pixel's status and colour,
    // the hits of status 1, the only ones read), by the copies back, by the zeroing.
    let mut d_hits = kernels::room(&stream, kept.hits.take(), 2 * n, alloc)?;
    let mut d_status = kernels::room(&stream, kept.status.take(), n, alloc)?;
    let mut d_rgb = kernels::room(&stream, kept.rgb.take(), 3 * n, alloc)?;
    let mut d_boxes = kernels::room(&stream, kept.boxes.take(), 3, alloc)?;
    stream
        .memset_zeros(&mut d_boxes.slice_mut(..3))
        .during(alloc)?;
    marks.mark("device buffers");
    let slot = |k: Option<usize>| k.map_or(-1, |k| k as i32);
    let (kt, ku, kv) = (slot(s.t), slot(s.u), slot(s.v));
    let (sx, sy, sz) = (slot(axes[0]), slot(axes[1]), slot(axes[2]));
    let (w32, n32) = (w as u32, n as u32);
    // The search: the ray kernel's camera rays (pixel r of a w-wide image; the grid's
    // numbers unused).
    let search = kept.search.clone();
    let none = crate::search::ray::Grid::NONE;
    let (part, parts) = (0u32, 1u32);
    let mut b = stream.launch_builder(&search);
    b.arg(&n32).arg(&RAYS_CAMERA).arg(&d_cam);
    b.arg(&w32).arg(&part).arg(&parts);
    b.arg(&none.x0).arg(&none.dx).arg(&none.y1).arg(&none.dy);
    b.arg(&none.t0).arg(&none.t1).arg(&none.min_width);
    b.arg(&view.split).arg(&kt).arg(&ku).arg(&kv);
    b.arg(&mut d_hits).arg(&mut d_status).arg(&mut d_boxes);
    // SAFETY: matches the kernel's signature; `d_cam` holds the 18 numbers the kernel
    // reads, `d_hits` 2n, `d_status` n and `d_boxes` three (zeroed).
    unsafe { b.launch(persistent_grid(n, kept.blocks)) }.during("launching the tracing search")?;
    let h32 = h as u32;
    let shading = kept.shade.clone();
    let mut b = stream.launch_builder(&shading);
    b.arg(&w32).arg(&h32).arg(&d_cam);
    b.arg(&sx).arg(&sy).arg(&sz);
    b.arg(&d_hits).arg(&d_status).arg(&mut d_rgb);
    let cfg = LaunchConfig {
        grid_dim: (n.div_ceil(128).clamp(1, 1 << 20) as u32, 1, 1),
        block_dim: (128, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: matches the kernel's signature; the search wrote every pixel's status and
    // the hits of status 1 (the only ones read); `d_rgb` holds 3n bytes.
    unsafe { b.launch(cfg) }.during("launching the shading")?;
    marks.mark("launched");
    // While the kernels run: the page-locked memory the hits come back to (only when they
    // are wanted: at 1024², 23 MB, most of a first frame's 9-13 ms of allocation, run 167)
    // and the image's vector with its pages touched (a fresh vector's first touches took
    // 0.5-2.2 ms after the copy, run 174).
    let wants_hits = want == Want::Hits;
    let (mut host_hits, mut host_status, mut host_rgb) = (
        kept.host_hits.take(),
        kept.host_status.take(),
        kept.host_rgb.take(),
    );
    if wants_hits {
        // SAFETY (the three): written by the copies below before they are read.
        host_hits = Some(unsafe { kernels::pinned_room(&stream, host_hits, 2 * n, alloc) }?);
        host_status = Some(unsafe { kernels::pinned_room(&stream, host_status, n, alloc) }?);
        host_rgb = Some(unsafe { kernels::pinned_room(&stream, host_rgb, 3 * n, alloc) }?);
    }
    let mut rgb = touched(3 * n);
    marks.mark("buffers");
    let down = "downloading the frame";
    if gpu::env::batch_trace() {
        // Only when traced: the kernel's end marked apart from the copies back.
        stream.synchronize().during(down)?;
        marks.mark("traced");
    }
    match (host_hits.as_mut(), host_status.as_mut(), host_rgb.as_mut()) {
        (Some(host_hits), Some(host_status), Some(host_rgb)) if wants_hits => {
            // All three into page-locked memory, the image first; the image is copied out
            // (waiting for its copy only: each page-locked slice has its own event) while the
            // status and the hits come back.
            stream
                .memcpy_dtoh(&d_rgb.slice(..3 * n), host_rgb)
                .during(down)?;
            stream
                .memcpy_dtoh(&d_status.slice(..n), host_status)
                .during(down)?;
            stream
                .memcpy_dtoh(&d_hits.slice(..2 * n), host_hits)
                .during(down)?;
            let image = &host_rgb.as_slice().during(down)?[..3 * n];
            if image.len() < PARALLEL_BYTES {
                rgb.copy_from_slice(image);
            } else {
                rgb.par_chunks_mut(PARALLEL_BYTES)
                    .zip(image.par_chunks(PARALLEL_BYTES))
                    .for_each(|(to, from)| to.copy_from_slice(from));
            }
        }
        // The image alone: straight into its vector (pageable memory: no page-locked memory
        // to allocate in a process's first frame, 1.3-2 ms at 1024², run 174; as fast as the
        // page-locked copy and the copy out, run 176). A copy from the device to pageable
        // memory returns once it has completed (CUDA's API synchronization behavior), as
        // `clone_dtoh` below relies on too.
        _ => stream
            .memcpy_dtoh(&d_rgb.slice(..3 * n), &mut rgb)
            .during(down)?,
    }
    marks.mark("image");
    let counts = stream.clone_dtoh(&d_boxes.slice(..2)).during(down)?;
    let (mut boxes, exhausted) = (counts[0], counts[1]);
    marks.mark("back");
    let given_up = |status: &[u32]| -> Vec<usize> {
        if exhausted == 0 {
            Vec::new()
        } else {
            (0..n).into_par_iter().filter(|&p| status[p] == 2).collect()
        }
    };
    let (mut hits, rest) = match host_hits.as_ref().zip(host_status.as_ref()) {
        Some((host_hits, host_status)) if wants_hits => {
            // Read where they arrived, in parallel (a million pixels).
            let status = &host_status.as_slice().during(down)?[..n];
            let flat = &host_hits.as_slice().during(down)?[..2 * n];
            let hits: Vec<Option<(f64, f64)>> = status
                .par_iter()
                .enumerate()
                .map(|(p, &st)| (st == 1).then(|| (flat[2 * p], flat[2 * p + 1])))
                .collect();
            marks.mark("hits");
            (hits, given_up(status))
        }
        // The image alone: the status comes back only when some ray was given up (rare).
        _ if exhausted == 0 => (Vec::new(), Vec::new()),
        _ => {
            let status = stream.clone_dtoh(&d_status.slice(..n)).during(down)?;
            (Vec::new(), given_up(&status))
        }
    };
    marks.mark("read");
    marks.print(&format!("ivjit trace: {w}x{h} on device {}", dk.ordinal));
    (kept.cam, kept.hits, kept.status, kept.rgb, kept.boxes) = (
        Some(d_cam),
        Some(d_hits),
        Some(d_status),
        Some(d_rgb),
        Some(d_boxes),
    );
    (kept.host_hits, kept.host_status, kept.host_rgb) = (host_hits, host_status, host_rgb);
    dk.kept.put(kept);
    // Rays whose stack ran out: the CPU's search (no depth limit) and shading.
    if !rest.is_empty() {
        let rays: Vec<Ray> = rest
            .iter()
            .map(|&p| {
                let (u, v) = Camera::screen(p % w, p / w, w, h);
                let (t0, t1) = clip(cam.eye, cam.direction(u, v), view.center, view.radius)
                    .expect("the device clipped this ray");
                Ray {
                    u,
                    v,
                    t0,
                    t1,
                    min_width: (t1 - t0) / view.steps as f64,
                }
            })
            .collect();
        let found = first_hits(&ray.cpu_twin(), &rays, view.split)?;
        boxes += found.boxes;
        let mut found_hits = Vec::new();
        for (&p, hit) in rest.iter().zip(found.hits) {
            if wants_hits {
                hits[p] = hit;
            }
            found_hits.extend(hit.map(|hit| (p, hit)));
        }
        let colors = hit_colors(&surface.cpu_twin(), axes, cam, view, &found_hits)?;
        for (p, c) in colors {
            rgb[3 * p..3 * p + 3].copy_from_slice(&c);
        }
    }
    Ok(Frame {
        hits,
        rgb,
        boxes,
        finished_on_cpu: rest.len(),
    })
}

/// Bytes below which a copy or a first touch runs on the calling thread.
const PARALLEL_BYTES: usize = 1 << 18;

/// `len` bytes whose pages have been written (in parallel when there are many): a fresh
/// allocation's pages are mapped at their first touch, one fault per page, which a frame
/// pays while its kernels run rather than during its copy.
fn touched(len: usize) -> Vec<u8> {
    let mut v = vec![0u8; len];
    let page = 4096;
    if len < PARALLEL_BYTES {
        v.iter_mut().step_by(page).for_each(|b| *b = 1);
    } else {
        v.par_chunks_mut(page).for_each(|p| p[0] = 1);
    }
    v
}

/// What a device keeps from one traced frame for the next (grown on demand, never shrunk).
struct TraceKept {
    /// The surface program the kernels were built with (a frame of another surface builds
    /// its own; compared by [`crate::scalar::Program::same_bits`]: a product's NaN constants
    /// make `==` false for the same program, and each frame rebuilt its kernel and buffers,
    /// 3-5 and 11-15 ms, run 165).
    surface: crate::scalar::Program,
    /// The search and shading kernels with the programs linked in (looking them up emits
    /// both programs' PTX to key the module).
    search: CudaFunction,
    shade: CudaFunction,
    /// The search's grid ([`kernels::resident_blocks`]).
    blocks: u32,
    stream: std::sync::Arc<cudarc::driver::CudaStream>,
    cam: Option<CudaSlice<f64>>,
    hits: Option<CudaSlice<f64>>,
    status: Option<CudaSlice<u32>>,
    rgb: Option<CudaSlice<u8>>,
    boxes: Option<CudaSlice<u64>>,
    host_hits: Option<cudarc::driver::PinnedHostSlice<f64>>,
    host_status: Option<cudarc::driver::PinnedHostSlice<u32>>,
    host_rgb: Option<cudarc::driver::PinnedHostSlice<u8>>,
}

#[cfg(test)]
mod tests {
    use crate::scalar::{Inst, Program, Value};
    use crate::{BackendChoice, Evaluator, Expression, Precision};

    /// The same surface compiled twice is the same program bit for bit (Kusner–Schmitt's
    /// products hold NaN constants, which made a first version of the kept kernel's key,
    /// `==`, rebuild every frame), another surface is not, and neither is a constant of the
    /// other sign (`==` says `-0 == +0`).
    #[test]
    fn a_surface_compiled_twice_is_the_same_program() {
        let program = |text: &str| {
            let e = Expression::parse(text).unwrap();
            Evaluator::new(&e, Precision::F64, BackendChoice::Cpu)
                .unwrap()
                .program()
                .clone()
        };
        let ks = "(x^2 + 3)*(y^2 + 3)*(z^2 + 3) - 32*(x*y*z + 1)";
        assert!(program(ks).same_bits(&program(ks)));
        assert!(!program(ks).same_bits(&program("x^2 + y^2 + z^2 - 1")));
        let zero = |z: f64| Program {
            precision: Precision::F64,
            var_names: Vec::new(),
            insts: vec![Inst::Const(z)],
            outputs: vec![(Value(0), Value(0))],
            code_outputs: 0,
        };
        assert!(zero(0.0) == zero(-0.0) && !zero(0.0).same_bits(&zero(-0.0)));
        assert!(zero(f64::NAN).same_bits(&zero(f64::NAN)));
    }
}
