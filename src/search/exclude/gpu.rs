//! The *exclude* rule on the GPU.

use crate::search::kernels;
use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut, PushKernelArg};

use crate::gpu::{self, Context, GpuError};
use crate::search::kernels::config;
use crate::{Error, Evaluator, Precision};

/// The CUDA C of the exclusion kernels for element type `p`.
pub(crate) fn exclude_source(p: Precision) -> String {
    kernels::prelude(p) + include_str!("exclude.cu")
}

/// [`crate::search::exclude::exclude`] on the GPU of `eval`.
pub(crate) fn exclude(
    eval: &Evaluator,
    root: &[(f64, f64)],
    level: f64,
    tol: f64,
    max_boxes: u64,
) -> Result<crate::search::exclude::Survivors, Error> {
    let kernel = eval.gpu_kernel().expect("a GPU evaluator has a kernel");
    match kernel.precision() {
        Precision::F64 => run_exclude::<f64>(kernel, root, level, tol, max_boxes),
        Precision::F32 => run_exclude::<f32>(kernel, root, level, tol, max_boxes),
    }
}

fn run_exclude<T>(
    kernel: &gpu::GpuKernel,
    root: &[(f64, f64)],
    level: f64,
    tol: f64,
    max_boxes: u64,
) -> Result<crate::search::exclude::Survivors, Error>
where
    T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits,
{
    use crate::search::budget::{Budget, MAX_ROUNDS};
    use crate::search::exclude::{Boxes, Ended, Survivors};
    let dk = kernel.primary();
    let ctx = &dk.ctx;
    ctx.bind_to_thread()
        .during("binding the device's context")?;
    let p = kernel.precision();
    let k = gpu::search_module::load(
        ctx,
        dk.ordinal,
        gpu::search_module::SearchModule {
            name: "exclude",
            cuda: exclude_source(p),
            linked: Vec::new(),
            kernels: &["ivjit_ex_inputs", "ivjit_ex_split"],
        },
    )?;
    let stream = ctx.new_stream().during("creating a stream")?;
    let nv = root.len();
    let elem = std::mem::size_of::<T>();
    // Device bytes per box of a round: the list and the next list (room for twice as many:
    // the halves), the final boxes (nv sides each), the batch in and out. A round runs only
    // when its boxes fit the budget, so with `cap` = the budget the halves and the final boxes
    // always fit; only a memory-bound `cap` can overflow (the round is then undone).
    let per_box = 5 * 2 * nv * 8 + (2 * nv + 2) * elem;
    let (free, _) = ctx.mem_get_info().during("querying the free memory")?;
    let cap = ((free / 2 / per_box) as u64)
        .min(max_boxes.max(1))
        .clamp(1, u32::MAX as u64 / 4) as usize;
    let alloc = "allocating the search's work lists";
    let flat: Vec<f64> = root.iter().flat_map(|&(a, b)| [a, b]).collect();
    // SAFETY: written before it is read (the search reads only what a round wrote).
    let mut list: CudaSlice<f64> =
        unsafe { stream.alloc::<f64>(2 * 2 * nv * cap) }.during(alloc)?;
    stream
        .memcpy_htod(&flat, &mut list.slice_mut(..flat.len()))
        .during("uploading the box")?;
    // SAFETY: written before it is read (the search reads only what a round wrote).
    let mut next: CudaSlice<f64> =
        unsafe { stream.alloc::<f64>(2 * 2 * nv * cap) }.during(alloc)?;
    // SAFETY: written before it is read (the search reads only what a round wrote).
    let mut done: CudaSlice<f64> = unsafe { stream.alloc::<f64>(2 * nv * cap) }.during(alloc)?;
    // SAFETY: written before it is read (the search reads only what a round wrote).
    let mut inputs: CudaSlice<T> = unsafe { stream.alloc::<T>(2 * nv * cap) }.during(alloc)?;
    let mut outputs: CudaSlice<T> = stream.alloc_zeros(2 * cap).during(alloc)?;
    let mut slots: CudaSlice<u64> = stream.alloc_zeros(4 * MAX_ROUNDS).during(alloc)?;
    let mut budget = Budget::new(max_boxes);
    let (mut n, mut n_done) = (1usize, 0u64);
    let nv32 = nv as u32;
    let ended = loop {
        crate::search::interrupt::check()?;
        if n == 0 {
            break Ended::Done;
        }
        if let Some(ended) = budget.refuses(n as u64) {
            break ended;
        }
        if n > cap {
            break Ended::Memory;
        }
        let n32 = n as u32;
        let mut b = stream.launch_builder(&k[0]);
        b.arg(&n32).arg(&nv32).arg(&list).arg(&mut inputs);
        // SAFETY: matches the kernel; `list` holds n <= cap boxes, `inputs` 2 nv cap values.
        unsafe { b.launch(config(n)) }.during("launching the search's input kernel")?;
        {
            let (inp, _gi) = inputs.device_ptr(&stream);
            let (outp, _go) = outputs.device_ptr_mut(&stream);
            // SAFETY: the expression reads 2 nv n and writes 2 n values with stride n.
            unsafe { dk.launch_soa(&stream, n, inp, outp) }
                .during("launching the expression kernel")?;
        }
        let (cap32, cap64) = ((2 * cap) as u32, cap as u64);
        let r = budget.rounds();
        let mut st = slots.slice_mut(4 * r..4 * r + 4);
        let mut sp = stream.launch_builder(&k[1]);
        sp.arg(&n32)
            .arg(&nv32)
            .arg(&list)
            .arg(&outputs)
            .arg(&level)
            .arg(&tol);
        sp.arg(&mut st)
            .arg(&mut next)
            .arg(&cap32)
            .arg(&mut done)
            .arg(&n_done);
        sp.arg(&cap64);
        // SAFETY: matches the kernel; it writes no box at or beyond `cap` in `next` or `done`.
        unsafe { sp.launch(config(n)) }.during("launching the search's split kernel")?;
        let s = stream
            .clone_dtoh(&st)
            .during("reading the search's counters")?;
        if s[2] != 0 || s[3] != 0 {
            // A box had no room: this round is undone (its list is what is left).
            break Ended::Memory;
        }
        budget.spend(n as u64);
        n_done += s[1];
        n = s[0] as usize;
        std::mem::swap(&mut list, &mut next);
    };
    let boxes = |buf: &CudaSlice<f64>, count: usize| -> Result<Boxes, GpuError> {
        let mut out = Boxes::new(nv);
        if count > 0 {
            let flat = stream
                .clone_dtoh(&buf.slice(..2 * nv * count))
                .during("downloading the boxes")?;
            out.sides = flat.chunks_exact(2).map(|s| (s[0], s[1])).collect();
        }
        Ok(out)
    };
    let unfinished = if ended == Ended::Done {
        Boxes::new(nv)
    } else {
        boxes(&list, n)?
    };
    Ok(Survivors {
        boxes: boxes(&done, n_done as usize)?,
        unfinished,
        ended,
        rounds: budget.rounds(),
        evaluated: budget.boxes(),
    })
}
