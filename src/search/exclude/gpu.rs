//! The *exclude* rule on the GPU.

use crate::search::kernels;
use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut, PushKernelArg};

use crate::gpu::{self, Context, GpuError};
use crate::search::exclude::Frontier;
use crate::search::kernels::{config, grow, grow_keeping};
use crate::{Error, Evaluator, Precision};

/// The CUDA C of the exclusion kernels for element type `p`.
pub(crate) fn exclude_source(p: Precision) -> String {
    kernels::prelude(p) + include_str!("exclude.cu")
}

/// [`crate::search::exclude::exclude`] on the GPU of `eval` from `from` (the root box, or where
/// the CPU's rounds handed over).
pub(crate) fn exclude(
    eval: &Evaluator,
    from: Frontier,
    level: f64,
    tol: f64,
) -> Result<crate::search::exclude::Survivors, Error> {
    let kernel = eval.gpu_kernel().expect("a GPU evaluator has a kernel");
    match kernel.precision() {
        Precision::F64 => run_exclude::<f64>(kernel, from, level, tol),
        Precision::F32 => run_exclude::<f32>(kernel, from, level, tol),
    }
}

fn run_exclude<T>(
    kernel: &gpu::GpuKernel,
    from: Frontier,
    level: f64,
    tol: f64,
) -> Result<crate::search::exclude::Survivors, Error>
where
    T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits,
{
    use crate::search::budget::MAX_ROUNDS;
    use crate::search::exclude::{Boxes, Ended, Survivors};
    let Frontier {
        work,
        done: done_before,
        mut budget,
    } = from;
    let first_round = budget.rounds();
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
    let nv = work.n_vars;
    let elem = std::mem::size_of::<T>();
    // Device bytes per box of a round: the list and the next list (room for twice as many:
    // the halves), the final boxes (nv sides each), the batch in and out. A round runs only
    // when its boxes fit `cap`, the memory's bound; the buffers grow with the rounds (the
    // first search of `x - 1/3` over [0, 1] allocating lists for the whole budget took 175 ms
    // on an H200, most of it mapping the memory).
    let per_box = 5 * 2 * nv * 8 + (2 * nv + 2) * elem;
    let (free, _) = ctx.mem_get_info().during("querying the free memory")?;
    let cap = ((free / 2 / per_box) as u64)
        .min(budget.max_boxes().max(1))
        .clamp(1, u32::MAX as u64 / 4) as usize;
    let flat: Vec<f64> = work.sides.iter().flat_map(|&(a, b)| [a, b]).collect();
    let mut n = work.len();
    if n > cap {
        // The CPU handed over more boxes than the device's lists hold (rounds that small
        // never run there; the memory would have to be almost gone).
        return Ok(Survivors {
            boxes: done_before,
            unfinished: work,
            ended: Ended::Memory,
            rounds: budget.rounds(),
            evaluated: budget.boxes(),
            gpu_rounds: 0,
        });
    }
    let mut list: Option<CudaSlice<f64>> = None;
    grow(&stream, &mut list, flat.len())?;
    if let Some(l) = list.as_mut() {
        stream
            .memcpy_htod(&flat, &mut l.slice_mut(..flat.len()))
            .during("uploading the boxes")?;
    }
    let mut next: Option<CudaSlice<f64>> = None;
    let mut done: Option<CudaSlice<f64>> = None;
    let mut inputs: Option<CudaSlice<T>> = None;
    let mut outputs: Option<CudaSlice<T>> = None;
    let mut slots: CudaSlice<u64> = stream
        .alloc_zeros(4 * MAX_ROUNDS)
        .during("allocating the search's counters")?;
    let mut n_done = 0u64;
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
        let box_len = 2 * nv;
        grow(&stream, &mut next, box_len * 2 * n)?;
        grow(&stream, &mut inputs, box_len * n)?;
        grow(&stream, &mut outputs, 2 * n)?;
        grow_keeping(
            &stream,
            &mut done,
            box_len * (n_done as usize + n),
            box_len * n_done as usize,
        )?;
        let (list, next, done, inputs, outputs) = (
            list.as_mut().expect("grown"),
            next.as_mut().expect("grown"),
            done.as_mut().expect("grown"),
            inputs.as_mut().expect("grown"),
            outputs.as_mut().expect("grown"),
        );
        let mut b = stream.launch_builder(&k[0]);
        b.arg(&n32).arg(&nv32).arg(&*list).arg(&mut *inputs);
        // SAFETY: matches the kernel; `list` holds n <= cap boxes, `inputs` 2 nv cap values.
        unsafe { b.launch(config(n)) }.during("launching the search's input kernel")?;
        {
            let (inp, _gi) = inputs.device_ptr(&stream);
            let (outp, _go) = outputs.device_ptr_mut(&stream);
            // SAFETY: the expression reads 2 nv n and writes 2 n values with stride n.
            unsafe { dk.launch_soa(&stream, n, inp, outp) }
                .during("launching the expression kernel")?;
        }
        // The boxes `next` and `done` hold (at least 2n and n_done + n).
        let next_cap = (next.len() / box_len).min(u32::MAX as usize) as u32;
        let done_cap = (done.len() / box_len) as u64;
        let r = budget.rounds();
        let mut st = slots.slice_mut(4 * r..4 * r + 4);
        let mut sp = stream.launch_builder(&k[1]);
        sp.arg(&n32)
            .arg(&nv32)
            .arg(&*list)
            .arg(&*outputs)
            .arg(&level)
            .arg(&tol);
        sp.arg(&mut st)
            .arg(&mut *next)
            .arg(&next_cap)
            .arg(&mut *done)
            .arg(&n_done);
        sp.arg(&done_cap);
        // SAFETY: matches the kernel; it writes no box at or beyond `next_cap` in `next` or
        // `done_cap` in `done`.
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
        std::mem::swap(list, next);
    };
    let boxes = |buf: &Option<CudaSlice<f64>>, count: usize| -> Result<Boxes, GpuError> {
        let mut out = Boxes::new(nv);
        if let Some(buf) = buf.as_ref().filter(|_| count > 0) {
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
    let mut found = done_before;
    found.sides.extend(boxes(&done, n_done as usize)?.sides);
    Ok(Survivors {
        boxes: found,
        unfinished,
        ended,
        rounds: budget.rounds(),
        evaluated: budget.boxes(),
        gpu_rounds: budget.rounds() - first_round,
    })
}
