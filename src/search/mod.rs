//! Adaptive subdivision: the search loops of interval applications, run by the backend that
//! evaluates the expression, so that no box crosses between host and device between rounds.
//!
//! One round evaluates the compiled expression on every live box, classifies each box by a rule,
//! and splits the survivors into the next round's boxes. Two implementations give the same
//! result bit for bit on expressions without point-function calls (and a result that is
//! rigorous on every expression): the CPU's (rayon, the CPU evaluator) and the GPU's (the
//! work list in device memory; small CUDA kernels compute boxes, classify and split; the host
//! learns one counter per round). One folder per rule: `search/<rule>/mod.rs` holds its types,
//! the backend choice and the CPU rounds, `gpu.rs` the GPU twin, `<rule>.cu` its kernels;
//! `kernels` is what the GPU halves share.
//!
//! Rules: *classify* over an image ([`render()`], below), *first root along a ray*
//! ([`ray::first_hits`], the search of the ray tracer), *minimize* ([`minimize::minimize`],
//! branch and bound) and *exclude* ([`exclude::exclude`], every box where f may equal a level:
//! root isolation); and ray tracing with a camera ([`trace::trace`]: the ray rule per pixel with
//! the rays made and the hits shaded where the search runs).
//!
//! The first rule is *classify* over an image ([`render()`]): every pixel of a W x H grid over a
//! region of the plane is proven outside (f > 0 on the whole pixel), inside (f < 0 on the whole
//! pixel), or boundary (neither proven), by hierarchical subdivision: tiles of `tiles[0]` pixels
//! square, each boundary tile split into tiles of `tiles[1]` pixels, ..., down to single pixels.
//! The work list of a round is bounded by the number of tiles of that size in the image, so it
//! can never overflow memory the search has allocated.
//!
//! # Pixel boxes
//! Pixel (i, j) (row i from the top, column j from the left) is the real box
//! `x in [x0 + j dx, x0 + (j+1) dx]`, `y in [y1 - (i+1) dy, y1 - i dy]` with `dx = (x1 - x0) / W`,
//! `dy = (y1 - y0) / H`; a tile is the union of its pixels. Its bounds are computed with
//! directed rounding (`Axes::tile_box`): the float box contains the real one, so a class is a
//! statement about every real point of the pixel. Both backends compute these bounds with the
//! same correctly rounded operations, hence the same bits.

mod budget;
pub mod constrained;
pub mod exclude;
mod feasible;
mod handover;
mod interrupt;
mod kernels;
mod lp;
pub mod mesh;
pub mod minibex;
pub mod minimize;
pub mod newton;
mod parts;
pub mod pave;
pub mod prune;
mod pruned;
pub mod ray;
pub(crate) mod relax;
mod render;
pub mod system;
pub mod tape;
pub mod trace;
pub mod voxels;

pub use interrupt::interruptible;
pub(crate) use render::{classify, Axes, Plan};
pub use render::{render, RenderOptions, Rendered, Round2, BOUNDARY, INSIDE, OUTSIDE};

/// The PTX of every search kernel module in precision `p` (the tape interpreter for tapes of
/// `slots` slots), named, compiled by NVRTC for `arch` (e.g. `compute_90`) with the runtime's
/// options: no GPU is needed (the tests assemble them offline; `ptxas -v` tells registers and
/// local memory).
#[doc(hidden)]
pub fn kernel_ptx(
    p: crate::Precision,
    slots: usize,
    arch: &str,
) -> Result<Vec<(&'static str, String)>, crate::gpu::RuntimeError> {
    sources(p, tape::gpu::slots_of(slots))
        .into_iter()
        .map(|(name, source)| Ok((name, crate::gpu::runtime::source_ptx(name, &source, arch)?)))
        .collect()
}
pub use prune::PruneRound;
pub use pruned::{default_pruned, pruned_tiles, prunes, MeanLength, PrunedRender, GPU_PRUNED_FROM};

/// The CUDA C of every search kernel module in precision `p` (the tape interpreter with
/// `nslots` slots), named: what the offline tests compile with NVRTC and assemble with ptxas.
fn sources(p: crate::Precision, nslots: usize) -> Vec<(&'static str, String)> {
    let mut modules = vec![
        ("render", render::gpu::source(p)),
        ("ray", ray::gpu::ray_source(p)),
        ("trace", trace::gpu::source(p)),
        ("minimize", minimize::gpu::minimize_source(p)),
        ("exclude", exclude::gpu::exclude_source(p)),
        ("pave", pave::gpu::source(p)),
        ("mesh-place", mesh::gpu::source(p)),
        ("tape", tape::gpu::source(p, nslots, &[])),
        (
            "tape-extended",
            tape::gpu::source(
                p,
                nslots,
                &[tape::gradient::Rule::None, tape::gradient::Rule::Div],
            ),
        ),
    ];
    // The point-sampling baseline of a tape with every operation it runs (the list of names
    // the offline test expects lacks it if this ever fails).
    let every = "min(sqrt(abs(x)) - y*y, max(-x, y^2) + 0.25)";
    if let Some(cuda) = crate::Expression::parse(every)
        .ok()
        .and_then(|e| tape::Tape::new(e.ir()).ok())
        .and_then(|t| tape::sampled::source(&t, p).ok())
    {
        modules.push(("point-sample", cuda));
    }
    modules
}

pub use crate::error::SearchError;

pub(crate) use interrupt::on_pool;

/// The fewest items a search's parallel loop splits among threads: a shorter loop runs where
/// it is. A split wakes sleeping threads, which on the 16-core H200 host cost more than the
/// work of a loop over a small round's boxes (the six-hump camel's branch and bound: 4 ms on
/// 16 cores against 0.7 ms on one thread of the 2-core development machine).
pub(crate) const PARALLEL_FROM: usize = 4096;

/// `n` copies of `value`, or [`SearchError::OutOfMemory`] naming `what`: a size that comes from
/// the user's options (an image's pixels) must not abort the process when memory is short.
pub(crate) fn filled<T: Clone>(n: usize, value: T, what: &str) -> Result<Vec<T>, SearchError> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| {
        SearchError::OutOfMemory(format!(
            "{what} needs {} bytes",
            n as u128 * std::mem::size_of::<T>() as u128
        ))
    })?;
    v.resize(n, value);
    Ok(v)
}
