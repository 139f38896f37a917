//! Ray tracing on the GPU: one thread per pixel makes its ray, clips it, runs the ray rule's
//! search (the composed expression linked in as `ivjit_eval`) and shades the hit (the surface
//! linked in as `ivjit_surface`); the host receives the image and the hits.

use crate::search::kernels;
use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};
use rayon::prelude::*;

use crate::gpu::{self, Context, GpuError};
use crate::search::ray::{first_hits, Ray};
use crate::search::trace::{clip, shade, Camera, Frame, View};
use crate::search::SearchError;
use crate::{Error, Evaluator, Interval, Precision};

/// The deepest stack a ray keeps on the device (as in the ray rule's kernel).
const RAY_STACK: usize = 48;

pub(crate) fn source(p: Precision) -> String {
    format!(
        "{}#define RAY_STACK {RAY_STACK}\n{}",
        kernels::prelude(p),
        include_str!("trace.cu")
    )
}

/// The tracing kernel with both programs linked in, on the device of `dk`.
fn kernel(
    dk: &gpu::DeviceKernel,
    ray: &crate::scalar::Program,
    surface: &crate::scalar::Program,
) -> Result<CudaFunction, GpuError> {
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
            kernels: &["ivjit_trace"],
        },
    )?;
    Ok(k[0].clone())
}

/// [`crate::search::trace::trace`] on the GPU of `ray`.
pub(crate) fn trace(
    ray: &Evaluator,
    surface: &Evaluator,
    axes: [Option<usize>; 3],
    cam: &Camera,
    view: &View,
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
    ctx.bind_to_thread()
        .during("binding the device's context")?;
    let f = kernel_for(dk, ray, surface)?;
    let stream = ctx.new_stream().during("creating a stream")?;
    let (w, h) = (view.width, view.height);
    let n = w * h;
    let mut params = Vec::with_capacity(18);
    for v in [cam.eye, cam.forward, cam.right, cam.up, view.center] {
        params.extend_from_slice(&v);
    }
    params.extend_from_slice(&[view.radius, view.steps as f64, 1e-5 * view.radius]);
    let alloc = "allocating the frame";
    let d_cam = stream.clone_htod(&params).during(alloc)?;
    // SAFETY: every element is written by the kernel before the host reads it.
    let mut d_hits = unsafe { stream.alloc::<f64>(2 * n) }.during(alloc)?;
    let mut d_status = unsafe { stream.alloc::<u32>(n) }.during(alloc)?;
    let mut d_rgb = unsafe { stream.alloc::<u8>(3 * n) }.during(alloc)?;
    let mut d_boxes: CudaSlice<u64> = stream.alloc_zeros(1).during(alloc)?;
    let slot = |k: Option<usize>| k.map_or(-1, |k| k as i32);
    let (kt, ku, kv) = (slot(s.t), slot(s.u), slot(s.v));
    let (sx, sy, sz) = (slot(axes[0]), slot(axes[1]), slot(axes[2]));
    let (w32, h32) = (w as u32, h as u32);
    let mut b = stream.launch_builder(&f);
    b.arg(&w32).arg(&h32).arg(&d_cam).arg(&view.split);
    b.arg(&kt).arg(&ku).arg(&kv).arg(&sx).arg(&sy).arg(&sz);
    b.arg(&mut d_hits)
        .arg(&mut d_status)
        .arg(&mut d_rgb)
        .arg(&mut d_boxes);
    let cfg = LaunchConfig {
        grid_dim: (n.div_ceil(128).clamp(1, 1 << 20) as u32, 1, 1),
        block_dim: (128, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: matches the kernel's signature; the buffers hold 2n, n, 3n and 1 elements and
    // `d_cam` the 18 numbers the kernel reads.
    unsafe { b.launch(cfg) }.during("launching the tracing kernel")?;
    let mut rgb = stream.clone_dtoh(&d_rgb).during("downloading the image")?;
    let status = stream
        .clone_dtoh(&d_status)
        .during("downloading the hits")?;
    let flat = stream.clone_dtoh(&d_hits).during("downloading the hits")?;
    let mut boxes = stream.clone_dtoh(&d_boxes).during("downloading the hits")?[0];
    let mut hits: Vec<Option<(f64, f64)>> = status
        .par_iter()
        .enumerate()
        .map(|(p, &st)| (st == 1).then(|| (flat[2 * p], flat[2 * p + 1])))
        .collect();
    // Rays whose stack ran out: the CPU's search (no depth limit) and shading.
    let rest: Vec<usize> = (0..n).filter(|&p| status[p] == 2).collect();
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
        let surf = surface.cpu_twin();
        for ((&p, r), hit) in rest.iter().zip(&rays).zip(found.hits) {
            hits[p] = hit;
            let Some((lo, hi)) = hit else {
                continue;
            };
            let d = cam.direction(r.u, r.v);
            let t = 0.5 * lo + 0.5 * hi;
            let x = [0, 1, 2].map(|a| cam.eye[a] + t * d[a]);
            let mut values = [(0.0, 0.0); 6];
            for (s, value) in values.iter_mut().enumerate() {
                let mut q = x;
                q[s / 2] += if s % 2 == 0 {
                    1e-5 * view.radius
                } else {
                    -1e-5 * view.radius
                };
                let mut b: Vec<(usize, f64)> =
                    (0..3).filter_map(|a| axes[a].map(|k| (k, q[a]))).collect();
                b.sort_by_key(|e| e.0);
                let point: Vec<Interval> = b
                    .iter()
                    .map(|&(_, c)| Interval::from_bounds(c, c))
                    .collect();
                let out = surf.eval(&point)?;
                *value = (out[0].lo, out[0].hi);
            }
            rgb[3 * p..3 * p + 3].copy_from_slice(&shade(values, d));
        }
    }
    Ok(Frame {
        hits,
        rgb,
        boxes,
        finished_on_cpu: rest.len(),
    })
}

fn kernel_for(
    dk: &gpu::DeviceKernel,
    ray: &Evaluator,
    surface: &Evaluator,
) -> Result<CudaFunction, GpuError> {
    kernel(dk, ray.program(), surface.program())
}
