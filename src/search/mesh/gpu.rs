//! The mesh's searches on the GPU, each in one launch with f linked into the kernel
//! (`place.cu`): the placement (one thread per vertex: its bisections) and the witness search
//! (one thread per element: its pieces level by level). The host sent a batch per bisection
//! step or level and read it back (colonnade.vm at depth 8: 2.3 s of placement and 4.8 s of
//! witnesses in a 8.8 s mesh on an H200, run 118 of docs/gpu-runs.md); the kernels make the
//! CPU's points, boxes and decisions, bit for bit.

use cudarc::driver::PushKernelArg;
use rayon::prelude::*;

use super::Placed;
use crate::gpu::{self, Context};
use crate::{Error, Evaluator, Precision};

/// The CUDA C of the placement kernel for element type `p`; the expression is `ivjit_eval`,
/// linked in.
pub(crate) fn source(p: Precision) -> String {
    format!(
        "{}{}",
        crate::search::kernels::prelude(p),
        include_str!("place.cu")
    )
}

/// The kernels of the mesh on the first GPU of `eval`, and its device.
fn mesh_kernels(
    eval: &Evaluator,
) -> Result<
    (
        std::sync::Arc<gpu::DeviceKernel>,
        std::sync::Arc<[cudarc::driver::CudaFunction]>,
    ),
    Error,
> {
    let kernel = eval.gpu_kernel().expect("a GPU evaluator has a kernel");
    let dk = kernel.device_kernels()[0].clone();
    dk.ctx
        .bind_to_thread()
        .during("binding the device's context")?;
    let f = gpu::search_module::load(
        &dk.ctx,
        dk.ordinal,
        gpu::search_module::SearchModule {
            name: "mesh-place",
            cuda: source(eval.program().precision),
            linked: vec![(eval.program(), crate::ptx::FUNCTION_NAME.to_string())],
            kernels: &["ivjit_mesh_place", "ivjit_mesh_witnesses"],
        },
    )?;
    Ok((dk, f))
}

/// The most witness levels the device searches (a level's pieces are tracked in 64-bit
/// masks); deeper searches run on the host's batches.
pub(crate) const WITNESS_LEVELS: u32 = 3;

/// What the witness search of each element found (see `witness.rs`'s `find`): 0 proven, 1 a
/// witness (with its point's coordinates in the search's fine units), 2 unknown; and the
/// evaluations made. On the first GPU of `eval`, one thread per element.
#[allow(clippy::type_complexity)]
pub(crate) fn witnesses(
    eval: &Evaluator,
    slot: [Option<usize>; 3],
    space: &super::Space,
    elements: &[([u32; 3], bool)],
    levels: u32,
) -> Result<(Vec<(u8, [u64; 3])>, u64), Error> {
    assert!((1..=WITNESS_LEVELS).contains(&levels));
    let n = elements.len();
    if n == 0 {
        return Ok((Vec::new(), 0));
    }
    let (dk, f) = mesh_kernels(eval)?;
    let stream = dk.ctx.new_stream().during("creating a stream")?;
    let mut elems = vec![0u32; 4 * n];
    elems
        .par_chunks_exact_mut(4)
        .zip(elements.par_iter())
        .for_each(|(e, &(m, s))| e.copy_from_slice(&[m[0], m[1], m[2], s as u32]));
    let ax: Vec<f64> = space.axes.iter().flat_map(|a| [a.x0, a.x1]).collect();
    let units = (2 * space.n as u64) << levels;
    let up = "uploading the mesh's elements";
    let d_elems = stream.clone_htod(&elems).during(up)?;
    let d_ax = stream.clone_htod(&ax).during(up)?;
    // SAFETY: the kernel writes every element's result (and the point of each witness, the
    // only ones read); the count is zeroed.
    let mut d_found = unsafe { stream.alloc::<u8>(n) }.during(up)?;
    let mut d_fine = unsafe { stream.alloc::<u64>(3 * n) }.during(up)?;
    let mut d_count = stream.alloc_zeros::<u64>(1).during(up)?;
    let [kx, ky, kz] = slot.map(|s| s.map_or(-1, |k| k as i32));
    let n32 = n as u32;
    let mut b = stream.launch_builder(&f[1]);
    b.arg(&n32)
        .arg(&d_elems)
        .arg(&levels)
        .arg(&d_ax)
        .arg(&units)
        .arg(&kx)
        .arg(&ky)
        .arg(&kz);
    b.arg(&mut d_found).arg(&mut d_fine).arg(&mut d_count);
    let cfg = crate::search::kernels::config(n);
    // SAFETY: the arguments match the kernel's signature; `d_elems` holds 4n values, `d_ax`
    // six, `d_found` n, `d_fine` 3n, `d_count` one.
    unsafe { b.launch(cfg) }.during("launching the mesh's witness search")?;
    let down = "reading the witnesses";
    let found = stream.clone_dtoh(&d_found).during(down)?;
    let fine = stream.clone_dtoh(&d_fine).during(down)?;
    let count = stream.clone_dtoh(&d_count).during(down)?[0];
    let out = found
        .par_iter()
        .zip(fine.par_chunks_exact(3))
        .map(|(&r, c)| (r, [c[0], c[1], c[2]]))
        .collect();
    Ok((out, count))
}

