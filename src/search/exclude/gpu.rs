//! The *exclude* rule on the GPU.

use crate::search::kernels;
use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, PushKernelArg};

use crate::gpu::{self, Context, GpuError};
use crate::search::exclude::Frontier;
use crate::search::kernels::{config, grow, grow_keeping};
use crate::{Error, Evaluator, Precision};

/// The CUDA C of the exclusion kernels for element type `p`.
pub(crate) fn exclude_source(p: Precision) -> String {
    kernels::prelude(p) + kernels::LIST_INPUTS + include_str!("exclude.cu")
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

/// One part of the search's device memory, on one device: the round's list (`n` boxes, box
/// i's side k at `list[2(i nv + k)]`), the next round's, the final boxes found (`n_done`),
/// the batch in and out, four counters per round (zeroed once).
struct Part<T> {
    stream: Arc<CudaStream>,
    k: Arc<[CudaFunction]>,
    nv: usize,
    /// Boxes a round's list may hold (half the memory free when the part was made).
    cap: usize,
    list: Option<CudaSlice<f64>>,
    n: usize,
    next: Option<CudaSlice<f64>>,
    done: Option<CudaSlice<f64>>,
    n_done: u64,
    inputs: Option<CudaSlice<T>>,
    outputs: Option<CudaSlice<T>>,
    slots: CudaSlice<u64>,
}

impl<T> crate::search::parts::PartList for Part<T> {
    fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    fn list(&mut self) -> (&mut Option<CudaSlice<f64>>, &mut usize) {
        (&mut self.list, &mut self.n)
    }

    fn width(&self) -> usize {
        2 * self.nv
    }
}

impl<T> Part<T>
where
    T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits,
{
    /// An empty part on the device of `dk` (its context bound).
    fn new(dk: &gpu::DeviceKernel, p: Precision, nv: usize, max_boxes: u64) -> Result<Self, Error> {
        use crate::search::budget::MAX_ROUNDS;
        let ctx = &dk.ctx;
        ctx.bind_to_thread()
            .during("binding the device's context")?;
        let k = gpu::search_module::load(
            ctx,
            dk.ordinal,
            gpu::search_module::SearchModule {
                name: "exclude",
                cuda: exclude_source(p),
                linked: Vec::new(),
                kernels: &["ivjit_list_inputs", "ivjit_ex_split"],
            },
        )?;
        let stream = ctx.new_stream().during("creating a stream")?;
        let elem = std::mem::size_of::<T>();
        // Device bytes per box of a round: the list and the next list (room for twice as
        // many: the halves), the final boxes (nv sides each), the batch in and out. A round
        // runs only when its boxes fit `cap`, the memory's bound; the buffers grow with the
        // rounds (the first search of `x - 1/3` over [0, 1] allocating lists for the whole
        // budget took 175 ms on an H200, most of it mapping the memory).
        let per_box = 5 * 2 * nv * 8 + (2 * nv + 2) * elem;
        let (free, _) = ctx.mem_get_info().during("querying the free memory")?;
        let cap = ((free / 2 / per_box) as u64)
            .min(max_boxes.max(1))
            .clamp(1, u32::MAX as u64 / 4) as usize;
        let slots = stream
            .alloc_zeros(4 * MAX_ROUNDS)
            .during("allocating the search's counters")?;
        Ok(Part {
            stream,
            k,
            nv,
            cap,
            list: None,
            n: 0,
            next: None,
            done: None,
            n_done: 0,
            inputs: None,
            outputs: None,
            slots,
        })
    }

    /// Launches the `r`-th round over the part's boxes: each evaluated, those that may meet
    /// the level split into `next` or, at the tolerance, appended to `done`.
    fn launch(
        &mut self,
        dk: &gpu::DeviceKernel,
        r: usize,
        level: f64,
        tol: f64,
    ) -> Result<(), GpuError> {
        let stream = self.stream.clone();
        let (n, nv) = (self.n, self.nv);
        let (n32, nv32) = (n as u32, nv as u32);
        let box_len = 2 * nv;
        grow(&stream, &mut self.next, box_len * 2 * n)?;
        grow(&stream, &mut self.inputs, box_len * n)?;
        grow(&stream, &mut self.outputs, 2 * n)?;
        let n_done = self.n_done;
        grow_keeping(
            &stream,
            &mut self.done,
            box_len * (n_done as usize + n),
            box_len * n_done as usize,
        )?;
        let (list, next, done, inputs, outputs) = (
            self.list.as_mut().expect("a round has boxes"),
            self.next.as_mut().expect("grown"),
            self.done.as_mut().expect("grown"),
            self.inputs.as_mut().expect("grown"),
            self.outputs.as_mut().expect("grown"),
        );
        let mut b = stream.launch_builder(&self.k[0]);
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
        let mut st = self.slots.slice_mut(4 * r..4 * r + 4);
        let mut sp = stream.launch_builder(&self.k[1]);
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
        Ok(())
    }

    /// The `r`-th round's counters (waiting for the round): boxes in next, boxes done, and
    /// two overflow flags.
    fn counters(&self, r: usize) -> Result<Vec<u64>, GpuError> {
        self.stream
            .clone_dtoh(&self.slots.slice(4 * r..4 * r + 4))
            .during("reading the search's counters")
    }

    /// The first `count` boxes of `buf`, copied back.
    fn boxes(
        &self,
        buf: &Option<CudaSlice<f64>>,
        count: usize,
    ) -> Result<crate::search::exclude::Boxes, GpuError> {
        let nv = self.nv;
        let mut out = crate::search::exclude::Boxes::new(nv);
        if let Some(buf) = buf.as_ref().filter(|_| count > 0) {
            let flat = self
                .stream
                .clone_dtoh(&buf.slice(..2 * nv * count))
                .during("downloading the boxes")?;
            out.sides = flat.chunks_exact(2).map(|s| (s[0], s[1])).collect();
        }
        Ok(out)
    }
}

/// The search's rounds on the GPUs: the list on the first device while a round has fewer
/// than [`SPLIT_BOXES`](crate::search::parts::SPLIT_BOXES) boxes, else spread evenly over
/// every device of the kernel (`IVJIT_SEARCH_PARTS`: that many parts for every round, for
/// tests), the parts' rounds in lockstep: a round's boxes, budget and memory checks are those of one device. (A round in
/// which a part's buffers overflowed is undone everywhere.)
fn run_exclude<T>(
    kernel: &gpu::GpuKernel,
    from: Frontier,
    level: f64,
    tol: f64,
) -> Result<crate::search::exclude::Survivors, Error>
where
    T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits,
{
    use crate::search::exclude::{Boxes, Ended, Survivors};
    use crate::search::parts;
    let Frontier {
        work,
        done: done_before,
        mut budget,
    } = from;
    let first_round = budget.rounds();
    let devices = kernel.device_kernels();
    let forced = gpu::env::search_parts();
    let dk_of = |part: usize| &devices[part % devices.len()];
    let p = kernel.precision();
    let nv = work.n_vars;
    let mut all = vec![Part::<T>::new(dk_of(0), p, nv, budget.max_boxes())?];
    let n = work.len();
    if n > all[0].cap {
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
    {
        let first = &mut all[0];
        let flat: Vec<f64> = work.sides.iter().flat_map(|&(a, b)| [a, b]).collect();
        grow(&first.stream, &mut first.list, flat.len())?;
        if let Some(l) = first.list.as_mut() {
            first
                .stream
                .memcpy_htod(&flat, &mut l.slice_mut(..flat.len()))
                .during("uploading the boxes")?;
        }
        first.n = n;
    }
    let ended = loop {
        crate::search::interrupt::check()?;
        let total: usize = all.iter().map(|p| p.n).sum();
        if total == 0 {
            break Ended::Done;
        }
        if let Some(ended) = budget.refuses(total as u64) {
            break ended;
        }
        let want = parts::wanted(total, devices.len(), forced);
        while all.len() < want {
            let part = Part::new(dk_of(all.len()), p, nv, budget.max_boxes())?;
            all.push(part);
        }
        parts::balance(&mut all, want)?;
        if all.iter().any(|part| part.n > part.cap) {
            break Ended::Memory;
        }
        let r = budget.rounds();
        for (d, part) in all.iter_mut().enumerate().filter(|(_, part)| part.n > 0) {
            dk_of(d)
                .ctx
                .bind_to_thread()
                .during("binding a device's context")?;
            part.launch(dk_of(d), r, level, tol)?;
        }
        let mut counted = vec![None; all.len()];
        for (d, part) in all.iter().enumerate().filter(|(_, part)| part.n > 0) {
            counted[d] = Some(part.counters(r)?);
        }
        if counted.iter().flatten().any(|s| s[2] != 0 || s[3] != 0) {
            // A box had no room: this round is undone (its lists are what is left).
            break Ended::Memory;
        }
        budget.spend(total as u64);
        for (part, s) in all.iter_mut().zip(counted) {
            if let Some(s) = s {
                part.n_done += s[1];
                part.n = s[0] as usize;
                std::mem::swap(&mut part.list, &mut part.next);
            }
        }
    };
    let mut unfinished = Boxes::new(nv);
    let mut found = done_before;
    for part in &all {
        if ended != Ended::Done {
            unfinished
                .sides
                .extend(part.boxes(&part.list, part.n)?.sides);
        }
        found
            .sides
            .extend(part.boxes(&part.done, part.n_done as usize)?.sides);
    }
    Ok(Survivors {
        boxes: found,
        unfinished,
        ended,
        rounds: budget.rounds(),
        evaluated: budget.boxes(),
        gpu_rounds: budget.rounds() - first_round,
    })
}
