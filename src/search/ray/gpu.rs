//! The *first root along a ray* rule on the GPU: a persistent kernel whose threads each search
//! one ray at a time, taking the next as theirs ends (`ray.cu`).

use crate::search::kernels;
use rayon::prelude::*;

use std::sync::Arc;

use cudarc::driver::{
    CudaFunction, CudaSlice, CudaStream, LaunchConfig, PinnedHostSlice, PushKernelArg,
};

use crate::gpu::{self, Context, GpuError};
use crate::{Error, Evaluator, Precision};

/// Deepest stack a ray keeps on the device: enough for any bisection to a resolution of 2^-40
/// of the segment with split 2 (a stack holds at most (split - 1) pieces per level, plus one).
/// A ray that would push beyond it stops and is finished on the CPU.
const RAY_STACK: usize = 48;

/// The CUDA C of the ray kernel for element type `p`; the expression is `ivjit_eval`, linked in.
pub(crate) fn ray_source(p: Precision) -> String {
    format!(
        "{}#define RAY_STACK {RAY_STACK}\n#define RAY_BLOCK {RAY_BLOCK}\n\
         #define RAYS_LIST {RAYS_LIST}\n#define RAYS_GRID {RAYS_GRID}\n\
         #define RAYS_CAMERA {RAYS_CAMERA}\n{}",
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

/// The kernel's `source` for a list of rays, a grid's, a camera's (`ray.cu`, which has them
/// as `#define`s from here).
pub(crate) const RAYS_LIST: u32 = 0;
pub(crate) const RAYS_GRID: u32 = 1;
pub(crate) const RAYS_CAMERA: u32 = 2;

/// The launch of the persistent ray kernel for `n` rays: the blocks the device holds at once
/// (`blocks`), or fewer when there are fewer rays than threads.
pub(crate) fn persistent_grid(n: usize, blocks: u32) -> LaunchConfig {
    let b = kernels::PERSISTENT_BLOCK;
    LaunchConfig {
        grid_dim: (
            (n.div_ceil(b as usize)).clamp(1, blocks.max(1) as usize) as u32,
            1,
            1,
        ),
        block_dim: (b, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// Rays in a search worth splitting among the GPUs (fewer run on the first alone). A choice,
/// not a measured crossover: a ray's search is hundreds of evaluations, so a few blocks of
/// them should outweigh a thread and a launch per device; the smallest split measured is the
/// colonnade's 512² map (262,144 rays: 12.97 → 10.60 ms f64 on two H200s, docs/render.md).
const SPLIT_RAYS: usize = 1 << 14;

/// Consecutive rays that go to one GPU when a search is split (blocks dealt round-robin, so
/// that each GPU gets rays from all over a depth map). Not tuned: no other size was measured.
const RAY_BLOCK: usize = 1024;

/// Part `part` of `parts` of a search of `n` rays: blocks `part`, `part + parts`, ... of
/// [`RAY_BLOCK`] rays, in that order.
#[derive(Clone, Copy, Debug)]
struct Deal {
    part: usize,
    parts: usize,
    n: usize,
}

impl Deal {
    /// The part's rays.
    fn len(&self) -> usize {
        let blocks = self.n.div_ceil(RAY_BLOCK);
        (self.part..blocks)
            .step_by(self.parts)
            .map(|b| RAY_BLOCK.min(self.n - b * RAY_BLOCK))
            .sum()
    }

    /// The search's index of the part's `k`-th ray.
    fn ray(&self, k: usize) -> usize {
        ((k / RAY_BLOCK) * self.parts + self.part) * RAY_BLOCK + k % RAY_BLOCK
    }
}

/// [`crate::search::ray::first_hits`] on the GPUs of `eval`: one launch per GPU, one thread per
/// ray. A search of at least [`SPLIT_RAYS`] rays is split among the evaluator's devices in
/// blocks of [`RAY_BLOCK`] dealt round-robin (`IVJIT_SEARCH_PARTS` sets the number of parts,
/// also above the devices', for tests); the rays are independent, so the hits are the same.
/// Each device keeps its stream, buffers and page-locked memory for the next search.
pub(crate) fn first_hits(
    eval: &Evaluator,
    s: crate::search::ray::Slots,
    rays: crate::search::ray::Rays,
    split: u32,
) -> Result<crate::search::ray::Hits, Error> {
    if split > 32 {
        return Err(crate::search::SearchError::Options(format!(
            "split {split}: the GPU ray search splits a piece into at most 32"
        ))
        .into());
    }
    let kernel = eval.gpu_kernel().expect("a GPU evaluator has a kernel");
    let devices = kernel.device_kernels();
    let n = rays.len();
    if n == 0 {
        return Ok(crate::search::ray::Hits {
            hits: Vec::new(),
            boxes: 0,
            finished_on_cpu: 0,
            device_seconds: 0.0,
        });
    }
    let parts = match gpu::env::search_parts() {
        Some(k) => k,
        None if n >= SPLIT_RAYS => devices.len(),
        None => 1,
    }
    .clamp(1, n.div_ceil(RAY_BLOCK).max(1));
    let t_start = std::time::Instant::now();
    let deal = |part| Deal { part, parts, n };
    let results: Vec<Result<Searched, Error>> = if parts == 1 {
        vec![search_on(&devices[0], eval, s, rays, deal(0), split)]
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..parts)
                .map(|part| {
                    let dk = &devices[part % devices.len()];
                    scope.spawn(move || search_on(dk, eval, s, rays, deal(part), split))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| match h.join() {
                    Ok(r) => r,
                    Err(e) => std::panic::resume_unwind(e),
                })
                .collect()
        })
    };
    let searched: Vec<Searched> = results.into_iter().collect::<Result<_, _>>()?;
    let mut total: u64 = searched.iter().map(|f| f.boxes).sum();
    let device_seconds = searched
        .iter()
        .map(|f| f.device_seconds)
        .fold(0.0, f64::max);
    // The parts' results where they came back (page-locked memory), read once in parallel
    // into the rays' order: ray i is in block b = i / RAY_BLOCK, block b / parts of part
    // b % parts. (A fresh vector of a million results costs its page faults; one is made.)
    let down = "reading the hits";
    let views: Vec<(&[u32], &[f64])> = searched
        .iter()
        .map(|f| {
            let (st, hits) = (&f.kept.host_status, &f.kept.host_hits);
            let st = st.as_ref().map(|h| h.as_slice()).transpose().during(down)?;
            let hits = hits
                .as_ref()
                .map(|h| h.as_slice())
                .transpose()
                .during(down)?;
            Ok((st.unwrap_or(&[]), hits.unwrap_or(&[])))
        })
        .collect::<Result<_, GpuError>>()?;
    let at = |i: usize| {
        let b = i / RAY_BLOCK;
        (b % parts, (b / parts) * RAY_BLOCK + i % RAY_BLOCK)
    };
    let t_gather = t_start.elapsed().as_secs_f64() * 1e3;
    let mut out: Vec<Option<(f64, f64)>> = (0..n)
        .into_par_iter()
        .map(|i| {
            let (part, k) = at(i);
            let (st, hits) = views[part];
            (st[k] == 1).then(|| (hits[2 * k], hits[2 * k + 1]))
        })
        .collect();
    let t_out = t_start.elapsed().as_secs_f64() * 1e3;
    let given_up: u64 = searched.iter().map(|f| f.given_up).sum();
    let rest: Vec<usize> = if given_up == 0 {
        Vec::new()
    } else {
        (0..n)
            .into_par_iter()
            .filter(|&i| {
                let (part, k) = at(i);
                views[part].0[k] == 2
            })
            .collect()
    };
    drop(views);
    for (f, dk) in searched.into_iter().zip(devices.iter().cycle()) {
        dk.kept.put(f.kept);
    }
    // Rays whose stack ran out: the CPU's search, which has no depth limit.
    if !rest.is_empty() {
        let expr_eval = eval.cpu_twin();
        let again: Vec<_> = rest.iter().map(|&r| rays.ray(r)).collect();
        let h = crate::search::ray::cpu(&expr_eval, s, &again, split)?;
        for (&r, hit) in rest.iter().zip(h.hits) {
            out[r] = hit;
        }
        total += h.boxes;
    }
    if gpu::env::batch_trace() {
        eprintln!(
            "ivjit search: {n} rays in {parts} part(s): device search {:.2} ms, parts back at \
             {t_gather:.2} ms, hits gathered at {t_out:.2} ms, all done at {:.2} ms ({} \
             finished on the CPU)",
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

/// One device's search: its buffers, with the part's status and hits in their page-locked
/// memory (to be put back into the device's kept values once read), boxes, seconds.
struct Searched {
    kept: RayKept,
    boxes: u64,
    /// Rays whose stack ran out (status 2).
    given_up: u64,
    device_seconds: f64,
}

/// What a device keeps from one ray search for the next (grown on demand, never shrunk).
struct RayKept {
    /// The search kernel with the device kernel's program linked in (looking it up emits the
    /// program's PTX to key the module: 0.7 ms a search for the colonnade, run 161).
    function: CudaFunction,
    /// Its grid: the blocks the device holds at once ([`kernels::resident_blocks`]).
    blocks: u32,
    stream: Arc<CudaStream>,
    rays: Option<CudaSlice<f64>>,
    hits: Option<CudaSlice<f64>>,
    status: Option<CudaSlice<u32>>,
    boxes: Option<CudaSlice<u64>>,
    host_rays: Option<PinnedHostSlice<f64>>,
    host_hits: Option<PinnedHostSlice<f64>>,
    host_status: Option<PinnedHostSlice<u32>>,
}

/// The search of the rays of `deal` on the device of `dk`: one launch, through the buffers
/// the device kept from its last ray search.
fn search_on(
    dk: &gpu::DeviceKernel,
    eval: &Evaluator,
    s: crate::search::ray::Slots,
    rays: crate::search::ray::Rays,
    deal: Deal,
    split: u32,
) -> Result<Searched, Error> {
    let ctx = &dk.ctx;
    let mut marks = kernels::Marks::new();
    ctx.bind_to_thread()
        .during("binding the device's context")?;
    let n = deal.len();
    let mut kept = match dk.kept.take::<RayKept>() {
        Some(k) => k,
        None => {
            let function = ray_kernel(dk, eval.program())?;
            RayKept {
                blocks: kernels::resident_blocks(ctx, &function)?,
                function,
                stream: ctx.new_stream().during("creating a stream")?,
                rays: None,
                hits: None,
                status: None,
                boxes: None,
                host_rays: None,
                host_hits: None,
                host_status: None,
            }
        }
    };
    marks.mark("kernel");
    let stream = kept.stream.clone();
    let what = "allocating the ray search's buffers";
    // SAFETY (the three): every value read is written first — the rays by the packing
    // below, hits and status by the copies back (of what the kernel wrote: every ray's
    // status, the hits of those with status 1, the only ones read).
    let list = match rays {
        crate::search::ray::Rays::List(list) => Some(list),
        crate::search::ray::Rays::Grid(_) => None,
    };
    let packed = if list.is_some() { 5 * n } else { 0 };
    let mut host_rays =
        unsafe { kernels::pinned_room(&stream, kept.host_rays.take(), packed.max(1), what) }?;
    let mut host_hits =
        unsafe { kernels::pinned_room(&stream, kept.host_hits.take(), 2 * n, what) }?;
    let mut host_status =
        unsafe { kernels::pinned_room(&stream, kept.host_status.take(), n, what) }?;
    marks.mark("pinned");
    let mut d_rays = kernels::room(&stream, kept.rays.take(), packed.max(1), what)?;
    if let Some(list) = list {
        // Packed in parallel, in place: at a million rays, one thread packing and unpacking
        // takes longer than the search on the device.
        host_rays.as_mut_slice().during(what)?[..packed]
            .par_chunks_mut(5)
            .enumerate()
            .for_each(|(k, p)| {
                let r = &list[deal.ray(k)];
                p.copy_from_slice(&[r.u, r.v, r.t0, r.t1, r.min_width]);
            });
        marks.mark("packed");
        let upload = "uploading the rays";
        stream
            .memcpy_htod(&host_rays.as_slice().during(upload)?[..packed], &mut d_rays)
            .during(upload)?;
    }
    let mut d_hits = kernels::room(&stream, kept.hits.take(), 2 * n, what)?;
    let mut d_status = kernels::room(&stream, kept.status.take(), n, what)?;
    let mut d_boxes = kernels::room(&stream, kept.boxes.take(), 3, what)?;
    let upload = "starting the ray search";
    stream
        .memset_zeros(&mut d_boxes.slice_mut(..3))
        .during(upload)?;
    let slot = |k: Option<usize>| k.map_or(-1, |k| k as i32);
    let (kt, ku, kv) = (slot(s.t), slot(s.u), slot(s.v));
    let n32 = n as u32;
    // The grid's rays are made by the kernel: the part's k-th ray is the grid's
    // `deal.ray(k)` (the kernel's `deal`), the list's are read from `d_rays`.
    let (source, grid) = match rays {
        crate::search::ray::Rays::Grid(g) => (RAYS_GRID, g),
        crate::search::ray::Rays::List(_) => (RAYS_LIST, crate::search::ray::Grid::NONE),
    };
    let (part, parts) = (deal.part as u32, deal.parts as u32);
    let f = kept.function.clone();
    let mut b = stream.launch_builder(&f);
    b.arg(&n32).arg(&source).arg(&d_rays);
    b.arg(&grid.width)
        .arg(&part)
        .arg(&parts)
        .arg(&grid.x0)
        .arg(&grid.dx)
        .arg(&grid.y1)
        .arg(&grid.dy)
        .arg(&grid.t0)
        .arg(&grid.t1)
        .arg(&grid.min_width);
    b.arg(&split).arg(&kt).arg(&ku).arg(&kv);
    b.arg(&mut d_hits).arg(&mut d_status).arg(&mut d_boxes);
    let cfg = persistent_grid(n, kept.blocks);
    stream.synchronize().during(upload)?;
    marks.mark("uploaded");
    let start = std::time::Instant::now();
    // SAFETY: the arguments match the kernel's signature; `d_rays` holds 5n values (the
    // first 5n written) for a list (a grid's are not read), `d_hits` 2n, `d_status` n,
    // `d_boxes` three (zeroed).
    unsafe { b.launch(cfg) }.during("launching the ray search")?;
    let down = "downloading the hits";
    stream
        .memcpy_dtoh(&d_status.slice(..n), &mut host_status)
        .during(down)?;
    stream
        .memcpy_dtoh(&d_hits.slice(..2 * n), &mut host_hits)
        .during(down)?;
    let counts = stream.clone_dtoh(&d_boxes.slice(..3)).during(down)?;
    let (boxes, given_up) = (counts[0], counts[1]);
    let device_seconds = start.elapsed().as_secs_f64();
    marks.mark("searched");
    marks.print(&format!("ivjit search: {n} rays on device {}", dk.ordinal));
    (kept.rays, kept.hits, kept.status, kept.boxes) =
        (Some(d_rays), Some(d_hits), Some(d_status), Some(d_boxes));
    (kept.host_rays, kept.host_hits, kept.host_status) =
        (Some(host_rays), Some(host_hits), Some(host_status));
    Ok(Searched {
        kept,
        boxes,
        given_up,
        device_seconds,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The parts of a split search take every ray once, and the blocks put back as
    /// `first_hits` puts them (block b from part b % parts at its block b / parts) give the
    /// rays in their order: ragged last blocks, more parts than blocks, one part.
    #[test]
    fn the_parts_of_a_split_search_take_every_ray_once() {
        for n in [0, 1, 1023, 1024, 1025, 5000, 10240] {
            for parts in 1..=5 {
                let mut seen = vec![0u32; n];
                let lists: Vec<Vec<usize>> = (0..parts)
                    .map(|part| {
                        let d = Deal { part, parts, n };
                        (0..d.len()).map(|k| d.ray(k)).collect()
                    })
                    .collect();
                for &r in lists.iter().flatten() {
                    seen[r] += 1;
                }
                assert!(seen.iter().all(|&c| c == 1), "n {n}, {parts} parts");
                let mut back = vec![usize::MAX; n];
                for (b, block) in back.chunks_mut(RAY_BLOCK).enumerate() {
                    let at = (b / parts) * RAY_BLOCK;
                    block.copy_from_slice(&lists[b % parts][at..at + block.len()]);
                }
                assert!(back.iter().enumerate().all(|(i, &r)| i == r), "n {n}");
            }
        }
    }
}