/// `steps` bisections of every vertex's bracket (as the CPU's `lattice::place`), on the
/// first GPU of `eval`; `slot` places x, y and z among the program's variables.
pub(crate) fn place(
    eval: &Evaluator,
    slot: [Option<usize>; 3],
    placed: &mut [Placed],
    steps: u32,
) -> Result<(), Error> {
    let n = placed.len();
    if n == 0 || steps == 0 {
        return Ok(());
    }
    let mut clock = super::Steps::new();
    let (dk, f) = mesh_kernels(eval)?;
    let f = &f[0];
    clock.step("placement: kernel loaded");
    let stream = dk.ctx.new_stream().during("creating a stream")?;
    // Written in place (a collect of a flat map gathers pieces and copies them again: 0.5 GB
    // at depth 9).
    let mut brackets = vec![0.0f64; 6 * n];
    brackets
        .par_chunks_exact_mut(6)
        .zip(placed.par_iter())
        .for_each(|(b, p)| {
            b[..3].copy_from_slice(&p.bracket.0);
            b[3..].copy_from_slice(&p.bracket.1);
        });
    let mut proven: Vec<u8> = placed.par_iter().map(|p| p.proven as u8).collect();
    let up = "uploading the mesh's vertices";
    let mut d_brackets = stream.clone_htod(&brackets).during(up)?;
    let mut d_proven = stream.clone_htod(&proven).during(up)?;
    stream.synchronize().during(up)?;
    clock.step("placement: uploaded");
    let [kx, ky, kz] = slot.map(|s| s.map_or(-1, |k| k as i32));
    let n32 = n as u32;
    let mut b = stream.launch_builder(f);
    b.arg(&n32)
        .arg(&mut d_brackets)
        .arg(&mut d_proven)
        .arg(&steps)
        .arg(&kx)
        .arg(&ky)
        .arg(&kz);
    let cfg = crate::search::kernels::config(n);
    // SAFETY: the arguments match the kernel's signature; `d_brackets` holds 6n values and
    // `d_proven` n, all written above.
    unsafe { b.launch(cfg) }.during("launching the mesh's placement")?;
    let down = "reading the mesh's vertices";
    stream.synchronize().during(down)?;
    clock.step("placement: bisections");
    // Back into the lists they came from, whose pages are already mapped (a fresh 0.5 GB
    // list at depth 9 paid a fault per page during the copy). A copy into pageable memory
    // returns once it has completed (CUDA's API synchronization behavior).
    stream
        .memcpy_dtoh(&d_brackets, &mut brackets)
        .during(down)?;
    stream.memcpy_dtoh(&d_proven, &mut proven).during(down)?;
    clock.step("placement: downloaded");
    placed
        .par_iter_mut()
        .zip(brackets.par_chunks_exact(6))
        .zip(proven)
        .for_each(|((p, b), pr)| {
            p.bracket = ([b[0], b[1], b[2]], [b[3], b[4], b[5]]);
            p.at = super::half(p.bracket);
            p.proven = pr != 0;
        });
    Ok(())
}
