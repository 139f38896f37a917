//! The *first root along a ray* rule on the GPU: one thread per ray runs its whole search.

use crate::search::kernels;
use rayon::prelude::*;

use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};

use crate::gpu::{self, Context, GpuError};
use crate::{Error, Evaluator, Precision};

/// Deepest stack a ray keeps on the device: enough for any bisection to a resolution of 2^-40
/// of the segment with split 2 (a stack holds at most (split - 1) pieces per level, plus one).
/// A ray that would push beyond it stops and is finished on the CPU.
const RAY_STACK: usize = 48;

/// The CUDA C of the ray kernel for element type `p`; the expression is `ivjit_eval`, linked in.
pub(crate) fn ray_source(p: Precision) -> String {
    format!(
        "{}#define RAY_STACK {RAY_STACK}\n{}",
        kernels::prelude(p),
        include_str!("ray.cu")
    )
}

/// The ray kernel with `program` linked in, on the device of `dk`.
fn ray_kernel(
    dk: &gpu::DeviceKernel,
    program: &crate::scalar::Program,
) -> Result<CudaFunction, GpuError> {
    let k = gpu::search_module::load(
        &dk.ctx,
        dk.ordinal,
        gpu::search_module::SearchModule {
            name: "ray",
            cuda: ray_source(program.precision),
            linked: vec![(program, crate::ptx::FUNCTION_NAME.to_string())],
            kernels: &["ivjit_search_rays"],
        },
    )?;
    Ok(k[0].clone())
}

/// [`crate::search::ray::first_hits`] on the GPU of `eval`: one launch, one thread per ray.
pub(crate) fn first_hits(
    eval: &Evaluator,
    s: crate::search::ray::Slots,
    rays: &[crate::search::ray::Ray],
    split: u32,
) -> Result<crate::search::ray::Hits, Error> {
    if split > 32 {
        return Err(crate::search::SearchError::Options(format!(
            "split {split}: the GPU ray search splits a piece into at most 32"
        ))
        .into());
    }
    let kernel = eval.gpu_kernel().expect("a GPU evaluator has a kernel");
    let dk = kernel.primary();
    let ctx = &dk.ctx;
    ctx.bind_to_thread()
        .during("binding the device's context")?;
    let t_start = std::time::Instant::now();
    let f = ray_kernel(dk, eval.program())?;
    let t_kernel = t_start.elapsed();
    let stream = ctx.new_stream().during("creating a stream")?;
    let n = rays.len();
    if n == 0 {
        return Ok(crate::search::ray::Hits {
            hits: Vec::new(),
            boxes: 0,
            finished_on_cpu: 0,
            device_seconds: 0.0,
        });
    }
    // Host work in parallel: at a million rays, one thread packing and unpacking takes longer
    // than the search on the device.
    let mut packed = vec![0.0f64; 5 * n];
    packed
        .par_chunks_mut(5)
        .zip(rays.par_iter())
        .for_each(|(p, r)| p.copy_from_slice(&[r.u, r.v, r.t0, r.t1, r.min_width]));
    let d_rays = stream.clone_htod(&packed).during("uploading the rays")?;
    let mut d_hits: CudaSlice<f64> = stream.alloc_zeros(2 * n).during("allocating hits")?;
    let mut d_status: CudaSlice<u32> = stream.alloc_zeros(n).during("allocating hits")?;
    let mut d_boxes: CudaSlice<u64> = stream.alloc_zeros(1).during("allocating hits")?;
    let slot = |k: Option<usize>| k.map_or(-1, |k| k as i32);
    let (kt, ku, kv) = (slot(s.t), slot(s.u), slot(s.v));
    let n32 = n as u32;
    let mut b = stream.launch_builder(&f);
    b.arg(&n32)
        .arg(&d_rays)
        .arg(&split)
        .arg(&kt)
        .arg(&ku)
        .arg(&kv);
    b.arg(&mut d_hits).arg(&mut d_status).arg(&mut d_boxes);
    let cfg = LaunchConfig {
        grid_dim: (n.div_ceil(128).clamp(1, 1 << 20) as u32, 1, 1),
        block_dim: (128, 1, 1),
        shared_mem_bytes: 0,
    };
    stream.synchronize().during("uploading the rays")?;
    let t_upload = t_start.elapsed();
    let start = std::time::Instant::now();
    // SAFETY: the arguments match the kernel's signature; `d_rays` holds 5n values, `d_hits`
    // 2n, `d_status` n, `d_boxes` one.
    unsafe { b.launch(cfg) }.during("launching the ray search")?;
    let status = stream
        .clone_dtoh(&d_status)
        .during("downloading the hits")?;
    let device_seconds = start.elapsed().as_secs_f64();
    let hits = stream.clone_dtoh(&d_hits).during("downloading the hits")?;
    let boxes = stream.clone_dtoh(&d_boxes).during("downloading the hits")?[0];
    let mut out: Vec<Option<(f64, f64)>> = status
        .par_iter()
        .enumerate()
        .map(|(r, &st)| (st == 1).then(|| (hits[2 * r], hits[2 * r + 1])))
        .collect();
    // Rays whose stack ran out: the CPU's search, which has no depth limit.
    let rest: Vec<usize> = (0..n).filter(|&r| status[r] == 2).collect();
    let mut total = boxes;
    if !rest.is_empty() {
        let expr_eval = eval.cpu_twin();
        let again: Vec<_> = rest.iter().map(|&r| rays[r]).collect();
        let h = crate::search::ray::cpu(&expr_eval, s, &again, split)?;
        for (&r, hit) in rest.iter().zip(h.hits) {
            out[r] = hit;
        }
        total += h.boxes;
    }
    if gpu::env::batch_trace() {
        eprintln!(
            "ivjit search: {n} rays: kernel lookup {:.2} ms, packed and uploaded at {:.2} ms, \
             device search {:.2} ms, all done at {:.2} ms ({} finished on the CPU)",
            t_kernel.as_secs_f64() * 1e3,
            t_upload.as_secs_f64() * 1e3,
            device_seconds * 1e3,
            t_start.elapsed().as_secs_f64() * 1e3,
            rest.len()
        );
    }
    Ok(crate::search::ray::Hits {
        hits: out,
        boxes: total,
        finished_on_cpu: rest.len(),
        device_seconds,
    })
}
