//! The mesh's placement on the GPU: every vertex's bisections in one launch, one thread per
//! vertex, f linked into the kernel (`place.cu`). The host sent a batch of points per
//! bisection step and read it back (colonnade.vm at depth 8: 2.3 s of a 8.8 s mesh on an H200,
//! run 118 of docs/gpu-runs.md); the bisections are the CPU's, bit for bit.

use cudarc::driver::{LaunchConfig, PushKernelArg};
use rayon::prelude::*;

use super::lattice::Placed;
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

/// `steps` bisections of every vertex's bracket (as [`super::lattice::place`]'s), on the
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
    let kernel = eval.gpu_kernel().expect("a GPU evaluator has a kernel");
    let dk = &kernel.device_kernels()[0];
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
            kernels: &["ivjit_mesh_place"],
        },
    )?[0]
        .clone();
    clock.step("placement: kernel loaded");
    let stream = dk.ctx.new_stream().during("creating a stream")?;
    let brackets: Vec<f64> = placed
        .par_iter()
        .flat_map_iter(|p| p.bracket.0.into_iter().chain(p.bracket.1))
        .collect();
    let proven: Vec<u8> = placed.par_iter().map(|p| p.proven as u8).collect();
    let up = "uploading the mesh's vertices";
    let mut d_brackets = stream.clone_htod(&brackets).during(up)?;
    let mut d_proven = stream.clone_htod(&proven).during(up)?;
    stream.synchronize().during(up)?;
    clock.step("placement: uploaded");
    let k = |s: Option<usize>| s.map_or(-1, |k| k as i32);
    let (kx, ky, kz) = (k(slot[0]), k(slot[1]), k(slot[2]));
    let n32 = n as u32;
    let mut b = stream.launch_builder(&f);
    b.arg(&n32)
        .arg(&mut d_brackets)
        .arg(&mut d_proven)
        .arg(&steps)
        .arg(&kx)
        .arg(&ky)
        .arg(&kz);
    let cfg = LaunchConfig {
        grid_dim: (n.div_ceil(128).clamp(1, 1 << 20) as u32, 1, 1),
        block_dim: (128, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: the arguments match the kernel's signature; `d_brackets` holds 6n values and
    // `d_proven` n, all written above.
    unsafe { b.launch(cfg) }.during("launching the mesh's placement")?;
    let down = "reading the mesh's vertices";
    stream.synchronize().during(down)?;
    clock.step("placement: bisections");
    let brackets = stream.clone_dtoh(&d_brackets).during(down)?;
    let proven = stream.clone_dtoh(&d_proven).during(down)?;
    clock.step("placement: downloaded");
    placed
        .par_iter_mut()
        .zip(brackets.par_chunks_exact(6))
        .zip(proven)
        .for_each(|((p, b), pr)| {
            p.bracket = ([b[0], b[1], b[2]], [b[3], b[4], b[5]]);
            p.at = super::lattice::half(p.bracket);
            p.proven = pr != 0;
        });
    Ok(())
}
